"""Semantic segmentation tasks: an archive of PNG label maps, one per image, for the truth and each entry.

The reading and scoring are :mod:`leaderboard.scoring.vision`'s (``stats.vision.segmentation``). Entries
are not fanned out: their bootstrap is about 1 s per entry at B = 10,000; reading the masks, done once,
dominates.
"""

from __future__ import annotations

import io
import zipfile
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image

from leaderboard.scoring.engine import PredictionFormat
from leaderboard.scoring.kinds.base import ExampleFile, register
from leaderboard.scoring.kinds.detection import VisionKind

if TYPE_CHECKING:
    from leaderboard.challenges.models import Task


class Segmentation(VisionKind):
    name = "segmentation"
    label = "Semantic segmentation (a label map per image)"
    upload_help = "A zip or tar of PNG label maps, one per image id"
    upload_accept = ".zip,.tar,.tgz,.gz"
    format_template = "web/kinds/vision_format.html"
    example_note = "an all-zero label map per image"

    def format_text(self, fmt: PredictionFormat) -> str:
        return (
            "a zip or tar of single-channel PNG label maps named <image id>.png, each of its image's size, "
            "pixel values 0 to classes - 1"
        )

    def api_format(self, task: Task, fmt: PredictionFormat) -> dict[str, Any]:
        return {
            "file_types": ["zip", "tar"],
            "columns": [],
            "prediction_kind": fmt.kind,
            "classes": task.labels,
            "images": task.n_items,
            "ignore_index": task.vision.get("ignore_index"),
            "note": (
                "An archive of single-channel PNG label maps named <image id>.png, one per image of the "
                "task, each of the image's size; pixel values are class indices (0 to classes - 1)."
            ),
        }

    def example_file(self, task: Task) -> ExampleFile:
        """An all-zero label map per image."""
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for image_id in task.item_ids:
                width, height = task.vision["image_sizes"][image_id]
                png = io.BytesIO()
                Image.fromarray(np.zeros((height, width), dtype=np.uint8), mode="L").save(png, format="PNG")
                zf.writestr(f"{image_id}.png", png.getvalue())
        return ExampleFile(f"{task.slug}-example.zip", "application/zip", out.getvalue())


SEGMENTATION = register(Segmentation())
