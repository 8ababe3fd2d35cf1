"""Score many entries of one task with one resample-weight matrix: common random numbers.

For a decomposable metric every entry's per-item statistics are stacked side by side into one matrix
``S`` (units x K*m; for the grouped bootstrap items are first pooled per group). Then every bootstrap
replicate of every entry is ``finalize(W @ S)``: one matrix product per fixed chunk of
:data:`~stats.resampling.CHUNK_RESAMPLES` rows of ``W``, so memory stays bounded and the numbers do not
depend on how the chunks are split across calls or workers.

Precision: when every statistic is an integer (0/1 correctness, class counts) and no pooled sum can
reach 2**24, the product runs in float32, where such sums are exact (so it is bit-identical to float64
and about twice as fast). Otherwise (squared errors, log losses...) it runs in float64. When ``S`` is
integer-valued and mostly zeros (per-image segmentation statistics, one-hot class counts), the product is
a sparse one: the same integer sums, so the same bits, several times faster.

BCa's acceleration needs leave-one-out (jackknife) values. For a decomposable metric they come from the
pooled totals minus one unit, ``finalize(T - S_i)``: O(N x m), not O(N^2) (Efron & Tibshirani 1993,
sec. 14.3 and 11.2). For ROC AUC and average precision they come in O(N) from the sorted scores
(DeLong's placement values for the AUC; prefix and suffix sums for AP). The grouped bootstrap leaves out
one group.

Edges (:mod:`stats.checks`): fewer than two units, a metric undefined on the test set itself and a point
value undefined for one entry are refused with a message that says which; undefined replicates are NaN
here and handled by the stated rule of :data:`stats.checks.UNDEFINED_RULE` where intervals and boards are
computed.

References
----------
.. [1] Efron, B. and Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman & Hall.
.. [2] Koehn, P. (2004). Statistical Significance Tests for Machine Translation Evaluation. EMNLP.
       (paired bootstrap: the same resamples for every system).
.. [3] Field, C. A. and Welsh, A. H. (2007). Bootstrapping clustered data. JRSS B 69(3).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from stats.checks import MIN_UNITS, check_statistics, check_weights, truth_problem, units_problem
from stats.intervals import DEFAULT_CONFIDENCE, Interval, IntervalMethod, interval_for
from stats.metrics import Metric, get_metric
from stats.resampling import (
    CHUNK_RESAMPLES,
    ResampleDesign,
    iter_unit_weight_chunks,
    resample_design,
)
from stats.signature import Signature

__all__ = [
    "DEFAULT_RESAMPLES",
    "EntryScore",
    "concatenate_chunks",
    "score_entries",
    "score_item_statistics",
]

#: Default number of bootstrap resamples (docs/adr/0002-default-interval.md).
DEFAULT_RESAMPLES = 10_000
_EXACT_FLOAT32 = 2**24
_PRODUCT_BLOCK_ELEMENTS = 2**24

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class EntryScore:
    """One entry's score on one task and metric.

    Attributes
    ----------
    name : str
        The entry's name (file name, submission id...).
    value : float
        The point estimate (every item weight 1).
    replicates : ndarray, shape (B,) or (rows,)
        The bootstrap replicates; for a chunk range, only those rows (see :func:`concatenate_chunks`).
    jackknife : ndarray, shape (n_units,)
        Leave-one-unit-out values (one item, or one group for the grouped bootstrap), for BCa.
    pooled : ndarray, shape (m,) or None
        The pooled statistics of the point estimate (decomposable metrics); for a ``zero_one`` metric
        ``pooled[0]`` is the number right and ``pooled[-1]`` the number of items.
    chunks : range
        The chunks of resamples that ``replicates`` holds.
    signature : Signature
        Metric, ``method="bootstrap"``, resamples, seed; ``extra`` tells the resampling design.
    """

    name: str
    value: float
    replicates: FloatArray
    jackknife: FloatArray
    pooled: FloatArray | None
    chunks: range
    signature: Signature

    def interval(
        self,
        *,
        method: IntervalMethod | None = None,
        confidence: float = DEFAULT_CONFIDENCE,
    ) -> Interval:
        """A confidence interval for this entry (see :func:`stats.intervals.interval_for`)."""
        return interval_for(self, method=method, confidence=confidence)


def _prepare_predictions(predictions: Sequence[ArrayLike] | ArrayLike) -> list[NDArray[Any]]:
    if isinstance(predictions, np.ndarray):
        return [predictions]
    preds = list(predictions)  # type: ignore[arg-type]
    if not preds:
        raise ValueError("`predictions` must hold at least one entry.")
    return [np.asarray(p) for p in preds]


def _pool_units(stats: FloatArray, design: ResampleDesign) -> FloatArray:
    if not design.grouped:
        return stats
    pooled = np.zeros((design.n_units, stats.shape[1]))
    np.add.at(pooled, design.unit_of_item, stats)
    return pooled


def _product_dtype(units_stats: FloatArray, design: ResampleDesign) -> type[np.floating[Any]]:
    if not np.array_equal(units_stats, np.round(units_stats)):
        return np.float64
    abs_stats = np.abs(units_stats)
    if design.grouped:
        bound = 255.0 * abs_stats.sum(axis=0).max(initial=0.0)  # a group weight is at most 255
    else:
        bound = design.n_units * abs_stats.max(initial=0.0)  # weights sum to n_units per resample
    return np.float32 if bound < _EXACT_FLOAT32 else np.float64


def _sparse_statistics(s_prod: NDArray[Any]) -> Any:
    """``S.T`` as a sparse matrix when ``S`` is mostly zeros and integer-valued, else None.

    Per-image segmentation statistics (3C + 1 columns, a dozen classes per image) and one-hot class
    counts are mostly zeros; a sparse product is then several times faster. Integer sums are exact in
    any order, so the replicates are bit-identical to the dense product's.
    """
    from scipy import sparse

    if s_prod.size < 50_000 or not np.array_equal(s_prod, np.round(s_prod)):
        return None
    if np.count_nonzero(s_prod) > 0.2 * s_prod.size:
        return None
    return sparse.csr_matrix(s_prod.T)


def _leave_one_out_weights(design: ResampleDesign, units: range) -> NDArray[np.uint8]:
    w = np.ones((len(units), design.n_units), dtype=np.uint8)
    w[np.arange(len(units)), np.asarray(units)] = 0
    return w


def score_entries(
    truth: ArrayLike,
    predictions: Sequence[ArrayLike],
    *,
    metric: str | Metric,
    labels: Sequence[Any] | None = None,
    names: Sequence[str] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    groups: ArrayLike | None = None,
    strata: ArrayLike | None = None,
    weights: NDArray[np.integer[Any]] | None = None,
    chunks: range | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    jackknife: bool = True,
) -> list[EntryScore]:
    """Point values, bootstrap replicates and jackknife values of K entries, paired by construction.

    Parameters
    ----------
    truth : array_like, shape (N,)
        Hidden labels or values, in the task's canonical item order.
    predictions : sequence of array_like
        One array per entry, aligned with ``truth`` (shape (N,), or (N, k) for ranked labels).
    metric : str or Metric
        Registry name or metric object.
    labels : sequence, optional
        The task's label set (required by metrics with ``needs_labels``).
    names : sequence of str, optional
        Names of the entries (default ``"entry-0"``...).
    resamples : int, default 10000
        Number of bootstrap resamples ``B``.
    seed : int, default 0
        The task's seed of ``W``.
    groups : array_like, shape (N,), optional
        Group of each item for the grouped (cluster) bootstrap.
    strata : array_like, shape (N,), optional
        Stratum of each item for the stratified bootstrap.
    weights : ndarray, shape (B, N), optional
        Explicit item counts instead of the task's ``W`` (for cross-checks); excludes ``seed``-based
        drawing, ``groups``, ``strata``, ``chunks`` and ``cache_dir``.
    chunks : range, optional
        Compute only these chunks of resamples (for splitting a large task across workers; concatenate
        the parts with :func:`concatenate_chunks`). The point value and jackknife are always complete.
    cache_dir : path, optional
        Where ``W`` is cached (see :func:`stats.resampling.unit_weights`).
    jackknife : bool, default True
        Compute leave-one-out values (needed by BCa only).

    Returns
    -------
    list of EntryScore
        In the order of ``predictions``.

    Examples
    --------
    >>> import numpy as np
    >>> from stats.engine import score_entries
    >>> truth = np.array([0, 1, 1, 0, 1, 1, 0, 1])
    >>> a, b = np.array([0, 1, 1, 0, 1, 0, 0, 1]), np.array([1, 1, 1, 0, 0, 0, 0, 1])
    >>> sa, sb = score_entries(truth, [a, b], metric="accuracy", resamples=1000, seed=1)
    >>> sa.value, sb.value, sa.replicates.shape
    (0.875, 0.625, (1000,))
    """
    metric_obj = metric if isinstance(metric, Metric) else get_metric(metric)
    if metric_obj.task_kind != "items":
        raise ValueError(
            f"`{metric_obj.name}` is a {metric_obj.task_kind} metric: score it with stats.vision "
            "(`detection_scores`, or `score_item_statistics` of segmentation statistics)."
        )
    truth_arr = np.asarray(truth)
    if truth_arr.ndim != 1 or truth_arr.shape[0] == 0:
        raise ValueError("`truth` must be a non-empty one-dimensional array.")
    n_items = truth_arr.shape[0]
    preds = _prepare_predictions(predictions)
    if names is None:
        names = [f"entry-{k}" for k in range(len(preds))]
    elif len(names) != len(preds):
        raise ValueError("`names` must have one name per entry of `predictions`.")

    problem = truth_problem(metric_obj, truth_arr, labels=labels)
    if problem is not None:
        raise ValueError(problem)

    design, span, chunk_iter, signature = _resampling(
        metric_obj.name,
        n_items,
        resamples=resamples,
        seed=seed,
        groups=groups,
        strata=strata,
        weights=weights,
        chunks=chunks,
        cache_dir=cache_dir,
    )
    if metric_obj.prediction_kind == "score" and labels is not None and len(labels) == 2:
        signature = signature.with_extra(positive=labels[1])

    if n_items < MIN_UNITS:
        raise ValueError(units_problem(n_items, grouped=False))
    if metric_obj.rank_based:
        out = _score_rank_based(
            metric_obj, truth_arr, preds, labels, names, design, span, chunk_iter, signature, jackknife
        )
    else:
        per_entry = [metric_obj.item_statistics(truth_arr, p, labels=labels) for p in preds]
        out = _score_decomposable(
            metric_obj, per_entry, names, design, span, chunk_iter, signature, jackknife
        )
    for score in out:
        if not np.isfinite(score.value):
            raise ValueError(
                f"{metric_obj.name} is undefined for '{score.name}' on this test set; no interval or rank "
                "can be given"
            )
    return out


def score_item_statistics(
    statistics: Sequence[ArrayLike],
    *,
    metric: str | Metric,
    names: Sequence[str] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    groups: ArrayLike | None = None,
    strata: ArrayLike | None = None,
    weights: NDArray[np.integer[Any]] | None = None,
    chunks: range | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    jackknife: bool = True,
) -> list[EntryScore]:
    """:func:`score_entries` from per-item statistics computed elsewhere (segmentation masks).

    Parameters
    ----------
    statistics : sequence of array_like, shape (N, m)
        One matrix per entry, rows in the task's item order, the layout ``metric.finalize`` reads (for
        ``miou`` and the other segmentation metrics, :func:`stats.vision.segmentation.image_statistics`
        per image).
    metric : str or Metric
        A decomposable metric (``finalize``).
    names, resamples, seed, groups, strata, weights, chunks, cache_dir, jackknife
        As in :func:`score_entries`.

    Returns
    -------
    list of EntryScore

    Examples
    --------
    >>> import numpy as np
    >>> from stats.metrics import get_metric
    >>> truth = np.array([0, 1, 1, 0, 1, 1, 0, 1])
    >>> s = get_metric("accuracy").item_statistics(truth, np.array([0, 1, 1, 0, 1, 0, 0, 1]))
    >>> s.shape  # per item: correct (0/1) and the item count
    (8, 2)
    >>> score_item_statistics([s], metric="accuracy", resamples=1000, seed=1)[0].value
    0.875
    """
    metric_obj = metric if isinstance(metric, Metric) else get_metric(metric)
    if metric_obj.rank_based or metric_obj.task_kind == "detection":
        raise ValueError(f"`{metric_obj.name}` is not decomposable: it has no per-item statistics.")
    per_entry = check_statistics(statistics)
    n_items = per_entry[0].shape[0]
    if names is None:
        names = [f"entry-{k}" for k in range(len(per_entry))]
    elif len(names) != len(per_entry):
        raise ValueError("`names` must have one name per entry of `statistics`.")
    design, span, chunk_iter, signature = _resampling(
        metric_obj.name,
        n_items,
        resamples=resamples,
        seed=seed,
        groups=groups,
        strata=strata,
        weights=weights,
        chunks=chunks,
        cache_dir=cache_dir,
    )
    return _score_decomposable(metric_obj, per_entry, names, design, span, chunk_iter, signature, jackknife)


def _resampling(
    metric_name: str,
    n_items: int,
    *,
    resamples: int,
    seed: int,
    groups: ArrayLike | None,
    strata: ArrayLike | None,
    weights: NDArray[np.integer[Any]] | None,
    chunks: range | None,
    cache_dir: str | os.PathLike[str] | None,
) -> tuple[ResampleDesign, range, Any, Signature]:
    """The resamples of a scoring: the design, the chunks to compute, their weights and the signature.

    Explicit ``weights`` (B x N counts) stand for the task's W (tests, oracles); otherwise W is drawn from
    the seed (grouped and stratified as asked), refusing fewer than two resampling units.
    """
    if weights is not None:
        if groups is not None or strata is not None or chunks is not None or cache_dir is not None:
            raise ValueError("`weights` excludes `groups`, `strata`, `chunks` and `cache_dir`.")
        w_explicit = check_weights(weights, n_items=n_items)
        design = resample_design(n_items, resamples=w_explicit.shape[0], seed=0)
        span = range(design.n_chunks)
        chunk_iter: Any = ((c, w_explicit[c * CHUNK_RESAMPLES : (c + 1) * CHUNK_RESAMPLES]) for c in span)
        signature = Signature(
            metric=metric_name, method="bootstrap", resamples=design.resamples, seed=None, confidence=None
        ).with_extra(weights="explicit")
        return design, span, chunk_iter, signature
    design = resample_design(n_items, resamples=resamples, seed=seed, groups=groups, strata=strata)
    too_few = units_problem(design.n_units, grouped=design.grouped)
    if too_few is not None:
        raise ValueError(too_few)
    span = range(design.n_chunks) if chunks is None else chunks
    chunk_iter = iter_unit_weight_chunks(design, chunks=chunks, cache_dir=cache_dir)
    signature = Signature(
        metric=metric_name, method="bootstrap", resamples=resamples, seed=seed, confidence=None
    ).with_extra(**design.describe())
    if chunks is not None:
        signature = signature.with_extra(chunks=f"{span.start}:{span.stop}")
    return design, span, chunk_iter, signature


def _score_decomposable(
    metric: Metric,
    per_entry: list[FloatArray],
    names: Sequence[str],
    design: ResampleDesign,
    span: range,
    chunk_iter: Any,
    signature: Signature,
    jackknife: bool,
) -> list[EntryScore]:
    k = len(per_entry)
    m = per_entry[0].shape[1]
    stacked = _pool_units(np.hstack(per_entry), design)  # (units, K*m)
    totals = stacked.sum(axis=0)
    points = metric.finalize(totals.reshape(k, m))

    # Columns equal in every entry (item counts, true-class counts) are multiplied once, not K times.
    cube = stacked.reshape(-1, k, m)
    shared = np.all(cube == cube[:, :1, :], axis=(0, 1))
    own = np.flatnonzero(~shared)
    product_cols = np.hstack([cube[:, 0, shared], cube[:, :, own].reshape(cube.shape[0], -1)])
    dtype = _product_dtype(product_cols, design)
    s_prod = np.ascontiguousarray(product_cols, dtype=dtype)
    s_sparse = _sparse_statistics(s_prod)
    n_shared = int(shared.sum())
    parts = []
    # rows of a chunk multiplied at once: the float copy of W stays at 2^24 elements (64 MiB in float32)
    # whatever N; below N = 65,536 that is the whole chunk. Fixed by N alone, so any split of the chunks
    # over workers multiplies the same blocks and gets the same bits.
    block = max(1, _PRODUCT_BLOCK_ELEMENTS // design.n_units)
    for _, w_chunk in chunk_iter:
        blocks = []
        for r in range(0, w_chunk.shape[0], block):
            w_block = w_chunk[r : r + block]
            if s_sparse is not None:  # (S.T @ W.T).T: the same integer sums, exact in either order
                blocks.append(np.asarray(s_sparse @ w_block.T.astype(dtype)).T.astype(np.float64))
            else:
                blocks.append((w_block.astype(dtype) @ s_prod).astype(np.float64))
        prod = np.concatenate(blocks)
        pooled = np.empty((prod.shape[0], k, m))
        pooled[:, :, shared] = prod[:, None, :n_shared]
        if own.size:
            pooled[:, :, own] = prod[:, n_shared:].reshape(prod.shape[0], k, own.shape[0])
        parts.append(metric.finalize(pooled))
    reps = np.concatenate(parts)  # (rows, K)

    # leave one unit out: pooled totals minus that unit's statistics, O(units x K x m)
    jack = metric.finalize((totals[None, :] - stacked).reshape(-1, k, m)) if jackknife else np.empty((0, k))
    return [
        EntryScore(
            name=names[j],
            value=float(points[j]),
            replicates=np.ascontiguousarray(reps[:, j]),
            jackknife=np.ascontiguousarray(jack[:, j]),
            pooled=totals.reshape(k, m)[j].copy(),
            chunks=span,
            signature=signature,
        )
        for j in range(k)
    ]


def _score_rank_based(
    metric: Metric,
    truth: NDArray[Any],
    preds: list[NDArray[Any]],
    labels: Sequence[Any] | None,
    names: Sequence[str],
    design: ResampleDesign,
    span: range,
    chunk_iter: Any,
    signature: Signature,
    jackknife: bool,
) -> list[EntryScore]:
    k = len(preds)
    ranked = [metric.rank_prepare(truth, p, labels=labels) for p in preds]
    ones = np.ones((1, design.n_items), dtype=np.uint8)
    points = [float(metric.rank_replicates(r, ones)[0]) for r in ranked]
    parts = []
    for _, w_chunk in chunk_iter:
        w_items = w_chunk[:, design.unit_of_item] if design.grouped else w_chunk
        parts.append(np.column_stack([metric.rank_replicates(r, w_items) for r in ranked]))
    reps = np.concatenate(parts)
    jack = np.empty((0 if not jackknife else design.n_units, k))
    closed = [None if design.grouped else metric.rank_leave_one_out(r) for r in ranked] if jackknife else []
    found = [c for c in closed if c is not None]
    if jackknife and len(found) == k:
        # leave one item out in O(N) per entry from the sorted scores (DeLong's placement values for AUC)
        jack[:] = np.column_stack(found)
    elif jackknife:
        for start in range(0, design.n_units, CHUNK_RESAMPLES):
            rows = range(start, min(start + CHUNK_RESAMPLES, design.n_units))
            w_loo = _leave_one_out_weights(design, rows)[:, design.unit_of_item]
            jack[start : rows.stop] = np.column_stack([metric.rank_replicates(r, w_loo) for r in ranked])
    return [
        EntryScore(
            name=names[j],
            value=points[j],
            replicates=np.ascontiguousarray(reps[:, j]),
            jackknife=np.ascontiguousarray(jack[:, j]),
            pooled=None,
            chunks=span,
            signature=signature,
        )
        for j in range(k)
    ]


def concatenate_chunks(parts: Sequence[EntryScore]) -> EntryScore:
    """Join one entry's scores computed on consecutive chunk ranges into the full score.

    Raises
    ------
    ValueError
        If the parts are not of one entry, or their chunk ranges are not consecutive from 0.
    """
    if not parts:
        raise ValueError("`parts` must not be empty.")
    ordered = sorted(parts, key=lambda p: p.chunks.start)
    expected = 0
    for p in ordered:
        if p.chunks.start != expected:
            raise ValueError("`parts` must cover consecutive chunk ranges starting at 0.")
        if p.name != ordered[0].name or p.value != ordered[0].value:
            raise ValueError("`parts` must all belong to one entry.")
        expected = p.chunks.stop
    first = ordered[0]
    extra = {key: val for key, val in first.signature.extra if key != "chunks"}
    signature = Signature(
        metric=first.signature.metric,
        method=first.signature.method,
        resamples=first.signature.resamples,
        seed=first.signature.seed,
        confidence=first.signature.confidence,
        version=first.signature.version,
        extra=tuple(sorted(extra.items())),
    )
    return EntryScore(
        name=first.name,
        value=first.value,
        replicates=np.concatenate([p.replicates for p in ordered]),
        jackknife=first.jackknife,
        pooled=first.pooled,
        chunks=range(expected),
        signature=signature,
    )
