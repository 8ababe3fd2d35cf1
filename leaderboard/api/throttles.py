"""Throttles: the scopes and rates are in settings (``token``, ``submit``, ``login``)."""

from __future__ import annotations

import logging
from typing import Any

from redis.exceptions import RedisError
from rest_framework.request import Request
from rest_framework.throttling import ScopedRateThrottle

from leaderboard.core.exceptions import ServiceUnavailableError

logger = logging.getLogger(__name__)

#: The throttle's counters live in Redis (the cache); when Redis is down a login or token request is
#: refused with this 503 rather than let through unthrottled, or crash as a 500.
THROTTLE_UNAVAILABLE = "The service cannot check request rates right now; please try again in a minute."


class WriteScopedRateThrottle(ScopedRateThrottle):
    """A scoped throttle that counts only writes (POST), so reading a list is never throttled."""

    def allow_request(self, request: Request, view: Any) -> bool:
        if request.method != "POST":
            return True
        try:
            return super().allow_request(request, view)
        except RedisError:
            # Uploads stay open: the submission limits that matter are counted in the database, and the
            # outbox (dispatched_at null + sweeper) holds their scoring until Redis is back.
            if self.scope == "submit":
                logger.warning("throttle cache unreachable; letting an upload through unthrottled")
                return True
            raise ServiceUnavailableError(THROTTLE_UNAVAILABLE) from None
