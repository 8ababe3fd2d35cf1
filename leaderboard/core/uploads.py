"""The one upload size rule: the limit of a file by its task's kind, and the checks every entry point runs.

The API, the site and the services call :func:`upload_check` (or :func:`upload_read`) before a file is
read whole. Before that, :class:`SizeLimitedUploadHandler` (first in the upload handlers of the API's and
the site's views that accept files) bounds a body while it streams in, by :func:`stream_limit`: Django's
multipart parser would otherwise write a 2 GB upload to a temporary file before the view sees it.
"""

from __future__ import annotations

from typing import Any, Protocol, cast

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler
from django.http import HttpRequest

from leaderboard.core.exceptions import ApplicationError

#: Task kinds (``challenges.models.TaskKind`` values) whose files are images' annotations or masks.
VISION_KINDS = ("detection", "segmentation")

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


def upload_max_bytes(kind: str | None = None) -> int:
    """The limit for a file of a task of this kind (``tabular``, ``detection``, ``segmentation``).

    ``None`` gives the largest limit of any kind: the bound while a request body streams in, before the
    file's task is known (the service then applies its task's own limit before reading the file).
    """
    vision = settings.VISION_UPLOAD_MAX_BYTES
    limits = {"tabular": settings.UPLOAD_MAX_BYTES, **dict.fromkeys(VISION_KINDS, vision)}
    if kind is None:
        return max(limits.values())
    if kind not in limits:
        raise ValueError(f"Unknown task kind {kind!r}.")
    return limits[kind]


def upload_check(upload: Upload, *, kind: str) -> None:
    """Refuse a file whose declared size is over its kind's limit, before it is read."""
    limit = upload_max_bytes(kind)
    if upload.size is not None and upload.size > limit:
        raise ApplicationError(
            TOO_LARGE.format(name=upload.name, size=upload.size, limit=limit), extra={"file": upload.name}
        )


def upload_read(upload: Upload, *, kind: str, stream: Readable | None = None) -> bytes:
    """The bytes of a file within its kind's limit: refused by its declared size first, and never read
    past the limit (a size that lied is caught by reading one byte more than allowed).

    ``stream`` is where the bytes come from when the upload is not itself readable.
    """
    upload_check(upload, kind=kind)
    limit = upload_max_bytes(kind)
    source = stream if stream is not None else cast(Readable, upload)
    data = source.read(limit + 1)
    if len(data) > limit:
        raise ApplicationError(
            TOO_LARGE_STREAMED.format(name=upload.name, limit=limit), extra={"file": upload.name}
        )
    return data


def stream_limit(url_kwargs: dict[str, Any], *, any_kind: bool = False) -> int:
    """The limit while a body streams in, before its fields are parsed: the largest limit (by
    :func:`upload_max_bytes`) of the tasks the request can be about.

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
                TOO_LARGE_STREAMED.format(name=self.file_name, limit=limit), extra={"file": self.file_name}
            )
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None  # the next handlers build the file
