"""Throttles: the scopes and rates are in settings (``token``, ``submit``, ``login``)."""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.throttling import ScopedRateThrottle


class WriteScopedRateThrottle(ScopedRateThrottle):
    """A scoped throttle that counts only writes (POST), so reading a list is never throttled."""

    def allow_request(self, request: Request, view: Any) -> bool:
        if request.method != "POST":
            return True
        return super().allow_request(request, view)
