"""What every view of the site shares: the challenge lookup and the mapping of service errors to pages."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest

from leaderboard.challenges.models import Challenge, Task
from leaderboard.challenges.selectors import challenge_get, task_get, user_is_organizer
from leaderboard.core.exceptions import ApplicationError, NotFoundError, PermissionDeniedError


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
    if not user_is_organizer(challenge=challenge, user=request.user):
        raise PermissionDenied("Only the organizers of this challenge may do that.")
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
