"""The comparison code as it stood before the incremental board and the faster randomization (issue 14, second pass).

Kept as the named baseline of ``make bench`` (``stats.bench_compare`` times the current code against it in the
same run) and of the equality tests. Not used by the product. A verbatim copy of ``stats/compare_ranks.py`` at
commit 28c8078 plus ``stats.compare.paired_randomization`` of that commit (``paired_randomization_v1``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.special import ndtri

from stats.checks import check_count as _count
from stats.checks import check_level as _level
from stats.compare import RANDOMIZATION_CHUNK, Finalize, RandomizationResult, _swap_chunk

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: Elements (resamples x entries) ranked at once by :func:`rank_distribution`.
_RANK_CHUNK_ELEMENTS = 1 << 20

__all__ = [
    "RankDistribution",
    "SimultaneousRanks",
    "min_ranks",
    "paired_randomization_v1",
    "rank_distribution",
    "simultaneous_ranks",
]


def _theta(theta: npt.ArrayLike, *, name: str = "theta") -> FloatArray:
    arr = np.asarray(theta, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] < 2 or arr.shape[1] < 1:
        raise ValueError(f"`{name}` must have shape (B, K) with B >= 2 resamples and K >= 1 entries.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` must be finite (no NaN or inf replicates).")
    return arr


def _point(point: npt.ArrayLike, k: int) -> FloatArray:
    arr = np.asarray(point, dtype=np.float64)
    if arr.shape != (k,) or not np.all(np.isfinite(arr)):
        raise ValueError(f"`point` must be a finite array of shape ({k},), one value per entry.")
    return arr


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
    """
    x = _theta(theta)
    confidence = _level(confidence, name="confidence")
    b, k = x.shape
    # Rank the resamples in row chunks: the counts are the same, and memory stays O(chunk x K) instead of
    # several B x K int64 temporaries (K = 1,000, B = 10,000: about 0.6 GB at once).
    counts = np.zeros(k * k, dtype=np.int64)
    step = max(1, _RANK_CHUNK_ELEMENTS // k)
    for start in range(0, b, step):
        keyed = -x[start : start + step] if higher_is_better else x[start : start + step]
        # Sorted order of each resample; tied entries share the rank of the first of them, so the
        # (faster, unstable) default argsort gives the same ranks as a stable one. Counted straight
        # from the sorted positions: (entry, rank) pairs, with no ranks array put back in entry order.
        order = np.argsort(keyed, axis=1)
        ordered = np.take_along_axis(keyed, order, axis=1)
        fresh = np.ones(ordered.shape, dtype=bool)
        fresh[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
        first = np.maximum.accumulate(np.where(fresh, np.arange(k), 0), axis=1)
        # unbuffered add: a bincount would allocate and add all K^2 counts per chunk (K = 5,000: 200 MB)
        np.add.at(counts, (order * k + first).ravel(), 1)
    counts = counts.reshape(k, k)
    cumulative = np.cumsum(counts, axis=1)
    tail = (1 - confidence) / 2
    # smallest rank r whose cumulative count reaches q * B (inverse of the empirical CDF)
    low = np.argmax(cumulative >= tail * b - 1e-9, axis=1) + 1
    high = np.argmax(cumulative >= (1 - tail) * b - 1e-9, axis=1) + 1
    return RankDistribution(
        probabilities=counts / b,
        low=low.astype(np.int64),
        high=high.astype(np.int64),
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


def _pair_standard_errors(y: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Bootstrap standard errors of all pairwise differences and of every entry, from one Gram matrix.

    ``y`` is (B, K), the replicates minus any fixed per-entry shift (the point values): the covariance is
    ``(y^T y - B m m^T) / (B - 1)`` with ``m`` the column means, which loses nothing to cancellation
    because ``m`` (the bootstrap bias) is small next to the spread, and needs no centred copy of ``y``.
    """
    b, k = y.shape
    m = y.mean(axis=0)
    se2 = y.T @ y  # becomes the squared standard errors in place, row block by row block: at K = 5,000
    # every K x K temporary is 200 MB
    bm = b * m
    var = np.empty(k)
    for r0 in range(0, k, 256):
        block = se2[r0 : r0 + 256]
        block -= bm[r0 : r0 + 256, None] * m[None, :]
        block /= b - 1
    var[:] = np.maximum(np.diag(se2), 0.0)
    for r0 in range(0, k, 256):
        block = se2[r0 : r0 + 256]
        scale = var[r0 : r0 + 256, None] + var[None, :]
        block *= 2
        np.subtract(scale, block, out=block)
        # cancellation: a pair of identical entries must get exactly 0
        block[block <= 1e-10 * scale] = 0.0
    np.fill_diagonal(se2, 0.0)
    np.sqrt(se2, out=se2)
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


class _TooMany(Exception):
    """The pruned search found more exceedances than it may hold."""


class _Exceedances:
    """Every (pair, resample) whose max-t statistic reaches a level, found without visiting all pairs.

    For a pair ``(j, k)`` and resample ``b`` the statistic is ``z = (y_bj - y_bk) / se_jk`` (ordered, so
    ``|z|`` is covered by the two orders). Write ``sd_j`` for the bootstrap standard deviation of entry
    ``j`` and ``gamma`` for a lower bound of ``se_jk / (sd_j + sd_k)`` over the pairs searched. Then
    ``z >= level`` implies ``(y_bj - h sd_j) >= (y_bk + h sd_k)`` with ``h = level * gamma``: entry ``j``
    must lie in the upper tail of resample ``b`` and ``k`` in its lower tail, so per resample only the
    entries with ``y_bj - h sd_j >= min_k (y_bk + h sd_k)`` and ``y_bk + h sd_k <= max_j (y_bj - h sd_j)``
    are crossed, and the crossed pairs are checked exactly in float64. Pairs for which ``gamma`` would be
    small (nearly identical entries, whose difference varies far less than either entry) are left out of
    the bound and computed densely over all resamples. Nothing is approximated: the list holds exactly
    the (pair, resample) statistics ``>= level``.
    """

    def __init__(self, y: FloatArray, se: FloatArray, sd: FloatArray) -> None:
        self.y = y
        self.se = se
        k = y.shape[1]
        self.sd = sd
        iu, ju = np.triu_indices(k, 1)
        ok = se[iu, ju] > 0
        iu, ju = iu[ok], ju[ok]
        ratio = se[iu, ju] / np.maximum(sd[iu] + sd[ju], np.finfo(float).tiny)
        gamma = float(ratio.min(initial=1.0))
        special = np.zeros(ratio.shape, dtype=bool)
        budget = 2 * k
        if ratio.size > budget:
            typical = float(np.partition(ratio, budget)[budget])
            if gamma < 0.75 * typical:
                gamma = typical
                special = ratio < typical
        self.gamma = gamma * (1 - 1e-9)
        self.special_j, self.special_k = iu[special], ju[special]
        eligible = se > 0
        np.fill_diagonal(eligible, False)
        eligible[self.special_j, self.special_k] = False
        eligible[self.special_k, self.special_j] = False
        self.eligible = eligible
        self.level = np.inf
        self.pair_j = self.pair_k = self.rows = np.empty(0, dtype=np.intp)
        self.z = np.empty(0)

    def search(self, level: float, active: BoolArray) -> None:
        """Collect every (active pair, resample) with statistic ``>= level`` (``level > 0``).

        ``active`` (upper triangle) are the pairs of the current step; later steps use subsets of them,
        so the list serves them too. Raises :class:`_TooMany` past :data:`_MAX_EXCEEDANCES` entries.
        """
        y, se, sd = self.y, self.se, self.sd
        b = y.shape[0]
        h = level * self.gamma * (1 - 1e-9)
        pairs_ok = self.eligible & (active | active.T)
        found = 0
        parts_j, parts_k, parts_b, parts_z = [], [], [], []
        for r0 in range(0, b, _ROW_BLOCK):
            yc = y[r0 : r0 + _ROW_BLOCK]
            up = yc - h * sd
            low = yc + h * sd
            j_rows, j_cols = np.nonzero(up >= low.min(axis=1)[:, None])
            k_rows, k_cols = np.nonzero(low <= up.max(axis=1)[:, None])
            n_k = np.bincount(k_rows, minlength=yc.shape[0])
            start_k = np.cumsum(n_k) - n_k
            reps = n_k[j_rows]
            ends = np.cumsum(reps)
            first = 0
            while first < j_rows.size:
                base = 0 if first == 0 else int(ends[first - 1])
                last = int(np.searchsorted(ends, base + _CANDIDATE_CHUNK, side="right"))
                last = max(last, first + 1)
                rr = reps[first:last]
                total = int(rr.sum())
                if total:
                    jj = np.repeat(j_cols[first:last], rr)
                    bb = np.repeat(j_rows[first:last], rr)
                    within = np.arange(total) - np.repeat(np.cumsum(rr) - rr, rr)
                    kk = k_cols[np.repeat(start_k[j_rows[first:last]], rr) + within]
                    keep = (up[bb, jj] >= low[bb, kk]) & pairs_ok[jj, kk]
                    jj, kk, bb = jj[keep], kk[keep], bb[keep]
                    z = (yc[bb, jj] - yc[bb, kk]) / se[jj, kk]
                    hit = z >= level
                    found += int(hit.sum())
                    if found > _MAX_EXCEEDANCES:
                        raise _TooMany
                    parts_j.append(jj[hit])
                    parts_k.append(kk[hit])
                    parts_b.append(bb[hit] + r0)
                    parts_z.append(z[hit])
                first = last
        yt = np.ascontiguousarray(y.T) if self.special_j.size else y.T
        for start in range(0, self.special_j.size, 256):
            sj = self.special_j[start : start + 256]
            sk = self.special_k[start : start + 256]
            on = active[sj, sk]
            sj, sk = sj[on], sk[on]
            block = yt[sj] - yt[sk]
            np.abs(block, out=block)
            block /= se[sj, sk][:, None]
            pi, bi = np.nonzero(block >= level)
            found += pi.size
            if found > _MAX_EXCEEDANCES:
                raise _TooMany
            parts_j.append(sj[pi])
            parts_k.append(sk[pi])
            parts_b.append(bi)
            parts_z.append(block[pi, bi])
        pair_j = np.concatenate(parts_j) if parts_j else np.empty(0, dtype=np.intp)
        pair_k = np.concatenate(parts_k) if parts_k else np.empty(0, dtype=np.intp)
        self.pair_j = np.minimum(pair_j, pair_k)
        self.pair_k = np.maximum(pair_j, pair_k)
        self.rows = np.concatenate(parts_b) if parts_b else np.empty(0, dtype=np.intp)
        self.z = np.concatenate(parts_z) if parts_z else np.empty(0)
        self.level = level

    def maxima(self, active: BoolArray) -> FloatArray:
        """Per resample, the max over active pairs of the statistics ``>= level`` (0 where none)."""
        out = np.zeros(self.y.shape[0])
        use = active[self.pair_j, self.pair_k]
        np.maximum.at(out, self.rows[use], self.z[use])
        return out


def _critical_value(
    y: FloatArray,
    se: FloatArray,
    active: BoolArray,
    confidence: float,
    search: _Exceedances | None,
) -> float:
    """The ``confidence`` quantile (``method="higher"``) of the per-resample max over active pairs.

    With ``search`` the maxima come from the exceedance list at a level ``lambda``. They equal the true
    maxima wherever those reach ``lambda`` and are below ``lambda`` elsewhere, so the quantile is exact
    whenever it is itself ``>= lambda`` (the count of maxima at or above any ``x >= lambda`` is then the
    true count). Otherwise the level is lowered and the search repeated; below 1 the dense computation
    takes over. The starting level is Bonferroni's normal quantile for the number of active pairs, just
    below the usual max-t value.
    """
    n_active = int(active.sum())
    if search is None or n_active <= max(_DENSE_MAX_PAIRS, _DENSE_PER_ENTRY * active.shape[0]):
        return float(np.quantile(_dense_maxima(y, se, active), confidence, method="higher"))
    guess = 0.95 * float(ndtri(1 - (1 - confidence) / (2 * max(n_active, 1))))
    try:
        if not np.isfinite(search.level):
            search.search(max(guess, 1.0), active)
        while True:
            critical = float(np.quantile(search.maxima(active), confidence, method="higher"))
            if critical >= search.level:
                return critical
            level = min(guess, 0.9 * search.level)
            if level < 1.0:
                break
            search.search(level, active)
    except _TooMany:
        search.level = np.inf  # the list is incomplete: never read it again
        search.pair_j = search.pair_k = search.rows = np.empty(0, dtype=np.intp)
        search.z = np.empty(0)
    return float(np.quantile(_dense_maxima(y, se, active), confidence, method="higher"))


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
    """
    x = _theta(theta)
    k = x.shape[1]
    p = _point(point, k)
    confidence = _level(confidence, name="confidence")
    sign = 1.0 if higher_is_better else -1.0
    # the statistics are computed and the critical value decided in float64 (in float32 the decision
    # flipped on small boards, mostly anti-conservatively, where |t| ties with the critical value)
    y = x - p  # deviations from the point values; the sign of the metric does not matter under |.|
    se, sd = _pair_standard_errors(y)
    diff = sign * (p[:, None] - p[None, :])  # advantage of j over k
    with np.errstate(divide="ignore", invalid="ignore"):
        t_obs = np.where(se > 0, diff / se, np.sign(diff) * np.inf)
    t_obs = np.where((se == 0) & (diff == 0), 0.0, t_obs)
    upper_pairs = np.triu(np.ones((k, k), dtype=bool), 1) & (se > 0)
    search = None if int(upper_pairs.sum()) <= _DENSE_MAX_PAIRS else _Exceedances(y, se, sd)
    zero = (se == 0) & (diff != 0)
    np.fill_diagonal(zero, False)
    separated = zero.copy()  # symmetric
    critical = np.inf
    steps = 0
    while True:
        active = upper_pairs & ~separated
        steps += 1
        if not active.any():
            break
        critical = _critical_value(y, se, active, confidence, search)
        newly = active & (np.abs(t_obs) > critical * (1 + _TIE))
        if not newly.any():
            break
        separated |= newly | newly.T
        if not stepdown:
            break
    better = separated & (diff > 0)
    lower = 1 + better.sum(axis=0)
    upper = k - better.sum(axis=1)
    return SimultaneousRanks(
        lower=lower.astype(np.int64),
        upper=upper.astype(np.int64),
        best=lower == 1,
        better=better,
        critical_value=critical,
        standard_errors=se,
        steps=steps,
        confidence=confidence,
    )


def paired_randomization_v1(
    statistics: Sequence[npt.ArrayLike],
    *,
    finalize: Finalize,
    reference: int,
    randomizations: int = 10_000,
    seed: int = 0,
    dtype: npt.DTypeLike | None = None,
) -> RandomizationResult:
    """Paired approximate randomization of every entry against ``reference``, in matrix products.

    Under the null hypothesis that the two entries are exchangeable on each item, swapping the two
    entries' per-item statistics of any subset of items gives an equally likely data set. For a swap
    indicator ``z`` (one draw, length N) the pooled statistics become
    ``pooled_A + z @ (S_B - S_A)`` and ``pooled_B - z @ (S_B - S_A)``; the metric is then *finalized* from
    the pooled sums, so the test is valid for non-decomposable metrics (macro-F1, BLEU...) as well.
    All entries against the reference share one swap matrix ``Z`` (R x N), and ``Z @ [S_k - S_ref]_k``
    is one matrix product for all entries.

    The statistic is the absolute difference of the metric values; the p-value is
    ``(1 + #{r : |d_r| >= |d_obs|}) / (1 + R)`` (Phipson & Smyth 2010), with a relative tolerance of
    ``1e-9`` on ``>=`` so that exact ties are counted whatever the floating-point rounding.

    Parameters
    ----------
    statistics : sequence of array_like, each (N, m)
        Per-item sufficient statistics of every entry (same N and m).
    finalize : callable
        The metric's vectorised ``finalize``: pooled sums (..., m) -> values (...).
    reference : int
        Index of the reference entry (the leader).
    randomizations : int, default 10000
        Number of draws ``R``.
    seed : int, default 0
        Seed of the swap matrix (see :func:`randomization_weights`).
    dtype : numpy dtype, optional
        Precision of the products. By default ``float32`` when every statistic is an integer and
        ``N * max|S| < 2**24`` (0/1 correctness, confusion counts: the products are then exact and twice
        as fast), ``float64`` otherwise. The metric is always finalized in float64.

    Returns
    -------
    RandomizationResult

    References
    ----------
    .. [1] Noreen, E. W. (1989). *Computer-Intensive Methods for Testing Hypotheses*. Wiley.
    .. [2] Riezler, S. & Maxwell, J. T. (2005). On some pitfalls in automatic evaluation and
       significance testing for MT. *ACL Workshop on Intrinsic and Extrinsic Evaluation Measures*.
    .. [3] Phipson, B. & Smyth, G. K. (2010). Permutation p-values should never be zero. *Statistical
       Applications in Genetics and Molecular Biology* 9(1), Article 39.
    """
    if len(statistics) < 1:
        raise ValueError("`statistics` must hold at least one entry.")
    arrays = [np.asarray(s, dtype=np.float64) for s in statistics]
    arrays = [a[:, None] if a.ndim == 1 else a for a in arrays]
    shape = arrays[0].shape
    if any(a.ndim != 2 or a.shape != shape for a in arrays) or shape[0] < 1:
        raise ValueError("`statistics` must be arrays of one common shape (N, m) with N >= 1.")
    if not all(np.all(np.isfinite(a)) for a in arrays):
        raise ValueError("`statistics` must be finite.")
    k = len(arrays)
    reference = _count(reference, name="reference")
    if reference >= k:
        raise ValueError(f"`reference` must be an index below {k}, got {reference}.")
    randomizations = _count(randomizations, name="randomizations", minimum=1)
    seed = _count(seed, name="seed")
    n, m = shape
    ref = arrays[reference]
    pooled_ref = ref.sum(axis=0)  # (m,)
    pooled = np.stack([a.sum(axis=0) for a in arrays])  # (K, m)
    values = np.asarray(finalize(pooled), dtype=np.float64)
    observed = values - float(np.asarray(finalize(pooled_ref), dtype=np.float64))
    threshold = np.abs(observed) * (1 - 1e-9)
    # One pass over the entries, none over an (N, K, m) array (160 MB at K = 1,000): which columns and
    # items any swap can move, whether the statistics are integers, the largest difference. Columns that
    # no swap can move (item counts, true-class counts) and items on which every entry has the
    # reference's statistics (two thirds of them on a board of 1,000 entries) are left out of the
    # product: leaving out exact zeros changes no sum.
    moving_mask = np.zeros((k, m), dtype=bool)
    item_mask = np.zeros(n, dtype=bool)
    integer = True
    largest = 0.0
    for j, a in enumerate(arrays):
        if j == reference:
            continue
        nonzero = a != ref
        moving_mask[j] = nonzero.any(axis=0)
        item_mask |= nonzero.any(axis=1)
        if moving_mask[j].any():
            largest = max(largest, float(np.abs(a - ref).max()))
        integer = integer and bool(np.array_equal(a, np.round(a)))
    integer = integer and bool(np.array_equal(ref, np.round(ref)))
    if dtype is None:
        dtype = np.float32 if integer and n * largest < 2**24 else np.float64
    moving = np.flatnonzero(moving_mask.ravel())  # columns of the (K * m) flattening
    items = np.flatnonzero(item_mask)
    delta_moving = np.empty((items.size, moving.size), dtype=dtype)
    ref_items = ref[items]
    position = 0
    for j in np.flatnonzero(moving_mask.any(axis=1)).tolist():
        cols = np.flatnonzero(moving_mask[j])
        delta_moving[:, position : position + cols.size] = arrays[j][items][:, cols] - ref_items[:, cols]
        position += cols.size
    counts = np.zeros(k, dtype=np.int64)
    moved_flat = np.zeros((RANDOMIZATION_CHUNK, k * m))
    for c, start in enumerate(range(0, randomizations, RANDOMIZATION_CHUNK)):
        rows = min(RANDOMIZATION_CHUNK, randomizations - start)
        z = _swap_chunk(n, seed, c)[:rows, items].astype(dtype)
        moved_flat[:rows, moving] = z @ delta_moving
        moved = moved_flat[:rows].reshape(rows, k, m)  # (r, K, m)
        # swapped: reference gets + moved, entry gets - moved
        ref_side = np.asarray(finalize(pooled_ref + moved), dtype=np.float64)
        entry_side = np.asarray(finalize(pooled[None, :, :] - moved), dtype=np.float64)
        counts += (np.abs(entry_side - ref_side) >= threshold).sum(axis=0)
    same = ~moving_mask.any(axis=1)
    p_values: FloatArray = np.where(same, 1.0, (1.0 + counts) / (1.0 + randomizations))
    return RandomizationResult(
        p_values=p_values, counts=counts, observed=observed, randomizations=randomizations, seed=int(seed)
    )
