"""Every anonymous read that renders is throttled (issue 21, item 10): one choke point for every page and
API answer, present and future, instead of a decorator each view must remember.

A view that throttles its own anonymous renders (``rankings.read_cache.cached_for_anonymous``, which serves
cached answers without rendering and throttles the rest; ``web.views.common.throttled_anonymous_reads``)
or that must always answer (``healthz`` for load balancers, the favicon redirect) carries
``anonymous_reads = "own"`` / ``"exempt"`` (:func:`anonymous_reads`); every other anonymous GET or HEAD
is counted against ``LEADERBOARD_THROTTLE_ANON_READ`` per address before its view runs
(``core.throttles.anonymous_read_refusal``: 429 with ``Retry-After``, the API's JSON shape under /api/).

Anonymous means: no signed-in session and, under /api/, no ``Authorization: Token ...`` header (an API
token is checked by the API's own authentication; a wrong one answers 401 there; any other header is
throttled like none). Signed-in readers are not throttled here: their
reads cost is bounded by caching (docs/reliability.md, "Load").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

from django.http import HttpRequest, HttpResponseBase

from leaderboard.core.throttles import anonymous_read_refusal

View = TypeVar("View", bound=Callable[..., Any])


def anonymous_reads(how: Literal["own", "exempt"]) -> Callable[[View], View]:
    """Mark a view: it throttles its anonymous renders itself (``own``), or is never throttled
    (``exempt``: health checks)."""

    def mark(view: View) -> View:
        view.anonymous_reads = how  # type: ignore[attr-defined]
        return view

    return mark


def _marker(view: Callable[..., Any]) -> str | None:
    marker = getattr(view, "anonymous_reads", None)
    if marker is None:  # a class-based view: the mark is on its class
        marker = getattr(
            getattr(view, "cls", None) or getattr(view, "view_class", None), "anonymous_reads", None
        )
    return marker


def api_credential(request: HttpRequest) -> bool:
    """An API request that carries a token: the API's authentication checks it before any view renders (a
    wrong one is a 401 at the cost of one lookup). Any other ``Authorization`` header (on a page, where
    nothing reads it, or with a scheme the API does not accept, which leaves the reader anonymous) is no
    reason to skip the throttle: otherwise ``Authorization: x`` would render every page unthrottled."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    scheme = header.split(None, 1)[0].lower() if header.strip() else ""
    return request.path.startswith("/api/") and scheme == "token"


class AnonymousReadThrottleMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view: Callable[..., Any], args: Any, kwargs: Any
    ) -> HttpResponseBase | None:
        if request.method not in ("GET", "HEAD") or api_credential(request):
            return None
        if getattr(request, "_force_auth_user", None) is not None:  # DRF's test client, authenticated
            return None
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            return None
        if _marker(view) in ("own", "exempt"):
            return None
        return anonymous_read_refusal(request)
