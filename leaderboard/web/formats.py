"""What a task's prediction file looks like, for the submit page and the example file.

The column names follow ``stats.io.prediction_columns`` (documented in docs/formats.md); only the task's
public fields (item ids, label set, metric) are used.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

from leaderboard.challenges.models import Task
from stats.io import prediction_columns
from stats.metrics import get_metric


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
}


def _ranks(metric: str) -> int:
    match = re.match(r"top(\d+)_", metric)
    return int(match.group(1)) if match else 1


def task_format(task: Task) -> TaskFormat:
    metric = get_metric(task.metric)
    return TaskFormat(
        metric=metric.name,
        description=metric.description,
        higher_is_better=metric.higher_is_better,
        kind=metric.prediction_kind,
        columns=["id", *prediction_columns(metric.prediction_kind, ranks=_ranks(task.metric))],
        what=_WHAT.get(metric.prediction_kind, metric.prediction_kind),
        labels=[str(x) for x in task.labels],
        n_items=task.n_items,
    )


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
        writer.writerow([item, *values])
    return out.getvalue()
