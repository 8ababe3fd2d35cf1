"""Django's Redis cache, with one ``redis.Redis`` client per connection pool instead of one per call.

Django's ``RedisCacheClient.get_client`` builds a new ``redis.Redis`` object for every cache operation
(about 170 response callbacks registered each time: 0.2-0.3 ms of CPU per GET, more than the GET itself).
A ``redis.Redis`` object is safe to share between threads (it takes a connection from its pool for each
command), so each pool keeps one. Everything else is Django's backend (issue 21, item 10: a cached board
read makes one to three cache GETs).
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient


class _Client(RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]
        client = self._clients.get(id(pool))  # pools live as long as this object: ids stay theirs
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)  # type: ignore[attr-defined]
        return client


class SharedClientRedisCache(RedisCache):
    def __init__(self, server: Any, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = _Client
