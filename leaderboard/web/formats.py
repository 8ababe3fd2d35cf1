"""What a task's prediction file looks like, for the submit page and the example file.

The column names follow ``stats.io.prediction_columns`` (documented in docs/formats.md); only the task's
public fields (item ids, label set, metric) are used.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from leaderboard.challenges.models import Task
from leaderboard.core.exports import neutralise
from leaderboard.scoring.engine import prediction_format


@dataclass(frozen=True)
class TaskFormat:
    metric: str
    description: str
    higher_is_better: bool
    kind: str
    columns: list[str]
    what: str
    labels: list[str]
    n_items: int


_WHAT = {
    "label": "one predicted label per item, from the label set",
    "ranked_labels": "the predicted labels per item, best first, one per column",
    "score": "the score (probability) of the positive class per item",
    "value": "one predicted number per item",
    "detection": (
        "COCO results: a JSON list (also gzipped) of detected boxes [x, y, width, height] with their "
        "image id, category id and score; or CSV / Parquet with the columns image_id,category_id,x,y,w,h,score"
    ),
    "segmentation": (
        "a zip or tar of single-channel PNG label maps named <image id>.png, each of its image's size, "
        "pixel values 0 to classes - 1"
    ),
}


def task_format(task: Task) -> TaskFormat:
    fmt = prediction_format(task.metric)
    return TaskFormat(
        metric=fmt.metric,
        description=fmt.description,
        higher_is_better=fmt.higher_is_better,
        kind=fmt.kind,
        columns=fmt.columns,
        what=_WHAT.get(fmt.kind, fmt.kind),
        labels=[str(x) for x in task.labels],
        n_items=task.n_items,
    )


@dataclass(frozen=True)
class ExampleFile:
    name: str
    content_type: str
    data: bytes


def example_download(task: Task) -> ExampleFile:
    """A valid predictions file for the task, built from its public facts only (ids, categories, sizes)."""
    if task.kind == "detection":
        import json

        category = task.vision["categories"][0]["id"]
        records = [{"image_id": int(i), "category_id": category, "bbox": [0.0, 0.0, 1.0, 1.0], "score": 0.0}
                   for i in task.item_ids]  # fmt: skip
        return ExampleFile(f"{task.slug}-example.json", "application/json", json.dumps(records).encode())
    if task.kind == "segmentation":
        import zipfile

        import numpy as np
        from PIL import Image

        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for image_id in task.item_ids:
                width, height = task.vision["image_sizes"][image_id]
                png = io.BytesIO()
                Image.fromarray(np.zeros((height, width), dtype=np.uint8), mode="L").save(png, format="PNG")
                zf.writestr(f"{image_id}.png", png.getvalue())
        return ExampleFile(f"{task.slug}-example.zip", "application/zip", out.getvalue())
    return ExampleFile(f"{task.slug}-example.csv", "text/csv; charset=utf-8", example_file(task).encode())


def example_file(task: Task) -> str:
    """A valid predictions file for the task's public items, with a placeholder prediction for each."""
    fmt = task_format(task)
    labels = fmt.labels or ["0"]
    if fmt.kind == "label":
        values = [labels[0]]
    elif fmt.kind == "ranked_labels":
        values = [labels[i % len(labels)] for i in range(len(fmt.columns) - 1)]
    elif fmt.kind == "score":
        values = ["0.5"]
    else:
        values = ["0.0"]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(fmt.columns)
    for item in task.item_ids:
        # The download rule (core.exports): formula-like ids get an apostrophe, which upload accepts back.
        writer.writerow([neutralise(item), *values])
    return out.getvalue()
