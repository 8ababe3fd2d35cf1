"""Comparing entries across the tasks (data sets) of one challenge: Friedman, Nemenyi, Wilcoxon-Holm.

The input is a score table with one row per task and one column per entry. Following Demsar (2006),
entries are ranked within each task (rank 1 = best, ties get the average rank), the Friedman statistic
tests whether all entries are equivalent, and a post-hoc procedure says which pairs differ:

- Nemenyi: two entries differ when their average ranks differ by at least the critical difference
  ``CD = q_alpha sqrt(k (k + 1) / (6 N))``, ``q_alpha = studentized_range.ppf(1 - alpha, k, inf) / sqrt(2)``;
- Wilcoxon signed-rank tests of every pair with Holm's correction (Benavoli, Corani & Mangili 2016
  argue for it: the Nemenyi decision about two entries depends on the other entries in the table).

Groups of entries that the evidence cannot separate ("cliques") are what a critical-difference diagram
draws as bars (:mod:`stats.cddiagram`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from stats.checks import check_choice, check_level
from stats.compare import holm
from stats.signature import Signature

FloatArray = npt.NDArray[np.float64]
PostHoc = Literal["nemenyi", "wilcoxon-holm"]
POSTHOCS: tuple[str, ...] = ("nemenyi", "wilcoxon-holm")

__all__ = [
    "POSTHOCS",
    "CrossTaskResult",
    "FriedmanResult",
    "average_ranks",
    "compare_across_tasks",
    "friedman",
    "nemenyi_critical_difference",
]


def _scores(scores: npt.ArrayLike) -> FloatArray:
    arr = np.asarray(scores, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] < 2 or arr.shape[1] < 2:
        raise ValueError("`scores` must have shape (N tasks, k entries) with N >= 2 and k >= 2.")
    if not np.all(np.isfinite(arr)):
        raise ValueError("`scores` must be finite (no missing score for any task and entry).")
    return arr


def average_ranks(scores: npt.ArrayLike, *, higher_is_better: bool = True) -> FloatArray:
    """Rank entries within each task (1 = best, ties averaged) and average over tasks.

    Returns
    -------
    numpy.ndarray, shape (k,)
        Average rank of each entry.
    """
    return _task_ranks(_scores(scores), higher_is_better=higher_is_better).mean(axis=0)


def _task_ranks(arr: FloatArray, *, higher_is_better: bool) -> FloatArray:
    keyed = -arr if higher_is_better else arr
    return np.asarray(sps.rankdata(keyed, method="average", axis=1), dtype=np.float64)


#: Below this many tasks the chi-square and F approximations are unreliable: the result warns and the
#: exact (or permutation) p-value is the one to read.
FEW_TASKS = 10
#: The exact null distribution is enumerated while (distinct sorted rank-sum vectors) x (orderings of
#: a task) stays at most this; otherwise a permutation test with :data:`FRIEDMAN_PERMUTATIONS` draws is used.
EXACT_MAX_STATES = 300_000
FRIEDMAN_PERMUTATIONS = 100_000


@dataclass(frozen=True)
class FriedmanResult:
    """The Friedman test over tasks: statistic without and with the tie correction, Iman-Davenport F and
    an exact small-sample p-value.

    Attributes
    ----------
    average_ranks : numpy.ndarray, shape (k,)
    chi2 : float
        ``12 N / (k (k + 1)) [sum_j R_j^2 - k (k + 1)^2 / 4]`` (no correction for ties, as Demsar 2006).
    chi2_p : float
        Upper tail of chi-square with ``k - 1`` degrees of freedom at ``chi2`` (asymptotic).
    chi2_tie_corrected : float
        ``chi2 / (1 - sum (t^3 - t) / (N k (k^2 - 1)))`` over the groups of ``t`` tied entries of every
        task (``scipy.stats.friedmanchisquare``); equal to ``chi2`` without ties.
    chi2_tie_corrected_p : float
        Its asymptotic chi-square p-value.
    f : float
        Iman-Davenport ``F_F = (N - 1) chi2 / (N (k - 1) - chi2)`` (``inf`` when every task ranks the
        entries identically).
    f_p : float or None
        Upper tail of F with ``(k - 1, (k - 1)(N - 1))`` degrees of freedom; ``None`` when ``F`` is
        infinite (the F approximation is then undefined: read ``exact_p``).
    exact_p : float
        ``P(sum_j R_j^2 >= observed)`` when, within every task, the observed ranks (ties included) are
        assigned to the entries uniformly at random (the permutation null of the Friedman test). The
        tie-corrected statistic and Iman-Davenport's F are increasing functions of the same sum for a
        given table, so this one p-value serves all three. Never 0.
    exact_method : str
        ``"enumeration"`` (the whole null distribution, exact) or ``"permutation"`` (Monte Carlo,
        ``(1 + count) / (1 + draws)`` with :data:`FRIEDMAN_PERMUTATIONS` draws).
    df1, df2 : int
    n_tasks, n_entries : int
    warnings : tuple[str, ...]
        For example fewer than :data:`FEW_TASKS` tasks.
    """

    average_ranks: FloatArray
    chi2: float
    chi2_p: float
    f: float
    f_p: float | None
    df1: int
    df2: int
    n_tasks: int
    n_entries: int
    chi2_tie_corrected: float = 0.0
    chi2_tie_corrected_p: float = 1.0
    exact_p: float = 1.0
    exact_method: str = "enumeration"
    warnings: tuple[str, ...] = ()


def _doubled_ranks(task_ranks: FloatArray) -> npt.NDArray[np.int64]:
    """Average ranks are multiples of 1/2: twice them are integers (exact sums, hashable states)."""
    return np.asarray(np.rint(2 * task_ranks), dtype=np.int64)


def _friedman_exact_p(task_ranks: FloatArray, *, seed: int = 0) -> tuple[float, str]:
    """Exact (or permutation) p-value of ``sum_j R_j^2`` under within-task random assignment of ranks.

    The rank sums are built task by task; since every task's ranks are permuted uniformly, the
    distribution of the *sorted* rank-sum vector after a task depends only on the sorted vector before
    it, so states are kept sorted (k! fewer of them).
    """
    from itertools import permutations

    doubled = _doubled_ranks(task_ranks)
    n, k = doubled.shape
    observed = int((doubled.sum(axis=0) ** 2).sum())
    states: dict[tuple[int, ...], int] = {tuple([0] * k): 1}
    feasible = k <= 8
    if feasible:
        for row in doubled:
            perms = np.array(sorted(set(permutations(row.tolist()))), dtype=np.int64)
            new: dict[tuple[int, ...], int] = {}
            for state, count in states.items():
                sums = np.sort(np.asarray(state, dtype=np.int64)[None, :] + perms, axis=1)
                for t in map(tuple, sums.tolist()):
                    new[t] = new.get(t, 0) + count
            states = new
            if len(states) * len(perms) > EXACT_MAX_STATES:
                feasible = False
                break
    if feasible:
        total = sum(states.values())
        at_least = sum(c for s, c in states.items() if sum(x * x for x in s) >= observed)
        return at_least / total, "enumeration"
    rng = np.random.default_rng([seed, 0x46524D4E])
    count = 0
    draws = FRIEDMAN_PERMUTATIONS
    step = max(1, 2_000_000 // max(1, n * k))
    done = 0
    while done < draws:
        r = min(step, draws - done)
        shuffled = rng.permuted(np.broadcast_to(doubled, (r, n, k)), axis=2)
        stat = (shuffled.sum(axis=1) ** 2).sum(axis=1)
        count += int((stat >= observed).sum())
        done += r
    return (1 + count) / (1 + draws), "permutation"


def friedman(scores: npt.ArrayLike, *, higher_is_better: bool = True) -> FriedmanResult:
    """Friedman's test of "all entries are equivalent" and the Iman-Davenport F (Demsar 2006, 3.2.2).

    The statistic ``chi2`` is computed from the average ranks without the correction for ties (as
    Demsar reports it); ``chi2_tie_corrected`` divides by the tie factor as ``scipy.stats.
    friedmanchisquare`` does. Both asymptotic p-values are poor with few tasks (3 tasks, 3 entries, one
    ranking on every task: chi-square p = 0.0498 where the exact value is 6/216 = 0.0278), so the result
    also holds ``exact_p``, from the permutation null enumerated exactly when feasible, and a warning
    below :data:`FEW_TASKS` tasks.

    Parameters
    ----------
    scores : array_like, shape (N, k)
        One row per task, one column per entry.
    higher_is_better : bool, default True

    Returns
    -------
    FriedmanResult

    References
    ----------
    .. [1] Friedman, M. (1937). The use of ranks to avoid the assumption of normality implicit in the
       analysis of variance. *JASA* 32(200), 675-701 (exact distribution for small N and k).
    .. [2] Iman, R. L. & Davenport, J. M. (1980). Approximations of the critical region of the Friedman
       statistic. *Communications in Statistics A* 9(6), 571-595.
    .. [3] Demsar, J. (2006). Statistical comparisons of classifiers over multiple data sets. *JMLR* 7,
       1-30.
    .. [4] Hollander, M., Wolfe, D. A. & Chicken, E. (2014). *Nonparametric Statistical Methods*, 3rd
       ed., Section 7.1 (tie correction; exact null distribution by enumeration).

    Examples
    --------
    >>> import numpy as np
    >>> table = np.array([[0.81, 0.79, 0.70], [0.90, 0.88, 0.85], [0.75, 0.76, 0.60],
    ...                   [0.66, 0.61, 0.58], [0.92, 0.90, 0.91]])  # 5 tasks x 3 entries
    >>> fr = friedman(table)
    >>> fr.average_ranks.tolist(), round(fr.chi2, 2), round(fr.exact_p, 4)
    ([1.2, 2.0, 2.8], 6.4, 0.0394)
    """
    arr = _scores(scores)
    n, k = arr.shape
    task_ranks = _task_ranks(arr, higher_is_better=higher_is_better)
    ranks = task_ranks.mean(axis=0)
    chi2 = float(12 * n / (k * (k + 1)) * (np.sum(ranks**2) - k * (k + 1) ** 2 / 4))
    chi2 = max(chi2, 0.0)
    ties = 0.0
    for row in task_ranks:
        _, t = np.unique(row, return_counts=True)
        ties += float(np.sum(t.astype(np.float64) ** 3 - t))
    factor = 1.0 - ties / (n * k * (k * k - 1))
    corrected = chi2 / factor if factor > 1e-12 else 0.0
    df1, df2 = k - 1, (k - 1) * (n - 1)
    denominator = n * (k - 1) - chi2
    f = float((n - 1) * chi2 / denominator) if denominator > 1e-12 else float("inf")
    exact_p, exact_method = _friedman_exact_p(task_ranks)
    warnings: list[str] = []
    if n < FEW_TASKS:
        warnings.append(
            f"only {n} tasks: the chi-square and F p-values are approximations that need about "
            f"{FEW_TASKS} or more tasks; read the exact p-value ({exact_method})"
        )
    if not np.isfinite(f):
        warnings.append(
            "every task ranks the entries identically: Iman-Davenport's F is infinite and its p-value "
            "undefined; the exact p-value is the smallest this table allows"
        )
    return FriedmanResult(
        average_ranks=ranks,
        chi2=chi2,
        chi2_p=float(sps.chi2.sf(chi2, df1)),
        f=f,
        f_p=float(sps.f.sf(f, df1, df2)) if np.isfinite(f) else None,
        df1=df1,
        df2=df2,
        n_tasks=n,
        n_entries=k,
        chi2_tie_corrected=float(corrected),
        chi2_tie_corrected_p=float(sps.chi2.sf(corrected, df1)),
        exact_p=float(exact_p),
        exact_method=exact_method,
        warnings=tuple(warnings),
    )


def nemenyi_critical_difference(n_entries: int, n_tasks: int, *, alpha: float = 0.05) -> tuple[float, float]:
    """Nemenyi's critical value and critical difference for ``k`` entries on ``N`` tasks.

    ``q_alpha = studentized_range.ppf(1 - alpha, k, inf) / sqrt(2)`` and
    ``CD = q_alpha sqrt(k (k + 1) / (6 N))`` (Demsar 2006, Section 3.2.2 and Table 5(a)).

    Returns
    -------
    (q_alpha, cd) : tuple of float

    Examples
    --------
    >>> q, cd = nemenyi_critical_difference(4, 14)
    >>> round(q, 3), round(cd, 2)
    (2.569, 1.25)
    """
    if n_entries < 2 or n_tasks < 1:
        raise ValueError("`n_entries` must be >= 2 and `n_tasks` >= 1.")
    alpha = check_level(alpha, name="alpha")
    q = float(sps.studentized_range.ppf(1 - alpha, n_entries, np.inf) / np.sqrt(2))
    return q, q * float(np.sqrt(n_entries * (n_entries + 1) / (6 * n_tasks)))


@dataclass(frozen=True)
class CrossTaskResult:
    """Everything a critical-difference diagram and its table need.

    Attributes
    ----------
    names : tuple[str, ...]
        Entry names, in the input order.
    average_ranks : numpy.ndarray, shape (k,)
    friedman : FriedmanResult
    posthoc : {"nemenyi", "wilcoxon-holm"}
    alpha : float
    critical_difference : float
        Nemenyi's CD at ``alpha`` (reported for both post-hocs; it decides only for Nemenyi).
    q_alpha : float
    p_values : numpy.ndarray, shape (k, k)
        Pairwise p-values of the post-hoc: Nemenyi's from the studentized range, or Holm-adjusted
        Wilcoxon p-values; 1 on the diagonal.
    statistics : numpy.ndarray, shape (k, k)
        Nemenyi: ``|R_i - R_j|``; Wilcoxon: ``T = min(R+, R-)`` with zero differences split evenly
        between ``R+`` and ``R-`` (Demsar 2006, Section 3.1.3).
    significant : numpy.ndarray of bool, shape (k, k)
    cliques : tuple[tuple[str, ...], ...]
        Maximal groups of entries, contiguous in the order of average ranks, with no significant pair
        inside; best group first. Singletons are not listed.
    signature : Signature
    """

    names: tuple[str, ...]
    average_ranks: FloatArray
    friedman: FriedmanResult
    posthoc: str
    alpha: float
    critical_difference: float
    q_alpha: float
    p_values: FloatArray
    statistics: FloatArray
    significant: npt.NDArray[np.bool_]
    cliques: tuple[tuple[str, ...], ...]
    higher_is_better: bool
    signature: Signature = field(repr=False)

    def order(self) -> list[int]:
        """Indices of the entries from the best average rank to the worst (ties by name)."""
        return sorted(range(len(self.names)), key=lambda i: (float(self.average_ranks[i]), self.names[i]))

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (entries listed from best to worst)."""
        order = self.order()
        fr = self.friedman
        return {
            "entries": [{"name": self.names[i], "average_rank": float(self.average_ranks[i])} for i in order],
            "friedman": {
                "chi2": fr.chi2,
                "chi2_p": fr.chi2_p,
                "iman_davenport_f": fr.f if np.isfinite(fr.f) else None,
                "iman_davenport_p": fr.f_p,
                "chi2_tie_corrected": fr.chi2_tie_corrected,
                "chi2_tie_corrected_p": fr.chi2_tie_corrected_p,
                "exact_p": fr.exact_p,
                "exact_method": fr.exact_method,
                "warnings": list(fr.warnings),
                "df1": fr.df1,
                "df2": fr.df2,
                "n_tasks": fr.n_tasks,
                "n_entries": fr.n_entries,
            },
            "posthoc": self.posthoc,
            "alpha": self.alpha,
            "critical_difference": self.critical_difference,
            "q_alpha": self.q_alpha,
            "pairs": [
                {
                    "a": self.names[i],
                    "b": self.names[j],
                    "statistic": float(self.statistics[i, j]),
                    "p_value": float(self.p_values[i, j]),
                    "significant": bool(self.significant[i, j]),
                }
                for x, i in enumerate(order)
                for j in order[x + 1 :]
            ],
            "cliques": [list(c) for c in self.cliques],
            "higher_is_better": self.higher_is_better,
            "signature": self.signature.as_dict(),
        }


def _cliques(
    order: list[int], significant: npt.NDArray[np.bool_], names: Sequence[str]
) -> list[tuple[str, ...]]:
    spans: list[tuple[int, int]] = []
    for start in range(len(order)):
        stop = start
        while stop + 1 < len(order) and not any(
            significant[order[i], order[stop + 1]] for i in range(start, stop + 1)
        ):
            stop += 1
        if stop > start and not any(a <= start and stop <= b for a, b in spans):
            spans.append((start, stop))
    return [tuple(names[order[i]] for i in range(a, b + 1)) for a, b in spans]


def compare_across_tasks(
    scores: npt.ArrayLike,
    *,
    names: Sequence[str],
    higher_is_better: bool = True,
    alpha: float = 0.05,
    posthoc: str = "nemenyi",
    metric: str = "",
) -> CrossTaskResult:
    """Friedman test, post-hoc comparisons and cliques for a (tasks x entries) score table.

    Parameters
    ----------
    scores : array_like, shape (N, k)
        One row per task, one column per entry.
    names : sequence of str
        Entry names (k, unique).
    higher_is_better : bool, default True
    alpha : float, default 0.05
    posthoc : {"nemenyi", "wilcoxon-holm"}, default "nemenyi"
    metric : str, optional
        Metric name for the signature.

    Returns
    -------
    CrossTaskResult

    References
    ----------
    .. [1] Demsar, J. (2006). Statistical comparisons of classifiers over multiple data sets. *JMLR* 7,
       1-30.
    .. [2] Nemenyi, P. (1963). *Distribution-free multiple comparisons*. PhD thesis, Princeton.
    .. [3] Wilcoxon, F. (1945). Individual comparisons by ranking methods. *Biometrics Bulletin* 1(6),
       80-83.
    .. [4] Benavoli, A., Corani, G. & Mangili, F. (2016). Should we really use post-hoc tests based on
       mean-ranks? *JMLR* 17(5), 1-10.

    Examples
    --------
    >>> import numpy as np
    >>> table = np.array([[0.81, 0.79, 0.70], [0.90, 0.88, 0.85], [0.75, 0.76, 0.60],
    ...                   [0.66, 0.61, 0.58], [0.92, 0.90, 0.91]])  # 5 tasks x 3 entries
    >>> result = compare_across_tasks(table, names=["a", "b", "c"])
    >>> result.cliques  # entries the post-hoc test cannot tell apart
    (('a', 'b'), ('b', 'c'))
    """
    arr = _scores(scores)
    n, k = arr.shape
    names = tuple(str(x) for x in names)
    if len(names) != k or len(set(names)) != k:
        raise ValueError(f"`names` must hold {k} unique names, one per column of `scores`.")
    alpha = check_level(alpha, name="alpha")
    check_choice(posthoc, POSTHOCS, name="posthoc")
    fr = friedman(arr, higher_is_better=higher_is_better)
    ranks = fr.average_ranks
    q, cd = nemenyi_critical_difference(k, n, alpha=alpha)
    p_values = np.ones((k, k))
    statistics = np.zeros((k, k))
    if posthoc == "nemenyi":
        gaps = np.abs(ranks[:, None] - ranks[None, :])
        statistics = gaps
        z = gaps / np.sqrt(k * (k + 1) / (6 * n))
        iu = np.triu_indices(k, 1)
        p_values[iu] = sps.studentized_range.sf(z[iu] * np.sqrt(2), k, np.inf)
        p_values = np.minimum(p_values, p_values.T)
        significant = gaps >= cd - 1e-12
    else:
        iu = np.triu_indices(k, 1)
        raw = []
        for i, j in zip(*iu, strict=True):
            # rounded so that equal differences of decimal scores tie exactly
            d = np.round(arr[:, i] - arr[:, j], 12)
            if np.all(d == 0):
                raw.append(1.0)
                continue
            res = sps.wilcoxon(d, zero_method="zsplit")
            statistics[i, j] = statistics[j, i] = float(res.statistic)
            raw.append(float(res.pvalue))
        adjusted = holm(raw)
        p_values[iu] = adjusted
        p_values = np.minimum(p_values, p_values.T)
        significant = p_values <= alpha
    np.fill_diagonal(significant, False)
    order = sorted(range(k), key=lambda i: (float(ranks[i]), names[i]))
    signature = Signature(
        metric=metric, method=f"friedman+{posthoc}", resamples=0, seed=None, confidence=None
    ).with_extra(
        alpha=alpha, ties="average", tie_correction="none+corrected", friedman_p=f"exact-{fr.exact_method}"
    )
    return CrossTaskResult(
        names=names,
        average_ranks=ranks,
        friedman=fr,
        posthoc=posthoc,
        alpha=alpha,
        critical_difference=cd,
        q_alpha=q,
        p_values=p_values,
        statistics=statistics,
        significant=significant,
        cliques=tuple(_cliques(order, significant, names)),
        higher_is_better=higher_is_better,
        signature=signature,
    )
