"""The one upload size rule (leaderboard.core.uploads): the limit by task kind, checked before reading."""

from __future__ import annotations

import io

import pytest

from leaderboard.core.exceptions import ApplicationError
from leaderboard.core.uploads import upload_check, upload_max_bytes, upload_read


class FakeUpload(io.BytesIO):
    def __init__(self, data: bytes, *, size: int | None = None) -> None:
        super().__init__(data)
        self.name = "p.csv"
        self.size = len(data) if size is None else size


def test_the_limit_follows_the_task_kind(settings) -> None:  # type: ignore[no-untyped-def]
    settings.UPLOAD_MAX_BYTES, settings.VISION_UPLOAD_MAX_BYTES = 10, 30
    assert upload_max_bytes("tabular") == 10
    assert upload_max_bytes("detection") == upload_max_bytes("segmentation") == 30
    assert upload_max_bytes() == 30  # the bound while a body streams in, before its task is known
    with pytest.raises(ValueError, match="Unknown task kind"):
        upload_max_bytes("audio")


def test_a_file_over_the_limit_is_refused_by_its_declared_size_before_it_is_read(settings) -> None:  # type: ignore[no-untyped-def]
    settings.UPLOAD_MAX_BYTES = 10
    upload = FakeUpload(b"x" * 11)
    with pytest.raises(ApplicationError, match="the file is 11 bytes; the limit is 10 bytes"):
        upload_check(upload, kind="tabular")
    with pytest.raises(ApplicationError):
        upload_read(upload, kind="tabular")
    assert upload.tell() == 0  # nothing was read


def test_a_size_that_lies_is_caught_by_reading_one_byte_past_the_limit(settings) -> None:  # type: ignore[no-untyped-def]
    settings.UPLOAD_MAX_BYTES = 10
    with pytest.raises(ApplicationError, match="larger than the limit of 10 bytes"):
        upload_read(FakeUpload(b"x" * 50, size=3), kind="tabular")
    assert upload_read(FakeUpload(b"x" * 10), kind="tabular") == b"x" * 10
