"""The one upload size rule (leaderboard.core.uploads): the limit by task kind (leaderboard.scoring.kinds),
checked before reading."""

from __future__ import annotations

import io

import pytest

from leaderboard.core.exceptions import ApplicationError
from leaderboard.core.uploads import upload_check, upload_read
from leaderboard.scoring.kinds import get_kind, stream_limit, upload_limit


class FakeUpload(io.BytesIO):
    def __init__(self, data: bytes, *, size: int | None = None) -> None:
        super().__init__(data)
        self.name = "p.csv"
        self.size = len(data) if size is None else size


def test_the_limit_follows_the_task_kind(settings) -> None:  # type: ignore[no-untyped-def]
    settings.UPLOAD_MAX_BYTES, settings.VISION_UPLOAD_MAX_BYTES = 10, 30
    assert get_kind("tabular").upload_max_bytes() == 10
    assert get_kind("detection").upload_max_bytes() == get_kind("segmentation").upload_max_bytes() == 30
    assert upload_limit() == 30  # the bound while a body streams in, before its task is known
    assert upload_limit(["tabular"]) == 10 and upload_limit(["tabular", "segmentation"]) == 30
    assert stream_limit({}, any_kind=True) == stream_limit({"slug": "c"}, any_kind=True) == 30
    with pytest.raises(ValueError, match="Unknown task kind"):
        get_kind("audio")


@pytest.mark.django_db
def test_the_streaming_bound_follows_the_kinds_of_the_tasks_in_the_address(settings) -> None:  # type: ignore[no-untyped-def]
    from tests.service.factories import challenge_with_task, user

    challenge, task, _, _ = challenge_with_task(user("org"))
    settings.UPLOAD_MAX_BYTES, settings.VISION_UPLOAD_MAX_BYTES = 10, 30
    assert stream_limit({"slug": challenge.slug}) == 10  # a challenge of CSV tasks keeps the tabular limit
    assert stream_limit({"slug": challenge.slug, "task": task.slug}) == 10
    assert stream_limit({"slug": "no-such-challenge"}) == 10  # no task: the default kind's
    challenge.tasks.update(kind="detection")
    assert stream_limit({"slug": challenge.slug, "task_slug": task.slug}) == 30


def test_a_file_over_the_limit_is_refused_by_its_declared_size_before_it_is_read(settings) -> None:  # type: ignore[no-untyped-def]
    settings.UPLOAD_MAX_BYTES = 10
    upload = FakeUpload(b"x" * 11)
    with pytest.raises(ApplicationError, match="the file is 11 bytes; the limit is 10 bytes"):
        upload_check(upload, limit=10)
    with pytest.raises(ApplicationError):
        upload_read(upload, limit=10)
    assert upload.tell() == 0  # nothing was read


def test_a_size_that_lies_is_caught_by_reading_one_byte_past_the_limit(settings) -> None:  # type: ignore[no-untyped-def]
    settings.UPLOAD_MAX_BYTES = 10
    with pytest.raises(ApplicationError, match="larger than the limit of 10 bytes"):
        upload_read(FakeUpload(b"x" * 50, size=3), limit=10)
    assert upload_read(FakeUpload(b"x" * 10), limit=10) == b"x" * 10
