"""Sessions, users and API tokens read from the shared cache (``leaderboard/accounts/auth_cache.py``, issue 21
item 10): a repeated signed-in read runs no query, and every change that must sign a reader out still does
on the next request: log-out, a password change, a deactivated account, a revoked or regenerated token.
With the shared cache failing, readers are read from the database and stay signed in.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle

from leaderboard.accounts import auth_cache
from leaderboard.accounts.models import User
from leaderboard.accounts.services import api_token_get_or_create, api_token_regenerate, api_token_revoke
from tests.service.api_support import FAST_HASHERS, PASSWORD, reset_throttles
from tests.service.factories import user
from tests.service.test_golden_boards import RATES
from tests.service.test_tied_ranks import tied  # noqa: F401  (the fixture)

BOARD_API = "/api/challenges/tied/leaderboard/?task=main"
BOARD_PAGE = "/c/tied/?task=main"
NOTICES = "/api/notices/"  # signed-in only, never answer-cached: who reads is decided afresh


@pytest.fixture(autouse=True)
def _fresh(settings, monkeypatch) -> Iterator[None]:
    settings.PASSWORD_HASHERS = FAST_HASHERS
    settings.LEADERBOARD_AUTH_CACHE = True  # on with Redis; the tests' default cache is one process's memory
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", dict(RATES))
    monkeypatch.setattr(auth_cache, "_down_until", 0.0)
    caches["default"].clear()
    reset_throttles()
    yield
    reset_throttles()


def _cache_keys() -> list[str]:
    """Every key in the shared cache (Redis with services, one process's memory without)."""
    backend = caches["default"]
    if isinstance(backend, LocMemCache):
        return [str(k) for k in backend._cache]
    return [k.decode() for k in backend._cache.get_client().keys("*")]  # type: ignore[attr-defined]


def _token_client(key: str) -> APIClient:
    return APIClient(HTTP_AUTHORIZATION=f"Token {key}")


def _signed_in(user: User) -> Client:
    user.set_password(PASSWORD)
    user.save()
    site = Client()
    assert site.login(username=user.username, password=PASSWORD)
    return site


def test_a_repeated_signed_in_read_runs_no_query(tied) -> None:  # noqa: F811
    _, players = tied
    key = api_token_get_or_create(user=players["bob"]).key
    api = _token_client(key)
    assert api.get(BOARD_API).status_code == 200
    assert api.get(BOARD_API).status_code == 200  # the answer is cached now
    with CaptureQueriesContext(connection) as queries:
        assert api.get(BOARD_API).status_code == 200
    assert len(queries) == 0, [q["sql"][:80] for q in queries.captured_queries]

    site = _signed_in(players["bob"])
    site.get(BOARD_PAGE)  # sets the CSRF cookie (an answer that sets a cookie is not cached)
    first = site.get(BOARD_PAGE).content
    with CaptureQueriesContext(connection) as queries:
        assert site.get(BOARD_PAGE).content == first
    assert len(queries) == 0, [q["sql"][:80] for q in queries.captured_queries]


def test_a_revoked_or_regenerated_token_is_refused_on_the_next_request(tied) -> None:  # noqa: F811
    _, players = tied
    bob = players["bob"]
    key = api_token_get_or_create(user=bob).key
    api = _token_client(key)
    assert api.get(NOTICES).status_code == 200
    assert api.get(BOARD_API).status_code == 200
    assert caches["default"].get(auth_cache._token_key(key)) == bob.pk  # cached, not the key itself
    assert not any(key in k for k in _cache_keys())

    assert api.delete("/api/auth/token/").status_code == 204  # lb logout
    assert api.get(NOTICES).status_code == 401
    assert api.get(BOARD_API).status_code == 401  # also where answers are cached per reader

    second = api_token_get_or_create(user=bob).key
    assert _token_client(second).get(NOTICES).status_code == 200
    third = api_token_regenerate(user=bob).key
    assert _token_client(second).get(NOTICES).status_code == 401
    assert _token_client(third).get(NOTICES).status_code == 200
    api_token_revoke(user=bob)
    assert _token_client(third).get(BOARD_API).status_code == 401


def test_a_deactivated_or_deleted_user_is_signed_out_at_once(tied) -> None:  # noqa: F811
    _, players = tied
    bob, zoe = players["bob"], user("zoe")
    api = _token_client(api_token_get_or_create(user=bob).key)
    site = _signed_in(bob)
    assert api.get(NOTICES).status_code == 200
    assert site.get("/accounts/").status_code == 200
    bob.is_active = False
    bob.save()
    assert api.get(NOTICES).status_code == 401
    assert site.get("/accounts/").status_code == 302  # to the log-in page

    zoe_api = _token_client(api_token_get_or_create(user=zoe).key)
    assert zoe_api.get(NOTICES).status_code == 200
    zoe.delete()
    assert zoe_api.get(NOTICES).status_code == 401


def test_log_out_and_a_password_change_sign_the_session_out(tied) -> None:  # noqa: F811
    _, players = tied
    bob = players["bob"]
    site = _signed_in(bob)
    assert site.get("/accounts/").status_code == 200
    stolen = Client()
    stolen.cookies["sessionid"] = site.cookies["sessionid"].value
    assert stolen.get("/accounts/").status_code == 200  # the same session, cached now
    assert site.post("/accounts/logout/").status_code == 302
    assert stolen.get("/accounts/").status_code == 302  # the cached session went with the log-out

    site = _signed_in(bob)
    other = _signed_in(User.objects.get(pk=bob.pk))  # a second session of bob's
    assert other.get("/accounts/").status_code == 200
    bob = User.objects.get(pk=bob.pk)
    bob.set_password("another-long-password-456")
    bob.save()  # what the password-change and reset views do (they keep only their own session)
    assert other.get("/accounts/").status_code == 302
    assert site.get("/accounts/").status_code == 302


def test_with_the_shared_cache_failing_readers_are_read_from_the_database(tied, monkeypatch) -> None:  # noqa: F811
    _, players = tied
    bob = players["bob"]
    api = _token_client(api_token_get_or_create(user=bob).key)
    site = _signed_in(bob)

    def down(*args: object, **kwargs: object) -> None:
        raise ConnectionError("redis is down")

    for name in ("get", "set", "delete"):
        monkeypatch.setattr(caches["default"], name, down)
    assert api.get(NOTICES).status_code == 200
    assert site.get("/accounts/").status_code == 200
    assert auth_cache._down_until > 0  # the next tries skip the cache for RETRY_SECONDS
    api_token_revoke(user=bob)  # the drop fails: the database still refuses the token
    assert api.get(NOTICES).status_code == 401
    assert site.post("/accounts/logout/").status_code == 302
