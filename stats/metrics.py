"""The metric registry: every metric as per-item sufficient statistics plus a vectorised ``finalize``.

A decomposable metric turns hidden labels and one entry's predictions into a matrix ``S`` of shape
``(N, m)`` (float64), one row per item. Summing rows with weights and applying ``finalize`` gives the
metric: the point estimate is ``finalize(S.sum(axis=0))`` and the bootstrap replicates are
``finalize(W @ S)`` for a resample-weight matrix ``W`` of shape ``(B, N)``. The last column of ``S``
is always the item count (1.0 per item), so ``finalize`` never needs ``N`` from elsewhere and weighted
(grouped) resamples whose total weight differs from ``N`` are handled exactly.

Rank-based metrics (ROC AUC, average precision) cannot be pooled from per-item sums; they sort the
scores once per entry and take weighted cumulative sums per resample (``replicates``).

Adding a metric is one call to :func:`register` in this module.

References
----------
.. [1] Efron, B. and Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman & Hall.
.. [2] Post, M. (2018). A Call for Clarity in Reporting BLEU Scores (sacreBLEU: per-segment sufficient
       statistics, re-aggregated, never re-scored). WMT 2018.
.. [3] Pedregosa, F. et al. (2011). Scikit-learn: Machine Learning in Python. JMLR 12 (definitions of
       balanced accuracy, macro-F1, Cohen's kappa, ROC AUC and average precision with ties).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from stats.checks import check_weights

__all__ = [
    "METRICS",
    "Metric",
    "PredictionKind",
    "RankedScores",
    "TaskKind",
    "auc_placements",
    "encode_labels",
    "get_metric",
    "per_class_iou",
    "register",
    "truth_kind",
]

PredictionKind = Literal["label", "ranked_labels", "score", "value", "boxes", "masks", "text", "tags"]
#: What a metric scores: per-item tables (this module's statistics), detection boxes
#: (:mod:`stats.vision.detection`), segmentation masks (:mod:`stats.vision.segmentation`) or text
#: segments and tag sequences (:mod:`stats.text`).
TaskKind = Literal["items", "detection", "segmentation", "text"]
FloatArray = NDArray[np.float64]

StatisticsFn = Callable[[NDArray[Any], NDArray[Any], "NDArray[Any] | None"], FloatArray]
FinalizeFn = Callable[[FloatArray], FloatArray]
RankFn = Callable[[FloatArray, FloatArray], FloatArray]

#: Rows of the weight matrix handled at once by rank-based replicates (bounds memory to
#: ``_RANK_CHUNK * N`` floats).
_RANK_CHUNK = 256


def _safe_divide(num: FloatArray, den: FloatArray) -> FloatArray:
    """``num / den`` with NaN where ``den == 0`` and no warning."""
    num, den = np.broadcast_arrays(np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64))
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


@dataclass(frozen=True, eq=False)
class Metric:
    """A metric of the registry.

    Attributes
    ----------
    name : str
        Registry name (``"accuracy"``, ``"macro_f1"``...).
    higher_is_better : bool
        Direction: ``True`` for accuracy-like metrics, ``False`` for losses and errors.
    zero_one : bool
        Each item is either right or wrong (column 0 of ``item_statistics`` is 1.0 or 0.0), so
        McNemar's test applies.
    rank_based : bool
        The metric is not a function of per-item sums (ROC AUC, average precision); use
        :meth:`point` and :meth:`replicates`.
    prediction_kind : {"label", "ranked_labels", "score", "value"}
        What a prediction is: one label per item, a ranked list of labels per item (shape ``(N, k)``),
        one score (probability of the positive class) per item, or one number per item.
    needs_labels : bool
        The metric needs the task's label set (``labels=``) to define its statistics.
    description : str
        One line for humans.
    ranks : int
        For ``"ranked_labels"``: how many ranked labels per item the metric reads (k of top-k).
    stratify_by_class : bool
        The metric depends on the class composition of the test set (ROC AUC, average precision,
        kappa, the macro averages): by default the bootstrap resamples within each true class
        (:func:`stats.checks.class_strata`), so every resample keeps every class of the truth.
    task_kind : {"items", "detection", "segmentation"}
        ``"items"``: statistics from :meth:`item_statistics`. ``"segmentation"``: decomposable, with
        per-image statistics from :func:`stats.vision.segmentation.image_statistics`. ``"detection"``:
        replicates from :func:`stats.vision.detection.detection_scores` (neither decomposable nor a
        function of one score per item).
    default_interval : str or None
        The interval method this metric's boards and commands use unless told otherwise, chosen by
        measured coverage (docs/stats.md); ``None``: the rule of :func:`stats.intervals.default_interval`
        (Clopper-Pearson for a 0/1 metric on independent items, else BCa).
    value_range : tuple of float, default (-inf, inf)
        The values the metric can take, ``(lowest, highest)``: ``(0, 1)`` for accuracy or AP, ``(-1, 1)``
        for kappa, ``(0, inf)`` for errors. Every interval is clipped to it
        (:func:`stats.intervals.clip_to_range`).
    """

    name: str
    higher_is_better: bool
    zero_one: bool
    rank_based: bool
    prediction_kind: PredictionKind
    needs_labels: bool
    description: str
    ranks: int = 1
    stratify_by_class: bool = False
    task_kind: TaskKind = "items"
    default_interval: str | None = None
    value_range: tuple[float, float] = (-np.inf, np.inf)
    _statistics: StatisticsFn | None = field(default=None, repr=False)
    _finalize: FinalizeFn | None = field(default=None, repr=False)
    _rank_replicates: RankFn | None = field(default=None, repr=False)
    _rank_leave_one_out: Callable[[RankedScores], FloatArray] | None = field(default=None, repr=False)
    _scores_are_probabilities: bool = field(default=False, repr=False)

    @property
    def scores_are_probabilities(self) -> bool:
        """Scores of this metric must lie in [0, 1] (log loss, Brier score)."""
        return self._scores_are_probabilities

    # -- decomposable metrics -------------------------------------------------------------------------
    def item_statistics(
        self, truth: ArrayLike, prediction: ArrayLike, *, labels: Sequence[Any] | None = None
    ) -> FloatArray:
        """Per-item sufficient statistics ``S`` of shape ``(N, m)``, float64.

        Parameters
        ----------
        truth : array_like, shape (N,)
            Hidden labels (classification, binary scores) or true values (regression).
        prediction : array_like, shape (N,) or (N, k)
            The entry's predictions, aligned with ``truth``; ``(N, k)`` ranked labels for top-k.
        labels : sequence, optional
            The task's label set; required when ``needs_labels`` is true. For binary-score metrics
            ``labels[1]`` is the positive class; without it, ``truth`` must be 0/1 or boolean.

        Returns
        -------
        S : ndarray, shape (N, m)
            For ``zero_one`` metrics column 0 is 1.0 where the item is right; the last column is always
            1.0 (the item count).
        """
        if self.task_kind != "items":
            source = "stats.text" if self.task_kind == "text" else "stats.vision"
            raise TypeError(f"`{self.name}` is a {self.task_kind} metric: its statistics come from {source}.")
        if self._statistics is None:
            raise TypeError(f"`{self.name}` is rank-based: use `point` and `replicates`.")
        if self.needs_labels and labels is None:
            raise ValueError(f"`labels` is required for the metric `{self.name}`.")
        truth_arr = np.asarray(truth)
        pred_arr = np.asarray(prediction)
        _check_aligned(truth_arr, pred_arr)
        label_arr = None if labels is None else np.asarray(list(labels))
        return self._statistics(truth_arr, pred_arr, label_arr)

    def finalize(self, pooled: ArrayLike) -> FloatArray:
        """Metric values from pooled (weighted) sums of ``item_statistics``.

        Parameters
        ----------
        pooled : array_like, shape (..., m)
            ``S.sum(axis=0)`` for the point estimate, ``W @ S`` for replicates.

        Returns
        -------
        values : ndarray, shape (...)
            NaN where the metric is undefined for that resample (for example no positive item).
        """
        if self._finalize is None:
            raise TypeError(f"`{self.name}` is rank-based: use `point` and `replicates`.")
        return self._finalize(np.asarray(pooled, dtype=np.float64))

    # -- every metric ---------------------------------------------------------------------------------
    def point(self, truth: ArrayLike, prediction: ArrayLike, *, labels: Sequence[Any] | None = None) -> float:
        """The metric on the whole test set (every item weight 1)."""
        if self._finalize is not None:
            stats = self.item_statistics(truth, prediction, labels=labels)
            return float(self.finalize(stats.sum(axis=0)))
        weights = np.ones((1, np.asarray(truth).shape[0]), dtype=np.uint8)
        return float(self.replicates(truth, prediction, weights, labels=labels)[0])

    def replicates(
        self,
        truth: ArrayLike,
        prediction: ArrayLike,
        weights: ArrayLike,
        *,
        labels: Sequence[Any] | None = None,
    ) -> FloatArray:
        """The metric under each row of item weights.

        Parameters
        ----------
        truth, prediction : array_like, shape (N,)
            As in :meth:`item_statistics`; for rank-based metrics ``prediction`` is the score.
        weights : array_like, shape (B, N)
            Resample counts per item (rows of ``W``).
        labels : sequence, optional
            As in :meth:`item_statistics`.

        Returns
        -------
        replicates : ndarray, shape (B,)
        """
        truth_arr = np.asarray(truth)
        w = check_weights(weights, n_items=truth_arr.shape[0], counts=False, min_rows=0)
        if self._finalize is not None:
            stats = self.item_statistics(truth_arr, prediction, labels=labels)
            return self.finalize(w.astype(np.float64) @ stats)
        ranked = self.rank_prepare(truth_arr, prediction, labels=labels)
        out = np.empty(w.shape[0])
        for start in range(0, w.shape[0], _RANK_CHUNK):
            stop = min(start + _RANK_CHUNK, w.shape[0])
            out[start:stop] = self.rank_replicates(ranked, w[start:stop])
        return out

    # -- rank-based metrics ---------------------------------------------------------------------------
    def rank_prepare(
        self, truth: ArrayLike, scores: ArrayLike, *, labels: Sequence[Any] | None = None
    ) -> RankedScores:
        """Sort one entry's scores once; reuse the result for every chunk of weights."""
        if self._rank_replicates is None:
            raise TypeError(f"`{self.name}` is decomposable: use `item_statistics` and `finalize`.")
        truth_arr = np.asarray(truth)
        s = _scores(np.asarray(scores), probabilities=False)
        _check_aligned(truth_arr, s)
        positive = _binary_truth(truth_arr, None if labels is None else np.asarray(list(labels)))
        order = np.argsort(s, kind="stable")
        s_sorted = s[order]
        starts = np.flatnonzero(np.r_[True, s_sorted[1:] != s_sorted[:-1]])
        return RankedScores(order=order, starts=starts, positive=positive[order])

    def rank_leave_one_out(self, ranked: RankedScores) -> FloatArray | None:
        """Leave-one-item-out values (N,), in item order, in O(N) after the sort; ``None`` when the
        metric has no closed form (the engine then evaluates leave-one-out weight rows, O(N^2)).

        NaN where leaving the item out leaves the metric undefined (the only positive item of an AUC).
        """
        if self._rank_leave_one_out is None:
            return None
        by_rank = self._rank_leave_one_out(ranked)
        out = np.empty_like(by_rank)
        out[ranked.order] = by_rank
        return out

    def rank_replicates(self, ranked: RankedScores, weights: NDArray[Any]) -> FloatArray:
        """The metric under each row of ``weights`` (B, N) for a prepared entry."""
        assert self._rank_replicates is not None
        wpos, wneg = ranked.group_weights(weights)
        return self._rank_replicates(wpos, wneg)


#: The one registry of metrics, by name.
METRICS: dict[str, Metric] = {}


def register(metric: Metric) -> Metric:
    """Add ``metric`` to :data:`METRICS` (names are unique)."""
    if metric.name in METRICS:
        raise ValueError(f"a metric named `{metric.name}` is already registered.")
    if metric.task_kind == "detection":
        if metric._finalize is not None or metric._rank_replicates is not None:
            raise ValueError("a detection metric has neither `finalize` nor rank `replicates`.")
    elif (metric._finalize is None) == (metric._rank_replicates is None):
        raise ValueError("a metric is either decomposable (`finalize`) or rank-based (`replicates`).")
    METRICS[metric.name] = metric
    return metric


def get_metric(name: str) -> Metric:
    """The registered metric called ``name``.

    Raises
    ------
    ValueError
        If no metric has that name; the message lists the known names.

    Examples
    --------
    >>> m = get_metric("macro_f1")
    >>> m.name, m.higher_is_better, m.prediction_kind
    ('macro_f1', True, 'label')
    """
    try:
        return METRICS[name]
    except KeyError:
        known = ", ".join(sorted(METRICS))
        raise ValueError(f"`metric` must be one of: {known} (got {name!r}).") from None


# ----------------------------------------------------------------------------------------------------
# helpers


def _check_aligned(truth: NDArray[Any], prediction: NDArray[Any]) -> None:
    if truth.ndim != 1:
        raise ValueError("`truth` must be one-dimensional.")
    if prediction.shape[:1] != truth.shape:
        raise ValueError(
            f"`prediction` must have one row per item: {truth.shape[0]} items, got {prediction.shape[0]}."
        )


def encode_labels(values: ArrayLike, labels: ArrayLike, *, name: str = "values") -> NDArray[np.intp]:
    """Indices of ``values`` in the label set ``labels``.

    Raises
    ------
    ValueError
        If a value is not in ``labels`` (the message names the first offending value).
    """
    vals = np.asarray(values)
    labs = np.asarray(labels)
    order = np.argsort(labs, kind="stable")
    sorted_labs = labs[order]
    pos = np.searchsorted(sorted_labs, vals)
    pos = np.clip(pos, 0, len(sorted_labs) - 1)
    found = sorted_labs[pos] == vals
    if not np.all(found):
        bad = vals[~found].ravel()[0].item()
        raise ValueError(f"`{name}` holds {bad!r}, which is not in the label set.")
    return np.asarray(order[pos], dtype=np.intp)


def _binary_truth(truth: NDArray[Any], labels: NDArray[Any] | None) -> NDArray[np.bool_]:
    if labels is not None:
        if len(labels) != 2:
            raise ValueError(
                "`labels` must hold exactly two labels (negative, positive) for a binary metric."
            )
        return encode_labels(truth, labels, name="truth") == 1
    if truth.dtype == np.bool_:
        return truth
    try:
        values = truth.astype(np.float64)
    except ValueError:
        values = np.full(truth.shape, np.nan)
    if not np.all((values == 0) | (values == 1)):
        raise ValueError("`truth` must be 0/1 for a binary metric when `labels` is not given.")
    return values == 1


def _ones(n: int) -> FloatArray:
    return np.ones((n, 1))


def _mean_finalize(pooled: FloatArray) -> FloatArray:
    return _safe_divide(pooled[..., 0], pooled[..., -1])


# ----------------------------------------------------------------------------------------------------
# classification (one label per item)


def _accuracy_stats(truth: NDArray[Any], pred: NDArray[Any], labels: NDArray[Any] | None) -> FloatArray:
    if pred.ndim != 1:
        raise ValueError("`prediction` must be one label per item.")
    return np.column_stack([(truth == pred).astype(np.float64), _ones(truth.shape[0])])


def _one_hot(codes: NDArray[np.intp], n_classes: int) -> FloatArray:
    out = np.zeros((codes.shape[0], n_classes))
    out[np.arange(codes.shape[0]), codes] = 1.0
    return out


def _class_stats(truth: NDArray[Any], pred: NDArray[Any], labels: NDArray[Any] | None) -> FloatArray:
    """Columns: true-positive (C), predicted (C), true (C), count (1)."""
    assert labels is not None
    if pred.ndim != 1:
        raise ValueError("`prediction` must be one label per item.")
    t = encode_labels(truth, labels, name="truth")
    p = encode_labels(pred, labels, name="prediction")
    c = len(labels)
    true_oh = _one_hot(t, c)
    pred_oh = _one_hot(p, c)
    tp = true_oh * (t == p)[:, None]
    return np.hstack([tp, pred_oh, true_oh, _ones(t.shape[0])])


def _split_class(pooled: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    c = (pooled.shape[-1] - 1) // 3
    return pooled[..., :c], pooled[..., c : 2 * c], pooled[..., 2 * c : 3 * c], pooled[..., -1]


def _macro_f1_finalize(pooled: FloatArray) -> FloatArray:
    """Mean F1 over every class of the task's label set (scikit-learn's ``f1_score(labels=label_set,
    average="macro", zero_division=0)``): a class with no true and no predicted item in the (re)sample
    counts 0, so the average is always over the same classes and defined whenever there is an item."""
    tp, pred, true, n = _split_class(pooled)
    den = pred + true
    f1 = np.where(den > 0, 2.0 * tp / np.where(den > 0, den, 1.0), 0.0)
    return np.where(n > 0, f1.mean(axis=-1), np.nan)


def _balanced_accuracy_finalize(pooled: FloatArray) -> FloatArray:
    """Mean recall over every class of the task's label set (scikit-learn's ``recall_score(labels=
    label_set, average="macro", zero_division=0)``): a class with no true item in the (re)sample counts
    0. Stratifying the bootstrap by class (the default for this metric) keeps every class of the truth in
    every resample, so only classes absent from the test set itself count 0, in the point value and in
    every replicate alike."""
    tp, _, true, n = _split_class(pooled)
    recall = np.where(true > 0, tp / np.where(true > 0, true, 1.0), 0.0)
    return np.where(n > 0, recall.mean(axis=-1), np.nan)


def _kappa_finalize(pooled: FloatArray) -> FloatArray:
    tp, pred, true, n = _split_class(pooled)
    po = _safe_divide(tp.sum(axis=-1), n)
    pe = _safe_divide((pred * true).sum(axis=-1), n * n)
    return _safe_divide(po - pe, 1.0 - pe)


# ----------------------------------------------------------------------------------------------------
# ranked labels (top-k)


def _make_top_k_stats(k: int) -> StatisticsFn:
    def stats(truth: NDArray[Any], pred: NDArray[Any], labels: NDArray[Any] | None) -> FloatArray:
        if pred.ndim != 2 or pred.shape[1] < k:
            raise ValueError(f"`prediction` must hold at least {k} ranked labels per item.")
        hit = (pred[:, :k] == truth[:, None]).any(axis=1)
        return np.column_stack([hit.astype(np.float64), _ones(truth.shape[0])])

    return stats


# ----------------------------------------------------------------------------------------------------
# binary scores


def _scores(pred: NDArray[Any], *, probabilities: bool) -> FloatArray:
    if pred.ndim != 1:
        raise ValueError("`prediction` must be one score per item.")
    s = pred.astype(np.float64)
    if not np.all(np.isfinite(s)):
        raise ValueError("`prediction` must be finite.")
    if probabilities and (np.any(s < 0) or np.any(s > 1)):
        raise ValueError("`prediction` must be probabilities in [0, 1].")
    return s


def _log_loss_stats(truth: NDArray[Any], pred: NDArray[Any], labels: NDArray[Any] | None) -> FloatArray:
    y = _binary_truth(truth, labels)
    eps = np.finfo(np.float64).eps  # as scikit-learn's log_loss: clip to [eps, 1 - eps]
    p = np.clip(_scores(pred, probabilities=True), eps, 1 - eps)
    loss = -np.where(y, np.log(p), np.log1p(-p))
    return np.column_stack([loss, _ones(y.shape[0])])


def _brier_stats(truth: NDArray[Any], pred: NDArray[Any], labels: NDArray[Any] | None) -> FloatArray:
    y = _binary_truth(truth, labels)
    p = _scores(pred, probabilities=True)
    return np.column_stack([(p - y) ** 2, _ones(y.shape[0])])


@dataclass(frozen=True, eq=False)
class RankedScores:
    """One entry's scores sorted once (ascending) for rank-based metrics.

    Attributes
    ----------
    order : ndarray of intp, shape (N,)
        Item indices in ascending order of score (stable).
    starts : ndarray of intp, shape (G,)
        Start, in ``order``, of each run of tied scores.
    positive : ndarray of bool, shape (N,)
        Whether each item (in ``order``) is positive.
    """

    order: NDArray[np.intp]
    starts: NDArray[np.intp]
    positive: NDArray[np.bool_]

    def group_weights(self, weights: NDArray[Any]) -> tuple[FloatArray, FloatArray]:
        """Positive and negative weight of each tie group, each of shape (B, G)."""
        w = np.asarray(weights, dtype=np.float64)[:, self.order]
        wpos = np.add.reduceat(w * self.positive, self.starts, axis=1)
        wneg = np.add.reduceat(w, self.starts, axis=1) - wpos
        return wpos, wneg


def _roc_auc_from_groups(wpos: FloatArray, wneg: FloatArray) -> FloatArray:
    """Weighted Mann-Whitney AUC: P(score_pos > score_neg) + 0.5 P(tie); groups ascending."""
    neg_below = np.cumsum(wneg, axis=-1) - wneg
    num = (wpos * (neg_below + 0.5 * wneg)).sum(axis=-1)
    return _safe_divide(num, wpos.sum(axis=-1) * wneg.sum(axis=-1))


def _average_precision_from_groups(wpos: FloatArray, wneg: FloatArray) -> FloatArray:
    """Step-wise average precision as scikit-learn: sum over thresholds of recall gain x precision."""
    wpos, wneg = wpos[..., ::-1], wneg[..., ::-1]  # thresholds from the highest score down
    tps = np.cumsum(wpos, axis=-1)
    den = tps + np.cumsum(wneg, axis=-1)
    precision = np.where(den > 0, tps / np.where(den > 0, den, 1.0), 0.0)
    return _safe_divide((wpos * precision).sum(axis=-1), tps[..., -1])


def _group_counts(ranked: RankedScores) -> tuple[FloatArray, FloatArray, NDArray[np.intp]]:
    """Positives and negatives per tie group (ascending scores) and each sorted position's group."""
    n = ranked.positive.shape[0]
    sizes = np.diff(np.r_[ranked.starts, n])
    group_of = np.repeat(np.arange(sizes.shape[0]), sizes)
    npos = np.bincount(group_of, weights=ranked.positive, minlength=sizes.shape[0]).astype(np.float64)
    return npos, sizes.astype(np.float64) - npos, group_of.astype(np.intp)


def auc_placements(ranked: RankedScores) -> tuple[float, FloatArray, FloatArray]:
    """DeLong's placement values, in sorted order: ``(auc, v10, v01)``.

    ``v10`` (one per sorted position, meaningful at positives): the share of negatives scored below the
    item, ties counting one half; ``v01`` (meaningful at negatives): the share of positives scored above
    it. The AUC is the mean of ``v10`` over positives and of ``v01`` over negatives (DeLong, DeLong &
    Clarke-Pearson 1988). O(N) after the sort.
    """
    npos, nneg, group_of = _group_counts(ranked)
    m, n = float(npos.sum()), float(nneg.sum())
    neg_below = np.cumsum(nneg) - nneg
    pos_above = m - np.cumsum(npos)
    v10 = ((neg_below + 0.5 * nneg) / n if n > 0 else np.full_like(nneg, np.nan))[group_of]
    v01 = ((pos_above + 0.5 * npos) / m if m > 0 else np.full_like(npos, np.nan))[group_of]
    auc = float(v10[ranked.positive].mean()) if m > 0 and n > 0 else float("nan")
    return auc, v10, v01


def _roc_auc_leave_one_out(ranked: RankedScores) -> FloatArray:
    """``AUC_(-i) = (m AUC - v10_i) / (m - 1)`` for a positive, ``(n AUC - v01_j) / (n - 1)`` for a negative."""
    auc, v10, v01 = auc_placements(ranked)
    pos = ranked.positive
    m, n = float(pos.sum()), float((~pos).sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(pos, (m * auc - v10) / (m - 1), (n * auc - v01) / (n - 1))
    return np.where(np.isfinite(out), out, np.nan)


def _average_precision_leave_one_out(ranked: RankedScores) -> FloatArray:
    """Average precision without each item, O(N) after the sort.

    With tie groups in descending order of score, ``tp_g`` positives and ``D_g`` items at or above group
    ``g`` (``TP_g`` positives), ``AP = (1/P) sum_g tp_g TP_g / D_g``. Leaving out a negative of group
    ``h`` lowers ``D_g`` by one for ``g >= h``; leaving out a positive also lowers ``tp_h``, ``TP_g``
    (``g >= h``) and ``P`` by one. Prefix and suffix sums give every leave-one-out value at once.
    """
    npos, nneg, group_of = _group_counts(ranked)
    tp = npos[::-1]  # descending order of score
    tot = (npos + nneg)[::-1]
    big_tp = np.cumsum(tp)
    big_d = np.cumsum(tot)
    p = float(big_tp[-1]) if big_tp.size else 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(tp > 0, tp * big_tp / big_d, 0.0)
        d1 = big_d - 1.0
        # d1 == 0 only for a first group of one item, which then has nothing left above it: its terms are 0
        live = d1 > 0
        neg_term = np.where(live & (tp > 0), tp * big_tp / np.where(live, d1, 1.0), 0.0)
        pos_rest = np.where(live & (tp > 0), tp * (big_tp - 1.0) / np.where(live, d1, 1.0), 0.0)
        pos_own = np.where(live & (tp > 1), (tp - 1.0) * (big_tp - 1.0) / np.where(live, d1, 1.0), 0.0)
    before = np.cumsum(c) - c  # sum over groups above h
    neg_after = np.cumsum(neg_term[::-1])[::-1]  # sum over g >= h
    pos_after = np.cumsum(pos_rest[::-1])[::-1] - pos_rest  # sum over g > h
    with np.errstate(divide="ignore", invalid="ignore"):
        leave_neg = (before + neg_after) / p if p > 0 else np.full_like(before, np.nan)
        leave_pos = (before + pos_own + pos_after) / (p - 1.0) if p > 1 else np.full_like(before, np.nan)
    g_desc = (npos.shape[0] - 1) - group_of  # each sorted position's group in descending order
    out = np.where(ranked.positive, leave_pos[g_desc], leave_neg[g_desc])
    return np.where(np.isfinite(out), out, np.nan)


# ----------------------------------------------------------------------------------------------------
# regression


def _values(truth: NDArray[Any], pred: NDArray[Any]) -> tuple[FloatArray, FloatArray]:
    if pred.ndim != 1:
        raise ValueError("`prediction` must be one number per item.")
    y = truth.astype(np.float64)
    p = pred.astype(np.float64)
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(p))):
        raise ValueError("`truth` and `prediction` must be finite.")
    return y, p


def _mae_stats(truth: NDArray[Any], pred: NDArray[Any], labels: NDArray[Any] | None) -> FloatArray:
    y, p = _values(truth, pred)
    return np.column_stack([np.abs(p - y), _ones(y.shape[0])])


def _squared_error_stats(truth: NDArray[Any], pred: NDArray[Any], labels: NDArray[Any] | None) -> FloatArray:
    y, p = _values(truth, pred)
    return np.column_stack([(p - y) ** 2, _ones(y.shape[0])])


def _rmse_finalize(pooled: FloatArray) -> FloatArray:
    return np.sqrt(_mean_finalize(pooled))


def _r2_stats(truth: NDArray[Any], pred: NDArray[Any], labels: NDArray[Any] | None) -> FloatArray:
    """Columns: squared error, y - c, (y - c)^2, count; ``c`` is the mean of ``truth``.

    Centring by a constant leaves the total sum of squares unchanged and avoids the cancellation of
    ``sum(y^2) - sum(y)^2 / n`` when the mean is large compared with the spread.
    """
    y, p = _values(truth, pred)
    yc = y - y.mean()
    return np.column_stack([(p - y) ** 2, yc, yc**2, _ones(y.shape[0])])


def _r2_finalize(pooled: FloatArray) -> FloatArray:
    sse, sy, syy, n = pooled[..., 0], pooled[..., 1], pooled[..., 2], pooled[..., 3]
    sst = syy - _safe_divide(sy * sy, n)
    return 1.0 - _safe_divide(sse, sst)


# ----------------------------------------------------------------------------------------------------
# the registry

#: The range of a proportion, a rate, an AUC or an AP.
UNIT: tuple[float, float] = (0.0, 1.0)

register(
    Metric(
        name="accuracy",
        higher_is_better=True,
        zero_one=True,
        rank_based=False,
        prediction_kind="label",
        needs_labels=False,
        value_range=UNIT,
        description="Fraction of items whose predicted label is the true label.",
        _statistics=_accuracy_stats,
        _finalize=_mean_finalize,
    )
)
register(
    Metric(
        name="micro_f1",
        higher_is_better=True,
        zero_one=True,
        rank_based=False,
        prediction_kind="label",
        needs_labels=False,
        value_range=UNIT,
        description="Micro-averaged F1; for one label per item it equals accuracy.",
        _statistics=_accuracy_stats,
        _finalize=_mean_finalize,
    )
)
register(
    Metric(
        name="macro_f1",
        higher_is_better=True,
        zero_one=False,
        rank_based=False,
        prediction_kind="label",
        needs_labels=True,
        value_range=UNIT,
        stratify_by_class=True,
        description="Unweighted mean of per-class F1 over the task's label set (an absent class counts 0).",
        _statistics=_class_stats,
        _finalize=_macro_f1_finalize,
    )
)
register(
    Metric(
        name="balanced_accuracy",
        higher_is_better=True,
        zero_one=False,
        rank_based=False,
        prediction_kind="label",
        needs_labels=True,
        value_range=UNIT,
        stratify_by_class=True,
        description="Unweighted mean of per-class recall over the task's label set (no item: counts 0).",
        _statistics=_class_stats,
        _finalize=_balanced_accuracy_finalize,
    )
)
register(
    Metric(
        name="cohen_kappa",
        higher_is_better=True,
        zero_one=False,
        rank_based=False,
        prediction_kind="label",
        needs_labels=True,
        value_range=(-1.0, 1.0),
        stratify_by_class=True,
        description="Cohen's kappa: agreement beyond chance, (p_o - p_e) / (1 - p_e).",
        _statistics=_class_stats,
        _finalize=_kappa_finalize,
    )
)
for _k in (3, 5):
    register(
        Metric(
            name=f"top{_k}_accuracy",
            higher_is_better=True,
            zero_one=True,
            rank_based=False,
            prediction_kind="ranked_labels",
            needs_labels=False,
            value_range=UNIT,
            description=f"Fraction of items whose true label is among the first {_k} ranked labels.",
            ranks=_k,
            _statistics=_make_top_k_stats(_k),
            _finalize=_mean_finalize,
        )
    )
register(
    Metric(
        name="roc_auc",
        higher_is_better=True,
        zero_one=False,
        rank_based=True,
        prediction_kind="score",
        needs_labels=False,
        value_range=UNIT,
        stratify_by_class=True,
        description="Area under the ROC curve (ties count one half).",
        _rank_replicates=_roc_auc_from_groups,
        _rank_leave_one_out=_roc_auc_leave_one_out,
    )
)
register(
    Metric(
        name="average_precision",
        higher_is_better=True,
        zero_one=False,
        rank_based=True,
        prediction_kind="score",
        needs_labels=False,
        value_range=UNIT,
        stratify_by_class=True,
        description="Average precision: sum over thresholds of recall increase times precision.",
        _rank_replicates=_average_precision_from_groups,
        _rank_leave_one_out=_average_precision_leave_one_out,
    )
)
register(
    Metric(
        name="log_loss",
        higher_is_better=False,
        zero_one=False,
        rank_based=False,
        prediction_kind="score",
        needs_labels=False,
        value_range=(0.0, np.inf),
        description="Mean binary cross-entropy of the positive-class probability (natural log).",
        _statistics=_log_loss_stats,
        _finalize=_mean_finalize,
        _scores_are_probabilities=True,
    )
)
register(
    Metric(
        name="brier",
        higher_is_better=False,
        zero_one=False,
        rank_based=False,
        prediction_kind="score",
        needs_labels=False,
        value_range=UNIT,
        description="Mean squared difference between the positive-class probability and the 0/1 truth.",
        _statistics=_brier_stats,
        _finalize=_mean_finalize,
        _scores_are_probabilities=True,
    )
)
register(
    Metric(
        name="mae",
        higher_is_better=False,
        zero_one=False,
        rank_based=False,
        prediction_kind="value",
        needs_labels=False,
        value_range=(0.0, np.inf),
        description="Mean absolute error.",
        _statistics=_mae_stats,
        _finalize=_mean_finalize,
    )
)
register(
    Metric(
        name="rmse",
        higher_is_better=False,
        zero_one=False,
        rank_based=False,
        prediction_kind="value",
        needs_labels=False,
        value_range=(0.0, np.inf),
        description="Root mean squared error.",
        _statistics=_squared_error_stats,
        _finalize=_rmse_finalize,
    )
)
register(
    Metric(
        name="r2",
        higher_is_better=True,
        zero_one=False,
        rank_based=False,
        prediction_kind="value",
        needs_labels=False,
        value_range=(-np.inf, 1.0),
        description="Coefficient of determination, 1 - SSE / SST.",
        _statistics=_r2_stats,
        _finalize=_r2_finalize,
    )
)
del _k


# ----------------------------------------------------------------------------------------------------
# vision: segmentation (decomposable over images) and detection (replicates from stats.vision)


def _class_ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _nanmean_classes(x: FloatArray) -> FloatArray:
    valid = ~np.isnan(x)
    total = np.where(valid, x, 0.0).sum(axis=-1)
    return _safe_divide(total, valid.sum(axis=-1).astype(np.float64))


def per_class_iou(pooled: ArrayLike) -> FloatArray:
    """IoU of every class from pooled segmentation statistics (..., 3C+1) -> (..., C).

    NaN for a class absent from both the truth and the prediction (mmsegmentation's 0/0)."""
    inter, pred, true, _ = _split_class(np.asarray(pooled, dtype=np.float64))
    return _class_ratio(inter, pred + true - inter)


def _miou_finalize(pooled: FloatArray) -> FloatArray:
    return _nanmean_classes(per_class_iou(pooled))


def _pixel_accuracy_finalize(pooled: FloatArray) -> FloatArray:
    inter, _, true, _ = _split_class(pooled)
    return _safe_divide(inter.sum(axis=-1), true.sum(axis=-1))


def _mean_class_accuracy_finalize(pooled: FloatArray) -> FloatArray:
    inter, _, true, _ = _split_class(pooled)
    return _nanmean_classes(_class_ratio(inter, true))


# mIoU: the percentile interval covered best in the simulation of docs/stats.md (all three methods within
# Monte Carlo error of each other); pixel and class accuracy were not simulated and keep the default.
for _name, _fin, _desc, _interval in (
    (
        "miou",
        _miou_finalize,
        "Mean IoU over classes in the truth or the prediction (mmsegmentation).",
        "percentile",
    ),
    (
        "pixel_accuracy",
        _pixel_accuracy_finalize,
        "aAcc: correctly labelled pixels over labelled pixels.",
        None,
    ),
    (
        "mean_class_accuracy",
        _mean_class_accuracy_finalize,
        "mAcc: mean over classes in the truth of the fraction of their pixels labelled right.",
        None,
    ),
):
    register(
        Metric(
            name=_name,
            higher_is_better=True,
            zero_one=False,
            rank_based=False,
            prediction_kind="masks",
            needs_labels=False,
            value_range=UNIT,
            description=_desc,
            task_kind="segmentation",
            default_interval=_interval,
            _finalize=_fin,
        )
    )

for _name, _desc in (
    ("coco_ap", "COCO AP@[.50:.05:.95], all areas, 100 detections (pycocotools' stats[0])."),
    ("coco_ap50", "COCO AP at IoU 0.50 (pycocotools' stats[1])."),
    ("coco_ap75", "COCO AP at IoU 0.75 (pycocotools' stats[2])."),
    ("coco_ap_small", "COCO AP for small objects, area <= 32^2 (pycocotools' stats[3])."),
    ("coco_ap_medium", "COCO AP for medium objects, 32^2 <= area <= 96^2 (pycocotools' stats[4])."),
    ("coco_ap_large", "COCO AP for large objects, area >= 96^2 (pycocotools' stats[5])."),
    ("coco_ar100", "COCO AR with 100 detections per image, all areas (pycocotools' stats[8])."),
    ("voc07_ap50", "PASCAL VOC2007 11-point AP at IoU > 0.5, difficult objects skipped."),
    ("voc_ap50", "PASCAL VOC2010+ all-point AP at IoU > 0.5, difficult objects skipped."),
):
    register(
        Metric(
            name=_name,
            higher_is_better=True,
            zero_one=False,
            rank_based=False,
            prediction_kind="boxes",
            needs_labels=False,
            value_range=UNIT,
            description=_desc,
            task_kind="detection",
            # AP is biased upward on finite test sets and the bootstrap doubles the bias: the basic
            # interval covers best (docs/stats.md, "Coverage of AP and mIoU intervals").
            default_interval="basic",
        )
    )
del _name, _desc, _fin, _interval


# ----------------------------------------------------------------------------------------------------
# text: corpus metrics of pooled per-segment statistics (stats.text; statistics from sacreBLEU, jiwer,
# seqeval via stats.text.extract, finalizers numpy-only)


def _text_registrations() -> None:
    from functools import partial

    from stats.text import finalize as text_finalize

    # value ranges: BLEU and chrF are percentages; TER, WER and CER count edits over the reference's length,
    # so a long hypothesis takes them past 100 (or 1); span F1 is a proportion
    percent, rate = (0.0, 100.0), (0.0, np.inf)
    ranges = {"bleu": percent, "chrf": percent, "chrf++": percent, "ter": rate, "wer": rate, "cer": rate,
              "span_f1": UNIT}  # fmt: skip
    specs: list[tuple[str, bool, PredictionKind, FinalizeFn, str]] = [
        (
            "bleu",
            True,
            "text",
            text_finalize.bleu_finalize,
            "Corpus BLEU, 0-100 (sacreBLEU 2.6.0 defaults: 13a tokens, exp smoothing, mixed case).",
        ),
        (
            "chrf",
            True,
            "text",
            text_finalize.chrf_finalize,
            "Corpus chrF, 0-100 (sacreBLEU: 6 character orders, beta 2, no whitespace).",
        ),
        (
            "chrf++",
            True,
            "text",
            partial(text_finalize.chrf_finalize, word_order=2),
            "Corpus chrF++, 0-100 (sacreBLEU: 6 character and 2 word orders, beta 2).",
        ),
        (
            "ter",
            False,
            "text",
            text_finalize.ter_finalize,
            "Corpus TER, 0-100, lower is better (sacreBLEU: tercom shifts, case-insensitive).",
        ),
        (
            "wer",
            False,
            "text",
            text_finalize.rate_finalize,
            "Word error rate: pooled edits over pooled reference words (jiwer 4.0.0 alignment).",
        ),
        (
            "cer",
            False,
            "text",
            text_finalize.rate_finalize,
            "Character error rate: pooled edits over pooled reference characters (jiwer 4.0.0).",
        ),
        (
            "span_f1",
            True,
            "tags",
            text_finalize.span_f1_finalize,
            "Micro span F1 of entity chunks (CoNLL; conlleval chunking unless strict mode is named).",
        ),
    ]
    for name, higher, kind, fn, desc in specs:
        register(
            Metric(
                name=name,
                higher_is_better=higher,
                zero_one=False,
                rank_based=False,
                prediction_kind=kind,
                needs_labels=False,
                description=desc,
                task_kind="text",
                value_range=ranges[name],
                _finalize=fn,
            )
        )


_text_registrations()


def truth_kind(metric: str | Metric) -> str:
    """What a metric's truth file holds: ``"label"``, ``"value"``, ``"references"`` (text segments, one
    or several per item) or ``"tags"`` (CoNLL tag sequences). Read from the metric, so a reader of truth
    files never branches on metric names."""
    m = metric if isinstance(metric, Metric) else get_metric(metric)
    if m.prediction_kind == "text":
        return "references"
    if m.prediction_kind in ("tags", "value"):
        return m.prediction_kind
    return "label"
