"""Confidence intervals: bootstrap (percentile, basic, BCa) and binomial (Wilson, Clopper-Pearson, Wald).

The bootstrap intervals take replicates of shape (B,) or (B, K) and are vectorised over the K entries:
the cost after ``Theta*`` is a few sorts of B x K numbers. Their definitions follow
``scipy.stats.bootstrap`` exactly (same quantile rule, same bias-correction and acceleration formulas),
which the tests check on identical resamples. One deliberate difference: when every jackknife value is
equal (a degenerate statistic, e.g. accuracy 1.0) the acceleration is taken as 0 instead of NaN.

The default is BCa at 95% (docs/adr/0002-default-interval.md).

References
----------
.. [1] Efron, B. and Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*, ch. 13 (percentile),
       14.3 (BCa, eq. 14.9-14.15), 15.4.
.. [2] Davison, A. C. and Hinkley, D. V. (1997). *Bootstrap Methods and their Application*, eq. 5.6
       (basic bootstrap interval).
.. [3] Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference.
       JASA 22(158), 209-212.
.. [4] Clopper, C. J. and Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in
       the case of the binomial. Biometrika 26(4), 404-413.
.. [5] Brown, L. D., Cai, T. T. and DasGupta, A. (2001). Interval Estimation for a Binomial Proportion.
       Statistical Science 16(2), 101-133.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, get_args

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special
from scipy import stats as sps

from stats._threads import in_blocks
from stats.checks import (
    UNDEFINED_RULE,
    check_choice,
    check_jackknife,
    check_level,
    check_replicates,
    defined_rows,
)
from stats.metrics import Metric, get_metric
from stats.signature import Signature

__all__ = [
    "BOOTSTRAP_METHODS",
    "DEFAULT_CONFIDENCE",
    "DEFAULT_METHOD",
    "PROPORTION_DEFAULT",
    "PROPORTION_METHODS",
    "RANGE_RULE",
    "ZERO_WIDTH_WARNING",
    "Interval",
    "IntervalMethod",
    "bca_constants",
    "bca_or_percentile",
    "binomial_standard_error",
    "bootstrap_bounds",
    "clip_to_range",
    "clopper_pearson_interval",
    "default_interval",
    "interval_for",
    "intervals_for",
    "proportion_bounds",
    "wald_interval",
    "wilson_interval",
    "zero_width_warnings",
]

IntervalMethod = Literal[
    "bca", "percentile", "basic", "wilson", "wilson_modified", "clopper_pearson", "jeffreys", "wald"
]
BOOTSTRAP_METHODS = ("bca", "percentile", "basic")
PROPORTION_METHODS = ("clopper_pearson", "wilson", "wilson_modified", "jeffreys", "wald")
#: The default interval of a plain proportion (a 0/1 metric on independent items): the only method whose
#: exact coverage is at least 0.95 in every cell of the grid of ``python -m stats.coverage``, n = 10 to
#: 1,000 and p up to 0.999 (docs/adr/0007-proportion-interval.md).
PROPORTION_DEFAULT = "clopper_pearson"
DEFAULT_METHOD: IntervalMethod = "bca"
DEFAULT_CONFIDENCE = 0.95

#: What an interval of zero width carries (every bootstrap replicate equal, or a method that collapses at
#: this count such as Wald at 0 or n right): it is never shown without it.
ZERO_WIDTH_WARNING = (
    "the interval has zero width (every bootstrap replicate is equal, or the method collapses at this "
    "count): it says nothing about the sampling error; use the metric's default interval or more items"
)
#: The rule for a bound outside the metric's range (``Metric.value_range``).
RANGE_RULE = (
    "a bound outside the metric's range is moved to the range's edge (the true value lies in the range, "
    "so this never lowers the coverage)"
)

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class Interval:
    """A two-sided confidence interval.

    Attributes
    ----------
    low, high : float
        The bounds (NaN when undefined, e.g. a metric undefined in some resamples).
    confidence : float
        Confidence level, e.g. 0.95.
    method : str
        One of :data:`IntervalMethod`.
    signature : Signature or None
        How it was computed (metric, method, resamples, seed, confidence, version).
    warning : str or None
        Set when the interval has zero width (:data:`ZERO_WIDTH_WARNING`): it then says nothing about
        the sampling error, and every table that shows it prints the warning too.
    """

    low: float
    high: float
    confidence: float
    method: str
    signature: Signature | None = None
    warning: str | None = None


class _Scored(Protocol):
    """What :func:`interval_for` needs of a score (see :class:`stats.engine.EntryScore`)."""

    @property
    def value(self) -> float: ...
    @property
    def replicates(self) -> FloatArray: ...
    @property
    def jackknife(self) -> FloatArray: ...
    @property
    def pooled(self) -> FloatArray | None: ...
    @property
    def signature(self) -> Signature: ...


#: Columns per task of :func:`_quantiles` on the board's threads (a multiple of its blocks of 64).
_QUANTILE_SPAN = 1024


def _quantiles(theta: FloatArray, probs: FloatArray) -> FloatArray:
    """Per column ``k``, the linear-interpolation quantile ``probs[..., k]`` of ``theta[:, k]``.

    Same rule as ``numpy.quantile(method="linear")`` and ``scipy.stats.quantile`` (Hyndman-Fan type 7).
    """
    b = theta.shape[0]
    pos = np.nan_to_num(np.clip(probs, 0.0, 1.0), nan=0.0) * (b - 1)
    lo = np.floor(pos).astype(np.intp)
    hi = np.minimum(lo + 1, b - 1)
    frac = pos - lo
    # Only a few order statistics per column are needed: select them (O(B) per column) instead of
    # sorting every column (O(B log B)); the values are the same order statistics a sort gives.
    needed = np.concatenate([lo, hi])  # (2P, K)
    # A transposed copy of 64 columns at a time (partitioned in place): a plain transpose of a large
    # (B, K) array strides through memory and took several times longer, and a copy of the whole array
    # (K = 5,000, B = 10,000: 400 MB) cost more than the selection itself.
    k = theta.shape[1]
    same = bool(np.all(needed == needed[:, :1]))
    kth = np.unique(needed[:, 0]) if same and k else None
    picked = np.empty(needed.shape)
    has_nan = np.empty(k, dtype=bool)

    def span(c0: int) -> None:
        """Columns c0.. (:data:`_QUANTILE_SPAN` of them, written by this span alone: the spans run on the
        board's threads, ``stats._threads.in_blocks``; issue 24, fifth pass)."""
        rows = np.empty((min(k - c0, 64), b))
        for c in range(c0, min(k, c0 + _QUANTILE_SPAN), 64):
            block = rows[: min(64, k - c)]
            block[:] = theta[:, c : c + 64].T
            has_nan[c : c + 64] = np.isnan(block).any(axis=1)
            if kth is not None:
                block.partition(kth, axis=1)
                picked[:, c : c + 64] = block[:, needed[:, 0]].T
            else:
                for j in range(block.shape[0]):
                    block[j].partition(np.unique(needed[:, c + j]))
                    picked[:, c + j] = block[j, needed[:, c + j]]

    in_blocks(span, range(0, k, _QUANTILE_SPAN))
    low_v, high_v = picked[: lo.shape[0]], picked[lo.shape[0] :]
    out = low_v + frac * (high_v - low_v)
    out = np.where(np.isnan(probs), np.nan, out)
    return np.where(has_nan, np.nan, out)


def bca_constants(
    replicates: FloatArray, point: FloatArray, jackknife: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """BCa's bias correction ``z0`` and acceleration ``a`` per column (Efron & Tibshirani 1993, 14.3).

    **Ties.** On a discrete statistic (accuracy, a difference of accuracies) many replicates equal the
    estimate exactly, and ``z0`` depends on how they are counted. The convention here, the same as
    ``scipy.stats.bootstrap`` (its ``_percentile_of_score`` with ties counted half), is explicit:

    ``z0 = Phi^{-1}((#(theta* < theta) + #(theta* == theta) / 2) / B)``

    so a symmetric distribution with a lump at the estimate has ``z0 = 0``, whereas counting only
    ``theta* < theta`` (Efron & Tibshirani's eq. 14.14 read literally) would shift every interval of a
    discrete statistic down. When every replicate lies on one side (the share is 0 or 1) the share is
    bounded by half a replicate, so ``z0`` stays finite. ``a`` is 0 when every jackknife value is equal.
    """
    b = replicates.shape[0]
    below = (replicates < point).sum(axis=0) + 0.5 * (replicates == point).sum(axis=0)
    z0 = special.ndtri(np.clip(below / b, 0.5 / b, 1.0 - 0.5 / b))
    # Leave-one-out values that are undefined (leaving out the only positive item of an AUC) are left
    # out of the acceleration; with none undefined this is Efron's formula unchanged.
    finite = np.isfinite(jackknife)
    jk = np.where(finite, jackknife, 0.0)
    count = np.maximum(finite.sum(axis=0), 1)
    d = np.where(finite, jk.sum(axis=0) / count - jk, 0.0)
    num = (d**3).sum(axis=0)
    den = 6.0 * (d**2).sum(axis=0) ** 1.5
    accel = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
    return z0, accel


def bca_or_percentile(method: str, *, has_jackknife: bool) -> str:
    """The one fallback rule of BCa: it needs leave-one-out values (for its acceleration); without them
    the percentile interval is used (of the two others it has the better coverage on the grid,
    docs/stats.md). Any other method is returned unchanged.

    Examples
    --------
    >>> bca_or_percentile("bca", has_jackknife=False), bca_or_percentile("bca", has_jackknife=True)
    ('percentile', 'bca')
    >>> bca_or_percentile("basic", has_jackknife=False)
    'basic'
    """
    return "percentile" if method == "bca" and not has_jackknife else method


def default_interval(
    metric: str | Metric | None = None,
    *,
    zero_one: bool | None = None,
    grouped: bool = False,
    has_counts: bool = True,
    has_jackknife: bool = True,
) -> str:
    """The default interval of a metric: the one rule that ``python -m stats score``, ``python -m stats
    leaderboard``, :func:`stats.board.build_board` (so the service's boards and pages) and
    :func:`interval_for` follow, chosen by measured coverage.

    - a plain proportion (a 0/1 metric on independent items, counts known): :data:`PROPORTION_DEFAULT`,
      Clopper-Pearson, whose exact coverage is at least 0.95 in every cell of the grid of
      ``python -m stats.coverage`` (docs/adr/0007-proportion-interval.md); an entry with every item
      right gets ``[l, 1]``, never ``[1, 1]``;
    - a metric of the registry that names its own (``Metric.default_interval``: basic for detection
      AP, percentile for mIoU, from the vision coverage simulation, docs/stats.md), that one;
    - anything else (grouped items, other metrics): BCa.

    BCa without leave-one-out values falls back to the percentile interval (:func:`bca_or_percentile`).

    Parameters
    ----------
    metric : str or Metric, optional
        A metric of the registry (``None`` or an unknown name: only the flags decide).
    zero_one : bool, optional
        Each item is right or wrong (default: the metric's ``zero_one``).
    grouped : bool, default False
        The items share groups (a cluster bootstrap): binomial intervals do not apply.
    has_counts : bool, default True
        The counts of right items and of items are known.
    has_jackknife : bool, default True
        Leave-one-out values are available (for BCa).

    Examples
    --------
    >>> default_interval("accuracy"), default_interval("accuracy", grouped=True)
    ('clopper_pearson', 'bca')
    >>> default_interval("coco_ap"), default_interval("macro_f1", has_jackknife=False)
    ('basic', 'percentile')
    """
    if isinstance(metric, str):
        from stats.metrics import METRICS

        metric = METRICS.get(metric)
    if zero_one is None:
        zero_one = bool(metric is not None and metric.zero_one)
    if zero_one and not grouped and has_counts:
        return PROPORTION_DEFAULT
    own = metric.default_interval if metric is not None else None
    if own is not None and own not in PROPORTION_METHODS:
        return bca_or_percentile(own, has_jackknife=has_jackknife)
    return bca_or_percentile("bca", has_jackknife=has_jackknife)


def clip_to_range(
    low: ArrayLike, high: ArrayLike, value_range: tuple[float, float] | None
) -> tuple[FloatArray, FloatArray]:
    """Bounds moved into ``value_range`` (:data:`RANGE_RULE`): a basic bootstrap interval reflects the
    replicates around the estimate and can cross the range (a per-class AP of ``[0.703, 1.198]``). The
    true value lies in the range, so the clipped interval covers whenever the unclipped one does.

    Examples
    --------
    >>> lo, hi = clip_to_range([0.703, -0.2], [1.198, 0.4], (0.0, 1.0))
    >>> lo.tolist(), hi.tolist()
    ([0.703, 0.0], [1.0, 0.4])
    """
    lo = np.asarray(low, dtype=np.float64)
    hi = np.asarray(high, dtype=np.float64)
    if value_range is None:
        return lo, hi
    bottom, top = value_range
    # NaN stays NaN (np.clip keeps it): an undefined bound is not invented by the clipping
    return np.clip(lo, bottom, top), np.clip(hi, bottom, top)


def difference_range(value_range: tuple[float, float] | None) -> tuple[float, float] | None:
    """The range of a difference of two values of a metric whose range is ``value_range``:
    ``(low - high, high - low)`` (``(-1, 1)`` for a proportion).

    >>> difference_range((0.0, 1.0))
    (-1.0, 1.0)
    """
    if value_range is None:
        return None
    low, high = value_range
    return (low - high, high - low)


def zero_width_warnings(low: ArrayLike, high: ArrayLike) -> list[str | None]:
    """:data:`ZERO_WIDTH_WARNING` for every interval whose bounds are equal, ``None`` for the others."""
    lo = np.atleast_1d(np.asarray(low, dtype=np.float64))
    hi = np.atleast_1d(np.asarray(high, dtype=np.float64))
    return [ZERO_WIDTH_WARNING if a == b else None for a, b in zip(lo.tolist(), hi.tolist(), strict=True)]


def _bca_probabilities(
    theta: FloatArray, point: FloatArray, jackknife: FloatArray, alpha: float
) -> tuple[FloatArray, FloatArray]:
    z0, accel = bca_constants(theta, point, jackknife)
    z_alpha = special.ndtri(alpha)
    n1 = z0 + z_alpha
    n2 = z0 - z_alpha
    return special.ndtr(z0 + n1 / (1 - accel * n1)), special.ndtr(z0 + n2 / (1 - accel * n2))


def bootstrap_bounds(
    replicates: ArrayLike,
    *,
    point: ArrayLike,
    method: str = DEFAULT_METHOD,
    confidence: float = DEFAULT_CONFIDENCE,
    jackknife: ArrayLike | None = None,
    value_range: tuple[float, float] | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Bootstrap interval bounds for K entries at once.

    Parameters
    ----------
    replicates : array_like, shape (B,) or (B, K)
        Bootstrap replicates, one column per entry.
    point : array_like, shape () or (K,)
        Point estimates.
    method : {"bca", "percentile", "basic"}, default "bca"
    confidence : float, default 0.95
    jackknife : array_like, shape (n,) or (n, K), optional
        Leave-one-out values; required for ``"bca"``.
    value_range : (float, float), optional
        The metric's range (``Metric.value_range``): bounds outside it are moved to its edge
        (:func:`clip_to_range`).

    Returns
    -------
    low, high : ndarray, shape (K,) (shape (1,) for one-dimensional input)

    Examples
    --------
    >>> import numpy as np
    >>> theta = np.random.default_rng(0).normal([0.80, 0.75], 0.02, size=(1000, 2))  # B x K replicates
    >>> low, high = bootstrap_bounds(theta, point=[0.80, 0.75], method="percentile")
    >>> low.round(3).tolist(), high.round(3).tolist()
    ([0.759, 0.712], [0.837, 0.789])
    """
    confidence = check_level(confidence, name="confidence")
    check_choice(method, BOOTSTRAP_METHODS, name="method")
    theta = check_replicates(replicates, one_dimensional=True, finite=False)
    pt = np.broadcast_to(np.asarray(point, dtype=np.float64), (theta.shape[1],))
    alpha = (1.0 - confidence) / 2.0
    if method == "bca":
        if jackknife is None:
            raise ValueError("`jackknife` is required for `method` 'bca'.")
        jack = check_jackknife(jackknife, k=theta.shape[1])
        p_low, p_high = _bca_probabilities(theta, pt, jack, alpha)
    else:
        p_low = np.full(theta.shape[1], alpha)
        p_high = np.full(theta.shape[1], 1.0 - alpha)
    q = _quantiles(theta, np.stack([p_low, p_high]))
    low, high = q[0], q[1]
    if method == "basic":
        low, high = 2.0 * pt - high, 2.0 * pt - low
    return clip_to_range(low, high, value_range)


def _z(confidence: float) -> float:
    return float(special.ndtri(1.0 - (1.0 - confidence) / 2.0))


def _check_counts(successes: ArrayLike, n: ArrayLike) -> tuple[FloatArray, FloatArray]:
    x = np.asarray(successes, dtype=np.float64)
    nn = np.asarray(n, dtype=np.float64)
    if np.any(nn <= 0) or np.any(nn != np.round(nn)):
        raise ValueError("`n` must be a positive integer.")
    if np.any(x < 0) or np.any(x > nn) or np.any(x != np.round(x)):
        raise ValueError("`successes` must be an integer between 0 and `n`.")
    return x, nn


def proportion_bounds(
    successes: ArrayLike,
    n: ArrayLike,
    *,
    method: str = PROPORTION_DEFAULT,
    confidence: float = DEFAULT_CONFIDENCE,
) -> tuple[FloatArray, FloatArray]:
    """Bounds of a binomial proportion's interval, vectorised over ``successes`` and ``n``.

    Parameters
    ----------
    successes, n : array_like of int
        Items right and items in all.
    method : {"clopper_pearson", "wilson", "wilson_modified", "jeffreys", "wald"}, default "clopper_pearson"
        The exact Clopper-Pearson interval [4]_ (the default: its coverage is at least the nominal level
        for every ``n`` and ``p``, docs/adr/0007-proportion-interval.md); Wilson's score interval [3]_;
        Wilson modified as Brown, Cai & DasGupta [5]_ (sec. 4.1.1) propose: for ``x = 1..x*`` (``x* = 2``
        for ``n <= 50``, else 3) the lower bound is the one-sided Poisson bound ``chi2_{2x}(alpha) / (2n)``
        with ``alpha = 1 - confidence``, and the mirror for the upper bound at ``x = n - 1..n - x*``;
        the equal-tailed Jeffreys interval (Beta(x + 1/2, n - x + 1/2) quantiles, lower bound 0 at
        ``x = 0`` and upper bound 1 at ``x = n`` [5]_); or the textbook Wald interval
        ``p +/- z sqrt(p (1 - p) / n)``, which undercovers badly near 0 and 1 [5]_ (for comparison only).
    confidence : float, default 0.95

    Returns
    -------
    low, high : ndarray
        Every method's bounds lie in [0, 1] (Wald's are clipped there).

    Examples
    --------
    >>> low, high = proportion_bounds([30, 29], 30)
    >>> low.round(4).tolist(), high.round(4).tolist()
    ([0.8843, 0.8278], [1.0, 0.9992])
    """
    confidence = check_level(confidence, name="confidence")
    check_choice(method, PROPORTION_METHODS, name="method")
    x, nn = _check_counts(successes, n)
    x, nn = np.broadcast_arrays(x, nn)
    p = x / nn
    alpha = 1.0 - confidence
    if method == "wald":
        half = _z(confidence) * np.sqrt(p * (1 - p) / nn)
        return np.clip(p - half, 0.0, 1.0), np.clip(p + half, 0.0, 1.0)
    if method in ("wilson", "wilson_modified"):
        z = _z(confidence)
        z2 = z * z
        centre = (p + z2 / (2 * nn)) / (1 + z2 / nn)
        half = z / (1 + z2 / nn) * np.sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn))
        # exactly 0 at x = 0 and 1 at x = n (the formula's value; rounding left 1 - 1e-16)
        low = np.where(x == 0, 0.0, np.clip(centre - half, 0.0, 1.0))
        high = np.where(x == nn, 1.0, np.clip(centre + half, 0.0, 1.0))
        if method == "wilson_modified":
            x_star = np.where(nn <= 50, 2, 3)
            poisson = sps.chi2.ppf(alpha, 2 * np.maximum(x, 1)) / (2 * nn)
            low = np.where((x >= 1) & (x <= x_star), poisson, low)
            mirror = sps.chi2.ppf(alpha, 2 * np.maximum(nn - x, 1)) / (2 * nn)
            high = np.where((nn - x >= 1) & (nn - x <= x_star), 1.0 - mirror, high)
        return np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    shape = 0.5 if method == "jeffreys" else 0.0
    with np.errstate(invalid="ignore"):
        low = np.where(x > 0, sps.beta.ppf(alpha / 2, x + shape, nn - x + 1 - shape), 0.0)
        high = np.where(x < nn, sps.beta.ppf(1 - alpha / 2, x + 1 - shape, nn - x + shape), 1.0)
    return np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)


def _proportion_interval(
    successes: int, n: int, method: str, confidence: float, signature: Signature | None
) -> Interval:
    low, high = proportion_bounds(successes, n, method=method, confidence=confidence)
    return Interval(float(low), float(high), float(confidence), method, signature)


def wilson_interval(successes: int, n: int, *, confidence: float = DEFAULT_CONFIDENCE) -> Interval:
    """Wilson's score interval for ``successes`` of ``n`` [3]_.

    Examples
    --------
    >>> from stats.intervals import wilson_interval
    >>> iv = wilson_interval(845, 1000)
    >>> round(iv.low, 3), round(iv.high, 3)
    (0.821, 0.866)
    """
    return _proportion_interval(successes, n, "wilson", confidence, None)


def clopper_pearson_interval(successes: int, n: int, *, confidence: float = DEFAULT_CONFIDENCE) -> Interval:
    """The exact (conservative) Clopper-Pearson interval for ``successes`` of ``n`` [4]_.

    Examples
    --------
    >>> iv = clopper_pearson_interval(845, 1000)
    >>> round(iv.low, 3), round(iv.high, 3)
    (0.821, 0.867)
    """
    return _proportion_interval(successes, n, "clopper_pearson", confidence, None)


def wald_interval(successes: int, n: int, *, confidence: float = DEFAULT_CONFIDENCE) -> Interval:
    """The Wald interval ``p +/- z sqrt(p (1 - p) / n)``; shown for comparison, it undercovers [5]_."""
    return _proportion_interval(successes, n, "wald", confidence, None)


def binomial_standard_error(successes: int, n: int) -> float:
    """``sqrt(p (1 - p) / n)`` with ``p = successes / n``."""
    x, nn = _check_counts(successes, n)
    p = x / nn
    return float(np.sqrt(p * (1 - p) / nn))


def _interval_signature(score: _Scored, method: str, confidence: float) -> Signature:
    base = score.signature
    resamples = base.resamples if method in BOOTSTRAP_METHODS else 0
    return Signature(
        metric=base.metric,
        method=method,
        resamples=resamples,
        seed=base.seed if method in BOOTSTRAP_METHODS else None,
        confidence=confidence,
        version=base.version,
        extra=base.extra,
    )


def _check_proportion_score(score: _Scored, method: str) -> tuple[int, int]:
    metric = get_metric(score.signature.metric)
    if not metric.zero_one or score.pooled is None:
        raise ValueError(f"`method` {method!r} needs a 0/1 metric such as accuracy, not `{metric.name}`.")
    if dict(score.signature.extra).get("resampling") == "grouped":
        raise ValueError(
            f"`method` {method!r} assumes independent items; use a bootstrap method with grouped items."
        )
    return round(float(score.pooled[0])), round(float(score.pooled[-1]))


def _score_default(scores: Sequence[_Scored]) -> str:
    """The metric's default interval (:func:`default_interval`) for scores of one task."""
    first = scores[0]
    metric = get_metric(first.signature.metric) if first.signature.metric in _metrics() else None
    return default_interval(
        metric,
        grouped=dict(first.signature.extra).get("resampling") == "grouped",
        has_counts=all(s.pooled is not None for s in scores),
        has_jackknife=all(s.jackknife.shape[0] >= 2 for s in scores),
    )


def _metrics() -> Any:
    from stats.metrics import METRICS

    return METRICS


def interval_for(
    score: _Scored,
    *,
    method: str | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Interval:
    """The interval of one scored entry (an :class:`stats.engine.EntryScore`); by default the metric's
    own (:func:`default_interval`), the one every command and board shows.

    Examples
    --------
    >>> from stats.engine import score_entries
    >>> (score,) = score_entries([0, 1, 1, 0, 1, 1, 0, 1], [[0, 1, 1, 0, 1, 0, 0, 1]], metric="accuracy",
    ...                          resamples=1000, seed=1)
    >>> iv = interval_for(score)
    >>> iv.method, round(iv.low, 4), round(iv.high, 4)
    ('clopper_pearson', 0.4735, 0.9968)
    >>> iv = interval_for(score, method="bca")
    >>> iv.method, iv.low, iv.high
    ('bca', 0.5, 1.0)
    """
    return intervals_for([score], method=method, confidence=confidence)[0]


def intervals_for(
    scores: Sequence[_Scored],
    *,
    method: str | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> list[Interval]:
    """Intervals of several entries of one task at once (vectorised over entries).

    Parameters
    ----------
    scores : sequence of EntryScore
        From :func:`stats.engine.score_entries` (complete replicates, not a chunk range).
    method : str, optional
        One of :data:`BOOTSTRAP_METHODS` or :data:`PROPORTION_METHODS`; default: the metric's own
        (:func:`default_interval`). Bootstrap methods use the replicates (and jackknife for BCa); the
        binomial methods need a 0/1 metric without groups and use only the counts.
    confidence : float, default 0.95

    Returns
    -------
    list of Interval, each carrying its Signature, within the metric's range (:func:`clip_to_range`),
    with :data:`ZERO_WIDTH_WARNING` where the bounds are equal.

    Examples
    --------
    >>> from stats.engine import score_entries
    >>> truth = [0, 1, 1, 0, 1, 1, 0, 1]
    >>> scores = score_entries(truth, [[0, 1, 1, 0, 1, 0, 0, 1], [1, 1, 1, 0, 0, 0, 0, 1]],
    ...                        metric="accuracy", resamples=1000, seed=1)
    >>> [(iv.low, iv.high) for iv in intervals_for(scores, method="percentile")]
    [(0.625, 1.0), (0.25, 1.0)]
    """
    confidence = check_level(confidence, name="confidence")
    if not scores:
        return []
    if method is None:
        method = _score_default(scores)
    check_choice(method, get_args(IntervalMethod), name="method")
    undefined = 0
    if method in PROPORTION_METHODS:
        counts = [_check_proportion_score(s, method) for s in scores]
        low, high = proportion_bounds(
            [c[0] for c in counts], [c[1] for c in counts], method=method, confidence=confidence
        )
    else:
        theta = np.column_stack([s.replicates for s in scores])
        # undefined replicates: the stated rule of stats.checks (dropped for every entry alike, counted)
        keep, undefined = defined_rows(theta)
        theta = theta[keep]
        points = np.array([s.value for s in scores])
        jack: Any = None
        if method == "bca":
            if any(s.jackknife.shape[0] < 2 for s in scores):
                raise ValueError(
                    "a BCa interval needs leave-one-out values of at least 2 items; use the percentile "
                    "interval, or score with leave-one-out values"
                )
            jack = np.column_stack([s.jackknife for s in scores])
        low, high = bootstrap_bounds(
            theta, point=points, method=method, confidence=confidence, jackknife=jack
        )
    name = scores[0].signature.metric
    low, high = clip_to_range(low, high, get_metric(name).value_range if name in _metrics() else None)
    warnings = zero_width_warnings(low, high)
    signatures = [_interval_signature(s, method, confidence) for s in scores]
    if method not in PROPORTION_METHODS and undefined:
        signatures = [
            sig.with_extra(undefined_resamples=undefined, undefined_rule=UNDEFINED_RULE) for sig in signatures
        ]
    return [
        Interval(float(low[k]), float(high[k]), confidence, method, signatures[k], warnings[k])
        for k in range(len(scores))
    ]
