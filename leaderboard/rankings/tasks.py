"""Celery tasks of the rankings: rebuilds are serialised per task by a row lock in the service."""

from __future__ import annotations

import logging
import traceback
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError

from leaderboard.rankings.services import (
    board_rebuild_failed,
    boards_requeue_stale,
    challenge_summary_rebuild,
    leaderboard_rebuild,
    shakeup_rebuild,
)

logger = logging.getLogger(__name__)

#: A rebuild that fails for another reason than the database (a bug, data the statistics refuse) is
#: retried this many times with backoff (``REBUILD_RETRY_SECONDS`` x 1, 2, 4); after that the board stays
#: at its last snapshot, the organizer page shows the error, and the sweeper tries again later.
REBUILD_RETRIES = 3

#: Every rebuild task: acknowledged after it ran (a worker lost mid-rebuild hands it to another), and
#: retried with backoff when the database goes away. One declaration, so the three rebuilds cannot drift.
REBUILD_TASK_OPTIONS: dict[str, Any] = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": True,
    "retry_backoff_max": 30,
    "max_retries": 8,
}


@shared_task(
    bind=True,
    name="leaderboard.rankings.tasks.rebuild_leaderboard",
    **REBUILD_TASK_OPTIONS,
)
def rebuild_leaderboard(self, task_id: int, split: str) -> int | None:
    try:
        snapshot = leaderboard_rebuild(task_id=task_id, split=split)
    except (OperationalError, InterfaceError):
        raise  # the database went away: retried by autoretry_for
    except Exception as exc:
        # The log gets the type and the frames; the organizer page the message (a rebuild reads stored
        # aggregates only, never hidden labels).
        frames = "".join(traceback.format_tb(exc.__traceback__))
        failures = board_rebuild_failed(task_id=task_id, split=split, error=f"{type(exc).__name__}: {exc}")
        logger.error(
            "board %s/%s: rebuild failed (%s, failure %s)\n%s",
            task_id, split, type(exc).__name__, failures, frames,
        )  # fmt: skip
        retries = self.request.retries
        if retries >= REBUILD_RETRIES:
            logger.error("board %s/%s: rebuild gave up after %s retries", task_id, split, retries)
            return None
        raise self.retry(
            exc=exc, countdown=settings.REBUILD_RETRY_SECONDS * 2**retries, max_retries=REBUILD_RETRIES
        ) from exc
    return snapshot.pk if snapshot else None


@shared_task(
    bind=True,
    name="leaderboard.rankings.tasks.rebuild_summary",
    **REBUILD_TASK_OPTIONS,
)
def rebuild_summary(self, challenge_id: int, split: str) -> int | None:
    summary = challenge_summary_rebuild(challenge_id=challenge_id, split=split)
    return summary.pk if summary else None


@shared_task(
    bind=True,
    name="leaderboard.rankings.tasks.rebuild_shakeup",
    **REBUILD_TASK_OPTIONS,
)
def rebuild_shakeup(self, task_id: int) -> int | None:
    report = shakeup_rebuild(task_id=task_id)
    return report.pk if report else None


@shared_task(name="leaderboard.rankings.tasks.sweep_stale_boards", acks_late=True)
def sweep_stale_boards() -> list[tuple[int, str]]:
    return boards_requeue_stale(
        stale_for=settings.REBUILD_STALE_SECONDS, retry_after=settings.REBUILD_STALE_SECONDS * 10
    )
