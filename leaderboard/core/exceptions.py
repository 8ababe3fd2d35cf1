"""One application error type, mapped once to one JSON shape ``{"message": ..., "extra": {...}}``.

Services raise :class:`ApplicationError` (or a subclass); the API's exception handler and the pages turn
it into a 4xx answer. Messages are written for the person who made the request and never carry hidden
labels.
"""

from __future__ import annotations

from typing import Any


class ApplicationError(Exception):
    status_code = 400

    def __init__(self, message: str, *, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra or {}


class PermissionDeniedError(ApplicationError):
    status_code = 403


class NotFoundError(ApplicationError):
    status_code = 404


class ConflictError(ApplicationError):
    status_code = 409


class UnprocessableError(ApplicationError):
    status_code = 422


class LimitReachedError(ApplicationError):
    status_code = 429


class ServiceUnavailableError(ApplicationError):
    status_code = 503
