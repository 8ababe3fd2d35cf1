"""Uploads over the size limit are refused while they stream in, before they are read (or stored) whole.

Django's multipart parser would otherwise write a 2 GB upload to a temporary file before the view sees
it. This handler, first in the chain, counts the bytes of each file as they arrive and stops the request
with the API's 400 as soon as one file passes ``UPLOAD_MAX_BYTES``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler
from django.http import HttpRequest

from leaderboard.core.exceptions import ApplicationError

TOO_LARGE = "{name}: the file is larger than the limit of {limit:,} bytes."


class SizeLimitedUploadHandler(FileUploadHandler):
    def new_file(self, *args: Any, **kwargs: Any) -> None:
        super().new_file(*args, **kwargs)
        self.received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.received += len(raw_data)
        limit = settings.UPLOAD_MAX_BYTES
        if self.received > limit:
            raise ApplicationError(
                TOO_LARGE.format(name=self.file_name, limit=limit), extra={"file": self.file_name}
            )
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None  # the next handlers build the file


class SizeLimitedUploadsMixin:
    """For views that accept files: put the size-limiting handler first, before anything parses the body."""

    def initialize_request(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        request.upload_handlers = [SizeLimitedUploadHandler(request), *request.upload_handlers]
        return super().initialize_request(request, *args, **kwargs)  # type: ignore[misc]
