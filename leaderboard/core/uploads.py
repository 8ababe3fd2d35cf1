"""The one upload size rule: the checks every entry point runs against a file's limit.

The limit of a file is its task kind's (``leaderboard.scoring.kinds``: ``get_kind(task.kind).upload_max_bytes()``);
the caller passes it, so this module knows no task and no kind. The API, the site and the services call
:func:`upload_check` (or :func:`upload_read`) before a file is read whole. Before that,
:class:`SizeLimitedUploadHandler` (first in the upload handlers of the API's and the site's views that
accept files) bounds a body while it streams in, by the limit the door passes
(``leaderboard.scoring.kinds.stream_limit``): Django's multipart parser would otherwise write a 2 GB
upload to a temporary file before the view sees it.
"""

from __future__ import annotations

from typing import Any, Protocol, cast

from django.core.files.uploadhandler import FileUploadHandler
from django.http import HttpRequest

from leaderboard.core.exceptions import ApplicationError

TOO_LARGE = "{name}: the file is {size:,} bytes; the limit is {limit:,} bytes."
TOO_LARGE_STREAMED = "{name}: the file is larger than the limit of {limit:,} bytes."


class Upload(Protocol):
    """What the rule needs of a file: its name (for the message) and its declared size."""

    @property
    def name(self) -> Any: ...

    @property
    def size(self) -> Any: ...


class Readable(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


def upload_check(upload: Upload, *, limit: int) -> None:
    """Refuse a file whose declared size is over its limit (its task kind's), before it is read."""
    if upload.size is not None and upload.size > limit:
        raise ApplicationError(
            TOO_LARGE.format(name=upload.name, size=upload.size, limit=limit), extra={"file": upload.name}
        )


def upload_read(upload: Upload, *, limit: int, stream: Readable | None = None) -> bytes:
    """The bytes of a file within its limit (its task kind's): refused by its declared size first, and
    never read past the limit (a size that lied is caught by reading one byte more than allowed).

    ``stream`` is where the bytes come from when the upload is not itself readable.
    """
    upload_check(upload, limit=limit)
    source = stream if stream is not None else cast(Readable, upload)
    data = source.read(limit + 1)
    if len(data) > limit:
        raise ApplicationError(
            TOO_LARGE_STREAMED.format(name=upload.name, limit=limit), extra={"file": upload.name}
        )
    return data


class SizeLimitedUploadHandler(FileUploadHandler):
    def __init__(self, request: HttpRequest | None = None, *, limit: int) -> None:
        super().__init__(request)
        self.limit = limit

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        super().new_file(*args, **kwargs)
        self.received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.received += len(raw_data)
        limit = self.limit
        if self.received > limit:
            raise ApplicationError(
                TOO_LARGE_STREAMED.format(name=self.file_name, limit=limit), extra={"file": self.file_name}
            )
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None  # the next handlers build the file
