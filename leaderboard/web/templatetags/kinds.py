"""What a page asks a task's kind (``leaderboard.scoring.kinds``) and its metric, as template filters."""

from __future__ import annotations

from typing import Any

from django import template

from leaderboard.scoring.engine import task_positive_class
from leaderboard.scoring.kinds import get_kind

register = template.Library()


@register.filter
def has_score_details(task: Any) -> bool:
    """The task's entries have per-class values with intervals and curves (``TaskKind.has_score_details``)."""
    return get_kind(task.kind).has_score_details


@register.filter
def positive_class(task: Any) -> str | None:
    """The positive class of a task with a binary-score metric (named, or the second label in sorted order)."""
    return task_positive_class(task)
