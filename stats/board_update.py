"""The board of a task updated for one new entry, with the numbers of a full rebuild (issue 14).

A :class:`BoardCache` is kept per task (and metric). :meth:`BoardCache.build` takes exactly the arguments of
:func:`stats.board.build_board` and returns the same :class:`~stats.board.Board`. The first call computes
everything and keeps what the costly parts need; a later call whose entries are the previous ones (same
names, values and replicate columns, same options, in the same relative order) plus **one new entry**,
at any position, reuses them:

- **value intervals**: every interval is a function of its own column; the old ones are kept, the new
  one is computed;
- **rank distribution**: the previous ranks of every (resample, entry) are kept (B x K, 16-bit); the new
  entry moves an old entry down by one in the resamples where it is strictly better, and its own rank
  is the count of entries strictly better than it (ties share the smallest rank, as in the full
  count), so the counts are the same integers;
- **max-t sets**: the per-resample maxima of the first step come from the previous board's list of
  every (pair, resample) statistic at or above a level ``lambda`` plus the new pairs' statistics at or
  above it (O(B K), dense): no pruned search over the pairs. The step-down then runs exactly as in the
  full rebuild: a quantile at or above ``lambda`` is exact (the count of maxima above any
  ``x >= lambda`` is the true count), and a quantile below it lowers the level and searches again, as
  the full rebuild does.

What the full rebuild computes in O(B K) anyway (differences to the leader, their tests, standard
deviations) is computed again; what is O(K^2) elementwise (standard errors from the Gram matrix,
observed statistics, verdicts) too. At K = 1,000, N = B = 10,000 (bootstrap p-values) the update takes
0.33-0.43 s of CPU against 0.94 s for the full rebuild (docs/benchmarks.md, "Scale"). The test against the
leader is recomputed too: McNemar's is O(N K), but approximate randomization is O(R N K) (1.2 s of CPU at
K = 1,000, R = 10,000), so a board tested by randomization gains less (keeping each entry's count while
the leader stays would need the swap products to round alike for any number of columns, the same
question as the Gram matrix's below).

**Equal bits.** Every step is the full rebuild's, on the same arrays, but one: the Gram matrix of the
pairwise standard errors (O(B K^2) in the full rebuild) is the previous board's plus one column, a
matrix-vector product of the new column with the others (:func:`_extend_gram`, O(B K)). That is exact on
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
(the rank table, the Gram matrix's lower triangle, the exceedance list, the intervals; the replicates,
jackknife and options only by their SHA-256 digests) and :meth:`BoardCache.restore` makes a cache of it in
another process, whose next build with the same entries plus one takes the update path; the replicates and
options it is given are checked against the digests, so it gives the full rebuild's board or rebuilds in
full (``tests/stats/test_board_state_shared.py``; the service stores it: ``leaderboard.rankings.board_state``).
"""

from __future__ import annotations

import hashlib
import itertools
import types
from collections.abc import Sequence
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from stats.board import Board, build_board
from stats.compare_ranks import (
    MaxTState,
    RankDistribution,
    SimultaneousRanks,
    _exact_gram,
    _gram_blocks,
    _rank_counts,
    _rank_dtype,
    _rank_table,
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
#: Elements of the new pairs' statistics computed at once.
_PAIR_CHUNK = 1 << 21


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
    #: the caller's per-column digests (:meth:`BoardCache.column_digest`), when it gave them: they stand for
    #: the replicates and jackknife (``theta`` and ``jackknife`` are then None, ``rows`` holds B)
    column_digests: tuple[str, ...] | None = None


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
        self.maxt: MaxTState | None = None
        self.maxt_key: tuple[float, bool] | None = None
        self.gram: FloatArray | None = None

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
        if prev is None or theta is not self.theta:
            lo, hi = bootstrap_bounds(
                theta, point=point, method=method, confidence=confidence, jackknife=jackknife
            )
        else:
            new = [self.new, self.new]  # two columns: the column reductions run as in the full array
            lo_n, hi_n = bootstrap_bounds(
                theta[:, new],
                point=point[new],
                method=method,
                confidence=confidence,
                jackknife=None if jackknife is None else jackknife[:, new],
            )
            lo = np.empty(theta.shape[1])
            hi = np.empty(theta.shape[1])
            lo[self.old], hi[self.old] = prev
            lo[self.new], hi[self.new] = lo_n[0], hi_n[0]
        self.bounds[key] = (lo, hi)
        return lo, hi

    # -- rank distribution ------------------------------------------------------------------------
    def rank_distribution(
        self, theta: FloatArray, *, higher_is_better: bool, confidence: float
    ) -> RankDistribution:
        prev = self.previous
        if (
            prev is None
            or theta is not self.theta
            or prev.ranks is None
            or prev.higher_is_better != higher_is_better
        ):
            counts, ranks = _rank_counts(theta, higher_is_better=higher_is_better, keep=True)
        else:
            counts, ranks = _add_rank_column(
                theta, prev.ranks, self.old, self.new, higher_is_better=higher_is_better
            )
        self.ranks = ranks
        # the probabilities take the counts' memory, as in the full computation: the next board recounts
        # from the ranks (issue 24: a second K x K array, 0.8 GB at K = 10,000, was kept and never read)
        return _rank_table(counts, theta.shape[0], confidence, in_place=True)

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
        reuse = prev is not None and theta is self.theta and prev.maxt_key == key
        y = theta - point  # the deviations, as the full computation forms them
        # every element of z^T z is exact: the same bits in any product (see "Equal bits"); its operand z is
        # formed block by block from y, as the full computation does (no second B x K array)
        if reuse and prev is not None and prev.gram is not None:
            gram, means = _extend_gram(prev.gram, y, self.old, self.new)
        else:
            gram, means = _exact_gram(y)  # the full computation's product
        self.gram = gram.copy()
        standard_errors = _standard_errors_from_gram(gram, means, theta.shape[0], in_place=True)
        if reuse and prev is not None and prev.maxt is not None and np.isfinite(prev.maxt.level):
            preload = _add_pairs(prev.maxt, y, standard_errors[0], self.old, self.new)
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
        )
        self.maxt, self.maxt_key = state, key
        return result


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


def _add_rank_column(
    theta: FloatArray,
    ranks: npt.NDArray[np.integer],
    old: npt.NDArray[np.intp],
    new: int,
    *,
    higher_is_better: bool,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.integer]]:
    """Ranks (0-based, ties sharing the smallest) and their (K+1, K+1) counts with column ``new`` added;
    ``ranks`` are the previous board's, its columns at ``old``."""
    b, k1 = theta.shape
    out = np.empty((b, k1), dtype=_rank_dtype(k1))
    counts = np.zeros(k1 * k1, dtype=np.int64)
    step = max(1, _COUNT_CHUNK // k1)
    offsets = np.arange(k1, dtype=np.int64) * k1
    in_order = bool(np.array_equal(old, np.arange(k1 - 1)))
    for r0 in range(0, b, step):
        rows = theta[r0 : r0 + step]
        others = rows[:, : k1 - 1] if in_order else rows[:, old]
        mine = rows[:, new : new + 1]
        beaten = others < mine if higher_is_better else others > mine  # the new entry strictly better
        ahead = others > mine if higher_is_better else others < mine  # strictly better than the new entry
        block = out[r0 : r0 + step]
        moved = ranks[r0 : r0 + step] + beaten.astype(out.dtype)
        if in_order:
            block[:, : k1 - 1] = moved
        else:
            block[:, old] = moved
        block[:, new] = ahead.sum(axis=1)
        # unbuffered add, as the full count: a bincount allocates and adds all K^2 counts per chunk (K =
        # 10,000: 0.8 GB for each of 24 chunks)
        np.add.at(counts, (block + offsets).ravel(), 1)
    return counts.reshape(k1, k1), out


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
    block = np.empty((b, min(step, k1)))
    for c0 in range(0, k1, step):
        c1 = min(k1, c0 + step)
        d = np.subtract(y[:, c0:c1], y_new, out=block[:, : c1 - c0])  # (B, c): rows of y, no transpose
        np.abs(d, out=d)
        bi, pi = np.nonzero(d >= bound[c0:c1])
        z = d[bi, pi] / se_new[c0 + pi]
        hit = z >= level
        bi, pi, z = bi[hit], pi[hit] + c0, z[hit]
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


class BoardCache:
    """The incremental board of one task: :meth:`build` returns :func:`stats.board.build_board`'s board.

    Keep one per task and metric, in the process that rebuilds the task's boards. Memory: the replicates
    (B x K float64), their ranks (B x K, 16-bit), the Gram matrix (K x K float64) and the exceedance list;
    at K = 1,000, B = 10,000 about 110 MB.
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
        board = build_board(names=names_t, values=point, replicates=theta, _parts=parts, **options)
        self.last = "incremental" if previous is not None else "full"
        jack = options.get("jackknife")
        if (
            digests is not None
            and found is None
            and not _new_columns_match(digests, theta, jack, range(len(names_t)))
        ):
            digests = None  # a full build whose digests are not its columns': kept as without digests
        self._state = _State(
            names=names_t,
            point=point.copy(),
            theta=None if digests is not None else theta if theta is not replicates else theta.copy(),  # type: ignore[arg-type]
            options={key: value for key, value in options.items() if key not in _NOT_COMPARED},
            bounds=parts.bounds,
            ranks=parts.ranks,
            higher_is_better=bool(options.get("higher_is_better")),
            maxt=parts.maxt,
            maxt_key=parts.maxt_key,
            jackknife=None if jack is None or digests is not None else np.array(jack, dtype=np.float64),
            gram=parts.gram,
            rows=int(theta.shape[0]) if digests is not None else None,
            column_digests=digests,
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
        if prev is None or len(names) != len(prev.names) + 1 or theta.ndim != 2:
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
        elif not np.array_equal(previous_theta, prev.theta):
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
            "ranks": st.ranks,
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
