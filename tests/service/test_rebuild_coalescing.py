"""Board rebuilds are coalesced: while one is queued and has not started, new scores queue no other one,
and still no score is left off the board. A rebuild whose inputs did not change reads no replicates.

(On 1,000 entries a rebuild takes ~10 s; one per scored submission made a burst of 200 take most of an
hour: docs/reliability.md, "Load".)
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from leaderboard.rankings import tasks
from leaderboard.rankings.models import BoardSnapshot
from leaderboard.rankings.services import _pending_key, boards_rebuild_dispatch, leaderboard_rebuild
from leaderboard.submissions.models import Status
from leaderboard.submissions.services import submission_create
from tests.service.factories import challenge_with_task, predictions, upload, user


@pytest.fixture
def queue(transactional_db, monkeypatch) -> Iterator[list[tuple[int, str]]]:  # type: ignore[no-untyped-def]
    """Rebuilds are sent to a queue that nobody consumes yet (a busy worker), recorded here."""
    sent: list[tuple[int, str]] = []
    monkeypatch.setattr(tasks.rebuild_leaderboard, "apply_async", lambda args: sent.append(tuple(args)))
    yield sent
    for task_id, split in set(sent):
        cache.delete(_pending_key(task_id, split))


def _submit(challenge, ids, truth, name: str, accuracy: float, seed: int) -> None:  # type: ignore[no-untyped-def]
    sub = submission_create(
        challenge=challenge,
        user=user(name),
        name=name,
        files={"main": [upload(f"{name}.csv", predictions(ids, truth, accuracy, seed))]},
    )
    sub.refresh_from_db()
    assert sub.status == Status.SCORED, sub.error


def test_scores_arriving_while_a_rebuild_waits_queue_no_second_one(queue) -> None:  # type: ignore[no-untyped-def]
    challenge, task, ids, truth = challenge_with_task(user("org"))
    for i, name in enumerate(["a", "b", "c"]):
        _submit(challenge, ids, truth, name, 0.6 + 0.1 * i, i)
    assert queue == [(task.pk, "public")]  # three scores, one queued rebuild

    leaderboard_rebuild(task_id=task.pk, split="public")  # the worker runs it: it reads all three
    board = BoardSnapshot.objects.filter(task=task, split="public").latest("sequence")
    assert sorted(r["name"] for r in board.rows) == ["a", "b", "c"]

    _submit(challenge, ids, truth, "d", 0.75, 9)  # after it started: a new rebuild is queued
    assert queue == [(task.pk, "public")] * 2
    leaderboard_rebuild(task_id=task.pk, split="public")
    board = BoardSnapshot.objects.filter(task=task, split="public").latest("sequence")
    assert sorted(r["name"] for r in board.rows) == ["a", "b", "c", "d"]


def test_a_rebuild_that_could_not_be_sent_does_not_block_the_next(queue, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _challenge, task, _ids, _truth = challenge_with_task(user("org"))

    def broker_down(args):  # type: ignore[no-untyped-def]
        raise ConnectionError("broker down")

    monkeypatch.setattr(tasks.rebuild_leaderboard, "apply_async", broker_down)
    with pytest.raises(ConnectionError):
        boards_rebuild_dispatch(task_ids=[task.pk])
    monkeypatch.setattr(tasks.rebuild_leaderboard, "apply_async", lambda args: queue.append(tuple(args)))
    boards_rebuild_dispatch(task_ids=[task.pk])
    assert queue == [(task.pk, "public")]


def test_a_rebuild_with_unchanged_inputs_reads_no_replicates(queue) -> None:  # type: ignore[no-untyped-def]
    challenge, task, ids, truth = challenge_with_task(user("org"))
    _submit(challenge, ids, truth, "a", 0.7, 1)
    _submit(challenge, ids, truth, "b", 0.8, 2)
    first = leaderboard_rebuild(task_id=task.pk, split="public")
    with CaptureQueriesContext(connection) as queries:
        again = leaderboard_rebuild(task_id=task.pk, split="public")
    assert again is not None and first is not None and again.pk == first.pk
    read = " ".join(q["sql"] for q in queries.captured_queries)
    assert '"replicates"' not in read and '"rank_distribution"' not in read
