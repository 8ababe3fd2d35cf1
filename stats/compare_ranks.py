"""Rank intervals and the set of entries that may be the best, from the paired replicate matrix.

Given the replicate matrix ``theta`` (B x K; every entry resampled with the same weights, so the rows are
paired) and the point values (K,):

- :func:`min_ranks` ranks values with ties sharing the best (smallest) rank ("competition" ranking:
  1, 2, 2, 4); rank 1 is the best whatever the metric's direction;
- :func:`rank_distribution` ranks every resample and tabulates, for each entry, how often it held each
  rank (the marginal rank distribution, K x K), with equal-tailed percentile bounds;
- :func:`simultaneous_ranks` builds the simultaneous confidence set for all pairwise differences with the
  bootstrap max-t critical value (Mogstad, Romano, Shaikh & Wilhelm 2024) and projects it onto ranks and
  onto the set of entries that may be the best.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.linalg.blas import dsyrk as _syrk
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.special import ndtri

from stats._threads import board_threads, in_blocks, in_order, with_blas_threads
from stats.checks import check_level, check_replicates, check_vector

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: Elements (resamples x entries) ranked at once by :func:`rank_distribution`.
_RANK_CHUNK_ELEMENTS = 1 << 20

__all__ = [
    "RankDistribution",
    "SimultaneousRanks",
    "min_ranks",
    "rank_distribution",
    "simultaneous_ranks",
]


def min_ranks(values: npt.ArrayLike, *, higher_is_better: bool) -> IntArray:
    """Rank along the last axis, 1 = best, ties sharing the smallest rank (1, 2, 2, 4).

    ``rank_j = 1 + #{k : value_k strictly better than value_j}``. Works on (K,) or (B, K) arrays in
    ``O(B K log K)``.

    Examples
    --------
    >>> min_ranks([0.9, 0.8, 0.9, 0.7], higher_is_better=True).tolist()
    [1, 3, 1, 4]
    """
    x = np.asarray(values, dtype=np.float64)
    one = x.ndim == 1
    x2 = x[None, :] if one else x
    if x2.ndim != 2:
        raise ValueError("`values` must have shape (K,) or (B, K).")
    keyed = -x2 if higher_is_better else x2  # ascending order of `keyed` = best first
    order = np.argsort(keyed, axis=1)  # ties share the smallest rank, so stability does not matter
    ordered = np.take_along_axis(keyed, order, axis=1)
    k = x2.shape[1]
    fresh = np.ones_like(ordered, dtype=bool)
    fresh[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    position = np.where(fresh, np.arange(k), 0)
    first = np.maximum.accumulate(position, axis=1) + 1
    ranks = np.empty_like(first)
    np.put_along_axis(ranks, order, first, axis=1)
    ranks = ranks.astype(np.int64)
    return ranks[0] if one else ranks


@dataclass(frozen=True)
class RankDistribution:
    """The marginal rank distribution over bootstrap resamples.

    Attributes
    ----------
    probabilities : numpy.ndarray, shape (K, K)
        ``probabilities[k, r]`` is the share of resamples in which entry ``k`` held rank ``r + 1``
        (ties sharing the smallest rank, see :func:`min_ranks`). Rows sum to 1.
    low, high : numpy.ndarray of int, shape (K,)
        Equal-tailed percentile bounds of each entry's rank: the ``(1 - confidence) / 2`` and
        ``(1 + confidence) / 2`` quantiles of its rank distribution (inverse of the empirical CDF).
        Marginal: each interval on its own covers the entry's rank about ``confidence`` of the time;
        together they do not (see :func:`simultaneous_ranks`).
    confidence : float
    """

    probabilities: FloatArray
    low: IntArray
    high: IntArray
    confidence: float


def rank_distribution(
    theta: npt.ArrayLike, *, higher_is_better: bool, confidence: float = 0.95
) -> RankDistribution:
    """Rank every bootstrap resample and tabulate the ranks of each entry.

    Parameters
    ----------
    theta : array_like, shape (B, K)
        Paired replicates (same resample weights for every entry).
    higher_is_better : bool
        Direction of the metric.
    confidence : float, default 0.95
        Level of the percentile rank bounds.

    Returns
    -------
    RankDistribution

    References
    ----------
    .. [1] Hall, P. & Miller, H. (2009). Using the bootstrap to quantify the authority of an empirical
       ranking. *The Annals of Statistics* 37(6B), 3929-3959.

    Examples
    --------
    >>> import numpy as np
    >>> theta = np.random.default_rng(1).normal([0.80, 0.79, 0.70], 0.01, size=(2000, 3))
    >>> rd = rank_distribution(theta, higher_is_better=True)
    >>> rd.low.tolist(), rd.high.tolist()
    ([1, 1, 3], [2, 2, 3])
    """
    x = check_replicates(theta, name="theta")
    confidence = check_level(confidence, name="confidence")
    counts, _ = _rank_counts(x, higher_is_better=higher_is_better)
    return _rank_table(counts, x.shape[0], confidence, in_place=True)


def _rank_dtype(k: int) -> type[np.integer]:
    """The smallest integer type that holds ranks 0..k-1 (the stored ranks of the incremental board)."""
    return np.int16 if k < 2**15 else np.int32


def _rank_counts(
    x: FloatArray,
    *,
    higher_is_better: bool,
    keep: bool = False,
    ranks_out: npt.NDArray[np.integer] | None = None,
) -> tuple[IntArray, npt.NDArray[np.integer] | None]:
    """The (K, K) counts of (entry, rank - 1) over the resamples; with ``keep`` also every rank - 1 (B, K),
    written into ``ranks_out`` when given (a (B, K) integer array wide enough for K ranks)."""
    b, k = x.shape
    # Rank the resamples in row chunks: the counts are the same, and memory stays O(chunk x K) instead of
    # several B x K int64 temporaries (K = 1,000, B = 10,000: about 0.6 GB at once).
    counts = np.zeros(k * k, dtype=np.int64)
    ranks = (np.empty((b, k), dtype=_rank_dtype(k)) if ranks_out is None else ranks_out) if keep else None
    step = max(1, _RANK_CHUNK_ELEMENTS // k)
    offsets = np.arange(k, dtype=np.int64) * k

    def ranked(start: int) -> IntArray:
        """The chunk of resamples start.. ranked: its (entry, rank) indices into the counts, entry by entry
        (chunks on the board's threads; the counts are added by the caller, in any order: integers)."""
        keyed = -x[start : start + step] if higher_is_better else x[start : start + step]
        # Sorted order of each resample; tied entries share the rank of the first of them, so the
        # (faster, unstable) default argsort gives the same ranks as a stable one.
        order = np.argsort(keyed, axis=1)
        ordered = np.take_along_axis(keyed, order, axis=1)
        fresh = np.ones(ordered.shape, dtype=bool)
        fresh[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
        first = np.maximum.accumulate(np.where(fresh, np.arange(k), 0), axis=1)
        # the ranks put back in entry order, then counted entry by entry (the chunk transposed): each
        # entry's row of counts is touched by all its resamples of the chunk at once, instead of the
        # (entry, rank) pairs in sorted order, which jumped across the K x K counts for every element
        # (K = 10,000, mix: 3.0 s of random reads of 763 MiB against 1.4 s; issue 24, fifth pass).
        if ranks is not None:
            chunk = ranks[start : start + step]
        else:
            chunk = np.empty(order.shape, dtype=_rank_dtype(k))
        np.put_along_axis(chunk, order, first, axis=1)
        return (chunk.T + offsets[:, None]).ravel()

    # the chunks ranked on the board's threads while this thread adds the previous ones (the add holds the
    # GIL and is a third of the work: before, the pool waited for it; the counts are integers, the same in
    # any order, and are added in the chunks' order anyway)
    for indices in in_order(ranked, range(0, b, step)):
        # unbuffered add: a bincount would allocate and add all K^2 counts per chunk (K = 5,000: 200 MB)
        np.add.at(counts, indices, 1)
    return counts.reshape(k, k), ranks


def _rank_table(counts: IntArray, b: int, confidence: float, *, in_place: bool = False) -> RankDistribution:
    """The :class:`RankDistribution` of rank counts over ``b`` resamples; with ``in_place`` the
    probabilities take the counts' memory (K = 10,000: the two K x K arrays were 1.5 GB at once)."""
    k = counts.shape[0]
    tail = (1 - confidence) / 2
    low = np.empty(k, dtype=np.int64)
    high = np.empty(k, dtype=np.int64)
    probabilities = counts.view(np.float64) if in_place else np.empty((k, k))

    # smallest rank r whose cumulative count reaches q * B (inverse of the empirical CDF), in row blocks
    # (K = 5,000: the cumulative counts and each comparison were a K x K temporary of 200 or 25 MB)
    def block(r0: int) -> None:  # rows r0.. (read and written by this block alone; on the board's threads)
        rows = counts[r0 : r0 + 256]
        cumulative = np.cumsum(rows, axis=1)
        low[r0 : r0 + 256] = np.argmax(cumulative >= tail * b - 1e-9, axis=1) + 1
        high[r0 : r0 + 256] = np.argmax(cumulative >= (1 - tail) * b - 1e-9, axis=1) + 1
        # the block's counts are read (divided into a temporary) before its memory takes the quotients
        probabilities[r0 : r0 + 256] = rows / b

    in_blocks(block, range(0, k, 256))
    return RankDistribution(
        probabilities=probabilities,
        low=low,
        high=high,
        confidence=confidence,
    )


@dataclass(frozen=True)
class SimultaneousRanks:
    """Simultaneous confidence sets for all ranks and for the identity of the best entry.

    Attributes
    ----------
    lower, upper : numpy.ndarray of int, shape (K,)
        Rank bounds: ``lower_j = 1 + #{k significantly better than j}``,
        ``upper_j = K - #{k significantly worse than j}``. Jointly for all j they contain the true
        ranks with probability about ``confidence``.
    best : numpy.ndarray of bool, shape (K,)
        The confidence set for the best entry: entries that no other entry is significantly better
        than (``lower == 1``). It contains the truly best entry with probability about ``confidence``,
        although the observed leader was picked from the same data.
    better : numpy.ndarray of bool, shape (K, K)
        ``better[j, k]``: entry ``j`` is significantly better than entry ``k``.
    critical_value : float
        The max-t critical value of the last step.
    standard_errors : numpy.ndarray, shape (K, K)
        Bootstrap standard errors of the pairwise differences.
    steps : int
        Number of step-down iterations (1 for the single-step procedure).
    confidence : float
    """

    lower: IntArray
    upper: IntArray
    best: BoolArray
    better: BoolArray
    critical_value: float
    standard_errors: FloatArray
    steps: int
    confidence: float


def _gram_bits(b: int) -> int:
    """Bits kept per deviation by :func:`_gram_operand` for ``b`` resamples: ``2 s + ceil(log2 b) <= 53``,
    so a sum of ``b`` products of two such numbers is an integer of at most 53 bits (19 for b = 10,000)."""
    return (53 - max(1, math.ceil(math.log2(max(b, 2))))) // 2


def _gram_exponents(y: FloatArray) -> npt.NDArray[np.int32]:
    """Per column ``e_j`` with ``max |y_j| = f 2^e_j``, ``0.5 <= f < 1`` (0 for a zero column): the grid of
    :func:`_gram_operand` (its maximum is exact in any order, so the grid depends on the column alone)."""
    # by row blocks on the board's threads: a maximum and a minimum, exact in any order (issue 24: two
    # passes of one thread over the 763 MiB of deviations at K = N = B = 10,000)
    step = max(1, _GRAM_BLOCK // max(y.shape[1], 1))
    high, low = np.zeros(y.shape[1]), np.zeros(y.shape[1])  # the reductions' initial 0.0
    for block_high, block_low in in_blocks(
        lambda r0: (y[r0 : r0 + step].max(axis=0, initial=0.0), y[r0 : r0 + step].min(axis=0, initial=0.0)),
        range(0, y.shape[0], step),
    ):
        np.maximum(high, block_high, out=high)
        np.minimum(low, block_low, out=low)
    _, e = np.frexp(np.maximum(high, -low))
    return e


def _gram_operand(
    y: FloatArray, *, in_place: bool = False, exponents: npt.NDArray[np.int32] | None = None
) -> FloatArray:
    """``y`` rounded, column by column, to a grid that makes ``z^T z`` exact: a copy (or ``y`` itself).

    Column ``j`` is rounded to the nearest multiple of ``q_j = 2^(e_j - s)``, where ``2^e_j`` is the
    smallest power of two above ``max |y_j|`` and ``s`` is :func:`_gram_bits` (19 at B = 10,000): each
    element is ``m q_j`` with an integer ``|m| <= 2^s``, every product ``z_bi z_bj`` is an integer multiple
    of ``q_i q_j`` below ``2^(2s)`` of them and every partial sum of ``b`` products is below ``2^53`` of
    them, so **the BLAS computes every element of ``z^T z`` exactly, in any order, with any kernel, in any
    blocking**: the Gram matrix is a function of the two columns alone (issue 24: the incremental board's
    Gram matrix no longer depends on how a BLAS rounds; under OpenBLAS's SkylakeX kernels it did). The
    rounding moves each deviation by at most ``2^-(s+1)`` of its column's largest one (about 4e-6 of its
    standard deviation at B = 10,000), far below the bootstrap's own Monte-Carlo error of a standard error
    (about ``1 / sqrt(2 B)``, 0.7%); the rule depends on the column only (its maximum is exact in any order).

    ``exponents`` (:func:`_gram_exponents` of a larger array whose rows these are) round the rows as that
    array is rounded; :func:`_gram_blocks` does so block by block.
    """
    return _rounded(
        y, _gram_bits(y.shape[0]), _gram_exponents(y) if exponents is None else exponents, in_place
    )


def _rounded(y: FloatArray, s: int, e: npt.NDArray[np.int32], in_place: bool) -> FloatArray:
    if in_place:
        z = y
        z *= np.ldexp(1.0, s - e)  # exact: a power of two
    else:
        z = y * np.ldexp(1.0, s - e)
    np.rint(z, out=z)
    z *= np.ldexp(1.0, e - s)
    return z


#: Elements of the Gram operand formed at once by :func:`_exact_gram` (64 MiB of float64).
_GRAM_BLOCK = 1 << 23


def _gram_blocks(y: FloatArray, *, elements: int = _GRAM_BLOCK) -> Iterator[tuple[slice, FloatArray]]:
    """:func:`_gram_operand` of ``y`` in row blocks (each a fresh array of at most ``elements``): the same
    numbers as the whole operand's rows, without a second B x K array (K = N = B = 10,000: 763 MiB)."""
    b, k = y.shape
    s = _gram_bits(b)
    e = _gram_exponents(y)
    step = max(1, elements // max(k, 1))
    for r0 in range(0, b, step):
        rows = slice(r0, min(b, r0 + step))
        yield rows, _rounded(y[rows], s, e, in_place=False)


#: Elements of the Gram operand rounded at once inside a block (512 KiB of float64: the piece stays in the
#: cache through the rounding's three passes and its column sums, instead of four passes over 64 MiB).
_ROUND_PIECE = 1 << 16
#: Pieces of the Gram operand rounded per task of the board's threads (:func:`stats._threads.in_blocks`).
_ROUND_SPAN = 16


def _exact_gram(y: FloatArray, *, side: int | None = None) -> tuple[FloatArray, FloatArray]:
    """``z^T z`` and the column means of ``z``, ``z`` :func:`_gram_operand` of ``y``, formed in row blocks:
    every element of every block's product and of their sums is an integer multiple of ``q_i q_j`` below
    ``2^53`` of them (the bound holds for any partial sum of the ``B`` products), so the sum of the
    blocks' products is exact, the same bits as the one product of the whole operand on any BLAS; so are
    the column sums (multiples of ``q_j`` below ``2^53``), and the means are those sums divided by ``B``
    as ``numpy.mean`` divides them. Each block is added with one ``syrk`` (one triangle, in place; the other
    is then copied): no second B x K array and no K x K temporary (K = 10,000: 763 MiB each).

    Each block is rounded into one reused buffer in cache-sized pieces (:data:`_ROUND_PIECE`), its column
    sums taken piece by piece (exact in any order, as above): the same elements as :func:`_gram_blocks`
    (the same three elementwise operations), without a fresh 64 MiB array per block nor four passes over
    it through memory (issue 24, fifth pass). The pieces are rounded in spans of :data:`_ROUND_SPAN` on the
    board's threads, their sums added in the spans' order, and the other triangle is copied by row blocks
    on them too (each block writes its own part of the upper triangle and reads the lower one): these were
    one thread's passes while the BLAS's second thread waited (issue 24, seventh pass).

    With ``side`` (at least K) the matrix is the first K^2 elements of a flat buffer of ``side^2`` (zeros
    the BLAS never touches: no page of the room is faulted in here), so that the incremental board can
    lay its table out as the first rows and columns of a square table with room, in the same memory
    (:func:`stats.board_update._square_in_place`)."""
    b, k = y.shape
    s = _gram_bits(b)
    e = _gram_exponents(y)
    up, down = np.ldexp(1.0, s - e), np.ldexp(1.0, e - s)  # powers of two: exact scalings
    # syrk's own layout (transposed below: it is symmetric)
    gram: FloatArray = (
        np.zeros((k, k), order="F")
        if side is None
        else np.zeros(max(side, k) ** 2)[: k * k].reshape((k, k), order="F")
    )
    sums = np.zeros(k)
    step = max(1, _GRAM_BLOCK // max(k, 1))
    piece = max(1, _ROUND_PIECE // max(k, 1))
    buffer = np.empty((min(step, b), k))
    span = piece * _ROUND_SPAN
    for r0 in range(0, b, step):
        r1 = min(b, r0 + step)
        z = buffer[: r1 - r0]

        def rounded(s0: int, z: FloatArray = z, r0: int = r0) -> FloatArray:
            """Rows s0.. of the block rounded into the buffer (written by this span alone, on the board's
            threads while the BLAS waits), and their column sums."""
            part_sums = np.zeros(k)
            for p0 in range(s0, min(z.shape[0], s0 + span), piece):
                part = z[p0 : p0 + piece]
                np.multiply(y[r0 + p0 : r0 + p0 + part.shape[0]], up, out=part)  # as _rounded: y 2^(s-e),
                np.rint(part, out=part)  # rounded to an integer,
                part *= down  # times 2^(e-s)
                part_sums += part.sum(axis=0)
            return part_sums

        for part_sums in in_blocks(rounded, range(0, r1 - r0, span)):
            sums += part_sums
        # C <- z^T z + C on the upper triangle of the Fortran array; z.T is Fortran-contiguous (no copy)
        gram = _syrk(1.0, z.T, beta=1.0, c=gram, trans=0, lower=0, overwrite_c=1)
    del buffer
    out = gram.T  # C-contiguous; its lower triangle is filled

    def mirrored(r0: int) -> None:
        """The upper triangle of rows ..r0 + 256 in columns r0..r0 + 256, from the lower triangle of rows
        r0..r0 + 256, which no block writes (row blocks on the board's threads)."""
        out[:r0, r0 : r0 + 256] = out[r0 : r0 + 256, :r0].T
        block = out[r0 : r0 + 256, r0 : r0 + 256]
        upper = np.triu_indices(block.shape[0], 1)
        block[upper] = block.T[upper]

    in_blocks(mirrored, range(0, k, 256))
    sums /= b
    return out, sums


def _pair_standard_errors(y: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Bootstrap standard errors of all pairwise differences and of every entry, from one Gram matrix.

    ``y`` is (B, K), the replicates minus any fixed per-entry shift (the point values): the covariance is
    ``(y^T y - B m m^T) / (B - 1)`` with ``m`` the column means, which loses nothing to cancellation
    because ``m`` (the bootstrap bias) is small next to the spread, and needs no centred copy of ``y``.
    The Gram matrix is the exact one of ``y`` rounded as :func:`_gram_operand` says, and ``m`` the means of
    the same rounded columns (:func:`_exact_gram`).
    """
    gram, means = _exact_gram(y)
    return _standard_errors_from_gram(gram, means, y.shape[0], in_place=True)


def _standard_errors_from_gram(
    gram: FloatArray, m: FloatArray, b: int, *, in_place: bool = False
) -> tuple[FloatArray, FloatArray]:
    """:func:`_pair_standard_errors` from the Gram matrix ``y^T y`` and the column means ``m`` of ``y``.

    Every element is a function of ``gram[j, k]``, ``gram[j, j]``, ``gram[k, k]``, ``m_j`` and ``m_k``
    alone, so a board with one more entry gets the same bits for the old pairs when its Gram matrix has
    them (the incremental board, :mod:`stats.board_update`).
    """
    k = gram.shape[0]
    se2 = (
        gram if in_place else gram.copy()
    )  # becomes the squared standard errors in place, row block by row block: at K = 5,000
    # every K x K temporary is 200 MB
    bm = b * m
    var = np.empty(k)
    # every pass below is by blocks of 256 rows, each written by its block alone (the blocks run on the
    # board's threads, stats._threads.in_blocks: elementwise, the same bits)

    def covariance(r0: int) -> None:
        block = se2[r0 : r0 + 256]
        block -= bm[r0 : r0 + 256, None] * m[None, :]
        block /= b - 1

    in_blocks(covariance, range(0, k, 256))
    var[:] = np.maximum(np.diag(se2), 0.0)

    def squared(r0: int) -> None:
        block = se2[r0 : r0 + 256]
        scale = var[r0 : r0 + 256, None] + var[None, :]
        block *= 2
        np.subtract(scale, block, out=block)
        # cancellation: a pair of identical entries must get exactly 0
        block[block <= 1e-10 * scale] = 0.0
        np.fill_diagonal(block[:, r0 : r0 + 256], 0.0)
        np.sqrt(block, out=block)

    in_blocks(squared, range(0, k, 256))

    # exactly symmetric: ``b m_j m_k`` is rounded differently in the two triangles (18 of 10^6 elements
    # differed in the last bit at K = 1,000), and the pruned search read whichever triangle its orientation
    # gave where the dense computation read the upper one; the lower triangle is now the upper one's copy
    # (each block writes its rows left of the diagonal and reads the upper triangle only)
    def mirrored(r0: int) -> None:
        se2[r0 : r0 + 256, :r0] = se2[:r0, r0 : r0 + 256].T
        block = se2[r0 : r0 + 256, r0 : r0 + 256]
        lower = np.tril_indices(block.shape[0], -1)
        block[lower] = block.T[lower]

    in_blocks(mirrored, range(0, k, 256))
    return se2, np.sqrt(var)


#: Relative tolerance of the max-t decision: a pair is separated when ``|t| > c (1 + 1e-9)``, so an exact
#: tie of the observed statistic with the critical value (common with few items, where both are the same
#: fraction computed in two orders) stays "not separated" whatever the floating-point rounding.
_TIE = 1e-9
#: Boards with at most this many pairs compute the max-t maxima densely (every pair, every resample).
_DENSE_MAX_PAIRS = 2_000
#: Steps with at most this many active pairs per entry are computed densely too (few pairs left: the
#: pruned search would cross the fat tails of a low critical value for nothing).
_DENSE_PER_ENTRY = 4
#: Exceedances the pruned search may hold (about 40 bytes each); past it the step is computed densely.
_MAX_EXCEEDANCES = 1 << 24
#: Candidate (pair, resample) elements generated at once by the pruned search (memory about 60 bytes each).
_CANDIDATE_CHUNK = 1 << 21
#: Resamples handled per block by the pruned search.
_ROW_BLOCK = 512
#: Elements of a row block whose tails the pruned search finds at once (512 KiB of float64 in each array).
_TAIL_PIECE = 1 << 16
#: Rows of the standard-error matrix read per block when the pruned search is prepared.
_PREPARE_ROWS = 128
#: Resamples on which the prepared search counts the entries in the tails (to choose the dense pairs).
_PREPARE_SAMPLE = 128
#: Blocks of :data:`_PREPARE_ROWS` rows whose ratios a plan counts on its bins (a systematic sample of
#: its blocks; every block when it has fewer than twice as many), and the pairs below which the sample
#: is completed with every block (a sparse cover, the third plan's).
_PLAN_BLOCKS = 8
_PLAN_MIN_PAIRS = 20_000
#: The bins of the plans' ratios ``se_jk / (s_j + s_k)`` (at most 1: the triangle inequality), and the
#: ratio of consecutive edges above 0.
_PLAN_EDGES = np.concatenate([[0.0], np.geomspace(1e-3, 1.0, 31)])
_PLAN_EDGE_STEP = float(_PLAN_EDGES[2] / _PLAN_EDGES[1])
#: Work of one crossed (pair, resample) candidate of the pruned search, in statistics of the dense
#: computation (the candidate is generated, gathered and filtered by fancy indexing; about 40x at K = 1,000).
_CANDIDATE_COST = 40.0
#: Statistics of the pairs computed densely per block (1 MiB of float64: 13 pairs at B = 10,000). Each
#: block is a dozen numpy calls that hold the GIL between them: with 3 pairs per block (256 KiB) the two
#: threads of a mix board of 10,000 kept 1.3 cores busy, 2.2-2.3 s against 1.3 s now, the same list (the
#: hits are listed by pair and then resample whatever the block; issue 24, seventh pass).
_SPECIAL_CHUNK = 1 << 17
#: Resamples of the deviations transposed per task of the board's threads for the dense pairs.
_TRANSPOSE_SPAN = 1024
#: Blocks of dense pairs per task of the board's thread pool (:func:`stats._threads.in_blocks`).
_SPECIAL_SPAN = 256
#: Work of finding the tails of one (resample, entry) of a part, in statistics of the dense computation.
_TAIL_COST = 6.0
#: Groups of entries (consecutive in value) of the referenced parts, and their smallest size.
_GROUPS = 4
_GROUP_MIN = 32
#: The referenced parts are tried when the plan without a reference costs more than this share of the
#: dense computation.
_REFERENCE_WHEN = 0.02
#: The third plan (references among the entries of the first plan's dense pairs) is tried when those
#: pairs' dense statistics outnumber this many times the squared number of their entries (planning it
#: reads every pair of those entries a few times over).
_THIRD_WHEN = 100.0
#: Work of one part of the plan by runs beyond its estimate, in pairs computed densely (``B``
#: statistics each): every search visits every row block of every part, a dozen numpy calls each (19 ms
#: per part at K = N = B = 10,000, about 2,000 pairs' dense statistics; issue 24, fourteenth pass).
_PART_COST = 2000.0
#: Searches down to this fraction of the first level list every pair (see :func:`_critical_value`).
_COVER_FRACTION = 0.85
#: The pairs computed densely are kept down to this fraction of the first search's level.
_SPECIAL_MARGIN = 0.85


def _dense_maxima(y: FloatArray, se: FloatArray, active: BoolArray) -> FloatArray:
    """Per resample, the max over active pairs j < k of ``|y_j - y_k| / se_jk`` (float64, every pair).

    ``y`` is (B, K): replicates minus point values. The reference computation, O(B K^2).
    """
    b, k = y.shape
    yt = np.ascontiguousarray(y.T)
    out = np.zeros(b)
    for j in range(k - 1):
        cols = np.flatnonzero(active[j, j + 1 :]) + j + 1
        if cols.size == 0:
            continue
        block = yt[cols] - yt[j]
        np.abs(block, out=block)
        block /= se[j, cols][:, None]
        np.maximum(out, block.max(axis=0), out=out)
    return out


def _tail_pairs(up: FloatArray, low: FloatArray) -> tuple[IntArray, IntArray, IntArray, IntArray, IntArray]:
    """The candidate pairs of every row (resample) of a part: ``(j, k)`` with ``up_j >= low_k``.

    Returns the upper candidates (``j_rows``, ``j_cols``: entries with ``up_j >= min low``, by row and
    then by ``up``), the lower candidates' columns ``k_cols`` (entries with ``low_k <= max up``) sorted by
    row and then by ``low``, each row's start in them (``start``, per row) and, per upper candidate, the
    number of lower candidates of its row with ``low_k <= up_j`` (``reps``: a prefix of its row's sorted
    ones).

    Before issue 24's third pass every upper candidate was crossed with every lower candidate of its row
    (``n_up x n_low`` per resample), most of them to be dropped by ``up_j >= low_k``; the prefix keeps only
    those (and a few equal keys). The keys ``2 row + (v - lo) / (hi - lo)`` are a non-decreasing function
    of ``v`` within a row (each operation rounds monotonically) and below the next row's, so
    ``low_k <= up_j`` implies ``key_k <= key_j``: the prefix holds every true candidate, and the pairs are
    checked exactly afterwards.
    """
    return _tail_merged([_tail_piece(up, low, 0)], up.shape[0])


#: A candidate piece of :func:`_tail_piece`: the rows' ``lo`` and ``hi``, the upper candidates' rows, columns
#: and values, the lower candidates' rows, columns and values (row-major, rows counted in the whole block).
_Piece = tuple[FloatArray, FloatArray, IntArray, IntArray, FloatArray, IntArray, IntArray, FloatArray]


def _tail_piece(up: FloatArray, low: FloatArray, row0: int) -> _Piece:
    """The candidates of rows ``row0..`` of a block, its rows ``up`` and ``low``: what :func:`_tail_pairs`
    finds in them before it keys and sorts them (its row-major order, so the pieces of consecutive rows,
    concatenated, are the whole block's arrays element for element)."""
    lo = low.min(axis=1)
    hi = up.max(axis=1)
    upper = up >= lo[:, None]
    lower = low <= hi[:, None]
    j_rows, j_cols = np.nonzero(upper)
    k_rows, k_cols = np.nonzero(lower)
    if row0:
        j_rows += row0
        k_rows += row0
    return lo, hi, j_rows, j_cols, up[upper], k_rows, k_cols, low[lower]


def _tail_merged(
    pieces: list[_Piece], n_rows: int
) -> tuple[IntArray, IntArray, IntArray, IntArray, IntArray]:
    """:func:`_tail_pairs` of the block whose consecutive rows the pieces hold (:func:`_tail_piece`)."""
    if len(pieces) == 1:
        lo, hi, j_rows, j_cols, up_values, k_rows, k_cols, low_values = pieces[0]
    else:
        lo, hi, j_rows, j_cols, up_values, k_rows, k_cols, low_values = (
            np.concatenate(arrays) for arrays in zip(*pieces, strict=True)
        )
    span = hi - lo
    span[~(span > 0)] = 1.0  # one value (or no candidate at all) in the row
    key_k = (low_values - lo[k_rows]) / span[k_rows]
    key_k += 2.0 * k_rows
    order = np.argsort(key_k)  # ties in any order: the prefix ends after all of them
    key_k = key_k[order]
    k_cols = k_cols[order]
    key_j = (up_values - lo[j_rows]) / span[j_rows]
    key_j += 2.0 * j_rows
    # the upper candidates in the order of their keys too: a search for ascending keys resumes where the
    # last one ended (numpy's binary search keeps its bound), several times faster than in row-major order
    order = np.argsort(key_j)
    key_j, j_rows, j_cols = key_j[order], j_rows[order], j_cols[order]
    n_k = np.bincount(k_rows, minlength=n_rows)
    start = np.cumsum(n_k) - n_k
    reps = np.searchsorted(key_k, key_j, side="right") - start[j_rows]
    return j_rows, j_cols, k_cols, start, reps


def _crossed_count(up: FloatArray, low: FloatArray, row0: int = 0) -> int:
    """``int(_tail_pairs(up, low)[4].sum())`` (the candidates a plan's sample crosses) for the rows of a
    larger pair of arrays that start at row ``row0``: the same keys (``2 (row0 + row) + (v - lo) / (hi -
    lo)``, the same operations element by element), sorted by value instead of argsorted and gathered,
    and without the candidates' index arrays, which a plan does not read.

    Each upper candidate's count is of the lower keys of its own row up to its key: a row's keys lie in
    ``[2 r, 2 r + 1]`` (``(v - lo) / (hi - lo)`` rounds into ``[0, 1]``: every step is monotonic), below
    the next row's, so the count does not depend on the other rows and the sum over any split of the rows
    into blocks (with their ``row0``) is the whole sample's, to the unit (the plan's cost loop, issue 24:
    the blocks on the board's threads)."""
    if up.shape[0] == 0:
        return 0
    lo = low.min(axis=1)
    hi = up.max(axis=1)
    span = hi - lo
    span[~(span > 0)] = 1.0  # as _tail_pairs
    rows = 2.0 * np.arange(row0, row0 + up.shape[0])
    upper = up >= lo[:, None]
    lower = low <= hi[:, None]
    n_k = np.count_nonzero(lower, axis=1)
    key_k = ((low - lo[:, None]) / span[:, None])[lower]  # row-major: as low[k_rows, k_cols]
    key_k += np.repeat(rows, n_k)
    key_j = ((up - lo[:, None]) / span[:, None])[upper]
    n_j = np.count_nonzero(upper, axis=1)
    key_j += np.repeat(rows, n_j)
    key_k.sort()
    key_j.sort()  # the same counts in any order; ascending keys search faster (see _tail_pairs)
    start = np.cumsum(n_k) - n_k
    return int(np.searchsorted(key_k, key_j, side="right").sum()) - int((n_j * start).sum())


def _sample_crossed(up: FloatArray, low: FloatArray) -> int:
    """:func:`_crossed_count` of the whole sample, its rows split in :func:`board_threads` blocks on the
    board's threads (the count of each row is its own: the same integer in any split). The plan's cost
    loop ran ``_tail_pairs`` on one thread while the other idled (issue 24: about 1.7 s of the mix's
    board of 10,000)."""
    step = max(1, -(-up.shape[0] // board_threads()))
    return sum(
        in_blocks(
            lambda r0: _crossed_count(up[r0 : r0 + step], low[r0 : r0 + step], r0),
            range(0, up.shape[0], step),
        )
    )


def _mirror_upper(mask: BoolArray) -> None:
    """``mask |= mask.T`` for a mask that holds only pairs above its diagonal, in place and by blocks of
    256 rows (the one transposed OR walked a K x K array column-wise and made a K x K temporary: 95 MiB at
    K = 10,000). The blocks run on the board's threads (:func:`stats._threads.in_blocks`): block ``r0``
    writes its rows left of its diagonal block and that block, and reads the upper triangle of the rows
    above it, which no block writes (issue 24: 1.0 s of one thread per mix board of 10,000)."""
    c = mask.shape[0]

    def rows(r0: int) -> None:
        mask[r0 : r0 + 256, :r0] = mask[:r0, r0 : r0 + 256].T
        block = mask[r0 : r0 + 256, r0 : r0 + 256]
        block |= block.T.copy()

    in_blocks(rows, range(0, c, 256))


def _or_symmetric(target: BoolArray, upper: BoolArray) -> None:
    """``target |= upper | upper.T`` for ``upper`` above its diagonal, in place and by blocks of 256 rows
    (no K x K temporaries), on the board's threads: each block writes its own rows of ``target`` and reads
    ``upper`` alone."""

    def rows(r0: int) -> None:
        target[r0 : r0 + 256] |= upper[r0 : r0 + 256]
        target[r0 : r0 + 256, : r0 + 256] |= upper[: r0 + 256, r0 : r0 + 256].T

    in_blocks(rows, range(0, upper.shape[0], 256))


#: Rows per block of :func:`_gathered` (gathered, then their columns while they are in the cache), and
#: rows per task of the board's threads.
_GATHER_ROWS = 32
_GATHER_SPAN = 512


def _gathered(
    a: npt.NDArray[Any], index: npt.ArrayLike, out: npt.NDArray[Any] | None = None
) -> npt.NDArray[Any]:
    """``a[np.ix_(index, index)]`` (into ``out`` when given) by blocks of :data:`_GATHER_ROWS` rows
    (``numpy.take`` of the block's columns while its rows are in the cache), the blocks on the board's
    threads (each writes its own rows of the result): the same elements as the fancy index, which one
    thread walked column by column over K x K tables (issue 24: the referenced plans gathered about 10^8
    standard errors per board of 10,000; K = 5,000, 0.09 s against 0.47 s for the one fancy index). The
    one blocked gather of the K x K tables (the board's permuted tables and the incremental board's kept
    tables use it too)."""
    index = np.asarray(index, dtype=np.intp)
    if out is None:
        out = np.empty((index.size, index.size), dtype=a.dtype)

    def span(s0: int) -> None:
        for r0 in range(s0, min(index.size, s0 + _GATHER_SPAN), _GATHER_ROWS):
            np.take(a[index[r0 : r0 + _GATHER_ROWS]], index, axis=1, out=out[r0 : r0 + _GATHER_ROWS])

    in_blocks(span, range(0, index.size, _GATHER_SPAN))
    return out


class _TooMany(Exception):
    """The pruned search found more exceedances than it may hold."""


@dataclass
class _Part:
    """A set of pairs searched with one bound: the pairs among ``cols`` that ``mask`` holds (local indices,
    symmetric), shifted by the reference entry ``ref`` (``-1``: no shift), whose standard deviations of
    ``y_j - y_ref`` are ``sdv``; every pair held has ``se_jk >= gamma (sdv_j + sdv_k)``."""

    cols: IntArray
    ref: int
    sdv: FloatArray
    gamma: float
    mask: BoolArray


@dataclass(frozen=True)
class _Split:
    """A plan's split of its pairs (:meth:`_Exceedances._plan`), computed only when asked for: ``pairs()``
    gives the part searched with the bound (None: every pair dense) and the dense pairs as global (j < k)
    index arrays; ``entries()`` only the entries of the dense pairs (a mask over every entry) and their
    number, without listing them (K = 10,000, nested: 0.1 s against 1.1 s for 8.5 million pairs)."""

    pairs: Callable[[], tuple[_Part | None, IntArray, IntArray]]
    entries: Callable[[], tuple[BoolArray, int]]


class _Exceedances:
    """Every (pair, resample) whose max-t statistic reaches a level, found without visiting all pairs.

    For a pair ``(j, k)`` and resample ``b`` the statistic is ``z = (y_bj - y_bk) / se_jk`` (ordered, so
    ``|z|`` is covered by the two orders). For any reference column ``r`` (or none: ``y_r = 0``) write
    ``s_j`` for the bootstrap standard deviation of ``y_j - y_r`` (``se_jr``, or ``sd_j``) and ``gamma``
    for a lower bound of ``se_jk / (s_j + s_k)`` over the pairs searched. Then ``z >= level`` implies
    ``(y'_bj - h s_j) >= (y'_bk + h s_k)`` with ``y' = y - y_r`` and ``h = level * gamma``: entry ``j``
    must lie in the upper tail of resample ``b`` and ``k`` in its lower tail, so per resample only the
    entries with ``y'_bj - h s_j >= min_k (y'_bk + h s_k)`` and ``y'_bk + h s_k <= max_j (y'_bj - h s_j)``
    are crossed, and the crossed pairs are checked exactly in float64 (on ``y`` itself). Without a
    reference ``gamma`` is large for entries that vary independently; for entries that share most of their
    variation (fine-tunes of one model, whose errors are nested) every ``se_jk`` is small next to ``sd_j``
    and the bound crosses almost everything, but with a reference between them in the order of their
    values it holds again (issue 24: ``gamma`` went from 0.10 to 0.41 on the load test's board). So the
    pairs are split into parts (all pairs without a reference, or the pairs between groups of entries
    consecutive in value, each with a reference in the middle), and within each part pairs for which
    ``gamma`` would be small (nearly identical entries) are computed densely over all resamples; the split
    of least estimated work is taken, up to every pair dense. Nothing is approximated: the list holds
    exactly the (pair, resample) statistics ``>= level``.
    """

    def __init__(self, y: FloatArray, se: FloatArray, sd: FloatArray, order: IntArray | None = None) -> None:
        self.y = y
        self.se = se
        self.sd = sd
        #: the entries in the order of their values (the groups of the referenced parts)
        self.order = order
        self.prepared = False
        self._sorted_for: FloatArray | None = None
        self.level = np.inf
        self.pair_j = self.pair_k = self.rows = np.empty(0, dtype=np.intp)
        self.z = np.empty(0)
        self.dense_all = False
        self.parts: list[_Part] = []
        self.special_j = self.special_k = np.empty(0, dtype=np.intp)
        self._special: tuple[float, IntArray, IntArray, IntArray, FloatArray] | None = None
        #: the level of the first search, and the last list that covers every pair (the next board's start)
        self.first_level = np.inf
        self.covered: tuple[float, IntArray, IntArray, IntArray, FloatArray] | None = None
        self._block_maxima: dict[int, float] | None = None

    def _block_max(self, r0: int) -> float:
        """``max |y|`` over the resamples r0..r0 + _ROW_BLOCK (exact), computed once for every part and
        search (it was an O(B K) pass per part and search)."""
        if self._block_maxima is None:
            rows = range(0, self.y.shape[0], _ROW_BLOCK)
            self._block_maxima = {r: float(np.abs(self.y[r : r + _ROW_BLOCK]).max(initial=0.0)) for r in rows}
        return self._block_maxima[r0]

    def _plan(self, level: float, cols: IntArray, ref: int, cover: BoolArray | None) -> tuple[float, _Split]:
        """The split of least estimated work of the pairs among ``cols`` (all pairs with ``se > 0``, or
        those ``cover`` holds: local, upper triangle) between the bound with reference ``ref`` and the
        dense computation: (work, the :class:`_Split`, whose pairs and entries are computed when asked
        for: only the plan taken is split).

        The ratios ``se_jk / (s_j + s_k)`` are computed in row blocks and counted on fixed bins (no list
        of all pairs), on a systematic sample of the blocks (:data:`_PLAN_BLOCKS`, every block when there
        are few, or when the sample holds fewer than :data:`_PLAN_MIN_PAIRS` pairs). A threshold ``g`` sends
        the pairs with ratio ``< g`` to the dense computation (``B`` statistics each) and searches the
        others with their smallest ratio as ``gamma`` (exact: computed by the split over every pair); the
        entries the search crosses at ``h = level g`` are counted on a sample of resamples for every
        threshold. The lowest threshold is one bin below the sample's smallest ratio, so that a pair the
        sample missed with a far smaller ratio (two near-duplicates among entries that vary independently)
        is computed densely instead of lowering every other pair's bound.

        Only the work depends on the sample: the split is exact whatever the threshold (every pair in the
        part or in the dense list, every part's bound true), and the search lists exactly the statistics
        above its level (issue 24: counting every pair on the bins took 1.3 s of the mix board of 10,000,
        and the splits of plans not taken 0.55 s: they are now computed only for the plan taken).
        """
        y, se, sd = self.y, self.se, self.sd
        b = y.shape[0]
        c = cols.size
        tiny = np.finfo(float).tiny
        sdv = sd[cols] if ref < 0 else se[cols, ref]
        whole = c == se.shape[0]  # every entry, in order (the plan without a reference): no gather

        def block(r0: int, r1: int) -> tuple[BoolArray, FloatArray]:
            """The pairs of rows r0..r1 (upper triangle, se > 0, covered) and their ratios, over the
            columns r0.. only (those left of the block are below the diagonal: half the work of every
            row; issue 24). A referenced plan gathers the block's standard errors by pieces of rows (the
            gather of its whole table took 0.75 s of the mix board of 10,000, and a fresh table of up to
            191 MiB per plan)."""
            if whole:
                rows = se[r0:r1, r0:]
            else:
                rows = np.empty((r1 - r0, c - r0), dtype=se.dtype)
                for q in range(r0, r1, _GATHER_ROWS):
                    np.take(
                        se[cols[q : min(r1, q + _GATHER_ROWS)]],
                        cols[r0:],
                        axis=1,
                        out=rows[q - r0 : q - r0 + _GATHER_ROWS],
                    )
            ok = rows > 0
            ok &= np.arange(r0, c)[None, :] > np.arange(r0, r1)[:, None]  # upper triangle
            if cover is not None:
                ok &= cover[r0:r1, r0:]
            ratio = rows / np.maximum(sdv[r0:r1, None] + sdv[None, r0:], tiny)
            return ok, ratio

        def counted(r0: int) -> tuple[float, IntArray | None]:
            """The smallest ratio of rows r0.. and their counts on the bins (blocks on the board's threads:
            a minimum and integer counts, the same in any order)."""
            ok, ratio_block = block(r0, min(c, r0 + _PREPARE_ROWS))
            ratio = ratio_block[ok]
            if not ratio.size:
                return np.inf, None
            bins = np.searchsorted(_PLAN_EDGES, ratio, side="right") - 1
            return float(ratio.min()), np.bincount(bins, minlength=_PLAN_EDGES.size)

        def cells(r0: int) -> int:  # pairs of the upper triangle in rows r0.. of a block
            r1 = min(c, r0 + _PREPARE_ROWS)
            return (r1 - r0) * (2 * c - r0 - r1 - 1) // 2

        starts = list(range(0, c, _PREPARE_ROWS))
        stride = max(1, len(starts) // _PLAN_BLOCKS)
        sampled = starts[stride // 2 :: stride] if stride > 1 else starts
        hist = np.zeros(_PLAN_EDGES.size, dtype=np.int64)
        gamma_min = np.inf
        for smallest, in_bins in in_blocks(counted, sampled):
            if in_bins is not None:
                gamma_min = min(gamma_min, smallest)
                hist += in_bins
        if len(sampled) < len(starts) and (hist.sum() == 0 or hist.sum() < _PLAN_MIN_PAIRS):
            # too few to estimate from (none: the pairs may all be in the other blocks): every block
            rest = sorted(set(starts) - set(sampled))
            for smallest, in_bins in in_blocks(counted, rest):
                if in_bins is not None:
                    gamma_min = min(gamma_min, smallest)
                    hist += in_bins
            sampled = starts
        scale_pairs = sum(cells(r0) for r0 in starts) / max(1, sum(cells(r0) for r0 in sampled))
        n_pairs = float(hist.sum()) * scale_pairs  # estimated (exact when every block was counted)
        empty = np.empty(0, dtype=np.intp)
        if n_pairs == 0:  # every block counted: no pair at all
            return 0.0, _Split(lambda: (None, empty, empty), lambda: (np.zeros(se.shape[0], dtype=bool), 0))
        below = np.concatenate([[0], np.cumsum(hist)]) * scale_pairs  # below[i]: ratios < edges[i]
        # the thresholds: one bin below the smallest ratio (no pair dense but those the sample missed),
        # then every edge above it with pairs below; of edges with the same pairs below, the highest only
        # (the same part, a larger bound: fewer crossed)
        lowest = gamma_min / _PLAN_EDGE_STEP
        options = [(gamma_min, lowest, 0.0)] + [
            (float(e), float(e), float(below[i]))
            for i, e in enumerate(_PLAN_EDGES)
            if e > gamma_min and below[i] > 0 and (i + 1 == _PLAN_EDGES.size or below[i + 1] != below[i])
        ]
        sample = y[:: max(1, b // _PREPARE_SAMPLE)][:, cols]
        if ref >= 0:
            sample = sample - y[:: max(1, b // _PREPARE_SAMPLE), ref : ref + 1]
        best_cost, threshold = float(b) * n_pairs, np.inf  # all dense
        # from the highest threshold down: its few candidates are cheap to count and give a low cost early,
        # and a lower threshold is counted only when its bound does not already exceed the best cost: each
        # upper candidate crosses at least one lower one (its row's smallest), and a lower threshold
        # crosses at least what a higher one crossed (its tails hold the higher one's: ``floor``)
        scale = b / sample.shape[0]
        floor = 0.0
        for g, cut, n_dense in reversed(options):
            fixed = float(b) * n_dense + _TAIL_COST * float(b) * c
            if n_dense >= n_pairs or fixed + _CANDIDATE_COST * floor >= best_cost:
                continue
            h = level * g * (1 - 1e-9) ** 2
            up = sample - h * sdv
            low = sample + h * sdv
            floor = max(floor, float(np.count_nonzero(up >= low.min(axis=1)[:, None])) * scale)
            if fixed + _CANDIDATE_COST * floor >= best_cost:
                continue
            crossed = float(_sample_crossed(up, low)) * scale
            floor = crossed
            cost = float(b) * n_dense + _CANDIDATE_COST * crossed + _TAIL_COST * float(b) * c
            if cost < best_cost:
                best_cost, threshold = cost, cut

        def split() -> tuple[_Part | None, IntArray, IntArray]:
            """The pairs with ratio ``< threshold`` (dense) and the part of the others, whose bound is
            their smallest ratio (every block: exact)."""
            mask = np.zeros((c, c), dtype=bool) if threshold < np.inf else None

            def rows(r0: int) -> tuple[IntArray, IntArray, float]:
                """Rows r0.. of the mask (written by this block alone), their dense pairs and the part's
                smallest ratio."""
                r1 = min(c, r0 + _PREPARE_ROWS)
                ok, ratio_block = block(r0, r1)
                low_ratio = ok & (ratio_block < threshold)
                bi, bj = np.nonzero(low_ratio)
                if mask is None:
                    return cols[bi + r0], cols[bj + r0], np.inf
                kept = ok & ~low_ratio
                mask[r0:r1, r0:] = kept
                return cols[bi + r0], cols[bj + r0], float(np.min(ratio_block, where=kept, initial=np.inf))

            # the blocks' dense pairs in the rows' order, whatever the threads
            dense = in_blocks(rows, starts)
            gi = np.concatenate([pair[0] for pair in dense])
            gj = np.concatenate([pair[1] for pair in dense])
            special_j, special_k = np.minimum(gi, gj), np.maximum(gi, gj)
            smallest = min(pair[2] for pair in dense)
            if mask is None or not np.isfinite(smallest):  # every pair dense
                return None, special_j, special_k
            _mirror_upper(mask)
            part = _Part(cols=cols, ref=ref, sdv=sdv, gamma=smallest * (1 - 1e-9), mask=mask)
            return part, special_j, special_k

        def entries() -> tuple[BoolArray, int]:
            """The entries of the pairs with ratio ``< threshold`` and their number (every block)."""

            def rows(r0: int) -> tuple[BoolArray, BoolArray, int]:
                ok, ratio_block = block(r0, min(c, r0 + _PREPARE_ROWS))
                low_ratio = ok & (ratio_block < threshold)
                by_row, by_column = np.any(low_ratio, axis=1), np.any(low_ratio, axis=0)
                return np.asarray(by_row), np.asarray(by_column), int(np.count_nonzero(low_ratio))

            local = np.zeros(c, dtype=bool)
            n = 0
            for r0, (by_row, by_column, count) in zip(starts, in_blocks(rows, starts), strict=True):
                local[r0 : r0 + by_row.size] |= by_row
                local[r0:] |= by_column
                n += count
            involved = np.zeros(se.shape[0], dtype=bool)
            involved[cols[local]] = True
            return involved, n

        return best_cost, _Split(split, entries)

    def _referenced(
        self, level: float, entries: IntArray, within: BoolArray | None
    ) -> tuple[float, list[_Split]]:
        """The plan of the pairs among ``entries`` (global indices in the order of their values) split
        between groups consecutive in value, each pair of groups searched with a reference in the middle of
        its span: (work, the splits). ``within`` (positions in ``entries``, symmetric) restricts it to those
        pairs; None: every pair."""
        positions = np.array_split(np.arange(entries.size), max(2, min(_GROUPS, entries.size // _GROUP_MIN)))
        total = 0.0
        splits: list[_Split] = []
        for g1 in range(len(positions)):
            for g2 in range(g1, len(positions)):
                local = positions[g1] if g1 == g2 else np.concatenate([positions[g1], positions[g2]])
                span = np.concatenate(positions[g1 : g2 + 1])
                ref = int(entries[span[span.size // 2]])
                cols = entries[local]
                order_cols = np.argsort(cols, kind="stable")  # local columns in global order
                cols = cols[order_cols]
                # the pairs between the two groups (and ``within``), already in the columns' global order:
                # local positions ``o_i, o_j`` are in different groups when ``(o_i < n1) != (o_j < n1)``
                cover = None
                if g1 != g2:
                    side = order_cols < positions[g1].size
                    cover = side[:, None] != side[None, :]
                if within is not None:
                    inside = _gathered(within, local[order_cols])
                    if cover is None:
                        cover = inside
                    else:
                        cover &= inside
                c_cost, c_split = self._plan(level, cols, ref, cover)
                total += c_cost
                splits.append(c_split)
        return total, splits

    def _by_components(
        self, level: float, order: IntArray, sj: IntArray, sk: IntArray, *, least: int
    ) -> tuple[float, list[_Split], IntArray, IntArray] | None:
        """The first plan's dense pairs ``sj, sk`` planned run by run: split by the connected components
        of their graph, each component of at least ``2 _GROUP_MIN`` entries planned with references among
        its own entries (in the order of their values, ``order``) when that beats computing its pairs
        densely, every other pair dense: (work, the splits, the dense pairs). None when fewer than
        ``least`` components are that large (2 when the third plan was tried: with one, it references
        among that run already, and the mix family kept its plan), or none is planned so.

        Several teams' runs of fine-tunes interleave in value: the groups of the second and third plans,
        consecutive in value over all of them, take their references from one run for the pairs of
        another, which shares none of its variation, and the runs' pairs stayed dense (issue 24,
        fourteenth pass, K = N = B = 10,000: twelve runs of 500 nested entries among 4,000 spread ones,
        1.5 million pairs, 14.6 s; ten runs of 500 among 5,000 near-duplicates, where every entry is in a
        dense pair and the third plan is not tried, 1.3 million pairs, 12-13 s). Within a component the
        references are its own entries. Each part costs :data:`_PART_COST` beyond its estimate, so that
        many small runs stay dense."""
        b, k = self.y.shape
        graph = coo_matrix((np.ones(sj.size, dtype=np.int8), (sj, sk)), shape=(k, k))
        n_components, labels = connected_components(graph, directed=False)
        sizes = np.bincount(labels, minlength=n_components)
        large = np.flatnonzero(sizes >= 2 * _GROUP_MIN)
        if large.size < least:
            return None
        pair_labels = labels[sj]
        pairs_of = np.bincount(pair_labels, minlength=n_components)
        order_labels = labels[order]
        local = np.empty(k, dtype=np.intp)
        total = 0.0
        splits: list[_Split] = []
        referenced = np.zeros(n_components, dtype=bool)
        for label in large:
            dense_cost = float(b) * pairs_of[label]
            # a floor of its referenced plan, known before planning it: planning reads every pair of its
            # entries (:data:`_THIRD_WHEN`), and g groups make g (g + 1) / 2 parts whose tails are found
            # over g times its entries (many runs of 150 entries among 10,000: each costs more than its
            # dense pairs, and planning them all took 0.9 s)
            c = int(sizes[label])
            groups = max(2, min(_GROUPS, c // _GROUP_MIN))
            floor = _THIRD_WHEN * c * c + float(b) * (
                _TAIL_COST * groups * c + _PART_COST * groups * (groups + 1) / 2
            )
            if floor >= dense_cost:
                continue
            entries = order[order_labels == label]
            local[entries] = np.arange(c)
            mine = pair_labels == label
            within = np.zeros((c, c), dtype=bool)
            within[local[sj[mine]], local[sk[mine]]] = True
            within |= within.T
            c_cost, c_splits = self._referenced(level, entries, within)
            c_cost += _PART_COST * float(b) * len(c_splits)
            if c_cost < dense_cost:
                total += c_cost
                splits += c_splits
                referenced[label] = True
        if not splits:
            return None
        dense = ~referenced[pair_labels]
        total += float(b) * int(dense.sum())
        return total, splits, sj[dense], sk[dense]

    def _prepare(self, level: float) -> None:
        """The parts and the pairs computed densely (once), the cheapest of three plans: without a
        reference over all pairs; when the entries share their variation and the order of their values is
        known, with references between groups of entries consecutive in value; or without a reference
        except for the pairs the first plan computes densely, which are planned with references among the
        entries they involve (a board that mixes nested or near-duplicate entries with others: issue 24's
        mix family, where the first plan computed every nested pair densely; tried whatever the first plan's
        cost, once those pairs outweigh planning them: :data:`_THIRD_WHEN`); and the first plan's dense pairs
        also run by run, each run of them with references among its own entries (:meth:`_by_components`).
        Only the plan taken is split (the first one also when the third is tried: its dense pairs are the
        third's entries)."""
        b, k = self.y.shape
        everything = np.arange(k)
        cost, first = self._plan(level, everything, -1, None)
        n_pairs = k * (k - 1) / 2
        chosen: list[_Split] = [first]
        taken: list[tuple[_Part | None, IntArray, IntArray]] = []
        if self.order is not None and k >= 2 * _GROUP_MIN:
            order = np.asarray(self.order)
            best = cost
            if cost > _REFERENCE_WHEN * b * n_pairs:
                total, splits = self._referenced(level, order, None)
                if total < best:
                    best, chosen = total, splits
            # the third plan's entries are those of the first's dense pairs: listed when the first plan
            # is taken (as it would be anyway), only counted when the second is (nested errors: every
            # entry is in a dense pair, and the third plan is not tried)
            listed = chosen[0] is first
            if listed:
                part, sj, sk = first.pairs()
                chosen, taken = [], [(part, sj, sk)]
                involved = np.zeros(k, dtype=bool)
                involved[sj] = involved[sk] = True
                n_first = sj.size
            else:
                involved, n_first = first.entries()
            m = int(involved.sum())
            # tried whenever the first plan's dense pairs cost more than planning the pairs of their
            # entries, not only past the second plan's share: the sample may have missed them (the
            # first plan's cost then leaves them out), and a run of a thousand nested entries among
            # ten thousand (issue 24's ``nested_run`` family: 0.5 million pairs, 1% of the dense
            # computation) was computed densely, 9 s of a 44 s board
            third = False
            none = np.empty(0, dtype=np.intp)
            if 2 * _GROUP_MIN <= m < k and float(b) * n_first > _THIRD_WHEN * m * m:
                if not listed:
                    part, sj, sk = first.pairs()
                third = True
                entries = order[involved[order]]
                position = np.empty(k, dtype=np.intp)
                position[entries] = np.arange(entries.size)
                within = np.zeros((entries.size, entries.size), dtype=bool)
                within[position[sj], position[sk]] = True
                within |= within.T
                sub, splits = self._referenced(level, entries, within)
                del within
                total = cost - float(b) * n_first + sub
                if total < best:
                    best = total
                    chosen, taken = splits, [(part, none, none)]
            # the same by the runs of those pairs (their graph's components), each with its own references:
            # whenever they are listed (the first plan taken, or the third tried), also when the third plan
            # is not tried (when every entry is in one of them, it would be the second: a run of nested
            # entries among near-duplicates)
            if (listed or third) and sj.size:
                runs = self._by_components(level, order, sj, sk, least=2 if third else 1)
                if runs is not None and cost - float(b) * n_first + runs[0] < best:
                    _, splits, dense_j, dense_k = runs
                    chosen, taken = splits, [(part, none, none), (None, dense_j, dense_k)]
        taken += [split.pairs() for split in chosen]
        self.parts = [part for part, _, _ in taken if part is not None]
        self.special_j = np.concatenate([sj for _, sj, _ in taken])
        self.special_k = np.concatenate([sk for _, _, sk in taken])
        self.dense_all = not self.parts
        self.prepared = True

    def preload(
        self, level: float, pair_j: IntArray, pair_k: IntArray, rows: IntArray, z: FloatArray
    ) -> None:
        """Take a list of every (pair, resample) with statistic ``>= level`` over all pairs (step 1), as
        :meth:`search` would have found it (the incremental board, :mod:`stats.board_update`)."""
        self.level = level
        self.pair_j, self.pair_k, self.rows, self.z = pair_j, pair_k, rows, z
        self.first_level = level
        self.covered = (level, pair_j, pair_k, rows, z)

    def search(self, level: float, active: BoolArray, *, covers_all: bool = False) -> None:
        """Collect every (active pair, resample) with statistic ``>= level`` (``level > 0``).

        ``active`` (upper triangle) are the pairs of the current step; later steps use subsets of them,
        so the list serves them too. Raises :class:`_TooMany` past :data:`_MAX_EXCEEDANCES` entries.
        """
        if not self.prepared:
            self._prepare(level)
        found = 0
        parts_j: list[IntArray] = []
        parts_k: list[IntArray] = []
        parts_b: list[IntArray] = []
        parts_z: list[FloatArray] = []
        sym = active.copy()  # active | active.T, without a second K x K temporary
        _mirror_upper(sym)
        for part in self.parts:
            found = self._cross(part, level, sym, found, parts_j, parts_k, parts_b, parts_z)
        # the pairs computed densely: kept down to a lower level, so that a search at a lower level (the
        # critical value came out below the first one) reads them instead of computing them again
        cache = self._special
        if cache is None or level < cache[0]:
            cache = self._dense_special(level * _SPECIAL_MARGIN if cache is None else level, active)
            self._special = cache
        _, cj, ck, cb, cz = cache
        hit = (cz >= level) & active[cj, ck]
        found += int(hit.sum())
        if found > _MAX_EXCEEDANCES:
            raise _TooMany
        parts_j.append(cj[hit])
        parts_k.append(ck[hit])
        parts_b.append(cb[hit])
        parts_z.append(cz[hit])
        pair_j = np.concatenate(parts_j)
        pair_k = np.concatenate(parts_k)
        self.pair_j = np.minimum(pair_j, pair_k)
        self.pair_k = np.maximum(pair_j, pair_k)
        self.rows = np.concatenate(parts_b)
        self.z = np.concatenate(parts_z)
        self.level = level
        if not np.isfinite(self.first_level):
            self.first_level = level
        if covers_all:
            self.covered = (level, self.pair_j, self.pair_k, self.rows, self.z)

    def _cross(
        self,
        part: _Part,
        level: float,
        sym: BoolArray,
        found: int,
        parts_j: list[IntArray],
        parts_k: list[IntArray],
        parts_b: list[IntArray],
        parts_z: list[FloatArray],
    ) -> int:
        """The statistics ``>= level`` of the part's pairs, by the tails of each resample."""
        y, se = self.y, self.se
        b = y.shape[0]
        cols = part.cols
        whole = cols.size == y.shape[1]
        if whole:
            pairs_ok = part.mask & sym
        else:
            pairs_ok = _gathered(sym, cols)
            pairs_ok &= part.mask
        h = level * part.gamma * (1 - 1e-9)
        hs = h * part.sdv
        counted = [found]
        lock = threading.Lock()
        flat = se.reshape(-1) if se.flags.c_contiguous else None  # a view (never a copy of K x K)
        piece_rows = max(1, _TAIL_PIECE // max(cols.size, 1))

        def rows(r0: int) -> tuple[list[IntArray], list[IntArray], list[IntArray], list[FloatArray]]:
            """The hits of resamples r0.. (one row block; blocks run on the board's threads)."""
            out_j: list[IntArray] = []
            out_k: list[IntArray] = []
            out_b: list[IntArray] = []
            out_z: list[FloatArray] = []
            yc = y[r0 : r0 + _ROW_BLOCK]
            # the shift and the tails round: a margin of a few units in the last place of the largest
            # terms widens the candidates (each is then checked exactly)
            slack = 64 * np.finfo(float).eps * (1 + h) * self._block_max(r0)
            pieces = []
            # the tails found in pieces of rows that stay in the cache through their passes (the shift,
            # the bounds, the comparisons), then keyed and sorted for the whole block: the same arrays as
            # _tail_pairs of the whole block's up and low (issue 24, seventh pass: eight passes through
            # memory over 512 x K values before)
            for s0 in range(0, yc.shape[0], piece_rows):
                ys = yc[s0 : s0 + piece_rows]
                shifted = ys if whole else ys[:, cols]
                if part.ref >= 0:
                    shifted = shifted - ys[:, part.ref : part.ref + 1]
                pieces.append(_tail_piece(shifted - (hs - slack), shifted + hs, s0))
            j_rows, j_cols, k_cols, start_k, reps = _tail_merged(pieces, yc.shape[0])
            ends = np.cumsum(reps)
            # per upper and per lower candidate (in their sorted orders): its entry and its deviation,
            # gathered once; each crossed candidate then reads them by its position (the lower one's values
            # from an array of the block's few lower candidates, in the cache, instead of a 2-D gather
            # from the block's 512 x K deviations per candidate; issue 24, seventh pass)
            k_rows = np.repeat(np.arange(yc.shape[0]), np.diff(start_k, append=k_cols.size))
            gj = j_cols if whole else cols[j_cols]  # entries (global columns)
            gk = k_cols if whole else cols[k_cols]
            yj = yc[j_rows, gj]
            yk = yc[k_rows, gk]
            first = 0
            while first < j_rows.size:
                base = 0 if first == 0 else int(ends[first - 1])
                last = int(np.searchsorted(ends, base + _CANDIDATE_CHUNK, side="right"))
                last = max(last, first + 1)
                rr = reps[first:last]
                total = int(rr.sum())
                if total:
                    # candidate i of upper candidate u is lower candidate start_k[row u] + (i - its first)
                    firsts = np.cumsum(rr) - rr
                    lower = np.arange(total) + np.repeat(start_k[j_rows[first:last]] - firsts, rr)
                    kk = gk[lower]
                    if flat is None:
                        pair_se = se[np.repeat(gj[first:last], rr), kk]
                    else:  # one take at the flat positions: about half the time of the 2-D gather
                        at = np.repeat(gj[first:last] * se.shape[1], rr)
                        at += kk
                        pair_se = flat.take(at)
                    # up_j >= low_k holds for nearly every candidate of the prefix, and the pair's mask
                    # for nearly every one too (99.7% on the mix of 5,000): the statistic of every
                    # candidate first, the mask read for the few that reach the level (one random gather
                    # of a K x K table per hit instead of per candidate; a pair outside the mask may have
                    # se = 0: inf or nan there, dropped by the mask or by nan >= level being False)
                    with np.errstate(divide="ignore", invalid="ignore"):
                        z = np.repeat(yj[first:last], rr)
                        z -= yk[lower]
                        z /= pair_se
                    hit = np.flatnonzero(z >= level)
                    upper_of = first + np.searchsorted(firsts, hit, side="right") - 1  # each hit's upper one
                    keep = pairs_ok[j_cols[upper_of], k_cols[lower[hit]]]  # positions in cols
                    hit, upper_of = hit[keep], upper_of[keep]
                    with lock:
                        counted[0] += hit.size
                        if counted[0] > _MAX_EXCEEDANCES:
                            raise _TooMany
                    out_j.append(gj[upper_of])
                    out_k.append(kk[hit])
                    out_b.append(j_rows[upper_of] + r0)
                    out_z.append(z[hit])
                first = last
            return out_j, out_k, out_b, out_z

        self._block_max(0)  # every row block's maximum, before the threads read them
        # the row blocks' hits in the blocks' order: the list is the same whatever the threads
        for out_j, out_k, out_b, out_z in in_blocks(rows, range(0, b, _ROW_BLOCK)):
            parts_j.extend(out_j)
            parts_k.extend(out_k)
            parts_b.extend(out_b)
            parts_z.extend(out_z)
        return counted[0]

    def _dense_special(
        self, level: float, active: BoolArray
    ) -> tuple[float, IntArray, IntArray, IntArray, FloatArray]:
        """Every (pair, resample) statistic ``>= level`` of the active pairs computed densely."""
        y, se = self.y, self.se
        b = y.shape[0]
        # the entries of the dense pairs, transposed (rows contiguous, so a pair's block is two row reads):
        # only those, not all of y (K = N = B = 10,000: a copy of 763 MiB beside y and the standard errors)
        involved = np.zeros(y.shape[1], dtype=bool)
        involved[self.special_j] = involved[self.special_k] = True
        columns = np.flatnonzero(involved)
        position = np.cumsum(involved) - 1
        yt = np.empty((columns.size, b))

        def transposed(r0: int) -> None:
            """Columns r0.. of ``yt`` (written by this span alone; on the board's threads): the involved
            entries of 128 resamples gathered and transposed at a time, each row of ``y`` read once (issue
            24, seventh pass: 64 entries at a time read a cache line of every row per entry, 0.50 s against
            0.21 s of one thread for the mix's 3,728 entries at K = N = B = 10,000); not the whole B x C
            gather and then its transposed copy (one thread, and two arrays of 763 MiB at once when most
            entries are involved, as on the near-duplicates' board)."""
            end = min(b, r0 + _TRANSPOSE_SPAN)
            for r in range(r0, end, 128):
                yt[:, r : min(end, r + 128)] = np.take(y[r : min(end, r + 128)], columns, axis=1).T

        in_blocks(transposed, range(0, b, _TRANSPOSE_SPAN))
        step = max(1, _SPECIAL_CHUNK // b)  # pairs per block: a block stays in the cache through its passes
        counted = [0]
        lock = threading.Lock()

        def pairs(span: int) -> tuple[list[IntArray], list[IntArray], list[IntArray], list[FloatArray]]:
            """The hits of the pairs span.. (:data:`_SPECIAL_SPAN` blocks; spans run on the board's threads)."""
            out_j: list[IntArray] = []
            out_k: list[IntArray] = []
            out_b: list[IntArray] = []
            out_z: list[FloatArray] = []
            for start in range(span, min(self.special_j.size, span + _SPECIAL_SPAN * step), step):
                sj = self.special_j[start : start + step]
                sk = self.special_k[start : start + step]
                on = active[sj, sk]
                sj, sk = sj[on], sk[on]
                block = yt[position[sj]]
                block -= yt[position[sk]]
                np.abs(block, out=block)
                # |d| >= level se (1 - 1e-12) is necessary for |d| / se >= level (the product and the
                # quotient round differently); the statistic itself is then divided as the full
                # computation divides it
                bound = (level * (1 - 1e-12)) * se[sj, sk]
                rows = np.flatnonzero(block.max(axis=1) >= bound)  # the few pairs with a hit at all
                pi, bi = np.nonzero(block[rows] >= bound[rows, None])
                pi = rows[pi]
                z = block[pi, bi] / se[sj[pi], sk[pi]]
                hit = z >= level
                pi, bi, z = pi[hit], bi[hit], z[hit]
                with lock:
                    counted[0] += pi.size
                    if counted[0] > _MAX_EXCEEDANCES:
                        raise _TooMany
                out_j.append(sj[pi])
                out_k.append(sk[pi])
                out_b.append(bi)
                out_z.append(z)
            return out_j, out_k, out_b, out_z

        parts_j: list[IntArray] = []
        parts_k: list[IntArray] = []
        parts_b: list[IntArray] = []
        parts_z: list[FloatArray] = []
        # the spans' hits in the pairs' order: the list is the same whatever the threads
        for out_j, out_k, out_b, out_z in in_blocks(
            pairs, range(0, self.special_j.size, _SPECIAL_SPAN * step)
        ):
            parts_j.extend(out_j)
            parts_k.extend(out_k)
            parts_b.extend(out_b)
            parts_z.extend(out_z)
        empty = np.empty(0, dtype=np.intp)
        return (
            level,
            np.concatenate(parts_j) if parts_j else empty,
            np.concatenate(parts_k) if parts_k else empty,
            np.concatenate(parts_b) if parts_b else empty,
            np.concatenate(parts_z) if parts_z else np.empty(0),
        )

    def maxima(self, active: BoolArray) -> FloatArray:
        """Per resample, the max over active pairs of the statistics ``>= level`` (0 where none).

        The list is sorted by resample once (kept while the list is), then each step takes one
        ``maximum.reduceat`` per resample instead of an unbuffered ``maximum.at`` per element (the max is
        exact in any order).
        """
        if self._sorted_for is not self.z:
            order = np.argsort(self.rows, kind="stable")
            rows = self.rows[order]
            self._sorted = (self.pair_j[order], self.pair_k[order], self.z[order])
            self._starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]]) if rows.size else rows
            self._start_rows = rows[self._starts]
            self._sorted_for = self.z
        out = np.zeros(self.y.shape[0])
        if self._starts.size == 0:
            return out
        pj, pk, z = self._sorted
        used = np.where(active[pj, pk], z, 0.0)
        out[self._start_rows] = np.maximum.reduceat(used, self._starts)
        return out


def _next_level(level: float, share: float, confidence: float) -> float:
    """The level of the next search when the quantile fell below ``level``, reached by a ``share`` of the
    resamples' maxima: the quantile's estimate from a normal tail, ``P(max >= x) ~ share exp(-(x^2 -
    level^2) / 2)``, lowered by 3%, between ``0.9 level`` (the step of before, also taken when no maximum
    reached the level) and ``0.99 level``. Only the work depends on it: a level above the quantile is lowered again (K = 5,000, mix: the
    quantile 5.42 below a first level of 5.59, searched again at 5.03 before, about 5.3 now, each crossing
    far fewer candidates)."""
    tail = 1.0 - confidence
    if not 0.0 < share < tail:
        return 0.9 * level
    estimate = math.sqrt(max(level * level + 2.0 * math.log(share / tail), 0.0))
    return min(0.9 * level if estimate <= 0.0 else max(0.9 * level, 0.97 * estimate), 0.99 * level)


def _critical_value(
    y: FloatArray,
    se: FloatArray,
    active: BoolArray,
    confidence: float,
    search: _Exceedances | None,
    cover: BoolArray | None = None,
) -> float:
    """The ``confidence`` quantile (``method="higher"``) of the per-resample max over active pairs.

    With ``search`` the maxima come from the exceedance list at a level ``lambda``. They equal the true
    maxima wherever those reach ``lambda`` and are below ``lambda`` elsewhere, so the quantile is exact
    whenever it is itself ``>= lambda`` (the count of maxima at or above any ``x >= lambda`` is then the
    true count). Otherwise the level is lowered and the search repeated; below 1 the dense computation
    takes over. The starting level is Bonferroni's normal quantile for the number of active pairs, just
    below the usual max-t value.

    With ``cover`` (every pair of the board) a search down to :data:`_COVER_FRACTION` of the first level
    lists every pair, not only the active ones (the maxima still read the active ones): its list is what
    the next board with one more entry starts from, so that board rarely searches again.
    """
    n_active = int(np.count_nonzero(active))  # the same count (a boolean sum: 13x slower at K = 10,000)
    if search is None or n_active <= max(_DENSE_MAX_PAIRS, _DENSE_PER_ENTRY * active.shape[0]):
        return float(np.quantile(_dense_maxima(y, se, active), confidence, method="higher"))
    guess = 0.95 * float(ndtri(1 - (1 - confidence) / (2 * max(n_active, 1))))

    def run(level: float) -> None:
        wide = cover is not None and (
            not np.isfinite(search.first_level) or level >= _COVER_FRACTION * search.first_level
        )
        search.search(level, cover if wide and cover is not None else active, covers_all=wide)

    try:
        if not np.isfinite(search.level):
            run(max(guess, 1.0))
        while True:
            maxima = search.maxima(active)
            critical = float(np.quantile(maxima, confidence, method="higher"))
            if critical >= search.level:
                return critical
            level = min(guess, _next_level(search.level, float(np.mean(maxima >= search.level)), confidence))
            if level < 1.0:
                break
            run(level)
    except _TooMany:
        search.level = np.inf  # the list is incomplete: never read it again
        search.pair_j = search.pair_k = search.rows = np.empty(0, dtype=np.intp)
        search.z = np.empty(0)
    return float(np.quantile(_dense_maxima(y, se, active), confidence, method="higher"))


@with_blas_threads
def simultaneous_ranks(
    theta: npt.ArrayLike,
    point: npt.ArrayLike,
    *,
    higher_is_better: bool,
    confidence: float = 0.95,
    stepdown: bool = True,
) -> SimultaneousRanks:
    """Simultaneous rank confidence sets and the confidence set for the best (bootstrap max-t).

    For every pair ``j < k`` let ``d_jk = theta_j - theta_k`` (point values) and ``se_jk`` the standard
    deviation of the paired replicates ``theta*_j - theta*_k``. The critical value ``c`` is the
    ``confidence`` quantile (``method="higher"``) over resamples of
    ``max_{j<k} |(theta*_j - theta_j) - (theta*_k - theta_k)| / se_jk``; then
    ``d_jk +- c se_jk`` hold for all pairs at once with probability about ``confidence``. An entry ``j``
    is *significantly better* than ``k`` when the whole interval is on its side.
    Projected onto ranks (rank 1 = best): ``lower_j = 1 + #{k significantly better than j}`` and
    ``upper_j = K - #{k significantly worse than j}``; the confidence set for the best entry is
    ``{j : lower_j = 1}`` (Mogstad et al. 2024, the "tau-best" set with tau = 1).

    Because the max over ordered pairs of one-sided statistics equals the max over unordered pairs of
    absolute ones, the same critical value serves the two-sided rank sets and the one-sided best set.

    With ``stepdown`` (default) the critical value is recomputed over the pairs not yet separated until
    no new pair separates (Romano & Wolf 2005; the stepwise improvement of Mogstad et al. 2024,
    Section 3). It never separates fewer pairs than the single step and keeps the same guarantee.

    Pairs with a zero standard error (identical entries) are never separated when their difference is
    0 and always separated otherwise.

    Parameters
    ----------
    theta : array_like, shape (B, K)
        Paired replicates.
    point : array_like, shape (K,)
        Point values.
    higher_is_better : bool
        Direction of the metric.
    confidence : float, default 0.95
        Joint coverage level.
    stepdown : bool, default True
        Use the step-down refinement.

    Returns
    -------
    SimultaneousRanks

    References
    ----------
    .. [1] Mogstad, M., Romano, J. P., Shaikh, A. M. & Wilhelm, D. (2024). Inference for ranks with
       applications to mobility across neighbourhoods and academic achievement across countries.
       *The Review of Economic Studies* 91(1), 476-518.
    .. [2] Romano, J. P. & Wolf, M. (2005). Exact and approximate stepdown methods for multiple
       hypothesis testing. *JASA* 100(469), 94-108.

    Examples
    --------
    >>> import numpy as np
    >>> theta = np.random.default_rng(1).normal([0.80, 0.79, 0.70], 0.01, size=(2000, 3))
    >>> sr = simultaneous_ranks(theta, [0.80, 0.79, 0.70], higher_is_better=True)
    >>> sr.lower.tolist(), sr.upper.tolist(), sr.best.tolist()
    ([1, 1, 3], [2, 2, 3], [True, True, False])
    """
    x = check_replicates(theta, name="theta")
    p = check_vector(point, name="point", length=x.shape[1], what="values, one per entry")
    confidence = check_level(confidence, name="confidence")
    result, _ = _simultaneous(
        x, p, higher_is_better=higher_is_better, confidence=confidence, stepdown=stepdown
    )
    return result


@dataclass(frozen=True)
class MaxTState:
    """What :func:`_simultaneous` leaves for the next board of the same task (:mod:`stats.board_update`).

    ``level`` and the four arrays are the list of every (pair, resample) with max-t statistic
    ``>= level`` over all pairs of the board (the first step), or ``level = inf`` when the board computed
    its maxima densely.
    """

    level: float
    pair_j: npt.NDArray[np.intp]
    pair_k: npt.NDArray[np.intp]
    rows: npt.NDArray[np.intp]
    z: FloatArray


def _separated_by(p: FloatArray, se: FloatArray, bound: float, out: BoolArray | None = None) -> BoolArray:
    """``|t_jk| > bound`` for every pair, in row blocks (no K x K float array; K = 10,000: 0.8 GB), into
    ``out`` (K x K booleans, every element written) when given.

    ``|t| = |d| / se`` with ``d = p_j - p_k``, which is ``|d / se|`` to the bit (and ``|sign d| = |d|``);
    a zero ``se`` gives inf for ``d != 0`` and ``0/0 = nan``, read as 0, for ``d == 0``. The signed
    difference is never stored: ``d != 0`` is ``p_j != p_k`` and "j ahead of k" is ``p_j > p_k`` (or ``<``
    for a lower-is-better metric), exactly.
    """
    k = p.size
    if out is None:
        out = np.empty((k, k), dtype=bool)

    def rows(r0: int) -> None:  # one block of rows (on the board's threads)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.subtract.outer(p[r0 : r0 + 256], p)
            np.abs(t, out=t)
            t /= se[r0 : r0 + 256]
            np.greater(t, bound, out=out[r0 : r0 + 256])  # nan > bound is False: read as 0

    in_blocks(rows, range(0, k, 256))
    return out


def _pair_tables(
    p: FloatArray, se: FloatArray, upper_out: BoolArray | None = None
) -> tuple[BoolArray, BoolArray, int]:
    """The step-down's first tables: the pairs ``j < k`` with ``se > 0``, the pairs with ``se == 0``
    between different values (symmetric, off the diagonal), and the number of the first.

    One pass over ``se`` by blocks of 256 rows on the board's threads (each block writes its own rows):
    the same elements as ``se > 0`` with its lower triangle cleared and ``(se == 0) & (p_j != p_k)`` with
    its diagonal cleared, without the K x K temporary of ``p_j != p_k`` nor a second pass over the
    0.8 GB of ``se`` (issue 24: 1.1 s of one thread per board of 10,000). The first table is written into
    ``upper_out`` when given (every element)."""
    k = p.size
    upper_pairs = np.empty((k, k), dtype=bool) if upper_out is None else upper_out
    zero = np.empty((k, k), dtype=bool)

    def rows(r0: int) -> int:
        r1 = min(k, r0 + 256)
        s = se[r0:r1]
        up = upper_pairs[r0:r1]
        np.greater(s, 0, out=up)
        up[:, :r1] &= np.arange(r1)[None, :] > np.arange(r0, r1)[:, None]  # keep j < k
        z = zero[r0:r1]
        np.equal(s, 0, out=z)
        z &= p[r0:r1, None] != p[None, :]
        z[np.arange(r1 - r0), np.arange(r0, r1)] = False
        return int(np.count_nonzero(up))

    return upper_pairs, zero, sum(in_blocks(rows, range(0, k, 256)))


def _oriented(
    separated: BoolArray, p: FloatArray, higher_is_better: bool
) -> tuple[BoolArray, IntArray, IntArray]:
    """``better = separated & (p_j ahead of p_k)`` in place, and the rank bounds ``1 + better.sum(0)``
    and ``K - better.sum(1)``: by blocks of 256 rows on the board's threads (each writes its own rows;
    the column counts are integers, added in any order), without the K x K temporary of the outer
    comparison."""
    k = p.size
    ahead = np.greater if higher_is_better else np.less

    def rows(r0: int) -> tuple[IntArray, IntArray]:
        block = separated[r0 : r0 + 256]
        block &= ahead(p[r0 : r0 + 256, None], p[None, :])
        return block.sum(axis=0), block.sum(axis=1)

    sums = in_blocks(rows, range(0, k, 256))
    beaten = np.zeros(k, dtype=np.int64)
    for column_sums, _ in sums:
        beaten += column_sums
    beating = np.concatenate([row_sums for _, row_sums in sums]) if sums else np.zeros(0, dtype=np.int64)
    return separated, 1 + beaten, k - beating


def _simultaneous(
    x: FloatArray,
    p: FloatArray,
    *,
    higher_is_better: bool,
    confidence: float,
    stepdown: bool,
    standard_errors: tuple[FloatArray, FloatArray] | None = None,
    deviations: FloatArray | None = None,
    preload: tuple[float, npt.NDArray[np.intp], npt.NDArray[np.intp], npt.NDArray[np.intp], FloatArray]
    | None = None,
    keep: bool = False,
    separate: Callable[[BoolArray, float], bool | None] | None = None,
    tables: tuple[BoolArray, BoolArray] | None = None,
) -> tuple[SimultaneousRanks, MaxTState | None]:
    """:func:`simultaneous_ranks` on checked arrays; with ``keep`` also the state for the next board.

    ``deviations`` (``y = x - p``), ``standard_errors`` (:func:`_pair_standard_errors` of ``y``
    computed by the caller with the same calls) and ``preload`` (an exceedance list of the first step over all pairs)
    replace their computation; neither changes a number. ``separate(separated, bound)`` (issue 24, a new
    entry: :class:`stats.board_update._StepDown`) may take a step's separation: it sets ``separated`` to
    every pair with ``|t| > bound`` (with the pairs separated by a zero standard error), exactly what the
    step gives, and returns whether that added a pair; None: the step is computed here. ``tables``: two
    (K, K) boolean buffers for the step-down's table of the pairs ``j < k`` with a positive standard error
    and its table of the active pairs (every element written before it is read; neither is returned nor
    kept), instead of fresh ones (issue 24: a new entry's board writes them into a buffer it keeps).
    """
    k = x.shape[1]
    # the statistics are computed and the critical value decided in float64 (in float32 the decision
    # flipped on small boards, mostly anti-conservatively, where |t| ties with the critical value)
    # deviations from the point values; the sign of the metric does not matter under |.|
    if deviations is None:  # y = x - p, by row blocks on the board's threads (elementwise: the same bits)
        y = np.empty_like(x)
        step = max(1, _GRAM_BLOCK // max(k, 1))
        in_blocks(
            lambda r0: np.subtract(x[r0 : r0 + step], p, out=y[r0 : r0 + step]), range(0, x.shape[0], step)
        )
    else:
        y = deviations
    # the Gram matrix of the deviations' operand is formed block by block (:func:`_exact_gram`: the operand
    # is never a second B x K array, K = N = B = 10,000: 0.8 GB)
    se, sd = standard_errors if standard_errors is not None else _pair_standard_errors(y)
    upper_pairs, zero, n_upper = _pair_tables(p, se, None if tables is None else tables[0])
    search = (
        None if n_upper <= _DENSE_MAX_PAIRS else _Exceedances(y, se, sd, order=np.argsort(p, kind="stable"))
    )
    if search is not None and preload is not None:
        search.preload(*preload)
    separated = zero  # symmetric (the K x K boolean tables are 95 MiB each at K = 10,000: none copied)
    del zero
    critical = np.inf
    steps = 0
    first: tuple[float, npt.NDArray[np.intp], npt.NDArray[np.intp], npt.NDArray[np.intp], FloatArray] | None
    first = None
    # the step's K x K boolean tables, written again by every step: one allocation each for all the steps
    # (95 MiB each at K = 10,000: fresh pages, zeroed by the kernel on their first touch, every step)
    active = np.empty((k, k), dtype=bool) if tables is None else tables[1]
    newly: BoolArray | None = None
    while True:
        # upper_pairs & ~separated in one pass over the K x K tables (booleans: u > s is u and not s)
        np.greater(upper_pairs, separated, out=active)
        steps += 1
        if not active.any():
            break
        critical = _critical_value(y, se, active, confidence, search, upper_pairs)
        moved = None if separate is None else separate(separated, critical * (1 + _TIE))
        if moved is None:
            newly = _separated_by(p, se, critical * (1 + _TIE), out=newly)
            newly &= active
            moved = bool(newly.any())
            if moved:
                _or_symmetric(separated, newly)
        if not moved:
            break
        if not stepdown:
            break
    if search is not None and search.covered is not None:
        first = search.covered  # every pair's statistics at or above its level: the next board's start
    better, lower, upper = _oriented(separated, p, higher_is_better)
    result = SimultaneousRanks(
        lower=lower.astype(np.int64),
        upper=upper.astype(np.int64),
        best=lower == 1,
        better=better,
        critical_value=critical,
        standard_errors=se,
        steps=steps,
        confidence=confidence,
    )
    if not keep:
        return result, None
    empty = np.empty(0, dtype=np.intp)
    level, pj, pk, rows, z = first if first is not None else (np.inf, empty, empty, empty, np.empty(0))
    return result, MaxTState(level=level, pair_j=pj, pair_k=pk, rows=rows, z=z)


def _pair_statistics(
    p: FloatArray, se: FloatArray, rows: npt.NDArray[np.intp], cols: npt.NDArray[np.intp]
) -> FloatArray:
    """``|t|`` of the pairs ``(rows[i], cols[i])`` as :func:`_separated_by` computes it before comparing it
    with its bound (``|p_j - p_k| / se_jk``; a zero ``se``: inf, or NaN for equal values), so that
    ``_pair_statistics(...) > bound`` are its elements to the bit (``stats.board_update._StepDown``
    evaluates only some pairs of a step: keep the two alike)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = p[rows] - p[cols]
        np.abs(t, out=t)
        t /= se[rows, cols]
    return t
