"""What the API's views share: error responses of the schema, the request's user, content negotiation."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from drf_spectacular.utils import OpenApiResponse
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from leaderboard.accounts.models import User
from leaderboard.core.uploads import upload_read
from leaderboard.scoring.kinds import TaskKind

NO_TASKS = "Challenge '{slug}' has no tasks yet."
NO_SUMMARY = "No cross-task summary of the {split} board yet."
NO_DIAGRAM = "No critical-difference diagram of the {split} board yet."

ERROR_RESPONSES = {
    400: OpenApiResponse(description="Invalid input: {message, extra}"),
    403: OpenApiResponse(description="Not allowed: {message, extra}"),
    404: OpenApiResponse(description="Not found or not visible: {message, extra}"),
}
CONFLICT_RESPONSE = OpenApiResponse(description="Exists already: {message, extra}")


def _user(request: Request) -> User:
    """The authenticated user (the view's permission classes guarantee one)."""
    return cast(User, request.user)


def _read_upload(upload: Any, *, kind: TaskKind) -> bytes:
    """The bytes of an organizer's labels file, refused before it is read whole if over its kind's limit."""
    return upload_read(upload, limit=kind.upload_max_bytes())


class JSONErrorsMixin:
    """Errors stay JSON (``{message, extra}``) even when the client asked for CSV or SVG."""

    def handle_exception(self, exc: Exception) -> Response:
        response = super().handle_exception(exc)  # type: ignore[misc]
        request = self.request  # type: ignore[attr-defined]
        request.accepted_renderer = JSONRenderer()
        request.accepted_media_type = "application/json"
        return cast(Response, response)


class FirstRendererNegotiation(BaseContentNegotiation):
    """For image endpoints: always the view's first renderer, whatever the Accept header says."""

    def select_parser(self, request: Request, parsers: Iterable[BaseParser]) -> BaseParser | None:
        return next(iter(parsers), None)

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        first = next(iter(renderers))
        return first, first.media_type
