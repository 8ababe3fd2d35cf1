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
al. 2024), the Holm set against the observed leader is reported next to it. The max-t decisions behind
the verdicts come from the bootstrap where it holds their level and from the randomization max-t of
:mod:`stats.randomization` where it does not (few items or clusters, few positives), or are declined
with the reason (``Board.verdict_test``, ``Board.verdict_warning``; docs/comparisons.md).

The body of :func:`build_board` is validate-then-compute: :func:`_build_board_iv` checks the arguments,
then one named stage each computes the value intervals, the differences to the leader, the pair test,
its adjustment, the rank sets, the decisions and verdicts, the items needed, the signature and the rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from stats._threads import Beside, beside, board_threads, in_blocks, with_blas_threads
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
    _gathered,
    min_ranks,
    rank_distribution,
    simultaneous_ranks,
)
from stats.compare_runs import (
    TWO_LEVEL_METHOD,
    RunsSummary,
    runs_summaries,
    two_level_bounds,
    two_level_replicates,
)
from stats.intervals import (
    PROPORTION_DEFAULT,
    PROPORTION_METHODS,
    Interval,
    bca_or_percentile,
    bootstrap_bounds,
    clip_to_range,
    proportion_bounds,
    zero_width_warnings,
)
from stats.intervals import default_interval as metric_default_interval
from stats.metrics import METRICS
from stats.randomization import (
    Exchangeable,
    MaxTResult,
    pooled_statistics,
    randomization_max_t,
    smallest_p_value,
)
from stats.signature import Signature

FloatArray = npt.NDArray[np.float64]

TESTS: tuple[str, ...] = ("auto", "mcnemar", "randomization", "bootstrap", "cluster-sign-flip")
BEST_SET_METHODS: tuple[str, ...] = ("max-t", "holm")
INTERVALS: tuple[str, ...] = ("auto", "bca", "percentile", "basic", *PROPORTION_METHODS)
#: The verdicts of a row (``BoardRow.verdict``), all from the max-t comparisons with the best.
VERDICTS: tuple[str, ...] = ("best", "could be the best", "worse than the best")
#: Named in the rows and the signature: how the difference interval and the verdict are computed.
VERDICT_METHOD = "max-t"
#: How the verdicts were decided (``Board.verdict_test``, the signature's ``verdict_test``): the bootstrap
#: max-t where it holds its level, the randomization max-t (:mod:`stats.randomization`) over the items or
#: clusters where the bootstrap cannot, or no decision where neither can (the board's warning says why).
BOOTSTRAP_MAX_T = "bootstrap max-t"
ITEM_RANDOMIZATION_MAX_T = "randomization max-t over items"
CLUSTER_RANDOMIZATION_MAX_T = "cluster randomization max-t"
DECLINED = "declined"
VERDICT_TESTS: tuple[str, ...] = (
    BOOTSTRAP_MAX_T,
    ITEM_RANDOMIZATION_MAX_T,
    CLUSTER_RANDOMIZATION_MAX_T,
    DECLINED,
)
#: Below this many units (items, or clusters of a grouped design) the verdicts come from the randomization
#: max-t: the bootstrap max-t claimed "worse than the best" in 10-13% of A/A boards of 10 entries at N = 10,
#: 30 and 100 items, and in 7-22% with 3 to 30 clusters (docs/comparisons.md, "Verdicts at the edges").
RANDOMIZATION_UNITS = 300
#: ... for boards of at most this many entries (the permutations cost B x N x K; beyond, the bootstrap
#: max-t decides and the board warns).
RANDOMIZATION_MAX_ENTRIES = 100
#: Permutations drawn for the verdicts (the level is exact for any number; 1,000 resolve p near 0.05 to
#: 0.007 and keep a board of 100 entries on 299 items near a second).
VERDICT_RANDOMIZATIONS = 1000
#: A rank metric (ROC AUC, average precision) with fewer positives (or negatives) than this gets no
#: bootstrap verdict: A/A false claims 0.21 with 3 positives of 500 items, 0.07 with 10 (issue 21).
FEW_POSITIVES = 30
#: What an interval of a degenerate bootstrap distribution (every replicate equal) is flagged with.
DEGENERATE_WARNING = (
    "every bootstrap replicate is equal (for example every item right): the bootstrap interval has zero "
    "width and says nothing about the sampling error"
)

#: Columns per block of :func:`_column_sd`.
_SD_COLUMNS = 64
#: Columns per task of the per-column statistics on the board's threads (:func:`_column_sd`, the leader
#: differences): a multiple of :data:`_SD_COLUMNS`, so each block of 64 columns is the one thread's.
_SD_SPAN = 1024
#: Entries per block of :func:`_verdicts`.
_VERDICT_ROWS = 256

__all__ = [
    "BEST_SET_METHODS",
    "BOOTSTRAP_MAX_T",
    "CLUSTER_RANDOMIZATION_MAX_T",
    "DECLINED",
    "DEGENERATE_WARNING",
    "FEW_POSITIVES",
    "INTERVALS",
    "ITEM_RANDOMIZATION_MAX_T",
    "RANDOMIZATION_UNITS",
    "TESTS",
    "VERDICTS",
    "VERDICT_METHOD",
    "VERDICT_TESTS",
    "Board",
    "BoardParts",
    "BoardRow",
    "build_board",
    "default_interval",
    "discordant_counts",
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
        row (the board's default, ``"two-level-t"`` for an entry with several runs
        (:func:`stats.compare_runs.two_level_bounds`), ``"clopper_pearson"`` where a degenerate bootstrap
        distribution was replaced); within the metric's range (``Metric.value_range``).
    interval_warning : str or None
        Set when the interval could not be trusted and could not be replaced (:data:`DEGENERATE_WARNING`),
        or has zero width (:data:`stats.intervals.ZERO_WIDTH_WARNING`).
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
        ``difference +- c se`` (bootstrap max-t), or ``difference +- c`` with ``c`` in the metric's units
        (randomization max-t, ``Board.unit_scale``). It excludes 0 exactly when the verdict is ``"worse
        than the best"`` or ``"best"``.
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
        Bootstrap standard errors of every paired difference, rows and columns in the order of ``rows``
        (read-only; a property: :attr:`standard_errors_by_input` permuted on first read).
    better : numpy.ndarray of bool, shape (K, K)
        ``better[i, j]``: row ``i`` is significantly better than row ``j`` (max-t, level ``alpha``; read-only,
        a property: :attr:`better_by_input` permuted on first read).
    standard_errors_by_input, better_by_input : numpy.ndarray, shape (K, K)
        The same two tables with rows and columns in the order of :func:`build_board`'s input (entry ``i`` of
        ``names``), as the board computed them: the board never permutes them (issue 24, tenth pass: at
        K = 10,000 two in-place permutes of 0.8 GB and 0.1 GB, 0.4-0.6 s of every new entry's board, for
        tables the service never reads in the rows' order).
    input_order : numpy.ndarray of int, shape (K,)
        Row ``r`` of the board is entry ``input_order[r]`` of the input.
    verdict_test : str
        How the verdicts were decided (:data:`VERDICT_TESTS`). With a randomization max-t the difference
        intervals are ``difference +- max_t_critical_value`` in the metric's units (the permutation
        distribution's), with the bootstrap max-t ``difference +- c se``.
    verdict_warning : str or None
        Why the verdicts are not from the bootstrap, or why nothing could be decided.
    unit_scale : bool
        The max-t intervals are ``difference +- max_t_critical_value`` (a randomization max-t's), not in
        units of ``pair_standard_errors``.
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
    standard_errors_by_input: FloatArray = field(repr=False, default_factory=lambda: np.zeros((0, 0)))
    better_by_input: npt.NDArray[np.bool_] = field(
        repr=False, default_factory=lambda: np.zeros((0, 0), dtype=bool)
    )
    input_order: npt.NDArray[np.intp] = field(repr=False, default_factory=lambda: np.zeros(0, dtype=np.intp))
    verdict_test: str = BOOTSTRAP_MAX_T
    verdict_warning: str | None = None
    unit_scale: bool = field(repr=False, default=False)
    #: In row order: the standard deviation (``ddof=1``) over the resamples of each entry's replicates minus
    #: the leader's, of the replicates the board used (0 for the leader); ``stats.power.board_resolution``
    #: takes them instead of computing them again (an O(B K) pass).
    leader_difference_sd: FloatArray = field(repr=False, default_factory=lambda: np.zeros(0))

    @cached_property
    def pair_standard_errors(self) -> FloatArray:
        """The pairs' standard errors, rows and columns in the order of ``rows`` (read-only)."""
        return _in_row_order(self.standard_errors_by_input, self.input_order)

    @cached_property
    def better(self) -> npt.NDArray[np.bool_]:
        """``better[i, j]``: row ``i`` is significantly better than row ``j`` (read-only)."""
        return _in_row_order(self.better_by_input, self.input_order)

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
        low, high = pair_bounds(diff, self._decision_scale(), self.max_t_critical_value, significant)
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

    def _decision_scale(self) -> FloatArray:
        """The standard errors the max-t intervals are in units of (ones for a randomization max-t)."""
        if self.unit_scale:
            return np.ones_like(self.pair_standard_errors)
        return self.pair_standard_errors

    def as_dict(self, *, rank_probabilities: bool = True) -> dict[str, Any]:
        """A JSON-ready dictionary (what a snapshot stores and the API returns).

        ``rank_probabilities=False`` leaves the K x K rank probabilities out (a caller that stores them in
        another form reads :attr:`rank_probabilities`: a million floats as Python lists at K = 1,000)."""
        return {
            "verdict_method": VERDICT_METHOD,
            "verdict_test": self.verdict_test,
            "verdict_warning": self.verdict_warning,
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
            **(
                {"rank_probabilities": self.rank_probabilities.round(6).tolist()}
                if rank_probabilities
                else {}
            ),
            "signature": self.signature.as_dict(),
            "signature_text": str(self.signature),
        }


def default_interval(
    *, zero_one: bool, grouped: bool, has_counts: bool, has_jackknife: bool, metric: str | None = None
) -> str:
    """The interval a metric gets by default: :func:`stats.intervals.default_interval`, the one rule of
    every command, board and page (Clopper-Pearson for a plain proportion, a vision metric's own, else
    BCa; docs/adr/0007-proportion-interval.md).

    Examples
    --------
    >>> default_interval(zero_one=True, grouped=False, has_counts=True, has_jackknife=True)
    'clopper_pearson'
    >>> default_interval(zero_one=True, grouped=True, has_counts=True, has_jackknife=True)
    'bca'
    """
    return metric_default_interval(
        metric, zero_one=zero_one, grouped=grouped, has_counts=has_counts, has_jackknife=has_jackknife
    )


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
    """The costly parts of a board (:func:`build_board`'s ``_parts``): each returns exactly what the
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

    def expect_rank_distribution(
        self, theta: FloatArray, *, higher_is_better: bool, confidence: float
    ) -> None:
        """The arguments of the :meth:`rank_distribution` call that follows :meth:`simultaneous_ranks` (the
        parts may compute it beside the max-t sets; the same result)."""

    def simultaneous_ranks(
        self,
        theta: FloatArray,
        point: FloatArray,
        *,
        higher_is_better: bool,
        confidence: float,
        stepdown: bool,
    ) -> SimultaneousRanks: ...

    def column_sd(self, theta: FloatArray) -> FloatArray: ...

    def leader_blocks(
        self,
        theta: FloatArray,
        leader: int,
        block: Callable[[int], tuple[FloatArray, FloatArray]],
    ) -> tuple[FloatArray, FloatArray]: ...

    def degenerate(self, theta: FloatArray) -> npt.NDArray[np.bool_]: ...

    def rank_probabilities(self, rd: RankDistribution, order: Sequence[int]) -> FloatArray: ...

    def verdicts(
        self, decisions: Any, point: FloatArray, names: Sequence[str], *, sign: float, leader: int
    ) -> tuple[list[str], npt.NDArray[np.intp]]: ...


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

    def expect_rank_distribution(
        self, theta: FloatArray, *, higher_is_better: bool, confidence: float
    ) -> None:
        """Nothing: the full board counts the ranks after the max-t sets (their memory is never held at once)."""

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

    def column_sd(self, theta: FloatArray) -> FloatArray:
        return _column_sd(theta)

    def leader_blocks(
        self,
        theta: FloatArray,
        leader: int,
        block: Callable[[int], tuple[FloatArray, FloatArray]],
    ) -> tuple[FloatArray, FloatArray]:
        """The differences to the leader's two per-column statistics, ``block(c0)`` for every block of
        :data:`_SD_COLUMNS` columns (each a function of its own column and the leader's)."""
        k = theta.shape[1]
        se, p = np.empty(k), np.empty(k)

        def span(c0: int) -> None:  # blocks c0.. (written by this span alone; on the board's threads)
            for c in range(c0, min(k, c0 + _SD_SPAN), _SD_COLUMNS):
                se[c : c + _SD_COLUMNS], p[c : c + _SD_COLUMNS] = block(c)

        in_blocks(span, range(0, k, _SD_SPAN))
        return se, p

    def degenerate(self, theta: FloatArray) -> npt.NDArray[np.bool_]:
        """The columns whose replicates are all equal."""
        return np.asarray(np.ptp(theta, axis=0) == 0)

    def rank_probabilities(self, rd: RankDistribution, order: Sequence[int]) -> FloatArray:
        """The board's table of rank probabilities: the distribution's rows in the board's ``order``,
        permuted in place (issue 24: not held twice at K = 10,000)."""
        return _permute_in_place(rd.probabilities, order)

    def verdicts(
        self, decisions: Any, point: FloatArray, names: Sequence[str], *, sign: float, leader: int
    ) -> tuple[list[str], npt.NDArray[np.intp]]:
        """Per entry its verdict and the entry that decides it (:func:`_verdicts`)."""
        return _verdicts(decisions, point, names, sign=sign, leader=leader)


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
    exchangeable: Exchangeable | None = None,
    positives: int | None = None,
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
    exchangeable : stats.randomization.Exchangeable, optional
        The entries' outputs for a randomization max-t of the verdicts where the bootstrap cannot hold
        their level and the item statistics cannot give one: ROC AUC or average precision with few
        positives (:func:`stats.randomization.ranked_scores`).
    positives : int, optional
        For a rank metric on binary truth, the number of positives or of negatives, whichever is smaller.
        Below :data:`FEW_POSITIVES` the verdicts come from ``exchangeable`` or are declined.

    Verdicts at the edges: with item statistics and ``finalize`` on fewer than :data:`RANDOMIZATION_UNITS`
    items (or clusters), the verdicts come from the randomization max-t over them
    (:func:`stats.randomization.randomization_max_t`), and an entry is "worse than the best" only when its
    pair test against the leader is significant too (so the row, the pair test and the verdict agree);
    when no outcome could be decided (two entries on 3 clusters: the smallest exact p is 0.25), every
    verdict is "could be the best" and ``Board.verdict_warning`` says why. ``Board.verdict_test`` and the
    signature's ``verdict_test`` name the method used.
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
    iv = _build_board_iv(
        names=names,
        values=values,
        replicates=replicates,
        higher_is_better=higher_is_better,
        metric_name=metric_name,
        seed=seed,
        confidence=confidence,
        alpha=alpha,
        interval=interval,
        jackknife=jackknife,
        correction=correction,
        test=test,
        item_statistics=item_statistics,
        finalize=finalize,
        zero_one=zero_one,
        randomizations=randomizations,
        n_items=n_items,
        best_set_method=best_set_method,
        stepdown=stepdown,
        power=power,
        runs=runs,
        grouped=grouped,
        groups=groups,
        exchangeable=exchangeable,
        positives=positives,
        parts=_parts if _parts is not None else _FullParts(),
    )
    theta, test_set_sd = _run_replicates(iv)
    # the value intervals read the replicates alone: beside the next stages, on a thread of lower priority
    # that fills the max-t search's stretches of one thread (issue 24). The full board only (the
    # incremental board's parts keep state between their calls), and not BCa, whose constants take
    # B x K and N x K temporaries that would add to the search's peak memory instead of coming before
    # it. An exception of theirs is raised before one of the later stages', as when they ran first.
    alongside = type(iv.parts) is _FullParts and iv.boot_method != "bca"
    intervals = beside(lambda: _value_intervals(iv, theta)) if alongside else None
    try:
        value_intervals: _ValueIntervals | None = _value_intervals(iv, theta) if intervals is None else None
        leader_diffs = _leader_differences(iv, theta)
        counts = _leader_counts(iv)
        p, test_name = _pair_test(iv, leader_diffs, counts)
        adjusted = _adjusted_p_values(iv, p)
        ranks, rd, sim = _rank_sets(iv, theta)
    except BaseException:
        if intervals is not None:
            intervals.result()
        raise
    if intervals is not None:
        value_intervals = intervals.result()
    assert value_intervals is not None
    verdicts = _verdict_stage(iv, _decisions(iv, sim, p), adjusted)
    needed = _items_needed(iv, leader_diffs, counts)
    signature = _signature(iv, test_name, verdicts.decisions.test)
    # the rows' order: by rank (each row's ``rank``), then name
    rank_list = ranks.tolist()
    order = sorted(range(iv.k), key=lambda i: (rank_list[i], iv.names[i]))
    # the rank probabilities' rows permuted in place (issue 24: not held twice at K = 10,000), or, for a new
    # entry's board, written in the board's order (``BoardParts``), on a thread beside the rows (Python
    # objects, which hold the GIL: tenth pass, 0.1 s each at K = 10,000). The standard errors' and the
    # decisions' K x K tables stay in the input's order (the board permutes them on first read:
    # ``Board.better``): issue 24, tenth pass, their in-place permutes were 0.4-0.6 s of a new entry's 2 s
    # at K = 10,000, the longest stretch of its end, for tables the service never reads in the rows' order
    table = Beside(
        lambda: iv.parts.rank_probabilities(rd, order),
        threaded=board_threads() > 1,
        nicer=False,
        name="board-probabilities",
    )
    try:
        rows = _rows(
            iv,
            ranks=ranks,
            value_intervals=value_intervals,
            rd=rd,
            verdicts=verdicts,
            p=p,
            adjusted=adjusted,
            needed=needed,
            test_set_sd=test_set_sd,
            signature=signature,
        )
    finally:
        table.wait()  # no thread left writing the table when the rows fail
    probabilities = table.result()
    se_table = sim.standard_errors
    se_table.flags.writeable = False
    better = np.asarray(verdicts.decisions.better, dtype=bool)
    better.flags.writeable = False
    return Board(
        rows=tuple(rows[i] for i in order),
        leader=iv.names[iv.leader],
        metric=iv.metric_name,
        higher_is_better=iv.higher_is_better,
        test=test_name,
        correction=iv.correction,
        interval_method=iv.method,
        best_set_method=iv.best_set_method,
        confidence=iv.confidence,
        alpha=iv.alpha,
        power=iv.power,
        max_t_critical_value=float(verdicts.decisions.critical_value),
        rank_probabilities=probabilities,
        signature=signature,
        standard_errors_by_input=se_table,
        better_by_input=better,
        input_order=np.array(order, dtype=np.intp),
        verdict_test=verdicts.decisions.test,
        verdict_warning=verdicts.decisions.warning,
        unit_scale=verdicts.decisions.unit_scale,
        leader_difference_sd=leader_diffs.standard_error[order],
    )


# --------------------------------------------------------------------------------------------------
# build_board's stages: validation first (_build_board_iv), then one short function per stage


@dataclass(frozen=True)
class _BoardInputs:
    """:func:`build_board`'s arguments after validation (what every stage reads)."""

    names: tuple[str, ...]
    point: FloatArray
    theta: FloatArray  # (B, K), row-major, before the runs' two-level replicates
    metric_name: str
    higher_is_better: bool
    seed: int
    confidence: float
    alpha: float
    power: float
    correction: str
    best_set_method: str
    stepdown: bool
    jack: FloatArray | None
    method: str  # the value-interval method (the board's default or the requested one)
    has_counts: bool
    test: str  # the resolved pair test
    stats_list: list[FloatArray] | None
    finalize: Callable[[np.ndarray], np.ndarray] | None
    zero_one: bool
    n_items: int | None
    randomizations: int
    grouped: bool
    groups: npt.ArrayLike | None
    runs: Sequence[npt.ArrayLike | None] | None
    summaries: list[RunsSummary | None]
    with_runs: npt.NDArray[np.bool_]
    leader: int
    n_groups: int | None
    exchangeable: Exchangeable | None
    positives: int | None
    parts: BoardParts

    @property
    def k(self) -> int:
        return len(self.names)

    @property
    def sign(self) -> float:
        return 1.0 if self.higher_is_better else -1.0

    @property
    def boot_method(self) -> str | None:
        """The bootstrap rule of the value intervals (``None`` for a binomial interval)."""
        return self.method if self.method in ("bca", "percentile", "basic") else None


def _build_board_iv(
    *,
    names: Sequence[str],
    values: npt.ArrayLike,
    replicates: npt.ArrayLike,
    higher_is_better: bool,
    metric_name: str,
    seed: int,
    confidence: float,
    alpha: float,
    interval: str | None,
    jackknife: npt.ArrayLike | None,
    correction: str,
    test: str,
    item_statistics: Sequence[npt.ArrayLike] | None,
    finalize: Callable[[np.ndarray], np.ndarray] | None,
    zero_one: bool,
    randomizations: int,
    n_items: int | None,
    best_set_method: str,
    stepdown: bool,
    power: float,
    runs: Sequence[npt.ArrayLike | None] | None,
    grouped: bool,
    groups: npt.ArrayLike | None,
    exchangeable: Exchangeable | None,
    positives: int | None,
    parts: BoardParts,
) -> _BoardInputs:
    """Check every argument of :func:`build_board` and resolve its defaults (nothing is computed here)."""
    names = tuple(str(n) for n in names)
    k = len(names)
    if k < 1 or len(set(names)) != k:
        raise ValueError("`names` must hold at least one name, all unique.")
    point = check_vector(values, name="values", length=k, what="values, one per name")
    theta = _row_major(check_replicates(replicates, k=k))
    confidence = check_level(confidence, name="confidence")
    alpha = check_level(alpha, name="alpha")
    power = check_level(power, name="power")
    seed = check_count(seed, name="seed")
    check_choice(correction, CORRECTIONS, name="correction")
    check_choice(best_set_method, BEST_SET_METHODS, name="best_set_method")
    # row-major as the replicates (:func:`_row_major`): the BCa acceleration sums each column of the
    # jackknife, pairwise in a column-major array, row by row in a row-major one (issue 24: the board
    # depended on the jackknife's memory layout, and a kept board's intervals on the previous one's)
    jack = None if jackknife is None else _row_major(check_jackknife(jackknife, k=k))
    requested = check_choice("auto" if interval is None else interval, INTERVALS, name="interval")
    if requested == "bca" and jack is None:
        raise ValueError("`interval` 'bca' needs `jackknife` (leave-one-out values from the engine).")
    stats_list, n_items = _checked_item_statistics(
        item_statistics, n_items, finalize=finalize, point=point, k=k
    )
    if runs is not None and len(runs) != k:
        raise ValueError(f"`runs` must hold {k} entries (None where an entry has no runs).")
    n_groups = None if groups is None else len(np.unique(np.asarray(groups)))
    summaries: list[RunsSummary | None] = runs_summaries(runs) if runs is not None else [None] * k
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
    if method in PROPORTION_METHODS and not has_counts:
        raise ValueError(
            f"`interval` {method!r} needs a 0/1 metric (`zero_one=True`), independent items (not `grouped`) "
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
    return _BoardInputs(
        names=names,
        point=point,
        theta=theta,
        metric_name=metric_name,
        higher_is_better=higher_is_better,
        seed=seed,
        confidence=confidence,
        alpha=alpha,
        power=power,
        correction=correction,
        best_set_method=best_set_method,
        stepdown=stepdown,
        jack=jack,
        method=method,
        has_counts=has_counts,
        test=resolved,
        stats_list=stats_list,
        finalize=finalize,
        zero_one=zero_one,
        n_items=n_items,
        randomizations=randomizations,
        grouped=grouped,
        groups=groups,
        runs=runs,
        summaries=summaries,
        with_runs=np.array([sm is not None and sm.n >= 2 for sm in summaries], dtype=bool),
        # the leader: best value, ties broken by name, so the input order never matters
        leader=min(range(k), key=lambda i: (-sign * point[i], names[i])),
        n_groups=n_groups,
        exchangeable=_checked_exchangeable(exchangeable, k),
        positives=None if positives is None else check_count(positives, name="positives"),
        parts=parts,
    )


def _checked_exchangeable(exchangeable: Exchangeable | None, k: int) -> Exchangeable | None:
    if exchangeable is not None and exchangeable.n_entries != k:
        raise ValueError(f"`exchangeable` must hold the outputs of the board's {k} entries.")
    return exchangeable


def _row_major(theta: FloatArray) -> FloatArray:
    """``theta`` as a row-major array.

    numpy sums a column of a row-major array in sequence and of a column-major one pairwise, so the last
    bits of the means (and the standard errors) would depend on the input's memory layout. A row-major
    view (the first columns of a wider array) is used as it is, anything else copied.
    """
    if not (theta.strides[1] == 8 and theta.strides[0] >= 8 * theta.shape[1]):
        return np.ascontiguousarray(theta)
    return theta


def _checked_item_statistics(
    item_statistics: Sequence[npt.ArrayLike] | None,
    n_items: int | None,
    *,
    finalize: Callable[[np.ndarray], np.ndarray] | None,
    point: FloatArray,
    k: int,
) -> tuple[list[FloatArray] | None, int | None]:
    """The checked per-item statistics and the test-set size they imply (or ``n_items`` alone)."""
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
    return stats_list, n_items


def _run_replicates(iv: _BoardInputs) -> tuple[FloatArray, FloatArray]:
    """The replicates every later stage uses, and each entry's test-set standard deviation.

    Training randomness: an entry with several runs gets replicates that also resample its runs (two-level
    bootstrap), so its interval, the verdicts and the ranks include the run-to-run variance.
    """
    test_set_sd = iv.parts.column_sd(iv.theta)
    theta = iv.theta
    if iv.with_runs.any():
        theta = theta.copy()
        for i in np.flatnonzero(iv.with_runs).tolist():
            assert iv.runs is not None
            theta[:, i] = two_level_replicates(
                theta[:, i], np.asarray(iv.runs[i]), seed=iv.seed, key=iv.names[i]
            )
    return theta, test_set_sd


@dataclass(frozen=True)
class _ValueIntervals:
    """Per entry the interval of its value, the method that made it and its warning."""

    low: FloatArray
    high: FloatArray
    methods: list[str]
    warnings: list[str | None]


def _value_intervals(iv: _BoardInputs, theta: FloatArray) -> _ValueIntervals:
    """Intervals of the values: the metric's method; two-level with a t quantile for entries with runs; a
    binomial interval (the default: Clopper-Pearson) for a 0/1 metric's rows (and for a degenerate
    bootstrap distribution where the counts are known); every interval within the metric's range."""
    k, with_runs = iv.k, iv.with_runs
    degenerate = iv.parts.degenerate(theta)
    low, high = _resampled_value_bounds(iv, theta)
    binomial = iv.method if iv.method in PROPORTION_METHODS else PROPORTION_DEFAULT
    binomial_rows = ~with_runs & (np.full(k, iv.method in PROPORTION_METHODS) | (degenerate & iv.has_counts))
    if binomial_rows.any():
        low[binomial_rows], high[binomial_rows] = _binomial_value_bounds(iv, binomial_rows, binomial)
    # every interval within the metric's range (stats.intervals.RANGE_RULE)
    if iv.metric_name in METRICS:
        low, high = clip_to_range(low, high, METRICS[iv.metric_name].value_range)
    zero_width = zero_width_warnings(low, high)
    methods = [
        TWO_LEVEL_METHOD if with_runs[i] else binomial if binomial_rows[i] else iv.method for i in range(k)
    ]
    warnings: list[str | None] = [
        (DEGENERATE_WARNING if degenerate[i] and not binomial_rows[i] else None) or zero_width[i]
        for i in range(k)
    ]
    return _ValueIntervals(low=low, high=high, methods=methods, warnings=warnings)


def _resampled_value_bounds(iv: _BoardInputs, theta: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The bootstrap bounds of every value (NaN where a binomial interval is due), and for entries with
    runs the two-level bounds: test-set percentile and a t quantile (df = runs - 1) for the runs, from the
    replicates before the runs' two-level resampling."""
    low = np.full(iv.k, np.nan)
    high = np.full(iv.k, np.nan)
    if iv.boot_method is not None:
        lo, hi = iv.parts.value_bounds(
            theta, iv.point, method=iv.boot_method, confidence=iv.confidence, jackknife=iv.jack
        )
        low[:], high[:] = lo, hi
    for i in np.flatnonzero(iv.with_runs).tolist():
        assert iv.runs is not None
        low[i], high[i] = two_level_bounds(
            iv.theta[:, i], float(iv.point[i]), np.asarray(iv.runs[i]), confidence=iv.confidence
        )
    return low, high


def _binomial_value_bounds(
    iv: _BoardInputs, rows: npt.NDArray[np.bool_], method: str
) -> tuple[FloatArray, FloatArray]:
    """A binomial interval for the rows of a plain proportion, from their counts of right items."""
    assert iv.n_items is not None
    successes = iv.point[rows] * iv.n_items
    if not np.allclose(successes, np.round(successes), atol=1e-6):
        raise ValueError("`values` of a 0/1 metric must be counts of right items divided by `n_items`.")
    return proportion_bounds(np.round(successes), iv.n_items, method=method, confidence=iv.confidence)


@dataclass(frozen=True)
class _LeaderDifferences:
    """Every entry's paired difference to the observed leader: value, bootstrap sd and bootstrap p."""

    point: FloatArray
    standard_error: FloatArray
    bootstrap_p: FloatArray  # filled only when the pair test is the bootstrap
    rule: str


def _leader_differences(iv: _BoardInputs, theta: FloatArray) -> _LeaderDifferences:
    """The replicates of the differences to the leader, a block of columns at a time (every statistic is
    per column; at K = 5,000, B = 10,000 the whole matrix is 400 MB)."""
    leader = iv.leader
    diff_point = iv.point - iv.point[leader]
    diff_jack = None if iv.jack is None or iv.with_runs.any() else iv.jack - iv.jack[:, [leader]]
    rule = bca_or_percentile(iv.boot_method or "bca", has_jackknife=diff_jack is not None)

    def block(c0: int) -> tuple[FloatArray, FloatArray]:
        """The standard errors and bootstrap p-values of columns ``c0 : c0 + _SD_COLUMNS`` (NaN p-values
        when the pair test is not the bootstrap: they are not read)."""
        cols = slice(c0, c0 + _SD_COLUMNS)
        diff_theta = theta[:, cols] - theta[:, [leader]]
        se = diff_theta.std(axis=0, ddof=1)
        if iv.test != "bootstrap":
            return se, np.full(se.size, np.nan)
        return se, bootstrap_p_values(
            diff_theta,
            diff_point[cols],
            rule=rule,
            jackknife=None if diff_jack is None else diff_jack[:, cols],
        )

    diff_se, boot_p = iv.parts.leader_blocks(theta, leader, block)
    return _LeaderDifferences(point=diff_point, standard_error=diff_se, bootstrap_p=boot_p, rule=rule)


def _leader_counts(iv: _BoardInputs) -> Callable[[], npt.NDArray[np.int64]]:
    """McNemar's discordant counts against the leader (:func:`_leader_discordant`), computed on first call
    and kept: the pair test and the items needed both read them (an O(N K) pass over the item statistics)."""
    kept: list[npt.NDArray[np.int64]] = []

    def counts() -> npt.NDArray[np.int64]:
        if not kept:
            assert iv.stats_list is not None
            kept.append(_leader_discordant(iv.stats_list, iv.leader))
        return kept[0]

    return counts


def _pair_test(
    iv: _BoardInputs, diffs: _LeaderDifferences, leader_counts: Callable[[], npt.NDArray[np.int64]]
) -> tuple[FloatArray, str]:
    """The pair test of every entry against the observed leader (a column of its own, not the verdict):
    the p-values (1 for the leader) and the test's name."""
    leader = iv.leader
    if iv.test == "mcnemar":
        counts = leader_counts()
        p, test_name = mcnemar_exact(counts[0], counts[1]), "mcnemar"
    elif iv.test == "randomization":
        assert iv.stats_list is not None and iv.finalize is not None
        rand = paired_randomization(
            iv.stats_list,
            finalize=iv.finalize,
            reference=leader,
            randomizations=iv.randomizations,
            seed=iv.seed,
        )
        p, test_name = rand.p_values, "randomization"
    elif iv.test == "cluster-sign-flip":
        assert iv.stats_list is not None and iv.finalize is not None and iv.groups is not None
        flip = cluster_sign_flip(
            iv.stats_list,
            groups=iv.groups,
            finalize=iv.finalize,
            reference=leader,
            randomizations=iv.randomizations,
            seed=iv.seed,
        )
        p = flip.p_values
        test_name = "cluster-sign-flip-exact" if flip.exact else "cluster-sign-flip"
    else:
        p, test_name = diffs.bootstrap_p, f"bootstrap-{diffs.rule}"
    p = np.asarray(p, dtype=np.float64).copy()
    p[leader] = 1.0
    return p, test_name


def _others(iv: _BoardInputs) -> npt.NDArray[np.intp]:
    """Every entry but the leader."""
    return np.array([i for i in range(iv.k) if i != iv.leader], dtype=np.intp)


def _adjusted_p_values(iv: _BoardInputs, p: FloatArray) -> FloatArray:
    """The pair tests' p-values after the board's correction over the K - 1 comparisons with the leader."""
    others = _others(iv)
    adjusted = np.ones(iv.k)
    if others.size:
        adjusted[others] = adjust_p_values(p[others], correction=iv.correction)
    return adjusted


def _rank_sets(
    iv: _BoardInputs, theta: FloatArray
) -> tuple[npt.NDArray[np.int64], RankDistribution, SimultaneousRanks]:
    """Ranks of the point values, the rank distribution over the resamples and the max-t sets at level
    ``alpha`` (which decide the verdicts and the best set)."""
    ranks = min_ranks(iv.point, higher_is_better=iv.higher_is_better)
    # the max-t sets first: their deviations (B x K) are freed before the rank table (K x K) is counted, so
    # the two are never held at once (issue 24: K = N = B = 10,000, 0.8 GB each); a new entry's board
    # (stats.board_update) may count its rank column beside them
    iv.parts.expect_rank_distribution(theta, higher_is_better=iv.higher_is_better, confidence=iv.confidence)
    sim = iv.parts.simultaneous_ranks(
        theta,
        iv.point,
        higher_is_better=iv.higher_is_better,
        confidence=1.0 - iv.alpha,
        stepdown=iv.stepdown,
    )
    rd = iv.parts.rank_distribution(theta, higher_is_better=iv.higher_is_better, confidence=iv.confidence)
    return np.asarray(ranks), rd, sim


@dataclass(frozen=True)
class _Decisions:
    """Which entry is significantly better than which (the max-t decisions every verdict comes from)."""

    better: npt.NDArray[np.bool_]  # (K, K)
    standard_errors: (
        FloatArray  # (K, K) bootstrap standard errors (the difference column; which gap is largest)
    )
    critical_value: float
    best: npt.NDArray[np.bool_]
    lower: npt.NDArray[np.int64]
    upper: npt.NDArray[np.int64]
    test: str
    warning: str | None = None
    unit_scale: bool = False  # intervals difference +- critical_value (a randomization max-t's)

    def scale(self, rows: npt.NDArray[np.intp], columns: npt.NDArray[np.intp]) -> FloatArray:
        """The standard errors of the max-t intervals of these pairs (ones on a unit scale)."""
        if self.unit_scale:
            return np.ones(rows.size)
        return np.asarray(self.standard_errors[rows, columns], dtype=np.float64)


def _decisions(iv: _BoardInputs, sim: SimultaneousRanks, p: FloatArray) -> _Decisions:
    """The max-t decisions by the test that holds the level on this board's design (see :func:`build_board`,
    "Verdicts at the edges")."""
    if iv.k < 2:
        return _bootstrap_decisions(sim)  # nothing to compare
    units = iv.n_groups if iv.grouped else iv.n_items
    few_units = (
        units is not None and units < RANDOMIZATION_UNITS and (iv.groups is not None or not iv.grouped)
    )
    few_positives = iv.positives is not None and iv.positives < FEW_POSITIVES
    if iv.exchangeable is not None and (few_positives or few_units):
        return _randomized(iv, sim, p, iv.exchangeable)
    if few_units and iv.stats_list is not None and iv.finalize is not None:
        if iv.k > RANDOMIZATION_MAX_ENTRIES:
            return _bootstrap_decisions(
                sim,
                warning=f"verdicts from the bootstrap max-t on {units} {'clusters' if iv.grouped else 'items'} "
                f"with {iv.k} entries (the randomization max-t runs up to {RANDOMIZATION_MAX_ENTRIES}): "
                f"below {RANDOMIZATION_UNITS} the bootstrap may claim more often than alpha",
            )
        ex = pooled_statistics(iv.stats_list, iv.finalize, groups=iv.groups if iv.grouped else None)
        return _randomized(iv, sim, p, ex)
    if few_positives:
        return _declined(
            sim,
            f"cannot decide with fewer than {FEW_POSITIVES} positives (or negatives): the bootstrap does not "
            "hold the verdicts' level there and no scores were given for a randomization test",
        )
    if iv.grouped and iv.n_groups is not None and iv.n_groups < FEW_CLUSTERS:
        return _declined(
            sim,
            f"cannot decide with {iv.n_groups} clusters: the cluster bootstrap does not hold the verdicts' "
            "level there and no per-item statistics were given for a randomization test",
        )
    return _bootstrap_decisions(sim)


def _bootstrap_decisions(sim: SimultaneousRanks, warning: str | None = None) -> _Decisions:
    return _Decisions(
        better=np.asarray(sim.better, dtype=bool),
        standard_errors=sim.standard_errors,
        critical_value=float(sim.critical_value),
        best=np.asarray(sim.best, dtype=bool),
        lower=np.asarray(sim.lower, dtype=np.int64),
        upper=np.asarray(sim.upper, dtype=np.int64),
        test=BOOTSTRAP_MAX_T,
        warning=warning,
    )


def _declined(sim: SimultaneousRanks, warning: str) -> _Decisions:
    """No pair decided (every verdict "could be the best"); the intervals widened to 0 where they were not."""
    k = sim.standard_errors.shape[0]
    return _Decisions(
        better=np.zeros((k, k), dtype=bool),
        standard_errors=sim.standard_errors,
        critical_value=float(sim.critical_value),
        best=np.ones(k, dtype=bool),
        lower=np.ones(k, dtype=np.int64),
        upper=np.full(k, k, dtype=np.int64),
        test=DECLINED,
        warning=warning,
    )


def _randomized(iv: _BoardInputs, sim: SimultaneousRanks, p: FloatArray, ex: Exchangeable) -> _Decisions:
    """The randomization max-t's decisions, kept only where the row's pair test against the leader is
    significant too (the row, its pair test and its verdict never disagree; the level only gets safer)."""
    result = randomization_max_t(
        ex,
        higher_is_better=iv.higher_is_better,
        alpha=iv.alpha,
        randomizations=min(iv.randomizations, VERDICT_RANDOMIZATIONS),
        seed=iv.seed,
    )
    test = CLUSTER_RANDOMIZATION_MAX_T if ex.unit == "cluster" else ITEM_RANDOMIZATION_MAX_T
    smallest = result.smallest_p
    if iv.test == "cluster-sign-flip":  # the rows' pair test flips two entries' clusters: 2 of 2^G at least
        smallest = max(smallest, smallest_p_value(2, result.n_units))
    if smallest > iv.alpha:
        return _undecidable(sim, result, smallest)
    confirmed = (p <= iv.alpha) | (np.arange(iv.k) == iv.leader)
    better = result.better & confirmed[None, :]
    beaten = better.sum(axis=0)
    return _Decisions(
        better=better,
        standard_errors=sim.standard_errors,
        critical_value=result.critical_value,
        best=beaten == 0,
        lower=(1 + beaten).astype(np.int64),
        upper=(iv.k - better.sum(axis=1)).astype(np.int64),
        test=test,
        unit_scale=True,
    )


def _undecidable(sim: SimultaneousRanks, result: MaxTResult, smallest: float) -> _Decisions:
    k = result.observed.size
    return _Decisions(
        better=np.zeros((k, k), dtype=bool),
        standard_errors=sim.standard_errors,
        critical_value=result.critical_value,
        best=np.ones(k, dtype=bool),
        lower=np.ones(k, dtype=np.int64),
        upper=np.full(k, k, dtype=np.int64),
        test=DECLINED,
        warning=(
            f"cannot decide with {result.n_units} {result.unit}s: no outcome of an exact test reaches a "
            f"p-value below {smallest:.3g}, above alpha; every verdict is 'could be the best'"
        ),
        unit_scale=True,
    )


@dataclass(frozen=True)
class _VerdictColumns:
    """Per entry its verdict, the entry that decides it, that difference with its max-t interval, and the
    best sets."""

    verdicts: list[str]
    compared: npt.NDArray[np.intp]
    difference: FloatArray
    standard_error: FloatArray
    low: FloatArray
    high: FloatArray
    primary: npt.NDArray[np.bool_]
    holm_set: npt.NDArray[np.bool_]
    decisions: _Decisions


def _verdict_stage(iv: _BoardInputs, decisions: _Decisions, adjusted: FloatArray) -> _VerdictColumns:
    """The verdicts and sets from the max-t decisions; the Holm set from the adjusted pair tests."""
    k, point = iv.k, iv.point
    advantage = iv.sign * (point - point[iv.leader])
    holm_set = ~((adjusted <= iv.alpha) & (advantage < 0))
    primary = decisions.best if iv.best_set_method == "max-t" else holm_set
    verdicts, compared = iv.parts.verdicts(decisions, point, iv.names, sign=iv.sign, leader=iv.leader)
    pair_diff = point - point[compared]
    rows = np.arange(k)
    pair_se = decisions.standard_errors[rows, compared]
    decided = np.array([v != "could be the best" for v in verdicts], dtype=bool)
    low, high = pair_bounds(pair_diff, decisions.scale(rows, compared), decisions.critical_value, decided)
    return _VerdictColumns(
        verdicts=verdicts,
        compared=compared,
        difference=pair_diff,
        standard_error=pair_se,
        low=low,
        high=high,
        primary=np.asarray(primary, dtype=bool),
        holm_set=holm_set,
        decisions=decisions,
    )


def _items_needed(
    iv: _BoardInputs, diffs: _LeaderDifferences, leader_counts: Callable[[], npt.NDArray[np.int64]]
) -> list[int | None]:
    """Test items needed to resolve each entry's gap to the leader (McNemar's for 0/1 items, else from the
    bootstrap standard error); ``None`` when the test-set size is unknown and for the leader."""
    needed: list[int | None] = [None] * iv.k
    if iv.n_items is None:
        return needed
    others = _others(iv)
    if iv.zero_one and iv.stats_list is not None and not iv.grouped:
        counts = leader_counts()
        for i in others.tolist():
            only_i, only_l = int(counts[0, i]), int(counts[1, i])
            needed[i] = items_needed_mcnemar(
                gap=(only_i - only_l) / iv.n_items,
                discordant=(only_i + only_l) / iv.n_items,
                alpha=iv.alpha,
                power=iv.power,
            )
        return needed
    computed = items_needed(
        gap=diffs.point[others],
        standard_error=diffs.standard_error[others],
        n_items=iv.n_items,
        alpha=iv.alpha,
        power=iv.power,
    )
    for i, value in zip(others.tolist(), computed, strict=True):
        needed[i] = value
    return needed


def _signature(iv: _BoardInputs, test_name: str, verdict_test: str) -> Signature:
    """The board's signature: the value intervals' settings and every choice behind the other columns."""
    return Signature(
        metric=iv.metric_name,
        method=iv.method,
        resamples=iv.theta.shape[0],
        seed=iv.seed,
        confidence=iv.confidence,
    ).with_extra(
        verdict=f"{VERDICT_METHOD} comparisons with the best, level {iv.alpha:g}",
        difference_interval=f"{VERDICT_METHOD} simultaneous, {1 - iv.alpha:g}",
        verdict_test=verdict_test,
        test=test_name,
        correction=iv.correction,
        alpha=iv.alpha,
        best_set=iv.best_set_method,
        stepdown=iv.stepdown,
        rank_ties="min",
        grouped=iv.grouped,
        power=iv.power,
        **(
            {"runs": "two-level bootstrap (items: common weights; runs: resampled per entry)"}
            if iv.with_runs.any()
            else {}
        ),
        **({"randomizations": iv.randomizations} if iv.test == "randomization" else {}),
    )


def _rows(
    iv: _BoardInputs,
    *,
    ranks: npt.NDArray[np.int64],
    value_intervals: _ValueIntervals,
    rd: RankDistribution,
    verdicts: _VerdictColumns,
    p: FloatArray,
    adjusted: FloatArray,
    needed: list[int | None],
    test_set_sd: FloatArray,
    signature: Signature,
) -> list[BoardRow]:
    """One :class:`BoardRow` per entry, in the input order.

    The columns are read as Python lists (the same values: K = 10,000, indexing numpy arrays element by
    element took 0.3 s of CPU)."""
    decided = verdicts.decisions
    rank_l, point_l = ranks.tolist(), iv.point.tolist()
    vlow, vhigh = value_intervals.low.tolist(), value_intervals.high.tolist()
    rlow, rhigh = rd.low.tolist(), rd.high.tolist()
    slow, shigh = decided.lower.tolist(), decided.upper.tolist()
    compared = verdicts.compared.tolist()
    diff, dlow, dhigh = verdicts.difference.tolist(), verdicts.low.tolist(), verdicts.high.tolist()
    dse = verdicts.standard_error.tolist()
    p_l, adjusted_l = p.tolist(), adjusted.tolist()
    primary, best, holm = verdicts.primary.tolist(), decided.best.tolist(), verdicts.holm_set.tolist()
    sd_l, with_runs = test_set_sd.tolist(), iv.with_runs.tolist()
    rows = []
    for i in range(iv.k):
        summary = iv.summaries[i]
        rows.append(
            BoardRow(
                name=iv.names[i],
                rank=int(rank_l[i]),
                value=float(point_l[i]),
                interval=Interval(
                    low=float(vlow[i]),
                    high=float(vhigh[i]),
                    confidence=iv.confidence,
                    method=value_intervals.methods[i],
                    signature=signature,
                ),
                interval_warning=value_intervals.warnings[i],
                rank_interval=(int(rlow[i]), int(rhigh[i])),
                simultaneous_rank_interval=(int(slow[i]), int(shigh[i])),
                verdict=verdicts.verdicts[i],
                compared_with=None if compared[i] == i else iv.names[compared[i]],
                difference=float(diff[i]),
                difference_interval=Interval(
                    low=float(dlow[i]),
                    high=float(dhigh[i]),
                    confidence=1.0 - iv.alpha,
                    method=VERDICT_METHOD,
                    signature=signature,
                ),
                difference_standard_error=float(dse[i]),
                p_value=float(p_l[i]),
                adjusted_p_value=float(adjusted_l[i]),
                in_best_set=bool(primary[i]),
                in_best_set_max_t=bool(best[i]),
                in_best_set_holm=bool(holm[i]),
                items_needed=needed[i],
                n_runs=None if summary is None else summary.n,
                runs=summary,
                test_set_sd=float(sd_l[i]),
                seed_sd=float(summary.sd) if with_runs[i] and summary is not None else None,
                is_leader=i == iv.leader,
            )
        )
    return rows


def _correct(item_statistics: Sequence[npt.ArrayLike]) -> npt.NDArray[np.bool_]:
    """(N, K) correctness of 0/1 item statistics (column 0 above one half)."""
    arrays = [np.asarray(s) for s in item_statistics]
    return np.column_stack([a.reshape(a.shape[0], -1)[:, 0] for a in arrays]) > 0.5


def _leader_discordant(item_statistics: Sequence[npt.ArrayLike], leader: int) -> npt.NDArray[np.int64]:
    """Shape (2, K): row 0 the items each entry has right and the leader wrong, row 1 the converse."""
    correct = _correct(item_statistics)
    only_entry = (correct & ~correct[:, [leader]]).sum(axis=0)
    only_leader = (~correct & correct[:, [leader]]).sum(axis=0)
    return np.stack([only_entry, only_leader]).astype(np.int64)


def discordant_counts(item_statistics: Sequence[npt.ArrayLike]) -> npt.NDArray[np.int64]:
    """McNemar's discordant counts of every pair of entries of a 0/1 metric.

    Parameters
    ----------
    item_statistics : sequence of array_like, each (N,) or (N, m)
        Per entry its item statistics; column 0 is 1/0 correctness (``Metric.zero_one``).

    Returns
    -------
    numpy.ndarray of int64, shape (K, K)
        ``out[i, j]``: items entry ``i`` has right and entry ``j`` wrong (so ``out.T`` holds the converse
        and :func:`stats.compare.mcnemar_exact(out, out.T)` every pair's exact test). The board's pair
        test and items needed read the same counts.

    Examples
    --------
    >>> discordant_counts([[1, 1, 0, 0], [1, 0, 1, 1]]).tolist()
    [[0, 1], [2, 0]]
    """
    correct = _correct(item_statistics)
    return np.asarray((correct[:, :, None] & ~correct[:, None, :]).sum(axis=0), dtype=np.int64)


def _in_row_order(table: npt.NDArray[Any], order: npt.NDArray[np.intp]) -> npt.NDArray[Any]:
    """A board's K x K table of the input's order in the order of its rows (read-only): the table itself
    when the rows are in the input's order, else a gathered copy (:func:`stats.compare_ranks._gathered`,
    on the board's threads)."""
    out = table.view() if np.array_equal(order, np.arange(order.size)) else _gathered(table, order)
    out.flags.writeable = False
    return out


def _permute_in_place(a: npt.NDArray[Any], order: Sequence[int]) -> npt.NDArray[Any]:
    """``a[order]`` in ``a`` itself: the board's K x K rank probabilities are not held twice (issue 24:
    K = 10,000, 0.8 GB). Rows follow the cycles of the permutation (one row copied aside per cycle); the
    same values as the copy."""
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
    return a


def _column_sd(x: FloatArray) -> FloatArray:
    """``x.std(axis=0, ddof=1)`` to the bit, in column blocks.

    numpy sums each column of a row-major array in row order whatever the columns beside it, so a block
    of columns gets the bits of the whole array; the temporaries (``x - mean`` and its square) stay a
    few MB instead of two copies of ``x`` (K = 5,000, B = 10,000: 400 MB each, and 0.7 s).
    """
    out = np.empty(x.shape[1])

    def span(c0: int) -> None:  # columns c0.. (written by this span alone; on the board's threads)
        for c in range(c0, min(x.shape[1], c0 + _SD_SPAN), _SD_COLUMNS):
            out[c : c + _SD_COLUMNS] = x[:, c : c + _SD_COLUMNS].std(axis=0, ddof=1)

    in_blocks(span, range(0, x.shape[1], _SD_SPAN))
    return out


def _name_ranks(names: Sequence[str]) -> npt.NDArray[np.int64]:
    """Each name's position in sorted order (the verdicts' tie-break: input order never)."""
    name_rank = np.empty(len(names), dtype=np.int64)
    name_rank[np.argsort(np.array(names, dtype=object), kind="stable")] = np.arange(len(names))
    return name_rank


def _gaps(advantage: FloatArray, s: FloatArray) -> FloatArray:
    """Studentized gaps ``advantage / se`` (``+-inf`` where ``se = 0``, NaN for ``0 / 0``), rounded at 9
    decimals, written into ``advantage``; every element a function of its own pair.

    One division: a standard error is ``+0`` or positive (a square root, its zeros set to ``+0``), and
    ``a / +0`` is ``sign(a) inf`` (NaN for ``a = +-0``), the values the three-way ``where`` gave
    (issue 24: K = 10,000, its four K x K temporaries took 0.3 s of a new entry's 7 s)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if np.isnan(s).any():  # not from the engine (its errors are finite): the three-way rule
            t = np.where(s > 0, advantage / np.where(s > 0, s, 1.0), np.sign(advantage) * np.inf)
        else:
            t = np.divide(advantage, s, out=advantage)
    # compared at 9 decimals: a permuted input may change the last bits of a covariance (BLAS order)
    return np.asarray(np.round(t, 9, out=t), dtype=np.float64)


def _pick(
    candidates: npt.NDArray[np.bool_], key: npt.NDArray[Any], name_rank: npt.NDArray[np.int64]
) -> npt.NDArray[np.intp]:
    """Per row, the candidate column with the smallest key, ties broken by name (input order never)."""
    keyed = np.where(candidates, key, np.inf)
    best = keyed.min(axis=1, keepdims=True)
    tied = candidates & (keyed == best)
    return np.asarray(np.where(tied, name_rank[None, :], name_rank.size).argmin(axis=1), dtype=np.intp)


def _verdict_columns(
    better: npt.NDArray[np.bool_],
    se: FloatArray,
    point: FloatArray,
    name_rank: npt.NDArray[np.int64],
    *,
    sign: float,
    cols: npt.NDArray[np.intp],
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.intp]]:
    """For the entries ``cols``: whether some entry is significantly better (``better[j, i]``, j != i),
    and the one with the largest studentized gap ``t[j, i]`` of j over i (-1 where none)."""
    beaten_by = better[:, cols].T
    beaten_by[np.arange(cols.size), cols] = False
    w = np.asarray(beaten_by.any(axis=1), dtype=bool)
    compared = np.full(cols.size, -1, dtype=np.intp)
    if w.any():
        rows = cols[w]
        advantage = sign * (point[None, :] - point[rows, None])  # t[j, i] in row i, column j
        compared[w] = _pick(beaten_by[w], -_gaps(advantage, se[:, rows].T), name_rank)
    return w, compared


def _verdict_blocks(
    sim: Any, point: FloatArray, name_rank: npt.NDArray[np.int64], *, sign: float, leader: int
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.intp]]:
    """Per entry i whether some entry j is significantly better than it (``worse``) and, then, the one
    with the largest studentized gap (``compared``; the leader where none), in blocks of entries (K =
    5,000: each K x K temporary of the gaps is 200 MB) on the board's threads."""
    k = point.size
    se = sim.standard_errors
    better = np.asarray(sim.better, dtype=bool)
    worse = np.zeros(k, dtype=bool)
    compared = np.full(k, leader, dtype=np.intp)

    def block(r0: int) -> None:
        """Entries r0.. (their elements of ``worse`` and ``compared`` are written by this block alone; the
        blocks run on the board's threads, ``stats._threads.in_blocks``)."""
        cols = np.arange(r0, min(k, r0 + _VERDICT_ROWS))
        w, c = _verdict_columns(better, se, point, name_rank, sign=sign, cols=cols)
        worse[cols] = w
        compared[cols[w]] = c[w]

    in_blocks(block, range(0, k, _VERDICT_ROWS))
    return worse, compared


def _verdicts(
    sim: Any,
    point: FloatArray,
    names: Sequence[str],
    *,
    sign: float,
    leader: int,
    blocks: tuple[npt.NDArray[np.bool_], npt.NDArray[np.intp]] | None = None,
) -> tuple[list[str], npt.NDArray[np.intp]]:
    """Per entry its verdict and the entry that decides it (see :class:`BoardRow`), from the max-t decisions.

    Computed in blocks of entries (:func:`_verdict_blocks`, or its result given as ``blocks``, which is
    not modified); every element is a function of its own pair, so the blocks give the bits of the whole
    matrix.
    """
    k = point.size
    se = sim.standard_errors
    better = np.asarray(sim.better, dtype=bool)
    name_rank = _name_ranks(names)
    if blocks is None:
        worse, compared = _verdict_blocks(sim, point, name_rank, sign=sign, leader=leader)
    else:
        worse, compared = blocks[0], blocks[1].copy()
    verdicts = ["worse than the best" if bool(w) else "could be the best" for w in worse]
    if k == 1:
        compared[0] = 0
    else:
        not_self = np.ones(k, dtype=bool)
        not_self[leader] = False
        open_ = not_self & ~better[leader]
        pool = open_ if open_.any() else not_self
        t_leader = _gaps(sign * (point[leader] - point), se[leader])
        compared[leader] = _pick(pool[None, :], t_leader[None, :], name_rank)[0]
        verdicts[leader] = "could be the best" if open_.any() else "best"
    return verdicts, compared
