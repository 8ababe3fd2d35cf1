"""Object detection tasks: a COCO (or VOC-style) annotation file; COCO results (JSON, CSV or Parquet).

The reading, matching and scoring are :mod:`leaderboard.scoring.vision`'s (``stats.vision``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from django.conf import settings

from leaderboard.core.exceptions import ApplicationError
from leaderboard.scoring import vision
from leaderboard.scoring.engine import ParsedTruth, PredictionFormat, SplitScore
from leaderboard.scoring.kinds.base import ExampleFile, Files, TaskKind, register
from stats.metrics import Metric

if TYPE_CHECKING:
    from leaderboard.challenges.models import Challenge, Task
    from leaderboard.scoring.selectors import HiddenTruth


class VisionKind(TaskKind):
    """What detection and segmentation share: an annotation file, per-class details, the vision interval."""

    upload_setting = "VISION_UPLOAD_MAX_BYTES"
    has_score_details = True

    def claims(self, metric: Metric) -> bool:
        return metric.task_kind == self.name

    def parse_truth(
        self,
        data: bytes,
        *,
        name: str,
        metric: str,
        labels: Sequence[str] | None,
        group_column: str | None,
        split_column: str | None,
        positive: str | None,
        options: Mapping[str, Any],
    ) -> ParsedTruth:
        if group_column or split_column:
            raise ApplicationError(
                f"{name}: detection and segmentation tasks have no group or split column.",
                extra={"file": name, "field": "group_column" if group_column else "split_column"},
            )
        return vision.parse_truth(
            data,
            name=name,
            metric=metric,
            class_names=labels,
            ignore_index=int(options.get("ignore_index", 255)),
            reduce_zero_label=bool(options.get("reduce_zero_label", False)),
        )

    def replacement_options(self, task: Task) -> dict[str, Any]:
        return {
            "ignore_index": task.vision.get("ignore_index", 255),
            "reduce_zero_label": task.vision.get("reduce_zero_label", False),
        }

    def validate_predictions(self, data: bytes, *, name: str, task: Task) -> None:
        vision.read_predictions(data, name=name, task=task)

    def score_files(
        self, *, task: Task, truth: HiddenTruth, files: Files, challenge: Challenge
    ) -> list[SplitScore]:
        return vision.score_files(task=task, truth=truth, files=files, challenge=challenge)

    def board_interval(self, metric: str, challenge: Challenge, *, has_jackknife: bool) -> str | None:
        return vision.vision_interval(metric, challenge)

    def prediction_format(self, metric: str) -> PredictionFormat:
        return vision.prediction_format(metric)


class Detection(VisionKind):
    name = "detection"
    label = "Object detection (COCO / VOC boxes per image)"
    upload_help = "COCO results JSON (also .json.gz), or CSV / Parquet with the same columns"
    upload_accept = ".json,.gz,.csv,.parquet,.pq,application/json,text/csv"
    format_template = "web/kinds/vision_format.html"
    example_note = "one placeholder box per image"

    def replacement_labels(self, task: Task) -> list[str] | None:
        return None  # the categories come from the file

    # --- fan-out: by resamples (a COCO-val entry costs 15 to 22 ms per resample: docs/benchmarks.md) ------
    def fans_out(self, *, task: Task, runs: int, resamples: int) -> bool:
        """At least ``FANOUT_DETECTION_MIN_RESAMPLES`` resamples."""
        return bool(resamples >= settings.FANOUT_DETECTION_MIN_RESAMPLES)

    def fanout_prepare(
        self, *, task: Task, truth: HiddenTruth, files: Files, challenge: Challenge
    ) -> dict[str, Any] | None:
        runs = vision.detection_runs(task=task, truth=truth, files=files, challenge=challenge)
        return {"runs": [vision.detection_run_state(run) for run in runs]}

    def fanout_load(self, payload: dict[str, Any]) -> dict[str, Any]:
        """A run's ground-truth index is rebuilt from its arrays (``stats.vision.DetectionTask``, cheap)."""
        payload["runs"] = [vision.detection_run_from_state(run) for run in payload["runs"]]
        return payload

    def fanout_chunk(self, payload: dict[str, Any], chunks: range) -> dict[str, np.ndarray]:
        """Keyed ``run:chunk:stat``."""
        arrays: dict[str, np.ndarray] = {}
        for r, run in enumerate(payload["runs"]):
            for c, reps in vision.detection_chunks(run, chunks=chunks):
                for key, value in reps.items():
                    arrays[f"{r}:{c}:{key}"] = value
        return arrays

    def fanout_join(
        self,
        *,
        task: Task,
        challenge: Challenge,
        payload: dict[str, Any],
        parts: list[tuple[range, dict[str, np.ndarray]]],
    ) -> list[SplitScore]:
        results = []
        for r, run in enumerate(payload["runs"]):
            per_chunk = []
            for chunks, arr in parts:
                for c in chunks:
                    prefix = f"{r}:{c}:"
                    per_chunk.append({k[len(prefix) :]: v for k, v in arr.items() if k.startswith(prefix)})
            results.append(vision.detection_result(run, per_chunk))
        return vision.vision_split_scores(task=task, challenge=challenge, results=results)

    # --- the public description -------------------------------------------------------------------------
    def format_text(self, fmt: PredictionFormat) -> str:
        return (
            "COCO results: a JSON list (also gzipped) of detected boxes [x, y, width, height] with their "
            "image id, category id and score; or CSV / Parquet with the columns image_id,category_id,x,y,w,h,score"
        )

    def api_format(self, task: Task, fmt: PredictionFormat) -> dict[str, Any]:
        return {
            "file_types": ["json", "json.gz", "csv", "parquet"],
            "columns": fmt.columns,
            "prediction_kind": fmt.kind,
            "categories": task.vision.get("categories", []),
            "images": task.n_items,
            "note": (
                "COCO results: a JSON list of {image_id, category_id, bbox: [x, y, width, height], score} "
                "(also gzipped), or the same columns as CSV or Parquet (bbox as x, y, width, height "
                "columns). Image and category ids are the task's; images without detections are fine."
            ),
        }

    def example_file(self, task: Task) -> ExampleFile:
        """One placeholder box per image."""
        category = task.vision["categories"][0]["id"]
        records = [{"image_id": int(i), "category_id": category, "bbox": [0.0, 0.0, 1.0, 1.0], "score": 0.0}
                   for i in task.item_ids]  # fmt: skip
        return ExampleFile(f"{task.slug}-example.json", "application/json", json.dumps(records).encode())


DETECTION = register(Detection())
