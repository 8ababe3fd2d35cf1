"""What a test set can resolve: the smallest difference detected at a stated power, before and after.

"Not resolved" with power 0.07 means "not measured". This module answers, for one task,

- **before any entry exists** (planning, :func:`planned_resolution`): the smallest difference between two
  entries that a two-sided test at level ``alpha`` detects with probability ``power`` on ``n_items``
  items, from the metric family's variance assumptions:

  - a 0/1 metric (accuracy, top-k accuracy, micro-F1): McNemar's test with Connor's (1987) sample-size
    formula, ``n = (z_{a/2} sqrt(p_d) + z_b sqrt(p_d - gap^2))^2 / gap^2``, solved for the gap; the
    discordance ``p_d`` (share of items exactly one entry gets right) is given, or taken as
    ``2 p (1 - p) (1 - rho)`` from an expected accuracy ``p`` and a correlation ``rho`` of the two entries'
    correctness (``rho = 0``: independent errors, the largest discordance at that accuracy); with neither,
    the worst case of independent errors, ``p_d = 0.5`` (a conservative figure from ``N`` alone);
  - a mean of per-item values (MAE, Brier score, log loss; squared errors for RMSE): the paired z-test,
    ``gap = (z_{a/2} + z_b) sd_d / sqrt(n)``, with ``sd_d = sd sqrt(2 (1 - rho))`` the standard deviation
    of the per-item difference;
  - any other metric (macro-F1, AUC, mIoU, detection AP): from a pilot's bootstrap standard error of a
    paired difference, which shrinks as ``1/sqrt(n)``;

- **once entries exist** (:func:`measured_resolution_zero_one`, :func:`board_resolution`): the same from
  the measured discordance of paired 0/1 outcomes, or from the bootstrap standard error of each paired
  difference to the leader over the task's common resamples;
- **the test-set size** for a given gap and power (:func:`items_for_gap`), per metric family.

The z-test forms assume the standard error scales as ``1/sqrt(n)`` (independent items; with the grouped
bootstrap, read ``n`` as groups).

References
----------
.. [1] Connor, R. J. (1987). Sample size for testing differences in proportions for the paired-sample
       design. *Biometrics* 43(1), 207-211.
.. [2] Card, D. et al. (2020). With little power comes great responsibility. *EMNLP 2020*, 9263-9274.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy import optimize, special

from stats.checks import check_count, check_level, check_replicates, check_vector
from stats.compare import items_needed, items_needed_mcnemar

__all__ = [
    "FAMILIES",
    "BoardResolution",
    "ItemsPlan",
    "Resolution",
    "board_resolution",
    "family_of",
    "items_for_gap",
    "measured_resolution_zero_one",
    "planned_resolution",
    "smallest_gap_mcnemar",
    "smallest_gap_z",
]

FAMILIES: tuple[str, ...] = ("zero_one", "mean", "bootstrap")
Family = Literal["zero_one", "mean", "bootstrap"]
#: Registry metrics that are means of per-item values (the ``"mean"`` family; RMSE via squared errors).
_MEAN_METRICS = frozenset({"mae", "brier", "log_loss", "rmse"})


def family_of(metric: str) -> Family:
    """The variance family of a registry metric: ``"zero_one"``, ``"mean"`` or ``"bootstrap"``.

    Examples
    --------
    >>> family_of("accuracy"), family_of("mae"), family_of("macro_f1")
    ('zero_one', 'mean', 'bootstrap')
    """
    from stats.metrics import get_metric

    m = get_metric(metric)
    if getattr(m, "zero_one", False):
        return "zero_one"
    if m.name in _MEAN_METRICS:
        return "mean"
    return "bootstrap"


def _z(alpha: float, power: float) -> tuple[float, float]:
    alpha = check_level(alpha, name="alpha")
    power = check_level(power, name="power")
    return float(special.ndtri(1 - alpha / 2)), float(special.ndtri(power))


@dataclass(frozen=True)
class Resolution:
    """The smallest difference a test set resolves.

    Attributes
    ----------
    difference : float or None
        Smallest absolute difference detected with probability ``power`` by a two-sided test at level
        ``alpha`` (metric units); ``None`` when no possible difference is (``reason`` says why).
    n_items : int
    alpha, power : float
    family : str
        :data:`FAMILIES`.
    method : str
        ``"mcnemar-connor"`` or ``"z-test"``.
    basis : str
        The variance assumption or measurement, in words.
    reason : str or None
        Set when ``difference`` is ``None``.
    """

    difference: float | None
    n_items: int
    alpha: float
    power: float
    family: str
    method: str
    basis: str
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "difference": self.difference,
            "n_items": self.n_items,
            "alpha": self.alpha,
            "power": self.power,
            "family": self.family,
            "method": self.method,
            "basis": self.basis,
            "reason": self.reason,
        }


def _connor_items(gap: float, discordant: float, z_a: float, z_b: float) -> float:
    root = z_a * np.sqrt(discordant) + z_b * np.sqrt(max(discordant - gap * gap, 0.0))
    return float(root * root / (gap * gap))


def smallest_gap_mcnemar(
    n_items: int, *, discordant: float, alpha: float = 0.05, power: float = 0.8
) -> float | None:
    """The gap McNemar's test detects at ``power`` on ``n_items`` items: Connor's formula solved for it.

    Connor's ``n(gap)`` decreases from infinity (gap 0) to ``z_{a/2}^2`` (gap ``sqrt(p_d)``, every
    discordant item won by one entry), so the root is unique; ``None`` when even the largest gap needs
    more items (``n_items < z_{a/2}^2``) or ``p_d = 0``.

    Examples
    --------
    >>> round(smallest_gap_mcnemar(3379, discordant=29 / 1797) * 1797, 2)  # the reference's 11 of 1,797
    11.0
    """
    n_items = check_count(n_items, name="n_items", minimum=1)
    z_a, z_b = _z(alpha, power)
    p_d = float(discordant)
    if not (0 <= p_d <= 1):
        raise ValueError("`discordant` must be a proportion in [0, 1].")
    if p_d == 0:
        return None
    top = np.sqrt(p_d)
    if _connor_items(top, p_d, z_a, z_b) > n_items:
        return None
    return float(
        optimize.brentq(lambda g: _connor_items(g, p_d, z_a, z_b) - n_items, 1e-12 * top, top, xtol=1e-15)
    )


def smallest_gap_z(standard_error: float, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """``(z_{a/2} + z_b) se``: the gap a two-sided z-test detects at ``power`` when its standard error is ``se``.

    Examples
    --------
    >>> round(smallest_gap_z(0.01), 4)
    0.028
    """
    z_a, z_b = _z(alpha, power)
    se = float(standard_error)
    if not (np.isfinite(se) and se >= 0):
        raise ValueError("`standard_error` must be a finite number >= 0.")
    return (z_a + z_b) * se


def _discordance(accuracy: float | None, discordant: float | None, correlation: float) -> tuple[float, str]:
    if discordant is not None:
        p_d = float(discordant)
        if not (0 <= p_d <= 1):
            raise ValueError("`discordant` must be a proportion in [0, 1].")
        return p_d, f"discordance {p_d:.4g} (given)"
    if accuracy is None:  # nothing assumed: the largest discordance of independent errors
        return 0.5, "discordance 0.5: the worst case of independent errors (accuracy 0.5), nothing assumed"
    p = float(accuracy)
    if not (0 < p < 1) or not (-1 <= correlation <= 1):
        raise ValueError("`accuracy` must be in (0, 1) and `correlation` in [-1, 1].")
    p_d = 2 * p * (1 - p) * (1 - correlation)
    return (
        p_d,
        f"discordance {p_d:.4g} = 2 p (1 - p) (1 - rho) at accuracy {p:g}, correlation {correlation:g}",
    )


def _sd_difference(sd: float | None, sd_difference: float | None, correlation: float) -> tuple[float, str]:
    if sd_difference is not None:
        s = float(sd_difference)
        basis = f"sd of the per-item difference {s:.4g} (given)"
    elif sd is not None:
        if not (-1 <= correlation <= 1):
            raise ValueError("`correlation` must be in [-1, 1].")
        s = float(sd) * np.sqrt(2 * (1 - correlation))
        basis = f"sd of the per-item difference {s:.4g} = sd sqrt(2 (1 - rho)), sd {float(sd):g}, rho {correlation:g}"
    else:
        raise ValueError("a mean metric needs `sd` (per item) or `sd_difference`.")
    if not (np.isfinite(s) and s >= 0):
        raise ValueError("the standard deviation must be a finite number >= 0.")
    return s, basis


def planned_resolution(
    n_items: int,
    *,
    metric: str | None = None,
    family: Family | None = None,
    accuracy: float | None = None,
    discordant: float | None = None,
    correlation: float = 0.0,
    sd: float | None = None,
    sd_difference: float | None = None,
    pilot_standard_error: float | None = None,
    pilot_items: int | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
) -> Resolution:
    """The smallest difference ``n_items`` items resolve, before any entry exists (see the module).

    Parameters
    ----------
    n_items : int
    metric : str, optional
        A registry metric (its family is :func:`family_of`); or give ``family``.
    family : {"zero_one", "mean", "bootstrap"}, optional
    accuracy, discordant, correlation
        0/1 metrics: the expected accuracy (with ``correlation`` of the two entries' correctness, default 0)
        or the discordance directly.
    sd, sd_difference, correlation
        Mean metrics: the per-item standard deviation (with ``correlation``) or that of the difference.
    pilot_standard_error, pilot_items
        Any metric: a bootstrap standard error of a paired difference measured on ``pilot_items`` items.
    alpha, power : float

    Examples
    --------
    >>> r = planned_resolution(1000, metric="accuracy", accuracy=0.9)
    >>> round(r.difference, 4), r.method
    (0.0375, 'mcnemar-connor')
    """
    n_items = check_count(n_items, name="n_items", minimum=1)
    fam = family if family is not None else (family_of(metric) if metric is not None else None)
    if fam is None:
        raise ValueError("give `metric` or `family`.")
    if fam not in FAMILIES:
        raise ValueError(f"`family` must be one of {FAMILIES}, got {fam!r}.")
    if pilot_standard_error is not None:
        if pilot_items is None:
            raise ValueError("`pilot_standard_error` needs `pilot_items`.")
        pilot_items = check_count(pilot_items, name="pilot_items", minimum=1)
        se = float(pilot_standard_error) * np.sqrt(pilot_items / n_items)
        return Resolution(
            smallest_gap_z(se, alpha=alpha, power=power), n_items, alpha, power, fam, "z-test",
            f"pilot bootstrap standard error {float(pilot_standard_error):.4g} on {pilot_items} items, "
            "scaled by 1/sqrt(n)",
        )  # fmt: skip
    if fam == "zero_one":
        p_d, basis = _discordance(accuracy, discordant, correlation)
        gap = smallest_gap_mcnemar(n_items, discordant=p_d, alpha=alpha, power=power)
        reason = None if gap is not None else "no difference is detectable at this size and discordance"
        return Resolution(gap, n_items, alpha, power, fam, "mcnemar-connor", basis, reason)
    if fam == "mean":
        s, basis = _sd_difference(sd, sd_difference, correlation)
        return Resolution(
            smallest_gap_z(s / np.sqrt(n_items), alpha=alpha, power=power), n_items, alpha, power, fam,
            "z-test", basis,
        )  # fmt: skip
    raise ValueError(
        "a metric without a closed-form variance (macro-F1, AUC, mIoU, detection AP) needs a pilot: "
        "`pilot_standard_error` and `pilot_items`."
    )


def measured_resolution_zero_one(
    correct_a: npt.ArrayLike, correct_b: npt.ArrayLike, *, alpha: float = 0.05, power: float = 0.8
) -> Resolution:
    """The smallest gap this test set resolves, from two entries' measured paired 0/1 outcomes.

    The discordance is the share of items exactly one of them got right; then :func:`smallest_gap_mcnemar`.
    """
    a = np.asarray(correct_a)
    b = np.asarray(correct_b)
    if (
        a.ndim != 1
        or a.shape != b.shape
        or a.size == 0
        or not np.all(np.isin(a, (0, 1)))
        or not np.all(np.isin(b, (0, 1)))
    ):
        raise ValueError("`correct_a` and `correct_b` must be 0/1 arrays of the same length.")
    n = int(a.size)
    p_d = float(np.mean(a != b))
    gap = smallest_gap_mcnemar(n, discordant=p_d, alpha=alpha, power=power)
    return Resolution(
        gap, n, alpha, power, "zero_one", "mcnemar-connor",
        f"measured discordance {int(np.sum(a != b))}/{n}",
        None if gap is not None else "the entries never disagree: no discordant item was measured",
    )  # fmt: skip


@dataclass(frozen=True)
class BoardResolution:
    """Per entry, the smallest difference to the leader this test set resolves (bootstrap).

    Attributes
    ----------
    leader : str
    names : tuple[str, ...]
    differences : tuple[float | None, ...]
        ``(z_{a/2} + z_b) se_j`` with ``se_j`` the bootstrap standard error of entry ``j`` minus the leader
        (``None`` for the leader).
    observed : tuple[float, ...]
        The observed gaps to the leader.
    resolved_at_power : tuple[bool | None, ...]
        ``|observed| >= difference``: the gap is at least the one resolved at ``power`` (``None`` for the
        leader).
    task_difference : float or None
        The median over non-leader entries: the task's typical resolvable difference.
    alpha, power : float
    """

    leader: str
    names: tuple[str, ...]
    differences: tuple[float | None, ...]
    observed: tuple[float, ...]
    resolved_at_power: tuple[bool | None, ...]
    task_difference: float | None
    alpha: float
    power: float

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "leader": self.leader,
            "rows": [
                {"name": n, "difference": d, "observed": o, "resolved_at_power": r}
                for n, d, o, r in zip(
                    self.names, self.differences, self.observed, self.resolved_at_power, strict=True
                )
            ],
            "task_difference": self.task_difference,
            "alpha": self.alpha,
            "power": self.power,
            "method": "z-test with the bootstrap standard error of the paired difference",
        }


def board_resolution(
    values: npt.ArrayLike,
    replicates: npt.ArrayLike,
    *,
    higher_is_better: bool,
    names: Sequence[str] | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    leader_difference_sd: npt.ArrayLike | None = None,
) -> BoardResolution:
    """The smallest difference to the leader each row's test resolves, from the common resamples.

    ``leader_difference_sd``: each entry's ``(replicates[:, j] - replicates[:, leader]).std(ddof=1)`` when
    the caller has computed them already (``stats.board.Board.leader_difference_sd``, in the entries'
    order), so they are not computed again; the same numbers, an O(B K) pass less.

    Examples
    --------
    >>> reps = np.random.default_rng(0).normal([0.80, 0.78, 0.70], 0.01, size=(4000, 3))
    >>> br = board_resolution([0.80, 0.78, 0.70], reps, higher_is_better=True, names=["a", "b", "c"])
    >>> br.leader, br.resolved_at_power
    ('a', (None, False, True))
    """
    theta = check_replicates(replicates)
    k = theta.shape[1]
    p = check_vector(values, name="values", length=k, what="values, one per entry")
    labels = tuple(names) if names is not None else tuple(f"entry-{j}" for j in range(k))
    if len(labels) != k:
        raise ValueError("`names` must have one name per entry.")
    keyed = p if higher_is_better else -p
    best = keyed.max()
    leader = min((j for j in range(k) if keyed[j] == best), key=lambda j: labels[j])
    if leader_difference_sd is None:
        se = (theta - theta[:, [leader]]).std(axis=0, ddof=1)
    else:
        se = check_vector(leader_difference_sd, name="leader_difference_sd", length=k, what="one per entry")
    diffs: list[float | None] = []
    resolved: list[bool | None] = []
    for j in range(k):
        if j == leader:
            diffs.append(None)
            resolved.append(None)
            continue
        d = smallest_gap_z(float(se[j]), alpha=alpha, power=power)
        diffs.append(d)
        resolved.append(bool(abs(p[j] - p[leader]) >= d))
    others = [d for d in diffs if d is not None]
    return BoardResolution(
        leader=labels[leader],
        names=labels,
        differences=tuple(diffs),
        observed=tuple(float(p[j] - p[leader]) for j in range(k)),
        resolved_at_power=tuple(resolved),
        task_difference=float(np.median(others)) if others else None,
        alpha=float(alpha),
        power=float(power),
    )


@dataclass(frozen=True)
class ItemsPlan:
    """Test-set size for a gap at a power.

    Attributes
    ----------
    items : int or None
        Items needed (rounded up); ``None`` for a zero gap.
    gap : float
    alpha, power : float
    family, method, basis : str
    simple_form_items : int or None
        For a 0/1 metric, the simple ``(z_{a/2} + z_b)^2 p_d / gap^2`` beside Connor's (which is the answer).
    """

    items: int | None
    gap: float
    alpha: float
    power: float
    family: str
    method: str
    basis: str
    simple_form_items: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "items": self.items,
            "gap": self.gap,
            "alpha": self.alpha,
            "power": self.power,
            "family": self.family,
            "method": self.method,
            "basis": self.basis,
            "simple_form_items": self.simple_form_items,
        }


def items_for_gap(
    gap: float,
    *,
    metric: str | None = None,
    family: Family | None = None,
    accuracy: float | None = None,
    discordant: float | None = None,
    correlation: float = 0.0,
    sd: float | None = None,
    sd_difference: float | None = None,
    pilot_standard_error: float | None = None,
    pilot_items: int | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
) -> ItemsPlan:
    """Test items needed to detect ``gap`` at ``power`` (two-sided ``alpha``), per metric family.

    Parameters as in :func:`planned_resolution`.

    Examples
    --------
    >>> plan = items_for_gap(11 / 1797, metric="accuracy", discordant=29 / 1797)
    >>> plan.items, plan.simple_form_items  # Connor's form and the simple form (docs: REFERENCE)
    (3379, 3381)
    """
    g = abs(float(gap))
    if not np.isfinite(g):
        raise ValueError("`gap` must be finite.")
    fam = family if family is not None else (family_of(metric) if metric is not None else None)
    if fam is None:
        raise ValueError("give `metric` or `family`.")
    if fam not in FAMILIES:
        raise ValueError(f"`family` must be one of {FAMILIES}, got {fam!r}.")
    if pilot_standard_error is not None:
        if pilot_items is None:
            raise ValueError("`pilot_standard_error` needs `pilot_items`.")
        n = items_needed(
            gap=[g], standard_error=[pilot_standard_error], n_items=pilot_items, alpha=alpha, power=power
        )
        basis = f"pilot bootstrap standard error {float(pilot_standard_error):.4g} on {pilot_items} items"
        return ItemsPlan(n[0], g, alpha, power, fam, "z-test", basis)
    if fam == "zero_one":
        p_d, basis = _discordance(accuracy, discordant, correlation)
        if p_d == 0:
            raise ValueError("a discordance of 0: two entries that never disagree cannot be told apart.")
        connor = items_needed_mcnemar(gap=g, discordant=p_d, alpha=alpha, power=power, form="connor")
        simple = items_needed_mcnemar(gap=g, discordant=p_d, alpha=alpha, power=power, form="simple")
        return ItemsPlan(connor, g, alpha, power, fam, "mcnemar-connor", basis, simple)
    if fam == "mean":
        s, basis = _sd_difference(sd, sd_difference, correlation)
        n = items_needed(gap=[g], standard_error=[s], n_items=1, alpha=alpha, power=power)
        return ItemsPlan(n[0], g, alpha, power, fam, "z-test", basis)
    raise ValueError(
        "a metric without a closed-form variance (macro-F1, AUC, mIoU, detection AP) needs a pilot: "
        "`pilot_standard_error` and `pilot_items`."
    )
