"""Object detection: COCO and VOC average precision, exact under image-level resampling.

A bootstrap replicate of a detection metric for a count vector ``w`` (image ``i`` drawn ``w_i`` times) is
what the reference evaluator reports on the dataset in which image ``i`` appears ``w_i`` times, under two
conventions (docs/stats.md, "Detection"): copies of an image sort right after it in the task's image
order, and a group of tied detections of one class in one image that holds both a true and a false
positive is interleaved across copies (d1 d2 d1 d2 ...), as pycocotools orders it.

The work is split in two stages:

1. :meth:`DetectionTask.match` runs the per-image matching once per entry (it does not depend on the
   resample): COCO's greedy matching for the 10 IoU thresholds and 4 area ranges (crowd regions, ignored
   objects, 100 detections per image and class) and VOC's matching at IoU > 0.5 (difficult objects).
2. :func:`detection_replicates` re-accumulates for a chunk of resample weights: per class, detections are
   sorted once, weighted by their image's count, and the precision envelope is read at the recall
   thresholds exactly as pycocotools does (``searchsorted(tp / npig, recThrs, side="left")`` in floating
   point). Only true positives can move the envelope, so precision is evaluated at them alone: the work
   per resample grows with the number of matched objects, not the number of detections.

Stats: the 12 of ``COCOeval.summarize`` (AP, AP50, AP75, APs, APm, APl, AR1, AR10, AR100, ARs, ARm,
ARl), per-class AP, and VOC AP50 in the 2007 11-point and the 2010+ all-point forms.

Undefined values: a class without non-ignored objects in a resample is left out of the mean, as
pycocotools does. A resample with no object at all (in the area range of the stat) is undefined;
:func:`detection_strata` gives strata for :func:`stats.resampling.resample_design` under which this
cannot happen (every resample keeps the number of images holding objects of each area range), and
:func:`score_detection_entries` draws ``W`` with them. Explicit weights that make a headline stat
undefined are refused with an error, never returned as NaN.

References
----------
.. [1] Lin, T.-Y. et al. (2014). Microsoft COCO: Common Objects in Context. ECCV. (pycocotools
       ``COCOeval``, version 2.0.11: matching, accumulation, summarize.)
.. [2] Everingham, M. et al. (2010). The PASCAL Visual Object Classes (VOC) Challenge. IJCV 88(2).
       (devkit ``voc_eval``: 11-point AP for VOC2007, all-point AP from VOC2010.)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from stats.checks import check_weights
from stats.vision.detection_io import Detections, DetectionTruth

__all__ = [
    "AREA_RANGES",
    "COCO_STAT_NAMES",
    "DETECTION_METRICS",
    "IOU_THRESHOLDS",
    "RECALL_THRESHOLDS",
    "VOC07_THRESHOLDS",
    "DetectionTask",
    "MatchedEntry",
    "detection_per_class",
    "detection_point",
    "detection_replicates",
    "detection_scores",
    "detection_strata",
    "load_matched",
    "save_matched",
    "score_detection_entries",
]

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
IntpArray = NDArray[np.intp]

#: pycocotools' ``Params.iouThrs`` and ``recThrs`` (the same expressions, so the same floats).
IOU_THRESHOLDS: FloatArray = np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1, endpoint=True)
RECALL_THRESHOLDS: FloatArray = np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True)
#: all, small, medium, large: inclusive bounds, as pycocotools.
AREA_RANGES: tuple[tuple[float, float], ...] = (
    (0.0**2, 1e5**2),
    (0.0**2, 32.0**2),
    (32.0**2, 96.0**2),
    (96.0**2, 1e5**2),
)
AREA_NAMES = ("all", "small", "medium", "large")
MAX_DETS = (1, 10, 100)
#: VOC2007's ``np.arange(0., 1.1, 0.1)`` (its "0.3" is 0.30000000000000004).
VOC07_THRESHOLDS: FloatArray = np.arange(0.0, 1.1, 0.1)
#: COCOeval.summarize's 12 stats, in its order.
COCO_STAT_NAMES = ("AP", "AP50", "AP75", "APs", "APm", "APl", "AR1", "AR10", "AR100", "ARs", "ARm", "ARl")
#: Registry names of the headline detection metrics -> the stat they report.
DETECTION_METRICS: dict[str, str] = {
    "coco_ap": "AP",
    "coco_ap50": "AP50",
    "coco_ap75": "AP75",
    "coco_ap_small": "APs",
    "coco_ap_medium": "APm",
    "coco_ap_large": "APl",
    "coco_ar100": "AR100",
    "voc07_ap50": "VOC07",
    "voc_ap50": "VOC",
}
_T = IOU_THRESHOLDS.shape[0]
_A = len(AREA_RANGES)
_EPS = np.spacing(1)


# ----------------------------------------------------------------------------------------------------
# stage 1: matching (once per entry)


def _coco_iou(d: FloatArray, g: FloatArray, crowd: BoolArray) -> FloatArray:
    """pycocotools' ``bbIou`` (maskUtils.iou for boxes), element-wise over pairs, same operation order."""
    w = np.minimum(d[:, 2] + d[:, 0], g[:, 2] + g[:, 0]) - np.maximum(d[:, 0], g[:, 0])
    h = np.minimum(d[:, 3] + d[:, 1], g[:, 3] + g[:, 1]) - np.maximum(d[:, 1], g[:, 1])
    da = d[:, 2] * d[:, 3]
    ga = g[:, 2] * g[:, 3]
    inter = w * h
    union = np.where(crowd, da, da + ga - inter)
    ok = (w > 0) & (h > 0)
    out = np.zeros(d.shape[0])
    np.divide(inter, union, out=out, where=ok)
    return out


def _voc_iou(d: FloatArray, g: FloatArray) -> FloatArray:
    """VOC devkit's overlap on pixel-inclusive corners ``[x1, y1, x2, y2]`` (``x2 = x + w - 1``)."""
    ixmin = np.maximum(g[:, 0], d[:, 0])
    iymin = np.maximum(g[:, 1], d[:, 1])
    ixmax = np.minimum(g[:, 2], d[:, 2])
    iymax = np.minimum(g[:, 3], d[:, 3])
    iw = np.maximum(ixmax - ixmin + 1.0, 0.0)
    ih = np.maximum(iymax - iymin + 1.0, 0.0)
    inters = iw * ih
    uni = (
        (d[:, 2] - d[:, 0] + 1.0) * (d[:, 3] - d[:, 1] + 1.0)
        + (g[:, 2] - g[:, 0] + 1.0) * (g[:, 3] - g[:, 1] + 1.0)
        - inters
    )
    return inters / uni


def voc_corners(bbox: FloatArray) -> FloatArray:
    """``[x, y, w, h]`` -> VOC's pixel-inclusive ``[x1, y1, x2, y2]`` with ``x2 = x + w - 1``."""
    return np.column_stack(
        [bbox[:, 0], bbox[:, 1], bbox[:, 0] + bbox[:, 2] - 1.0, bbox[:, 1] + bbox[:, 3] - 1.0]
    )


def _group_edges(det_key: NDArray[np.int64], gt_key_sorted: NDArray[np.int64]) -> tuple[IntpArray, IntpArray]:
    """All (detection, ground truth) pairs with the same key; ground truths as positions in the sorted list."""
    lo = np.searchsorted(gt_key_sorted, det_key, side="left")
    hi = np.searchsorted(gt_key_sorted, det_key, side="right")
    counts = hi - lo
    det_e = np.repeat(np.arange(det_key.shape[0], dtype=np.intp), counts)
    starts = np.cumsum(counts) - counts
    gt_e = lo[det_e] + (np.arange(det_e.shape[0], dtype=np.intp) - starts[det_e])
    return det_e, gt_e.astype(np.intp)


@dataclass(frozen=True, eq=False)
class _Curves:
    """Per-class sorted detections and their labels, for one family of curves (COCO or VOC).

    Events are the detections of each class in pycocotools' accumulation order (score descending,
    stable over the task's image order, then the order within the image), classes concatenated.
    """

    class_start: IntpArray  # (K + 1,)
    image: IntpArray  # (n,)
    cand: BoolArray  # (A, n): detections that are false positives unless matched (in the area range)
    tp: BoolArray  # (A, T, n)
    nonfp: BoolArray  # (A, T, n): candidates that are matched (true positive or ignored)
    mixed: BoolArray  # (n,): in a tie group (class, image, score) holding a TP and an FP for some curve
    block: IntpArray  # (n,): first event of the event's tie group


def _curves(
    n_classes: int,
    category: IntpArray,
    image: IntpArray,
    score: FloatArray,
    rank: IntpArray,
    cand: BoolArray,
    tp: BoolArray,
    nonfp: BoolArray,
) -> _Curves:
    order = np.lexsort((rank, image, -score, category))
    cat_s, img_s, score_s = category[order], image[order], score[order]
    class_start = np.searchsorted(cat_s, np.arange(n_classes + 1)).astype(np.intp)
    cand_s, tp_s, nonfp_s = cand[:, order], tp[:, :, order], nonfp[:, :, order]
    n = order.shape[0]
    new = np.ones(n, dtype=bool)
    if n > 1:
        new[1:] = (cat_s[1:] != cat_s[:-1]) | (img_s[1:] != img_s[:-1]) | (score_s[1:] != score_s[:-1])
    starts = np.flatnonzero(new)
    block = np.repeat(starts, np.diff(np.append(starts, n))).astype(np.intp)
    mixed = np.zeros(n, dtype=bool)
    sizes = np.diff(np.append(starts, n))
    tied = np.flatnonzero(np.repeat(sizes > 1, sizes))  # only groups of two or more can be mixed
    if tied.size:
        sub_new = np.ones(tied.shape[0], dtype=bool)
        sub_new[1:] = block[tied][1:] != block[tied][:-1]
        sub_starts = np.flatnonzero(sub_new)
        fp_t = cand_s[:, None, tied] & ~nonfp_s[:, :, tied]
        has_tp = np.logical_or.reduceat(tp_s[:, :, tied].reshape(-1, tied.shape[0]), sub_starts, axis=1)
        has_fp = np.logical_or.reduceat(fp_t.reshape(-1, tied.shape[0]), sub_starts, axis=1)
        mixed_group = np.any(has_tp & has_fp, axis=0)
        mixed[tied] = np.repeat(mixed_group, np.diff(np.append(sub_starts, tied.shape[0])))
    return _Curves(class_start, img_s, cand_s, tp_s, nonfp_s, mixed, block)


@dataclass(frozen=True, eq=False)
class MatchedEntry:
    """One entry after the per-image matching: everything a resample needs, nothing it must recompute.

    Attributes
    ----------
    coco : _Curves
        COCO curves: 4 area ranges x 10 IoU thresholds, detections limited to 100 per image and class.
    voc : _Curves
        VOC curves: one (IoU > 0.5), every detection.
    recall_counts : scipy.sparse.csr_matrix, shape (N, 6 * T * K)
        Per image, true positives for AR1, AR10, AR100, ARs, ARm, ARl (threshold-major, then class).
    n_detections : int
        Detections in the file.
    """

    coco: _Curves
    voc: _Curves
    recall_counts: Any
    n_detections: int


class DetectionTask:
    """The ground truth of a detection task, prepared once; :meth:`match` prepares each entry.

    Parameters
    ----------
    truth : DetectionTruth
        From :func:`~stats.vision.detection_io.parse_coco_truth` or ``parse_voc_truth``.

    Examples
    --------
    >>> import numpy as np
    >>> from stats.vision import DetectionTask, Detections, DetectionTruth
    >>> truth = DetectionTruth(
    ...     image_ids=np.array([1, 2]), category_ids=np.array([1]), category_names=("cat",),
    ...     ann_ids=np.array([1, 2]), image=np.array([0, 1]), category=np.array([0, 0]),
    ...     bbox=np.array([[0.0, 0, 10, 10], [5, 5, 40, 40]]), area=np.array([100.0, 1600.0]),
    ...     iscrowd=np.zeros(2, bool), difficult=np.zeros(2, bool))
    >>> dets = Detections(image=np.array([0, 1]), category=np.array([0, 0]),
    ...     bbox=np.array([[0.0, 0, 10, 10], [50, 50, 10, 10]]), score=np.array([0.9, 0.8]))
    >>> task = DetectionTask(truth)
    >>> point = task.point(task.match(dets))
    >>> round(point["AP50"], 4), round(point["AR100"], 4)
    (0.505, 0.5)
    """

    def __init__(self, truth: DetectionTruth):
        self.truth = truth
        n, k = truth.n_images, truth.n_categories
        self.n_images, self.n_classes = n, k
        g = truth.ann_ids.shape[0]
        self._gorder = np.lexsort((np.arange(g), truth.category, truth.image)).astype(np.intp)
        gi, gc = truth.image[self._gorder], truth.category[self._gorder]
        self._gkey = gi.astype(np.int64) * k + gc
        self._gbox = truth.bbox[self._gorder]
        self._garea = truth.area[self._gorder]
        self._gcrowd = truth.iscrowd[self._gorder]
        self._gdiff = (truth.difficult | truth.iscrowd)[self._gorder]
        # ignored per area range: crowd, or area outside the inclusive range
        self._gign = np.stack(
            [self._gcrowd | (self._garea < lo) | (self._garea > hi) for lo, hi in AREA_RANGES]
        )  # (A, G)
        # non-ignored objects per image, per (area, class): (N, A*K)
        cols = (np.arange(_A)[:, None] * k + gc[None, :]).ravel()
        rows = np.tile(gi, _A)
        vals = (~self._gign).ravel().astype(np.float64)
        self.npig = sparse.csr_matrix((vals, (rows, cols)), shape=(n, _A * k))
        self.npig.sum_duplicates()
        vrows, vcols = gi[~self._gdiff], gc[~self._gdiff]
        self.npos = sparse.csr_matrix(
            (np.ones(vrows.shape[0]), (vrows, vcols)), shape=(n, k)
        )  # VOC: non-difficult (and non-crowd) objects
        self.npos.sum_duplicates()

    # ------------------------------------------------------------------------------------------------
    def match(self, detections: Detections) -> MatchedEntry:
        """Run the per-image matching of one entry (COCO and VOC); independent of the resample."""
        if detections.image.shape[0] and (
            detections.image.max() >= self.n_images or detections.category.max() >= self.n_classes
        ):
            raise ValueError("`detections` refer to images or categories outside the task.")
        coco = self._match_coco(detections)
        voc = self._match_voc(detections)
        return MatchedEntry(
            coco=coco[0], voc=voc, recall_counts=coco[1], n_detections=detections.n_detections
        )

    def _match_coco(self, dets: Detections) -> tuple[_Curves, Any]:
        k, n_img = self.n_classes, self.n_images
        d_all = dets.image.shape[0]
        order = np.lexsort((np.arange(d_all), -dets.score, dets.category, dets.image))
        key = dets.image[order].astype(np.int64) * k + dets.category[order]
        new = np.ones(d_all, dtype=bool)
        new[1:] = key[1:] != key[:-1]
        starts = np.flatnonzero(new)
        rank = np.arange(d_all) - np.repeat(starts, np.diff(np.append(starts, d_all)))
        keep = rank < MAX_DETS[-1]
        idx = order[keep]
        rank = rank[keep].astype(np.intp)
        key = key[keep]
        nd = idx.shape[0]
        box = dets.bbox[idx]
        area = box[:, 2] * box[:, 3]
        det_e, gt_e = _group_edges(key, self._gkey)
        iou = _coco_iou(box[det_e], self._gbox[gt_e], self._gcrowd[gt_e])
        good = iou >= min(IOU_THRESHOLDS[0], 1 - 1e-10)
        det_e, gt_e, iou = det_e[good], gt_e[good], iou[good]
        thr = np.minimum(IOU_THRESHOLDS, 1 - 1e-10)
        matched = np.zeros((_A, _T, nd), dtype=bool)
        mign = np.zeros((_A, _T, nd), dtype=bool)
        n_gt = self._gkey.shape[0]
        for a in range(_A):
            gign = self._gign[a]
            regular = ~gign[gt_e]
            o = np.lexsort((gt_e, iou, regular, det_e, rank[det_e]))
            de, ge, io = det_e[o], gt_e[o], iou[o]
            re = rank[de]
            avail = np.ones((_T, n_gt), dtype=bool)
            crowd_e = self._gcrowd[ge]
            bounds = np.flatnonzero(np.r_[True, re[1:] != re[:-1], True]) if de.shape[0] else np.array([0])
            for s, e in itertools.pairwise(bounds):
                dd, gg, ii = de[s:e], ge[s:e], io[s:e]
                elig = (ii[:, None] >= thr[None, :]) & (crowd_e[s:e, None] | avail[:, gg].T)
                pos = np.where(elig, np.arange(e - s)[:, None], -1)
                seg = np.flatnonzero(np.r_[True, dd[1:] != dd[:-1]])
                best = np.maximum.reduceat(pos, seg, axis=0)  # (S, T)
                hit_s, hit_t = np.nonzero(best >= 0)
                chosen = best[hit_s, hit_t]
                det_hit, gt_hit = dd[chosen], gg[chosen]
                matched[a, hit_t, det_hit] = True
                mign[a, hit_t, det_hit] = gign[gt_hit]
                avail[hit_t, gt_hit] = False
        in_range = np.stack([(area >= lo) & (area <= hi) for lo, hi in AREA_RANGES])  # (A, nd)
        tp = matched & ~mign
        nonfp = matched & in_range[:, None, :]
        img, cat = dets.image[idx], dets.category[idx]
        curves = _curves(k, cat, img, dets.score[idx], rank, in_range, tp, nonfp)
        # recall counts per image: AR1, AR10, AR100 (area all), ARs, ARm, ARl (100 detections)
        blocks = [tp[0] & (rank < 1), tp[0] & (rank < 10), tp[0], tp[1], tp[2], tp[3]]
        rows, cols = [], []
        for b, m in enumerate(blocks):
            t_idx, d_idx = np.nonzero(m)
            rows.append(img[d_idx])
            cols.append((b * _T + t_idx) * k + cat[d_idx])
        r_arr, c_arr = np.concatenate(rows), np.concatenate(cols)
        counts = sparse.csr_matrix(
            (np.ones(r_arr.shape[0]), (r_arr, c_arr)), shape=(n_img, len(blocks) * _T * k)
        )
        counts.sum_duplicates()
        return curves, counts

    def _match_voc(self, dets: Detections) -> _Curves:
        k = self.n_classes
        d_all = dets.image.shape[0]
        order = np.lexsort((np.arange(d_all), -dets.score, dets.category, dets.image))
        key = dets.image[order].astype(np.int64) * k + dets.category[order]
        gcorner = voc_corners(self._gbox)
        det_e, gt_e = _group_edges(key, self._gkey)
        ov = _voc_iou(voc_corners(dets.bbox[order])[det_e], gcorner[gt_e]) if det_e.size else np.zeros(0)
        # jmax: first ground truth (file order) with the largest overlap, per detection
        ovmax = np.full(d_all, -np.inf)
        jmax = np.full(d_all, -1, dtype=np.intp)
        if det_e.size:
            o = np.lexsort((gt_e, -ov, det_e))
            first = np.flatnonzero(np.r_[True, det_e[o][1:] != det_e[o][:-1]])
            ovmax[det_e[o][first]] = ov[o][first]
            jmax[det_e[o][first]] = gt_e[o][first]
        hit = ovmax > 0.5
        diff_hit = hit & self._gdiff[np.maximum(jmax, 0)]
        claim = hit & ~diff_hit
        tp = np.zeros(d_all, dtype=bool)
        # the first claimant of a ground truth, in the image's score order, is the true positive
        ci = np.flatnonzero(claim)
        if ci.size:
            _, first_claim = np.unique(jmax[ci], return_index=True)
            tp[ci[first_claim]] = True
        rank = np.arange(d_all) - np.searchsorted(key, key, side="left")
        cand = np.ones((1, d_all), dtype=bool)
        nonfp = (tp | diff_hit)[None, None, :]
        return _curves(
            k,
            dets.category[order],
            dets.image[order],
            dets.score[order],
            rank.astype(np.intp),
            cand,
            tp[None, None, :],
            nonfp,
        )

    # ------------------------------------------------------------------------------------------------
    def replicates(
        self, entry: MatchedEntry, weights: NDArray[Any], *, stats: Iterable[str] | None = None
    ) -> dict[str, FloatArray]:
        """Stats under each row of ``weights``; see :func:`detection_replicates`."""
        return detection_replicates(self, entry, weights, stats=stats)

    def point(self, entry: MatchedEntry) -> dict[str, Any]:
        """All stats on the test set itself; see :func:`detection_point`."""
        return detection_point(self, entry)


# ----------------------------------------------------------------------------------------------------
# stage 2: accumulation per chunk of resamples


def _expansion(
    curves: _Curves, lo: int, hi: int, cmax: int, mixed_col: IntpArray, n_mixed: int, n_images: int
) -> tuple[IntpArray, IntpArray]:
    """Event order and weight column of one class, with mixed tie groups repeated per copy."""
    ev = np.arange(lo, hi, dtype=np.intp)
    img = curves.image[lo:hi]
    mixed = curves.mixed[lo:hi]
    if cmax <= 1 or not mixed.any():
        return ev, img
    rep = np.where(mixed, cmax, 1)
    e_rep = np.repeat(np.arange(hi - lo), rep)
    c_rep = np.arange(e_rep.shape[0]) - np.repeat(np.cumsum(rep) - rep, rep)
    block = curves.block[lo:hi][e_rep]
    o = np.lexsort((e_rep, c_rep, block))
    e_rep, c_rep = e_rep[o], c_rep[o]
    m = mixed[e_rep]
    col = np.where(m, n_images + c_rep * n_mixed + mixed_col[img[e_rep]], img[e_rep])
    return (ev[e_rep]).astype(np.intp), col.astype(np.intp)


def _reached(tp: FloatArray, total: FloatArray, thresholds: FloatArray) -> NDArray[np.int64]:
    """How many ``thresholds`` each point's recall reaches, in pycocotools' floating point.

    ``tp`` (B, m) holds cumulative true positives at the m points of a curve, ``total`` (B,) the
    objects. The recall ``tp / total`` is compared with each threshold as ``searchsorted(rc, recThrs,
    side="left")`` does (``rc >= thr``; 7/10 does not reach ``recThrs[70] = 0.7000000000000001``).
    Recall is non-decreasing along each row, so threshold ``r`` is first reached at the first point
    whose count exceeds ``r``; pycocotools reads the precision envelope there. The thresholds are evenly
    spaced, so the count is estimated arithmetically and corrected by exact comparisons.
    """
    rc = tp / total[:, None]
    last = thresholds.shape[0] - 1
    step = (thresholds[-1] - thresholds[0]) / last
    k = np.clip(np.floor((rc - thresholds[0]) / step), 0, last).astype(np.intp)
    for _ in range(2):
        k = np.where((thresholds[k] > rc) & (k > 0), k - 1, k)
        up = np.minimum(k + 1, last)
        k = np.where((up > k) & (thresholds[up] <= rc), up, k)
    return np.where(thresholds[k] <= rc, k + 1, 0).astype(np.int64)


def _count_table(totals: FloatArray, thresholds: FloatArray) -> tuple[NDArray[np.int16], IntpArray]:
    """:func:`_reached` for every integer count ``0..max(totals)`` of every distinct total.

    Returns the table (distinct totals, max + 1) and each row's index in it; the count at a point is
    then one lookup ``table[index[b], tp]`` instead of a division and comparisons per point.
    """
    uniq, inv = np.unique(totals, return_inverse=True)
    vmax = int(uniq.max(initial=0.0))
    grid = np.broadcast_to(np.arange(vmax + 1, dtype=np.float64), (uniq.shape[0], vmax + 1))
    safe = np.where(uniq > 0, uniq, 1.0)
    return _reached(grid, safe, thresholds).astype(np.int16), inv.astype(np.intp)


def _first_reaching(tp: FloatArray, total: FloatArray, thresholds: FloatArray) -> IntpArray:
    """Per row ``b`` and threshold ``r``, the first point ``j`` with ``tp[b, j] / total[b] >=
    thresholds[r]`` (``m`` where none): pycocotools' ``searchsorted(rc, recThrs, side="left")``."""
    cnt = _reached(tp, total, thresholds)  # (B, m)
    return (cnt[:, :, None] <= np.arange(thresholds.shape[0])[None, None, :]).sum(axis=1).astype(np.intp)


def _envelope_sum(cnt: NDArray[np.integer[Any]], env: FloatArray) -> FloatArray:
    """Sum over thresholds of the envelope at the first point reaching each: (B, m) -> (B,)."""
    gained = cnt.copy()
    gained[:, 1:] -= cnt[:, :-1]
    return np.einsum("bm,bm->b", gained, env)


def _gather(w_rows: NDArray[Any], cols: IntpArray) -> FloatArray:
    """``W[:, cols]`` as a C-contiguous (B, m) array, gathered from the rows of ``W.T`` (much faster)."""
    return np.ascontiguousarray(w_rows[cols].T)


def _evaluate_curve(
    w_rows: NDArray[Any],
    col: IntpArray,
    pc_at_tp: NDArray[Any],
    tp_pos: IntpArray,
    extra_pos: IntpArray,
    missing_pos: IntpArray,
) -> tuple[FloatArray, FloatArray]:
    """Weighted cumulative true and false positives at each true positive, (B, m) float64 each.

    ``w_rows`` (columns, B) holds the weight of each weight column per resample and ``col`` each event's
    column; ``pc_at_tp`` (B, m) the cumulative weight, up to each true positive, of the candidate events
    (false positives unless matched). The matched candidates are the true positives, plus ``extra_pos``
    (candidates matched to an ignored object), minus ``missing_pos`` (true positives outside the area
    range): both are few, so false positives cost one cumulative sum over the true positives.
    """
    tp = np.cumsum(_gather(w_rows, col[tp_pos]), axis=1)
    fp = pc_at_tp - tp
    for pos, sign in ((extra_pos, -1.0), (missing_pos, 1.0)):
        if pos.size == 0:
            continue
        cum = np.cumsum(_gather(w_rows, col[pos]), axis=1)
        j = np.searchsorted(pos, tp_pos, side="right") - 1
        first = int(np.searchsorted(j, 0))  # j is non-decreasing: points before the first of ``pos``
        if first < j.shape[0]:
            fp[:, first:] += sign * cum[:, j[first:]]
    return tp, fp


def _candidates_at(w_rows: NDArray[Any], col: IntpArray, cand: BoolArray, points: IntpArray) -> NDArray[Any]:
    """Cumulative weight of the candidate events up to each of ``points`` (sorted positions), (B, m).

    One sparse product: the events between consecutive points are summed per weight column, so the
    cost is one pass over the events' columns, not over events x resamples.
    """
    upto = int(points[-1]) + 1
    seg = np.searchsorted(points, np.arange(upto), side="left")
    keep = cand[:upto]
    m = sparse.csr_matrix(
        (np.ones(int(keep.sum()), dtype=w_rows.dtype), (seg[keep], col[:upto][keep])),
        shape=(points.shape[0], w_rows.shape[0]),
    )
    return np.cumsum(np.ascontiguousarray((m @ w_rows).T), axis=1)


def _reverse_cummax(x: FloatArray) -> FloatArray:
    """Precision envelope: running maximum from the last point back, along axis 1."""
    return np.maximum.accumulate(x[:, ::-1], axis=1)[:, ::-1]


_ALL_STATS = (*COCO_STAT_NAMES, "VOC07", "VOC")


def _needed(stats: Iterable[str] | None) -> set[str]:
    if stats is None:
        return set(_ALL_STATS) | {"per_class_AP"}
    wanted = set(stats)
    unknown = wanted - set(_ALL_STATS) - {"per_class_AP"}
    if unknown:
        raise ValueError(
            f"`stats` must be among {', '.join(_ALL_STATS)}, per_class_AP (got {sorted(unknown)})."
        )
    return wanted


def detection_replicates(
    task: DetectionTask,
    entry: MatchedEntry,
    weights: NDArray[Any],
    *,
    stats: Iterable[str] | None = None,
) -> dict[str, FloatArray]:
    """Detection stats under each row of ``weights``: what pycocotools / VOC report on the duplicated set.

    Parameters
    ----------
    task : DetectionTask
    entry : MatchedEntry
        From :meth:`DetectionTask.match`.
    weights : ndarray of non-negative integers, shape (B, N)
        Image counts (a chunk of rows of ``W``; a row of ones is the test set itself).
    stats : iterable of str, optional
        Which of ``COCO_STAT_NAMES``, ``"VOC07"``, ``"VOC"``, ``"per_class_AP"`` to compute (default all).

    Returns
    -------
    dict
        Stat name -> (B,) float64; ``"per_class_AP"`` -> (B, K). NaN where undefined: a stat whose
        resample holds no non-ignored object in its area range (pycocotools reports -1 there), a class
        without objects in the resample (per-class AP).
    """
    w = check_weights(weights, n_items=task.n_images, min_rows=0)
    need = _needed(stats)
    wf = w.astype(np.float64)
    npig = np.asarray((task.npig.T @ wf.T).T).reshape(w.shape[0], _A, task.n_classes)  # (B, A, K)
    out = _recall_stats(entry, wf, npig, need)
    ap_curves = _ap_curves_needed(need)
    acc = _APSums.empty(w.shape[0], task.n_classes)
    npos = (
        np.asarray((task.npos.T @ wf.T).T) if acc.voc_needed(need) else np.zeros((w.shape[0], task.n_classes))
    )
    if ap_curves:
        _accumulate_family(acc, "coco", entry.coco, w, ap_curves, totals=npig)
    if acc.voc_needed(need):
        _accumulate_family(acc, "voc", entry.voc, w, [(0, 0)], totals=npos)
    out.update(_ap_stats(acc, need, coco=bool(ap_curves)))
    return {key: out[key] for key in (*_ALL_STATS, "per_class_AP") if key in out}


_AR_NAMES = ("AR1", "AR10", "AR100", "ARs", "ARm", "ARl")
_AR_AREA = (0, 0, 0, 1, 2, 3)
_AP_AREAS = (("APs", 1), ("APm", 2), ("APl", 3))


def _recall_stats(
    entry: MatchedEntry, wf: FloatArray, npig: FloatArray, need: set[str]
) -> dict[str, FloatArray]:
    """Recall is decomposable: AR = mean over thresholds and classes with objects of ``W @ tp / W @ npig``."""
    out: dict[str, FloatArray] = {}
    if not need & set(_AR_NAMES):
        return out
    b, k = npig.shape[0], npig.shape[2]
    tpc = np.asarray((entry.recall_counts.T @ wf.T).T).reshape(b, len(_AR_NAMES), _T, k)
    for i, name in enumerate(_AR_NAMES):
        if name not in need:
            continue
        den = npig[:, _AR_AREA[i], :]  # (B, K)
        valid = den > 0
        rec = np.where(valid[:, None, :], tpc[:, i] / np.where(valid, den, 1.0)[:, None, :], 0.0)
        cnt = valid.sum(axis=1) * _T
        out[name] = np.where(cnt > 0, rec.sum(axis=(1, 2)) / np.maximum(cnt, 1), np.nan)
    return out


def _ap_curves_needed(need: set[str]) -> list[tuple[int, int]]:
    """The (area, IoU threshold) precision curves the wanted COCO AP stats read."""
    ap_curves: list[tuple[int, int]] = []
    if need & {"AP", "per_class_AP"}:
        ap_curves += [(0, t) for t in range(_T)]
    else:
        if "AP50" in need:
            ap_curves.append((0, 0))
        if "AP75" in need:
            ap_curves.append((0, 5))
    for name, a in _AP_AREAS:
        if name in need:
            ap_curves += [(a, t) for t in range(_T)]
    return ap_curves


@dataclass
class _APSums:
    """Per resample and class: COCO's summed interpolated precision per (area, threshold), VOC07's and
    VOC's AP; NaN where the class has no object in the resample."""

    qsum: FloatArray  # (B, A, T, K)
    voc07: FloatArray  # (B, K)
    vocall: FloatArray  # (B, K)

    @classmethod
    def empty(cls, b: int, k: int) -> _APSums:
        return cls(np.full((b, _A, _T, k), np.nan), np.full((b, k), np.nan), np.full((b, k), np.nan))

    @staticmethod
    def voc_needed(need: set[str]) -> bool:
        return bool(need & {"VOC07", "VOC"})


def _accumulate_family(
    acc: _APSums,
    fam: str,
    curves: Any,
    w: NDArray[Any],
    curve_list: list[tuple[int, int]],
    *,
    totals: FloatArray,
) -> None:
    """Every class's precision curves of one family (``"coco"`` or ``"voc"``) under every resample."""
    n = w.shape[1]
    mixed_imgs = np.unique(curves.image[curves.mixed])
    cmax = int(w[:, mixed_imgs].max()) if mixed_imgs.size else 0
    mixed_col = np.full(n, -1, dtype=np.intp)
    mixed_col[mixed_imgs] = np.arange(mixed_imgs.shape[0])
    dtype = np.float64  # counts are integers: every sum is exact below 2**53
    w_aug = w.astype(dtype)
    if cmax > 1:
        w_aug = np.hstack([w_aug, *[(w[:, mixed_imgs] > c).astype(dtype) for c in range(cmax)]])
    w_rows = np.ascontiguousarray(w_aug.T)  # (columns, B) for the sparse products
    areas = sorted({a for a, _ in curve_list})
    for c in range(totals.shape[-1]):
        lo, hi = int(curves.class_start[c]), int(curves.class_start[c + 1])
        _mark_defined(acc, fam, c, areas, totals)
        if hi == lo:
            continue
        ev, col = _expansion(curves, lo, hi, cmax, mixed_col, mixed_imgs.shape[0], n)
        _accumulate_class(acc, fam, c, curves, ev, col, w_rows, curve_list, areas, totals)


def _mark_defined(acc: _APSums, fam: str, c: int, areas: list[int], totals: FloatArray) -> None:
    """AP 0 (not NaN) wherever class ``c`` has objects: a class without detections scores 0 there."""
    if fam == "coco":
        valid_c = totals[:, :, c] > 0  # (B, A)
        for a in areas:
            acc.qsum[valid_c[:, a], a, :, c] = 0.0
    else:
        valid_v = totals[:, c] > 0
        acc.voc07[valid_v, c] = 0.0
        acc.vocall[valid_v, c] = 0.0


def _accumulate_class(
    acc: _APSums,
    fam: str,
    c: int,
    curves: Any,
    ev: IntpArray,
    col: IntpArray,
    w_rows: NDArray[Any],
    curve_list: list[tuple[int, int]],
    areas: list[int],
    totals: FloatArray,
) -> None:
    """Class ``c``'s AP of every curve of ``curve_list`` under every resample, into ``acc``."""
    tp_ev = curves.tp[:, :, ev]
    union = {a: np.flatnonzero(tp_ev[a, [t for aa, t in curve_list if aa == a]].any(axis=0)) for a in areas}
    pcs = {a: _candidates_at(w_rows, col, curves.cand[a, ev], union[a]) for a in areas if union[a].size}
    tables = {}
    for a in areas if fam == "coco" else [0]:
        tot_a = totals[:, a, c] if fam == "coco" else totals[:, c]
        tables[a] = _count_table(tot_a, RECALL_THRESHOLDS if fam == "coco" else VOC07_THRESHOLDS)
    for a, t in curve_list:
        tp_pos = np.flatnonzero(tp_ev[a, t])
        if tp_pos.size == 0:
            continue
        tot = totals[:, a, c] if fam == "coco" else totals[:, c]
        rows = tot > 0
        if not rows.any():
            continue
        tp_m, nf_m = tp_ev[a, t], curves.nonfp[a, t, ev]
        extra_pos = np.flatnonzero(nf_m & ~tp_m)
        missing_pos = np.flatnonzero(tp_m & ~nf_m)
        pc_at_tp = pcs[a][:, np.searchsorted(union[a], tp_pos)]
        tp, fp = _evaluate_curve(w_rows, col, pc_at_tp, tp_pos, extra_pos, missing_pos)
        table, inv = tables[a]
        cnt = table[inv[:, None], tp.astype(np.intp)]
        if fam == "coco":
            env = _reverse_cummax(tp / (fp + tp + _EPS))
            acc.qsum[rows, a, t, c] = _envelope_sum(cnt, env)[rows]
        else:
            env = _reverse_cummax(tp / np.maximum(tp + fp, np.finfo(np.float64).eps))
            ap07 = _envelope_sum(cnt, env) / 11.0
            rec = tp / np.where(rows, tot, 1.0)[:, None]
            drec = rec.copy()
            drec[:, 1:] -= rec[:, :-1]
            acc.voc07[rows, c] = ap07[rows]
            acc.vocall[rows, c] = np.einsum("bm,bm->b", drec, env)[rows]


def _mean_valid(x: FloatArray, axis: tuple[int, ...]) -> FloatArray:
    """Mean over ``axis`` of the defined (non-NaN) elements; NaN where none is."""
    valid = ~np.isnan(x)
    cnt = valid.sum(axis=axis)
    total = np.where(valid, x, 0.0).sum(axis=axis)
    return np.where(cnt > 0, total / np.maximum(cnt, 1), np.nan)


def _ap_stats(acc: _APSums, need: set[str], *, coco: bool) -> dict[str, FloatArray]:
    """The wanted AP stats from the per-class sums (means over the classes with objects)."""
    out: dict[str, FloatArray] = {}
    if coco:
        ap_t = acc.qsum / RECALL_THRESHOLDS.shape[0]  # (B, A, T, K): AP per area, threshold and class
        if "AP" in need:
            out["AP"] = _mean_valid(ap_t[:, 0], (1, 2))
        if "AP50" in need:
            out["AP50"] = _mean_valid(ap_t[:, 0, 0], (1,))
        if "AP75" in need:
            out["AP75"] = _mean_valid(ap_t[:, 0, 5], (1,))
        for name, a in _AP_AREAS:
            if name in need:
                out[name] = _mean_valid(ap_t[:, a], (1, 2))
        if "per_class_AP" in need:
            out["per_class_AP"] = _mean_valid(ap_t[:, 0], (1,))
    if "VOC07" in need:
        out["VOC07"] = _mean_valid(acc.voc07, (1,))
    if "VOC" in need:
        out["VOC"] = _mean_valid(acc.vocall, (1,))
    return out


def detection_point(task: DetectionTask, entry: MatchedEntry) -> dict[str, Any]:
    """Every stat on the test set: the 12 COCO stats, ``VOC07``, ``VOC`` (float, or None if undefined,
    where pycocotools prints -1) and ``per_class_AP`` (list, None for a class without objects)."""
    reps = detection_replicates(task, entry, np.ones((1, task.n_images), dtype=np.uint8))
    out: dict[str, Any] = {}
    for key, val in reps.items():
        if key == "per_class_AP":
            out[key] = [None if np.isnan(v) else float(v) for v in val[0]]
        else:
            out[key] = None if np.isnan(val[0]) else float(val[0])
    return out


def detection_strata(truth: DetectionTruth) -> NDArray[np.int64]:
    """Stratum of each image for a resampling under which every detection stat stays defined.

    The stratum is the set of area ranges (all, small, medium, large) in which the image holds a
    non-crowd object, as a bit mask (0..15). A stratified bootstrap keeps the number of images of each
    stratum, so every area range (and VOC's non-difficult objects, a subset of "all") that has objects
    in the test set has objects in every resample.
    """
    n = truth.n_images
    mask = np.zeros(n, dtype=np.int64)
    for a, (lo, hi) in enumerate(AREA_RANGES):
        ok = ~truth.iscrowd & (truth.area >= lo) & (truth.area <= hi)
        has = np.zeros(n, dtype=bool)
        has[truth.image[ok]] = True
        mask |= has.astype(np.int64) << a
    voc_ok = ~(truth.iscrowd | truth.difficult)
    has_voc = np.zeros(n, dtype=bool)
    has_voc[truth.image[voc_ok]] = True
    return mask | (has_voc.astype(np.int64) << _A)


def stat_for_metric(metric: str) -> str:
    """The stat of :func:`detection_replicates` behind a registry name (``"coco_ap"`` -> ``"AP"``)."""
    try:
        return DETECTION_METRICS[metric]
    except KeyError:
        raise ValueError(
            f"`metric` must be one of {', '.join(DETECTION_METRICS)} (got {metric!r})."
        ) from None


def _check_defined(values: FloatArray, stat: str, what: str) -> None:
    if np.isnan(values).any():
        raise ValueError(
            f"{stat} is undefined in {what}: it holds no non-ignored object in the stat's area range. "
            "Draw the weights with `detection_strata(truth)` as strata."
        )


# ----------------------------------------------------------------------------------------------------
# scoring entries with the task's W (the engine's EntryScore, so intervals and boards take them as is)


def detection_scores(
    task: DetectionTask,
    entries: Sequence[MatchedEntry],
    *,
    metrics: Sequence[str],
    names: Sequence[str] | None = None,
    resamples: int = 10_000,
    seed: int = 0,
    weights: NDArray[Any] | None = None,
    chunks: range | None = None,
    cache_dir: Any = None,
    jackknife: bool = False,
) -> dict[str, list[Any]]:
    """Point values and bootstrap replicates of several detection metrics for K entries, paired.

    One pass over the chunks of ``W`` computes every requested metric of every entry, so six AP stats
    cost little more than one.

    Parameters
    ----------
    task : DetectionTask
    entries : sequence of MatchedEntry
        From :meth:`DetectionTask.match`, one per entry.
    metrics : sequence of str
        Registry names (``"coco_ap"``, ``"coco_ap50"``, ..., ``"voc_ap50"``; see
        :data:`DETECTION_METRICS`).
    names : sequence of str, optional
        Entry names (default ``"entry-0"``...).
    resamples, seed : int
        ``B`` and the task's seed. ``W`` is drawn stratified by :func:`detection_strata`, so no resample
        loses every object of an area range.
    weights : ndarray (B, N), optional
        Explicit image counts instead (cross-checks); a row that leaves a metric undefined is refused.
    chunks : range, optional
        Only these chunks of :data:`~stats.resampling.CHUNK_RESAMPLES` resamples (split across workers;
        join with :func:`stats.engine.concatenate_chunks`).
    cache_dir : path, optional
        Cache of ``W`` (see :func:`stats.resampling.unit_weights`).
    jackknife : bool, default False
        Also compute the N leave-one-image-out values BCa needs (costs N more replicates).

    Returns
    -------
    dict
        Metric name -> list of :class:`stats.engine.EntryScore`, in the order of ``entries``.

    Raises
    ------
    ValueError
        If a metric is undefined on the test set (for example ``coco_ap_small`` without small objects),
        or in a resample of explicit ``weights``.
    """
    from stats.engine import EntryScore
    from stats.signature import Signature

    if not entries:
        raise ValueError("`entries` must hold at least one entry.")
    stats = [stat_for_metric(m) for m in metrics]
    if names is None:
        names = [f"entry-{j}" for j in range(len(entries))]
    elif len(names) != len(entries):
        raise ValueError("`names` must have one name per entry.")
    points = _detection_points(task, entries, metrics, stats)
    chunk_iter, span, base = _detection_chunks(
        task, weights=weights, chunks=chunks, cache_dir=cache_dir, resamples=resamples, seed=seed
    )
    parts = _detection_chunk_replicates(task, entries, stats, chunk_iter)
    jack = (
        _detection_jackknife(task, entries, stats)
        if jackknife
        else {s: [np.empty(0) for _ in entries] for s in stats}
    )
    out: dict[str, list[Any]] = {}
    for m, s in zip(metrics, stats, strict=True):
        sig = Signature(
            metric=m,
            method=base.method,
            resamples=base.resamples,
            seed=base.seed,
            confidence=None,
            extra=base.extra,
        )
        out[m] = [
            EntryScore(
                name=names[j],
                value=float(points[j][s][0]),
                replicates=np.concatenate(parts[s][j]),
                jackknife=jack[s][j],
                pooled=None,
                chunks=span,
                signature=sig,
            )
            for j in range(len(entries))
        ]
    return out


def _detection_points(
    task: DetectionTask, entries: Sequence[MatchedEntry], metrics: Sequence[str], stats: list[str]
) -> list[dict[str, FloatArray]]:
    """Every entry's stats on the test set; a metric undefined there is refused."""
    n = task.n_images
    points = [detection_replicates(task, e, np.ones((1, n), dtype=np.uint8), stats=stats) for e in entries]
    for m, s in zip(metrics, stats, strict=True):
        for e_point in points:
            if np.isnan(e_point[s][0]):
                raise ValueError(
                    f"`{m}` is undefined on this test set: it holds no object in the stat's area range."
                )
    return points


def _detection_chunks(
    task: DetectionTask,
    *,
    weights: NDArray[Any] | None,
    chunks: range | None,
    cache_dir: Any,
    resamples: int,
    seed: int,
) -> tuple[Any, range, Any]:
    """The chunks of ``W`` to score (explicit ``weights``, or the task's stratified design), their range
    and the signature they share."""
    from stats.resampling import CHUNK_RESAMPLES, iter_unit_weight_chunks, resample_design
    from stats.signature import Signature

    n = task.n_images
    if weights is not None:
        if chunks is not None or cache_dir is not None:
            raise ValueError("`weights` excludes `chunks` and `cache_dir`.")
        w_explicit = check_weights(weights, n_items=n)
        chunk_iter: Any = (
            (c, w_explicit[c * CHUNK_RESAMPLES : (c + 1) * CHUNK_RESAMPLES])
            for c in range(-(-w_explicit.shape[0] // CHUNK_RESAMPLES))
        )
        span = range(-(-w_explicit.shape[0] // CHUNK_RESAMPLES))
        base = Signature(
            metric="", method="bootstrap", resamples=w_explicit.shape[0], seed=None, confidence=None
        )
        return chunk_iter, span, base.with_extra(weights="explicit")
    design = resample_design(n, resamples=resamples, seed=seed, strata=detection_strata(task.truth))
    span = range(design.n_chunks) if chunks is None else chunks
    chunk_iter = iter_unit_weight_chunks(design, chunks=chunks, cache_dir=cache_dir)
    base = Signature(metric="", method="bootstrap", resamples=resamples, seed=seed, confidence=None)
    base = base.with_extra(resampling="images", stratified="objects per area range")
    if chunks is not None:
        base = base.with_extra(chunks=f"{span.start}:{span.stop}")
    return chunk_iter, span, base


def _detection_chunk_replicates(
    task: DetectionTask, entries: Sequence[MatchedEntry], stats: list[str], chunk_iter: Any
) -> dict[str, list[list[FloatArray]]]:
    """Per stat and entry, the replicates of every chunk (a resample that leaves a stat undefined refused)."""
    parts: dict[str, list[list[FloatArray]]] = {s: [[] for _ in entries] for s in stats}
    for _, w_chunk in chunk_iter:
        for j, e in enumerate(entries):
            reps = detection_replicates(task, e, w_chunk, stats=stats)
            for s in stats:
                _check_defined(reps[s], s, "a resample of `weights`")
                parts[s][j].append(reps[s])
    return parts


def _detection_jackknife(
    task: DetectionTask, entries: Sequence[MatchedEntry], stats: list[str]
) -> dict[str, list[FloatArray]]:
    """Per stat and entry, the N leave-one-image-out values (BCa needs every one defined)."""
    from stats.resampling import CHUNK_RESAMPLES

    n = task.n_images
    jack: dict[str, list[FloatArray]] = {s: [np.empty(0) for _ in entries] for s in stats}
    for j, e in enumerate(entries):
        cols: dict[str, list[FloatArray]] = {s: [] for s in stats}
        for start in range(0, n, CHUNK_RESAMPLES):
            rows = np.arange(start, min(start + CHUNK_RESAMPLES, n))
            w_loo = np.ones((rows.shape[0], n), dtype=np.uint8)
            w_loo[np.arange(rows.shape[0]), rows] = 0
            reps = detection_replicates(task, e, w_loo, stats=stats)
            for s in stats:
                cols[s].append(reps[s])
        for s in stats:
            values = np.concatenate(cols[s])
            _check_defined(values, s, "a leave-one-image-out set (BCa needs every one)")
            jack[s][j] = values
    return jack


def score_detection_entries(
    task: DetectionTask,
    entries: Sequence[MatchedEntry],
    *,
    metric: str,
    **kwargs: Any,
) -> list[Any]:
    """One detection metric for K entries: :func:`detection_scores` with ``metrics=[metric]``.

    Returns a list of :class:`stats.engine.EntryScore`, like :func:`stats.engine.score_entries`.

    Examples
    --------
    >>> from stats.vision.detection_io import parse_coco_results, parse_coco_truth
    >>> truth = parse_coco_truth(b'{"images": [{"id": 1}, {"id": 2}], "categories": [{"id": 1, "name": "cat"}], '
    ...     b'"annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100},'
    ...     b' {"id": 2, "image_id": 2, "category_id": 1, "bbox": [5, 5, 40, 40], "area": 1600}]}')
    >>> task = DetectionTask(truth)
    >>> entry = task.match(parse_coco_results(
    ...     b'[{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.9}]', truth))
    >>> (score,) = score_detection_entries(task, [entry], metric="coco_ap50", resamples=200, seed=0)
    >>> round(score.value, 4), score.replicates.shape  # one of the two objects found
    (0.505, (200,))
    """
    return detection_scores(task, entries, metrics=[metric], **kwargs)[metric]


def detection_per_class(
    task: DetectionTask,
    entry: MatchedEntry,
    *,
    resamples: int = 10_000,
    seed: int = 0,
    chunks: range | None = None,
    cache_dir: Any = None,
) -> tuple[FloatArray, FloatArray]:
    """Per-class AP@[.5:.95] of one entry: the point values (K,) and replicates (rows, K) on the task's W.

    The replicates use the same stratified ``W`` as :func:`detection_scores` (so they are paired with the
    headline metric). A class with no non-ignored object in a resample has no AP there (NaN, as
    pycocotools' -1); its interval is taken over the resamples where it is defined, and a class with no
    object in the test set has NaN as its point value. Per-class figures are a channel to the hidden
    annotations: show them only where the board's rules allow.
    """
    from stats.resampling import iter_unit_weight_chunks, resample_design

    n = task.n_images
    point = detection_replicates(task, entry, np.ones((1, n), dtype=np.uint8), stats=["per_class_AP"])
    design = resample_design(n, resamples=resamples, seed=seed, strata=detection_strata(task.truth))
    parts = [
        detection_replicates(task, entry, w_chunk, stats=["per_class_AP"])["per_class_AP"]
        for _, w_chunk in iter_unit_weight_chunks(design, chunks=chunks, cache_dir=cache_dir)
    ]
    return point["per_class_AP"][0], np.concatenate(parts)


# ----------------------------------------------------------------------------------------------------
# storing a matched entry (the stage-1 output), so workers scoring chunks need not match again

_CURVE_FIELDS = ("class_start", "image", "cand", "tp", "nonfp", "mixed", "block")


def save_matched(entry: MatchedEntry, file: Any) -> None:
    """Write a :class:`MatchedEntry` as an ``.npz`` archive (numpy arrays only, no pickle).

    ``file`` is a path or a binary file object. :func:`load_matched` reads it back; the replicates of
    the loaded entry are bit-identical.
    """
    arrays: dict[str, Any] = {"n_detections": np.array(entry.n_detections, dtype=np.int64)}
    for fam in ("coco", "voc"):
        curves = getattr(entry, fam)
        for name in _CURVE_FIELDS:
            arrays[f"{fam}_{name}"] = getattr(curves, name)
    counts = entry.recall_counts.tocsr()
    arrays.update(
        recall_data=counts.data,
        recall_indices=counts.indices,
        recall_indptr=counts.indptr,
        recall_shape=np.array(counts.shape, dtype=np.int64),
    )
    np.savez_compressed(file, **arrays)


def load_matched(file: Any) -> MatchedEntry:
    """Read a :class:`MatchedEntry` written by :func:`save_matched` (``allow_pickle=False``).

    Raises
    ------
    ValueError
        If the archive lacks a field or is not a matched entry.
    """
    with np.load(file, allow_pickle=False) as z:
        try:
            fams = {
                fam: _Curves(**{name: np.asarray(z[f"{fam}_{name}"]) for name in _CURVE_FIELDS})
                for fam in ("coco", "voc")
            }
            shape = tuple(int(v) for v in z["recall_shape"])
            counts = sparse.csr_matrix(
                (z["recall_data"], z["recall_indices"], z["recall_indptr"]), shape=shape
            )
            n_detections = int(z["n_detections"])
        except KeyError as exc:
            raise ValueError(f"not a stored matched entry (missing {exc}).") from None
    return MatchedEntry(coco=fams["coco"], voc=fams["voc"], recall_counts=counts, n_detections=n_detections)
