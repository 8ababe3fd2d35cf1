"""DeLong's interval and paired test for ROC AUC, from placement values in O(N log N).

With ``m`` positives and ``n`` negatives, the placement value of a positive is the share of negatives
scored below it (ties one half), ``V10_i``, and that of a negative the share of positives scored above it,
``V01_j``. The AUC is the mean of either. DeLong, DeLong & Clarke-Pearson (1988) estimate the covariance
of the AUCs of K entries on the same items as ``S10 / m + S01 / n``, with ``S10`` and ``S01`` the sample
covariance matrices (denominator ``m - 1`` and ``n - 1``) of the entries' placement values. Sorting each
entry's scores once gives every placement value (Sun & Xu 2014), so the cost is O(N log N) per entry.

- :func:`delong_interval`: ``AUC +- z se``, clipped to [0, 1] (as the pROC package's ``ci.auc(method =
  "delong")``);
- :func:`delong_test`: ``z = (AUC_a - AUC_b) / sqrt(var_a + var_b - 2 cov_ab)``, two-sided normal
  p-value (pROC's ``roc.test(method = "delong", paired = TRUE)``).

Both assume independent items (no groups).

References
----------
.. [1] DeLong, E. R., DeLong, D. M. & Clarke-Pearson, D. L. (1988). Comparing the areas under two or more
   correlated receiver operating characteristic curves: a nonparametric approach. *Biometrics* 44(3),
   837-845.
.. [2] Sun, X. & Xu, W. (2014). Fast implementation of DeLong's algorithm for comparing the areas under
   correlated receiver operating characteristic curves. *IEEE Signal Processing Letters* 21(11),
   1389-1393.
.. [3] Robin, X. et al. (2011). pROC: an open-source package for R and S+ to analyze and compare ROC
   curves. *BMC Bioinformatics* 12, 77.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from stats.checks import check_level
from stats.intervals import DEFAULT_CONFIDENCE, ZERO_WIDTH_WARNING, Interval
from stats.metrics import auc_placements, get_metric
from stats.signature import Signature

__all__ = ["DelongTest", "delong_covariance", "delong_interval", "delong_intervals", "delong_test"]

FloatArray = NDArray[np.float64]


def _placements(
    truth: ArrayLike, scores: ArrayLike, labels: Sequence[Any] | None
) -> tuple[float, FloatArray, FloatArray]:
    metric = get_metric("roc_auc")
    ranked = metric.rank_prepare(truth, scores, labels=labels)
    auc, v10, v01 = auc_placements(ranked)
    pos = ranked.positive
    if pos.sum() < 2 or (~pos).sum() < 2:
        raise ValueError(
            "DeLong's variance needs at least 2 positive and 2 negative items "
            f"(this test set has {int(pos.sum())} and {int((~pos).sum())})"
        )
    unsort = np.empty_like(ranked.order)
    unsort[ranked.order] = np.arange(ranked.order.shape[0])
    # back to item order, so the placements of several entries line up item by item
    return auc, v10[unsort][pos[unsort]], v01[unsort][~pos[unsort]]


def delong_covariance(
    truth: ArrayLike, predictions: Sequence[ArrayLike], *, labels: Sequence[Any] | None = None
) -> tuple[FloatArray, FloatArray]:
    """AUCs (K,) and DeLong's covariance matrix (K, K) of K entries scored on the same items."""
    parts = [_placements(truth, p, labels) for p in predictions]
    aucs = np.array([p[0] for p in parts])
    v10 = np.column_stack([p[1] for p in parts])
    v01 = np.column_stack([p[2] for p in parts])
    s10 = np.atleast_2d(np.cov(v10, rowvar=False, ddof=1))
    s01 = np.atleast_2d(np.cov(v01, rowvar=False, ddof=1))
    return aucs, s10 / v10.shape[0] + s01 / v01.shape[0]


def delong_interval(
    truth: ArrayLike,
    scores: ArrayLike,
    *,
    labels: Sequence[Any] | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    signature: Signature | None = None,
) -> Interval:
    """DeLong's normal interval of one entry's ROC AUC, ``AUC +- z se`` clipped to [0, 1].

    Examples
    --------
    >>> truth = [0, 0, 1, 1, 0, 1, 0, 1]
    >>> iv = delong_interval(truth, [0.1, 0.4, 0.35, 0.8, 0.2, 0.9, 0.3, 0.7])
    >>> round(iv.low, 3), round(iv.high, 3)
    (0.764, 1.0)
    """
    confidence = check_level(confidence, name="confidence")
    aucs, cov = delong_covariance(truth, [scores], labels=labels)
    se = float(np.sqrt(max(cov[0, 0], 0.0)))
    z = float(special.ndtri(1.0 - (1.0 - confidence) / 2.0))
    auc = float(aucs[0])
    low, high = max(0.0, auc - z * se), min(1.0, auc + z * se)
    # every item's placement equal (e.g. a perfect separation): se = 0 and the interval is [AUC, AUC]
    warning = ZERO_WIDTH_WARNING if low == high else None
    return Interval(low, high, confidence, "delong", signature, warning)


def delong_intervals(
    truth: ArrayLike,
    predictions: Sequence[ArrayLike],
    scores: Sequence[Any],
    *,
    labels: Sequence[Any] | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> list[Interval]:
    """:func:`delong_interval` of every entry, signed like the engine's intervals (``method: delong``).

    ``scores`` are the entries' :class:`stats.engine.EntryScore` (for the metric check and signature).
    """
    out = []
    for pred, score in zip(predictions, scores, strict=True):
        base: Signature = score.signature
        if base.metric != "roc_auc":
            raise ValueError(f"the DeLong interval is for ROC AUC, not {base.metric}")
        if dict(base.extra).get("resampling") == "grouped":
            raise ValueError(
                "the DeLong interval assumes independent items; use a bootstrap interval for groups"
            )
        sig = Signature(
            metric=base.metric,
            method="delong",
            resamples=0,
            seed=None,
            confidence=confidence,
            version=base.version,
            extra=tuple((k, v) for k, v in base.extra if k == "positive"),
        )
        out.append(delong_interval(truth, pred, labels=labels, confidence=confidence, signature=sig))
    return out


@dataclass(frozen=True)
class DelongTest:
    """DeLong's paired test of two AUCs on the same items.

    Attributes
    ----------
    auc_a, auc_b : float
    difference : float
        ``auc_a - auc_b``.
    standard_error : float
        ``sqrt(var_a + var_b - 2 cov_ab)``.
    z : float
        ``difference / standard_error`` (0 when both are 0).
    p_value : float
        Two-sided, ``2 (1 - Phi(|z|))``.
    """

    auc_a: float
    auc_b: float
    difference: float
    standard_error: float
    z: float
    p_value: float


def delong_test(
    truth: ArrayLike, scores_a: ArrayLike, scores_b: ArrayLike, *, labels: Sequence[Any] | None = None
) -> DelongTest:
    """DeLong's paired test of "the two entries have equal AUC" (two-sided).

    Examples
    --------
    >>> truth = [0, 0, 1, 1, 0, 1, 0, 1]
    >>> t = delong_test(truth, [0.1, 0.4, 0.35, 0.8, 0.2, 0.9, 0.3, 0.7], [0.2, 0.3, 0.6, 0.7, 0.1, 0.8, 0.5, 0.4])
    >>> t.auc_a, t.auc_b, t.p_value
    (0.9375, 0.9375, 1.0)
    """
    aucs, cov = delong_covariance(truth, [scores_a, scores_b], labels=labels)
    var = float(cov[0, 0] + cov[1, 1] - 2.0 * cov[0, 1])
    se = float(np.sqrt(max(var, 0.0)))
    diff = float(aucs[0] - aucs[1])
    z = diff / se if se > 0.0 else (0.0 if diff == 0.0 else float(np.sign(diff) * np.inf))
    p = float(2.0 * special.ndtr(-abs(z)))
    return DelongTest(float(aucs[0]), float(aucs[1]), diff, se, z, p)
