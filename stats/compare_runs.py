"""Several runs per entry (training seeds): summaries and the comparison of two entries' runs.

A test set can say whether one trained model beats another on it; whether a *training procedure* is
better needs several runs of each (Bouthillier et al. 2021). These functions take the per-run scores of
one task (one number per run) and report the spread across runs and a comparison that accounts for it.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from stats.checks import check_count, check_level, check_vector
from stats.signature import Signature

FloatArray = npt.NDArray[np.float64]

__all__ = [
    "RunsComparison",
    "RunsSummary",
    "compare_runs",
    "runs_summaries",
    "runs_summary",
    "two_level_bounds",
    "two_level_replicates",
]

#: The method name of :func:`two_level_bounds` (a board row's ``interval.method``).
TWO_LEVEL_METHOD = "two-level-t"

#: mixed into the seed so the run draws never share a stream with the item weights or the swaps
_RUN_STREAM = 0x5255_4E53  # "RUNS"


def _runs(values: npt.ArrayLike, *, name: str, minimum: int = 1) -> FloatArray:
    return check_vector(values, name=name, minimum=minimum, what="run scores")


@dataclass(frozen=True)
class RunsSummary:
    """Spread of one entry's scores across runs.

    Attributes
    ----------
    n : int
        Number of runs.
    mean, sd, minimum, maximum : float
        Mean, sample standard deviation (``ddof=1``; NaN for a single run), min and max.
    """

    n: int
    mean: float
    sd: float
    minimum: float
    maximum: float


def runs_summary(values: npt.ArrayLike) -> RunsSummary:
    """Mean, standard deviation (``ddof=1``), minimum and maximum of an entry's run scores."""
    arr = _runs(values, name="values")
    return RunsSummary(
        n=int(arr.size),
        mean=float(arr.mean()),
        sd=float(arr.std(ddof=1)) if arr.size > 1 else float("nan"),
        minimum=float(arr.min()),
        maximum=float(arr.max()),
    )


@dataclass(frozen=True)
class RunsComparison:
    """Comparison of the runs of entry A with the runs of entry B.

    Attributes
    ----------
    a, b : RunsSummary
    welch_t, welch_df, welch_p : float
        Welch's unequal-variance t-test of equal means (two-sided); ``t`` is positive when A's mean is
        higher.
    prob_a_beats_b : float
        ``P(X_A better than X_B)`` for one random run of each (ties count one half), the probability of
        outperforming of Bouthillier et al. (2021), direction-aware.
    prob_interval : tuple[float, float]
        Percentile bootstrap interval of ``prob_a_beats_b`` (runs of A and of B resampled independently).
    signature : Signature
    """

    a: RunsSummary
    b: RunsSummary
    welch_t: float
    welch_df: float
    welch_p: float
    prob_a_beats_b: float
    prob_interval: tuple[float, float]
    signature: Signature


def _prob_beats(a: FloatArray, b: FloatArray) -> FloatArray:
    """Rows of ``a`` (R, n) against rows of ``b`` (R, m): share of pairs a > b, ties one half."""
    gt = (a[:, :, None] > b[:, None, :]).mean(axis=(1, 2))
    eq = (a[:, :, None] == b[:, None, :]).mean(axis=(1, 2))
    return np.asarray(gt + 0.5 * eq, dtype=np.float64)


def compare_runs(
    runs_a: npt.ArrayLike,
    runs_b: npt.ArrayLike,
    *,
    higher_is_better: bool = True,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    metric: str = "",
) -> RunsComparison:
    """Compare two entries' run scores: Welch's t-test and the probability that A's run beats B's.

    Parameters
    ----------
    runs_a, runs_b : array_like
        Scores of the runs of each entry (at least 2 each).
    higher_is_better : bool, default True
        Direction of the metric (decides what "beats" means; Welch's t is always mean(A) - mean(B)).
    confidence : float, default 0.95
        Level of the bootstrap interval of the probability.
    resamples : int, default 10000
        Bootstrap resamples of the runs.
    seed : int, default 0
        Seed of the bootstrap.
    metric : str, optional
        Metric name for the signature.

    Returns
    -------
    RunsComparison

    References
    ----------
    .. [1] Welch, B. L. (1947). The generalization of "Student's" problem when several different
       population variances are involved. *Biometrika* 34(1/2), 28-35.
    .. [2] Bouthillier, X., Delaunay, P., Bronzi, M., Trofimov, A., Nichyporuk, B., Szeto, J.,
       Sepah, N., Raff, E., Madan, K., Voleti, V., Kahou, S. E., Michalski, V., Serdyuk, D., Arbel, T.,
       Pal, C., Varoquaux, G. & Vincent, P. (2021). Accounting for variance in machine learning
       benchmarks. *Proceedings of MLSys 2021*.

    Examples
    --------
    >>> c = compare_runs([0.81, 0.82, 0.83], [0.78, 0.80, 0.79], resamples=200)
    >>> c.prob_a_beats_b
    1.0
    """
    a = _runs(runs_a, name="runs_a", minimum=2)
    b = _runs(runs_b, name="runs_b", minimum=2)
    confidence = check_level(confidence, name="confidence")
    resamples = check_count(resamples, name="resamples", minimum=1)
    seed = check_count(seed, name="seed")
    welch = sps.ttest_ind(a, b, equal_var=False)
    sign = 1.0 if higher_is_better else -1.0
    point = float(_prob_beats(sign * a[None, :], sign * b[None, :])[0])
    rng = np.random.default_rng(seed)
    chunk = max(1, 2_000_000 // (a.size * b.size))
    probs = []
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        ra = sign * a[rng.integers(0, a.size, (rows, a.size))]
        rb = sign * b[rng.integers(0, b.size, (rows, b.size))]
        probs.append(_prob_beats(ra, rb))
    dist = np.concatenate(probs)
    tail = (1 - confidence) / 2
    low, high = np.quantile(dist, [tail, 1 - tail])
    signature = Signature(
        metric=metric, method="welch+prob_outperform", resamples=resamples, seed=seed, confidence=confidence
    )
    return RunsComparison(
        a=runs_summary(a),
        b=runs_summary(b),
        welch_t=float(welch.statistic),
        welch_df=float(welch.df),
        welch_p=float(welch.pvalue),
        prob_a_beats_b=point,
        prob_interval=(float(low), float(high)),
        signature=signature,
    )


def runs_summaries(runs: Sequence[npt.ArrayLike | None]) -> list[RunsSummary | None]:
    """:func:`runs_summary` of each entry, ``None`` where an entry has no runs."""
    return [None if r is None or np.size(r) == 0 else runs_summary(r) for r in runs]


def two_level_replicates(
    item_replicates: npt.ArrayLike, run_values: npt.ArrayLike, *, seed: int, key: str
) -> FloatArray:
    """Replicates of an entry's mean over runs that include the run-to-run (training) variance.

    A two-level bootstrap: the items are resampled through the task's common weights (``item_replicates``
    is the mean over the entry's runs of their replicates, paired with every other entry), and on top of
    that the entry's ``R`` runs are resampled with replacement, independently of every other entry
    (different entries are different trainings). Replicate ``b`` is

    ``theta*_b + sqrt(R / (R - 1)) * mean_{r in draw b} (v_r - mean(v))``

    where ``v_r`` are the run scores on the whole test set. The factor ``sqrt(R / (R - 1))`` makes the run
    term's variance ``s^2 / R`` (``s`` the sample sd of the runs, ``ddof=1``): the unbiased variance of a
    mean of ``R`` runs, which the plain bootstrap of few runs underestimates by ``(R - 1) / R``. The run
    deviations are measured on one test set, so they hold the training randomness (and its interaction
    with the items), not the test-set sampling, which the first term already holds.

    Parameters
    ----------
    item_replicates : array_like, shape (B,)
        The entry's replicates from the task's resample weights (mean over its runs).
    run_values : array_like, shape (R,)
        The score of each run on the whole test set (``R >= 2``).
    seed : int
        The task's seed; the run draws use ``default_rng([seed, "RUNS", crc32(key)])``.
    key : str
        The entry's name, so the draws depend on the entry and never on the input order.

    Returns
    -------
    numpy.ndarray, shape (B,)

    Examples
    --------
    >>> import numpy as np
    >>> r = two_level_replicates(np.full(4000, 0.8), [0.78, 0.80, 0.82], seed=0, key="a")
    >>> round(float(r.std()), 3)  # sd of the mean of 3 runs: 0.02 / sqrt(3) = 0.0115
    0.012
    """
    theta = check_vector(item_replicates, name="item_replicates", minimum=2, what="replicates")
    runs = _runs(run_values, name="run_values", minimum=2)
    seed = check_count(seed, name="seed")
    r = runs.size
    rng = np.random.default_rng([seed, _RUN_STREAM, zlib.crc32(key.encode())])
    draws = rng.integers(0, r, size=(theta.size, r))
    deviations = runs - runs.mean()
    return np.asarray(theta + np.sqrt(r / (r - 1)) * deviations[draws].mean(axis=1), dtype=np.float64)


def two_level_bounds(
    item_replicates: npt.ArrayLike,
    point: float,
    run_values: npt.ArrayLike,
    *,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """The interval of an entry's mean over ``R`` runs: test-set sampling and training randomness, with
    a t quantile for the runs (``df = R - 1``).

    With few runs the sample sd ``s`` of the runs is itself uncertain, and a normal (or bootstrap)
    quantile for the run term undercovers: the two-level percentile interval of
    :func:`two_level_replicates` covered 0.91 with 5 runs whose seed sd is 3.4 times the test-set sd, 0.79
    with 2 runs (docs/stats.md, "Several runs per entry"). Here each side's half-width is

    ``sqrt(h_items^2 + (t_{R-1, 1-alpha/2} s / sqrt(R))^2)``

    where ``h_items`` is that side's distance from ``point`` to the percentile bound of the item
    replicates (the test-set part, asymmetric where the metric is), and the second term the Student t
    half-width of a mean of ``R`` runs (Student 1908). Adding the two half-widths in quadrature is
    conservative (each has its own quantile); with many runs or a small seed spread it tends to the
    test-set interval. The simulation of docs/stats.md measures it at 2, 3, 5 and 10 runs.

    Parameters
    ----------
    item_replicates : array_like, shape (B,)
        The entry's replicates from the task's resample weights (mean over its runs), without the run
        term.
    point : float
        The entry's value (mean over its runs).
    run_values : array_like, shape (R,)
        The score of each run on the whole test set (``R >= 2``).
    confidence : float, default 0.95

    Returns
    -------
    low, high : float

    Examples
    --------
    >>> low, high = two_level_bounds(np.full(1000, 0.8), 0.8, [0.78, 0.80, 0.82])
    >>> round(low, 4), round(high, 4)  # 0.8 -/+ t_{2, 0.975} 0.02 / sqrt(3) = 4.303 * 0.01155
    (0.7503, 0.8497)
    """
    from stats.intervals import bootstrap_bounds

    theta = check_vector(item_replicates, name="item_replicates", minimum=2, what="replicates")
    runs = _runs(run_values, name="run_values", minimum=2)
    confidence = check_level(confidence, name="confidence")
    lo, hi = bootstrap_bounds(theta, point=point, method="percentile", confidence=confidence)
    below = max(point - float(lo[0]), 0.0)
    above = max(float(hi[0]) - point, 0.0)
    r = runs.size
    run_half = float(sps.t.ppf(1.0 - (1.0 - confidence) / 2.0, r - 1)) * float(runs.std(ddof=1)) / np.sqrt(r)
    return point - float(np.hypot(below, run_half)), point + float(np.hypot(above, run_half))
