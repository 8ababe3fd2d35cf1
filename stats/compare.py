"""Paired comparisons of leaderboard entries: tests, multiplicity, paired differences and power.

Everything here works on arrays that the engine already produced:

- the replicate matrix ``theta`` of one task, shape (B, K): replicate ``b`` of entry ``k`` is the metric
  recomputed on resample ``b``; every entry was resampled with the same weights, so column differences
  are paired bootstrap distributions of the differences;
- the per-item sufficient statistics ``S`` of shape (N, m) and the metric's vectorised ``finalize``
  (``docs/stats-contract.md``), for the tests that need the items: McNemar's exact test for 0/1 metrics
  and paired approximate randomization for any decomposable metric.

Conventions used throughout (see ``docs/comparisons.md``):

- a *difference* is ``value(entry) - value(leader)`` in the metric's own units, whatever the direction;
  the *advantage* ``sign * difference`` (``sign = +1`` when higher is better, ``-1`` otherwise) is what the
  tests and the power calculations look at, so an entry worse than the leader has a negative advantage;
- Monte Carlo p-values are ``(1 + count) / (1 + draws)`` (Phipson & Smyth 2010), never ``count / draws``;
- all p-values are two-sided.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import special
from scipy import stats as sps

from stats._threads import with_blas_threads
from stats.checks import (
    check_choice,
    check_count,
    check_jackknife,
    check_level,
    check_probabilities,
    check_replicates,
    check_statistics,
    check_vector,
)
from stats.intervals import (
    Interval,
    bca_constants,
    bootstrap_bounds,
    difference_range,
    zero_width_warnings,
)
from stats.metrics import METRICS, get_metric
from stats.signature import Signature

FloatArray = npt.NDArray[np.float64]
Finalize = Callable[[np.ndarray], np.ndarray]
Correction = Literal["holm", "bh", "none"]
BootstrapRule = Literal["percentile", "basic", "bca"]

CORRECTIONS: tuple[str, ...] = ("holm", "bh", "none")
BOOTSTRAP_RULES: tuple[str, ...] = ("percentile", "basic", "bca")

__all__ = [
    "BOOTSTRAP_RULES",
    "CORRECTIONS",
    "ClusterFlipResult",
    "PairedDifference",
    "PairedGap",
    "RandomizationResult",
    "adjust_p_values",
    "benjamini_hochberg",
    "bootstrap_p_values",
    "cluster_sign_flip",
    "holm",
    "items_needed",
    "items_needed_mcnemar",
    "mcnemar_exact",
    "paired_difference",
    "paired_gap",
    "paired_randomization",
    "randomization_weights",
]


# --------------------------------------------------------------------------------------------------
# multiplicity


def holm(p_values: npt.ArrayLike) -> FloatArray:
    """Holm's step-down adjusted p-values (family-wise error rate).

    The ``i``-th smallest p-value of ``m`` is multiplied by ``m - i + 1``; the adjusted values are made
    monotone by a running maximum and capped at 1. Rejecting every hypothesis whose adjusted p-value is
    at most ``alpha`` controls the family-wise error rate at ``alpha`` under any dependence.

    Parameters
    ----------
    p_values : array_like, shape (m,)
        Raw p-values in [0, 1].

    Returns
    -------
    numpy.ndarray, shape (m,)
        Adjusted p-values in the input order; each is >= its raw value and <= 1.

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian
       Journal of Statistics* 6(2), 65-70.
    .. [2] Wright, S. P. (1992). Adjusted p-values for simultaneous inference. *Biometrics* 48(4),
       1005-1013.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03, 0.005]).round(3).tolist()
    [0.03, 0.06, 0.06, 0.02]
    """
    p = check_probabilities(p_values)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    scaled = p[order] * (m - np.arange(m))
    adjusted_sorted = np.minimum(np.maximum.accumulate(scaled), 1.0)
    adjusted = np.empty(m)
    adjusted[order] = adjusted_sorted
    return adjusted


def benjamini_hochberg(p_values: npt.ArrayLike) -> FloatArray:
    """Benjamini-Hochberg adjusted p-values (false discovery rate).

    The ``i``-th smallest p-value of ``m`` becomes ``min_{j >= i} m p_(j) / j``, capped at 1. Rejecting
    every hypothesis with an adjusted p-value at most ``q`` controls the false discovery rate at ``q``
    for independent or positively dependent tests.

    Parameters
    ----------
    p_values : array_like, shape (m,)
        Raw p-values in [0, 1].

    Returns
    -------
    numpy.ndarray, shape (m,)
        Adjusted p-values in the input order.

    References
    ----------
    .. [1] Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate: a practical and
       powerful approach to multiple testing. *JRSS B* 57(1), 289-300.

    Examples
    --------
    >>> benjamini_hochberg([0.01, 0.04, 0.03, 0.005]).round(3).tolist()
    [0.02, 0.04, 0.04, 0.02]
    """
    p = check_probabilities(p_values)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    adjusted_sorted = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    adjusted = np.empty(m)
    adjusted[order] = adjusted_sorted
    return adjusted


def adjust_p_values(p_values: npt.ArrayLike, *, correction: str = "holm") -> FloatArray:
    """Adjust a family of p-values: ``"holm"`` (default, family-wise), ``"bh"`` (FDR) or ``"none"``.

    The default is argued in ``docs/adr/0003-comparison-defaults.md``.

    Examples
    --------
    >>> adjust_p_values([0.01, 0.04, 0.03], correction="bh").round(3).tolist()
    [0.03, 0.04, 0.04]
    """
    if correction == "holm":
        return holm(p_values)
    if correction == "bh":
        return benjamini_hochberg(p_values)
    check_choice(correction, CORRECTIONS, name="correction")
    return check_probabilities(p_values).copy()


# --------------------------------------------------------------------------------------------------
# 0/1 metrics: McNemar, the paired standard error of a gap, rows needed


def mcnemar_exact(only_a: npt.ArrayLike, only_b: npt.ArrayLike) -> FloatArray:
    """McNemar's exact two-sided test from the discordant counts.

    Under the null hypothesis that both entries have the same accuracy, each of the ``n = b + c``
    discordant items is equally likely to favour either entry, so ``min(b, c) ~ Binomial(n, 1/2)``;
    the two-sided p-value is ``min(1, 2 P(X <= min(b, c)))`` (the binomial test with p = 1/2, which is
    symmetric, so doubling the smaller tail is exact). With no discordant item the p-value is 1.

    Parameters
    ----------
    only_a, only_b : array_like of int
        Items only entry A got right, and items only entry B got right (broadcast together).

    Returns
    -------
    numpy.ndarray
        Two-sided p-values, one per pair of counts.

    References
    ----------
    .. [1] McNemar, Q. (1947). Note on the sampling error of the difference between correlated
       proportions or percentages. *Psychometrika* 12(2), 153-157.
    .. [2] Dietterich, T. G. (1998). Approximate statistical tests for comparing supervised
       classification learning algorithms. *Neural Computation* 10(7), 1895-1923.

    Examples
    --------
    >>> float(mcnemar_exact(44, 28).round(4))
    0.0764
    """
    b = np.asarray(only_a)
    c = np.asarray(only_b)
    for name, arr in (("only_a", b), ("only_b", c)):
        if arr.size and (not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(np.asarray(arr) % 1 != 0)):
            raise ValueError(f"`{name}` must contain non-negative integer counts.")
    b, c = np.broadcast_arrays(b.astype(np.int64), c.astype(np.int64))
    n = b + c
    smaller = np.minimum(b, c)
    p = np.minimum(1.0, 2.0 * sps.binom.cdf(smaller, np.maximum(n, 1), 0.5))
    return np.where(n == 0, 1.0, p).astype(np.float64)


@dataclass(frozen=True)
class PairedGap:
    """The accuracy gap of two entries on the same items and its standard errors.

    Attributes
    ----------
    gap : float
        ``accuracy(A) - accuracy(B) = (only_a - only_b) / n``.
    standard_error : float
        Paired standard error ``sqrt((p_d - gap**2) / n)``, ``p_d`` the discordant proportion.
    unpaired_standard_error : float
        ``sqrt(p_A (1 - p_A) / n + p_B (1 - p_B) / n)``, what treating the two scores as independent
        would give; shown for contrast only (it ignores that both entries saw the same items).
    discordant : float
        ``p_d = (only_a + only_b) / n``.
    n : int
        Number of items.
    """

    gap: float
    standard_error: float
    unpaired_standard_error: float
    discordant: float
    n: int


def paired_gap(*, both: int, only_a: int, only_b: int, neither: int) -> PairedGap:
    """Gap and paired standard error of two 0/1 entries from their 2 x 2 table.

    Parameters
    ----------
    both, only_a, only_b, neither : int
        Items both entries got right, only A, only B, and neither.

    Returns
    -------
    PairedGap

    References
    ----------
    .. [1] Agresti, A. (2013). *Categorical Data Analysis*, 3rd ed., Section 11.1 (the variance of a
       difference of dependent proportions).

    Examples
    --------
    >>> g = paired_gap(both=345, only_a=4, only_b=2, neither=9)
    >>> round(g.gap, 4), round(g.standard_error, 4), round(g.unpaired_standard_error, 4)
    (0.0056, 0.0068, 0.0134)
    """
    cells = {
        "both": check_count(both, name="both"),
        "only_a": check_count(only_a, name="only_a"),
        "only_b": check_count(only_b, name="only_b"),
        "neither": check_count(neither, name="neither"),
    }
    n = sum(cells.values())
    if n == 0:
        raise ValueError("The 2 x 2 table (`both`, `only_a`, `only_b`, `neither`) must not be empty.")
    gap = (cells["only_a"] - cells["only_b"]) / n
    discordant = (cells["only_a"] + cells["only_b"]) / n
    p_a = (cells["both"] + cells["only_a"]) / n
    p_b = (cells["both"] + cells["only_b"]) / n
    return PairedGap(
        gap=gap,
        standard_error=float(np.sqrt(max(discordant - gap * gap, 0.0) / n)),
        unpaired_standard_error=float(np.sqrt((p_a * (1 - p_a) + p_b * (1 - p_b)) / n)),
        discordant=discordant,
        n=n,
    )


def _z_sum(alpha: float, power: float) -> tuple[float, float]:
    alpha = check_level(alpha, name="alpha")
    power = check_level(power, name="power")
    return float(special.ndtri(1 - alpha / 2)), float(special.ndtri(power))


def items_needed_mcnemar(
    *,
    gap: float,
    discordant: float,
    alpha: float = 0.05,
    power: float = 0.8,
    form: Literal["connor", "simple"] = "connor",
) -> int | None:
    """Number of test items needed for McNemar's test to detect a gap (two-sided).

    Parameters
    ----------
    gap : float
        Difference of the two accuracies (any sign; its magnitude is used).
    discordant : float
        Proportion of items on which exactly one entry is right, ``p_d`` (must be >= ``gap**2``).
    alpha : float, default 0.05
        Two-sided level.
    power : float, default 0.8
        Desired power.
    form : {"connor", "simple"}, default "connor"
        ``"connor"``: ``(z_{a/2} sqrt(p_d) + z_b sqrt(p_d - gap^2))^2 / gap^2`` (Connor 1987);
        ``"simple"``: ``(z_{a/2} + z_b)^2 p_d / gap^2`` (the normal approximation that ignores the
        ``gap^2`` term of the variance under the alternative).

    Returns
    -------
    int or None
        The number of items, rounded up; ``None`` when the gap is 0 (no test set is large enough).

    References
    ----------
    .. [1] Connor, R. J. (1987). Sample size for testing differences in proportions for the paired-
       sample design. *Biometrics* 43(1), 207-211.
    .. [2] Dror, R., Peled-Cohavi, L., Shlomov, S. & Reichart, R. (2020). *Statistical Significance
       Testing for Natural Language Processing*, Proposition 4.

    Examples
    --------
    >>> items_needed_mcnemar(gap=11 / 1797, discordant=29 / 1797)
    3379
    """
    z_a, z_b = _z_sum(alpha, power)
    gap = abs(float(gap))
    discordant = float(discordant)
    if not np.isfinite(gap) or not np.isfinite(discordant) or not (0 <= discordant <= 1):
        raise ValueError("`gap` must be finite and `discordant` a proportion in [0, 1].")
    if discordant < gap * gap * (1 - 1e-12):
        raise ValueError("`discordant` must be at least `gap`**2 (p_d >= |gap|; p_d >= gap^2).")
    if gap == 0.0:
        return None
    if form == "connor":
        root = z_a * np.sqrt(discordant) + z_b * np.sqrt(max(discordant - gap * gap, 0.0))
        n = root * root / (gap * gap)
    elif form == "simple":
        n = (z_a + z_b) ** 2 * discordant / (gap * gap)
    else:
        raise ValueError(f"`form` must be 'connor' or 'simple', got {form!r}.")
    return int(np.ceil(n - 1e-9))


def items_needed(
    *,
    gap: npt.ArrayLike,
    standard_error: npt.ArrayLike,
    n_items: int,
    alpha: float = 0.05,
    power: float = 0.8,
) -> list[int | None]:
    """Items needed to detect a gap, from the paired bootstrap standard error of the difference.

    For any metric whose standard error shrinks as ``1/sqrt(n)``, the standard error at ``n`` items is
    ``se * sqrt(N / n)``; a two-sided z-test at level ``alpha`` has power ``power`` when
    ``|gap| = (z_{a/2} + z_b) se_n``, so ``n = N ((z_{a/2} + z_b) se / gap)^2``. For a 0/1 metric with
    ``se^2 = p_d / N`` this is the ``"simple"`` form of :func:`items_needed_mcnemar`.

    Parameters
    ----------
    gap : array_like
        Observed differences (their magnitude is used).
    standard_error : array_like
        Bootstrap standard errors of the paired differences at ``n_items`` items.
    n_items : int
        Size of the test set the standard errors were measured on.
    alpha, power : float
        Two-sided level and desired power.

    Returns
    -------
    list of int or None
        Items needed (rounded up), ``None`` where the gap is 0 or the standard error is 0 or not finite.

    References
    ----------
    .. [1] Card, D., Henderson, P., Khandelwal, U., Jia, R., Mahowald, K. & Jurafsky, D. (2020). With
       little power comes great responsibility. *EMNLP 2020*, 9263-9274.

    Examples
    --------
    >>> items_needed(gap=[0.02, 0.0], standard_error=[0.01, 0.01], n_items=200)
    [393, None]
    """
    z_a, z_b = _z_sum(alpha, power)
    n_items = check_count(n_items, name="n_items", minimum=1)
    g = np.abs(np.asarray(gap, dtype=np.float64)).ravel()
    se = np.asarray(standard_error, dtype=np.float64).ravel()
    if g.shape != se.shape:
        raise ValueError("`gap` and `standard_error` must have the same shape.")
    out: list[int | None] = []
    for gi, si in zip(g.tolist(), se.tolist(), strict=True):
        if not np.isfinite(gi) or not np.isfinite(si) or gi == 0.0 or si <= 0:  # no variability seen
            out.append(None)
        else:
            out.append(max(1, int(np.ceil(n_items * ((z_a + z_b) * si / gi) ** 2 - 1e-9))))
    return out


# --------------------------------------------------------------------------------------------------
# paired bootstrap p-values


def bootstrap_p_values(
    differences: npt.ArrayLike,
    point: npt.ArrayLike,
    *,
    rule: str = "percentile",
    jackknife: npt.ArrayLike | None = None,
) -> FloatArray:
    """Two-sided paired bootstrap p-values for "difference = 0", one per column.

    Each p-value is the smallest ``alpha`` at which the equal-tailed ``1 - alpha`` bootstrap interval of
    the named kind excludes 0, so a p-value below ``alpha`` agrees with the interval shown next to it:

    - ``"percentile"``: ``p = 2 min(#(D* <= 0), #(D* >= 0)) / B`` with the Phipson-Smyth ``+1``, i.e.
      ``min(1, 2 min(1 + #(D* <= 0), 1 + #(D* >= 0)) / (1 + B))``. This is Koehn's (2004) paired bootstrap
      resampling ("A is better in more than 97.5% of the resamples") made two-sided.
    - ``"basic"``: the shifted-null rule: under the null the centred replicates ``D* - d`` describe the
      difference, so ``p = min(1, 2 min(1 + #(D* - d >= d), 1 + #(D* - d <= d)) / (1 + B))``; this is the
      "twice the observed gap" rule (Berg-Kirkpatrick, Burkett & Klein 2012), which inverts the *basic*
      interval ``[2d - q_hi, 2d - q_lo]``, not the percentile one.
    - ``"bca"``: inverts the BCa interval in closed form: with ``G = #(D* <= 0) / B`` and
      ``w = Phi^{-1}(G) - z0``, the level at which a BCa endpoint reaches 0 is ``z = w / (1 + a w) - z0``,
      and ``p = 2 min(Phi(z), 1 - Phi(z))`` (the floor ``1 / (1 + B)`` when
      ``1 + a w <= 0``, or when no replicate lies on one side of 0: then every BCa interval excludes 0);
      needs ``jackknife``.

    Parameters
    ----------
    differences : array_like, shape (B,) or (B, K)
        Paired bootstrap replicates of the differences.
    point : array_like, shape () or (K,)
        Observed differences.
    rule : {"percentile", "basic", "bca"}, default "percentile"
        Which interval the p-value inverts.
    jackknife : array_like, shape (N,) or (N, K), optional
        Leave-one-out values of the differences (required for ``"bca"``).

    Returns
    -------
    numpy.ndarray, shape () or (K,)
        p-values in (0, 1]. A column whose replicates and point are all exactly 0 (an entry identical to
        the one it is compared with) gets 1.

    References
    ----------
    .. [1] Efron, B. & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*, Chapman & Hall,
       Sections 14.3 and 16.4.
    .. [2] Koehn, P. (2004). Statistical significance tests for machine translation evaluation.
       *EMNLP 2004*, 388-395.
    .. [3] Berg-Kirkpatrick, T., Burkett, D. & Klein, D. (2012). An empirical investigation of
       statistical significance in NLP. *EMNLP-CoNLL 2012*, 995-1005.
    .. [4] Phipson, B. & Smyth, G. K. (2010). Permutation p-values should never be zero. *Statistical
       Applications in Genetics and Molecular Biology* 9(1), Article 39.

    Examples
    --------
    >>> import numpy as np
    >>> d = np.random.default_rng(0).normal(0.03, 0.01, size=2000)  # replicates of a difference of 0.03
    >>> int((d <= 0).sum())  # replicates at or below 0
    5
    >>> float(bootstrap_p_values(d, 0.03))  # 2 (1 + 5) / (1 + B)
    0.005997001499250375
    """
    check_choice(rule, BOOTSTRAP_RULES, name="rule")
    one = np.ndim(differences) == 1
    d = check_replicates(differences, name="differences", one_dimensional=True)
    t = np.broadcast_to(np.asarray(point, dtype=np.float64), (d.shape[1],)).copy()
    if not np.all(np.isfinite(t)):
        raise ValueError("`point` must be finite.")
    b = d.shape[0]
    if rule == "percentile":
        low = (d <= 0).sum(axis=0)
        high = (d >= 0).sum(axis=0)
        p = np.minimum(1.0, 2.0 * (1 + np.minimum(low, high)) / (1 + b))
    elif rule == "basic":
        # D* - d >= d  <=>  D* >= 2d: the basic interval [2d - q_hi, 2d - q_lo] excludes 0 exactly when
        # fewer than alpha/2 of the replicates lie beyond 2d on one side. A relative tolerance counts
        # exact ties at 2d whatever the rounding.
        twice = 2.0 * t
        tol = 1e-12 * np.maximum(np.abs(twice), 1e-300)
        up = (d >= twice - tol).sum(axis=0)
        down = (d <= twice + tol).sum(axis=0)
        p = np.minimum(1.0, 2.0 * (1 + np.minimum(up, down)) / (1 + b))
    else:  # "bca"
        if jackknife is None:
            raise ValueError("`jackknife` is required when `rule` is 'bca'.")
        z0, a = bca_constants(d, t, check_jackknife(jackknife, k=d.shape[1]))
        share = (d <= 0).sum(axis=0) / b
        g = np.clip(share, 0.5 / b, 1 - 0.5 / b)
        w = special.ndtri(g) - z0
        # With acceleration a the BCa endpoints only reach the levels Phi(z0 - 1/a) (a > 0: lower) or
        # beyond (a < 0: upper); when 1 + a w <= 0 the share G lies outside them, so the interval
        # excludes 0 at every level and p takes its floor 1 / (1 + B).
        reachable = 1 + a * w > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            z = np.where(reachable, w / np.where(reachable, 1 + a * w, 1.0) - z0, np.inf)
        p = np.minimum(1.0, 2.0 * special.ndtr(-np.abs(z)))
        # no replicate on one side of 0: every BCa quantile lies on the other side
        p = np.where((share == 0) | (share == 1), 0.0, p)
        p = np.maximum(p, 1.0 / (1 + b))
    degenerate = np.all(d == 0, axis=0) & (t == 0)
    p = np.where(degenerate, 1.0, p)
    return p[0] if one else p


# --------------------------------------------------------------------------------------------------
# paired approximate randomization


#: rows of swap indicators generated per random stream; fixed so results never depend on batching
RANDOMIZATION_CHUNK = 512
#: a constant mixed into the seed so that swap draws never share a stream with the resample weights
_SWAP_STREAM = 0x5357_4150  # "SWAP"


def _swap_chunk(n_items: int, seed: int, chunk: int) -> npt.NDArray[np.uint8]:
    rng = np.random.default_rng([seed, _SWAP_STREAM, chunk])
    n_bytes = (RANDOMIZATION_CHUNK * n_items + 7) // 8
    bits = np.unpackbits(np.frombuffer(rng.bytes(n_bytes), dtype=np.uint8))
    return bits[: RANDOMIZATION_CHUNK * n_items].reshape(RANDOMIZATION_CHUNK, n_items)


def randomization_weights(n_items: int, *, randomizations: int, seed: int) -> npt.NDArray[np.uint8]:
    """The swap matrix ``Z`` (R x N) of paired approximate randomization, entries in {0, 1}.

    ``Z[r, i] = 1`` means that in draw ``r`` the two entries' statistics of item ``i`` are swapped.
    Rows are generated in fixed chunks of :data:`RANDOMIZATION_CHUNK` rows, chunk ``c`` from
    ``numpy.random.default_rng([seed, 0x53574150, c])``, so any prefix and any batching give the same rows.
    """
    n_items = check_count(n_items, name="n_items", minimum=1)
    randomizations = check_count(randomizations, name="randomizations", minimum=1)
    seed = check_count(seed, name="seed")
    out = np.empty((randomizations, n_items), dtype=np.uint8)
    for c, start in enumerate(range(0, randomizations, RANDOMIZATION_CHUNK)):
        stop = min(start + RANDOMIZATION_CHUNK, randomizations)
        out[start:stop] = _swap_chunk(n_items, seed, c)[: stop - start]
    return out


@dataclass(frozen=True)
class RandomizationResult:
    """Paired approximate randomization of entries against one reference entry.

    Attributes
    ----------
    p_values : numpy.ndarray, shape (K,)
        Two-sided p-values ``(1 + count) / (1 + R)``; 1 for the reference itself.
    counts : numpy.ndarray, shape (K,)
        Draws whose absolute difference reached the observed absolute difference.
    observed : numpy.ndarray, shape (K,)
        Observed differences ``value(entry) - value(reference)``.
    randomizations : int
        ``R``.
    seed : int
        Seed of the swap matrix.
    """

    p_values: FloatArray
    counts: npt.NDArray[np.int64]
    observed: FloatArray
    randomizations: int
    seed: int


@with_blas_threads
def paired_randomization(
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

    Examples
    --------
    >>> import numpy as np
    >>> from stats.metrics import get_metric
    >>> acc = get_metric("accuracy")
    >>> truth = np.array([0, 1, 1, 0, 1, 1, 0, 1])
    >>> stats_ab = [acc.item_statistics(truth, np.array(p)) for p in ([0, 1, 1, 0, 1, 0, 0, 1], [1, 1, 1, 0, 0, 0, 0, 1])]
    >>> r = paired_randomization(stats_ab, finalize=acc.finalize, reference=0, randomizations=999, seed=0)
    >>> r.observed.tolist(), r.p_values.round(3).tolist()
    ([0.0, -0.25], [1.0, 0.504])
    """
    arrays = check_statistics(statistics, one_dimensional=True, finite=True)
    shape = arrays[0].shape
    k = len(arrays)
    reference = check_count(reference, name="reference")
    if reference >= k:
        raise ValueError(f"`reference` must be an index below {k}, got {reference}.")
    randomizations = check_count(randomizations, name="randomizations", minimum=1)
    seed = check_count(seed, name="seed")
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
    largest = 0.0
    integer = bool(np.array_equal(ref, np.round(ref)))
    # entries in blocks of at most 2^22 elements (32 MB), not one at a time: the same masks and maxima
    step = max(1, (1 << 22) // max(n * m, 1))
    for j0 in range(0, k, step):
        block = np.stack(arrays[j0 : j0 + step])  # (s, N, m)
        integer = integer and bool(np.array_equal(block, np.round(block)))
        block -= ref
        nonzero = block != 0
        if j0 <= reference < j0 + step:
            nonzero[reference - j0] = False
        moving_mask[j0 : j0 + step] = nonzero.any(axis=1)
        item_mask |= nonzero.any(axis=(0, 2))
        np.abs(block, out=block)
        if j0 <= reference < j0 + step:
            block[reference - j0] = 0.0
        largest = max(largest, float(block.max(initial=0.0)))
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
    ref_pooled = np.empty((RANDOMIZATION_CHUNK, k, m))
    entry_pooled = np.empty((RANDOMIZATION_CHUNK, k, m))
    all_moving = moving.size == k * m
    for c, start in enumerate(range(0, randomizations, RANDOMIZATION_CHUNK)):
        rows = min(RANDOMIZATION_CHUNK, randomizations - start)
        z = _swap_chunk(n, seed, c)[:rows, items].astype(dtype)
        if all_moving:
            moved_flat[:rows] = z @ delta_moving
        else:
            moved_flat[:rows, moving] = z @ delta_moving
        moved = moved_flat[:rows].reshape(rows, k, m)  # (r, K, m)
        # swapped: reference gets + moved, entry gets - moved (into buffers: no temporaries per chunk)
        ref_in = np.add(pooled_ref, moved, out=ref_pooled[:rows])
        entry_in = np.subtract(pooled[None, :, :], moved, out=entry_pooled[:rows])
        ref_side = np.asarray(finalize(ref_in), dtype=np.float64)
        entry_side = np.asarray(finalize(entry_in), dtype=np.float64)
        gap = np.subtract(entry_side, ref_side, out=entry_side if entry_side is not ref_side else None)
        np.abs(gap, out=gap)
        counts += np.count_nonzero(gap >= threshold, axis=0)
    same = ~moving_mask.any(axis=1)
    p_values: FloatArray = np.where(same, 1.0, (1.0 + counts) / (1.0 + randomizations))
    return RandomizationResult(
        p_values=p_values, counts=counts, observed=observed, randomizations=randomizations, seed=int(seed)
    )


# --------------------------------------------------------------------------------------------------
# one paired difference, between any two entries


@dataclass(frozen=True)
class PairedDifference:
    """The paired difference ``value_a - value_b`` of two entries scored with the same resamples.

    Attributes
    ----------
    difference : float
    interval : Interval
        Paired bootstrap interval of the difference.
    standard_error : float
        Bootstrap standard deviation of the paired replicates of the difference.
    p_value : float
        Two-sided paired bootstrap p-value that inverts ``interval`` (see :func:`bootstrap_p_values`).
    signature : Signature
    """

    difference: float
    interval: Interval
    standard_error: float
    p_value: float
    signature: Signature


def paired_difference(
    replicates_a: npt.ArrayLike,
    replicates_b: npt.ArrayLike,
    *,
    value_a: float,
    value_b: float,
    method: str = "percentile",
    confidence: float = 0.95,
    jackknife_a: npt.ArrayLike | None = None,
    jackknife_b: npt.ArrayLike | None = None,
    metric: str = "",
    seed: int | None = None,
) -> PairedDifference:
    """Paired difference of two entries with its bootstrap interval and p-value.

    The replicates must come from the same resample weights (the engine guarantees it for entries of
    one task); their difference is then the paired bootstrap distribution of the difference. Intervals
    come from :func:`stats.intervals.bootstrap_bounds`, the p-value from :func:`bootstrap_p_values`
    with ``rule=method``.

    Parameters
    ----------
    replicates_a, replicates_b : array_like, shape (B,)
    value_a, value_b : float
        Point values.
    method : {"percentile", "basic", "bca"}, default "percentile"
    confidence : float, default 0.95
    jackknife_a, jackknife_b : array_like, shape (n_units,), optional
        Leave-one-out values (required for ``"bca"``).
    metric : str, optional
        For the signature.
    seed : int, optional
        Seed of the resample weights, for the signature.

    Returns
    -------
    PairedDifference

    References
    ----------
    .. [1] Efron, B. & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*, Chapman & Hall.

    Examples
    --------
    >>> from stats.engine import score_entries
    >>> truth = [0, 1, 1, 0, 1, 1, 0, 1]
    >>> a, b = score_entries(truth, [[0, 1, 1, 0, 1, 0, 0, 1], [1, 1, 1, 0, 0, 0, 0, 1]], metric="accuracy",
    ...                      resamples=1000, seed=1)
    >>> d = paired_difference(a.replicates, b.replicates, value_a=a.value, value_b=b.value)
    >>> d.difference, d.interval.low, d.interval.high, round(d.p_value, 3)
    (0.25, 0.0, 0.5, 0.176)
    """
    a = check_vector(replicates_a, name="replicates_a", minimum=2, what="replicates")
    b = check_vector(
        replicates_b, name="replicates_b", length=a.size, what="replicates, as many as `replicates_a`"
    )
    check_choice(method, BOOTSTRAP_RULES, name="method")
    confidence = check_level(confidence, name="confidence")
    d = a - b
    point = float(value_a) - float(value_b)
    jack = None
    if method == "bca":
        if jackknife_a is None or jackknife_b is None:
            raise ValueError("`jackknife_a` and `jackknife_b` are required when `method` is 'bca'.")
        jack = np.asarray(jackknife_a, dtype=np.float64) - np.asarray(jackknife_b, dtype=np.float64)
    # within the range of a difference of the metric's values ((-1, 1) for a proportion)
    span = difference_range(get_metric(metric).value_range) if metric in METRICS else None
    low, high = bootstrap_bounds(
        d, point=point, method=method, confidence=confidence, jackknife=jack, value_range=span
    )
    p = float(bootstrap_p_values(d, point, rule=method, jackknife=jack))
    signature = Signature(
        metric=metric, method=method, resamples=int(a.size), seed=seed, confidence=confidence
    ).with_extra(statistic="paired_difference", test=f"bootstrap-{method}")
    return PairedDifference(
        difference=point,
        interval=Interval(
            low=float(low[0]),
            high=float(high[0]),
            confidence=confidence,
            method=method,
            signature=signature,
            warning=zero_width_warnings(low, high)[0],
        ),
        standard_error=float(d.std(ddof=1)),
        p_value=p,
        signature=signature,
    )


# --------------------------------------------------------------------------------------------------
# few clusters: the exact cluster sign-flip test

#: Up to this many clusters the sign-flip test enumerates all 2**G flips (exact); beyond, it draws.
EXACT_FLIP_CLUSTERS = 16


@dataclass(frozen=True)
class ClusterFlipResult:
    """Result of :func:`cluster_sign_flip`.

    Attributes
    ----------
    p_values : numpy.ndarray, shape (K,)
        Two-sided p-values against the reference (1 for the reference itself).
    n_clusters : int
    exact : bool
        All ``2**G`` flips enumerated (else ``draws`` random flips, p = (1 + count) / (1 + draws)).
    draws : int
        Flips evaluated.
    """

    p_values: FloatArray
    n_clusters: int
    exact: bool
    draws: int


def cluster_sign_flip(
    statistics: Sequence[npt.ArrayLike],
    *,
    groups: npt.ArrayLike,
    finalize: Finalize,
    reference: int,
    randomizations: int = 10_000,
    seed: int = 0,
) -> ClusterFlipResult:
    """Paired test of every entry against ``reference`` by flipping whole clusters (exact when few).

    Under the null hypothesis the two entries are exchangeable within every cluster: swapping their
    pooled statistics in any subset of clusters (flipping the sign of the cluster's contribution to the
    difference) gives an equally likely data set. With ``G <=`` :data:`EXACT_FLIP_CLUSTERS` all ``2**G``
    subsets are enumerated and ``p = #{|d_z| >= |d_obs|} / 2**G`` exactly (the identity and the full swap
    are among them, so with 3 clusters ``p >= 2/8``: a bootstrap with 10 distinct resamples claimed
    0.0005); beyond, ``randomizations`` random subsets with ``(1 + count) / (1 + R)``. The metric is
    finalized from the pooled sums, so any decomposable metric is covered.

    Parameters
    ----------
    statistics : sequence of array_like, each (N, m)
        Per-item sufficient statistics of every entry.
    groups : array_like, shape (N,)
        Cluster of each item.
    finalize : callable
        The metric's vectorised ``finalize``.
    reference : int
        Index of the reference entry (the leader).

    References
    ----------
    .. [1] Cameron, A. C., Gelbach, J. B. & Miller, D. L. (2008). Bootstrap-based improvements for
       inference with clustered errors. *Review of Economics and Statistics* 90(3), 414-427.
    .. [2] Canay, I. A., Romano, J. P. & Shaikh, A. M. (2017). Randomization tests under an approximate
       symmetry assumption. *Econometrica* 85(3), 1013-1030.
    """
    stats_list = [np.asarray(s, dtype=np.float64) for s in statistics]
    stats_list = [s[:, None] if s.ndim == 1 else s for s in stats_list]
    k = len(stats_list)
    if not 0 <= reference < k:
        raise ValueError(f"`reference` must index one of the {k} entries.")
    g_arr = np.asarray(groups)
    if g_arr.shape != (stats_list[0].shape[0],):
        raise ValueError("`groups` must hold one cluster per item.")
    _, cluster = np.unique(g_arr, return_inverse=True)
    n_clusters = int(cluster.max()) + 1
    if n_clusters < 2:
        raise ValueError("a test needs at least 2 groups (this test set has 1)")
    pooled = []
    for s in stats_list:
        p = np.zeros((n_clusters, s.shape[1]))
        np.add.at(p, cluster, s)
        pooled.append(p)
    exact = n_clusters <= EXACT_FLIP_CLUSTERS
    if exact:
        codes = np.arange(2**n_clusters, dtype=np.int64)
        z = ((codes[:, None] >> np.arange(n_clusters)) & 1).astype(np.float64)
    else:
        rng = np.random.default_rng([seed, 0x464C4950])
        z = rng.integers(0, 2, size=(randomizations, n_clusters)).astype(np.float64)
    ref_total = pooled[reference].sum(axis=0)
    ref_value = float(finalize(ref_total))
    p_values = np.ones(k)
    for j in range(k):
        if j == reference:
            continue
        total = pooled[j].sum(axis=0)
        observed = abs(float(finalize(total)) - ref_value)
        delta = z @ (pooled[j] - pooled[reference])
        d = np.abs(finalize(total - delta) - finalize(ref_total + delta))
        hits = int(np.count_nonzero(d >= observed * (1 - 1e-9) - 1e-12))
        p_values[j] = hits / z.shape[0] if exact else (1 + hits) / (1 + z.shape[0])
    return ClusterFlipResult(np.minimum(p_values, 1.0), n_clusters, exact, int(z.shape[0]))
