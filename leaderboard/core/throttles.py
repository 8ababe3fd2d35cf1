"""Throttles of both doors (the API and the site's sign-up): the scopes and rates are in settings
(``token``, ``submit``, ``login``, ``signup``). In ``core`` so the site does not import the API."""

from __future__ import annotations

import logging
import math
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from redis.exceptions import RedisError
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle, ScopedRateThrottle, SimpleRateThrottle

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


def client_address(request: HttpRequest | Request) -> str:
    """The client's network address as the throttles see it (``REMOTE_ADDR``, or ``X-Forwarded-For``
    behind the number of proxies settings trust): the key of the limits that count per address."""
    return str(BaseThrottle().get_ident(request) or "")  # type: ignore[arg-type]  # reads only META


#: Sign-up rates when the environment sets none (``LEADERBOARD_THROTTLE_SIGNUP``, ``_SIGNUP_GLOBAL``):
#: throwaway accounts are how a participant would get around the per-team submission limits.
SIGNUP_RATE_DEFAULT = "5/hour"
SIGNUP_GLOBAL_RATE_DEFAULT = "60/hour"


class _DefaultRateMixin:
    default_rate = ""

    def get_rate(self) -> str | None:
        return self.THROTTLE_RATES.get(self.scope, self.default_rate)  # type: ignore[attr-defined]


class SignupAddressThrottle(_DefaultRateMixin, ScopedRateThrottle):
    """New accounts per client address (``signup``), on top of the ``login`` rate."""

    scope = "signup"
    default_rate = SIGNUP_RATE_DEFAULT

    def __init__(self) -> None:  # the scope is fixed, not read from the view
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)

    def get_cache_key(self, request: Request, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}

    def allow_request(self, request: Request, view: Any) -> bool:
        if request.method != "POST":
            return True
        try:
            return super(ScopedRateThrottle, self).allow_request(request, view)
        except RedisError:
            raise ServiceUnavailableError(THROTTLE_UNAVAILABLE) from None


class SignupGlobalThrottle(SignupAddressThrottle):
    """New accounts over the whole service (``signup_global``): many addresses do not multiply the rate."""

    scope = "signup_global"
    default_rate = SIGNUP_GLOBAL_RATE_DEFAULT

    def get_cache_key(self, request: Request, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": "all"}


#: Anonymous renders per address when the environment sets none (``LEADERBOARD_THROTTLE_ANON_READ``).
ANON_READ_RATE_DEFAULT = "60/min"


class AnonymousReadThrottle(_DefaultRateMixin, SimpleRateThrottle):
    """``LEADERBOARD_THROTTLE_ANON_READ`` per client address, for anonymous reads that render (every
    answer not served from the anonymous answer cache, ``rankings.read_cache``; issue 21, item 10)."""

    scope = "anon_read"
    default_rate = ANON_READ_RATE_DEFAULT

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


TOO_MANY_READS = "Too many requests from your address; try again in {wait} seconds, or log in."


def anonymous_read_refusal(request: HttpRequest) -> HttpResponse | None:
    """``None`` when this anonymous read may render now; else the 429 (with ``Retry-After``) to answer.
    With the shared cache unreachable the read goes through (answers are cached per snapshot)."""
    throttle = AnonymousReadThrottle()
    try:
        allowed = throttle.allow_request(request, None)  # type: ignore[arg-type]
    except (RedisError, OSError):
        allowed = True
    if allowed:
        return None
    wait = max(1, math.ceil(throttle.wait() or 1))
    message = TOO_MANY_READS.format(wait=wait)
    response: HttpResponse
    if request.path.startswith("/api/"):  # the API's one error shape (its schema documents the 429)
        response = JsonResponse({"message": message, "extra": {"wait": wait}}, status=429)
    else:
        response = HttpResponse(message, status=429, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(wait)
    return response
