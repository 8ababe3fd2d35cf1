"""Precision-recall curves of a matched detection entry on the test set itself (for the entry's page).

What pycocotools stores in ``COCOeval.eval["precision"][t, :, k, a, m]``: per class, the interpolated
precision (the envelope from the right) at the 101 recall thresholds, for one IoU threshold, the area range
"all" and 100 detections per image; 0 where the recall is never reached and -1 for a class without
objects. It is read from the curves :meth:`stats.vision.detection.DetectionTask.match` built (their events
in pycocotools' accumulation order), so the matching is not run again.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["precision_at_recall_thresholds"]


def precision_at_recall_thresholds(
    task: Any, entry: Any, *, threshold: int = 0
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per-class interpolated precision at pycocotools' recall thresholds.

    Parameters
    ----------
    task : stats.vision.detection.DetectionTask
    entry : stats.vision.detection.MatchedEntry
        From ``task.match(detections)``.
    threshold : int, default 0
        Index into the IoU thresholds 0.50, 0.55, ..., 0.95 (0: IoU 0.5).

    Returns
    -------
    recall : ndarray, shape (101,)
        The recall thresholds 0, 0.01, ..., 1 (pycocotools' ``recThrs``).
    precision : ndarray, shape (K, 101)
        ``-1`` for a class without non-ignored objects, 0 where the recall is not reached.
    """
    from stats.vision.detection import RECALL_THRESHOLDS

    curves = entry.coco
    k = task.n_classes
    n_gt = np.asarray(task.npig.sum(axis=0)).ravel()[:k]  # area range "all" comes first
    out = np.full((k, RECALL_THRESHOLDS.shape[0]), -1.0)
    eps = np.spacing(1)
    for c in range(k):
        if n_gt[c] <= 0:
            continue
        lo, hi = int(curves.class_start[c]), int(curves.class_start[c + 1])
        tp = curves.tp[0, threshold, lo:hi]
        fp = curves.cand[0, lo:hi] & ~curves.nonfp[0, threshold, lo:hi]
        tps = np.cumsum(tp, dtype=np.float64)
        fps = np.cumsum(fp, dtype=np.float64)
        rc = tps / n_gt[c]
        pr = tps / (fps + tps + eps)
        # pycocotools: precision envelope from the right, then the first index reaching each threshold.
        env = np.maximum.accumulate(pr[::-1])[::-1] if pr.size else pr
        idx = np.searchsorted(rc, RECALL_THRESHOLDS, side="left")
        q = np.zeros(RECALL_THRESHOLDS.shape[0])
        reached = idx < env.shape[0]
        q[reached] = env[idx[reached]]
        out[c] = q
    return RECALL_THRESHOLDS.copy(), out
