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

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from stats.compare import _level

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
    order = np.argsort(keyed, axis=1, kind="stable")
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
    offsets = np.arange(k)[None, :] * k
    counts = np.zeros(k * k, dtype=np.int64)
    step = max(1, _RANK_CHUNK_ELEMENTS // k)
    for start in range(0, b, step):
        ranks = min_ranks(x[start : start + step], higher_is_better=higher_is_better)
        counts += np.bincount((offsets + (ranks - 1)).ravel(), minlength=k * k)
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


def _pair_standard_errors(centred: FloatArray) -> FloatArray:
    b = centred.shape[0]
    cov = centred.T @ centred / (b - 1)
    var = np.diag(cov)
    se2 = var[:, None] + var[None, :] - 2 * cov
    # cancellation: a pair of identical entries must get exactly 0
    scale = var[:, None] + var[None, :]
    se2 = np.where(se2 <= 1e-10 * scale, 0.0, se2)
    np.fill_diagonal(se2, 0.0)
    return np.sqrt(se2)


def _max_abs_t(
    deviations_t: npt.NDArray[np.floating], inverse_se: FloatArray, active: BoolArray
) -> npt.NDArray[np.floating]:
    """Per resample, the max over active pairs j < k of |dev_j - dev_k| / se_jk."""
    k, b = deviations_t.shape
    out = np.zeros(b, dtype=deviations_t.dtype)
    for j in range(k - 1):
        cols = np.flatnonzero(active[j, j + 1 :]) + j + 1
        if cols.size == 0:
            continue
        block = deviations_t[cols] - deviations_t[j]
        block *= inverse_se[j, cols].astype(deviations_t.dtype)[:, None]
        np.maximum(out, block.max(axis=0), out=out)
        np.maximum(out, -block.min(axis=0), out=out)
    return out


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
    se = _pair_standard_errors(x - x.mean(axis=0))
    diff = sign * (p[:, None] - p[None, :])  # advantage of j over k
    with np.errstate(divide="ignore", invalid="ignore"):
        t_obs = np.where(se > 0, diff / se, np.sign(diff) * np.inf)
    t_obs = np.where((se == 0) & (diff == 0), 0.0, t_obs)
    inverse_se = np.where(se > 0, 1.0 / np.where(se > 0, se, 1.0), 0.0)
    # float32 halves the cost of the O(B K^2) max; the critical value needs no more precision
    deviations_t = np.ascontiguousarray((x - p).T, dtype=np.float32)  # sign does not matter under |.|
    upper_pairs = np.triu(np.ones((k, k), dtype=bool), 1) & (se > 0)
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
        maxima = _max_abs_t(deviations_t, inverse_se, active)
        critical = float(np.quantile(maxima, confidence, method="higher"))
        newly = active & (np.abs(t_obs) > critical)
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
