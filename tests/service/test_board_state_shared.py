"""The incremental board across processes and hosts (rankings.board_state, issue 24): a rebuild in a process
that did not build the previous board (here: this process with its kept boards forgotten, or a second real
Celery worker on its own data directory) reads the stored state and takes the update path, with the numbers
of a full rebuild."""

from __future__ import annotations

import re

import pytest
import redis

from leaderboard.rankings import board_cache, board_state
from leaderboard.rankings.models import BoardSnapshot
from leaderboard.scoring import state_codec
from leaderboard.submissions.models import Status, Submission
from leaderboard.submissions.services import submission_create
from tests.conftest import wait_for
from tests.service.factories import challenge_with_task, predictions, upload, user
from tests.service.test_board_incremental import SPLIT, assert_equals_full_rebuild, last_path, submit


@pytest.fixture
def setup(transactional_db, settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.DATA_DIR = tmp_path  # the embedded store: DATA_DIR/board-state (no REDIS_URL in these tests)
    settings.REDIS_URL = ""
    board_cache.clear()
    challenge, task, ids, truth = challenge_with_task(user("org"))
    yield challenge, task, ids, truth
    board_cache.clear()


def test_a_fresh_process_takes_the_update_path_from_the_stored_state(setup) -> None:  # type: ignore[no-untyped-def]
    challenge, task, ids, truth = setup
    submit(challenge, "a", predictions(ids, truth, 0.8, 1))
    submit(challenge, "b", predictions(ids, truth, 0.7, 2))
    assert board_state._path(task.pk, SPLIT).exists()  # stored after each rebuild
    for k, acc in enumerate([0.85, 0.8, 0.6], start=3):
        board_cache.clear()  # a fresh process: nothing kept in memory
        submit(challenge, f"p{k}", predictions(ids, truth, acc, k))
        assert last_path(task) == "incremental"
        assert assert_equals_full_rebuild(task).entry_count == k


def test_without_the_shared_state_a_fresh_process_rebuilds_in_full(setup, settings) -> None:  # type: ignore[no-untyped-def]
    challenge, task, ids, truth = setup
    settings.BOARD_STATE_SHARED = False
    submit(challenge, "a", predictions(ids, truth, 0.8, 1))
    submit(challenge, "b", predictions(ids, truth, 0.7, 2))
    board_cache.clear()
    submit(challenge, "c", predictions(ids, truth, 0.75, 3))
    assert last_path(task) == "full"
    assert not board_state._path(task.pk, SPLIT).exists()


def test_a_stored_state_of_another_board_is_not_used(setup) -> None:  # type: ignore[no-untyped-def]
    challenge, task, ids, truth = setup
    submit(challenge, "a", predictions(ids, truth, 0.8, 1))
    submit(challenge, "b", predictions(ids, truth, 0.7, 2))
    # another process wrote the latest snapshot (the stored state is of the one before)
    latest = BoardSnapshot.objects.filter(task=task, split=SPLIT).latest("sequence")
    BoardSnapshot.objects.filter(pk=latest.pk).update(sequence=latest.sequence + 1)
    board_cache.clear()
    submit(challenge, "c", predictions(ids, truth, 0.75, 3))
    assert last_path(task) == "full"
    assert_equals_full_rebuild(task)
    # an unreadable record is a full rebuild too, never an error
    board_state._path(task.pk, SPLIT).write_bytes(b"not a state")
    board_cache.clear()
    submit(challenge, "d", predictions(ids, truth, 0.65, 4))
    assert last_path(task) == "full"
    assert_equals_full_rebuild(task)


REBUILT = re.compile(r"board (\d+)/public rebuilt \((\w+)\): snapshot (\d+)")


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_second_worker_process_reuses_the_first_workers_board(worker_factory, redis_url) -> None:  # type: ignore[no-untyped-def]
    """Two real Celery workers, each on a data directory of its own (two hosts): the first builds the
    board of two entries; it stops; the second, which never saw the board, adds a third entry through
    the state in Redis, and the snapshot is the full rebuild's."""
    board_cache.clear()
    challenge, task, ids, truth = challenge_with_task(user("org"), slug="shared")

    def send(name: str, acc: float, seed: int) -> int:
        s = submission_create(
            challenge=challenge, user=user(name), name=name,
            files={"main": [upload(f"{name}.csv", predictions(ids, truth, acc, seed))]},
        )  # fmt: skip
        return int(s.pk)

    def on_board(pk: int) -> bool:
        snap = BoardSnapshot.objects.filter(task=task, split=SPLIT).order_by("-sequence").first()
        return snap is not None and any(r["submission_id"] == pk for r in snap.rows)

    first = worker_factory()
    for name, acc, seed in [("a", 0.8, 1), ("b", 0.7, 2)]:
        pk = send(name, acc, seed)
        wait_for(lambda pk=pk: on_board(pk), timeout=120, what=f"{name} on the board")
    # the state of the two entries' board in Redis (saved on commit, after its snapshot is visible: the
    # first worker's log already says "state shared" for the one entry's board, and stopping it then left
    # that state, so the third entry was a full rebuild: CI-like run of 2026-12-04)
    store = redis.Redis.from_url(redis_url)

    def shared_entries() -> int:
        data = store.get(board_state._key(task.pk, SPLIT))
        return -1 if data is None else len(state_codec.loads(data)["meta"]["entries"])

    wait_for(lambda: shared_entries() == 2, timeout=60, what="the first worker's state of the two entries")
    first.stop()
    second = worker_factory()
    pk = send("c", 0.75, 3)
    wait_for(lambda: on_board(pk), timeout=120, what="c on the board")
    assert Submission.objects.get(pk=pk).status == Status.SCORED
    # the rebuild's log line is written once its snapshot is committed: it can come after the snapshot is seen
    wait_for(
        lambda: REBUILT.search(second.log_text()) is not None, timeout=60, what="the second worker's rebuild"
    )
    paths = REBUILT.findall(second.log_text())
    assert [(p[1], p[2]) for p in paths] == [("incremental", "3")], second.log_text()[-3000:]
    assert assert_equals_full_rebuild(task).entry_count == 3


@pytest.mark.services
def test_the_scores_binary_columns_read_in_binary_are_the_orms_bytes(postgres, setup) -> None:  # type: ignore[no-untyped-def]
    """``rankings.services._score_data_rows`` reads the replicates in PostgreSQL's binary protocol: the
    same bytes as the ORM's (text protocol) read."""
    from leaderboard.rankings.services import SCORE_DATA_FIELDS, _score_data_rows
    from leaderboard.scoring.models import Score

    challenge, _task, ids, truth = setup
    submit(challenge, "a", predictions(ids, truth, 0.8, 1))
    submit(challenge, "b", predictions(ids, truth, 0.7, 2))
    pks = list(Score.objects.values_list("pk", flat=True))
    orm = {pk: [None if v is None else bytes(v) for v in rest] for pk, *rest in
           Score.objects.filter(pk__in=pks).values_list("pk", *SCORE_DATA_FIELDS)}  # fmt: skip
    binary = {pk: list(rest) for pk, *rest in _score_data_rows(pks)}
    assert binary == orm and len(binary) == 2
    assert all(isinstance(v, bytes) for rest in binary.values() for v in rest if v is not None)
