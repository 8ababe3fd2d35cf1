"""One call that builds the whole board of one task from stored replicates (what the service calls).

``build_board`` takes what the scoring step stored for each ranked entry of a task (point value and the
replicate vector from the task's common resample weights; optionally the jackknife values and the
per-item statistics) and returns an immutable :class:`Board`: per entry its rank and rank intervals, its
interval, its paired difference to the leader with an interval and a p-value, the adjusted p-value,
membership of the set of entries that may be the best, and the number of test items that would resolve
its gap to the leader. Every number carries the board's :class:`~stats.signature.Signature`.

Choices (``docs/adr/0003-comparison-defaults.md``): the p-value test is McNemar's exact test for 0/1
metrics, paired approximate randomization for other metrics with per-item statistics, and the paired
bootstrap (inverting the displayed interval) for rank-based metrics; Holm's correction over the K - 1
comparisons with the leader; the primary best set is the max-t confidence set for the best (Mogstad et
al. 2024), the Holm set against the observed leader is reported next to it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from stats._threads import with_blas_threads
from stats.checks import (
    FEW_CLUSTERS,
    check_choice,
    check_count,
    check_jackknife,
    check_level,
    check_replicates,
    check_statistics,
    check_vector,
)
from stats.compare import (
    CORRECTIONS,
    adjust_p_values,
    bootstrap_p_values,
    cluster_sign_flip,
    items_needed,
    items_needed_mcnemar,
    mcnemar_exact,
    paired_randomization,
)
from stats.compare_ranks import (
    RankDistribution,
    SimultaneousRanks,
    min_ranks,
    rank_distribution,
    simultaneous_ranks,
)
from stats.compare_runs import RunsSummary, runs_summaries, two_level_replicates
from stats.intervals import Interval, bca_or_percentile, bootstrap_bounds, proportion_bounds
from stats.signature import Signature

FloatArray = npt.NDArray[np.float64]

TESTS: tuple[str, ...] = ("auto", "mcnemar", "randomization", "bootstrap", "cluster-sign-flip")
BEST_SET_METHODS: tuple[str, ...] = ("max-t", "holm")
INTERVALS: tuple[str, ...] = ("auto", "bca", "percentile", "basic", "wilson")
#: The verdicts of a row (``BoardRow.verdict``), all from the max-t comparisons with the best.
VERDICTS: tuple[str, ...] = ("best", "could be the best", "worse than the best")
#: Named in the rows and the signature: how the difference interval and the verdict are computed.
VERDICT_METHOD = "max-t"
#: What an interval of a degenerate bootstrap distribution (every replicate equal) is flagged with.
DEGENERATE_WARNING = (
    "every bootstrap replicate is equal (for example every item right): the bootstrap interval has zero "
    "width and says nothing about the sampling error"
)

#: Columns per block of :func:`_column_sd`.
_SD_COLUMNS = 64
#: Entries per block of :func:`_verdicts`.
_VERDICT_ROWS = 256

__all__ = [
    "BEST_SET_METHODS",
    "DEGENERATE_WARNING",
    "INTERVALS",
    "TESTS",
    "VERDICTS",
    "VERDICT_METHOD",
    "Board",
    "BoardParts",
    "BoardRow",
    "build_board",
    "default_interval",
    "pair_bounds",
]


@dataclass(frozen=True)
class BoardRow:
    """One entry of a task board.

    Attributes
    ----------
    name : str
    rank : int
        Rank of the point value, 1 = best, ties share the smallest rank (1, 2, 2, 4).
    value : float
        Point value of the metric (the mean over runs for an entry with several runs).
    interval : Interval
        Interval of the value at the board's ``confidence``; ``interval.method`` names the method of this
        row (the board's default, ``"percentile-two-level"`` for an entry with several runs, ``"wilson"``
        where a degenerate bootstrap distribution was replaced).
    interval_warning : str or None
        Set when the interval could not be trusted and could not be replaced (:data:`DEGENERATE_WARNING`).
    rank_interval : tuple[int, int]
        Marginal rank interval: percentiles of the entry's rank over the bootstrap resamples.
    simultaneous_rank_interval : tuple[int, int]
        Max-t simultaneous rank confidence set (joint over all entries) at level ``1 - alpha``.
    verdict : str
        The board's answer (:data:`VERDICTS`), from the max-t comparisons of every pair at level
        ``alpha``, which allow for the leader having been picked on the same data: ``"worse than the
        best"`` when some entry is significantly better, ``"best"`` when the entry is significantly
        better than every other, else ``"could be the best"``.
    compared_with : str or None
        The entry that decides the verdict: for a non-leader the entry significantly better than it with
        the largest studentized gap, else the leader; for the leader the other entry least separated from
        it. ``None`` on a board of one entry.
    difference : float
        ``value - value of compared_with`` in the metric's units.
    difference_interval : Interval
        The max-t simultaneous interval of that difference (method ``"max-t"``, level ``1 - alpha``):
        ``difference +- c se``. It excludes 0 exactly when the verdict is ``"worse than the best"`` or
        ``"best"``.
    difference_standard_error : float
        Bootstrap standard error of that paired difference.
    p_value : float
        Two-sided p-value of the board's ``test`` of "this entry equals the observed leader", for this
        pair alone (1 for the leader). Not the verdict: it is conditional on the leader, picked from the
        same data.
    adjusted_p_value : float
        ``p_value`` after the board's correction over the K - 1 comparisons with the observed leader;
        family-wise (or FDR) control only as if the leader had been fixed in advance.
    in_best_set : bool
        Membership of the primary best set (the board's ``best_set_method``).
    in_best_set_max_t : bool
        No entry is significantly better under the max-t comparisons (``verdict != "worse than the
        best"``).
    in_best_set_holm : bool
        Not significantly worse than the observed leader by ``adjusted_p_value``.
    items_needed : int or None
        Test items needed to detect the observed gap to the leader in a single paired test at the
        board's power and level; ``None`` for the leader, a zero gap, or when the test-set size is
        unknown.
    n_runs : int or None
        Number of runs (training seeds) given for this entry.
    runs : RunsSummary or None
        Mean, sd, min and max over the runs (in memory only: :meth:`as_dict` shows the rounded sd).
    test_set_sd : float
        Bootstrap standard deviation of the value over the test-set resamples alone (items, not runs).
    seed_sd : float or None
        Standard deviation of the value over the entry's runs (``ddof=1``), for two runs or more.
    is_leader : bool
    """

    name: str
    rank: int
    value: float
    interval: Interval
    rank_interval: tuple[int, int]
    simultaneous_rank_interval: tuple[int, int]
    difference: float
    difference_interval: Interval
    difference_standard_error: float
    p_value: float
    adjusted_p_value: float
    in_best_set: bool
    in_best_set_max_t: bool
    in_best_set_holm: bool
    items_needed: int | None
    n_runs: int | None
    runs: RunsSummary | None
    is_leader: bool
    verdict: str = "could be the best"
    compared_with: str | None = None
    interval_warning: str | None = None
    test_set_sd: float = float("nan")
    seed_sd: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (spreads rounded to 2 significant digits; no per-run value)."""
        return {
            "name": self.name,
            "rank": self.rank,
            "value": self.value,
            "interval": [_json_float(self.interval.low), _json_float(self.interval.high)],
            "interval_method": self.interval.method,
            "interval_warning": self.interval_warning,
            "rank_interval": list(self.rank_interval),
            "simultaneous_rank_interval": list(self.simultaneous_rank_interval),
            "verdict": self.verdict,
            "compared_with": self.compared_with,
            "difference": self.difference,
            "difference_interval": [
                _json_float(self.difference_interval.low),
                _json_float(self.difference_interval.high),
            ],
            "difference_standard_error": _json_float(self.difference_standard_error),
            "p_value": self.p_value,
            "adjusted_p_value": self.adjusted_p_value,
            "in_best_set": self.in_best_set,
            "in_best_set_max_t": self.in_best_set_max_t,
            "in_best_set_holm": self.in_best_set_holm,
            "items_needed": self.items_needed,
            "n_runs": self.n_runs,
            "test_set_sd": _rounded(self.test_set_sd),
            "seed_sd": None if self.seed_sd is None else _rounded(self.seed_sd),
            "is_leader": self.is_leader,
        }


def _rounded(x: float) -> float | None:
    """``x`` to 2 significant digits (a spread, not a value to recompute anything from)."""
    if not np.isfinite(x):
        return None
    return 0.0 if x == 0 else float(f"{x:.2g}")


def _json_float(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


@dataclass(frozen=True)
class Board:
    """The immutable board of one task and metric.

    Attributes
    ----------
    rows : tuple[BoardRow, ...]
        Sorted by rank, then name.
    leader : str
        The observed leader: best point value, ties broken by name (so input order never matters).
    metric : str
    higher_is_better : bool
    test : str
        The test behind ``p_value``: ``"mcnemar"``, ``"randomization"`` or ``"bootstrap-<rule>"``.
    correction : str
    interval_method : str
    best_set_method : str
    confidence : float
    alpha : float
    power : float
    max_t_critical_value : float
        The critical value ``c`` of the max-t comparisons (last step-down step), at level ``alpha``.
    rank_probabilities : numpy.ndarray, shape (K, K)
        Row ``i`` (in the order of ``rows``): share of resamples in which that entry held rank
        ``1..K``; for plots.
    signature : Signature
    pair_standard_errors : numpy.ndarray, shape (K, K)
        Bootstrap standard errors of every paired difference, rows and columns in the order of ``rows``.
    better : numpy.ndarray of bool, shape (K, K)
        ``better[i, j]``: row ``i`` is significantly better than row ``j`` (max-t, level ``alpha``).
    """

    rows: tuple[BoardRow, ...]
    leader: str
    metric: str
    higher_is_better: bool
    test: str
    correction: str
    interval_method: str
    best_set_method: str
    confidence: float
    alpha: float
    power: float
    max_t_critical_value: float
    rank_probabilities: FloatArray = field(repr=False)
    signature: Signature = field(repr=False)
    pair_standard_errors: FloatArray = field(repr=False, default_factory=lambda: np.zeros((0, 0)))
    better: npt.NDArray[np.bool_] = field(repr=False, default_factory=lambda: np.zeros((0, 0), dtype=bool))

    def row(self, name: str) -> BoardRow:
        """The row of entry ``name``."""
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(name)

    def pairwise(self) -> dict[str, Any]:
        """Every pair with the board's own method: the max-t simultaneous interval of row minus column.

        The same :func:`pair_bounds` gives each row's ``difference_interval``, so the interval of a row
        and of its pair with ``compared_with`` are the same numbers, and an interval excludes 0 exactly
        when one entry of the pair is significantly better than the other (``significant``).
        """
        values = np.array([r.value for r in self.rows])
        diff = values[:, None] - values[None, :]
        significant = self.better | self.better.T
        low, high = pair_bounds(diff, self.pair_standard_errors, self.max_t_critical_value, significant)
        return {
            "names": [r.name for r in self.rows],
            "method": VERDICT_METHOD,
            "level": 1.0 - self.alpha,
            "critical_value": _json_float(self.max_t_critical_value),
            "difference": diff.tolist(),
            "low": low.tolist(),
            "high": high.tolist(),
            "significant": significant.tolist(),
        }

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (what a snapshot stores and the API returns)."""
        return {
            "verdict_method": VERDICT_METHOD,
            "verdict_level": 1.0 - self.alpha,
            "metric": self.metric,
            "higher_is_better": self.higher_is_better,
            "leader": self.leader,
            "test": self.test,
            "correction": self.correction,
            "interval_method": self.interval_method,
            "best_set_method": self.best_set_method,
            "confidence": self.confidence,
            "alpha": self.alpha,
            "power": self.power,
            "max_t_critical_value": _json_float(self.max_t_critical_value),
            "rows": [r.as_dict() for r in self.rows],
            "rank_probabilities": self.rank_probabilities.round(6).tolist(),
            "signature": self.signature.as_dict(),
            "signature_text": str(self.signature),
        }


def default_interval(
    *, zero_one: bool, grouped: bool, has_counts: bool, has_jackknife: bool, metric: str | None = None
) -> str:
    """The interval a metric gets by default, chosen by measured coverage (docs/stats.md, "Coverage grid").

    - a metric of the registry that names its own (``Metric.default_interval``: basic for detection AP,
      percentile for mIoU, from the vision coverage simulation), that one (BCa without a jackknife
      falls back to percentile);
    - a plain proportion (0/1 metric, independent items, counts known): Wilson's score interval, whose
      worst coverage on the grid is close to nominal, where every bootstrap interval undercovers near 0
      and 1 with few items (an entry with every item right gets the one-sided ``[l, 1]``, not
      ``[1, 1]``);
    - anything else (grouped items, other metrics): BCa when the jackknife is available, else the
      percentile interval (the basic interval has the worst coverage of the three on the grid).

    Examples
    --------
    >>> default_interval(zero_one=True, grouped=False, has_counts=True, has_jackknife=True)
    'wilson'
    >>> default_interval(zero_one=True, grouped=True, has_counts=True, has_jackknife=True)
    'bca'
    """
    if metric is not None:
        from stats.metrics import METRICS

        own = METRICS[metric].default_interval if metric in METRICS else None
        if own is not None:
            return bca_or_percentile(own, has_jackknife=has_jackknife)
    if zero_one and not grouped and has_counts:
        return "wilson"
    return bca_or_percentile("bca", has_jackknife=has_jackknife)


def pair_bounds(
    difference: npt.ArrayLike,
    standard_error: npt.ArrayLike,
    critical_value: float,
    significant: npt.ArrayLike,
) -> tuple[FloatArray, FloatArray]:
    """Max-t simultaneous bounds ``difference +- c se`` that agree with the max-t decision by construction.

    ``significant`` is the decision of :func:`stats.compare_ranks.simultaneous_ranks` for the pair (one
    entry significantly better than the other): it is ``|difference| > c se`` (``difference != 0`` where
    ``se = 0``), so the bounds exclude 0 exactly when it is true. Where rounding in the last bit would
    break that (``|difference|`` within one ulp of ``c se``), the touching bound is moved to the nearest
    float on the decided side of 0, so the shown interval and the verdict can never disagree.
    """
    d = np.asarray(difference, dtype=np.float64)
    se = np.asarray(standard_error, dtype=np.float64)
    sig = np.asarray(significant, dtype=bool)
    with np.errstate(invalid="ignore"):
        half = np.where(se > 0, critical_value * se, 0.0)
    low, high = d - half, d + half
    excludes = (low > 0) | (high < 0)
    tiny = np.nextafter(0.0, 1.0)
    # decided significant but touching 0: move the bound on 0's side just past it
    fix = sig & ~excludes
    low = np.where(fix & (d > 0), np.maximum(low, tiny), low)
    high = np.where(fix & (d < 0), np.minimum(high, -tiny), high)
    # decided not significant but not reaching 0: extend to 0
    fix = ~sig & excludes
    low = np.where(fix & (low > 0), 0.0, low)
    high = np.where(fix & (high < 0), 0.0, high)
    return low, high


def _resolve_test(
    test: str,
    *,
    zero_one: bool,
    has_items: bool,
    has_finalize: bool,
    grouped: bool,
    few_clusters: bool | None = None,
) -> str:
    check_choice(test, TESTS, name="test")
    if test == "cluster-sign-flip" and not (has_items and has_finalize and few_clusters is not None):
        raise ValueError("`test` 'cluster-sign-flip' needs `item_statistics`, `finalize` and `groups`.")
    if test == "auto":
        if grouped and few_clusters and has_items and has_finalize:
            return "cluster-sign-flip"  # too few clusters for the bootstrap (stats.checks.FEW_CLUSTERS)
        if grouped:
            return "bootstrap"
        if has_items and zero_one:
            return "mcnemar"
        if has_items and has_finalize:
            return "randomization"
        return "bootstrap"
    if test == "mcnemar" and not (has_items and zero_one):
        raise ValueError("`test` 'mcnemar' needs `item_statistics` of a 0/1 metric (`zero_one=True`).")
    if test == "randomization" and not (has_items and has_finalize):
        raise ValueError("`test` 'randomization' needs `item_statistics` and `finalize`.")
    return test


class BoardParts(Protocol):
    """The three costly parts of a board (:func:`build_board`'s ``_parts``): each returns exactly what the
    functions named in :class:`_FullParts` return for the same arrays."""

    def value_bounds(
        self,
        theta: FloatArray,
        point: FloatArray,
        *,
        method: str,
        confidence: float,
        jackknife: FloatArray | None,
    ) -> tuple[FloatArray, FloatArray]: ...

    def rank_distribution(
        self, theta: FloatArray, *, higher_is_better: bool, confidence: float
    ) -> RankDistribution: ...

    def simultaneous_ranks(
        self,
        theta: FloatArray,
        point: FloatArray,
        *,
        higher_is_better: bool,
        confidence: float,
        stepdown: bool,
    ) -> SimultaneousRanks: ...


class _FullParts:
    """Everything computed from the arrays (the module's functions, looked up at call time)."""

    def value_bounds(
        self,
        theta: FloatArray,
        point: FloatArray,
        *,
        method: str,
        confidence: float,
        jackknife: FloatArray | None,
    ) -> tuple[FloatArray, FloatArray]:
        return bootstrap_bounds(theta, point=point, method=method, confidence=confidence, jackknife=jackknife)

    def rank_distribution(
        self, theta: FloatArray, *, higher_is_better: bool, confidence: float
    ) -> RankDistribution:
        return rank_distribution(theta, higher_is_better=higher_is_better, confidence=confidence)

    def simultaneous_ranks(
        self,
        theta: FloatArray,
        point: FloatArray,
        *,
        higher_is_better: bool,
        confidence: float,
        stepdown: bool,
    ) -> SimultaneousRanks:
        return simultaneous_ranks(
            theta, point, higher_is_better=higher_is_better, confidence=confidence, stepdown=stepdown
        )


@with_blas_threads
def build_board(
    *,
    names: Sequence[str],
    values: npt.ArrayLike,
    replicates: npt.ArrayLike,
    higher_is_better: bool,
    metric_name: str,
    seed: int,
    confidence: float = 0.95,
    alpha: float = 0.05,
    interval: str | None = None,
    jackknife: npt.ArrayLike | None = None,
    correction: str = "holm",
    test: str = "auto",
    item_statistics: Sequence[npt.ArrayLike] | None = None,
    finalize: Callable[[np.ndarray], np.ndarray] | None = None,
    zero_one: bool = False,
    randomizations: int = 10_000,
    n_items: int | None = None,
    best_set_method: str = "max-t",
    stepdown: bool = True,
    power: float = 0.8,
    runs: Sequence[npt.ArrayLike | None] | None = None,
    grouped: bool = False,
    groups: npt.ArrayLike | None = None,
    _parts: BoardParts | None = None,
) -> Board:
    """Build the board of one task: intervals, ranks, differences to the leader, tests, best sets.

    Parameters
    ----------
    names : sequence of str
        Unique entry names (K).
    values : array_like, shape (K,)
        Point values.
    replicates : array_like, shape (B, K)
        Replicates of every entry from the task's common resample weights (paired by construction).
    higher_is_better : bool
        Direction of the metric.
    metric_name : str
        For the signature.
    seed : int
        The task's seed of the resample weights (for the signature); also seeds the randomization draws.
    confidence : float, default 0.95
        Level of every interval and of the rank sets.
    alpha : float, default 0.05
        Level of the tests and of the Holm best set.
    interval : {"bca", "percentile", "basic"}, optional
        Interval method for values and differences; default ``"bca"`` when ``jackknife`` is given (the
        engine's default, docs/adr/0002), ``"percentile"`` otherwise.
    jackknife : array_like, shape (n_units, K), optional
        Leave-one-unit-out values of every entry (from the engine); needed by BCa.
    correction : {"holm", "bh", "none"}, default "holm"
        Multiplicity correction over the K - 1 comparisons with the leader.
    test : {"auto", "mcnemar", "randomization", "bootstrap"}, default "auto"
        ``"auto"``: McNemar for 0/1 metrics with item statistics, randomization with item statistics
        and ``finalize``, else the paired bootstrap p-value that inverts ``interval``.
    item_statistics : sequence of array_like (N, m), optional
        Per-item sufficient statistics of every entry (decomposable metrics only).
    finalize : callable, optional
        The metric's ``finalize`` (pooled sums -> values), for randomization.
    zero_one : bool, default False
        Column 0 of the item statistics is 1/0 correctness (McNemar and Connor's power apply).
    randomizations : int, default 10000
        Draws of the approximate randomization test.
    n_items : int, optional
        Test-set size for ``items_needed`` when no item statistics are given.
    best_set_method : {"max-t", "holm"}, default "max-t"
        Which best set sets ``in_best_set``; both are always reported.
    stepdown : bool, default True
        Step-down refinement of the max-t sets.
    power : float, default 0.8
        Power of the ``items_needed`` calculation (two-sided, level ``alpha``).
    runs : sequence of (array_like or None), optional
        Per entry, its scores over several training runs.
    grouped : bool, default False
        The replicates come from a grouped (cluster) bootstrap. Per-item tests (McNemar,
        randomization) and Connor's formula treat items as independent, so ``test="auto"`` then uses
        the paired bootstrap p-value and ``items_needed`` the bootstrap standard error.
    groups : array_like, shape (N,), optional
        Each item's group (with ``item_statistics``). With fewer than ``stats.checks.FEW_CLUSTERS``
        groups, ``test="auto"`` uses the exact cluster sign-flip test
        (:func:`stats.compare.cluster_sign_flip`): the bootstrap has too few distinct resamples there.
    _parts : BoardParts, optional
        Computes the value intervals, the rank distribution and the max-t sets (internal: the incremental
        board of :mod:`stats.board_update` passes one that reuses the previous board's work; the numbers
        are the same).

    Returns
    -------
    Board

    References
    ----------
    .. [1] Mogstad, M., Romano, J. P., Shaikh, A. M. & Wilhelm, D. (2024). Inference for ranks with
       applications to mobility across neighbourhoods and academic achievement across countries.
       *The Review of Economic Studies* 91(1), 476-518.
    .. [2] Everingham, M., Van Gool, L., Williams, C. K. I., Winn, J. & Zisserman, A. (2010). The
       PASCAL Visual Object Classes (VOC) challenge. *IJCV* 88(2), 303-338.

    Examples
    --------
    >>> import numpy as np
    >>> from stats.engine import score_entries
    >>> truth = np.array([0, 1, 1, 0, 1, 1, 0, 1, 0, 1] * 20)
    >>> rng = np.random.default_rng(0)
    >>> preds = [np.where(rng.random(200) < p, 1 - truth, truth) for p in (0.1, 0.2, 0.22)]
    >>> scores = score_entries(truth, preds, metric="accuracy", names=["a", "b", "c"], resamples=2000, seed=7)
    >>> board = build_board(
    ...     names=[s.name for s in scores], values=[s.value for s in scores],
    ...     replicates=np.column_stack([s.replicates for s in scores]),
    ...     jackknife=np.column_stack([s.jackknife for s in scores]),
    ...     higher_is_better=True, metric_name="accuracy", seed=7)
    >>> [(r.name, r.rank, r.value, r.verdict) for r in board.rows]
    [('a', 1, 0.895, 'best'), ('c', 2, 0.815, 'worse than the best'), ('b', 3, 0.78, 'worse than the best')]
    """
    names = tuple(str(n) for n in names)
    k = len(names)
    if k < 1 or len(set(names)) != k:
        raise ValueError("`names` must hold at least one name, all unique.")
    point = check_vector(values, name="values", length=k, what="values, one per name")
    theta = check_replicates(replicates, k=k)
    # Row-major: numpy sums a column of a row-major array in sequence and of a column-major one pairwise,
    # so the last bits of the means (and the standard errors) would depend on the input's memory layout.
    # A row-major view (the first columns of a wider array) is used as it is, anything else copied.
    if not (theta.strides[1] == 8 and theta.strides[0] >= 8 * theta.shape[1]):
        theta = np.ascontiguousarray(theta)
    b = theta.shape[0]
    confidence = check_level(confidence, name="confidence")
    alpha = check_level(alpha, name="alpha")
    power = check_level(power, name="power")
    seed = check_count(seed, name="seed")
    check_choice(correction, CORRECTIONS, name="correction")
    check_choice(best_set_method, BEST_SET_METHODS, name="best_set_method")
    jack = None if jackknife is None else check_jackknife(jackknife, k=k)
    requested = check_choice("auto" if interval is None else interval, INTERVALS, name="interval")
    if requested == "bca" and jack is None:
        raise ValueError("`interval` 'bca' needs `jackknife` (leave-one-out values from the engine).")
    stats_list: list[FloatArray] | None = None
    if item_statistics is not None:
        stats_list = check_statistics(item_statistics, name="item_statistics", k=k, one_dimensional=True)
        if n_items is not None and n_items != stats_list[0].shape[0]:
            raise ValueError("`n_items` disagrees with the number of rows of `item_statistics`.")
        n_items = stats_list[0].shape[0]
        if finalize is not None:
            check = np.asarray(finalize(np.stack([s.sum(axis=0) for s in stats_list])), dtype=np.float64)
            if not np.allclose(check, point, rtol=1e-9, atol=1e-12):
                raise ValueError("`values` disagree with `finalize` of the pooled `item_statistics`.")
    if n_items is not None:
        n_items = check_count(n_items, name="n_items", minimum=1)
    if runs is not None and len(runs) != k:
        raise ValueError(f"`runs` must hold {k} entries (None where an entry has no runs).")
    n_groups = None if groups is None else len(np.unique(np.asarray(groups)))
    summaries: list[RunsSummary | None] = runs_summaries(runs) if runs is not None else [None] * k
    with_runs = np.array([sm is not None and sm.n >= 2 for sm in summaries], dtype=bool)
    has_counts = zero_one and n_items is not None and not grouped
    method = (
        default_interval(
            zero_one=zero_one,
            grouped=grouped,
            has_counts=has_counts,
            has_jackknife=jack is not None,
            metric=metric_name,
        )
        if requested == "auto"
        else requested
    )
    if method == "wilson" and not has_counts:
        raise ValueError(
            "`interval` 'wilson' needs a 0/1 metric (`zero_one=True`), independent items (not `grouped`) "
            "and the test-set size (`n_items` or `item_statistics`)."
        )
    resolved = _resolve_test(
        test,
        zero_one=zero_one,
        has_items=stats_list is not None,
        has_finalize=finalize is not None,
        grouped=grouped,
        few_clusters=None if n_groups is None else n_groups < FEW_CLUSTERS,
    )

    sign = 1.0 if higher_is_better else -1.0
    # the leader: best value, ties broken by name, so the input order never matters
    leader = min(range(k), key=lambda i: (-sign * point[i], names[i]))

    # Training randomness: an entry with several runs gets replicates that also resample its runs
    # (two-level bootstrap), so its interval, the verdicts and the ranks include the run-to-run variance.
    test_set_sd = _column_sd(theta)
    if with_runs.any():
        theta = theta.copy()
        assert runs is not None
        for i in np.flatnonzero(with_runs).tolist():
            theta[:, i] = two_level_replicates(theta[:, i], np.asarray(runs[i]), seed=seed, key=names[i])

    # intervals of the values: the metric's method; two-level percentile for entries with runs
    boot_method = method if method in ("bca", "percentile", "basic") else None
    row_methods = [method] * k
    warnings: list[str | None] = [None] * k
    v_low = np.full(k, np.nan)
    v_high = np.full(k, np.nan)
    degenerate = np.ptp(theta, axis=0) == 0
    parts = _parts if _parts is not None else _FullParts()
    if boot_method is not None:
        lo, hi = parts.value_bounds(theta, point, method=boot_method, confidence=confidence, jackknife=jack)
        v_low[:], v_high[:] = lo, hi
    if with_runs.any():
        lo, hi = bootstrap_bounds(
            theta[:, with_runs], point=point[with_runs], method="percentile", confidence=confidence
        )
        v_low[with_runs], v_high[with_runs] = lo, hi
    wilson_rows = ~with_runs & (np.full(k, method == "wilson") | (degenerate & has_counts))
    if wilson_rows.any():
        assert n_items is not None
        successes = point[wilson_rows] * n_items
        if not np.allclose(successes, np.round(successes), atol=1e-6):
            raise ValueError("`values` of a 0/1 metric must be counts of right items divided by `n_items`.")
        lo, hi = proportion_bounds(np.round(successes), n_items, method="wilson", confidence=confidence)
        v_low[wilson_rows], v_high[wilson_rows] = lo, hi
    for i in range(k):
        if with_runs[i]:
            row_methods[i] = "percentile-two-level"
        elif wilson_rows[i]:
            row_methods[i] = "wilson"
        if degenerate[i] and not wilson_rows[i]:
            warnings[i] = DEGENERATE_WARNING

    # the pair test of every entry against the observed leader (a column of its own, not the verdict)
    diff_point = point - point[leader]
    diff_jack = None if jack is None or with_runs.any() else jack - jack[:, [leader]]
    rule = bca_or_percentile(boot_method or "bca", has_jackknife=diff_jack is not None)
    # the replicates of the differences to the leader, a block of columns at a time (every statistic
    # below is per column; at K = 5,000, B = 10,000 the whole matrix is 400 MB)
    diff_se = np.empty(k)
    boot_p = np.empty(k)
    for c0 in range(0, k, _SD_COLUMNS):
        cols = slice(c0, c0 + _SD_COLUMNS)
        diff_theta = theta[:, cols] - theta[:, [leader]]
        diff_se[cols] = diff_theta.std(axis=0, ddof=1)
        if resolved not in ("mcnemar", "randomization", "cluster-sign-flip"):
            boot_p[cols] = bootstrap_p_values(
                diff_theta,
                diff_point[cols],
                rule=rule,
                jackknife=None if diff_jack is None else diff_jack[:, cols],
            )
    if resolved == "mcnemar":
        assert stats_list is not None
        correct = np.column_stack([s[:, 0] for s in stats_list]) > 0.5
        only_entry = (correct & ~correct[:, [leader]]).sum(axis=0)
        only_leader = (~correct & correct[:, [leader]]).sum(axis=0)
        p = mcnemar_exact(only_entry, only_leader)
        test_name = "mcnemar"
    elif resolved == "randomization":
        assert stats_list is not None and finalize is not None
        rand = paired_randomization(
            stats_list, finalize=finalize, reference=leader, randomizations=randomizations, seed=seed
        )
        p = rand.p_values
        test_name = "randomization"
    elif resolved == "cluster-sign-flip":
        assert stats_list is not None and finalize is not None and groups is not None
        flip = cluster_sign_flip(
            stats_list,
            groups=groups,
            finalize=finalize,
            reference=leader,
            randomizations=randomizations,
            seed=seed,
        )
        p = flip.p_values
        test_name = "cluster-sign-flip-exact" if flip.exact else "cluster-sign-flip"
    else:
        p = boot_p
        test_name = f"bootstrap-{rule}"
    p = np.asarray(p, dtype=np.float64).copy()
    p[leader] = 1.0
    others = np.array([i for i in range(k) if i != leader], dtype=np.intp)
    adjusted = np.ones(k)
    if others.size:
        adjusted[others] = adjust_p_values(p[others], correction=correction)

    # ranks; the simultaneous (max-t) comparisons at level alpha decide the verdicts and the best set
    ranks = min_ranks(point, higher_is_better=higher_is_better)
    rd = parts.rank_distribution(theta, higher_is_better=higher_is_better, confidence=confidence)
    sim = parts.simultaneous_ranks(
        theta, point, higher_is_better=higher_is_better, confidence=1.0 - alpha, stepdown=stepdown
    )
    advantage = sign * diff_point
    holm_set = ~((adjusted <= alpha) & (advantage < 0))
    primary = sim.best if best_set_method == "max-t" else holm_set
    verdicts, compared = _verdicts(sim, point, names, sign=sign, leader=leader)
    pair_diff = point - point[compared]
    pair_se = sim.standard_errors[np.arange(k), compared]
    decided = np.array([v != "could be the best" for v in verdicts], dtype=bool)
    m_low, m_high = pair_bounds(pair_diff, pair_se, sim.critical_value, decided)

    # items needed to resolve the gap to the leader
    needed: list[int | None] = [None] * k
    if n_items is not None:
        if zero_one and stats_list is not None and not grouped:
            correct = np.column_stack([s[:, 0] for s in stats_list]) > 0.5
            for i in others.tolist():
                only_i = int((correct[:, i] & ~correct[:, leader]).sum())
                only_l = int((~correct[:, i] & correct[:, leader]).sum())
                needed[i] = items_needed_mcnemar(
                    gap=(only_i - only_l) / n_items,
                    discordant=(only_i + only_l) / n_items,
                    alpha=alpha,
                    power=power,
                )
        else:
            computed = items_needed(
                gap=diff_point[others],
                standard_error=diff_se[others],
                n_items=n_items,
                alpha=alpha,
                power=power,
            )
            for i, value in zip(others.tolist(), computed, strict=True):
                needed[i] = value

    signature = Signature(
        metric=metric_name, method=method, resamples=b, seed=seed, confidence=confidence
    ).with_extra(
        verdict=f"{VERDICT_METHOD} comparisons with the best, level {alpha:g}",
        difference_interval=f"{VERDICT_METHOD} simultaneous, {1 - alpha:g}",
        test=test_name,
        correction=correction,
        alpha=alpha,
        best_set=best_set_method,
        stepdown=stepdown,
        rank_ties="min",
        grouped=grouped,
        power=power,
        **(
            {"runs": "two-level bootstrap (items: common weights; runs: resampled per entry)"}
            if with_runs.any()
            else {}
        ),
        **({"randomizations": randomizations} if resolved == "randomization" else {}),
    )

    rows = []
    for i in range(k):
        rows.append(
            BoardRow(
                name=names[i],
                rank=int(ranks[i]),
                value=float(point[i]),
                interval=Interval(
                    low=float(v_low[i]),
                    high=float(v_high[i]),
                    confidence=confidence,
                    method=row_methods[i],
                    signature=signature,
                ),
                interval_warning=warnings[i],
                rank_interval=(int(rd.low[i]), int(rd.high[i])),
                simultaneous_rank_interval=(int(sim.lower[i]), int(sim.upper[i])),
                verdict=verdicts[i],
                compared_with=None if compared[i] == i else names[compared[i]],
                difference=float(pair_diff[i]),
                difference_interval=Interval(
                    low=float(m_low[i]),
                    high=float(m_high[i]),
                    confidence=1.0 - alpha,
                    method=VERDICT_METHOD,
                    signature=signature,
                ),
                difference_standard_error=float(pair_se[i]),
                p_value=float(p[i]),
                adjusted_p_value=float(adjusted[i]),
                in_best_set=bool(primary[i]),
                in_best_set_max_t=bool(sim.best[i]),
                in_best_set_holm=bool(holm_set[i]),
                items_needed=needed[i],
                n_runs=None if summaries[i] is None else summaries[i].n,  # type: ignore[union-attr]
                runs=summaries[i],
                test_set_sd=float(test_set_sd[i]),
                seed_sd=float(summaries[i].sd) if with_runs[i] else None,  # type: ignore[union-attr]
                is_leader=i == leader,
            )
        )
    order = sorted(range(k), key=lambda i: (rows[i].rank, names[i]))
    return Board(
        rows=tuple(rows[i] for i in order),
        leader=names[leader],
        metric=metric_name,
        higher_is_better=higher_is_better,
        test=test_name,
        correction=correction,
        interval_method=method,
        best_set_method=best_set_method,
        confidence=confidence,
        alpha=alpha,
        power=power,
        max_t_critical_value=float(sim.critical_value),
        rank_probabilities=_permute_in_place(rd.probabilities, order, columns=False),
        signature=signature,
        pair_standard_errors=_permute_in_place(sim.standard_errors, order, columns=True),
        better=_permuted(np.asarray(sim.better, dtype=bool), order),
    )


def _permuted(a: npt.NDArray[Any], order: Sequence[int]) -> npt.NDArray[Any]:
    """``a[np.ix_(order, order)]``, 128 rows at a time: each block's rows are gathered, then its columns
    while they are in cache (K = 5,000: 0.09 s against 0.47 s for the one fancy index)."""
    index = np.asarray(order, dtype=np.intp)
    out = np.empty((index.size, index.size), dtype=a.dtype)
    for r0 in range(0, index.size, 128):
        out[r0 : r0 + 128] = a[index[r0 : r0 + 128]][:, index]
    return out


def _permute_in_place(a: npt.NDArray[Any], order: Sequence[int], *, columns: bool) -> npt.NDArray[Any]:
    """``a[order]`` (and ``[:, order]`` with ``columns``) in ``a`` itself: the board's K x K tables are
    not held twice (issue 24: K = 10,000, 0.8 GB each). Rows follow the cycles of the permutation (one
    row copied aside per cycle), columns are gathered 128 rows at a time; the same values as the copy."""
    index = np.asarray(order, dtype=np.intp)
    done = np.zeros(index.size, dtype=bool)
    for start in range(index.size):
        if done[start]:
            continue
        saved = a[start].copy()
        i = start
        while True:
            done[i] = True
            j = int(index[i])
            if j == start:
                a[i] = saved
                break
            a[i] = a[j]
            i = j
    if columns:
        for r0 in range(0, index.size, 128):
            a[r0 : r0 + 128] = a[r0 : r0 + 128][:, index]
    return a


def _column_sd(x: FloatArray) -> FloatArray:
    """``x.std(axis=0, ddof=1)`` to the bit, in column blocks.

    numpy sums each column of a row-major array in row order whatever the columns beside it, so a block
    of columns gets the bits of the whole array; the temporaries (``x - mean`` and its square) stay a
    few MB instead of two copies of ``x`` (K = 5,000, B = 10,000: 400 MB each, and 0.7 s).
    """
    out = np.empty(x.shape[1])
    for c0 in range(0, x.shape[1], _SD_COLUMNS):
        out[c0 : c0 + _SD_COLUMNS] = x[:, c0 : c0 + _SD_COLUMNS].std(axis=0, ddof=1)
    return out


def _verdicts(
    sim: Any, point: FloatArray, names: Sequence[str], *, sign: float, leader: int
) -> tuple[list[str], npt.NDArray[np.intp]]:
    """Per entry its verdict and the entry that decides it (see :class:`BoardRow`), from the max-t decisions.

    Computed in blocks of entries (K = 5,000: each K x K temporary of the studentized gaps is 200 MB);
    every element is a function of its own pair, so the blocks give the bits of the whole matrix.
    """
    k = point.size
    se = sim.standard_errors
    better = np.asarray(sim.better, dtype=bool)
    name_rank = np.empty(k, dtype=np.int64)
    name_rank[np.argsort(np.array(names, dtype=object), kind="stable")] = np.arange(k)

    def gaps(advantage: FloatArray, s: FloatArray) -> FloatArray:
        """Studentized gaps ``advantage / se`` (``+-inf`` where ``se = 0``)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(s > 0, advantage / np.where(s > 0, s, 1.0), np.sign(advantage) * np.inf)
        # compared at 9 decimals: a permuted input may change the last bits of a covariance (BLAS order)
        return np.asarray(np.round(t, 9), dtype=np.float64)

    def pick(candidates: npt.NDArray[np.bool_], key: npt.NDArray[Any]) -> npt.NDArray[np.intp]:
        """Per row, the candidate column with the smallest key, ties broken by name (input order never)."""
        keyed = np.where(candidates, key, np.inf)
        best = keyed.min(axis=1, keepdims=True)
        tied = candidates & (keyed == best)
        return np.asarray(np.where(tied, name_rank[None, :], k).argmin(axis=1), dtype=np.intp)

    # per entry i, the entries j significantly better than it (beaten_by[i, j] = better[j, i], j != i),
    # and among them the one with the largest studentized gap t[j, i] of j over i
    worse = np.zeros(k, dtype=bool)
    compared = np.full(k, leader, dtype=np.intp)
    for r0 in range(0, k, _VERDICT_ROWS):
        cols = np.arange(r0, min(k, r0 + _VERDICT_ROWS))
        beaten_by = better[:, cols].T
        beaten_by[np.arange(cols.size), cols] = False
        w = beaten_by.any(axis=1)
        worse[cols] = w
        if w.any():
            rows = cols[w]
            advantage = sign * (point[None, :] - point[rows, None])  # t[j, i] in row i, column j
            compared[rows] = pick(beaten_by[w], -gaps(advantage, se[:, rows].T))
    verdicts = ["worse than the best" if bool(w) else "could be the best" for w in worse]
    if k == 1:
        compared[0] = 0
    else:
        not_self = np.ones(k, dtype=bool)
        not_self[leader] = False
        open_ = not_self & ~better[leader]
        pool = open_ if open_.any() else not_self
        t_leader = gaps(sign * (point[leader] - point), se[leader])
        compared[leader] = pick(pool[None, :], t_leader[None, :])[0]
        verdicts[leader] = "could be the best" if open_.any() else "best"
    return verdicts, compared
