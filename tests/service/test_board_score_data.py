"""The scores' columns kept between rebuilds (rankings.board_cache.score_data, issue 24): a rebuild reads from
the database only the scores whose (id, ``scored_at``) its process did not read for its last rebuild of the
board (on the update path, the new entry's), and its snapshot is the full rebuild's from the database."""

from __future__ import annotations

import numpy as np
import pytest
from django.utils import timezone

from leaderboard.rankings import board_cache
from leaderboard.rankings import services as rankings
from leaderboard.scoring.models import Score
from tests.service.factories import challenge_with_task, predictions, user
from tests.service.test_board_incremental import SPLIT, assert_equals_full_rebuild, last_path, submit


@pytest.fixture
def setup(transactional_db, settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.DATA_DIR = tmp_path
    settings.REDIS_URL = ""
    board_cache.clear()
    challenge, task, ids, truth = challenge_with_task(user("org"))
    yield challenge, task, ids, truth
    board_cache.clear()


@pytest.fixture
def reads(monkeypatch):  # type: ignore[no-untyped-def]
    """The score ids each rebuild read from the database, one list per query."""
    seen: list[list[int]] = []
    real = rankings._score_data_rows

    def spy(pks: list[int]):  # type: ignore[no-untyped-def]
        seen.append(sorted(pks))
        return real(pks)

    monkeypatch.setattr(rankings, "_score_data_rows", spy)
    return seen


def score_of(submission) -> Score:  # type: ignore[no-untyped-def]
    return Score.objects.get(submission=submission, split=SPLIT)


def test_an_update_reads_only_the_new_entrys_scores(setup, reads) -> None:  # type: ignore[no-untyped-def]
    challenge, task, ids, truth = setup
    subs = [submit(challenge, "a", predictions(ids, truth, 0.8, 1))]
    assert reads == [[score_of(subs[0]).pk]]
    for k, acc in enumerate([0.7, 0.85, 0.8], start=2):
        reads.clear()
        subs.append(submit(challenge, f"p{k}", predictions(ids, truth, acc, k)))
        assert reads == [[score_of(subs[-1]).pk]]  # the new entry's, not the kept ones
        assert last_path(task) == "incremental"
        reads.clear()
        assert assert_equals_full_rebuild(task).entry_count == k  # read in full from the database here
        assert len(reads[0]) == k


def test_a_fresh_process_reads_every_score(setup, reads) -> None:  # type: ignore[no-untyped-def]
    challenge, task, ids, truth = setup
    submit(challenge, "a", predictions(ids, truth, 0.8, 1))
    submit(challenge, "b", predictions(ids, truth, 0.7, 2))
    board_cache.clear()  # nothing kept in this process (the shared state still gives the update path)
    reads.clear()
    submit(challenge, "c", predictions(ids, truth, 0.75, 3))
    assert len(reads) == 1 and len(reads[0]) == 3
    assert last_path(task) == "incremental"
    assert_equals_full_rebuild(task)


def test_a_rescored_entry_is_read_again(setup, reads) -> None:  # type: ignore[no-untyped-def]
    challenge, task, ids, truth = setup
    a = submit(challenge, "a", predictions(ids, truth, 0.8, 1))
    submit(challenge, "b", predictions(ids, truth, 0.7, 2))
    # "a" re-scored with other replicates (a new scored_at, as every save writes): the kept columns of "a"
    # are stale and must not be used
    score = score_of(a)
    before = {r["submission_id"]: r for r in assert_equals_full_rebuild(task).rows}
    old = np.frombuffer(bytes(score.replicates), dtype=np.float64)
    other = old.mean() + 3 * (old - old.mean())  # wider: every difference to "a" varies more
    Score.objects.filter(pk=score.pk).update(replicates=other.tobytes(), scored_at=timezone.now())
    reads.clear()
    c = submit(challenge, "c", predictions(ids, truth, 0.75, 3))
    assert reads == [sorted([score.pk, score_of(c).pk])]
    assert last_path(task) == "full"  # the kept board does not hold the re-scored "a" either
    snapshot = assert_equals_full_rebuild(task)
    after = {r["submission_id"]: r for r in snapshot.rows}
    b = next(pk for pk in before if pk != a.pk)
    assert after[b]["diff_se"] > 1.5 * before[b]["diff_se"]  # from the new replicates of "a", not the kept


def test_the_kept_scores_are_of_their_own_board(setup, reads) -> None:  # type: ignore[no-untyped-def]
    challenge, task, ids, truth = setup
    submit(challenge, "a", predictions(ids, truth, 0.8, 1))
    other, other_task, _, _ = challenge_with_task(user("org2"), slug="other")
    reads.clear()
    d = submit(other, "d", predictions(ids, truth, 0.75, 4))
    assert reads == [[score_of(d).pk]]
    assert set(board_cache.score_data(other_task.pk, SPLIT)) == {score_of(d).pk}
    assert set(board_cache.score_data(task.pk, SPLIT)) != {score_of(d).pk}


def test_nothing_is_kept_when_the_cache_is_off(setup, settings, reads) -> None:  # type: ignore[no-untyped-def]
    challenge, task, ids, truth = setup
    settings.BOARD_CACHE_BOARDS = 0
    submit(challenge, "a", predictions(ids, truth, 0.8, 1))
    reads.clear()
    submit(challenge, "b", predictions(ids, truth, 0.7, 2))
    assert len(reads) == 1 and len(reads[0]) == 2
    assert board_cache.score_data(task.pk, SPLIT) == {}
    assert_equals_full_rebuild(task)


def test_the_kept_scores_are_bounded_in_bytes(setup, settings, reads) -> None:  # type: ignore[no-untyped-def]
    challenge, task, ids, truth = setup
    submit(challenge, "a", predictions(ids, truth, 0.8, 1))
    ((size, _),) = board_cache._data.values()
    assert size > 0
    settings.BOARD_SCORE_DATA_MAX_BYTES = size + 1  # one entry's columns fit, two do not
    reads.clear()
    submit(challenge, "b", predictions(ids, truth, 0.7, 2))
    assert len(reads[0]) == 1  # "a" was kept
    assert board_cache.score_data(task.pk, SPLIT) == {}  # the board of two is larger than the limit
    reads.clear()
    submit(challenge, "c", predictions(ids, truth, 0.75, 3))
    assert len(reads[0]) == 3 and last_path(task) == "incremental"
    assert_equals_full_rebuild(task)


def test_the_update_path_checks_the_kept_columns_by_their_digests(setup) -> None:  # type: ignore[no-untyped-def]
    challenge, task, ids, truth = setup
    submit(challenge, "a", predictions(ids, truth, 0.8, 1))
    submit(challenge, "b", predictions(ids, truth, 0.7, 2))
    kept = board_cache.peek(task.pk, SPLIT)
    assert kept is not None and kept._state is not None
    assert kept._state.column_digests is not None and kept._state.theta is None  # no B x K copy kept
    digests = {pk: d[4] for pk, d in board_cache.score_data(task.pk, SPLIT).items()}
    assert set(kept._state.column_digests) == set(digests.values())
    board_cache.clear()  # a fresh process: the shared state (with the digests), every score read again
    submit(challenge, "c", predictions(ids, truth, 0.75, 3))
    assert last_path(task) == "incremental"
    assert_equals_full_rebuild(task)
    submit(challenge, "d", predictions(ids, truth, 0.65, 4))  # in-process, the new score only read
    assert last_path(task) == "incremental"
    assert_equals_full_rebuild(task)
