"""Periodic housekeeping tasks."""

import socket

from celery import shared_task

from leaderboard.core.services import worker_heartbeat_record


@shared_task(name="leaderboard.core.tasks.worker_heartbeat", ignore_result=True)
def worker_heartbeat(hostname: str | None = None) -> str:
    """Record that a worker is alive; run by beat every minute and by /healthz checks."""
    name = hostname or worker_heartbeat.request.hostname or socket.gethostname()
    worker_heartbeat_record(hostname=name)
    return name
