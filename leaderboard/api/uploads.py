"""The API's views that accept files put the streaming size guard (``core.uploads``) first."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from leaderboard.core.uploads import SizeLimitedUploadHandler
from leaderboard.scoring.kinds import stream_limit


class SizeLimitedUploadsMixin:
    """For views that accept files: put the size-limiting handler first, before anything parses the body."""

    #: The view creates a task (its kind is a field of the body): stream up to the largest limit.
    upload_any_kind = False

    def initialize_request(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        # A GET sends no file: the largest limit, without a query.
        limit = stream_limit(kwargs, any_kind=self.upload_any_kind or request.method == "GET")
        request.upload_handlers = [SizeLimitedUploadHandler(request, limit=limit), *request.upload_handlers]
        return super().initialize_request(request, *args, **kwargs)  # type: ignore[misc]
