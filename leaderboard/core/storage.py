"""Uploaded files kept in the database, so that a Celery worker on any host can read them.

A Django ``Storage`` backend (``STORAGES["default"]`` when ``LEADERBOARD_STORAGE=database``, the default).
Each file is a :class:`~leaderboard.core.models.StoredFile` row and its bytes are
:class:`~leaderboard.core.models.StoredFileChunk` rows of at most :data:`CHUNK_BYTES` each.

Why written here rather than taken from PyPI (docs/adr/0005-uploads-in-the-database.md): the packages that
keep files in the database store a file as one value, read and written whole (``django-dbfiles``, which
also serves files by URL; ``django-db-file-storage``, as base64 text, a third larger), or mirror every
file to the local file system and serve it from there (``django-binary-database-files``,
``django-database-files-3000``), which is what a second host cannot see. What is needed is small: write in
chunks, read in chunks, exist, size, delete.

Why chunks: Django's psycopg 3 backend binds parameters on the client, so one 256 MB ``bytea`` value
would travel as a 512 MB hex literal inside the SQL text (and PostgreSQL refuses any one value over
1 GB); a value read back comes as hex text too. In chunks of 4 MB the driver never holds more than one
chunk's text, whatever the file's size; a whole-file read holds the file once plus one chunk.

Nothing is half-written: a file's rows are written in a savepoint, inside the caller's transaction, so an
upload stored with its ``Submission`` row (leaderboard.submissions.services) commits or rolls back with it.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.core.files.base import File
from django.core.files.storage import Storage
from django.db import transaction
from django.db.models import Model
from django.utils.deconstruct import deconstructible

from leaderboard.core.models import StoredFile, StoredFileChunk

#: Bytes per chunk row. A file keeps the chunk size it was written with (``StoredFile.chunk_size``).
CHUNK_BYTES = 4 * 1024 * 1024


def write_file(
    name: str,
    pieces: Iterable[bytes],
    *,
    file_model: type[Model] = StoredFile,
    chunk_model: type[Model] = StoredFileChunk,
    chunk_bytes: int | None = None,
) -> int:
    """Store ``pieces`` (the file's bytes, in order, in pieces of any size) under ``name``; return its size.

    The models are parameters so that a data migration can pass its historical models.
    """
    chunk_bytes = chunk_bytes or CHUNK_BYTES
    with transaction.atomic():
        stored = file_model.objects.create(name=name, size=0, chunk_size=chunk_bytes)  # type: ignore[attr-defined]
        size, index, pending = 0, 0, bytearray()
        for piece in pieces:
            pending += piece
            while len(pending) >= chunk_bytes:
                chunk_model.objects.create(file=stored, index=index, data=bytes(pending[:chunk_bytes]))  # type: ignore[attr-defined]
                del pending[:chunk_bytes]
                size, index = size + chunk_bytes, index + 1
        if pending or index == 0:  # an empty file has one empty chunk
            chunk_model.objects.create(file=stored, index=index, data=bytes(pending))  # type: ignore[attr-defined]
            size += len(pending)
        file_model.objects.filter(pk=stored.pk).update(size=size)  # type: ignore[attr-defined]
    return size


class ChunkReader(io.RawIOBase):
    """A read-only, seekable stream over a stored file's chunks: one query per chunk it touches."""

    def __init__(self, stored: StoredFile) -> None:
        super().__init__()
        self._id, self._size, self._chunk = stored.pk, stored.size, stored.chunk_size
        self._pos = 0
        self._cached: tuple[int, bytes] | None = None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        if base + offset < 0:
            raise ValueError("negative seek position")
        self._pos = base + offset
        return self._pos

    def _chunk_at(self, index: int) -> bytes:
        if self._cached is None or self._cached[0] != index:
            rows = StoredFileChunk.objects.filter(file_id=self._id, index=index).values_list(
                "data", flat=True
            )
            data = rows.first()
            if data is None:
                raise FileNotFoundError(f"stored file {self._id} lost its chunk {index}")
            self._cached = (index, bytes(data))
        return self._cached[1]

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self._pos >= self._size or not len(view):
            return 0
        index, start = divmod(self._pos, self._chunk)
        piece = self._chunk_at(index)[start : start + len(view)]
        view[: len(piece)] = piece
        self._pos += len(piece)
        return len(piece)

    def readall(self) -> bytes:
        """The rest of the file, one query per chunk (not one per buffer's worth, as the default would)."""
        if self._pos >= self._size:
            return b""
        index, start = divmod(self._pos, self._chunk)
        parts = [self._chunk_at(index)[start:]]
        self._cached = None  # the parts list holds the chunks now
        for i in range(index + 1, (self._size + self._chunk - 1) // self._chunk):
            parts.append(self._chunk_at(i))
            self._cached = None
        self._pos = self._size
        return b"".join(parts)


@deconstructible
class DatabaseStorage(Storage):
    """Files as database rows. No URLs: uploaded predictions are read only by scoring, never served."""

    def _open(self, name: str, mode: str = "rb") -> File:
        if any(c in mode for c in "wa+x"):
            raise ValueError("DatabaseStorage files open for reading only; save() writes a new file.")
        stored = StoredFile.objects.filter(name=name).first()
        if stored is None:
            raise FileNotFoundError(f"no stored file {name!r}")
        return File(io.BufferedReader(ChunkReader(stored), buffer_size=stored.chunk_size), name=name)

    def _save(self, name: str, content: File) -> str:
        write_file(name, content.chunks(CHUNK_BYTES))  # chunks() starts from the beginning
        return name

    def exists(self, name: str) -> bool:
        return StoredFile.objects.filter(name=name).exists()

    def delete(self, name: str) -> None:
        StoredFile.objects.filter(name=name).delete()

    def size(self, name: str) -> int:
        stored = StoredFile.objects.filter(name=name).values_list("size", flat=True).first()
        if stored is None:
            raise FileNotFoundError(f"no stored file {name!r}")
        return int(stored)

    def listdir(self, path: str) -> tuple[list[str], list[str]]:
        prefix = path.rstrip("/") + "/" if path.strip("/") else ""
        dirs, files = set(), []
        for name in StoredFile.objects.filter(name__startswith=prefix).values_list("name", flat=True):
            head, sep, _tail = name[len(prefix) :].partition("/")
            if sep:
                dirs.add(head)
            else:
                files.append(head)
        return sorted(dirs), sorted(files)

    def get_created_time(self, name: str) -> datetime:
        created = StoredFile.objects.filter(name=name).values_list("created_at", flat=True).first()
        if created is None:
            raise FileNotFoundError(f"no stored file {name!r}")
        return created

    get_modified_time = get_created_time  # stored files never change

    def url(self, name: str | None) -> str:
        # A refusal by design, as Django's FileSystemStorage answers without a base_url (ValueError).
        raise ValueError("Uploaded files are never served by URL.")
