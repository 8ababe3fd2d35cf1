"""The vision side of ``python -m stats score`` and ``leaderboard``: detection and segmentation files.

Detection: ``--truth`` is a COCO annotation JSON (or, with ``--truth-format voc``, a VOC-style table),
each prediction file a COCO results JSON (plain or gzipped), CSV or Parquet. Segmentation: ``--truth``
and each prediction are zip or tar archives of PNG label maps, with ``--num-classes`` (and
``--ignore-index``, ``--reduce-zero-label``, ``--allow-out-of-range``).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from stats.engine import EntryScore, score_item_statistics
from stats.io import InputError
from stats.metrics import Metric
from stats.vision.detection import DetectionTask, detection_scores
from stats.vision.detection_io import parse_coco_results, parse_coco_truth, parse_voc_truth
from stats.vision.segmentation import (
    read_mask_archive,
    segmentation_statistics,
    segmentation_strata,
    validate_truth_archive,
)

__all__ = ["VisionScores", "add_vision_arguments", "score_vision"]


def add_vision_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of detection and segmentation tasks (ignored by the other metrics)."""
    group = parser.add_argument_group("detection and segmentation tasks")
    group.add_argument(
        "--truth-format",
        choices=["coco", "voc"],
        default="coco",
        help="detection truth: COCO JSON or VOC table",
    )
    group.add_argument("--num-classes", type=int, help="segmentation: number of classes C (labels 0..C-1)")
    group.add_argument("--ignore-index", type=int, default=255, help="segmentation: truth value left out")
    group.add_argument("--reduce-zero-label", action="store_true", help="segmentation: ADE20K's label shift")
    group.add_argument(
        "--allow-out-of-range",
        action="store_true",
        help="segmentation: count predicted values outside the classes as misses instead of refusing them",
    )


@dataclass(frozen=True, eq=False)
class VisionScores:
    """Scores of the prediction files, and per-image statistics for segmentation (for the tests)."""

    scores: list[EntryScore]
    item_statistics: list[NDArray[np.float64]] | None
    n_items: int


def score_vision(
    args: argparse.Namespace, metric: Metric, names: list[str], *, jackknife: bool
) -> VisionScores:
    """Read ``--truth`` and the prediction files of a detection or segmentation metric and score them."""
    if metric.task_kind == "detection":
        truth = parse_voc_truth(args.truth) if args.truth_format == "voc" else parse_coco_truth(args.truth)
        task = DetectionTask(truth)
        entries = [task.match(parse_coco_results(path, truth)) for path in names]
        scores = detection_scores(
            task,
            entries,
            metrics=[metric.name],
            names=names,
            resamples=args.resamples,
            seed=args.seed,
            jackknife=jackknife,
        )[metric.name]
        return VisionScores(scores, None, truth.n_images)
    if args.num_classes is None or args.num_classes < 1:
        raise InputError("a segmentation metric needs --num-classes (a positive integer)", file=args.truth)
    truth_masks = read_mask_archive(args.truth)
    validate_truth_archive(
        truth_masks,
        num_classes=args.num_classes,
        ignore_index=args.ignore_index,
        reduce_zero_label=args.reduce_zero_label,
    )
    stats: list[Any] = [
        segmentation_statistics(
            truth_masks,
            read_mask_archive(path),
            num_classes=args.num_classes,
            ignore_index=args.ignore_index,
            reduce_zero_label=args.reduce_zero_label,
            allow_out_of_range=args.allow_out_of_range,
        )
        for path in names
    ]
    scores = score_item_statistics(
        stats,
        metric=metric,
        names=names,
        resamples=args.resamples,
        seed=args.seed,
        strata=segmentation_strata(stats[0]),
        jackknife=jackknife,
    )
    return VisionScores(scores, stats, len(truth_masks.image_ids))
