"""The leader's selection-adjusted score: the winner's curse, corrected from the common resamples.

The leader of a board is the entry that scored best on this test set, so its shown score is biased
towards "better", most when the race is close. This module gives, for the observed leader,

- the **bootstrap bias correction** ``2 max_j theta_j - mean_b max_j theta*_bj`` from the common resamples
  (the replicate matrix every board has; the maximum is re-taken in every resample);
- the **conditional** median-unbiased estimate and equal-tailed interval of Andrews, Kitagawa and McCloskey
  (2024), which condition on the selection event "this entry is the leader";
- their **hybrid** estimate and interval, which also condition on the leader's true value lying in the
  projection interval ``value +- c sd``, ``c`` the ``1 - beta`` quantile of the studentised maximum
  ``max_j |theta*_j - theta_j| / sd_j`` over the bootstrap resamples (deterministic given the task's seed).
  The hybrid is always bounded (it lies inside the projection interval) and its estimate is always given.

The normal model of the paper is taken with the bootstrap covariance of the replicates: only the leader's
column of it is needed, ``O(B K)``.

Root search. The truncated-normal distribution function is computed in log space from the scaled
complementary error function (``erfcx``), with the gaps between the observed value and the truncation
points passed in directly, so it stays exact far in the tails; the roots are bracketed by doubling from the
observed value out to ``2**1000`` standard deviations. A close race gives a far but finite end; an end that
no bracket reaches (the observed leader exactly on the edge of its selection event) is reported as
unbounded (``low_unbounded``/``high_unbounded``), never as NaN, and the estimates are still given.

Stated rules
------------
- *Direction*: a lower-is-better metric is negated, solved as higher-is-better and negated back.
- *Ties and discrete metrics*: the selection event is relaxed by half the metric's resolution ``h``,
  ``theta_leader >= theta_j - h`` for every ``j`` (a continuity correction). By default ``h`` is half the
  smallest step between distinct replicate values of the leader: ``1/(2N)`` for a proportion on ``N``
  items; for a continuous metric at least a thousandth of the leader's standard deviation, which only
  keeps an exact tie for first place from making the conditional distribution degenerate. Entries tied for first are named in ``tied``; the leader among
  them is the first by name (as on the board), and by symmetry the adjusted numbers do not depend on which.
- *Entries identical to the leader* (perfectly correlated, same variance) put no constraint on the
  selection event and drop out.
- A leader whose replicates are all equal has no sampling distribution to adjust: refused (ValueError).

References
----------
.. [1] Andrews, I., Kitagawa, T. and McCloskey, A. (2024). Inference on Winners. *The Quarterly Journal of
       Economics* 139(1), 305-358. (Conditional estimator and interval, Prop. 1-3; hybrid, Section 4.)
.. [2] Efron, B. and Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*, ch. 10 (bias
       correction).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import optimize, special
from scipy import stats as sps

from stats.checks import check_level, check_replicates, check_vector
from stats.signature import Signature

__all__ = [
    "DEFAULT_BETA",
    "SELECTION_METHOD",
    "LeaderAdjustment",
    "WinnerInference",
    "WinnerInterval",
    "bootstrap_max_cutoff",
    "column_sd",
    "inference_on_winners",
    "leader_adjusted",
    "normal_max_cutoff",
    "truncated_normal_cdf",
]

FloatArray = npt.NDArray[np.float64]

#: The hybrid's beta (Andrews, Kitagawa and McCloskey 2024 use 0.005 in their applications).
DEFAULT_BETA = 0.005
#: Named in the signature.
SELECTION_METHOD = "akm-hybrid"
#: Roots are bracketed out to this many standard deviations from the observed value.
_MAX_DOUBLINGS = 1000
_SQRT2 = float(np.sqrt(2.0))
#: Elements of the replicate matrix handled at once by :func:`bootstrap_max_cutoff`.
_MAX_BLOCK = 1 << 22


@dataclass(frozen=True)
class WinnerInterval:
    """An interval whose ends may be unbounded (never NaN).

    Attributes
    ----------
    low, high : float
        The ends; ``-inf``/``inf`` exactly when the matching ``*_unbounded`` flag is set.
    low_unbounded, high_unbounded : bool
        No finite end exists within ``2**1000`` standard deviations of the observed value (only when
        the leader's margin over its selection event is below about ``1e-300`` standard deviations).
    confidence : float
    method : str
        ``"naive"``, ``"conditional"`` or ``"hybrid"``.
    """

    low: float
    high: float
    low_unbounded: bool
    high_unbounded: bool
    confidence: float
    method: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: an unbounded end is ``None`` with its flag set."""
        return {
            "low": None if self.low_unbounded else self.low,
            "high": None if self.high_unbounded else self.high,
            "low_unbounded": self.low_unbounded,
            "high_unbounded": self.high_unbounded,
            "confidence": self.confidence,
            "method": self.method,
        }


@dataclass(frozen=True)
class WinnerInference:
    """The conditional and hybrid inference on the leader's value in the normal model.

    Attributes
    ----------
    leader : int
        Index of the selected entry.
    value : float
        Its observed value.
    standard_error : float
        Its standard deviation in the model.
    lower_truncation, upper_truncation : float
        The selection event, as the interval the leader's value must lie in given the other entries'
        independent parts (``-inf``/``inf`` when unconstrained).
    conditional_estimate : float
        Median-unbiased conditional estimate (``-inf``/``inf`` only when the leader lies exactly on the
        edge of its selection event; see :attr:`conditional_interval`).
    conditional_interval : WinnerInterval
    hybrid_estimate : float
        Always finite.
    hybrid_interval : WinnerInterval
        Always finite, inside ``value +- cutoff * standard_error``.
    cutoff : float
        The hybrid's ``c``.
    beta : float
    confidence : float
    resolution : float
        The ``h``-relaxation of the selection event is half of it.
    """

    leader: int
    value: float
    standard_error: float
    lower_truncation: float
    upper_truncation: float
    conditional_estimate: float
    conditional_interval: WinnerInterval
    hybrid_estimate: float
    hybrid_interval: WinnerInterval
    cutoff: float
    beta: float
    confidence: float
    resolution: float


@dataclass(frozen=True)
class LeaderAdjustment:
    """The board leader's selection-adjusted estimates and intervals (what a board row shows).

    Attributes
    ----------
    leader : str
        The observed leader (best value; ties broken by name).
    value : float
        Its shown (naive) value.
    standard_error : float
        Bootstrap standard deviation of its value.
    naive_interval : WinnerInterval
        ``value +- z sd``: ignores the selection, the interval the winner's curse biases.
    bias_corrected : float
        ``2 max_j value_j - mean_b max_j replicate_bj`` (in the metric's direction).
    bootstrap_bias : float
        ``mean_b max_j replicate_bj - max_j value_j``: how much the best of this board's entries is
        expected to flatter itself (positive = the shown value is too good; in metric units, so negative
        numbers for a lower-is-better metric's flattering).
    conditional_estimate, hybrid_estimate : float
    conditional_interval, hybrid_interval : WinnerInterval
    cutoff : float
        The hybrid's ``c``: the ``1 - beta`` quantile (``method="higher"``) of the bootstrap studentised
        maximum.
    beta : float
    confidence : float
    higher_is_better : bool
    resolution : float
    tied : tuple[str, ...]
        Entries tied with the leader for first place (the leader included), or empty.
    selection_event : str
        The event conditioned on, in words (also in the signature).
    signature : Signature
    """

    leader: str
    value: float
    standard_error: float
    naive_interval: WinnerInterval
    bias_corrected: float
    bootstrap_bias: float
    conditional_estimate: float
    conditional_interval: WinnerInterval
    hybrid_estimate: float
    hybrid_interval: WinnerInterval
    cutoff: float
    beta: float
    confidence: float
    higher_is_better: bool
    resolution: float
    tied: tuple[str, ...]
    selection_event: str
    signature: Signature = field(repr=False)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (no NaN or infinity: unbounded ends are ``None`` with a flag)."""
        return {
            "leader": self.leader,
            "value": self.value,
            "standard_error": self.standard_error,
            "naive_interval": self.naive_interval.as_dict(),
            "bias_corrected": self.bias_corrected,
            "bootstrap_bias": self.bootstrap_bias,
            "conditional_estimate": _finite_or_none(self.conditional_estimate),
            "conditional_interval": self.conditional_interval.as_dict(),
            "hybrid_estimate": self.hybrid_estimate,
            "hybrid_interval": self.hybrid_interval.as_dict(),
            "cutoff": self.cutoff,
            "beta": self.beta,
            "confidence": self.confidence,
            "higher_is_better": self.higher_is_better,
            "resolution": self.resolution,
            "tied": list(self.tied),
            "selection_event": self.selection_event,
            "signature": self.signature.as_dict(),
            "signature_text": str(self.signature),
        }


def _finite_or_none(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _log_sf_ratio(gap: float, x: float) -> float:
    """``log(sf(x + gap) / sf(x))`` of the standard normal for ``x >= 0``, ``gap >= 0``, exact in the tail.

    ``sf(u) = erfcx(u / sqrt 2) exp(-u^2 / 2) / 2``, so the ratio's log is
    ``-gap (2x + gap) / 2 + log erfcx((x + gap)/sqrt 2) - log erfcx(x / sqrt 2)``: no difference of two
    huge numbers, whatever ``x``.
    """
    if gap == 0:
        return 0.0
    if not np.isfinite(gap):
        return -np.inf
    y = x + gap
    return float(
        -gap * (x + 0.5 * gap) + np.log(special.erfcx(y / _SQRT2)) - np.log(special.erfcx(x / _SQRT2))
    )


def truncated_normal_cdf(t: float, below: float, above: float) -> float:
    """``P(X <= t | t - below <= X <= t + above)`` for a standard normal ``X``, stable in the far tails.

    The truncation interval is given by the gaps ``below`` and ``above`` (``>= 0``, possibly ``inf``)
    between ``t`` and its ends, so a tiny gap far in a tail keeps its precision.

    Examples
    --------
    >>> round(truncated_normal_cdf(0.0, np.inf, np.inf), 12)
    0.5
    >>> round(truncated_normal_cdf(1e6, 1e-6, np.inf), 6)  # 1 - exp(-1): exponential tail
    0.632121
    """
    if below < 0 or above < 0:
        raise ValueError("`below` and `above` must be >= 0.")
    if below == 0:
        return 0.0
    if above == 0:
        return 1.0
    a = t - below
    b = t + above
    if a >= 0:  # the whole interval in the upper tail: 1 - sf(t)/sf(a) over 1 - sf(b)/sf(a)
        num = -np.expm1(_log_sf_ratio(below, a))
        den = -np.expm1(_log_sf_ratio(below + above, a))
        if not den > 0:  # an interval too narrow to hold any mass in floating point: the density is flat
            return below / (below + above)
        return float(min(1.0, num / den))
    if b <= 0:  # mirror into the upper tail
        return 1.0 - truncated_normal_cdf(-t, above, below)
    # a < 0 < b: the mass is at least the density near 0, no tail cancellation
    num = special.ndtr(t) - special.ndtr(a) if t <= 0 else special.ndtr(-a) - special.ndtr(-t)
    den = special.ndtr(b) - special.ndtr(a) if b <= -a else special.ndtr(-a) - special.ndtr(-b)
    if not den > 0:
        return below / (below + above)
    return float(min(1.0, max(0.0, num / den)))


def _conditional_root(q: float, below: float, above: float) -> float:
    """The standardised shift ``m`` (``mu = y + m sd``) with ``F(y; mu) = q``; ``+-inf`` when unbounded.

    ``F(y; y + m sd) = truncated_normal_cdf(-m, below, above)`` decreases in ``m``.
    """

    def f(m: float) -> float:
        return truncated_normal_cdf(-m, below, above) - q

    f0 = f(0.0)
    if f0 == 0:
        return 0.0
    step = 1.0 if f0 > 0 else -1.0  # F too high: move mu up
    inner = 0.0
    for _ in range(_MAX_DOUBLINGS + 1):
        outer = inner + step if inner == 0 else 2 * inner
        if (f(outer) > 0) != (f0 > 0) or f(outer) == 0:
            lo, hi = sorted((inner, outer))
            return float(optimize.brentq(f, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=500))
        inner = outer
    return float(np.inf * step)


def _hybrid_root(q: float, below: float, above: float, cutoff: float) -> float:
    """The hybrid's ``m`` with ``F_H(y; y + m sd) = q``, in ``[-cutoff, cutoff]`` (always exists)."""

    def f(m: float) -> float:
        # truncation of the standardised Y - mu: [max(-m - below, -c), min(-m + above, c)]
        t = -m
        return truncated_normal_cdf(t, min(below, t + cutoff), min(above, cutoff - t)) - q

    return float(optimize.brentq(f, -cutoff, cutoff, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=500))


def _interval(
    low_m: float, high_m: float, y: float, sd: float, confidence: float, method: str
) -> WinnerInterval:
    return WinnerInterval(
        low=float(y + low_m * sd),
        high=float(y + high_m * sd),
        low_unbounded=bool(np.isinf(low_m)),
        high_unbounded=bool(np.isinf(high_m)),
        confidence=confidence,
        method=method,
    )


def _truncation(x: FloatArray, cov_col: FloatArray, leader: int, half_step: float) -> tuple[float, float]:
    """The selection event as bounds on the leader's value (AKM 2024, Prop. 1, with ``X = Y``).

    ``X = Z + c Y`` with ``c_j = Sigma[j, leader] / Sigma[leader, leader]``; ``X_leader >= X_j - h`` for
    every ``j`` reads ``Y (1 - c_j) >= Z_j - Z_leader - h``.
    """
    y = x[leader]
    c = cov_col / cov_col[leader]
    z = x - c * y
    d = 1.0 - c
    rhs = z - z[leader] - half_step
    others = np.arange(x.shape[0]) != leader
    tol = 1e-12
    pos = others & (d > tol)
    neg = others & (d < -tol)
    lower = float(np.max(rhs[pos] / d[pos])) if pos.any() else -np.inf
    upper = float(np.min(rhs[neg] / d[neg])) if neg.any() else np.inf
    # the observed value satisfies its own event; rounding may leave it a hair outside
    return min(lower, y), max(upper, y)


def _check_beta(beta: float, confidence: float) -> float:
    beta = float(beta)
    if not (0 < beta < 1 - confidence):
        raise ValueError(f"`beta` must be in (0, 1 - confidence) = (0, {1 - confidence:g}); got {beta!r}.")
    return beta


def normal_max_cutoff(covariance: npt.ArrayLike, beta: float = DEFAULT_BETA, *, seed: int = 0) -> float:
    """The exact ``1 - beta`` quantile of ``max_j |X_j - mu_j| / sd_j`` for ``X ~ N(mu, covariance)``.

    Diagonal covariance: ``Phi^{-1}((1 + (1 - beta)^(1/K)) / 2)`` in closed form. Otherwise the box
    probability of the correlation matrix is computed by scipy's ``multivariate_normal.cdf`` (Genz's
    quasi-Monte Carlo, seeded) and inverted with ``brentq``; K at most 100.

    Examples
    --------
    >>> round(normal_max_cutoff(np.diag([0.0625, 0.0625]), 0.005), 6)
    3.022962
    """
    cov = np.atleast_2d(np.asarray(covariance, dtype=np.float64))
    k = cov.shape[0]
    if cov.shape != (k, k) or not np.all(np.isfinite(cov)):
        raise ValueError("`covariance` must be a finite square matrix.")
    sd = np.sqrt(np.diag(cov))
    if np.any(sd <= 0):
        raise ValueError("`covariance` must have a positive diagonal.")
    corr = cov / np.outer(sd, sd)
    if np.allclose(corr, np.eye(k), atol=1e-14):
        return float(special.ndtri((1 + (1 - beta) ** (1 / k)) / 2))
    if k > 100:
        raise ValueError("`covariance` with correlations: at most 100 entries (use bootstrap_max_cutoff).")
    mvn = sps.multivariate_normal(mean=np.zeros(k), cov=corr, allow_singular=True, seed=seed)

    def coverage(c: float) -> float:
        return float(mvn.cdf(np.full(k, c), lower_limit=np.full(k, -c))) - (1 - beta)

    return float(optimize.brentq(coverage, 0.1, 10.0, xtol=1e-7))


def column_sd(column: npt.ArrayLike) -> float:
    """One entry's bootstrap standard deviation (``ddof=1``), the same bits as its column of
    ``replicates.std(axis=0, ddof=1)`` for a C-ordered ``(B, K)`` array with ``K >= 2``.

    numpy sums a C-ordered array's axis 0 row after row (one add per resample), but a column alone
    (shape ``(B,)`` or ``(B, 1)``) pairwise: a different last bit for most columns (measured: 97% of
    random columns at B = 10,000). The column is reduced here as one of two equal columns, which numpy
    sums row after row like the board's array (tests/stats/test_selection.py checks the bits), so an entry's
    value can be computed once with its score's columns and kept (``rankings.board``).
    """
    col = np.asarray(column, dtype=np.float64)
    if col.ndim != 1:
        raise ValueError("`column` must be one-dimensional.")
    return float(np.column_stack([col, col]).std(axis=0, ddof=1)[0])


def bootstrap_max_cutoff(
    replicates: npt.ArrayLike,
    values: npt.ArrayLike,
    beta: float = DEFAULT_BETA,
    *,
    sd: npt.ArrayLike | None = None,
) -> float:
    """The ``1 - beta`` quantile (``method="higher"``) of ``max_j |replicate_bj - value_j| / sd_j``.

    The studentised maximum over the entries of each bootstrap resample, centred at the point values and
    scaled by each entry's bootstrap standard deviation, with the quantile rule of the board's max-t
    critical value (:func:`stats.compare_ranks.simultaneous_ranks`); entries with zero spread are left
    out. Deterministic given the replicates, so given the task's seed.

    ``sd``: the entries' standard deviations as :func:`column_sd` gives them (kept with the scores: the
    board's rebuild need not reduce its ``B x K`` array for them); used only for a C-ordered array, for
    which they are the bits of ``replicates.std(axis=0, ddof=1)``; otherwise computed here.
    """
    x = check_replicates(replicates)
    p = check_vector(values, name="values", length=x.shape[1], what="values, one per entry")
    if sd is not None and x.flags.c_contiguous and x.shape[1] >= 2:
        scale = check_vector(sd, name="sd", length=x.shape[1], what="standard deviations, one per entry")
    else:
        scale = x.std(axis=0, ddof=1)
    keep = np.flatnonzero(scale > 0)
    if keep.size == 0:
        raise ValueError("every entry's replicates are constant: no studentised maximum exists.")
    every = keep.size == x.shape[1]  # no column left out: the rows' blocks are sliced, not indexed
    stat = np.empty(x.shape[0])
    step = max(1, _MAX_BLOCK // keep.size)  # row blocks: a board of 5,000 entries never holds a B x K copy
    for start in range(0, x.shape[0], step):
        block = (x[start : start + step] - p) if every else (x[start : start + step][:, keep] - p[keep])
        np.abs(block, out=block)
        block /= scale if every else scale[keep]
        stat[start : start + step] = block.max(axis=1)
    return float(np.quantile(stat, 1 - beta, method="higher"))


def _infer(
    x: FloatArray,
    cov_col: FloatArray,
    leader: int,
    *,
    confidence: float,
    beta: float,
    cutoff: float,
    resolution: float,
) -> WinnerInference:
    var = float(cov_col[leader])
    if not var > 0:
        raise ValueError("the leader's variance is zero: there is no sampling error to adjust for selection.")
    sd = var**0.5
    y = float(x[leader])
    lower, upper = _truncation(x, cov_col, leader, resolution / 2)
    below, above = (y - lower) / sd, (upper - y) / sd
    if below == 0 or above == 0:
        raise ValueError(
            "the leader lies exactly on the edge of its selection event (a tie for first place with "
            "`resolution` 0): give the metric's `resolution` so the event can be relaxed by half of it."
        )
    alpha = 1 - confidence
    cond_est = _conditional_root(0.5, below, above)
    cond_lo = _conditional_root(1 - alpha / 2, below, above)
    cond_hi = _conditional_root(alpha / 2, below, above)
    alpha_h = (alpha - beta) / (1 - beta)
    hyb_est = _hybrid_root(0.5, below, above, cutoff)
    hyb_lo = _hybrid_root(1 - alpha_h / 2, below, above, cutoff)
    hyb_hi = _hybrid_root(alpha_h / 2, below, above, cutoff)
    return WinnerInference(
        leader=leader,
        value=y,
        standard_error=sd,
        lower_truncation=lower,
        upper_truncation=upper,
        conditional_estimate=float(y + cond_est * sd),
        conditional_interval=_interval(cond_lo, cond_hi, y, sd, confidence, "conditional"),
        hybrid_estimate=float(y + hyb_est * sd),
        hybrid_interval=_interval(hyb_lo, hyb_hi, y, sd, confidence, "hybrid"),
        cutoff=cutoff,
        beta=beta,
        confidence=confidence,
        resolution=resolution,
    )


def inference_on_winners(
    values: npt.ArrayLike,
    covariance: npt.ArrayLike,
    *,
    confidence: float = 0.95,
    beta: float = DEFAULT_BETA,
    cutoff: float | None = None,
    resolution: float = 0.0,
) -> WinnerInference:
    """Conditional and hybrid inference on the largest of ``values`` in the model ``N(mu, covariance)``.

    Parameters
    ----------
    values : array_like, shape (K,)
        Observed values; the selected entry is the largest (the first of equal ones).
    covariance : array_like, shape (K, K)
        Their (known or estimated) covariance.
    confidence : float, default 0.95
    beta : float, default 0.005
        The hybrid's level of the projection interval, ``0 < beta < 1 - confidence``.
    cutoff : float, optional
        The hybrid's ``c``; by default :func:`normal_max_cutoff` of ``covariance``.
    resolution : float, default 0
        The selection event is relaxed by half of it (continuity correction for a discrete metric).

    Returns
    -------
    WinnerInference

    Examples
    --------
    Two independent entries, sd 0.25 each (Andrews, Kitagawa and McCloskey's normal model):

    >>> r = inference_on_winners([1.0, 0.5], np.diag([0.0625, 0.0625]))
    >>> round(r.conditional_estimate, 6), round(r.conditional_interval.low, 6)
    (0.992336, 0.40747)
    """
    x = check_vector(values, name="values", what="values")
    cov = np.asarray(covariance, dtype=np.float64)
    k = x.shape[0]
    if cov.shape != (k, k) or not np.all(np.isfinite(cov)):
        raise ValueError(f"`covariance` must be a finite ({k}, {k}) matrix.")
    confidence = check_level(confidence, name="confidence")
    beta = _check_beta(beta, confidence)
    if resolution < 0 or not np.isfinite(resolution):
        raise ValueError("`resolution` must be a finite number >= 0.")
    leader = int(np.argmax(x))
    c = normal_max_cutoff(cov, beta) if cutoff is None else float(cutoff)
    if not (np.isfinite(c) and c > 0):
        raise ValueError("`cutoff` must be a positive finite number.")
    return _infer(
        x, cov[:, leader], leader, confidence=confidence, beta=beta, cutoff=c, resolution=resolution
    )


#: The default resolution is at least this share of the leader's standard deviation.
MIN_RESOLUTION_SD = 1e-3


def _resolution(column: FloatArray) -> float:
    """The default resolution: the smallest step between distinct replicate values of the leader (1/N
    for a proportion), at least :data:`MIN_RESOLUTION_SD` of its standard deviation."""
    distinct = np.unique(column)
    step = float(np.min(np.diff(distinct))) if distinct.shape[0] > 1 else 0.0
    return max(step, MIN_RESOLUTION_SD * float(np.std(column, ddof=1)))


def leader_adjusted(
    values: npt.ArrayLike,
    replicates: npt.ArrayLike,
    *,
    higher_is_better: bool,
    names: Sequence[str] | None = None,
    confidence: float = 0.95,
    beta: float = DEFAULT_BETA,
    resolution: float | None = None,
    metric: str = "",
    seed: int | None = None,
    sd: npt.ArrayLike | None = None,
) -> LeaderAdjustment:
    """The board leader's selection-adjusted estimate and intervals, from the board's own inputs.

    Parameters
    ----------
    values : array_like, shape (K,)
        Point values of the board's entries.
    replicates : array_like, shape (B, K)
        Their replicates over the task's common resamples (paired).
    higher_is_better : bool
    names : sequence of str, optional
        Entry names (default ``"entry-0"``...); ties for first are broken by name.
    confidence : float, default 0.95
    beta : float, default 0.005
    resolution : float, optional
        The metric's step; default: the smallest step between distinct replicate values of the leader
        (``1/N`` for a proportion on ``N`` items), at least a thousandth of its standard deviation (so an
        exact tie of a continuous metric does not collapse the hybrid interval to a point).
    metric : str
        For the signature.
    seed : int, optional
        The task's seed (for the signature: the cutoff is a function of the replicates, hence of it).
    sd : array_like, shape (K,), optional
        The entries' standard deviations as :func:`column_sd` gives them (kept with the scores), for the
        cutoff (:func:`bootstrap_max_cutoff`); the same numbers as without.

    Returns
    -------
    LeaderAdjustment

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> reps = rng.normal([0.80, 0.79, 0.70], 0.01, size=(4000, 3))
    >>> adj = leader_adjusted([0.80, 0.79, 0.70], reps, higher_is_better=True)
    >>> adj.leader, adj.bias_corrected < 0.80, adj.hybrid_interval.low < 0.80
    ('entry-0', True, True)
    """
    theta = check_replicates(replicates)
    b, k = theta.shape
    p = check_vector(values, name="values", length=k, what="values, one per entry")
    confidence = check_level(confidence, name="confidence")
    beta = _check_beta(beta, confidence)
    if names is None:
        names = [f"entry-{j}" for j in range(k)]
    elif len(names) != k:
        raise ValueError("`names` must have one name per column of `replicates`.")
    sign = 1.0 if higher_is_better else -1.0
    x = sign * p
    best = float(np.max(x))
    tied_idx = [j for j in range(k) if x[j] == best]
    leader = min(tied_idx, key=lambda j: names[j])
    tied = tuple(sorted(names[j] for j in tied_idx)) if len(tied_idx) > 1 else ()

    col = theta[:, leader]
    # covariance of every entry with the leader: sum_b theta_bj (c_b - mean c) / (B - 1), no centred copy
    cov_col = (theta.T @ (col - col.mean())) / (b - 1)
    if not cov_col[leader] > 0:
        raise ValueError(
            f"every bootstrap replicate of the leader '{names[leader]}' is equal: there is no sampling "
            "distribution to adjust for selection."
        )
    step = _resolution(col) if resolution is None else float(resolution)
    if step < 0 or not np.isfinite(step):
        raise ValueError("`resolution` must be a finite number >= 0.")
    cutoff = bootstrap_max_cutoff(theta, p, beta, sd=sd)
    inference = _infer(x, cov_col, leader, confidence=confidence, beta=beta, cutoff=cutoff, resolution=step)

    boot_max = float(np.mean(theta.max(axis=1) if higher_is_better else -theta.min(axis=1)))
    bias = boot_max - best
    corrected = best - bias
    sd = inference.standard_error
    z = float(special.ndtri(0.5 + confidence / 2))
    naive = WinnerInterval(
        low=best - z * sd, high=best + z * sd, low_unbounded=False, high_unbounded=False,
        confidence=confidence, method="naive",
    )  # fmt: skip

    def back(iv: WinnerInterval) -> WinnerInterval:
        if higher_is_better:
            return iv
        return WinnerInterval(
            low=-iv.high,
            high=-iv.low,
            low_unbounded=iv.high_unbounded,
            high_unbounded=iv.low_unbounded,
            confidence=iv.confidence,
            method=iv.method,
        )

    direction = "highest" if higher_is_better else "lowest"
    event = (
        f"the leader has the {direction} value of {k} entries, within half the resolution "
        f"({step / 2:.3g}) of every other"
    )
    signature = Signature(
        metric=metric, method=SELECTION_METHOD, resamples=b, seed=seed, confidence=confidence
    ).with_extra(
        selection_beta=f"{beta:g}",
        selection_cutoff=f"{cutoff:.6g}",
        selection_event=f"argmax of {k}" if higher_is_better else f"argmin of {k}",
        selection_resolution=f"{step:.6g}",
        selection_bias="bootstrap max of the common resamples",
    )
    return LeaderAdjustment(
        leader=names[leader],
        value=float(p[leader]),
        standard_error=sd,
        naive_interval=back(naive),
        bias_corrected=sign * corrected,
        bootstrap_bias=sign * bias,
        conditional_estimate=sign * inference.conditional_estimate,
        conditional_interval=back(inference.conditional_interval),
        hybrid_estimate=sign * inference.hybrid_estimate,
        hybrid_interval=back(inference.hybrid_interval),
        cutoff=cutoff,
        beta=beta,
        confidence=confidence,
        higher_is_better=higher_is_better,
        resolution=step,
        tied=tied,
        selection_event=event,
        signature=signature,
    )
