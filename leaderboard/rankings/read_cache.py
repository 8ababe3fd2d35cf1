"""Whole answers of anonymous board reads, cached in each web process until the challenge changes.

An anonymous visitor's board page, board API answer and rank-distribution page depend only on the
challenge (its fields, tasks, latest snapshots and summaries) and the query, never on who asks. Each
process keeps such answers (bytes and headers) in its ``answers`` cache under the challenge's *reads
version*: a token in the shared cache (Redis in production) that every change of the challenge replaces,
on commit (signals on Challenge, Task, BoardSnapshot, ChallengeSummary). A cached read then costs one
shared-cache GET and one local lookup: no ORM query, no template (docs/reliability.md, "Load").

- Only GETs by visitors with no session, no token and no pending message; only 200 answers that set no
  cookie. Query parameters a view does not read are dropped before the view runs (so ``&x=N`` neither
  makes a new answer nor reaches the page); a value not cached (a split that does not exist, a repeated
  parameter, another media type) goes the ordinary way.
- Every anonymous answer that is not served from here is throttled first
  (``core.throttles.anonymous_read_refusal``: 429 with ``Retry-After`` past ``LEADERBOARD_THROTTLE_ANON_READ``
  per address), so no query makes the service draw a page unthrottled (issue 21, item 10).
- Signed-in readers' answers are cached too (issue 21, item 10: a signed-in board read drew the page
  afresh, 17.7 ms of CPU), but never shared: the key holds the reader (user id, staff, whether an
  organizer of this challenge, asked of the database on every read, and the CSRF cookie the page's forms
  carry), so an organizer's view never reaches a participant and a demoted organizer reads no cached
  organizer answer. The read policy decides what a reader sees; this cache only replays that reader's own
  answer. API tokens are checked here (``accounts.auth_cache.CachedTokenAuthentication``: with Redis, a
  repeated read runs no query; a revoked token is refused at once); a request with pending messages is not
  cached. What depends on the reader beyond the key (their team's highlight, the header's count of unread
  notices) may be up to ``ANSWER_SECONDS`` old.
- Answers live ``ANSWER_SECONDS`` at most, so what depends on the clock (a challenge's phase) and a lost
  version change (Redis down at that moment) are stale for at most that long.
- With the shared cache unreachable, reads go the ordinary way (and the next try waits ``RETRY_SECONDS``),
  so a hung Redis never delays a read by more than one socket timeout per ``RETRY_SECONDS``.
"""

from __future__ import annotations

import hashlib
import logging
import time
import uuid
from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseBase, QueryDict
from redis.exceptions import RedisError
from rest_framework.exceptions import AuthenticationFailed

from leaderboard.accounts.auth_cache import CachedTokenAuthentication
from leaderboard.challenges.models import Challenge
from leaderboard.core.middleware import api_credential
from leaderboard.core.throttles import anonymous_read_refusal

logger = logging.getLogger(__name__)

ANSWER_SECONDS = 60
RETRY_SECONDS = 10
_VERSION_KEY = "reads-version:{slug}"
_KEPT_HEADERS = ("Content-Type", "Content-Disposition", "Vary", "Allow", "Content-Security-Policy")
_shared_down_until = 0.0


def reads_version(slug: str) -> str | None:
    """The challenge's current reads version, or ``None`` when the shared cache cannot say."""
    global _shared_down_until
    if time.monotonic() < _shared_down_until:
        return None
    cache = caches["default"]
    key = _VERSION_KEY.format(slug=slug)
    try:
        version = cache.get(key)
        if version is None:
            cache.add(key, uuid.uuid4().hex, None)
            version = cache.get(key)
    except (RedisError, OSError):
        _shared_down_until = time.monotonic() + RETRY_SECONDS
        return None
    return None if version is None else str(version)


def reads_changed(slug: str) -> None:
    """Drop every cached anonymous answer of the challenge (in every process), once the transaction
    commits."""

    def bump() -> None:
        try:
            caches["default"].set(_VERSION_KEY.format(slug=slug), uuid.uuid4().hex, None)
        except (RedisError, OSError):
            logger.warning("shared cache unreachable; cached board answers of %s expire on their own", slug)

    transaction.on_commit(bump)


def _anonymous(request: HttpRequest) -> bool:
    if request.method != "GET" or api_credential(request) or "messages" in request.COOKIES:
        return False
    user = getattr(request, "user", None)
    return user is None or not user.is_authenticated


def _reader(request: HttpRequest, slug: str, version: str) -> str | None:
    """Who reads, as far as an answer may depend on it: ``"anonymous"``, a signed-in reader's own key,
    or ``None`` (not cached: not a GET, a wrong token, messages waiting). Whether the reader organizes the
    challenge is kept under the challenge's reads version, which a change of its organizers replaces
    (``rankings.signals``)."""
    if request.method != "GET" or "messages" in request.COOKIES:
        return None
    if api_credential(request):  # any other Authorization header authenticates nobody: not a reason to skip
        try:
            found = CachedTokenAuthentication().authenticate(request)  # type: ignore[arg-type]
        except AuthenticationFailed:
            return None  # the view answers 401
        if found is None:
            return None
        user = found[0]
    else:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return "anonymous"
        if request.session.get("_messages"):
            return None
    memo = f"{version}:organizer:{slug}:{user.pk}"
    organizer = caches["answers"].get(memo)
    if organizer is None:
        organizer = Challenge.objects.filter(slug=slug, organizers=user).exists()
        caches["answers"].set(memo, organizer, ANSWER_SECONDS)
    csrf = request.COOKIES.get(settings.CSRF_COOKIE_NAME, "")
    return f"user={user.pk}|staff={int(user.is_staff)}|organizer={int(organizer)}|csrf={csrf}"


def cached_for_anonymous(
    params: Iterable[str], *, values: dict[str, Iterable[str]] | None = None
) -> Callable[[Callable[..., HttpResponseBase]], Callable[..., HttpResponseBase]]:
    """Serve a view's answer to anonymous visitors from the per-process cache (see the module's doc).

    ``params``: the query parameters the view reads; a request with any other is not cached. ``values``:
    for some of them, the only values cached (e.g. ``split``), so a visitor cannot fill the cache with
    answers nobody else asks for.
    """
    allowed = frozenset(params)
    allowed_values = {k: frozenset(v) for k, v in (values or {}).items()}

    def decorate(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            _drop_unread(request, allowed)
            anonymous = _anonymous(request)
            slug = str(kwargs.get("slug", ""))
            version = reads_version(slug) if request.method == "GET" else None
            reader = _reader(request, slug, version) if version is not None else None
            key = _key(request, allowed, allowed_values, kwargs, reader) if reader is not None else None
            if key is None:
                version = None
            hit = caches["answers"].get(f"{version}:{key}") if version is not None else None
            if hit is not None:
                content, headers = hit
                cached = HttpResponse(content)
                for name, value in headers:
                    cached[name] = value
                return cached
            refusal = anonymous_read_refusal(request) if anonymous else None
            if refusal is not None:
                return refusal
            response = view(request, *args, **kwargs)
            if version is None:
                return response
            render = getattr(response, "render", None)
            if callable(render):
                response = render()
            if (
                isinstance(response, HttpResponse)
                and response.status_code == 200
                and not response.cookies
                and not response.has_header("Cache-Control")
            ):
                headers = [(h, response[h]) for h in _KEPT_HEADERS if response.has_header(h)]
                caches["answers"].set(f"{version}:{key}", (response.content, headers), ANSWER_SECONDS)
            return response

        wrapper.anonymous_reads = "own"  # type: ignore[attr-defined]  # core.middleware: it throttles renders
        return wrapper

    return decorate


def _drop_unread(request: HttpRequest, allowed: frozenset[str]) -> None:
    """Drop the query parameters the view does not read (from ``GET`` and the query string the page
    links to), before anything is keyed or rendered."""
    if all(name in allowed for name in request.GET):
        return
    kept = QueryDict(mutable=True)
    for name in request.GET:
        if name in allowed:
            kept.setlist(name, request.GET.getlist(name))
    kept._mutable = False
    request.GET = kept  # type: ignore[assignment]
    request.META["QUERY_STRING"] = kept.urlencode()


def _key(
    request: HttpRequest,
    allowed: frozenset[str],
    allowed_values: dict[str, frozenset[str]],
    kwargs: dict[str, Any],
    reader: str,
) -> str | None:
    accept = request.META.get("HTTP_ACCEPT", "")
    if accept not in ("", "*/*", "application/json") and not accept.startswith("text/html"):
        return None  # other media types (CSV) are negotiated by the view
    query = []
    for name in sorted(request.GET):
        values = request.GET.getlist(name)
        if name not in allowed or len(values) != 1:
            return None
        if name in allowed_values and values[0] not in allowed_values[name]:
            return None
        query.append(f"{name}={values[0]}")
    raw = "|".join(
        [
            request.path,
            accept,
            request.get_host(),
            str(request.scheme),
            *query,
            repr(sorted(kwargs.items())),
            reader,
        ]
    )
    return hashlib.blake2b(raw.encode(), digest_size=16).hexdigest()
