"""The incremental board in the service (rankings.board_cache, issue 14 point 1): a rebuild that adds one
entry to the process's previous board takes the update path and writes the numbers of a full rebuild;
any other change takes the full path."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.utils import timezone

from leaderboard.challenges.models import Challenge, Task
from leaderboard.rankings import board as board_builder
from leaderboard.rankings import board_cache, versions
from leaderboard.rankings import services as rankings
from leaderboard.rankings.models import BoardSnapshot
from leaderboard.scoring.models import Score
from leaderboard.submissions.models import Status
from leaderboard.submissions.services import submission_create
from tests.service.factories import challenge_with_task, predictions, upload, user

SPLIT = "public"


@pytest.fixture
def setup(transactional_db):  # type: ignore[no-untyped-def]
    board_cache.clear()
    organizer = user("org")
    challenge, task, ids, truth = challenge_with_task(organizer)
    yield challenge, task, ids, truth
    board_cache.clear()


def submit(challenge, name: str, data: bytes):  # type: ignore[no-untyped-def]
    s = submission_create(
        challenge=challenge, user=user(name), name=name, files={"main": [upload(f"{name}.csv", data)]}
    )
    s.refresh_from_db()
    assert s.status == Status.SCORED, s.error
    return s


def last_path(task: Task) -> str:
    kept = board_cache.peek(task.pk, SPLIT)
    assert kept is not None
    return kept.last


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value))  # as the snapshot's JSON fields store it


def assert_equals_full_rebuild(task: Task) -> BoardSnapshot:
    """The latest snapshot equals the board built in full from the same entries (no cache)."""
    snapshot = BoardSnapshot.objects.filter(task=task, split=SPLIT).latest("sequence")
    task = Task.objects.select_related("challenge").get(pk=task.pk)
    entries = rankings._choose_entries(task, SPLIT)
    ref = versions.reference(
        seed=task.challenge.seed, resamples=task.challenge.resamples, scores=[e.score for e in entries]
    )
    entries, _ = versions.split_compatible(entries, ref)
    rankings._load_score_data(entries)
    full = board_builder.build_board(task=task, split=SPLIT, entries=entries)  # stats.board, no cache
    assert snapshot.entry_count == len(entries)
    assert snapshot.rows == _plain(full.rows)
    assert snapshot.rank_distribution == _plain(full.rank_distribution)
    assert snapshot.pairwise == _plain(full.pairwise)
    skip = {"created", "inputs"}
    assert {k: v for k, v in snapshot.signature.items() if k not in skip} == _plain(
        {k: v for k, v in full.signature.items() if k not in skip}
    )
    return snapshot


def test_a_new_entry_takes_the_update_path_with_the_full_rebuilds_numbers(setup) -> None:  # type: ignore[no-untyped-def]
    challenge, task, ids, truth = setup
    submit(challenge, "a", predictions(ids, truth, 0.8, 1))
    assert last_path(task) == "full"
    paths = []
    for k, acc in enumerate([0.7, 0.85, 0.8, 0.6], start=2):  # 0.8 again: near-ties with "a"
        submit(challenge, f"p{k}", predictions(ids, truth, acc, k))
        paths.append(last_path(task))
        snapshot = assert_equals_full_rebuild(task)
        assert snapshot.entry_count == k
    assert paths == ["incremental"] * 4
    assert len({r["rank_sim_low"] for r in snapshot.rows}) >= 1 and snapshot.rows[0]["rank"] == 1


def test_a_removed_entry_takes_the_full_path(setup) -> None:  # type: ignore[no-untyped-def]
    challenge, task, ids, truth = setup
    subs = [submit(challenge, n, predictions(ids, truth, a, s)) for n, a, s in [("a", 0.8, 1), ("b", 0.7, 2)]]
    Score.objects.filter(submission=subs[0]).delete()
    rankings.leaderboard_rebuild(task_id=task.pk, split=SPLIT)
    assert last_path(task) == "full"
    assert assert_equals_full_rebuild(task).entry_count == 1


def test_a_rescored_entry_with_a_new_one_takes_the_full_path(setup) -> None:  # type: ignore[no-untyped-def]
    challenge, task, ids, truth = setup
    a = submit(challenge, "a", predictions(ids, truth, 0.8, 1))
    submit(challenge, "b", predictions(ids, truth, 0.7, 2))
    assert last_path(task) == "incremental"
    # "a" re-scored (same numbers, a new scored_at) before "c" arrives: not the kept board plus one
    Score.objects.filter(submission=a).update(scored_at=timezone.now())
    submit(challenge, "c", predictions(ids, truth, 0.75, 3))
    assert last_path(task) == "full"
    assert assert_equals_full_rebuild(task).entry_count == 3
    submit(challenge, "d", predictions(ids, truth, 0.65, 4))  # and the next one is incremental again
    assert last_path(task) == "incremental"
    assert_equals_full_rebuild(task)


def test_a_changed_setting_takes_the_full_path(setup) -> None:  # type: ignore[no-untyped-def]
    challenge, task, ids, truth = setup
    submit(challenge, "a", predictions(ids, truth, 0.8, 1))
    submit(challenge, "b", predictions(ids, truth, 0.7, 2))
    Challenge.objects.filter(pk=challenge.pk).update(confidence=0.9)
    submit(challenge, "c", predictions(ids, truth, 0.75, 3))
    assert last_path(task) == "full"
    snapshot = assert_equals_full_rebuild(task)
    assert snapshot.signature["confidence"] == 0.9


def test_a_board_written_by_another_process_takes_the_full_path(setup) -> None:  # type: ignore[no-untyped-def]
    challenge, task, ids, truth = setup
    submit(challenge, "a", predictions(ids, truth, 0.8, 1))
    submit(challenge, "b", predictions(ids, truth, 0.7, 2))
    # another process wrote the latest snapshot: its sequence is not the kept board's
    latest = BoardSnapshot.objects.filter(task=task, split=SPLIT).latest("sequence")
    BoardSnapshot.objects.filter(pk=latest.pk).update(sequence=latest.sequence + 1)
    submit(challenge, "c", predictions(ids, truth, 0.75, 3))
    assert last_path(task) == "full"
    assert_equals_full_rebuild(task)


def test_the_cache_is_bounded_and_can_be_turned_off(setup, settings) -> None:  # type: ignore[no-untyped-def]
    challenge, task, ids, truth = setup
    settings.BOARD_CACHE_BOARDS = 0
    submit(challenge, "a", predictions(ids, truth, 0.8, 1))
    submit(challenge, "b", predictions(ids, truth, 0.7, 2))
    assert board_cache.peek(task.pk, SPLIT) is None
    assert_equals_full_rebuild(task)
    settings.BOARD_CACHE_BOARDS = 1
    rankings.leaderboard_rebuild(task_id=task.pk, split=SPLIT)  # inputs unchanged: nothing built or kept
    other, other_task, _, _ = challenge_with_task(user("org2"), slug="other")
    submit(challenge, "c", predictions(ids, truth, 0.75, 3))
    assert board_cache.peek(task.pk, SPLIT) is not None
    submit(other, "d", predictions(ids, truth, 0.75, 4))
    assert board_cache.peek(other_task.pk, SPLIT) is not None
    assert board_cache.peek(task.pk, SPLIT) is None  # the least recently used board left
