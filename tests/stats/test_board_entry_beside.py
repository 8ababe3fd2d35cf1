"""A new entry's rank table beside its max-t sets and written in the board's order (issue 24, seventh pass):
the rank distribution of the update path counted on a thread of its own while the max-t sets are
computed (two threads), the counts' update by groups of the entries the new one passes in some resamples
(``_MIXED_GROUP``) on the pool, and the rank probabilities divided straight into the board's row order.
Every board equals the full rebuild, with 1 and 2 threads; a failing build leaves no thread behind."""

from __future__ import annotations

import itertools
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


def _appended_chain(seed: int, k: int, b: int = 200) -> list[dict[str, Any]]:
    """The arguments of boards of 4..k entries, each the previous entries in their order plus one at the
    end (the service's case: entries in the order they came), in another order than the board's rows."""
    theta, point = _board(seed, k, b, ties=False)
    names = [f"n{j:03d}" for j in range(k)]
    order = np.random.default_rng(seed).permutation(k)
    return [
        {
            "names": [names[j] for j in order[:m]],
            "values": point[order[:m]],
            "replicates": np.ascontiguousarray(theta[:, order[:m]]),
            "higher_is_better": True,
            **OPTIONS,
        }
        for m in range(4, k + 1)
    ]


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


@pytest.mark.parametrize("group", [1, 3, 64])
def test_appended_entries_update_the_ranks_and_counts_in_place(
    monkeypatch: pytest.MonkeyPatch, group: int
) -> None:
    """Issue 24, ninth pass: entries appended one after another update the ranks and the counts in the
    previous ones' buffers (the first update takes buffers with room, the next ones write into them until
    the room is used up, then fresh buffers again); the moved elements come from the new entry's bits, not
    from the overwritten ranks. Every step's counts and ranks are a full count's, in either direction, for
    any group of the mixed entries (groups that start at any bit of a byte), on coarse tied values; an
    entry inserted elsewhere than at the end takes fresh buffers and is right too."""
    monkeypatch.setattr(bu, "_MIXED_GROUP", group)
    monkeypatch.setattr(bu, "_COUNT_CHUNK", 700)
    k, b, appended = 30, 300, 20
    for higher in (True, False):
        rng = np.random.default_rng(7 + higher)
        x = np.round(rng.normal(np.linspace(0, 1, k + appended + 1), 0.4, size=(b, k + appended + 1)), 1)
        x[:, 3] = x[:, 2]  # two equal entries: ties in every resample
        x[:, 0] = -10.0 if higher else 10.0  # the last in every resample: a row shifted by every new entry
        counts, ranks = _rank_counts(np.ascontiguousarray(x[:, :k]), higher_is_better=higher, keep=True)
        assert ranks is not None
        counts = counts.astype(np.int16)
        bases, mixed, shifted_rows = [], 0, 0
        for m in range(k, k + appended):
            theta = np.ascontiguousarray(x[:, : m + 1])
            old = np.arange(m, dtype=np.intp)
            counts, ranks, redo, shifted = _add_rank_column(
                theta, ranks, counts, old, m, higher_is_better=higher
            )
            want_counts, want_ranks = _rank_counts(theta, higher_is_better=higher, keep=True)
            assert np.array_equal(counts, want_counts) and np.array_equal(ranks, want_ranks)
            assert counts.shape == (m + 1, m + 1) and ranks.shape == (b, m + 1)
            bases.append((ranks.base, counts.base))
            mixed, shifted_rows = mixed + int(redo[old].sum()), shifted_rows + int(shifted.sum())
        assert mixed > 50 and shifted_rows > 5  # the moved elements' counts and the shifted rows both ran
        # the first update's buffers (room for 16 more entries) hold the next 16 updates, then new ones
        assert all(r is bases[0][0] and c is bases[0][1] for r, c in bases[:17])
        assert bases[17][0] is not bases[0][0] and bases[17][1] is not bases[0][1]
        assert all(r is bases[17][0] for r, _ in bases[17:])
        # an entry inserted in the middle of a board whose tables have room: fresh buffers, a full count's
        where = 5
        theta = np.ascontiguousarray(np.insert(x[:, : k + appended], where, x[:, k + appended], axis=1))
        old = np.array([i for i in range(k + appended + 1) if i != where], dtype=np.intp)
        got_counts, got_ranks, _, _ = _add_rank_column(
            theta, ranks, counts, old, where, higher_is_better=higher
        )
        want_counts, want_ranks = _rank_counts(theta, higher_is_better=higher, keep=True)
        assert np.array_equal(got_counts, want_counts) and np.array_equal(got_ranks, want_ranks)
        assert got_ranks.base is not ranks.base and got_counts.base is not counts.base


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


class _Allocations:
    """Per update (``at``: the board being built), which ones take a fresh table with room
    (``_with_room``: ``fresh``), gather their standard errors (``_square``: ``gathered``) or take fresh
    buffers for the ranks and their counts (``_with_room_2d``: ``ranks``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.at = 0
        self.fresh: list[int] = []
        self.gathered: list[int] = []
        self.ranks: list[int] = []
        with_room, square, with_room_2d = bu._with_room, bu._square, bu._with_room_2d

        def counted_fresh(k1: int) -> Any:
            self.fresh.append(self.at)
            return with_room(k1)

        def counted_square(flat: Any) -> Any:
            self.gathered.append(self.at)  # the update's standard errors do not grow in place: gathered
            return square(flat)

        def counted_2d(rows: int, columns: int, dtype: Any, *, square: bool) -> Any:
            self.ranks.append(self.at)
            return with_room_2d(rows, columns, dtype, square=square)

        monkeypatch.setattr(bu, "_with_room", counted_fresh)
        monkeypatch.setattr(bu, "_square", counted_square)
        monkeypatch.setattr(bu, "_with_room_2d", counted_2d)


def _carved_where(boards: int, gathered: list[int], kept: set[int]) -> list[bool]:
    """Per update (1..boards - 1), whether its step-down's tables are carved from a spare buffer: the
    previous rank probabilities' when its standard errors grow in place (free unless the previous board is
    kept), the previous standard errors' when they are gathered (free unless a board kept since the board
    that took that buffer holds a part of it: the full build's, laid out with room, or a gathering
    update's)."""
    want: list[bool] = []
    since = 0  # the board that took the buffer the previous standard errors are in
    for i in range(1, boards):
        if i in gathered:
            want.append(not kept.intersection(range(since, i)))
            since = i
        else:
            want.append(i - 1 not in kept)
    return want


@pytest.mark.parametrize("threads", ["1", "2"])
def test_the_tables_reuse_the_buffers_of_dropped_boards_only(
    monkeypatch: pytest.MonkeyPatch, threads: str
) -> None:
    """The rank probabilities of an update (and before them the step-down's boolean tables) are written
    into the buffer of the previous board's rank probabilities once that board is dropped (stale values
    in them are all overwritten: each board is the full rebuild's), never into that of a board its caller
    keeps; the standard errors of an appended entry grow in their own buffer (only the new row and column
    written, outside every earlier board's table: tenth pass) until its room is used up, then they are
    gathered into the previous rank probabilities' buffer (or a fresh one) and the previous standard
    errors' buffer takes the place of the rank probabilities'. The kept boards are unchanged after every
    later update. The reuse occurs: no fresh table in an update that follows a dropped board and grows its
    standard errors, and most updates grow them."""
    monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", threads)
    counted = _Allocations(monkeypatch)
    fresh, gathered = counted.fresh, counted.gathered
    carved: list[bool] = []
    carve = bu._carved_tables

    def counted_carve(spares: list[Any], k1: int) -> Any:
        got = carve(spares, k1)
        carved.append(got is not None)
        return got

    monkeypatch.setattr(bu, "_carved_tables", counted_carve)
    chain = _appended_chain(2, k=30, b=120)
    cache = BoardCache()
    kept: list[tuple[int, Any]] = []
    for i, args in enumerate(chain):
        counted.at = i
        got = cache.build(**args)
        _same(got, build_board(**args))
        if i % 4 == 2:
            kept.append((i, got))  # the caller keeps this one
        # dropped by reference counting alone, as a caller drops it (no gc.collect: in the whole suite's
        # process each took about half a second, 18 s per run of this test)
        del got
    kept_at = {i for i, _ in kept}
    # the first update grows the full build's table in place (laid out with room: eleventh pass), then
    # one in about every 8 gathers (the room of a buffer at this size), never two in a row: 26 updates
    assert gathered and gathered[0] > 1 and 2 <= len(gathered) <= 5
    assert all(later - earlier > 1 for earlier, later in itertools.pairwise(gathered))
    for i in range(1, len(chain)):
        if i not in gathered and i - 1 not in kept_at:
            assert i not in fresh, i  # grown in place after a dropped board: no fresh table at all
        else:
            assert fresh.count(i) <= 2
    # the step-down's boolean tables in the previous rank probabilities' buffer: not after a kept board;
    # in an update that gathers its standard errors, in the previous standard errors' buffer: not when a
    # board kept since that buffer's first board (the full build's, or the update that gathered into it)
    # holds a part of it
    want = _carved_where(len(chain), gathered, kept_at)
    assert carved == want and sum(want) > len(want) // 2
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


def test_a_caller_that_drops_its_boards_gathers_once_per_room(monkeypatch: pytest.MonkeyPatch) -> None:
    """The service's case (every board dropped before the next entry): the first update grows the full
    build's table in place (eleventh pass), and each time the room is used up one update gathers the table
    into a fresh buffer with room and takes one fresh table for the rank probabilities; no other update
    allocates a table (before: the first update gathered, then two updates in a row per room). The ranks
    and their counts likewise: the first update writes them in the full build's buffers."""
    counted = _Allocations(monkeypatch)
    fresh, gathered, ranks_tables = counted.fresh, counted.gathered, counted.ranks
    k = 30
    chain = _appended_chain(2, k=k, b=120)
    cache = BoardCache()
    for i, args in enumerate(chain):
        counted.at = i
        got = cache.build(**args)
        if i in (0, 1, 9, 10, len(chain) - 1):
            _same(got, build_board(**args))
        del got
    want: list[int] = []
    side = bu._roomy_side(k)  # the full build's table and rank probabilities
    for i in range(1, len(chain)):
        if k + i > side:  # room used up: gathered into a buffer with room
            want.append(i)
            side = bu._roomy_side(k + i)
    assert gathered == want and len(want) >= 2
    assert fresh == [0] + [i for i in want for _ in range(2)]
    # the ranks and their counts: with room from the full build on (eleventh pass), fresh only when it is
    # used up (the ranks' buffer and the counts', together)
    want_2d = [0, 0]
    columns = k + bu._room_2d(k)
    for i in range(1, len(chain)):
        if k + i > columns:
            want_2d += [i, i]
            columns = k + i + bu._room_2d(k + i)
    assert ranks_tables == want_2d and len(want_2d) >= 4


@pytest.mark.parametrize(("k", "side"), [(1, 9), (5, 13), (300, 308), (300, 900)])
def test_a_full_builds_table_is_laid_out_with_room_in_its_own_memory(k: int, side: int) -> None:
    """``_square_in_place``: a C-contiguous table in the first k^2 elements of a flat buffer becomes the
    first rows and columns of the (side, side) square table in the same memory, every value unchanged
    (rows that overlap their own source, the first ones at side = k + 8, included); the incremental
    board then grows it in place (``_se_buffer``)."""
    rng = np.random.default_rng(k)
    flat = np.zeros(side * side)
    table = flat[: k * k].reshape(k, k)
    table[:] = rng.random((k, k))
    want = table.copy()
    square = bu._square_in_place(table)
    assert square.shape == (side, side) and np.shares_memory(square, flat)
    assert square.__array_interface__["data"][0] == flat.__array_interface__["data"][0]
    assert np.array_equal(square[:k, :k], want)


def test_the_rank_probabilities_permuted_in_place() -> None:
    """The board's rank probabilities are the distribution's rows permuted in place (no copy): the fancy
    index's values."""
    from stats.board import _permute_in_place

    rng = np.random.default_rng(8)
    table = rng.random((300, 300))
    order = rng.permutation(300)
    want = table[order]
    got = _permute_in_place(table, order)
    assert got is table and np.array_equal(got, want)


def test_the_boards_tables_stay_in_the_inputs_order() -> None:
    """The board keeps its standard errors' and decisions' tables in the input's order (not permuted: issue
    24, tenth pass) and gives them in the rows' order on first read, read-only, the same values; a board
    whose rows are in the input's order gives its table itself."""
    from stats.board import build_board

    rng = np.random.default_rng(9)
    n, k = 200, 12
    correct = rng.random((n, k)) < np.linspace(0.5, 0.9, k)
    theta = np.stack([correct[rng.integers(0, n, n)].mean(axis=0) for _ in range(300)])
    names = [f"m{j:02d}" for j in range(k)]
    options = {"higher_is_better": True, "metric_name": "accuracy", "seed": 0}
    board = build_board(names=names, values=correct.mean(axis=0), replicates=theta, **options)
    order = board.input_order
    assert [names[i] for i in order] == [row.name for row in board.rows]
    assert not np.array_equal(order, np.arange(k))  # the test's point: rows in another order
    for by_input, in_rows in (
        (board.standard_errors_by_input, board.pair_standard_errors),
        (board.better_by_input, board.better),
    ):
        assert np.array_equal(in_rows, by_input[np.ix_(order, order)])
        assert not in_rows.flags.writeable and not by_input.flags.writeable
        assert board.pair_standard_errors is board.pair_standard_errors  # permuted once
    assert board.better[0].any()  # the leader is ahead of someone: the rows' order, not the input's
    ranked = build_board(
        names=[names[i] for i in order],
        values=correct.mean(axis=0)[order],
        replicates=theta[:, order],
        **options,
    )
    assert np.array_equal(ranked.input_order, np.arange(k))
    assert np.shares_memory(ranked.pair_standard_errors, ranked.standard_errors_by_input)
    assert np.array_equal(ranked.pair_standard_errors, board.pair_standard_errors)


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


def test_an_export_is_not_changed_by_the_next_builds() -> None:
    """The ranks are updated in place for appended entries, so an export hands out a copy of them: a state
    exported and then restored after the cache has built more boards is still the board it was."""
    theta, point = _board(1, 12, 200, ties=False)
    names = [f"n{j:03d}" for j in range(12)]

    def args(m: int) -> dict[str, Any]:
        return {
            "names": names[:m],
            "values": point[:m],
            "replicates": np.ascontiguousarray(theta[:, :m]),
            "higher_is_better": True,
            **OPTIONS,
        }

    cache = BoardCache()
    for m in range(8, 11):  # a full build, then two appended entries: the ranks in a buffer with room
        cache.build(**args(m))
    exported = cache.export()
    assert exported is not None
    ranks = np.array(exported["ranks"])
    cache.build(**args(11))
    assert cache.last == "incremental"
    assert np.array_equal(exported["ranks"], ranks)
    restored = BoardCache.restore(exported)
    _same(restored.build(**args(11)), build_board(**args(11)))
    assert restored.last == "incremental"
