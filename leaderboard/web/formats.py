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
