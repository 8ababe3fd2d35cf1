"""Uploads over the size limit are refused while they stream in, before they are read (or stored) whole.

Django's multipart parser would otherwise write a 2 GB upload to a temporary file before the view sees
it. This handler, first in the chain, counts the bytes of each file as they arrive and stops the request
with the API's 400 as soon as one file passes the limit of the tasks it can be for (:func:`stream_limit`).
"""

from __future__ import annotations

from typing import Any

from django.core.files.uploadhandler import FileUploadHandler
from django.http import HttpRequest

from leaderboard.core.exceptions import ApplicationError
from leaderboard.core.uploads import TOO_LARGE_STREAMED as TOO_LARGE
from leaderboard.core.uploads import upload_max_bytes


def stream_limit(url_kwargs: dict[str, Any], *, any_kind: bool = False) -> int:
    """The limit while a body streams in, before its fields are parsed: the largest limit (by
    :func:`~leaderboard.core.uploads.upload_max_bytes`) of the tasks the request can be about.

    A task in the address: its kind's limit. A challenge: the largest of its tasks' kinds (a challenge of
    CSV tasks keeps the tabular limit). ``any_kind`` (a new task, whose metric is a field of the body): the
    largest of all kinds; the service then applies the new task's own limit before reading the file.
    """
    from leaderboard.challenges.models import Task, TaskKind

    slug = url_kwargs.get("slug")
    task = url_kwargs.get("task") or url_kwargs.get("task_slug")
    if any_kind or not slug:
        return upload_max_bytes()
    tasks = Task.objects.filter(challenge__slug=slug)
    if task:
        tasks = tasks.filter(slug=task)
    kinds = set(tasks.values_list("kind", flat=True)) or {TaskKind.TABULAR}
    return max(upload_max_bytes(kind) for kind in kinds)


class SizeLimitedUploadHandler(FileUploadHandler):
    def __init__(self, request: HttpRequest | None = None, *, limit: int | None = None) -> None:
        super().__init__(request)
        self.limit = upload_max_bytes() if limit is None else limit

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        super().new_file(*args, **kwargs)
        self.received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.received += len(raw_data)
        limit = self.limit
        if self.received > limit:
            raise ApplicationError(
                TOO_LARGE.format(name=self.file_name, limit=limit), extra={"file": self.file_name}
            )
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None  # the next handlers build the file


class SizeLimitedUploadsMixin:
    """For views that accept files: put the size-limiting handler first, before anything parses the body."""

    #: The view creates a task (its kind is a field of the body): stream up to the largest limit.
    upload_any_kind = False

    def initialize_request(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        limit = stream_limit(kwargs, any_kind=self.upload_any_kind) if request.method != "GET" else None
        request.upload_handlers = [SizeLimitedUploadHandler(request, limit=limit), *request.upload_handlers]
        return super().initialize_request(request, *args, **kwargs)  # type: ignore[misc]
