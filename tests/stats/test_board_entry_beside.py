"""A new entry's rank table beside its max-t sets and written in the board's order (issue 24, seventh pass):
the rank distribution of the update path counted on a thread of its own while the max-t sets are
computed (two threads), the counts' update by groups of the entries the new one passes in some resamples
(``_MIXED_GROUP``) on the pool, and the rank probabilities divided straight into the board's row order.
Every board equals the full rebuild, with 1 and 2 threads; a failing build leaves no thread behind."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import stats.board_update as bu
from stats.board import build_board
from stats.board_update import BoardCache, _add_rank_column, _probabilities
from stats.compare_ranks import _rank_counts
from tests.stats.board_helpers import noisy_board as _board
from tests.stats.board_helpers import rank_column_case
from tests.stats.board_helpers import same_board as _same

OPTIONS: dict[str, Any] = {
    "metric_name": "m",
    "seed": 0,
    "interval": "percentile",
    "test": "bootstrap",
    "n_items": 500,
}


def _chain(seed: int, higher: bool, ties: bool, k: int = 24, b: int = 200) -> list[dict[str, Any]]:
    """The arguments of boards of 4..k entries, each adding one entry anywhere (top, bottom, middle)."""
    theta, point = _board(seed, k, b, ties=ties)
    names = [f"n{j:03d}" for j in range(k)]
    order = np.random.default_rng(seed).permutation(k)
    chain = []
    for m in range(4, k + 1):
        cols = np.sort(order[:m])
        chain.append(
            {
                "names": [names[j] for j in cols],
                "values": point[cols],
                "replicates": np.ascontiguousarray(theta[:, cols]),
                "higher_is_better": higher,
                **OPTIONS,
            }
        )
    return chain


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("group", [1, 2, 64])
@pytest.mark.parametrize(("seed", "higher", "ties"), [(0, True, False), (3, False, True)])
def test_a_chain_with_the_ranks_beside_equals_the_full_rebuilds(
    monkeypatch: pytest.MonkeyPatch, threads: str, group: int, seed: int, higher: bool, ties: bool
) -> None:
    """Each board of a chain is the full rebuild's, whatever the groups of the counts' update; with two
    threads the rank distribution ran beside the max-t sets on every update, with one it did not. The
    boards returned earlier are kept intact by the later updates (nothing of theirs is written again)."""
    monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", threads)
    monkeypatch.setattr(bu, "_MIXED_GROUP", group)
    monkeypatch.setattr(bu, "_POOL_ROWS", 5)
    monkeypatch.setattr(bu, "_COUNT_CHUNK", 300)  # several blocks of resamples per group
    started: list[str] = []
    counts = bu._Parts._rank_distribution

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        started.append(threading.current_thread().name)
        return counts(self, *args, **kwargs)

    monkeypatch.setattr(bu._Parts, "_rank_distribution", counted)
    chain = _chain(seed, higher, ties)
    cache = BoardCache()
    kept = []
    for i, args in enumerate(chain):
        got = cache.build(**args)
        assert cache.last == ("full" if i == 0 else "incremental")
        _same(got, build_board(**args))
        kept.append(got)
    beside = ["board-ranks"] * (len(chain) - 1)  # the full build's on the caller's thread
    assert started[1:] == (beside if threads == "2" else [threading.current_thread().name] * len(beside))
    for args, got in zip(chain, kept, strict=True):  # the earlier boards, after every later update
        _same(got, build_board(**args))


@pytest.mark.parametrize("group", [1, 3, 64])
@pytest.mark.parametrize("where", [0, 11, 30])
def test_the_counts_update_by_groups_equals_a_full_count(
    monkeypatch: pytest.MonkeyPatch, group: int, where: int
) -> None:
    """The counts of the new ranks (many entries passed in some resamples but not all, shifted rows,
    ties) are a full count's, for any group of the mixed entries and either direction."""
    monkeypatch.setattr(bu, "_MIXED_GROUP", group)
    monkeypatch.setattr(bu, "_COUNT_CHUNK", 500)
    k, b = 30, 300
    for higher in (True, False):
        x, old, prev_counts, prev_ranks = rank_column_case(where + 100 * higher, k, b, where, higher=higher)
        counts, ranks, redo, shifted = _add_rank_column(
            x, prev_ranks, prev_counts.astype(np.int16), old, where, higher_is_better=higher
        )
        assert redo[old].sum() > 5 and shifted.sum() + redo.sum() > 10
        want_counts, want_ranks = _rank_counts(x, higher_is_better=higher, keep=True)
        assert np.array_equal(counts, want_counts)
        assert np.array_equal(ranks, want_ranks)


def test_the_probabilities_in_the_boards_order() -> None:
    """Rows gathered into an order and divided: the division of the whole table, then permuted."""
    rng = np.random.default_rng(5)
    counts = rng.integers(0, 700, size=(13, 13)).astype(np.int16)
    order = rng.permutation(13)
    assert np.array_equal(_probabilities(counts, 700, order), (counts / 700)[order])
    assert np.array_equal(_probabilities(counts, 700), counts / 700)


@pytest.mark.parametrize("failing", ["_simultaneous", "_add_rank_column"])
def test_a_failing_update_leaves_no_thread_and_no_state(
    monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    """A build that fails in the max-t sets (after the ranks' thread started) or in the ranks' thread
    raises, waits for the thread, and leaves no state: the next build is the full rebuild's board."""
    monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", "2")
    chain = _chain(1, True, False, k=8)
    cache = BoardCache()
    cache.build(**chain[0])
    original = getattr(bu, failing)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("broken on purpose")

    monkeypatch.setattr(bu, failing, broken)
    threads: list[threading.Thread] = []
    ahead = bu._ahead

    def kept(fn: Any, name: str) -> Any:
        a = ahead(fn, name)
        threads.append(a._thread)
        return a

    monkeypatch.setattr(bu, "_ahead", kept)
    with pytest.raises(RuntimeError, match="broken on purpose"):
        cache.build(**chain[1])
    assert threads and not any(thread.is_alive() for thread in threads)
    monkeypatch.setattr(bu, failing, original)
    got = cache.build(**chain[2])
    assert cache.last == "full"
    _same(got, build_board(**chain[2]))


@pytest.mark.parametrize("threads", ["1", "2"])
def test_the_tables_reuse_the_buffers_of_dropped_boards_only(
    monkeypatch: pytest.MonkeyPatch, threads: str
) -> None:
    """The standard errors of an update are written into the buffer of the previous board's rank
    probabilities once that board is dropped (stale values in it are all overwritten: each board is the
    full rebuild's), never into that of a board its caller keeps: the kept boards are unchanged after
    every later update. The reuse occurs: fewer fresh tables than tables."""
    import gc

    monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", threads)
    fresh: list[int] = []
    tables: list[int] = []
    with_room, table = bu._with_room, bu._table

    def counted_fresh(k1: int) -> Any:
        fresh.append(k1)
        return with_room(k1)

    def counted(k1: int, spares: list[Any]) -> Any:
        tables.append(k1)
        return table(k1, spares)

    monkeypatch.setattr(bu, "_with_room", counted_fresh)
    monkeypatch.setattr(bu, "_table", counted)
    chain = _chain(2, True, True, k=22)
    cache = BoardCache()
    kept: list[tuple[int, Any]] = []
    for i, args in enumerate(chain):
        got = cache.build(**args)
        _same(got, build_board(**args))
        if i % 4 == 2:
            kept.append((i, got))  # the caller keeps this one
        del got
        gc.collect()
    # the full build's rank probabilities, then each update's (the previous standard errors are freed,
    # not kept for them: the update's peak); an update's standard errors take the previous board's rank
    # probabilities' buffer, unless that board is kept (then a fresh table)
    after_kept = sum(1 for i, _ in kept if i + 1 < len(chain))
    assert len(tables) == 2 * len(chain) - 1
    assert len(fresh) == len(chain) + after_kept
    for i, got in kept:
        _same(got, build_board(**chain[i]))


def test_a_buffer_is_taken_only_when_nothing_else_references_it() -> None:
    """``_table``: a view alive (a board's table, or a slice a caller took of it) keeps its buffer out of
    reach; dropped, the buffer is reused; too small, it is not."""
    table = bu._with_room(10)
    base = bu._spare(table)
    assert base is not None and base.size >= 11 * 11
    spares = [base]
    del base
    assert bu._spare(bu._table(11, spares)) is not bu._spare(table)  # the table is alive: a fresh one
    part = table[2:4]
    spares = [bu._spare(table)]
    del table
    assert bu._spare(bu._table(11, spares)) is not part.base  # a slice of it is alive: a fresh one
    spares = [part.base]
    held = id(part.base)
    del part
    got = bu._table(11, spares)
    assert id(got.base) == held and got.shape == (11, 11) and not spares  # reused
    assert bu._spare(bu._table(40, [bu._spare(bu._with_room(10))])) is not None  # too small: a fresh one
    assert bu._spare(np.empty((5, 5))) is None  # a full rebuild's table: no room, never a spare


def test_the_decisions_table_permuted_in_place() -> None:
    """The board's ``better`` is the decisions' table permuted in place (no copy): the fancy index's values."""
    from stats.board import _permute_in_place

    rng = np.random.default_rng(8)
    table = rng.random((300, 300)) < 0.3
    order = rng.permutation(300)
    want = table[np.ix_(order, order)]
    got = _permute_in_place(table, order, columns=True)
    assert got is table and got.dtype == bool and np.array_equal(got, want)


@pytest.mark.parametrize("threads", ["1", "2"])
def test_the_previous_replicates_compared_by_spans(monkeypatch: pytest.MonkeyPatch, threads: str) -> None:
    """``_same_rows`` (the previous replicates against the kept copy, by spans of row blocks on the pool):
    one differing element anywhere, in the first, a middle or the last span, makes them differ."""
    monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", threads)
    rng = np.random.default_rng(4)
    a = rng.random((1500, 2000))  # blocks of 32 rows, spans of 512
    b = a.copy()
    assert bu._same_rows(a, b)
    for row in (0, 700, 1499):
        c = b.copy()
        c[row, 1234] = np.nextafter(c[row, 1234], 2.0)
        assert not bu._same_rows(a, c)
    assert not bu._same_rows(a, b[:-1])
