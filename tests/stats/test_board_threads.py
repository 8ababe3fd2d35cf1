"""The board's thread pool (issue 24, fifth pass): with ``LEADERBOARD_BLAS_THREADS=2`` the blocks of the
max-t search (its crossing, its plan, its dense pairs), the rank counts, the value quantiles and the
verdicts run on two threads (``stats._threads.in_blocks``), and the board is the one thread's to the bit,
on every family, with blocks small enough that every pass has many of them; so are the max-t state the
next board starts from and the incremental board."""

from __future__ import annotations

import numpy as np
import pytest

import stats.board as board_module
import stats.compare_ranks as cr
import stats.intervals as intervals_module
from stats._threads import board_threads, in_blocks
from stats.board import build_board
from stats.board_update import BoardCache
from tests.benchmarks import families
from tests.stats.board_helpers import family_options as _options


def _small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many blocks per pass at K = 80, B = 400, and the pruned search (not the dense maxima)."""
    monkeypatch.setattr(cr, "_DENSE_MAX_PAIRS", 0)
    monkeypatch.setattr(cr, "_DENSE_PER_ENTRY", 0)
    monkeypatch.setattr(cr, "_ROW_BLOCK", 16)
    monkeypatch.setattr(cr, "_CANDIDATE_CHUNK", 64)
    monkeypatch.setattr(cr, "_PREPARE_ROWS", 8)
    monkeypatch.setattr(cr, "_SPECIAL_CHUNK", 400)
    monkeypatch.setattr(cr, "_SPECIAL_SPAN", 3)
    monkeypatch.setattr(cr, "_RANK_CHUNK_ELEMENTS", 800)
    monkeypatch.setattr(cr, "_GRAM_BLOCK", 80 * 37)
    monkeypatch.setattr(cr, "_ROUND_PIECE", 80 * 5)
    monkeypatch.setattr(intervals_module, "_QUANTILE_SPAN", 64)
    monkeypatch.setattr(board_module, "_VERDICT_ROWS", 8)


def test_in_blocks_keeps_the_order_and_raises_the_first_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", "2")
    assert board_threads() == 2
    assert in_blocks(lambda i: i * i, range(50)) == [i * i for i in range(50)]

    def fail(i: int) -> int:
        if i in (7, 30):
            raise ValueError(f"block {i}")
        return i

    with pytest.raises(ValueError, match="block 7"):
        in_blocks(fail, range(50))
    monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", "1")
    assert in_blocks(lambda i: -i, [3, 1, 2]) == [-3, -1, -2]


@pytest.mark.parametrize(
    ("family", "k"), [(family, 80) for family in families.FAMILIES] + [("mix", 600), ("nested", 600)]
)
@pytest.mark.parametrize("reference_when", [0.0, 1e9])
def test_two_threads_give_the_one_threads_board(
    family: str, k: int, reference_when: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """K = 600: the passes by blocks of 256 rows (standard errors, separations, rank table) have three."""
    theta, point = families.replicates(families.correctness(family, 300, k + 1, seed=4), 400, seed=4)
    names = [f"e{i:03d}" for i in range(k + 1)]
    if k <= 100:
        _small_blocks(monkeypatch)
    else:  # the pruned search with its own blocks (the smallest ones take minutes at this size)
        monkeypatch.setattr(cr, "_DENSE_MAX_PAIRS", 0)
        monkeypatch.setattr(cr, "_ROW_BLOCK", 128)
    monkeypatch.setattr(cr, "_REFERENCE_WHEN", reference_when)  # 0: the referenced parts are tried
    monkeypatch.setattr(cr, "_THIRD_WHEN", reference_when)  # and so is the third plan (1e9: neither)
    boards = {}
    states = {}
    for threads in ("1", "2"):
        monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", threads)
        board = build_board(names=names[:k], values=point[:k], replicates=theta[:, :k], **_options())
        cache = BoardCache()
        cache.build(names=names[:k], values=point[:k], replicates=theta[:, :k], **_options())
        extended = cache.build(names=names, values=point, replicates=theta, **_options())
        assert cache.last == "incremental"
        _, state = cr._simultaneous(
            theta[:, :k], point[:k], higher_is_better=True, confidence=0.95, stepdown=True, keep=True
        )
        counts, ranks = cr._rank_counts(theta, higher_is_better=True, keep=True)
        boards[threads] = (board, extended, counts, ranks)
        states[threads] = state
    (one, one_ext, one_counts, one_ranks), (two, two_ext, two_counts, two_ranks) = boards["1"], boards["2"]
    assert two.as_dict() == one.as_dict()
    assert two_ext.as_dict() == one_ext.as_dict()
    for a, b in ((one, two), (one_ext, two_ext)):
        assert a.max_t_critical_value == b.max_t_critical_value
        assert np.array_equal(a.pair_standard_errors, b.pair_standard_errors)
        assert np.array_equal(a.rank_probabilities, b.rank_probabilities)
        assert np.array_equal(a.better, b.better)
    assert one_ranks is not None and two_ranks is not None
    assert np.array_equal(one_counts, two_counts) and np.array_equal(one_ranks, two_ranks)
    s1, s2 = states["1"], states["2"]
    assert s1 is not None and s2 is not None and s1.level == s2.level
    for name in ("pair_j", "pair_k", "rows", "z"):  # the same list in the same order
        assert np.array_equal(getattr(s1, name), getattr(s2, name))


@pytest.mark.parametrize("family", ["nested", "mix"])
def test_two_threads_past_the_exceedance_limit_fall_back_as_one_does(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search that finds more exceedances than it may hold stops in either thread count and the critical
    value comes from the dense maxima, the same bits."""
    theta, point = families.replicates(families.correctness(family, 300, 70, seed=5), 400, seed=5)
    _small_blocks(monkeypatch)
    want = cr.simultaneous_ranks(theta, point, higher_is_better=True)
    monkeypatch.setattr(cr, "_MAX_EXCEEDANCES", 10)
    got = {}
    for threads in ("1", "2"):
        monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", threads)
        got[threads] = cr.simultaneous_ranks(theta, point, higher_is_better=True)
    for result in got.values():
        assert result.critical_value == want.critical_value
        assert np.array_equal(result.better, want.better)
