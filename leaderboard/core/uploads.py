"""The one upload size rule: the limit of a file by its task's kind, and the check every entry point runs.

The API, the site and the services call :func:`upload_check` (or :func:`upload_read`) before a file is
read whole; the streaming guard of the API (``leaderboard.api.uploads``) bounds a body by
:func:`upload_max_bytes` while it arrives, before the file's task is known.
"""

from __future__ import annotations

from typing import Any, Protocol, cast

from django.conf import settings

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
