"""Vision tasks: object detection (COCO / VOC AP) and semantic segmentation (mIoU), resampled by image.

Public API (also in docs/stats-contract.md, "Vision"):

Detection (:mod:`stats.vision.detection_io`, :mod:`stats.vision.detection`)
    ``parse_coco_truth(source) -> DetectionTruth``; ``parse_voc_truth(source) -> DetectionTruth``;
    ``parse_coco_results(source, truth) -> Detections`` (JSON list, gzipped JSON, CSV, Parquet).
    ``task = DetectionTask(truth)``; ``entry = task.match(detections)`` (once per entry);
    ``detection_replicates(task, entry, W_chunk, stats=...) -> {stat: (B,)}`` for any rows of ``W``;
    ``detection_point(task, entry)`` (all 12 COCO stats, VOC07, VOC, per-class AP);
    ``detection_strata(truth)`` (strata for ``W`` under which every stat is defined);
    ``save_matched(entry, file)`` / ``load_matched(file)`` (the matched entry as ``.npz``, no pickle);
    ``score_detection_entries(task, entries, metric=..., resamples=..., seed=..., chunks=...)``
    -> ``list[EntryScore]`` like :func:`stats.engine.score_entries`; ``detection_scores(task, entries,
    metrics=[...])`` for several metrics in one pass; ``detection_per_class(task, entry, resamples=...,
    seed=...) -> (point (K,), replicates (B, K))`` (per-class AP, NaN where a class has no object).

Segmentation (:mod:`stats.vision.segmentation`)
    ``image_statistics(truth_mask, pred_mask, num_classes=..., ignore_index=255,
    reduce_zero_label=False) -> (3C+1,)``; ``read_mask_archive(source, image_ids=..., ...)`` yields
    ``(image_id, mask)``; ``segmentation_statistics(truth_archive, pred_archive, ...) -> (N, 3C+1)``;
    ``stats.engine.score_item_statistics(statistics, metric="miou", ...) -> list[EntryScore]``; ``miou``,
    ``pixel_accuracy``, ``mean_class_accuracy``, ``per_class_iou`` as registry metrics.
"""

from stats.vision.detection import (
    COCO_STAT_NAMES,
    DETECTION_METRICS,
    DetectionTask,
    MatchedEntry,
    detection_per_class,
    detection_point,
    detection_replicates,
    detection_scores,
    detection_strata,
    load_matched,
    save_matched,
    score_detection_entries,
)
from stats.vision.detection_io import (
    Detections,
    DetectionTruth,
    parse_coco_results,
    parse_coco_truth,
    parse_voc_truth,
)

__all__ = [
    "COCO_STAT_NAMES",
    "DETECTION_METRICS",
    "DetectionTask",
    "DetectionTruth",
    "Detections",
    "MatchedEntry",
    "detection_per_class",
    "detection_point",
    "detection_replicates",
    "detection_scores",
    "detection_strata",
    "load_matched",
    "parse_coco_results",
    "parse_coco_truth",
    "parse_voc_truth",
    "save_matched",
    "score_detection_entries",
]
