"""A board never mixes replicates drawn with two resample weights (seed, resamples, engine version).

Issue 13 point 4 and issue 14 "Done when": the rebuild reads the seed, resamples and engine version of
every score it chooses; a score of other weights is left off the board, named with a "needs re-score"
reason in the snapshot, and the task keeps the version it was scored with until it is re-scored.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from leaderboard.rankings import tasks
from leaderboard.rankings.models import BoardSnapshot
from leaderboard.rankings.services import _pending_key, leaderboard_rebuild
from leaderboard.scoring.models import Score
from leaderboard.submissions.models import Status
from leaderboard.submissions.services import submission_create
from tests.service.factories import challenge_with_task, predictions, upload, user


@pytest.fixture
def queue(transactional_db, monkeypatch) -> Iterator[list[tuple[int, str]]]:  # type: ignore[no-untyped-def]
    sent: list[tuple[int, str]] = []
    monkeypatch.setattr(tasks.rebuild_leaderboard, "apply_async", lambda args: sent.append(tuple(args)))
    yield sent
    for task_id, split in set(sent):
        cache.delete(_pending_key(task_id, split))


def _board(queue):  # type: ignore[no-untyped-def]
    challenge, task, ids, truth = challenge_with_task(user("org"))
    for i, name in enumerate(["a", "b", "c"]):
        sub = submission_create(
            challenge=challenge,
            user=user(name),
            name=name,
            files={"main": [upload(f"{name}.csv", predictions(ids, truth, 0.6 + 0.1 * i, i))]},
        )
        sub.refresh_from_db()
        assert sub.status == Status.SCORED, sub.error
    return challenge, task


def _latest(task) -> BoardSnapshot:  # type: ignore[no-untyped-def]
    return BoardSnapshot.objects.filter(task=task, split="public").latest("sequence")


def test_a_score_of_a_newer_engine_is_left_off_until_the_task_is_rescored(queue) -> None:  # type: ignore[no-untyped-def]
    _challenge, task = _board(queue)
    old_version = Score.objects.get(task=task, submission__name="a").engine_version
    later = timezone.now() + timedelta(seconds=5)
    Score.objects.filter(task=task, submission__name="c").update(engine_version="99.0", scored_at=later)
    leaderboard_rebuild(task_id=task.pk, split="public")
    snap = _latest(task)
    assert sorted(r["name"] for r in snap.rows) == ["a", "b"]  # the task keeps the version it was scored with
    (off,) = snap.signature["left_off"]
    assert off["name"] == "c"
    assert off["reason"].startswith("needs re-score")
    assert f"engine 99.0 (the board's: {old_version})" in off["reason"]

    # an organizer's re-score rewrites every score: the board moves to the new version as a whole
    Score.objects.filter(task=task).update(engine_version="99.0", scored_at=later + timedelta(seconds=1))
    leaderboard_rebuild(task_id=task.pk, split="public")
    snap = _latest(task)
    assert sorted(r["name"] for r in snap.rows) == ["a", "b", "c"]
    assert "left_off" not in snap.signature


def test_a_score_drawn_with_another_seed_or_resample_count_is_left_off(queue) -> None:  # type: ignore[no-untyped-def]
    challenge, task = _board(queue)
    Score.objects.filter(task=task, submission__name="a").update(seed=challenge.seed + 1)
    Score.objects.filter(task=task, submission__name="b").update(resamples=challenge.resamples * 2)
    leaderboard_rebuild(task_id=task.pk, split="public")
    snap = _latest(task)
    assert [r["name"] for r in snap.rows] == ["c"]
    reasons = {off["name"]: off["reason"] for off in snap.signature["left_off"]}
    assert f"seed {challenge.seed + 1} (the board's: {challenge.seed})" in reasons["a"]
    assert f"{challenge.resamples * 2} resamples (the board's: {challenge.resamples})" in reasons["b"]
    # the same inputs again: nothing new is written (the left-off entries are part of the inputs)
    leaderboard_rebuild(task_id=task.pk, split="public")
    assert _latest(task).sequence == snap.sequence
