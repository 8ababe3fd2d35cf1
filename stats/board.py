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
from typing import Any

import numpy as np
import numpy.typing as npt

from stats.checks import FEW_CLUSTERS
from stats.compare import (
    CORRECTIONS,
    _count,
    _level,
    adjust_p_values,
    bootstrap_p_values,
    cluster_sign_flip,
    items_needed,
    items_needed_mcnemar,
    mcnemar_exact,
    paired_randomization,
)
from stats.compare_ranks import min_ranks, rank_distribution, simultaneous_ranks
from stats.compare_runs import RunsSummary, runs_summaries
from stats.intervals import Interval, bootstrap_bounds
from stats.signature import Signature

FloatArray = npt.NDArray[np.float64]

TESTS: tuple[str, ...] = ("auto", "mcnemar", "randomization", "bootstrap", "cluster-sign-flip")
BEST_SET_METHODS: tuple[str, ...] = ("max-t", "holm")
INTERVALS: tuple[str, ...] = ("bca", "percentile", "basic")

__all__ = ["BEST_SET_METHODS", "INTERVALS", "TESTS", "Board", "BoardRow", "build_board"]


@dataclass(frozen=True)
class BoardRow:
    """One entry of a task board.

    Attributes
    ----------
    name : str
    rank : int
        Rank of the point value, 1 = best, ties share the smallest rank (1, 2, 2, 4).
    value : float
        Point value of the metric.
    interval : Interval
        Bootstrap interval of the value (the board's method and confidence).
    rank_interval : tuple[int, int]
        Marginal rank interval: percentiles of the entry's rank over the bootstrap resamples.
    simultaneous_rank_interval : tuple[int, int]
        Max-t simultaneous rank confidence set (joint over all entries).
    difference : float
        ``value - leader value`` in the metric's units (0 for the leader).
    difference_interval : Interval
        Paired bootstrap interval of the difference.
    difference_standard_error : float
        Bootstrap standard error of the paired difference.
    p_value : float
        Two-sided p-value of "this entry equals the leader" (1 for the leader itself).
    adjusted_p_value : float
        After the board's correction over the K - 1 comparisons with the leader (1 for the leader).
    in_best_set : bool
        Membership of the primary best set (the board's ``best_set_method``).
    in_best_set_max_t : bool
        No entry is significantly better under the max-t simultaneous confidence set.
    in_best_set_holm : bool
        Not significantly worse than the observed leader after the correction.
    items_needed : int or None
        Test items needed to detect the observed gap to the leader at the board's power and level;
        ``None`` for the leader, a zero gap, or when the test-set size is unknown.
    n_runs : int or None
        Number of runs (training seeds) given for this entry.
    runs : RunsSummary or None
        Mean, sd, min and max over the runs.
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

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary."""
        return {
            "name": self.name,
            "rank": self.rank,
            "value": self.value,
            "interval": [_json_float(self.interval.low), _json_float(self.interval.high)],
            "rank_interval": list(self.rank_interval),
            "simultaneous_rank_interval": list(self.simultaneous_rank_interval),
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
            "runs": None
            if self.runs is None
            else {
                "n": self.runs.n,
                "mean": self.runs.mean,
                "sd": _json_float(self.runs.sd),
                "min": self.runs.minimum,
                "max": self.runs.maximum,
            },
            "is_leader": self.is_leader,
        }


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
    rank_probabilities : numpy.ndarray, shape (K, K)
        Row ``i`` (in the order of ``rows``): share of resamples in which that entry held rank
        ``1..K``; for plots.
    signature : Signature
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

    def row(self, name: str) -> BoardRow:
        """The row of entry ``name``."""
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(name)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (what a snapshot stores and the API returns)."""
        return {
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


def _resolve_test(
    test: str,
    *,
    zero_one: bool,
    has_items: bool,
    has_finalize: bool,
    grouped: bool,
    few_clusters: bool | None = None,
) -> str:
    if test not in TESTS:
        raise ValueError(f"`test` must be one of {TESTS}, got {test!r}.")
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
    """
    names = tuple(str(n) for n in names)
    k = len(names)
    if k < 1 or len(set(names)) != k:
        raise ValueError("`names` must hold at least one name, all unique.")
    point = np.asarray(values, dtype=np.float64)
    if point.shape != (k,) or not np.all(np.isfinite(point)):
        raise ValueError(f"`values` must be a finite array of shape ({k},), one value per name.")
    theta = np.asarray(replicates, dtype=np.float64)
    if theta.ndim != 2 or theta.shape[1] != k or theta.shape[0] < 2:
        raise ValueError(f"`replicates` must have shape (B, {k}) with B >= 2, one column per name.")
    if not np.all(np.isfinite(theta)):
        raise ValueError("`replicates` must be finite.")
    b = theta.shape[0]
    confidence = _level(confidence, name="confidence")
    alpha = _level(alpha, name="alpha")
    power = _level(power, name="power")
    seed = _count(seed, name="seed")
    if correction not in CORRECTIONS:
        raise ValueError(f"`correction` must be one of {CORRECTIONS}, got {correction!r}.")
    if best_set_method not in BEST_SET_METHODS:
        raise ValueError(f"`best_set_method` must be one of {BEST_SET_METHODS}, got {best_set_method!r}.")
    jack: FloatArray | None = None
    if jackknife is not None:
        jack = np.asarray(jackknife, dtype=np.float64)
        if jack.ndim != 2 or jack.shape[1] != k or jack.shape[0] < 2:
            raise ValueError(f"`jackknife` must have shape (n_units, {k}) with n_units >= 2.")
    method = interval if interval is not None else ("bca" if jack is not None else "percentile")
    if method not in INTERVALS:
        raise ValueError(f"`interval` must be one of {INTERVALS}, got {method!r}.")
    if method == "bca" and jack is None:
        raise ValueError("`interval` 'bca' needs `jackknife` (leave-one-out values from the engine).")
    stats_list: list[FloatArray] | None = None
    if item_statistics is not None:
        if len(item_statistics) != k:
            raise ValueError(f"`item_statistics` must hold {k} arrays, one per name.")
        stats_list = [np.asarray(s, dtype=np.float64) for s in item_statistics]
        stats_list = [s[:, None] if s.ndim == 1 else s for s in stats_list]
        if any(s.ndim != 2 or s.shape != stats_list[0].shape for s in stats_list):
            raise ValueError("`item_statistics` must be arrays of one common shape (N, m).")
        if n_items is not None and n_items != stats_list[0].shape[0]:
            raise ValueError("`n_items` disagrees with the number of rows of `item_statistics`.")
        n_items = stats_list[0].shape[0]
        if finalize is not None:
            check = np.asarray(finalize(np.stack([s.sum(axis=0) for s in stats_list])), dtype=np.float64)
            if not np.allclose(check, point, rtol=1e-9, atol=1e-12):
                raise ValueError("`values` disagree with `finalize` of the pooled `item_statistics`.")
    if n_items is not None:
        n_items = _count(n_items, name="n_items", minimum=1)
    if runs is not None and len(runs) != k:
        raise ValueError(f"`runs` must hold {k} entries (None where an entry has no runs).")
    n_groups = None if groups is None else len(np.unique(np.asarray(groups)))
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

    # intervals of values and of paired differences (the engine's interval code)
    v_low, v_high = bootstrap_bounds(theta, point=point, method=method, confidence=confidence, jackknife=jack)
    diff_theta = theta - theta[:, [leader]]
    diff_point = point - point[leader]
    diff_jack = None if jack is None else jack - jack[:, [leader]]
    d_low, d_high = bootstrap_bounds(
        diff_theta, point=diff_point, method=method, confidence=confidence, jackknife=diff_jack
    )
    diff_se = diff_theta.std(axis=0, ddof=1)

    # p-values against the leader
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
        p = np.asarray(bootstrap_p_values(diff_theta, diff_point, rule=method, jackknife=diff_jack))
        test_name = f"bootstrap-{method}"
    p = np.asarray(p, dtype=np.float64).copy()
    p[leader] = 1.0
    others = np.array([i for i in range(k) if i != leader], dtype=np.intp)
    adjusted = np.ones(k)
    if others.size:
        adjusted[others] = adjust_p_values(p[others], correction=correction)

    # ranks
    ranks = min_ranks(point, higher_is_better=higher_is_better)
    rd = rank_distribution(theta, higher_is_better=higher_is_better, confidence=confidence)
    sim = simultaneous_ranks(
        theta, point, higher_is_better=higher_is_better, confidence=confidence, stepdown=stepdown
    )
    advantage = sign * diff_point
    holm_set = ~((adjusted <= alpha) & (advantage < 0))
    primary = sim.best if best_set_method == "max-t" else holm_set

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

    summaries: list[RunsSummary | None] = runs_summaries(runs) if runs is not None else [None] * k

    signature = Signature(
        metric=metric_name, method=method, resamples=b, seed=seed, confidence=confidence
    ).with_extra(
        test=test_name,
        correction=correction,
        alpha=alpha,
        best_set=best_set_method,
        stepdown=stepdown,
        rank_ties="min",
        grouped=grouped,
        power=power,
        **({"randomizations": randomizations} if resolved == "randomization" else {}),
    )

    def interval_of(lo: float, hi: float) -> Interval:
        return Interval(
            low=float(lo), high=float(hi), confidence=confidence, method=method, signature=signature
        )

    rows = []
    for i in range(k):
        rows.append(
            BoardRow(
                name=names[i],
                rank=int(ranks[i]),
                value=float(point[i]),
                interval=interval_of(v_low[i], v_high[i]),
                rank_interval=(int(rd.low[i]), int(rd.high[i])),
                simultaneous_rank_interval=(int(sim.lower[i]), int(sim.upper[i])),
                difference=float(diff_point[i]),
                difference_interval=interval_of(d_low[i], d_high[i]),
                difference_standard_error=float(diff_se[i]),
                p_value=float(p[i]),
                adjusted_p_value=float(adjusted[i]),
                in_best_set=bool(primary[i]),
                in_best_set_max_t=bool(sim.best[i]),
                in_best_set_holm=bool(holm_set[i]),
                items_needed=needed[i],
                n_runs=None if summaries[i] is None else summaries[i].n,  # type: ignore[union-attr]
                runs=summaries[i],
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
        rank_probabilities=rd.probabilities[order],
        signature=signature,
    )
