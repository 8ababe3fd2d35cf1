"""Randomization max-t: simultaneous comparisons of K entries that hold their level with few units.

The bootstrap max-t (:func:`stats.compare_ranks.simultaneous_ranks`) needs many units (items, or clusters
of items) to approximate the sampling distribution: with 3 clusters it has 10 distinct resamples and
claimed "worse than the best" in 22% of A/A boards at level 0.05 (issue 21). A randomization test needs
no approximation: under the null hypothesis that the entries are exchangeable within every unit (their
outputs on a unit could have come from any of them), permuting the entries' outputs within each unit
gives an equally likely data set, so the permutation distribution of any statistic is its exact null
distribution.

:func:`randomization_max_t` compares every pair of entries at once: the statistic of a pair is the
absolute difference of the two values, the family's statistic their maximum, and Westfall & Young's
step-down gives adjusted p-values that control the family-wise error at level ``alpha``. All ``(K!)^U``
permutations are enumerated when there are few (the test is then exact), else ``randomizations`` are
drawn with ``p = (1 + count) / (1 + R)`` (also exact in level, Phipson & Smyth 2010).

A permutation that applies the same relabelling on every unit leaves the family's statistic unchanged,
so no outcome reaches a p-value below ``(K!)^(1 - U)`` (:func:`smallest_p_value`): 0.25 for two entries
on 3 units. When that is above ``alpha`` nothing can be decided, and the result says so
(``decidable``) rather than anything else.

The test is generic: it sees the data only through an :class:`Exchangeable`, a callable that maps an
assignment of outputs to the K values. :func:`pooled_statistics` builds one from per-item (or per-cluster,
per-segment) sufficient statistics and the metric's ``finalize`` (accuracy, macro-F1, RMSE, corpus BLEU
from its n-gram counts...); :func:`ranked_scores` from binary truth and scores (ROC AUC, average
precision).

References
----------
.. [1] Westfall, P. H. & Young, S. S. (1993). *Resampling-Based Multiple Testing*. Wiley. (Algorithm 2.8,
   step-down max-T adjusted p-values.)
.. [2] Good, P. (2005). *Permutation, Parametric and Bootstrap Tests of Hypotheses*, 3rd ed. Springer.
.. [3] Phipson, B. & Smyth, G. K. (2010). Permutation p-values should never be zero. *Statistical
   Applications in Genetics and Molecular Biology* 9(1), Article 39.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from stats.checks import check_count, check_level, check_statistics

FloatArray = npt.NDArray[np.float64]
IntpArray = npt.NDArray[np.intp]
BoolArray = npt.NDArray[np.bool_]

#: Enumerate every permutation (an exact test) up to this many; beyond, draw.
EXACT_LIMIT = 1 << 14
#: Draws per chunk of random permutations at most (fewer when U x K is large, see ``_CHUNK_ELEMENTS``;
#: each chunk has its own stream, so the draws depend on the design only, never on the machine).
CHUNK = 256
#: Mixed into the seed so the permutations never share a stream with resample weights or swap draws.
_STREAM = 0x5045_524D  # "PERM"
#: Elements of one chunk of assignments (R x U x K; 1M: 8 MB, and as much for a gathered column).
_CHUNK_ELEMENTS = 1 << 20
#: Up to this many items of the smaller class, ROC AUC counts pairs item by item instead of ranking.
_FEW_LOOP = 64
#: Relative tolerance of ``>=`` between a permuted and the observed statistic (exact ties in any rounding).
_TIE = 1e-9

__all__ = [
    "EXACT_LIMIT",
    "Exchangeable",
    "MaxTResult",
    "pooled_statistics",
    "randomization_max_t",
    "ranked_scores",
    "smallest_p_value",
]


@dataclass(frozen=True)
class Exchangeable:
    """K entries' outputs on U units, exchangeable between the entries within each unit under the null.

    Attributes
    ----------
    n_units : int
    n_entries : int
    values : callable
        ``values(assign)`` with ``assign`` of shape (R, U, K), ``assign[r, u, i]`` the entry whose output on
        unit ``u`` entry ``i`` receives in draw ``r``, returns the (R, K) values of the entries. The identity
        assignment gives the observed values.
    unit : str
        What a unit is, for messages ("item", "cluster", "segment").
    """

    n_units: int
    n_entries: int
    values: Callable[[IntpArray], FloatArray]
    unit: str = "item"


def pooled_statistics(
    statistics: Sequence[npt.ArrayLike],
    finalize: Callable[[np.ndarray], np.ndarray],
    *,
    groups: npt.ArrayLike | None = None,
) -> Exchangeable:
    """The :class:`Exchangeable` of a decomposable metric: per-item statistics pooled per unit, finalized.

    Parameters
    ----------
    statistics : sequence of array_like, each (N, m)
        Per-item sufficient statistics of every entry (:attr:`stats.metrics.Metric.item_statistics`).
    finalize : callable
        The metric's vectorised ``finalize``: pooled sums (..., m) -> values (...).
    groups : array_like, shape (N,), optional
        Each item's cluster: the units are then the clusters (items of one cluster move together).

    Examples
    --------
    >>> import numpy as np
    >>> ex = pooled_statistics([np.array([[1.0], [0.0]]), np.array([[0.0], [0.0]])], lambda s: s[..., 0] / 2)
    >>> ex.values(np.array([[[0, 1], [0, 1]], [[1, 0], [0, 1]]])).tolist()
    [[0.5, 0.0], [0.0, 0.5]]
    """
    arrays = check_statistics(statistics, one_dimensional=True, finite=True)
    stacked = np.stack(arrays)  # (K, N, m)
    unit = "item"
    if groups is not None:
        g = np.asarray(groups)
        if g.shape != (stacked.shape[1],):
            raise ValueError("`groups` must hold one group per item.")
        _, cluster = np.unique(g, return_inverse=True)
        pooled = np.zeros((int(cluster.max()) + 1, stacked.shape[0], stacked.shape[2]))
        np.add.at(pooled, cluster, stacked.transpose(1, 0, 2))
        stacked, unit = pooled.transpose(1, 0, 2), "cluster"
    n_units, k, m = stacked.shape[1], stacked.shape[0], stacked.shape[2]
    # column c of unit u and entry i at position u * K + i of row c: one flat `take` per column (numpy's
    # fancy index over a trailing axis of m columns was four times slower)
    by_column = np.ascontiguousarray(stacked.transpose(2, 1, 0).reshape(m, n_units * k))
    offsets = (np.arange(n_units, dtype=np.intp) * k)[None, :, None]

    def values(assign: IntpArray) -> FloatArray:
        # (R, K, U): the sum over the units runs along contiguous memory (five times faster than (R, U, K))
        index = np.ascontiguousarray((assign + offsets).transpose(0, 2, 1))
        sums = np.empty((assign.shape[0], k, m))
        for c in range(m):
            sums[:, :, c] = np.take(by_column[c], index).sum(axis=2)
        return np.asarray(finalize(sums), dtype=np.float64)

    return Exchangeable(n_units=n_units, n_entries=k, values=values, unit=unit)


def ranked_scores(truth: npt.ArrayLike, scores: Sequence[npt.ArrayLike], *, metric: str) -> Exchangeable:
    """The :class:`Exchangeable` of ROC AUC or average precision over items.

    The entries' scores themselves are permuted within each item (the null: the entries' scores of an item
    are exchangeable), so they must be on one scale, as the probabilities of the positive class that
    ``stats.metrics`` asks for are. Ranking each entry's scores first would make the scale free but not
    the test exact (a permuted column of ranks is no longer a ranking). The permuted values are ROC AUC by
    the Mann-Whitney statistic (ties count one half) and average precision as the mean precision at each
    positive's threshold, tied scores sharing it (scikit-learn's definitions).

    Parameters
    ----------
    truth : array_like of bool, shape (N,)
        True where the item is positive.
    scores : sequence of array_like, each (N,)
    metric : {"roc_auc", "average_precision"}
    """
    y = np.asarray(truth, dtype=bool)
    if y.ndim != 1 or not 0 < int(y.sum()) < y.size:
        raise ValueError("`truth` must be one-dimensional with at least one positive and one negative.")
    if metric not in ("roc_auc", "average_precision"):
        raise ValueError("`metric` must be 'roc_auc' or 'average_precision'.")
    from scipy.stats import rankdata

    s = np.column_stack([np.asarray(x, dtype=np.float64) for x in scores])  # (N, K)
    if s.shape[0] != y.size or not np.all(np.isfinite(s)):
        raise ValueError("every entry of `scores` must hold one finite score per item of `truth`.")
    units = np.arange(y.size)
    n_pos = int(y.sum())
    n_neg = y.size - n_pos
    few = min(n_pos, n_neg) <= _FEW_LOOP

    def auc(assign: IntpArray) -> FloatArray:
        permuted = s[units[None, :, None], assign]  # (R, N, K)
        pos, neg = permuted[:, y, :], permuted[:, ~y, :]
        if few:  # per item of the smaller class, the other class's items below it (ties one half)
            small, large, sign = (pos, neg, 1.0) if n_pos <= n_neg else (neg, pos, -1.0)
            wins = np.zeros((permuted.shape[0], permuted.shape[2]))
            for i in range(small.shape[1]):
                item = small[:, i : i + 1, :]
                wins += ((large < item).sum(axis=1) + 0.5 * (large == item).sum(axis=1)) * sign
            below = wins if sign > 0 else n_pos * n_neg + wins
            return np.asarray(below / (n_pos * n_neg))
        r = rankdata(permuted, axis=1)
        return np.asarray((r[:, y, :].sum(axis=1) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))

    def average_precision(assign: IntpArray) -> FloatArray:
        permuted = s[units[None, :, None], assign]  # (R, N, K), higher = more positive
        pos = permuted[:, y, :]  # (R, P, K)
        precision = np.zeros((permuted.shape[0], permuted.shape[2]))
        for i in range(n_pos):  # precision at the threshold of each positive (tied items share it)
            item = pos[:, i : i + 1, :]
            precision += (pos >= item).sum(axis=1) / (permuted >= item).sum(axis=1)
        return np.asarray(precision / n_pos)

    values = auc if metric == "roc_auc" else average_precision
    return Exchangeable(n_units=y.size, n_entries=s.shape[1], values=values, unit="item")


def smallest_p_value(n_entries: int, n_units: int) -> float:
    """The smallest p-value any outcome reaches: ``(K!)^(1 - U)`` (see the module's docstring)."""
    return float(math.factorial(n_entries) ** (1 - n_units))


@dataclass(frozen=True)
class MaxTResult:
    """Result of :func:`randomization_max_t`.

    Attributes
    ----------
    observed : numpy.ndarray, shape (K,)
        The entries' values (the identity assignment).
    better : numpy.ndarray of bool, shape (K, K)
        ``better[i, j]``: entry ``i`` is significantly better than entry ``j`` (family-wise level ``alpha``).
    adjusted_p : numpy.ndarray, shape (K, K)
        Step-down max-t adjusted p-value of every pair (symmetric, 1 on the diagonal).
    marginal_p : numpy.ndarray, shape (K, K)
        The pair's own p-value from the same permutations (unadjusted; ``<= adjusted_p``).
    critical_value : float
        The max-t critical value of the last step, in the metric's units: a pair still undecided differs
        by no more than it, and ``difference +- critical_value`` are the simultaneous intervals of the
        last step (no pair is decidable: the largest permuted difference).
    draws : int
        Permutations evaluated (all of them when ``exact``).
    exact : bool
    smallest_p : float
        :func:`smallest_p_value` of the design.
    decidable : bool
        ``smallest_p <= alpha``: whether any outcome could have decided a pair.
    n_units : int
    unit : str
    """

    observed: FloatArray
    better: BoolArray
    adjusted_p: FloatArray
    marginal_p: FloatArray
    critical_value: float
    draws: int
    exact: bool
    smallest_p: float
    decidable: bool
    n_units: int
    unit: str


def randomization_max_t(
    exchangeable: Exchangeable,
    *,
    higher_is_better: bool,
    alpha: float = 0.05,
    randomizations: int = 10_000,
    seed: int = 0,
    exact_limit: int = EXACT_LIMIT,
) -> MaxTResult:
    """Every pair of entries compared at family-wise level ``alpha`` by within-unit permutation.

    Parameters
    ----------
    exchangeable : Exchangeable
        The entries' outputs (:func:`pooled_statistics`, :func:`ranked_scores`, or any construction).
    higher_is_better : bool
    alpha : float, default 0.05
    randomizations : int, default 10000
        Random permutations drawn when there are more than ``exact_limit`` in all.
    seed : int, default 0
    exact_limit : int
        Enumerate all ``(K!)^U`` permutations up to this many.

    Returns
    -------
    MaxTResult

    Examples
    --------
    Two entries on three clusters: no outcome can be decided at 0.05 (the smallest p is 2 / 8).

    >>> import numpy as np
    >>> ex = pooled_statistics([np.ones((3, 1)), np.zeros((3, 1))], lambda s: s[..., 0] / 3)
    >>> r = randomization_max_t(ex, higher_is_better=True)
    >>> r.exact, r.draws, r.smallest_p, r.decidable, float(r.adjusted_p[0, 1]), bool(r.better.any())
    (True, 8, 0.25, False, 0.25, False)
    """
    alpha = check_level(alpha, name="alpha")
    randomizations = check_count(randomizations, name="randomizations", minimum=1)
    seed = check_count(seed, name="seed")
    k, u = exchangeable.n_entries, exchangeable.n_units
    observed = np.asarray(exchangeable.values(np.tile(np.arange(k), (1, u, 1)))[0], dtype=np.float64)
    first, second = np.triu_indices(k, 1)
    t_obs = np.abs(observed[first] - observed[second])
    order = np.argsort(-t_obs, kind="stable")  # pairs by observed statistic, largest first
    threshold = t_obs[order] * (1 - _TIE) - 1e-12
    log_total = u * math.lgamma(k + 1)
    exact = log_total <= math.log(exact_limit)
    total = round(math.exp(log_total)) if exact else randomizations

    def draws() -> Iterator[IntpArray]:
        return _all_permutations(k, u) if exact else _random_permutations(k, u, randomizations, seed)

    def pair_stats(v: FloatArray) -> FloatArray:
        return np.abs(v[:, first] - v[:, second])[:, order]  # (R, P) in the sorted order

    joint = np.zeros(order.size, dtype=np.int64)
    single = np.zeros(order.size, dtype=np.int64)
    permuted_values = []  # (R, K) in all: kept for the critical value, not recomputed
    for assign in draws():
        v = np.asarray(exchangeable.values(assign), dtype=np.float64)
        permuted_values.append(v)
        d = pair_stats(v)
        single += np.count_nonzero(d >= threshold, axis=0)
        joint += np.count_nonzero(_successive_maxima(d) >= threshold, axis=0)
    adjusted_sorted = np.maximum.accumulate(_p(joint, total, exact))
    marginal_sorted = _p(single, total, exact)
    rejected = adjusted_sorted <= alpha
    # the critical value of the last step: the max over the pairs still undecided (a suffix of the order);
    # when every pair is decided, that of the step that decided the last pair (as the bootstrap max-t's
    # stats.compare_ranks keeps it), never the max over no pair (0: zero-width intervals)
    last = int(np.count_nonzero(rejected))
    start = max(0, min(last, order.size - 1))
    critical = _critical_value(permuted_values, pair_stats, start, total=total, exact=exact, alpha=alpha)
    sign = 1.0 if higher_is_better else -1.0
    adjusted = np.ones((k, k))
    marginal = np.ones((k, k))
    better = np.zeros((k, k), dtype=bool)
    pairs_first, pairs_second = first[order], second[order]
    adjusted[pairs_first, pairs_second] = adjusted[pairs_second, pairs_first] = adjusted_sorted
    marginal[pairs_first, pairs_second] = marginal[pairs_second, pairs_first] = marginal_sorted
    ahead = sign * (observed[pairs_first] - observed[pairs_second]) > 0
    better[pairs_first[rejected & ahead], pairs_second[rejected & ahead]] = True
    better[pairs_second[rejected & ~ahead], pairs_first[rejected & ~ahead]] = True
    smallest = smallest_p_value(k, u) if k > 1 else 1.0
    return MaxTResult(
        observed=observed,
        better=better,
        adjusted_p=adjusted,
        marginal_p=marginal,
        critical_value=critical,
        draws=int(total),
        exact=exact,
        smallest_p=smallest,
        decidable=smallest <= alpha,
        n_units=u,
        unit=exchangeable.unit,
    )


def _p(counts: npt.NDArray[np.int64], total: int, exact: bool) -> FloatArray:
    """Permutation p-values: ``count / total`` over all permutations, ``(1 + count) / (1 + R)`` over draws."""
    return np.minimum(counts / total if exact else (1.0 + counts) / (1.0 + total), 1.0)


def _successive_maxima(d: FloatArray) -> FloatArray:
    """``out[:, s] = d[:, s:].max(axis=1)``: the max over the pairs from position ``s`` on (step-down)."""
    return np.maximum.accumulate(d[:, ::-1], axis=1)[:, ::-1]


def _critical_value(
    permuted_values: list[FloatArray],
    pair_stats: Callable[[FloatArray], FloatArray],
    last: int,
    *,
    total: int,
    exact: bool,
    alpha: float,
) -> float:
    """The smallest value an undecided pair's statistic must exceed to be decided at the last step.

    Over the same permutations' values: the max over the undecided pairs (positions ``last`` on) per
    permutation; the pair is decided when at most ``m`` of them reach it (``m = floor(alpha total)`` exact,
    ``floor(alpha (1 + R)) - 1`` drawn), so the value is the ``(m + 1)``-th largest. With nothing
    decidable (``m < 0``), the largest."""
    maxima = np.concatenate([pair_stats(v)[:, last:].max(axis=1, initial=0.0) for v in permuted_values])
    m = math.floor(alpha * total) if exact else math.floor(alpha * (1 + total)) - 1
    ordered = np.sort(maxima)[::-1]
    return float(ordered[min(max(m, 0), ordered.size - 1)])


def _chunk_rows(k: int, u: int) -> int:
    """Assignments per chunk: :data:`CHUNK`, fewer for a large design (memory stays near 8 MB a chunk)."""
    return max(1, min(CHUNK, _CHUNK_ELEMENTS // max(1, k * u)))


def _all_permutations(k: int, u: int) -> Iterator[IntpArray]:
    """Every assignment of ``k`` entries' outputs on ``u`` units, in chunks of :data:`CHUNK` rows."""
    perms = np.array(list(itertools.permutations(range(k))), dtype=np.intp)  # (K!, K)
    codes = itertools.product(range(perms.shape[0]), repeat=u)
    while True:
        block = list(itertools.islice(codes, _chunk_rows(k, u)))
        if not block:
            return
        yield perms[np.array(block, dtype=np.intp)]  # (r, U, K)


def _random_permutations(k: int, u: int, randomizations: int, seed: int) -> Iterator[IntpArray]:
    """``randomizations`` random assignments (one permutation per unit), chunk ``c`` from its own stream."""
    chunk = _chunk_rows(k, u)
    base = np.broadcast_to(np.arange(k, dtype=np.intp), (chunk, u, k))
    for c, start in enumerate(range(0, randomizations, chunk)):
        rows = min(chunk, randomizations - start)
        rng = np.random.default_rng([seed, _STREAM, c])
        yield rng.permuted(base[:rows], axis=2)
