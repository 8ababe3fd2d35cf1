"""The Celery task that makes the notices of one event, off the request or the scoring that caused it (a
reveal writes to every participant; an SMTP server may be slow). Idempotent, so a redelivery is harmless."""

from __future__ import annotations

from celery import shared_task

from leaderboard.notifications import services


@shared_task(name="leaderboard.notifications.tasks.notify", acks_late=True)
def notify(event: str, object_id: int) -> int:
    """``event`` is ``submission`` (scored or failed) or ``revealed``; returns how many were notified."""
    if event == "submission":
        return len(services.submission_finished(submission_id=object_id))
    return len(services.board_revealed(challenge_id=object_id))
