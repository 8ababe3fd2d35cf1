"""The board of a task updated for one new entry, with the numbers of a full rebuild (issue 14).

A :class:`BoardCache` is kept per task (and metric). :meth:`BoardCache.build` takes exactly the arguments of
:func:`stats.board.build_board` and returns the same :class:`~stats.board.Board`. The first call computes
everything and keeps what the costly parts need; a later call whose entries are the previous ones (same
names, values and replicate columns, same options, in the same relative order) plus **one new entry**,
at any position, reuses them:

- **value intervals**: every interval is a function of its own column; the old ones are kept, the new
  one is computed;
- **rank distribution**: the previous ranks of every (resample, entry) are kept (B x K, 16-bit) and the
  rank counts (K x K, 16-bit below 2^15 resamples); the new entry moves an old entry down by one in the
  resamples where it is strictly better, and its own rank is the count of entries strictly better than it
  (ties share the smallest rank, as in the full count). Only the entries it beats in some resamples but
  not all change their counts otherwise than by a shift of one rank, and only those resamples are counted
  (:func:`_add_rank_column`; issue 24: no full recount), so the counts are the same integers (an
  appended entry's ranks and counts are written into the previous ones' buffers, which have room for
  more entries: ninth pass); the rank
  bounds of those rows are the previous ones or one rank lower, told by two prefix sums of the row
  (an old entry's rank in a resample is its previous one or one lower), the new entry's are computed;
- **max-t sets**: the per-resample maxima of the first step come from the previous board's list of
  every (pair, resample) statistic at or above a level ``lambda`` plus the new pairs' statistics at or
  above it (O(B K), dense): no pruned search over the pairs. The step-down then runs exactly as in the
  full rebuild: a quantile at or above ``lambda`` is exact (the count of maxima above any
  ``x >= lambda`` is the true count), and a quantile below it lowers the level and searches again, as
  the full rebuild does;
- **the step-down's separations** (issue 24, sixth pass): a pair is separated at a step when
  ``|t| > c (1 + 1e-9)``; a table of levels (K x K uint8, :class:`_StepDown`) says for every pair which
  of the bounds of this task's boards first separates it. A step at a kept bound (on a board with one
  entry more the critical values are mostly the previous ones, to the bit) reads the table; a bound
  between two kept ones evaluates only the pairs of the level it splits; only the new entry's row and
  column are computed in full. No K x K pass of the statistics and no mirrored OR per step;
- **verdicts** (sixth pass): while the step-down ends at the previous board's lowest bound the old pairs'
  decisions are the previous ones, so each old entry's verdict and deciding entry are kept and changed
  only where the new entry is significantly better than it (:func:`_verdicts_extended`, O(K));
- **standard errors** (issue 24, fifth pass): the previous board's table of the pairs' standard errors is
  kept (the board's own array, made read-only, no second K x K table) with each entry's variance and the
  Gram operand's column means and exponents; the new entry's row and column come from one column of the
  Gram matrix (O(B K), :func:`_gram_column`) with the full computation's operations on each element
  (:func:`_extend_standard_errors`), the rest is the previous table's: for an entry appended after the
  previous ones, in the same buffer (tenth pass, below), else gathered;
- **per-column summaries**: each entry's replicate standard deviation, whether its replicates are all
  equal, and, while the leader stays, its difference to the leader's standard error and bootstrap
  p-value are kept; the blocks of columns whose bits may differ (the new entry's, a block of one column,
  which numpy sums pairwise) are computed again.

What the full rebuild computes in O(B K) otherwise (the differences to a new leader, their tests) is
computed again; so is what is O(K^2) elementwise past the standard errors (the step-down's active pairs
per step, the decisions' table). At K = 10,000, N = B = 10,000 the update
took about 5 s of CPU after the fifth pass (docs/benchmarks.md, "K = 10,000: a new entry (fifth pass)"),
about 4 s after the sixth; at K = 1,000 0.33-0.43 s
against 0.94 s for the full rebuild (before the fifth pass). The test against the
leader is recomputed too: McNemar's is O(N K), but approximate randomization is O(R N K) (1.2 s of CPU at
K = 1,000, R = 10,000), so a board tested by randomization gains less (keeping each entry's count while
the leader stays would need the swap products to round alike for any number of columns, the same
question as the Gram matrix's below).

**Threads** (issue 24, second round): the update's passes over K x K tables (the gathers of the kept
standard errors and step-down levels, the step-down's passes over the levels, the rank probabilities),
the rank column (blocks of resamples), the new pairs' exceedances (column chunks) and the kept
replicates' copy run on the board's pool (:func:`stats._threads.in_blocks`, ``LEADERBOARD_BLAS_THREADS``)
by blocks that write only their own rows, and whatever they return is combined in the blocks' order (or is
an integer count), so the board is the same bits for any thread count
(``tests/stats/test_board_entry_pool.py``). At K = 10,000 the first update after a full build spends
much of its time faulting in fresh K x K tables (0.8 GB each: the probabilities' division took 1.1 s of
one thread's CPU against 0.3 s on the next update); two threads fault them in parallel.

**Seventh pass** (issue 24; ``tests/stats/test_board_entry_beside.py``):

- *Memory reuse.* A fresh 0.8 GB table cost 0.1-1.9 s of the kernel's time on the benchmark's VM (its
  freed memory goes back to the host and comes back faulted in; 0.1 s when reused at once). The rank
  probabilities of a board built by the cache are written into a buffer with room for more entries, and
  the next update writes its standard errors into that buffer when the caller has dropped the board (see
  :class:`BoardCache`). The previous standard errors are freed after their gather, not kept for the next
  rank probabilities: kept through the max-t sets and the rank column they would add 0.8 GB to the peak.
- *Fewer passes.* The rank probabilities are divided straight into the board's row order
  (:meth:`_Parts.rank_probabilities`); the new pairs' exceedances by cache-sized tiles; the counts'
  update by groups of the entries the new one passes in some resamples, on the pool (no serial
  ``numpy.add.at``), each group's span of columns read as slices.
- *Side by side* (two threads): the rank distribution on a thread of its own once the standard errors
  are gathered (:meth:`_Parts._start_ranks`), the gather beside the new Gram column, and the board's three
  K x K tables permuted side by side (``stats.board.build_board``). Each writes its own arrays: the same
  bits.

**Tenth pass** (issue 24): the board keeps its standard errors' and decisions' tables in the input's
order (``stats.board.Board.standard_errors_by_input``; ``pair_standard_errors`` and ``better`` permute
them on first read), and the state keeps that table: an entry appended after the previous ones (the
service's case) writes only its row and column, in the buffer with room the previous table is the first
rows and columns of (:func:`_se_buffer`). No K x K gather at the start of the update and no permute at its
end (at K = 10,000 0.4-0.6 s of a new entry's 2 s were the end's permute alone), and, with no second table
of standard errors held, the rank distribution starts first, beside the deviations. With column digests
the kept buffer of the deviations still holds the previous board's when the next build starts (same
columns, same point values): an appended entry subtracts its own column only (``_State.deviations``).

**Eleventh pass** (issue 24): the cache's full build lays its table of standard errors out with room too
(:func:`stats.compare_ranks._exact_gram` with ``side``, then :func:`_square_in_place`, 0.06 s at
K = 10,000), so the first entry appended after it grows the table in place like the next ones: no gather
into a fresh 0.8 GB table and no fresh tables for the step-down and the rank probabilities (the full
board's rank probabilities' buffer takes them). The table's buffer and the rank probabilities' now have
the same room, so for a caller that drops its boards the room runs out once: that update gathers the
table into a fresh buffer with room and takes a fresh one for the rank probabilities, the next ones grow
again (before, the first update's gather left the two buffers one entry apart in size, and two updates in
a row gathered, each with one fresh table). The full build's ranks and rank counts are kept in buffers with
room as well (``_rank_counts(ranks_out=...)``), so the first update writes them in place too: it holds
nothing beside the previous tables, and its traced peak is the next updates' (docs/benchmarks.md,
section 14).

An update takes the previous state's arrays (the replicates' buffer holds the deviations while the board is
built, then the new replicates; the previous tables are dropped as the new ones replace them): a state is
used once (``_State.consumed``), and a build that fails leaves no state (the next one is a full rebuild).

**Equal bits.** Every step is the full rebuild's, on the same arrays, but one: the Gram matrix of the
pairwise standard errors (O(B K^2) in the full rebuild) is not formed again: its new column is a
matrix-vector product of the new column with the others (:func:`_gram_column`, O(B K)). That is exact on
any BLAS: both products are of the deviations rounded per column to a grid on which every sum of products is
an integer below 2^53 (:func:`stats.compare_ranks._gram_operand`), so every element is computed exactly,
whatever the kernel's order of accumulation, blocking or position of the element. (Until issue 24 the
Gram matrix was of the unrounded deviations and its reuse rested on OpenBLAS rounding an element alike in
any product; that held for the Haswell and Sandybridge kernels but not for SkylakeX, where the reuse was
off and even a check that passed did not guarantee the next board's bits.)
``tests/stats/test_board_update.py`` checks the whole board against a full rebuild on random boards with
ties, both metric directions, the new entry at any position, new leaders and BCa intervals; CI runs it
under two OpenBLAS kernels.

Anything else (an entry removed or changed, two new entries, other options, entries with runs, whose
replicates are resampled per entry) is a full rebuild, which refreshes the cache.

**Between processes** (issue 24): :meth:`BoardCache.export` gives the state as plain values and arrays
(the rank table, the standard errors' lower triangle with the variances, means and exponents, the exceedance
list, the intervals; the replicates, jackknife and options only by their SHA-256 digests; not the rank
counts, recounted from the ranks by the first update after a restore, nor the kept per-column summaries,
computed in full by it: that update is slower; a state exported before the fifth pass holds the Gram
matrix, which that update extends as before) and :meth:`BoardCache.restore` makes a cache of it in
another process, whose next build with the same entries plus one takes the update path; the replicates and
options it is given are checked against the digests, so it gives the full rebuild's board or rebuilds in
full (``tests/stats/test_board_state_shared.py``; the service stores it: ``leaderboard.rankings.board_state``).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import sys
import threading
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from stats._threads import Beside, board_threads, in_blocks
from stats.board import (
    _SD_COLUMNS,
    Board,
    _column_sd,
    _FullParts,
    _gaps,
    _name_ranks,
    _verdict_blocks,
    _verdict_columns,
    _verdicts,
    build_board,
)
from stats.compare_ranks import (
    MaxTState,
    RankDistribution,
    SimultaneousRanks,
    _exact_gram,
    _gathered,
    _gram_bits,
    _gram_blocks,
    _gram_exponents,
    _pair_statistics,
    _rank_counts,
    _rank_dtype,
    _rank_table,
    _rounded,
    _separated_by,
    _simultaneous,
    _standard_errors_from_gram,
)
from stats.intervals import bootstrap_bounds

FloatArray = npt.NDArray[np.float64]

__all__ = ["BoardCache"]

#: Per-entry arguments not compared with the previous board's: the item statistics feed only the tests
#: against the leader, which are recomputed; runs make a full rebuild; the jackknife is compared by column.
_NOT_COMPARED = ("item_statistics", "runs", "jackknife")
#: Elements counted per chunk by the incremental rank counts.
_COUNT_CHUNK = 1 << 22
#: Elements of the new pairs' differences held at once per thread (a tile of rows of a column chunk that
#: stays in the cache, :func:`_add_pairs`).
_PAIR_TILE = 1 << 16
#: Mixed entries (whose counts change otherwise than by a shift, :func:`_add_rank_column`) per group of the
#: counts' update on the board's threads (each group's histogram: group x (K + 1) int64, 5 MB at K = 10,000).
_MIXED_GROUP = 64
#: Elements of the new pairs' statistics computed at once.
_PAIR_CHUNK = 1 << 21
#: Rows of a K x K table per block of the board's pool (``stats._threads.in_blocks``) in the update's
#: elementwise passes and gathers: each block writes its own rows only, so any thread count gives the
#: same bits.
_POOL_ROWS = 256


def _table(k1: int, spares: list[FloatArray]) -> FloatArray:
    """A (k1, k1) float64 table for the update path's rank probabilities (or, seen as a square table with
    room, :func:`_square`, its standard errors when they cannot grow in place): a view of the
    last spare buffer taken from ``spares`` when it is wide enough and nothing else references it, else a
    fresh buffer with room for more entries (:func:`_with_room`). Issue 24, seventh pass: a fresh 0.8 GB
    table took 0.1-1.9 s of the kernel's time at K = 10,000 on a VM whose freed memory goes back to the
    host, a buffer kept mapped takes none.

    "Nothing else": ``sys.getrefcount`` of the buffer is that of an array held by a local variable only
    (measured alike on a probe, so that an interpreter that counts a borrowed argument differently is
    still right), so no board holding a view of the buffer (nor any view a caller took of a board's table:
    every numpy view holds a reference to the buffer it is a view of) is alive, and writing into it
    changes nothing anyone can read. A spare not taken is dropped (its holders keep it)."""
    probe = np.empty(0)
    sole = sys.getrefcount(probe)  # a local variable's array: 2 on CPython 3.11 (the variable, the argument)
    while spares:
        base = spares.pop()
        if base.size >= k1 * k1 and sys.getrefcount(base) <= sole:
            return base[: k1 * k1].reshape(k1, k1)
        del base
    return _with_room(k1)


def _carved_tables(
    spares: list[FloatArray], k1: int
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]] | None:
    """Two (k1, k1) boolean tables in the memory of the last spare buffer of ``spares`` when nothing else
    references that buffer (the rule of :func:`_table`; the buffer stays in ``spares``), else None. For
    the step-down's first tables (:func:`stats.compare_ranks._simultaneous`'s ``tables``): every element is
    written before it is read, and the views are dropped before the buffer is taken again."""
    if not spares:
        return None
    probe = np.empty(0)
    sole = sys.getrefcount(probe)
    base = spares.pop()
    try:
        if base.nbytes < 2 * k1 * k1 or sys.getrefcount(base) > sole:
            return None
        flat = base.view(np.bool_)
        return flat[: k1 * k1].reshape(k1, k1), flat[k1 * k1 : 2 * k1 * k1].reshape(k1, k1)
    finally:
        spares.append(base)


def _roomy_side(k1: int) -> int:
    """The side of a square buffer for a table of ``k1`` entries with room for about 1% more (at least 8):
    the next boards' tables fit in it (K = 10,000: 12 MiB more than the table)."""
    return k1 + max(8, k1 // 128)


def _with_room(k1: int) -> FloatArray:
    """A fresh (k1, k1) float64 table, the first elements of a flat buffer of :func:`_roomy_side`^2."""
    side = _roomy_side(k1)
    return np.empty(side * side)[: k1 * k1].reshape(k1, k1)


def _spare(table: FloatArray | None) -> FloatArray | None:
    """The flat buffer a table of :func:`_with_room` is a view of (None for another table: a full
    rebuild's, which has no room for a larger board)."""
    base = None if table is None else table.base
    if isinstance(base, np.ndarray) and base.ndim == 1 and base.dtype == np.float64 and base.flags.writeable:
        return base
    return None


def _row_blocks(fn: Callable[[int, int], None], n: int, rows: int | None = None) -> None:
    """``fn(r0, r1)`` for the row blocks ``[r0, r1)`` of ``n`` rows (:data:`_POOL_ROWS` unless given),
    on the board's threads (:func:`stats._threads.in_blocks`); ``fn`` writes only its own rows."""
    step = _POOL_ROWS if rows is None else rows
    in_blocks(lambda r0: fn(r0, min(n, r0 + step)), range(0, n, step))


@dataclass
class _State:
    names: tuple[str, ...]
    point: FloatArray
    theta: FloatArray  # (B, K), in the order of ``names``
    options: dict[str, Any]
    bounds: dict[tuple[str, float, bool], tuple[FloatArray, FloatArray]]
    ranks: npt.NDArray[np.integer] | None
    higher_is_better: bool
    maxt: MaxTState | None
    maxt_key: tuple[float, bool] | None
    jackknife: FloatArray | None
    gram: FloatArray | None  # z^T z of the board (stats.compare_ranks._gram_operand: exact elements)
    #: a state read back by :meth:`BoardCache.restore` holds no replicates, jackknife or options: their
    #: digests stand for them (``theta`` and ``jackknife`` are then None until the next build)
    theta_digest: str | None = None
    jackknife_digest: str | None = None
    options_digest: str | None = None
    rows: int | None = None  # the resamples of a restored state
    #: an update took this state's arrays (dropped, or rewritten in place: its replicates' buffer): never
    #: read it again (only a caller that kept the object and put it back could)
    consumed: bool = False
    #: the rank counts (K x K, :func:`_count_dtype`) and the rank table's bounds at ``rank_confidence``,
    #: in the order of ``names``; not exported (K = 10,000: 0.2 GB), recounted from the ranks after a restore
    counts: npt.NDArray[np.integer] | None = None
    rank_low: npt.NDArray[np.int64] | None = None
    rank_high: npt.NDArray[np.int64] | None = None
    rank_confidence: float | None = None
    #: the pairs' standard errors (K x K, exactly symmetric), each entry's variance, the Gram operand's
    #: column means and exponents (:func:`stats.compare_ranks._gram_exponents`): what a new entry's row
    #: and column of the standard errors need (``gram`` is then None; a state exported before them has it)
    #: per entry the replicates' standard deviation (stats.board._column_sd) and whether they are all equal
    column_sd: FloatArray | None = None
    #: the leader (its column) and every entry's standard error and bootstrap p-value against it
    leader: int | None = None
    leader_se: FloatArray | None = None
    leader_p: FloatArray | None = None
    degenerate: npt.NDArray[np.bool_] | None = None
    #: a B x K buffer with room for more entries, which the next board writes its deviations into: no fresh
    #: B x K array per board. Without column digests its first columns are ``theta`` (the kept copy of the
    #: replicates, compared before the deviations overwrite it); with digests it is idle between boards
    theta_buffer: FloatArray | None = None
    #: with column digests, the first columns of ``theta_buffer`` that hold this board's deviations
    #: (``theta - point``, written by its max-t sets): the next appended entry computes only its own
    deviations: int | None = None
    se: FloatArray | None = None
    #: the square buffer (:func:`_square`, row-major, S >= K) whose first rows and columns ``se`` is, where
    #: the next appended entry writes its row and column (None: a table without room)
    se_buffer: FloatArray | None = None
    #: ``se`` is the board's own table (read-only), in the order of ``names`` (``se_order`` None), or, in a
    #: state exported before issue 24's tenth pass, in its rows' order: row i is entry ``se_order[i]`` of
    #: ``names``; an appended entry grows it in its buffer (:func:`_se_buffer`), else it is gathered
    se_order: npt.NDArray[np.intp] | None = None
    var: FloatArray | None = None
    means: FloatArray | None = None
    exponents: npt.NDArray[np.int32] | None = None
    #: the caller's per-column digests (:meth:`BoardCache.column_digest`), when it gave them: they stand for
    #: the replicates and jackknife (``theta`` and ``jackknife`` are then None, ``rows`` holds B)
    column_digests: tuple[str, ...] | None = None
    #: the step-down's table of levels and its bounds (:class:`_StepDown`, K x K uint8, in the order of
    #: ``names``); not exported (recorded afresh by the first update after a restore)
    step_levels: npt.NDArray[np.uint8] | None = None
    step_bounds: list[float] | None = None
    #: the verdicts' blocks (``stats.board._verdict_blocks``: per entry whether some entry is significantly
    #: better and which one decides it, in the order of ``names``) and the step-down's lowest bound they
    #: come from: the old pairs' decisions are the same while a new board's lowest bound is this one
    verdict_worse: npt.NDArray[np.bool_] | None = None
    verdict_compared: npt.NDArray[np.intp] | None = None
    decided_lowest: float | None = None
    #: the buffer of the board's rank probabilities (:func:`_with_room`), which the next update writes its
    #: step-down's boolean tables, then its rank probabilities into when no one else references it by then
    #: (the board was dropped): no fresh 0.8 GB table at K = 10,000 (:func:`_table`); not exported
    spares: list[FloatArray] | None = None


def _same_option(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    try:
        return bool(a == b)
    except Exception:  # incomparable options: not the same
        return False


class _Parts:
    """The costly parts of a board, reusing a previous state when the board has one entry more."""

    def __init__(self, previous: _State | None, theta: FloatArray, old: list[int], new: int) -> None:
        self.previous = previous
        self.old = np.asarray(old, dtype=np.intp)  # the columns of the previous entries, in their order
        self.new = new  # the column of the new entry
        self.theta = theta
        self.bounds: dict[tuple[str, float, bool], tuple[FloatArray, FloatArray]] = {}
        self.ranks: npt.NDArray[np.integer] | None = None
        self.counts: npt.NDArray[np.integer] | None = None
        self.rank_low: npt.NDArray[np.int64] | None = None
        self.rank_high: npt.NDArray[np.int64] | None = None
        self.rank_confidence: float | None = None
        self.maxt: MaxTState | None = None
        self.maxt_key: tuple[float, bool] | None = None
        self.gram: FloatArray | None = None
        self.se: FloatArray | None = None
        #: the square buffer (:func:`_square`) whose first rows and columns ``se`` is (None: a table without
        #: room, the full computation's)
        self.se_buffer: FloatArray | None = None
        #: memory the deviations may take (the state's ``theta_buffer``; with the kept replicates' copy, rewritten
        #: after the board), or the fresh buffer with room they were written into
        self.scratch: FloatArray | None = None
        #: the columns of ``scratch`` that hold this board's deviations (``theta - point``), once written
        self.deviations: int | None = None
        self.sd: FloatArray | None = None
        self.leader: int | None = None
        self.leader_se: FloatArray | None = None
        self.leader_p: FloatArray | None = None
        self.flat: npt.NDArray[np.bool_] | None = None
        self.var: FloatArray | None = None
        self.means: FloatArray | None = None
        self.exponents: npt.NDArray[np.int32] | None = None
        self.step_levels: npt.NDArray[np.uint8] | None = None
        self.step_bounds: list[float] | None = None
        #: this board's max-t result, its step-down's lowest bound (None: not from a whole table of levels)
        #: and whether its table extends the previous board's
        self.sim: SimultaneousRanks | None = None
        self.lowest: float | None = None
        self.extended = False
        self.verdict_blocks: tuple[npt.NDArray[np.bool_], npt.NDArray[np.intp]] | None = None
        #: the rank table of the update path, whose probabilities are left out until the board's order is
        #: known (:meth:`rank_probabilities`), and the resamples they divide by
        self.deferred: tuple[RankDistribution, int] | None = None
        #: buffers the update may write its tables into when nothing outside the cache references them
        #: (:func:`_table`): the previous board's rank probabilities, for the step-down's boolean tables and
        #: the rank probabilities (or, when its table cannot grow in place, for the standard errors)
        self.spares: list[FloatArray] = []
        #: the coming rank distribution's arguments (:meth:`expect_rank_distribution`) and its thread
        self.expected: tuple[FloatArray, bool, float] | None = None
        self.ahead: Beside | None = None

    # -- value intervals --------------------------------------------------------------------------
    def value_bounds(
        self,
        theta: FloatArray,
        point: FloatArray,
        *,
        method: str,
        confidence: float,
        jackknife: FloatArray | None,
    ) -> tuple[FloatArray, FloatArray]:
        key = (method, confidence, jackknife is not None)
        prev = self.previous.bounds.get(key) if self.previous is not None else None
        if prev is None or theta is not self.theta or not _row_major(jackknife):
            lo, hi = bootstrap_bounds(
                theta, point=point, method=method, confidence=confidence, jackknife=jackknife
            )
        else:
            # two columns, row-major as the full arrays are: numpy sums each column of a row-major array
            # row by row whatever its width (from 2), but a column-major one (what ``a[:, [j, j]]`` gives)
            # pairwise: the BCa acceleration's sums of the jackknife differed in the last bits (issue 24,
            # found at K = 65 -> 66); a jackknife that is not row-major is computed in full
            new = [self.new, self.new]
            lo_n, hi_n = bootstrap_bounds(
                np.ascontiguousarray(theta[:, new]),
                point=point[new],
                method=method,
                confidence=confidence,
                jackknife=None if jackknife is None else np.ascontiguousarray(jackknife[:, new]),
            )
            lo = np.empty(theta.shape[1])
            hi = np.empty(theta.shape[1])
            lo[self.old], hi[self.old] = prev
            lo[self.new], hi[self.new] = lo_n[0], hi_n[0]
        self.bounds[key] = (lo, hi)
        return lo, hi

    # -- per-column summaries ---------------------------------------------------------------------
    def column_sd(self, theta: FloatArray) -> FloatArray:
        """:func:`stats.board._column_sd`: the previous entries' kept, the blocks of columns whose bits may
        differ computed again as the full computation computes them (the new entry's block; a block of one
        column, which numpy sums pairwise, in either board)."""
        prev = self.previous
        if prev is None or theta is not self.theta or prev.column_sd is None:
            sd = _column_sd(theta)
        else:
            k1 = theta.shape[1]
            sd = np.empty(k1)
            sd[self.old] = prev.column_sd
            for c0 in _blocks_to_redo(self.old, self.new, k1):
                sd[c0 : c0 + _SD_COLUMNS] = theta[:, c0 : c0 + _SD_COLUMNS].std(axis=0, ddof=1)
        self.sd = sd
        return sd

    def degenerate(self, theta: FloatArray) -> npt.NDArray[np.bool_]:
        """The columns whose replicates are all equal (exact in any order): the previous entries' kept."""
        prev = self.previous
        if prev is None or theta is not self.theta or prev.degenerate is None:
            flat = np.asarray(np.ptp(theta, axis=0) == 0)
        else:
            flat = np.empty(theta.shape[1], dtype=bool)
            flat[self.old] = prev.degenerate
            flat[self.new] = bool(np.ptp(theta[:, self.new]) == 0)
        self.flat = flat
        return flat

    def leader_blocks(
        self,
        theta: FloatArray,
        leader: int,
        block: Callable[[int], tuple[FloatArray, FloatArray]],
    ) -> tuple[FloatArray, FloatArray]:
        """The differences to the leader's per-column statistics: when the leader is the previous board's,
        the previous entries' kept and, as in :meth:`column_sd`, the blocks whose bits may differ computed
        again (the new entry's, a block of one column in either board); else every block."""
        prev = self.previous
        k1 = theta.shape[1]
        same_leader = (
            prev is not None
            and theta is self.theta
            and prev.leader is not None
            and prev.leader_se is not None
            and prev.leader_p is not None
            and int(self.old[prev.leader]) == leader
        )
        if not same_leader or prev is None:
            se, p = _FullParts().leader_blocks(theta, leader, block)
        else:
            assert prev.leader_se is not None and prev.leader_p is not None
            se, p = np.empty(k1), np.empty(k1)
            se[self.old], p[self.old] = prev.leader_se, prev.leader_p
            for c0 in _blocks_to_redo(self.old, self.new, k1):
                se[c0 : c0 + _SD_COLUMNS], p[c0 : c0 + _SD_COLUMNS] = block(c0)
        self.leader, self.leader_se, self.leader_p = leader, se, p
        return se, p

    # -- rank distribution ------------------------------------------------------------------------
    def expect_rank_distribution(
        self, theta: FloatArray, *, higher_is_better: bool, confidence: float
    ) -> None:
        """Keep the arguments of the coming :meth:`rank_distribution`: :meth:`simultaneous_ranks` starts it
        on a thread of its own (:meth:`_start_ranks`)."""
        self.expected = (theta, higher_is_better, confidence)

    def _start_ranks(self) -> None:
        """The expected rank distribution of the update path on a thread beside the max-t sets (issue 24:
        the rank column and the counts' update, a quarter of a new entry's CPU at K = 10,000, fill the
        stretches where the max-t sets keep one core busy). Started after the standard errors' gather, so
        that the new ranks and counts are not held while both tables of standard errors are (the peak).
        The two read the replicates only and write disjoint parts of the state; the counts are integers
        and every other number is computed as on one thread, so the board is the same bits. One thread
        (``LEADERBOARD_BLAS_THREADS=1``): nothing here, the table is counted after the max-t sets. Where the
        standard errors grow in their buffer (no second table: tenth pass), started first."""
        prev, expected = self.previous, self.expected
        if (
            expected is None
            or board_threads() < 2
            or prev is None
            or prev.ranks is None
            or expected[0] is not self.theta
            or prev.higher_is_better != expected[1]
        ):
            return
        theta, higher, confidence = expected
        self.ahead = _ahead(
            lambda: self._rank_distribution(theta, higher_is_better=higher, confidence=confidence),
            "board-ranks",
        )

    def _wait_ranks(self) -> None:
        """Wait for the rank distribution started beside (a failing build leaves no thread behind)."""
        if self.ahead is not None:
            self.ahead.wait()

    def rank_distribution(
        self, theta: FloatArray, *, higher_is_better: bool, confidence: float
    ) -> RankDistribution:
        ahead, self.ahead = self.ahead, None
        expected = self.expected
        if (
            ahead is not None
            and expected is not None
            and expected[0] is theta
            and expected[1:] == (higher_is_better, confidence)
        ):
            result: RankDistribution = ahead.result()
            return result
        if ahead is not None:  # other arguments than those expected (not build_board's order): wait, redo
            ahead.wait()
        return self._rank_distribution(theta, higher_is_better=higher_is_better, confidence=confidence)

    def _rank_distribution(
        self, theta: FloatArray, *, higher_is_better: bool, confidence: float
    ) -> RankDistribution:
        prev = self.previous
        b = theta.shape[0]
        if (
            prev is None
            or theta is not self.theta
            or prev.ranks is None
            or prev.higher_is_better != higher_is_better
        ):
            # the ranks and the counts in buffers with room (as an update leaves them): the first entry
            # appended updates them in place like the next ones (issue 24, eleventh pass: it took two fresh
            # 0.2 GB tables at K = 10,000, and, with its standard errors grown in place, held them beside
            # the previous ones: a traced peak 0.4 GB above the next updates')
            k = theta.shape[1]
            full, ranks = _rank_counts(
                theta,
                higher_is_better=higher_is_better,
                keep=True,
                ranks_out=_with_room_2d(b, k, _rank_dtype(k), square=False),
            )
            counts = _with_room_2d(k, k, _count_dtype(b), square=True)
            counts[...] = full
            self.ranks, self.counts = ranks, counts
            del counts
            # the bounds as in the full computation (its probabilities in the counts' memory, dropped
            # here: the board's table is divided from the kept counts into a table with room for the next
            # boards, :meth:`rank_probabilities`, the same quotients)
            table = _rank_table(full, b, confidence, in_place=True)
            del full
            self.rank_low, self.rank_high, self.rank_confidence = table.low, table.high, confidence
            table = RankDistribution(
                probabilities=np.empty((table.low.size, 0)),
                low=table.low,
                high=table.high,
                confidence=confidence,
            )
            self.deferred = (table, b)
            return table
        counts, ranks, redo, shifted = _add_rank_column(
            theta, prev.ranks, prev.counts, self.old, self.new, higher_is_better=higher_is_better
        )
        self.ranks, self.counts = ranks, counts
        prev.ranks = prev.counts = None  # replaced (K = 10,000: 0.2 GB each)
        keep = prev.rank_low is not None and prev.rank_high is not None and prev.rank_confidence == confidence
        table = _rank_table_update(
            counts,
            b,
            confidence,
            previous=(prev.rank_low, prev.rank_high) if keep else None,  # type: ignore[arg-type]
            old=self.old,
            redo=redo,
            shifted=shifted,
            probabilities=False,  # written in the board's order by rank_probabilities
        )
        self.deferred = (table, b)
        self.rank_low, self.rank_high, self.rank_confidence = table.low, table.high, confidence
        return table

    def rank_probabilities(self, rd: RankDistribution, order: Sequence[int]) -> FloatArray:
        """The board's table of rank probabilities (rows in the board's ``order``): for the table of the
        update path, the counts divided row by row into the board's order (:func:`_probabilities`: no
        table divided and then permuted in place); else as :func:`stats.board.build_board` permutes it."""
        if self.deferred is not None and self.deferred[0] is rd and self.counts is not None:
            k1 = self.counts.shape[0]
            out = _table(k1, self.spares)  # a buffer no one else holds, or a fresh one with room
            return _probabilities(self.counts, self.deferred[1], np.asarray(order, dtype=np.intp), out=out)
        return _FullParts().rank_probabilities(rd, order)

    # -- max-t sets -------------------------------------------------------------------------------
    def simultaneous_ranks(
        self,
        theta: FloatArray,
        point: FloatArray,
        *,
        higher_is_better: bool,
        confidence: float,
        stepdown: bool,
    ) -> SimultaneousRanks:
        prev = self.previous
        key = (confidence, stepdown)
        preload = None
        b = theta.shape[0]
        same = prev is not None and theta is self.theta
        reuse = same and prev is not None and prev.maxt_key == key
        tables: tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]] | None = None
        scratch = self.scratch
        if scratch is None or scratch.shape[0] != b or scratch.shape[1] < theta.shape[1]:
            # a buffer with room for more entries, kept by the cache after the board (issue 24, eighth
            # pass): the next board's deviations, or the kept copy of the replicates, are written into it
            # instead of a fresh B x K array (K = 10,000: 0.8 GB, 0.3-1.9 s of page faults on a VM whose
            # freed memory goes back to the host)
            scratch = self.scratch = _with_columns(b, theta.shape[1])
        extending = same and prev is not None and prev.se is not None and prev.exponents is not None
        k1 = theta.shape[1]
        # the new entry after the previous ones, in their order (the service's case): its tables grow in place
        appended = same and self.new == k1 - 1 and bool(np.array_equal(self.old, np.arange(k1 - 1)))
        grown = _se_buffer(prev, k1) if appended and extending and prev is not None else None
        grows = grown is not None
        if grows:
            # no second table of standard errors is held in this update: the rank distribution starts now,
            # beside the deviations and the new row of standard errors (issue 24, tenth pass)
            self._start_ranks()
        # the deviations in that buffer (for a cache without column digests, the kept replicates' copy,
        # idle until the board is built: the previous replicates were compared already), the same
        # elementwise subtraction as the full computation's ``theta - point``, by row blocks on the board's
        # threads (K = 10,000: 0.08 s on one)
        y = scratch[:, : theta.shape[1]]
        if appended and prev is not None and prev.deviations == k1 - 1 and scratch is prev.theta_buffer:
            # the buffer holds the previous board's deviations, of the same columns (their digests) and point
            # values (compared): an appended entry computes its own column only (issue 24, tenth pass: a
            # B x K pass, 0.1-0.2 core-seconds at K = 10,000; elementwise, the same bits)
            np.subtract(theta[:, k1 - 1], point[k1 - 1], out=y[:, k1 - 1])
        else:

            def subtract(r0: int, r1: int) -> None:
                np.subtract(theta[r0:r1], point, out=y[r0:r1])

            _row_blocks(subtract, b)
        self.deviations = k1
        # every element of z^T z is exact: the same bits in any product (see "Equal bits"); its operand z is
        # formed block by block from y, as the full computation does (no second B x K array)
        if extending and prev is not None:
            # the previous pairs' standard errors kept; the new entry's row and column from one column of
            # the Gram matrix (issue 24: no K x K Gram matrix extended, copied and turned into errors)
            if grown is None:
                # the table gathered afresh: into the previous board's rank probabilities' buffer when its
                # caller has dropped that board (``_table``'s rule), else a fresh buffer, either seen as a
                # square table with room (:func:`_square`): no third K x K table beside the previous one
                # and the spare (K = 10,000: the update's traced peak 3.6 GB with a fresh one)
                grown = _square(_table(k1, self.spares))
            se, var, means, exponents = _extend_standard_errors(prev, y, self.old, self.new, grown)
            self.se_buffer = grown
            del grown
            if not grows:
                # the previous table, gathered: when its caller no longer holds that board, its buffer holds
                # this update's step-down tables and rank probabilities (below)
                spare = _spare(prev.se)
                if spare is not None:
                    self.spares.append(spare)
                del spare
            prev.se, prev.se_buffer = None, None  # the state's references (the buffer is this board's now)
            # the previous board's rank probabilities (or, after a gather, its standard errors): when its
            # caller no longer holds that board, their buffer holds the step-down's two first K x K boolean
            # tables (:func:`_carved_tables`), then this board's rank probabilities (``_table`` at the end
            # checks it is free then). Issue 24, ninth pass: fresh, 0.8 GB of pages were faulted in at the
            # end of every update and 0.2 GB in the middle (on this VM a fifth of a new entry's CPU went to
            # the kernel's page zeroing)
            tables = _carved_tables(self.spares, k1)
            standard_errors = (se, np.sqrt(var))
            if not grows:
                self._start_ranks()
        else:
            roomy = False
            if same and prev is not None and prev.gram is not None:  # a state exported before the se
                gram, means = _extend_gram(prev.gram, y, self.old, self.new)
            else:
                # the full computation's product, in a flat buffer with room: its table is then laid out as
                # the first rows and columns of a square buffer (below), for the next entry to grow in place
                gram, means = _exact_gram(y, side=_roomy_side(k1))
                roomy = True
            var = _variances(np.diag(gram).copy(), means, b)
            exponents = _gram_exponents(y)
            standard_errors = _standard_errors_from_gram(gram, means, b, in_place=True)
            se = standard_errors[0]
            if roomy:
                self.se_buffer = _square_in_place(se)
                se = self.se_buffer[:k1, :k1]
                standard_errors = (se, standard_errors[1])
        try:
            self.se, self.var, self.means, self.exponents = se, var, means, exponents
            if reuse and prev is not None and prev.maxt is not None and np.isfinite(prev.maxt.level):
                preload = _add_pairs(prev.maxt, y, se, self.old, self.new)
            if same and prev is not None and prev.step_levels is not None and prev.step_bounds is not None:
                # the previous board's separations kept: a step at one of its bounds is a pass over a uint8
                # table (issue 24: no K x K pass of the statistics and no mirrored OR per step)
                separate = _StepDown.extended(
                    point, se, prev.step_levels, prev.step_bounds, self.old, self.new
                )
                prev.step_levels = None
                self.extended = True
            else:
                separate = _StepDown(point, se, None, [])  # records the table for the next board
            result, state = _simultaneous(
                theta,
                point,
                higher_is_better=higher_is_better,
                confidence=confidence,
                stepdown=stepdown,
                standard_errors=standard_errors,
                deviations=y,
                preload=preload,
                keep=True,
                separate=separate,
                tables=tables,
            )
            del tables  # their buffer is free for the rank probabilities again
            self.step_levels, self.step_bounds = separate.levels, separate.bounds
            self.sim, self.lowest = result, (float(separate.lowest) if separate.levels is not None else None)
        except BaseException:
            self._wait_ranks()  # no thread left writing into the state of a failed build
            raise
        self.maxt, self.maxt_key = state, key
        return result

    # -- verdicts ---------------------------------------------------------------------------------
    def verdicts(
        self, decisions: Any, point: FloatArray, names: Sequence[str], *, sign: float, leader: int
    ) -> tuple[list[str], npt.NDArray[np.intp]]:
        """:func:`stats.board._verdicts`; when the decisions are this board's max-t ones and its step-down
        ended at the previous board's lowest bound (the old pairs' decisions are the previous ones), the
        previous entries' blocks are kept and changed only where the new entry beats them
        (:func:`_verdicts_extended`)."""
        prev = self.previous
        own = (
            self.sim is not None
            and self.lowest is not None
            and decisions.better is self.sim.better
            and decisions.standard_errors is self.sim.standard_errors
        )
        name_rank = _name_ranks(names)
        if (
            own
            and self.extended
            and prev is not None
            and prev.verdict_worse is not None
            and prev.verdict_compared is not None
            and prev.decided_lowest == self.lowest
        ):
            blocks = _verdicts_extended(
                decisions,
                point,
                name_rank,
                sign=sign,
                leader=leader,
                previous=prev,
                old=self.old,
                new=self.new,
            )
        else:
            blocks = _verdict_blocks(decisions, point, name_rank, sign=sign, leader=leader)
        if own:
            self.verdict_blocks = blocks
        return _verdicts(decisions, point, names, sign=sign, leader=leader, blocks=blocks)


def _ahead(fn: Callable[[], Any], name: str) -> Beside:
    """``fn()`` on a thread of its own at the caller's priority (:class:`stats._threads.Beside`, not made
    nicer: its work is on the update's critical path, :meth:`_Parts._start_ranks`, the standard errors'
    gather); ``.result()`` waits and returns its value or raises its exception, ``.wait()`` only waits."""
    return Beside(fn, threaded=True, nicer=False, name=name)


def _verdicts_extended(
    decisions: Any,
    point: FloatArray,
    name_rank: npt.NDArray[np.int64],
    *,
    sign: float,
    leader: int,
    previous: _State,
    old: npt.NDArray[np.intp],
    new: int,
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.intp]]:
    """:func:`stats.board._verdict_blocks` of a board whose old pairs' decisions are the previous board's:
    an old entry's candidates (the entries significantly better than it) are its previous ones plus the new
    entry where the new entry is better, and the gaps of old pairs are the same bits (same values, same
    standard errors), so its choice is the previous one unless the new entry is a candidate, compared
    with it as :func:`stats.board._pick` compares (the larger gap; equal gaps: the smaller name). The new
    entry's own column is computed as the full computation computes it. O(K)."""
    assert previous.verdict_worse is not None and previous.verdict_compared is not None
    better, se = decisions.better, decisions.standard_errors
    k1 = point.size
    worse = np.zeros(k1, dtype=bool)
    compared = np.full(k1, leader, dtype=np.intp)
    worse[old] = previous.verdict_worse
    held = old[previous.verdict_worse]
    compared[held] = old[previous.verdict_compared[previous.verdict_worse]]
    beats = np.asarray(better[new], dtype=bool).copy()
    beats[new] = False
    beaten = np.flatnonzero(beats)
    fresh, held = beaten[~worse[beaten]], beaten[worse[beaten]]
    if held.size:
        rival = compared[held]
        gap_new = _gaps(sign * (point[new] - point[held]), se[new, held])
        gap_rival = _gaps(sign * (point[rival] - point[held]), se[rival, held])
        key_new, key_rival = -gap_new, -gap_rival
        wins = (key_new < key_rival) | ((key_new == key_rival) & (name_rank[new] < name_rank[rival]))
        compared[held[wins]] = new
    worse[fresh] = True
    compared[fresh] = new
    w, c = _verdict_columns(better, se, point, name_rank, sign=sign, cols=np.array([new], dtype=np.intp))
    worse[new] = bool(w[0])
    if w[0]:
        compared[new] = c[0]
    return worse, compared


def _variances(diagonal: FloatArray, means: FloatArray, b: int) -> FloatArray:
    """Each entry's bootstrap variance from the Gram matrix's diagonal, with the operations of
    :func:`stats.compare_ranks._standard_errors_from_gram` on it (the same bits)."""
    v = diagonal - (b * means) * means
    v /= b - 1
    return np.maximum(v, 0.0)


#: Elements of the Gram operand rounded at once for the new column (a block that stays in the cache).
_COLUMN_BLOCK = 1 << 17


def _gram_column(y: FloatArray, exponents: npt.NDArray[np.int32], new: int) -> tuple[FloatArray, float]:
    """Column ``new`` of ``z^T z`` and the sum of ``z``'s column ``new`` (``z``
    :func:`stats.compare_ranks._gram_operand` of ``y``, whose column exponents are ``exponents``): every
    element is an exact sum (see :func:`stats.compare_ranks._exact_gram`), so it is the full product's."""
    b, k1 = y.shape
    s = _gram_bits(b)
    column = np.zeros(k1)
    step = max(1, _COLUMN_BLOCK // max(k1, 1))
    for r0 in range(0, b, step):
        z = _rounded(y[r0 : r0 + step], s, exponents, in_place=False)
        column += z.T @ np.ascontiguousarray(z[:, new])
    mine = _rounded(y[:, new : new + 1], s, exponents[new : new + 1], in_place=False)
    return column, float(mine.sum())


def _se_buffer(prev: _State, k1: int) -> FloatArray | None:
    """The square buffer (:func:`_square`) the previous standard errors are the first rows and columns of,
    when it has room for a table of ``k1`` entries (for an entry appended after the previous ones,
    :func:`_extend_standard_errors` then grows the table in it), else None."""
    buffer, se = prev.se_buffer, prev.se
    if buffer is None or se is None:  # (a restored state, whose table may be in its rows' order, has none)
        return None
    if buffer.shape[0] < k1 or not buffer.flags.writeable or se.strides != buffer.strides:
        return None
    return buffer if se.__array_interface__["data"][0] == buffer.__array_interface__["data"][0] else None


def _square_in_place(table: FloatArray) -> FloatArray:
    """The square buffer (:func:`_square`) whose first rows and columns hold ``table``, in the same memory:
    ``table`` is C-contiguous, (k, k), the first k^2 elements of a flat buffer of S^2 elements, S > k
    (:func:`stats.compare_ranks._exact_gram` with ``side``). Its rows are moved from the last to the first
    (row i from element i k to i S: every destination lies after the sources of the rows not yet moved,
    so nothing is read after it is overwritten; a row that overlaps its own source is copied through a
    temporary by numpy). The cache's full build lays its table out so (issue 24, eleventh pass): the
    first entry appended after it grows the table in place instead of gathering it into a fresh 0.8 GB
    table at K = 10,000 (1.1-3.9 s for that entry, against 0.9-1.5 s for the next ones)."""
    k = table.shape[0]
    flat = table.base
    assert isinstance(flat, np.ndarray) and flat.ndim == 1 and table.flags.c_contiguous
    assert table.__array_interface__["data"][0] == flat.__array_interface__["data"][0]
    side = math.isqrt(flat.size)
    assert side > k
    square = flat[: side * side].reshape(side, side)
    for i in range(k - 1, -1, -1):  # one row at a time: rows 128.. (of 10,000) do not overlap their source
        square[i, :k] = flat[i * k : (i + 1) * k]
    return square


def _square(flat: FloatArray) -> FloatArray:
    """The flat buffer of a (k1, k1) table of :func:`_table` (its first elements) seen as the largest square
    table it holds, (S, S) with S >= k1 (``_table`` takes a buffer of at least k1^2 elements): a table of standard errors grows in its first rows and columns
    (:func:`_with_room` leaves about 1% more entries)."""
    base = flat.base if isinstance(flat.base, np.ndarray) else flat
    side = math.isqrt(base.size)
    return base[: side * side].reshape(side, side)


def _extend_standard_errors(
    prev: _State, y: FloatArray, old: npt.NDArray[np.intp], new: int, buffer: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, npt.NDArray[np.int32]]:
    """The pairs' standard errors of the board with column ``new`` added, from the previous board's (at
    ``old``), each entry's variance, the Gram operand's column means and exponents (all per column, so
    the previous entries keep theirs) and one column of the Gram matrix: the new row and column with the
    operations of :func:`stats.compare_ranks._standard_errors_from_gram` on each element (the upper
    triangle's, row ``min(i, new)``), so every element is the full computation's bits. The table is the
    first rows and columns of the square ``buffer``.

    An entry appended after the previous ones (the service's case) whose previous table is the first rows
    and columns of ``buffer`` (:func:`_se_buffer`) gets the table grown in it: only the new row and column
    are written (issue 24, tenth pass: no K x K gather; a board that holds the previous table, a view of
    the previous rows and columns, is unchanged). Otherwise the previous table is gathered into it."""
    assert prev.se is not None and prev.var is not None and prev.means is not None
    assert prev.exponents is not None
    k1 = y.shape[1]
    se = buffer[:k1, :k1]
    if buffer is prev.se_buffer:
        v, var, means, exponents = _new_errors(prev, y, old, new)
        se[new, :] = v
        se[:, new] = v
        return se, var, means, exponents
    # the previous table in a state exported by an earlier version may be in its board's rows' order:
    # entry i of the previous input at row ``at[i]``
    at = np.empty(old.size, dtype=np.intp)
    if prev.se_order is None:
        at[:] = np.arange(old.size)
    else:
        at[prev.se_order] = np.arange(old.size)
    source = np.zeros(k1, dtype=np.intp)  # per new column, its row in the previous table (new: any)
    source[old] = at
    # each block's rows gathered, then its columns while in cache (np.take on 32 rows: 5x faster than a
    # fancy index of 128 rows at K = 5,000, whose block left the cache), on the board's threads; with two
    # threads the gather runs beside the Gram column below (seventh pass: independent, and the gather's
    # row and column ``new`` are written after it)
    previous = prev.se
    gather = (
        _ahead(lambda: _gathered(previous, source, out=se), "board-gather") if board_threads() > 1 else None
    )
    try:
        v, var, means, exponents = _new_errors(prev, y, old, new)
    finally:
        if gather is not None:
            gather.wait()
    if gather is None:
        _gathered(previous, source, out=se)
    else:
        gather.result()
    se[new, :] = v
    se[:, new] = v
    return se, var, means, exponents


def _new_errors(
    prev: _State, y: FloatArray, old: npt.NDArray[np.intp], new: int
) -> tuple[FloatArray, FloatArray, FloatArray, npt.NDArray[np.int32]]:
    """The new entry's row of the pairs' standard errors, each entry's variance, the Gram operand's column
    means and exponents (:func:`_extend_standard_errors`)."""
    assert prev.var is not None and prev.means is not None and prev.exponents is not None
    b, k1 = y.shape
    exponents = np.empty(k1, dtype=prev.exponents.dtype)
    exponents[old] = prev.exponents
    exponents[new] = _gram_exponents(y[:, new : new + 1])[0]
    column, total = _gram_column(y, exponents, new)
    means = np.empty(k1)
    means[old] = prev.means
    means[new] = total / b
    var = np.empty(k1)
    var[old] = prev.var
    var[new] = _variances(column[new : new + 1], means[new : new + 1], b)[0]
    bm = b * means
    v = np.empty(k1)
    v[:new] = column[:new] - bm[:new] * means[new]  # element (i, new), row i
    v[new:] = column[new:] - bm[new] * means[new:]  # element (new, i), row new
    v /= b - 1
    scale = var + var[new]
    v *= 2
    np.subtract(scale, v, out=v)
    v[v <= 1e-10 * scale] = 0.0
    v[new] = 0.0
    np.sqrt(v, out=v)
    return v, var, means, exponents


def _extend_gram(
    gram: FloatArray, y: FloatArray, old: npt.NDArray[np.intp], new: int
) -> tuple[FloatArray, FloatArray]:
    """``z^T z`` of the new board and the column means of ``z`` (``z``
    :func:`stats.compare_ranks._gram_operand` of the deviations ``y``) from the previous board's Gram
    matrix (columns ``old``) and one matrix-vector product for the new column, summed over row blocks of
    ``z``: every partial sum is exact (see :func:`stats.compare_ranks._exact_gram`), so the elements and
    the means are the full computation's bits."""
    b, k1 = y.shape
    out = np.empty((k1, k1))
    if np.array_equal(old, np.arange(k1 - 1)):
        out[: k1 - 1, : k1 - 1] = gram
    else:
        out[np.ix_(old, old)] = gram
    column = np.zeros(k1)
    sums = np.zeros(k1)
    for _, z in _gram_blocks(y, elements=_PAIR_CHUNK):
        column += z.T @ np.ascontiguousarray(z[:, new])
        sums += z.sum(axis=0)
    out[:, new] = column
    out[new, :] = column
    sums /= b
    return out, sums


def _row_major(a: npt.NDArray[Any] | None) -> bool:
    """None, or a 2-D array whose rows are contiguous (the first columns of a wider one count)."""
    return a is None or (
        a.ndim == 2 and a.strides[1] == a.itemsize and a.strides[0] >= a.itemsize * a.shape[1]
    )


def _same_rows(a: FloatArray, b: FloatArray) -> bool:
    """``numpy.array_equal`` of two (B, K) arrays, by blocks of rows (no B x K boolean temporary; K =
    10,000: 95 MiB), spans of blocks on the board's threads (seventh pass: 0.1 s of one thread at
    K = 10,000)."""
    if a.shape != b.shape:
        return False
    step = max(1, (1 << 16) // max(a.shape[1], 1))
    span = step * 16

    def same(s0: int) -> bool:
        stop = min(a.shape[0], s0 + span)
        return all(
            np.array_equal(a[r0 : min(stop, r0 + step)], b[r0 : min(stop, r0 + step)])
            for r0 in range(s0, stop, step)
        )

    return all(in_blocks(same, range(0, a.shape[0], span)))


def _blocks_to_redo(old: npt.NDArray[np.intp], new: int, k1: int) -> list[int]:
    """The first columns of the blocks of :data:`stats.board._SD_COLUMNS` whose per-column statistics a
    new board computes again: the new entry's block, and a block of one column in the new board or in the
    previous one (its last column): numpy sums a lone column pairwise, a wider block row by row."""
    positions = {new, k1 - 1, int(old[-1])} if old.size else {new}
    return sorted({(i // _SD_COLUMNS) * _SD_COLUMNS for i in positions})


def _with_columns(b: int, k: int) -> FloatArray:
    """A fresh (b, k + room) float64 buffer: room for about 3% more entries (at least 16 columns), so that
    the next boards' B x K arrays fit in its first columns."""
    return np.empty((b, k + max(16, k // 32)))


def _kept_replicates(theta: FloatArray, buffer: FloatArray | None) -> tuple[FloatArray, FloatArray]:
    """The replicates copied into the first columns of ``buffer`` (the board's deviations' buffer, when it
    is as tall and wide enough; else a new one with room for more entries): the kept copy needs no fresh
    B x K array per board (K = 10,000: 0.8 GB of page faults). Returns the buffer and the copy (a view)."""
    b, k = theta.shape
    if buffer is None or buffer.shape[0] != b or buffer.shape[1] < k:
        buffer = _with_columns(b, k)
    kept = buffer[:, :k]

    def copy(r0: int, r1: int) -> None:
        kept[r0:r1] = theta[r0:r1]

    _row_blocks(copy, b)  # on the board's threads
    return buffer, kept


def _count_dtype(b: int) -> type[np.integer]:
    """The smallest integer type that holds a rank count (0..b) of the kept counts."""
    return np.int16 if b < 2**15 else np.int32


def _counts_from_ranks(ranks: npt.NDArray[np.integer], b: int) -> npt.NDArray[np.integer]:
    """The (K, K) counts of (entry, rank) of 0-based ranks (B, K), one ``bincount`` per entry over a
    transposed block of columns (the state restored in another process keeps the ranks, not the counts)."""
    k = ranks.shape[1]
    out = np.empty((k, k), dtype=_count_dtype(b))
    for c0 in range(0, k, 256):
        block = np.ascontiguousarray(ranks[:, c0 : c0 + 256].T)
        for i, row in enumerate(block):
            out[c0 + i] = np.bincount(row, minlength=k)
    return out


def _add_rank_column(
    theta: FloatArray,
    ranks: npt.NDArray[np.integer],
    counts: npt.NDArray[np.integer] | None,
    old: npt.NDArray[np.intp],
    new: int,
    *,
    higher_is_better: bool,
) -> tuple[npt.NDArray[np.integer], npt.NDArray[np.integer], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """The (K+1, K+1) rank counts and the ranks (0-based, ties sharing the smallest) with column ``new``
    added; ``ranks`` and ``counts`` are the previous board's, their columns (rows) at ``old``.

    Also which rows of the counts changed otherwise than by one rank down in every resample (``redo``: the
    new entry's and the old entries it beats in some resamples but not all) and which moved down in every
    resample (``shifted``). An old entry moves down by one rank where the new entry is strictly better;
    its counts change only in the resamples where it moves (or, for an entry that moves in most of them,
    where it does not: its row is then the previous one shifted by a rank), so only those elements are
    counted (issue 24: a full recount of the B x K ranks with ``numpy.add.at`` took 6.5 s of CPU at
    K = 10,000). The counts are the same integers as a full count of the ranks."""
    b, k1 = theta.shape
    k = k1 - 1
    in_order = bool(np.array_equal(old, np.arange(k)))
    # appended (the service's case): the ranks and the counts updated in the previous ones' buffers when
    # they have room for the new column (issue 24, ninth pass: at K = 10,000 two fresh 0.2 GB tables per
    # update, their page faults, and both generations held at once); else fresh buffers with room, for the
    # next update
    ranks_base = _room_for(ranks, b, k1, _rank_dtype(k1)) if in_order and counts is not None else None
    counts_base = _room_for(counts, k1, k1, counts.dtype) if counts is not None and in_order else None
    if ranks_base is None or counts_base is None:
        ranks_base = counts_base = None
    out = _with_room_2d(b, k1, _rank_dtype(k1), square=False) if ranks_base is None else ranks_base[:b, :k1]
    moved = np.zeros(k, dtype=np.int64)  # per old entry: the resamples in which the new entry beats it
    new_rank = np.empty(b, dtype=np.int64)
    step = max(1, _COUNT_CHUNK // k1)
    # in place, the previous ranks are gone once written: which elements moved (the new entry strictly
    # better) is kept as bits for the counts' update below (B x K / 8 bytes: 12.5 MB at K = 10,000)
    beaten_bits = np.empty((b, (k + 7) // 8), dtype=np.uint8) if ranks_base is not None else None

    def rank_rows(r0: int) -> npt.NDArray[np.intp]:  # one block of resamples: its rows of out and new_rank
        rows = theta[r0 : r0 + step]
        others = rows[:, :k] if in_order else rows[:, old]
        mine = rows[:, new : new + 1]
        beaten = others < mine if higher_is_better else others > mine  # the new entry strictly better
        ahead = others > mine if higher_is_better else others < mine  # strictly better than the new entry
        block = out[r0 : r0 + step]
        if in_order:  # the previous ranks plus one where beaten (in place: the same memory)
            np.add(ranks[r0 : r0 + step], beaten, out=block[:, :k], dtype=out.dtype)
        else:
            block[:, old] = ranks[r0 : r0 + step] + beaten.astype(out.dtype)
        if beaten_bits is not None:
            beaten_bits[r0 : r0 + step] = np.packbits(beaten, axis=1)
        new_rank[r0 : r0 + step] = np.count_nonzero(ahead, axis=1)
        block[:, new] = new_rank[r0 : r0 + step]
        return np.count_nonzero(beaten, axis=0)

    # the blocks of resamples on the board's threads (each writes its own rows; the counts are integers)
    for part in in_blocks(rank_rows, range(0, b, step)):
        moved += part
    redo = np.zeros(k1, dtype=bool)
    shifted = np.zeros(k1, dtype=bool)
    redo[new] = True
    mixed = np.flatnonzero((moved > 0) & (moved < b))
    redo[old[mixed]] = True
    shifted[old[moved == b]] = True
    if counts is None:  # a restored state: the counts of the new ranks, recounted
        return _counts_from_ranks(out, b), out, np.ones(k1, dtype=bool), np.zeros(k1, dtype=bool)
    flip = moved > b // 2  # rows counted from the previous row shifted by one rank
    result = (
        _with_room_2d(k1, k1, counts.dtype, square=True) if counts_base is None else counts_base[:k1, :k1]
    )
    # the counts as one flat array and the length of a row in it (a buffer's rows are wider than K + 1)
    flat_base = result.base if counts_base is None else counts_base
    assert isinstance(flat_base, np.ndarray) and flat_base.flags.c_contiguous
    flat, row_length = flat_base.reshape(-1), int(flat_base.shape[1])

    def kept_rows(r0: int, r1: int) -> None:
        """Rows ``old[r0:r1]`` of the counts: the previous rows, shifted by one rank for the rows ``flip``
        (by row blocks on the board's threads: each block writes its own rows; in place, the previous rows
        are these rows already)."""
        rows = result[old[r0:r1]] if not in_order else result[r0:r1]
        f = flip[r0:r1]
        if counts_base is None:
            rows[:, :k] = counts[r0:r1]
        if f.any():
            rows[f, 1:] = rows[f, :k]  # a fancy index on the right: copied before the rows are written
            rows[f, 0] = 0
        rows[~f, k] = 0
        if not in_order:
            result[old[r0:r1]] = rows

    _row_blocks(kept_rows, k)
    result[new] = np.bincount(new_rank, minlength=k1)
    if mixed.size:
        # the elements that move a count: per mixed entry, the resamples where it moves (or, for a row
        # shifted by a rank, where it does not), each at its previous rank R: R loses one, R + 1 gains one
        # (the reverse for a shifted row). Groups of mixed entries on the board's threads, each over every
        # resample: one bincount of (entry in the group, R) per group, its nonzero counts added to the
        # group's own rows (integers: the same counts for any grouping or thread count; issue 24: the
        # serial ``numpy.add.at`` of every element took 0.4 s of one thread at K = 10,000)
        group = max(1, min(_MIXED_GROUP, -(-mixed.size // 2)))

        def moved_counts(g0: int) -> None:
            mine = mixed[g0 : g0 + group]
            cols = old[mine]
            # the group's span of previous columns (and of new ones: the same unless the new entry's column
            # is inside), read as slices, not gathered column by column; the other columns in it masked out
            a, z = int(mine[0]), int(mine[-1]) + 1
            inside = np.zeros(z - a, dtype=bool)
            inside[mine - a] = True
            position = np.cumsum(inside) - 1  # a column of the span: its entry in the group
            now_cols: slice | npt.NDArray[np.intp] = slice(int(old[a]), int(old[z - 1]) + 1)
            if int(old[z - 1]) - int(old[a]) != z - 1 - a:
                now_cols = old[a:z]
            flip_g = flip[a:z][None, :]
            mstep = max(1, _COUNT_CHUNK // (z - a))
            found = []
            for r0 in range(0, b, mstep):
                if beaten_bits is None:
                    previous = ranks[r0 : r0 + mstep, a:z]
                    select = out[r0 : r0 + mstep, now_cols] != previous  # moved in this resample
                else:  # in place: moved where beaten, and its previous rank is one less than its rank now
                    bits = np.unpackbits(beaten_bits[r0 : r0 + mstep, a // 8 : (z + 7) // 8], axis=1)
                    select = bits[:, a % 8 : a % 8 + (z - a)].view(bool)
                    previous = out[r0 : r0 + mstep, a:z] - select
                select ^= flip_g
                select &= inside
                bi, ci = np.nonzero(select)
                found.append(position[ci] * k1 + previous[bi, ci])
            h = np.bincount(np.concatenate(found), minlength=mine.size * k1)
            at = np.flatnonzero(h)  # (entry in the group, previous rank R), each once
            v = h[at].astype(result.dtype)
            g, r = np.divmod(at, k1)
            at = cols[g] * row_length + r  # (its row of the counts, R); R + 1 <= k stays in the row
            up = flip[mine][g]  # a shifted row gains at R and loses at R + 1, another the reverse
            # the decreases first: every count stays within [-b, b] on the way (b < 2^15 for int16)
            flat[at[up] + 1] -= v[up]
            flat[at[~up]] -= v[~up]
            flat[at[up]] += v[up]
            flat[at[~up] + 1] += v[~up]

        in_blocks(moved_counts, range(0, mixed.size, group))
    return result, out, redo, shifted


def _with_room_2d(rows: int, columns: int, dtype: Any, *, square: bool) -> npt.NDArray[Any]:
    """A fresh buffer of ``dtype`` for the ranks (B x K: ``rows`` kept) or the counts (``square``, K x K:
    as many more rows) with about 3% more columns (at least 16): the next boards' tables are updated in
    it (:func:`_add_rank_column`). Returns the (rows, columns) view of its first rows and columns."""
    room = _room_2d(columns)
    return np.empty((rows + room if square else rows, columns + room), dtype=dtype)[:rows, :columns]


def _room_2d(columns: int) -> int:
    """The columns of room :func:`_with_room_2d` leaves beside ``columns``: about 3%, at least 16."""
    return max(16, columns // 32)


def _room_for(a: npt.NDArray[Any] | None, rows: int, columns: int, dtype: Any) -> npt.NDArray[Any] | None:
    """The buffer ``a`` is the first rows and columns of (:func:`_with_room_2d`), when ``a`` starts it,
    has ``dtype`` and the buffer is at least (rows, columns): the table grown by one entry is then its
    ``[:rows, :columns]``, the previous elements in place. Else None."""
    base = None if a is None else a.base
    if a is None or not isinstance(base, np.ndarray) or base.ndim != 2 or base.dtype != dtype:
        return None
    if not base.flags.c_contiguous or base.shape[0] < rows or base.shape[1] < columns:
        return None
    if a.strides != base.strides or a.__array_interface__["data"][0] != base.__array_interface__["data"][0]:
        return None
    return base


def _rank_table_update(
    counts: npt.NDArray[np.integer],
    b: int,
    confidence: float,
    *,
    previous: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None,
    old: npt.NDArray[np.intp],
    redo: npt.NDArray[np.bool_],
    shifted: npt.NDArray[np.bool_],
    probabilities: bool = True,
) -> RankDistribution:
    """:func:`stats.compare_ranks._rank_table` of the counts, its bounds computed again only for the rows
    ``redo``: a row unchanged keeps its bounds, a row shifted by one rank (``shifted``) has both one rank
    lower (its cumulative counts start with a zero below either threshold, which is positive); the same
    numbers as the full table's. Without ``probabilities`` the table's probabilities are left out (a
    K x 0 array): :func:`_probabilities` writes them in the board's order."""
    k1 = counts.shape[0]
    tail = (1 - confidence) / 2
    lo_at, hi_at = tail * b - 1e-9, (1 - tail) * b - 1e-9
    table = _probabilities(counts, b) if probabilities else np.empty((k1, 0))
    low = np.empty(k1, dtype=np.int64)
    high = np.empty(k1, dtype=np.int64)
    redo = redo.copy()
    if previous is None or not (lo_at > 0 and hi_at > 0):
        redo[:] = True
    else:
        low[old], high[old] = previous
        low[shifted] += 1
        high[shifted] += 1
        # an old entry's rank in each resample is its previous one or one lower, so its cumulative counts
        # F'(x) lie between the previous F(x - 1) and F(x): a bound is the previous one or one rank lower,
        # whichever the count up to the previous bound says (two prefix sums, not a cumulative row)
        for row in np.flatnonzero(redo[old]):
            r = int(old[row])
            lo, hi = int(low[r]), int(high[r])
            below_lo = int(counts[r, :lo].sum(dtype=np.int64))
            below_hi = below_lo + int(counts[r, lo:hi].sum(dtype=np.int64))
            low[r] = lo if below_lo >= lo_at else lo + 1
            high[r] = hi if below_hi >= hi_at else hi + 1
            redo[r] = False
    rows = np.flatnonzero(redo)
    for r0 in range(0, rows.size, 256):
        at = rows[r0 : r0 + 256]
        cumulative = np.cumsum(counts[at], axis=1, dtype=np.int64)
        low[at] = np.argmax(cumulative >= lo_at, axis=1) + 1
        high[at] = np.argmax(cumulative >= hi_at, axis=1) + 1
    return RankDistribution(probabilities=table, low=low, high=high, confidence=confidence)


def _probabilities(
    counts: npt.NDArray[np.integer],
    b: int,
    order: npt.NDArray[np.intp] | None = None,
    out: FloatArray | None = None,
) -> FloatArray:
    """The rank probabilities ``counts / b`` (rows in ``order`` when given: the board's table written once,
    already in its rows' order, instead of divided and then permuted in place), by row blocks on the
    board's threads; each element is the same division as the full table's."""
    k1 = counts.shape[0]
    if out is None:
        out = np.empty((k1, k1))

    def divide(r0: int, r1: int) -> None:
        rows = counts[r0:r1] if order is None else counts[order[r0:r1]]
        np.divide(rows, b, out=out[r0:r1])

    _row_blocks(divide, k1)
    return out


def _add_pairs(
    maxt: MaxTState, y: FloatArray, se: FloatArray, old: npt.NDArray[np.intp], new: int
) -> tuple[float, npt.NDArray[np.intp], npt.NDArray[np.intp], npt.NDArray[np.intp], FloatArray]:
    """The previous exceedance list (its entries moved to columns ``old``) plus every (new pair, resample)
    statistic at or above its level.

    The statistic of pair (j, new) in resample b is ``|y_bj - y_b,new| / se_j,new``, elementwise as in the
    full computation (``se`` is exactly symmetric); pairs with a zero standard error are not in the list
    (as in the full search). The previous entries keep their relative order, so a pair keeps j < k.
    """
    b, k1 = y.shape
    level = maxt.level
    se_new = se[:, new]
    parts_j, parts_k = [old[maxt.pair_j]], [old[maxt.pair_k]]
    parts_b, parts_z = [maxt.rows], [maxt.z]
    step = max(1, _PAIR_CHUNK // b)
    y_new = y[:, new : new + 1]
    # candidates by |y_j - y_new| >= level se (1 - 1e-12), a necessary condition of z >= level (the
    # product and the quotient round differently), then the statistic itself as the full computation
    # divides it; a zero standard error (the diagonal, identical entries) is never a candidate
    bound = np.where(se_new > 0, level * se_new * (1 - 1e-12), np.inf)

    local = threading.local()  # one buffer per thread (a fresh one per chunk: its page faults)
    rows = max(1, min(b, _PAIR_TILE // max(1, min(step, k1))))

    def chunk(c0: int) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], FloatArray]:
        """The hits of columns c0.., in the order of ``numpy.nonzero`` over the (B, c) block (row-major),
        found tile by tile of :data:`_PAIR_TILE` elements (in order: the same list) so that the passes
        over the differences stay in the cache (issue 24: a (B, c) block of 16 MB went to memory and back
        four times)."""
        c1 = min(k1, c0 + step)
        if getattr(local, "block", None) is None:
            local.block = np.empty((rows, min(step, k1)))
            local.mask = np.empty((rows, min(step, k1)), dtype=bool)
        found_b, found_p, found_z = [], [], []
        for r0 in range(0, b, rows):
            r1 = min(b, r0 + rows)
            d = np.subtract(y[r0:r1, c0:c1], y_new[r0:r1], out=local.block[: r1 - r0, : c1 - c0])
            np.abs(d, out=d)
            mask = np.greater_equal(d, bound[c0:c1], out=local.mask[: r1 - r0, : c1 - c0])
            bi, pi = np.nonzero(mask)
            if not bi.size:
                continue
            z = d[bi, pi] / se_new[c0 + pi]
            hit = z >= level
            found_b.append(bi[hit] + r0)
            found_p.append(pi[hit] + c0)
            found_z.append(z[hit])
        if not found_b:
            empty = np.empty(0, dtype=np.intp)
            return empty, empty, np.empty(0)
        return np.concatenate(found_b), np.concatenate(found_p), np.concatenate(found_z)

    # the column chunks on the board's threads, their hits in the chunks' order (the same list)
    for bi, pi, z in in_blocks(chunk, range(0, k1, step)):
        parts_j.append(np.minimum(pi, new))
        parts_k.append(np.maximum(pi, new))
        parts_b.append(bi)
        parts_z.append(z)
    return (
        level,
        np.concatenate(parts_j).astype(np.intp),
        np.concatenate(parts_k).astype(np.intp),
        np.concatenate(parts_b).astype(np.intp),
        np.concatenate(parts_z),
    )


#: A pair of :class:`_StepDown`'s table separated by none of its bounds (``|t|`` at or below all, or NaN).
_NEVER = 255
#: Candidates of a new bound evaluated one by one below this share of the pairs (else one full pass).
_SPARSE_SHARE = 1 / 32


class _StepDown:
    """The step-down's separations (``stats.compare_ranks._simultaneous``'s ``separate``) from a table of
    levels kept between boards (issue 24: no K x K pass of the statistics per step for a new entry).

    ``bounds`` are the bounds ``c (1 + 1e-9)`` of the steps of this task's boards, strictly decreasing;
    ``levels[j, k]`` (uint8, symmetric, in the board's input order) is the first ``i`` (1-based) with
    ``|t_jk| > bounds[i - 1]``, or :data:`_NEVER`. ``|t_jk| = |p_j - p_k| / se_jk`` is computed as
    ``stats.compare_ranks._separated_by`` computes it (a zero standard error: inf, or NaN for equal
    values, never separated), and is the same bits for an old pair in the next board (same values, same
    standard errors), so the previous board's table holds for its pairs; the new entry's row and column
    are computed. A step at a bound in the list separates ``levels <= i`` (one pass over a uint8 table); a
    bound between two of the list is inserted: only the pairs of the level it splits are evaluated (or,
    when they are many, every pair, by ``_separated_by``). After the step, ``separated`` is every pair
    with ``|t| > bound``: the step's table, since the bounds of the steps that separate decrease and a
    zero standard error between different values is ``|t| = inf``.
    """

    def __init__(
        self,
        p: FloatArray,
        se: FloatArray,
        levels: npt.NDArray[np.uint8] | None,
        bounds: list[float],
    ) -> None:
        self.p, self.se = p, se
        k = p.size
        self.levels: npt.NDArray[np.uint8] | None = (
            levels if levels is not None else np.full((k, k), _NEVER, dtype=np.uint8)
        )
        self.bounds = list(bounds) if levels is not None else []
        self.lowest = np.inf  # this board's smallest bound so far: ``separated`` is every pair above it
        self.count: int | None = None

    @classmethod
    def extended(
        cls,
        p: FloatArray,
        se: FloatArray,
        previous: npt.NDArray[np.uint8],
        bounds: list[float],
        old: npt.NDArray[np.intp],
        new: int,
    ) -> _StepDown:
        """The previous board's table (its entries at columns ``old``) with the new entry's row and column."""
        k1 = p.size
        levels = np.empty((k1, k1), dtype=np.uint8)
        if np.array_equal(old, np.arange(k1 - 1)):

            def copy(r0: int, r1: int) -> None:
                levels[r0:r1, : k1 - 1] = previous[r0:r1]

            _row_blocks(copy, k1 - 1, 1024)
        else:
            source = np.zeros(k1, dtype=np.intp)
            source[old] = np.arange(old.size)
            _gathered(previous, source, out=levels)
        # row ``new`` of ``_separated_by``'s statistics (``|.|`` and the errors are exactly symmetric)
        t = _pair_statistics(p, se, np.full(k1, new, dtype=np.intp), np.arange(k1))
        ascending = np.asarray(bounds[::-1], dtype=np.float64)
        above = ascending.size - np.searchsorted(ascending, t, side="left")  # bounds >= |t|
        row = np.where(np.isnan(t) | (above == ascending.size), _NEVER, above + 1).astype(np.uint8)
        levels[new, :] = row
        levels[:, new] = row
        return cls(p, se, levels, bounds)

    def __call__(self, separated: npt.NDArray[np.bool_], bound: float) -> bool | None:
        if self.levels is None:
            return None
        if not np.isfinite(bound) or (len(self.bounds) >= _NEVER - 1 and bound not in self.bounds):
            self.levels = None  # not kept: the next board records its table afresh
            return None
        if bound >= self.lowest:  # every pair above it is separated already
            return False
        self.lowest = bound
        if self.count is None:
            self.count = int(np.count_nonzero(separated))
        level = self._insert(bound)
        levels = self.levels
        counts = np.zeros(-(-levels.shape[0] // _POOL_ROWS), dtype=np.int64)

        def step(r0: int, r1: int) -> None:  # the pass and its count by row blocks, on the board's threads
            np.less_equal(levels[r0:r1], level, out=separated[r0:r1])
            counts[r0 // _POOL_ROWS] = np.count_nonzero(separated[r0:r1])

        _row_blocks(step, levels.shape[0])
        count = int(counts.sum())
        moved, self.count = count > self.count, count
        return moved

    def _insert(self, bound: float) -> int:
        """The level of ``bound``, inserted in the list (and the table) when it is not there."""
        levels = self.levels
        assert levels is not None
        i = sum(1 for c in self.bounds if c > bound)
        if i < len(self.bounds) and self.bounds[i] == bound:
            return i + 1
        split = i + 1 if i < len(self.bounds) else _NEVER  # the pairs with bounds[i - 1] >= |t| > bounds[i]
        candidates = np.empty(levels.shape, dtype=bool)
        counts = np.zeros(-(-levels.shape[0] // _POOL_ROWS), dtype=np.int64)
        shift = i < len(self.bounds)  # the levels below the new one move down by one

        def mark(r0: int, r1: int) -> None:  # by row blocks, on the board's threads
            rows = levels[r0:r1]
            np.equal(rows, split, out=candidates[r0:r1])
            counts[r0 // _POOL_ROWS] = np.count_nonzero(candidates[r0:r1])
            if shift:
                np.add(rows, 1, out=rows, where=(rows > i) & (rows != _NEVER))

        _row_blocks(mark, levels.shape[0])
        n = int(counts.sum())
        if n <= _SPARSE_SHARE * levels.size:
            at = np.flatnonzero(candidates)
            del candidates
            rows, cols = np.divmod(at, levels.shape[1])
            levels.reshape(-1)[at[_pair_statistics(self.p, self.se, rows, cols) > bound]] = i + 1
        else:
            above = _separated_by(self.p, self.se, bound)
            above &= candidates
            del candidates
            np.putmask(levels, above, np.uint8(i + 1))
        self.bounds.insert(i, bound)
        return i + 1


class BoardCache:
    """The incremental board of one task: :meth:`build` returns :func:`stats.board.build_board`'s board.

    Keep one per task and metric, in the process that rebuilds the task's boards. Memory: the replicates
    (B x K float64, in a buffer a few percent wider), their ranks (B x K, 16-bit), the rank counts (K x K,
    16-bit), the exceedance list, the step-down's table of levels (K x K uint8), and the board's own table
    of standard errors (K x K float64 in the input's order, read-only: shared with the board the last build
    returned, the first rows and columns of a buffer with about 1% room, in which the next appended entry
    writes only its row and column); at K = N = B = 10,000 about 2 GB traced. It also keeps the buffer of
    the last board's rank probabilities (shared with that board; when its caller drops the board, 0.8 GB
    more held by the cache at K = 10,000), into which the next update writes its step-down's two boolean
    tables and then its rank probabilities if, by then, nothing else references it (no board, no view of
    a board's table alive: ``sys.getrefcount``): no fresh K x K table faulted in per update when the
    caller drops each board before the next build. A board a caller keeps is never written again (the
    rows and columns of its tables are not those a later entry writes).

    The board a build returns is the full rebuild's, except that its K x K float64 tables may be views of
    buffers a few percent larger (room for the next boards' tables).
    """

    def __init__(self) -> None:
        self._state: _State | None = None
        #: How the last :meth:`build` went: ``"full"`` or ``"incremental"``.
        self.last: str = "none"

    def clear(self) -> None:
        """Forget the previous board (the next build is a full rebuild)."""
        self._state = None

    def build(
        self,
        *,
        names: Sequence[str],
        values: npt.ArrayLike,
        replicates: npt.ArrayLike,
        column_digests: Sequence[str] | None = None,
        **options: Any,
    ) -> Board:
        """The board of :func:`stats.board.build_board` for these arguments, reusing the previous one's work
        when the entries are the previous ones plus one.

        ``column_digests`` (optional, issue 24): each column's :meth:`column_digest` (of its replicates and
        jackknife column), which the caller keeps with the arrays it stacks. Given, the previous entries'
        columns are checked by their digests (O(K)) instead of the arrays (O(B K): at K = 5,000 a copy and
        SHA-256 of 0.8 GB per build, or an element-wise comparison in-process), the new column's digest is
        checked here, and the state keeps the digests, not the arrays. A state built with digests is used only
        by a build with digests (and the converse): otherwise the full rebuild."""
        names_t = tuple(str(n) for n in names)
        point = np.asarray(values, dtype=np.float64)
        theta = np.ascontiguousarray(replicates, dtype=np.float64)
        digests = None if column_digests is None else tuple(str(d) for d in column_digests)
        if digests is not None and len(digests) != len(names_t):
            raise ValueError("`column_digests` must hold one digest per entry.")
        found = self._appended(names_t, point, theta, options, digests)
        previous = self._state if found is not None and options.get("runs") is None else None
        old, new = found if found is not None else ([], -1)
        # computed in the caller's order, as the full rebuild (a pair's standard error is the same bits for
        # any insertion of the new entry, since the previous entries keep their relative order)
        parts = _Parts(previous, theta, old, new)
        buffer = self._state.theta_buffer if self._state is not None else None
        parts.scratch = buffer
        if self._state is not None and self._state.spares:  # moved: the state holds no reference to them
            parts.spares, self._state.spares = self._state.spares, None
        # the previous state is the parts' alone from here (its arrays are dropped as the new ones replace
        # them); a build that fails leaves no state: the next one is a full rebuild
        self._state = None
        if previous is not None:
            previous.consumed = True
            previous.theta = None  # type: ignore[assignment]  # compared already; its buffer is reused
        board = build_board(names=names_t, values=point, replicates=theta, _parts=parts, **options)
        self.last = "incremental" if previous is not None else "full"
        jack = options.get("jackknife")
        if (
            digests is not None
            and found is None
            and not _new_columns_match(digests, theta, jack, range(len(names_t)))
        ):
            digests = None  # a full build whose digests are not its columns': kept as without digests
        # the buffer of this board's deviations (free now) is kept for the next board's: with the caller's
        # digests, which stand for the columns (it keeps the arrays), as it is, for the next deviations;
        # without, holding the copy of the replicates the next board compares its columns with
        buffer = parts.scratch
        kept = None
        if digests is None:
            buffer, kept = _kept_replicates(theta, buffer)
        # the pairs' standard errors the state keeps are the board's table (in the input's order, read-only):
        # no second K x K table (K = 10,000: 0.8 GB); the next appended entry grows its buffer in place
        shared = None
        if parts.se is not None and board.standard_errors_by_input.shape == parts.se.shape:
            shared = board.standard_errors_by_input
        se_buffer = parts.se_buffer if shared is not None else None
        self._state = _State(
            names=names_t,
            point=point.copy(),
            theta=kept,  # type: ignore[arg-type]  # None: the columns by the caller's digests
            options={key: value for key, value in options.items() if key not in _NOT_COMPARED},
            bounds=parts.bounds,
            ranks=parts.ranks,
            higher_is_better=bool(options.get("higher_is_better")),
            maxt=parts.maxt,
            maxt_key=parts.maxt_key,
            jackknife=None if jack is None or digests is not None else np.array(jack, dtype=np.float64),
            gram=None,
            se=shared,
            se_buffer=se_buffer,
            se_order=None,
            column_sd=parts.sd,
            leader=parts.leader,
            leader_se=parts.leader_se,
            leader_p=parts.leader_p,
            degenerate=parts.flat,
            theta_buffer=buffer,
            # the buffer as the board left it: its deviations, unless the kept replicates were copied into it
            deviations=parts.deviations if digests is not None and buffer is parts.scratch else None,
            var=parts.var,
            means=parts.means,
            exponents=parts.exponents,
            counts=parts.counts,
            rank_low=parts.rank_low,
            rank_high=parts.rank_high,
            rank_confidence=parts.rank_confidence,
            rows=int(theta.shape[0]) if digests is not None else None,
            column_digests=digests,
            step_levels=parts.step_levels,
            step_bounds=parts.step_bounds,
            verdict_worse=None if parts.verdict_blocks is None else parts.verdict_blocks[0],
            verdict_compared=None if parts.verdict_blocks is None else parts.verdict_blocks[1],
            decided_lowest=parts.lowest if parts.verdict_blocks is not None else None,
            spares=[base for base in (_spare(board.rank_probabilities),) if base is not None],
            # a state of digests says whether its columns had a jackknife (the digests say which)
            jackknife_digest=None if digests is None or jack is None else "in the column digests",
        )
        return board

    @staticmethod
    def column_digest(replicates: npt.ArrayLike, jackknife: npt.ArrayLike | None) -> str:
        """The digest of one entry's column (its replicates and jackknife column, as float64), as
        :meth:`build` takes it in ``column_digests``: BLAKE2b of the shape and bytes of both."""
        h = hashlib.blake2b(digest_size=32)
        for part in (replicates, jackknife):
            if part is None:
                h.update(b"none;")
                continue
            x = np.ascontiguousarray(part, dtype=np.float64).reshape(-1)
            h.update(f"{x.shape[0]};".encode())
            h.update(x.data)
        return h.hexdigest()

    def _appended(
        self,
        names: tuple[str, ...],
        point: FloatArray,
        theta: FloatArray,
        options: dict[str, Any],
        digests: tuple[str, ...] | None = None,
    ) -> tuple[list[int], int] | None:
        """The columns of the previous entries (in their order, which must be kept) and of the new one, or
        None: a full rebuild."""
        prev = self._state
        if prev is None or prev.consumed or len(names) != len(prev.names) + 1 or theta.ndim != 2:
            return None
        if (digests is None) != (prev.column_digests is None):
            return None  # the previous columns are known by their digests only, or the caller gives none
        rows = prev.theta.shape[0] if prev.theta is not None else prev.rows
        if theta.shape != (rows, len(names)) or point.shape != (len(names),):
            return None
        stored = {key: value for key, value in options.items() if key not in _NOT_COMPARED}
        if prev.options_digest is not None:  # a restored state: its options by their digest
            if _options_digest(stored) != prev.options_digest:
                return None
        elif stored.keys() != prev.options.keys() or not all(
            _same_option(stored[key], prev.options[key]) for key in stored
        ):
            return None
        position = {name: i for i, name in enumerate(names)}
        if len(position) != len(names) or not all(name in position for name in prev.names):
            return None
        old = [position[name] for name in prev.names]
        if any(a >= b for a, b in itertools.pairwise(old)):
            return None  # the previous entries in another order
        previous_names = set(prev.names)  # once, not per name (K = 10,000: 2.7 s of CPU)
        new = next(i for i in range(len(names)) if names[i] not in previous_names)
        if not np.array_equal(point[old], prev.point):
            return None
        jack = options.get("jackknife")
        if digests is not None:  # the caller's digests stand for the columns; the new one's is checked here
            if [digests[i] for i in old] != list(prev.column_digests or ()):
                return None
            if (jack is None) != (prev.jackknife_digest is None):
                return None
            if jack is not None and (np.ndim(jack) != 2 or np.shape(jack)[1] != len(names)):
                return None
            return (old, new) if _new_columns_match(digests, theta, jack, [new]) else None
        in_order = old == list(range(len(old)))
        previous_theta = theta[:, : len(old)] if in_order else theta[:, old]
        if prev.theta is None:  # a restored state: the previous replicates by their digest
            if _array_digest(previous_theta) != prev.theta_digest:
                return None
        elif not _same_rows(previous_theta, prev.theta):
            return None
        jack = options.get("jackknife")
        restored = prev.theta is None
        if (jack is None) != ((prev.jackknife_digest if restored else prev.jackknife) is None):
            return None
        if jack is not None:
            jack = np.asarray(jack, dtype=np.float64)
            if jack.ndim != 2 or jack.shape[1] != len(names):
                return None
            if restored:
                if _array_digest(jack[:, old]) != prev.jackknife_digest:
                    return None
            elif prev.jackknife is None or not np.array_equal(jack[:, old], prev.jackknife):
                return None
        return old, new

    # -- sharing the state between processes (rankings.board_state) -------------------------------
    def export(self) -> dict[str, Any] | None:
        """What the next build needs from this board, as plain values and arrays (no objects, no code), for
        another process to :meth:`restore`; None when there is no board or its options cannot be told
        apart by value (a callable other than a named function or method).

        The replicates and the jackknife are not in it (the next build passes them again: the stored
        scores'): their SHA-256 digests are, so a restored state is used only for the very same arrays. The
        Gram matrix is stored as its lower triangle (it is symmetric to the bit)."""
        st = self._state
        if st is None:
            return None
        restored = st.theta is None and st.options_digest is not None
        options_digest = st.options_digest if restored else _options_digest(st.options)
        if options_digest is None:
            return None
        if st.column_digests is not None:  # the columns by their digests: no O(B K) digest here
            theta_digest, jack_digest = "", st.jackknife_digest
        else:
            theta_digest = st.theta_digest if st.theta is None else _array_digest(st.theta)
            jack_digest = (
                st.jackknife_digest
                if st.theta is None
                else (None if st.jackknife is None else _array_digest(st.jackknife))
            )
        maxt = st.maxt
        return {
            "names": list(st.names),
            "point": st.point,
            "rows": st.rows if st.theta is None else int(st.theta.shape[0]),
            "column_digests": None if st.column_digests is None else list(st.column_digests),
            "options_digest": options_digest,
            "theta_digest": theta_digest,
            "jackknife_digest": jack_digest,
            "bounds": [[m, float(c), bool(j), lo, hi] for (m, c, j), (lo, hi) in st.bounds.items()],
            # a copy: the next appended entry updates the state's ranks in place (a caller may keep this)
            "ranks": None if st.ranks is None else np.array(st.ranks),
            "higher_is_better": st.higher_is_better,
            "maxt": None
            if maxt is None
            else {
                "level": float(maxt.level),
                "pair_j": maxt.pair_j,
                "pair_k": maxt.pair_k,
                "rows": maxt.rows,
                "z": maxt.z,
            },
            "maxt_key": None if st.maxt_key is None else [float(st.maxt_key[0]), bool(st.maxt_key[1])],
            "gram": None if st.gram is None else _lower_triangle(st.gram),
            # the pairs' standard errors (exactly symmetric: the lower triangle) and what a new entry's
            # row and column of them need; the rank counts are not exported (recounted from the ranks)
            "se": None if st.se is None else _lower_triangle(st.se),
            "se_order": st.se_order,
            "var": st.var,
            "means": st.means,
            "exponents": st.exponents,
        }

    @classmethod
    def restore(cls, data: dict[str, Any]) -> BoardCache:
        """A cache holding the board :meth:`export` gave (in another process): its next :meth:`build` with
        the same entries plus one takes the update path, exactly as in the process that built it."""
        names = tuple(str(n) for n in data["names"])
        maxt = data.get("maxt")
        cache = cls()
        cache._state = _State(
            names=names,
            point=np.asarray(data["point"], dtype=np.float64),
            theta=None,  # type: ignore[arg-type]  # restored: by its digest until the next build
            options={},
            bounds={
                (str(m), float(c), bool(j)): (np.asarray(lo, np.float64), np.asarray(hi, np.float64))
                for m, c, j, lo, hi in data["bounds"]
            },
            ranks=None if data.get("ranks") is None else np.asarray(data["ranks"]),
            higher_is_better=bool(data["higher_is_better"]),
            maxt=None
            if maxt is None
            else MaxTState(
                level=float(maxt["level"]),
                pair_j=np.asarray(maxt["pair_j"], dtype=np.intp),
                pair_k=np.asarray(maxt["pair_k"], dtype=np.intp),
                rows=np.asarray(maxt["rows"], dtype=np.intp),
                z=np.asarray(maxt["z"], dtype=np.float64),
            ),
            maxt_key=None
            if data.get("maxt_key") is None
            else (float(data["maxt_key"][0]), bool(data["maxt_key"][1])),
            jackknife=None,
            gram=None
            if data.get("gram") is None
            else _from_lower_triangle(np.asarray(data["gram"]), len(names)),
            se=None if data.get("se") is None else _from_lower_triangle(np.asarray(data["se"]), len(names)),
            se_order=None if data.get("se_order") is None else np.asarray(data["se_order"], dtype=np.intp),
            var=None if data.get("var") is None else np.asarray(data["var"], dtype=np.float64),
            means=None if data.get("means") is None else np.asarray(data["means"], dtype=np.float64),
            exponents=None
            if data.get("exponents") is None
            else np.asarray(data["exponents"], dtype=np.int32),
            theta_digest=str(data["theta_digest"]),
            jackknife_digest=None if data.get("jackknife_digest") is None else str(data["jackknife_digest"]),
            options_digest=str(data["options_digest"]),
            rows=None if data.get("rows") is None else int(data["rows"]),
            column_digests=None
            if data.get("column_digests") is None
            else tuple(str(d) for d in data["column_digests"]),
        )
        cache.last = "restored"
        return cache


def _new_columns_match(digests: Sequence[str], theta: FloatArray, jackknife: Any, columns: Any) -> bool:
    """Whether these columns' digests are those of their replicates and jackknife columns."""
    jack = None if jackknife is None else np.asarray(jackknife, dtype=np.float64)
    return all(
        digests[j] == BoardCache.column_digest(theta[:, j], None if jack is None else jack[:, j])
        for j in columns
    )


def _array_digest(a: npt.ArrayLike) -> str:
    """SHA-256 of a float64 array's shape and bytes (C order)."""
    x = np.ascontiguousarray(a, dtype=np.float64)
    h = hashlib.sha256(repr(x.shape).encode())
    h.update(x.data)  # C-contiguous: its buffer, not a copy
    return h.hexdigest()


def _option_token(value: Any) -> bytes | None:
    """An option as bytes that another process computes alike for an equal option; None if it cannot be."""
    if value is None or isinstance(value, bool | int | float | str | np.generic):
        return f"{type(value).__name__}:{value!r}".encode()
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return None
        a = np.ascontiguousarray(value)
        return f"array:{a.dtype.str}:{a.shape}:".encode() + hashlib.sha256(a.data).digest()
    if isinstance(value, list | tuple):
        parts = [_option_token(v) for v in value]
        return None if any(p is None for p in parts) else b"[" + b",".join(parts) + b"]"  # type: ignore[arg-type]
    if isinstance(value, dict):
        items = [(str(k).encode(), _option_token(v)) for k, v in sorted(value.items())]
        if any(t is None for _, t in items):
            return None
        return b"{" + b",".join(k + b"=" + t for k, t in items if t is not None) + b"}"
    if isinstance(value, types.FunctionType) and "<" not in value.__qualname__:
        return f"function:{value.__module__}.{value.__qualname__}".encode()  # a named function, not a closure
    if isinstance(value, types.MethodType) and isinstance(value.__func__, types.FunctionType):
        owner = _option_token(value.__self__)
        return None if owner is None else f"method:{value.__func__.__qualname__}:".encode() + owner
    if is_dataclass(value) and not isinstance(value, type):
        parts = [_option_token(getattr(value, f.name)) for f in fields(value) if f.compare]
        if any(p is None for p in parts):
            return None
        return f"{type(value).__module__}.{type(value).__qualname__}(".encode() + b",".join(parts) + b")"  # type: ignore[arg-type]
    return None


def _options_digest(options: dict[str, Any]) -> str | None:
    token = _option_token(dict(options))
    return None if token is None else hashlib.sha256(token).hexdigest()


def _lower_triangle(m: FloatArray) -> FloatArray:
    """The lower triangle of a square matrix, row by row (no index arrays: K = 5,000 would need 0.2 GB)."""
    k = m.shape[0]
    out = np.empty(k * (k + 1) // 2)
    at = 0
    for i in range(k):
        out[at : at + i + 1] = m[i, : i + 1]
        at += i + 1
    return out


def _from_lower_triangle(t: FloatArray, k: int) -> FloatArray:
    """The symmetric matrix whose lower triangle :func:`_lower_triangle` gave."""
    if t.shape != (k * (k + 1) // 2,):
        raise ValueError(f"a lower triangle of {k} rows has {k * (k + 1) // 2} elements, not {t.shape}")
    out = np.empty((k, k))
    at = 0
    for i in range(k):
        out[i, : i + 1] = t[at : at + i + 1]
        out[: i + 1, i] = t[at : at + i + 1]
        at += i + 1
    return out
