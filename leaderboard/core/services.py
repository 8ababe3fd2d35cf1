"""Writes of the core app."""

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from leaderboard.core.models import WorkerHeartbeat


@transaction.atomic
def worker_heartbeat_record(*, hostname: str) -> WorkerHeartbeat:
    """Record that ``hostname`` is alive (idempotent per call: one row per host, a counter of beats)."""
    now = timezone.now()
    beat, created = WorkerHeartbeat.objects.select_for_update().get_or_create(
        hostname=hostname, defaults={"last_seen": now, "beats": 1}
    )
    if not created:
        WorkerHeartbeat.objects.filter(pk=beat.pk).update(last_seen=now, beats=F("beats") + 1)
        beat.refresh_from_db()
    return beat
