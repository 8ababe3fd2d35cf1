"""What every view of the site shares: the challenge lookup and the mapping of service errors to pages."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt, csrf_protect

from leaderboard.challenges.models import Challenge, Task
from leaderboard.challenges.selectors import challenge_get, require_organizer, task_get
from leaderboard.core.exceptions import ApplicationError, NotFoundError, PermissionDeniedError
from leaderboard.core.throttles import TOO_MANY_READS as TOO_MANY_READS  # the 429's words
from leaderboard.core.throttles import anonymous_read_refusal
from leaderboard.core.uploads import SizeLimitedUploadHandler
from leaderboard.scoring.kinds import stream_limit


class UploadRefusedError(ApplicationError):
    """A file over its upload limit, stopped while it streams in."""


UPLOAD_TOO_LARGE = "{name}: the file is over the size limit; the limit is {limit:,} bytes."


class _PageSizeLimitedUploadHandler(SizeLimitedUploadHandler):
    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        try:
            return super().receive_data_chunk(raw_data, start)
        except ApplicationError as exc:
            message = UPLOAD_TOO_LARGE.format(name=self.file_name, limit=self.limit)
            raise UploadRefusedError(message, extra=exc.extra) from None


def size_limited_uploads(view: Callable[..., HttpResponse] | None = None, *, any_kind: bool = False) -> Any:
    """Refuse a file over the limit while the body streams in (a 400 page), before it is stored whole.

    The handler must be installed before anything reads the body, and the CSRF middleware reads it: so
    the view is exempt outside and protected inside, as Django's documentation prescribes for changing
    upload handlers. ``any_kind``: the page creates a task (see :func:`stream_limit`).
    """
    if view is None:
        return lambda v: size_limited_uploads(v, any_kind=any_kind)
    protected = csrf_protect(view)

    @csrf_exempt
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        # Only a POST sends a file here: any other method gets the largest limit, without a query.
        limit = stream_limit(kwargs, any_kind=any_kind or request.method != "POST")
        request.upload_handlers = [
            _PageSizeLimitedUploadHandler(request, limit=limit),
            *request.upload_handlers,
        ]
        try:
            return protected(request, *args, **kwargs)
        except UploadRefusedError as exc:
            return render(
                request, "web/upload_refused.html", {"message": exc.message, "back": request.path}, status=400
            )

    return wrapper


@contextmanager
def as_http() -> Iterator[None]:
    """Not found and permission errors of services become Django's 404 and 403 pages."""
    try:
        yield
    except NotFoundError as exc:
        raise Http404(exc.message) from exc
    except PermissionDeniedError as exc:
        raise PermissionDenied(exc.message) from exc


def challenge_for(request: HttpRequest, slug: str) -> Challenge:
    with as_http():
        return challenge_get(slug=slug, user=request.user)


def task_for(challenge: Challenge, slug: str) -> Task:
    with as_http():
        return task_get(challenge=challenge, slug=slug)


def organizer_challenge(request: HttpRequest, slug: str) -> Challenge:
    challenge = challenge_for(request, slug)
    with as_http():
        require_organizer(challenge=challenge, user=request.user)
    return challenge


def error_context(exc: ApplicationError) -> dict[str, Any]:
    """An application error for a page: its message and, for a file, where in it (file, line, column)."""
    extra = exc.extra or {}
    where = []
    if extra.get("file"):
        where.append(f"file {extra['file']}")
    if extra.get("line") is not None:
        where.append(f"line {extra['line']}")
    if extra.get("column") is not None:
        where.append(f"column {extra['column']}")
    return {"message": exc.message, "where": ", ".join(where), "extra": extra}


def throttled_anonymous_reads(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """Anonymous visitors get 429 with ``Retry-After`` past the rate; signed-in users are not throttled
    here. With the shared cache unreachable the read goes through (the pages are cached per snapshot, so a
    read costs little; the throttle bounds how often one address can make the service draw anything)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not request.user.is_authenticated:
            refusal = anonymous_read_refusal(request)
            if refusal is not None:
                return refusal
        return view(request, *args, **kwargs)

    wrapper.anonymous_reads = "own"  # type: ignore[attr-defined]  # core.middleware: already throttled
    return wrapper
