"""The K = 10,000 board's threads, sixth pass (issue 24): the step-down's K x K boolean passes, the K x K
gathers of the max-t plans and of the board, the per-column statistics on the board's pool; the rank
counts ranked ahead while they are added (``stats._threads.in_order``); the value intervals beside the
max-t search (``stats._threads.beside``). Every table is the reference computation's, and the board the
one thread's, to the bit."""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np
import pytest

import stats.board as board_module
import stats.compare_ranks as cr
from stats._threads import beside, in_order
from stats.board import build_board
from tests.benchmarks import families
from tests.stats.board_helpers import family_options as _options


@pytest.mark.parametrize("threads", ["1", "2"])
def test_in_order_yields_in_order_and_raises_the_first_error(
    monkeypatch: pytest.MonkeyPatch, threads: str
) -> None:
    monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", threads)
    assert list(in_order(lambda i: i * i, range(50))) == [i * i for i in range(50)]
    assert list(in_order(lambda i: i, [])) == []
    seen = []

    def fail(i: int) -> int:
        if i in (7, 30):
            raise ValueError(f"block {i}")
        return i

    with pytest.raises(ValueError, match="block 7"):
        for value in in_order(fail, range(50)):
            seen.append(value)
    assert seen == list(range(7))


@pytest.mark.parametrize("threads", ["1", "2"])
def test_beside_returns_raises_and_keeps_the_callers_context(
    monkeypatch: pytest.MonkeyPatch, threads: str
) -> None:
    monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", threads)
    assert beside(lambda: 41 + 1).result() == 42

    def fail() -> None:
        raise ValueError("beside")

    if threads == "1":  # at once, in the caller's thread, as the stage ran before
        with pytest.raises(ValueError, match="beside"):
            beside(fail)
    else:
        handle = beside(fail)
        with pytest.raises(ValueError, match="beside"):
            handle.result()
    # numpy's error state is a context variable: the thread keeps the caller's
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        beside(lambda: np.float64(1.0) / np.float64(0.0)).result()


def test_beside_runs_nicer_than_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", "2")
    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    theirs = beside(lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id())).result()
    assert theirs == min(19, mine + 10)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == mine


@pytest.mark.parametrize("threads", ["1", "2"])
def test_the_blocked_tables_are_the_reference_ones(monkeypatch: pytest.MonkeyPatch, threads: str) -> None:
    """K = 600 (three blocks of 256 rows): zero standard errors between equal and different values, ties."""
    monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", threads)
    monkeypatch.setattr(cr, "_GATHER_SPAN", 64)
    rng = np.random.default_rng(3)
    k = 600
    p = np.round(rng.normal(size=k), 1)
    se = np.abs(rng.normal(size=(k, k)))
    se = np.triu(se, 1) + np.triu(se, 1).T
    zeros = rng.random((k, k)) < 0.05
    zeros |= zeros.T
    se[zeros] = 0.0
    upper_pairs, zero, n_upper = cr._pair_tables(p, se)
    want_upper = np.triu(se > 0, 1)
    want_zero = (se == 0) & (p[:, None] != p[None, :])
    np.fill_diagonal(want_zero, False)
    assert np.array_equal(upper_pairs, want_upper) and np.array_equal(zero, want_zero)
    assert n_upper == int(want_upper.sum())

    upper = np.triu(rng.random((k, k)) < 0.3, 1)
    mirrored = upper.copy()
    cr._mirror_upper(mirrored)
    assert np.array_equal(mirrored, upper | upper.T)
    target = rng.random((k, k)) < 0.1
    target |= target.T
    want = target | upper | upper.T
    cr._or_symmetric(target, upper)
    assert np.array_equal(target, want)

    for higher in (True, False):
        separated = want.copy()
        better, lower, upper_bound = cr._oriented(separated, p, higher)
        want_better = want & (np.greater.outer(p, p) if higher else np.less.outer(p, p))
        assert better is separated and np.array_equal(better, want_better)
        assert np.array_equal(lower, 1 + want_better.sum(axis=0))
        assert np.array_equal(upper_bound, k - want_better.sum(axis=1))
        assert lower.dtype == np.int64 and upper_bound.dtype == np.int64

    index = rng.permutation(k)[:450]
    assert np.array_equal(cr._gathered(se, index), se[np.ix_(index, index)])
    assert np.array_equal(cr._gathered(target, index), target[np.ix_(index, index)])


def test_the_rank_counts_ranked_ahead_are_the_one_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cr, "_RANK_CHUNK_ELEMENTS", 700)
    theta, _ = families.replicates(families.correctness("ties", 200, 90, seed=2), 300, seed=2)
    out = {}
    for threads in ("1", "2"):
        monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", threads)
        out[threads] = cr._rank_counts(theta, higher_is_better=True, keep=True)
    assert np.array_equal(out["1"][0], out["2"][0])
    assert out["1"][1] is not None and out["2"][1] is not None
    assert np.array_equal(out["1"][1], out["2"][1])


@pytest.mark.parametrize("family", families.FAMILIES)
def test_two_threads_with_small_spans_give_the_one_threads_board(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The spans of the new pooled passes smaller than the board (many tasks per pass), the max-t search
    pruned and referenced, against the one thread's board."""
    monkeypatch.setattr(cr, "_DENSE_MAX_PAIRS", 0)
    monkeypatch.setattr(cr, "_DENSE_PER_ENTRY", 0)
    monkeypatch.setattr(cr, "_REFERENCE_WHEN", 0.0)
    monkeypatch.setattr(cr, "_THIRD_WHEN", 0.0)
    monkeypatch.setattr(cr, "_GATHER_SPAN", 32)
    monkeypatch.setattr(cr, "_TRANSPOSE_SPAN", 64)
    monkeypatch.setattr(cr, "_RANK_CHUNK_ELEMENTS", 900)
    monkeypatch.setattr(board_module, "_SD_SPAN", 64)
    k = 300
    theta, point = families.replicates(families.correctness(family, 300, k, seed=5), 400, seed=5)
    names = [f"e{i:03d}" for i in range(k)]
    boards = {}
    for threads in ("1", "2"):
        monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", threads)
        boards[threads] = build_board(names=names, values=point, replicates=theta, **_options())
    one, two = boards["1"], boards["2"]
    assert one.rows == two.rows
    assert one.max_t_critical_value == two.max_t_critical_value
    assert np.array_equal(one.pair_standard_errors, two.pair_standard_errors)
    assert np.array_equal(one.better, two.better)
    assert np.array_equal(one.rank_probabilities, two.rank_probabilities)
    assert np.array_equal(one.leader_difference_sd, two.leader_difference_sd)


@pytest.mark.parametrize("threads", ["1", "2"])
def test_an_error_of_the_value_intervals_comes_first(monkeypatch: pytest.MonkeyPatch, threads: str) -> None:
    """The value intervals run beside the later stages (two threads): their exception is still the one
    raised when a later stage fails too, as when they ran first."""
    monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", threads)

    def intervals(*args: Any) -> Any:
        raise ValueError("value intervals")

    def rank_sets(*args: Any) -> Any:
        raise RuntimeError("rank sets")

    theta, point = families.replicates(families.correctness("spread", 100, 12, seed=1), 200, seed=1)
    names = [f"e{i}" for i in range(12)]
    monkeypatch.setattr(board_module, "_value_intervals", intervals)
    monkeypatch.setattr(board_module, "_rank_sets", rank_sets)
    with pytest.raises(ValueError, match="value intervals"):
        build_board(names=names, values=point, replicates=theta, **_options())
    monkeypatch.undo()
    monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", threads)
    monkeypatch.setattr(board_module, "_rank_sets", rank_sets)
    with pytest.raises(RuntimeError, match="rank sets"):
        build_board(names=names, values=point, replicates=theta, **_options())
