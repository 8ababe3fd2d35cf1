"""One JSON error shape for the whole API: ``{"message": "...", "extra": {...}}``.

Services raise :class:`~leaderboard.core.exceptions.ApplicationError`; DRF raises its own errors
(validation, authentication, permissions, throttling, 404). Both leave here in the same shape, with the
status code of the error and DRF's headers (``WWW-Authenticate``, ``Retry-After``).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import (
    PermissionDenied,
    RequestDataTooBig,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.http import Http404, HttpRequest, JsonResponse
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from leaderboard.core.exceptions import ApplicationError

INVALID_INPUT = "Invalid input."
TOO_MANY_FILES = "The request has more than {limit} file parts; send at most {limit}."
TOO_MANY_FIELDS = "The request has more than {limit} fields; send at most {limit}."
BODY_TOO_BIG = "The request's form fields are larger than {limit:,} bytes."


def _first_message(detail: Any) -> str:
    """The first human-readable message in DRF's nested error detail."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            message = _first_message(value)
            return message if key == "non_field_errors" else f"{key}: {message}"
    if isinstance(detail, list) and detail:
        return _first_message(detail[0])
    return str(detail)


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ApplicationError):
        return Response({"message": exc.message, "extra": exc.extra}, status=exc.status_code)
    # Django's multipart parser refuses these while parsing the body (SuspiciousOperation, which Django
    # would answer with an HTML 400): the API answers them in its own shape.
    if isinstance(exc, TooManyFilesSent):
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FILES
        return Response(
            {"message": TOO_MANY_FILES.format(limit=limit), "extra": {"limit": limit}}, status=400
        )
    if isinstance(exc, TooManyFieldsSent):
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        return Response(
            {"message": TOO_MANY_FIELDS.format(limit=limit), "extra": {"limit": limit}}, status=400
        )
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return Response({"message": BODY_TOO_BIG.format(limit=limit), "extra": {"limit": limit}}, status=400)

    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()

    response = drf_exception_handler(exc, context)
    if response is None:  # not an API error: a bug, left to Django (500, logged)
        return None
    assert isinstance(exc, exceptions.APIException)
    extra: dict[str, Any] = {}
    if isinstance(exc, exceptions.ValidationError):
        message = f"{INVALID_INPUT} {_first_message(exc.detail)}"
        extra["fields"] = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
    else:
        message = str(exc.detail)
        wait = getattr(exc, "wait", None) if isinstance(exc, exceptions.Throttled) else None
        if wait is not None:
            extra["wait"] = round(wait)
    response.data = {"message": message, "extra": extra}
    return response


def not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    return JsonResponse({"message": "No such API endpoint.", "extra": {"path": request.path}}, status=404)
