"""What a task's prediction file looks like, for the submit page and the example file.

The task's kind (``leaderboard.scoring.kinds``) describes its files: the columns follow
``stats.io.prediction_columns`` for tabular tasks (documented in docs/formats.md); only the task's public
fields (item ids, label set, metric, image sizes) are used.
"""

from __future__ import annotations

from dataclasses import dataclass

from leaderboard.challenges.models import Task
from leaderboard.scoring.kinds import ExampleFile, get_kind

__all__ = ["ExampleFile", "TaskFormat", "example_download", "task_format"]


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
    template: str  # the kind's format paragraph (``TaskKind.format_template``)
    example_note: str  # what the example file holds (``TaskKind.example_note``)


def task_format(task: Task) -> TaskFormat:
    kind = get_kind(task.kind)
    fmt = kind.prediction_format(task.metric)
    return TaskFormat(
        metric=fmt.metric,
        description=fmt.description,
        higher_is_better=fmt.higher_is_better,
        kind=fmt.kind,
        columns=fmt.columns,
        what=kind.format_text(fmt),
        labels=[str(x) for x in task.labels],
        n_items=task.n_items,
        template=kind.format_template,
        example_note=kind.example_note,
    )


def example_download(task: Task) -> ExampleFile:
    """A valid predictions file for the task, built from its public facts only (ids, categories, sizes)."""
    return get_kind(task.kind).example_file(task)
