"""Per-class breakdown of one entry on one split: the confusion matrix, per-class precision, recall and F1,
the most confused pairs and (for organizers) the misclassified items.

It re-reads the entry's stored predictions file and the hidden labels, so it lives in the scoring app (the
one place that reads labels, ``scoring.selectors.task_truth_get``). The stored per-item statistics are not
enough in general: for accuracy they hold only whether each item was right, not which class it was
mistaken for.

What leaves here is aggregate counts over the split's items (shown to organizers, and to everyone once the
organizers reveal the board: before that, per-class figures of a hidden split are a channel to its labels)
and, only when ``with_items`` is asked by a caller that checked the reader is an organizer, the
misclassified items' ids with their predicted and true labels. The aggregates are cached per score
(``scored_at``) and truth version; the item list is never cached.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from django.core.cache import caches

from leaderboard.challenges.models import Task
from leaderboard.scoring import engine
from leaderboard.scoring.kinds import get_kind
from leaderboard.scoring.models import Score
from leaderboard.scoring.selectors import task_truth_get
from leaderboard.scoring.services import submission_file_bytes
from leaderboard.submissions.models import SubmissionFile

#: Confused pairs listed (true class -> predicted class, by count).
TOP_CONFUSED = 10
#: Misclassified items listed at most (organizers); the count says how many there are in all.
ITEMS_LISTED = 500
#: The label set is drawn as a full confusion matrix up to this many classes (the pairs list serves above).
MATRIX_MAX_CLASSES = 30
CACHE_SECONDS = 3600
#: Worst items listed on the entry page (text tasks).
WORST_LISTED = 20


@dataclass
class ClassRow:
    label: str
    support: int  # true items of the class
    predicted: int  # items predicted as the class
    correct: int
    precision: float | None  # None: no item predicted as the class (undefined, not 0)
    recall: float | None  # None: no true item of the class
    f1: float | None  # None when precision or recall is undefined


@dataclass
class Breakdown:
    labels: list[str]
    n_items: int
    n_correct: int
    runs: int  # runs of the entry; the breakdown is of the first
    classes: list[ClassRow]
    confusion: list[list[int]] | None  # [true][predicted]; None above MATRIX_MAX_CLASSES
    confused: list[tuple[str, str, int]]  # (true, predicted, count), most frequent first
    misclassified: list[tuple[str, str, str]] = field(default_factory=list)  # (item id, predicted, true)
    n_misclassified: int = 0


def supports_breakdown(task: Task) -> bool:
    """Whether the task's kind computes a breakdown from an entry's predictions (``TaskKind.supports_breakdown``:
    tabular tasks whose predictions are labels of a known label set)."""
    return get_kind(task.kind).supports_breakdown(task)


def _ratio(num: int, den: int) -> float | None:
    return None if den == 0 else num / den


def _aggregate(
    labels: list[str], truth: np.ndarray, predicted: np.ndarray, runs: int
) -> tuple[Breakdown, np.ndarray]:
    index = {label: i for i, label in enumerate(labels)}
    t = np.array([index[str(v)] for v in truth], dtype=np.intp)
    p = np.array([index.get(str(v), -1) for v in predicted], dtype=np.intp)
    c = len(labels)
    matrix = np.zeros((c, c), dtype=np.int64)
    valid = p >= 0
    np.add.at(matrix, (t[valid], p[valid]), 1)
    classes = []
    for i, label in enumerate(labels):
        support, pred, correct = int(matrix[i].sum()), int(matrix[:, i].sum()), int(matrix[i, i])
        precision, recall = _ratio(correct, pred), _ratio(correct, support)
        f1 = (
            None
            if precision is None or recall is None
            else (0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall))
        )
        classes.append(ClassRow(label, support, pred, correct, precision, recall, f1))
    off = [(int(matrix[i, j]), i, j) for i in range(c) for j in range(c) if i != j and matrix[i, j] > 0]
    off.sort(key=lambda x: (-x[0], x[1], x[2]))
    wrong = np.flatnonzero(t != p)
    return (
        Breakdown(
            labels=list(labels),
            n_items=len(t),
            n_correct=int((t == p).sum()),
            runs=runs,
            classes=classes,
            confusion=matrix.tolist() if c <= MATRIX_MAX_CLASSES else None,
            confused=[(labels[i], labels[j], n) for n, i, j in off[:TOP_CONFUSED]],
            n_misclassified=len(wrong),
        ),
        wrong,
    )


def class_breakdown(
    *, submission_id: int, task: Task, split: str, with_items: bool = False
) -> Breakdown | None:
    """The breakdown of the entry's first run on ``split``, or None when there is none (not a label task,
    no score on this split, no file).

    ``with_items``: also list the misclassified items with their predicted and true labels. Only for a
    caller that checked the reader is an organizer of the challenge.
    """
    if not supports_breakdown(task):
        return None
    score = (
        Score.objects.filter(submission_id=submission_id, task=task, split=split).only("scored_at").first()
    )
    if score is None:
        return None
    key = f"breakdown:{submission_id}:{task.pk}:{split}:{task.truth_version}:{score.scored_at.isoformat()}"
    cache = caches["boards"]
    cached = cache.get(key)
    if cached is not None and not with_items:
        return cached
    files = list(SubmissionFile.objects.filter(submission_id=submission_id, task=task).order_by("run"))
    if not files:
        return None
    data = submission_file_bytes(files[0])
    predictions = engine._read_predictions(  # the engine's own reader: the file as it was scored
        data, name=files[0].original_name, task=task
    )
    if predictions.ndim == 2:  # ranked labels: the first is the prediction
        predictions = predictions[:, 0]
    truth = task_truth_get(task=task)
    labels_all = np.asarray([str(v) for v in truth.labels])
    private = (
        np.zeros(len(labels_all), dtype=bool) if truth.private is None else np.asarray(truth.private, bool)
    )
    mask = private if split == "private" else ~private
    ids = np.asarray(task.item_ids)[mask]
    result, wrong = _aggregate([str(x) for x in task.labels], labels_all[mask], predictions[mask], len(files))
    cache.set(key, result, CACHE_SECONDS)
    if with_items:
        shown = wrong[:ITEMS_LISTED]
        items = [(str(ids[i]), str(predictions[mask][i]), str(labels_all[mask][i])) for i in shown]
        result = Breakdown(**{**result.__dict__, "misclassified": items})
    return result


@dataclass
class WorstSegment:
    item: str
    value: float
    prediction: str | None = None  # organizers only
    truth: str | None = None  # organizers only


@dataclass
class WorstSegments:
    n_items: int
    higher_is_better: bool
    segments: list[WorstSegment]


def worst_segments(
    *, submission_id: int, task: Task, split: str, with_text: bool = False
) -> WorstSegments | None:
    """The entry's worst items by their own metric value (``TaskKind.segment_values``: text tasks' segment
    scores from the stored statistics), or None for a kind without them or an entry without statistics.

    ``with_text``: also each listed item's prediction and truth (the references are hidden: only for a
    caller that checked the reader is an organizer). Who sees the list at all is the entry page's rule
    (organizers, and everyone after the reveal), as for the per-class breakdown."""
    kind = get_kind(task.kind)
    score = Score.objects.filter(submission_id=submission_id, task=task, split=split).first()
    stats_rows = None if score is None else score.item_statistics_array()
    values = None if stats_rows is None else kind.segment_values(task, stats_rows)
    if values is None:
        return None
    higher = engine.metric_higher_is_better(task.metric)
    finite = np.flatnonzero(np.isfinite(values))
    order = finite[np.argsort(values[finite] if higher else -values[finite], kind="stable")][:WORST_LISTED]
    ids = list(task.item_ids)
    rows = [WorstSegment(str(ids[i]), float(values[i])) for i in order]
    if with_text:
        files = list(SubmissionFile.objects.filter(submission_id=submission_id, task=task).order_by("run"))
        if files:
            texts = kind.segment_texts(
                task, task_truth_get(task=task), submission_file_bytes(files[0]), files[0].original_name
            )
            for row, i in zip(rows, order, strict=True):
                row.prediction, row.truth = texts[i]
    return WorstSegments(n_items=len(values), higher_is_better=higher, segments=rows)
