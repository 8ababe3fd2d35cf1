"""The one route to hidden labels.

:func:`task_truth_get` is the only function in the service that reads :class:`TaskTruth`; only the
scoring code calls it (a test enforces both). What it returns must never reach a response, a page, an
error message or a log line.
"""

from __future__ import annotations

from dataclasses import dataclass

from leaderboard.challenges.models import Task, TaskTruth


@dataclass(frozen=True)
class HiddenTruth:
    labels: list[str] | list[float]
    groups: list[str] | None
    private: list[bool] | None
    version: int
    data: bytes | None = None  # detection / segmentation: the annotation file as the organizer uploaded it

    def __repr__(self) -> str:  # never print labels, even in a traceback or a debugger
        return f"HiddenTruth(version={self.version}, items={len(self.labels)})"


def task_truth_get(*, task: Task) -> HiddenTruth:
    row = TaskTruth.objects.get(task=task)
    return HiddenTruth(
        labels=row.labels,
        groups=row.groups,
        private=row.private,
        version=row.version,
        data=None if row.data is None else bytes(row.data),
    )


def task_group_codes(*, task: Task, split: str) -> list[int] | None:
    """Each item's group of one split as codes 0..G-1 (groups in sorted order of their ids), or None.

    Only the partition of the items into groups leaves here (for the exact cluster test of a board with
    few groups), never the group ids or a label.
    """
    row = TaskTruth.objects.only("groups", "private").get(task=task)
    if row.groups is None:
        return None
    private = row.private or [False] * len(row.groups)
    want_private = split == "private"
    ids = sorted({g for g, p in zip(row.groups, private, strict=True) if bool(p) == want_private})
    code = {g: i for i, g in enumerate(ids)}
    return [code[g] for g, p in zip(row.groups, private, strict=True) if bool(p) == want_private]


def task_minority_count(*, task: Task, split: str) -> int | None:
    """The smaller class's count of a binary task's split (positives or negatives, whichever is fewer), or
    None for a task that is not binary.

    A rank metric's (ROC AUC, average precision) board declines a bootstrap verdict below
    ``stats.board.FEW_POSITIVES`` of them (issue 21): only this count leaves here, never a label.
    """
    row = TaskTruth.objects.only("labels", "private").get(task=task)
    private = row.private or [False] * len(row.labels)
    want_private = split == "private"
    labels = [str(label) for label, p in zip(row.labels, private, strict=True) if bool(p) == want_private]
    classes = sorted(set(labels))
    if len(classes) > 2:
        return None
    return min((labels.count(c) for c in classes), default=0) if len(classes) == 2 else 0
