"""Celery tasks of the rankings: rebuilds are serialised per task by a row lock in the service."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from leaderboard.rankings.services import challenge_summary_rebuild, leaderboard_rebuild, shakeup_rebuild


@shared_task(
    bind=True,
    name="leaderboard.rankings.tasks.rebuild_leaderboard",
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    retry_backoff_max=30,
    max_retries=8,
)
def rebuild_leaderboard(self, task_id: int, split: str) -> int | None:
    snapshot = leaderboard_rebuild(task_id=task_id, split=split)
    return snapshot.pk if snapshot else None


@shared_task(
    bind=True,
    name="leaderboard.rankings.tasks.rebuild_summary",
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    retry_backoff_max=30,
    max_retries=8,
)
def rebuild_summary(self, challenge_id: int, split: str) -> int | None:
    summary = challenge_summary_rebuild(challenge_id=challenge_id, split=split)
    return summary.pk if summary else None


@shared_task(
    bind=True,
    name="leaderboard.rankings.tasks.rebuild_shakeup",
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    retry_backoff_max=30,
    max_retries=8,
)
def rebuild_shakeup(self, task_id: int) -> int | None:
    report = shakeup_rebuild(task_id=task_id)
    return report.pk if report else None
