"""Service-wide bookkeeping that belongs to no domain app."""

from django.db import models


class WorkerHeartbeat(models.Model):
    """The last time each Celery worker ran a task for us: proves workers are alive (see /healthz)."""

    hostname = models.CharField(max_length=255, unique=True)
    last_seen = models.DateTimeField()
    beats = models.PositiveBigIntegerField(default=0)

    class Meta:
        ordering = ["-last_seen"]

    def __str__(self) -> str:
        return f"{self.hostname} ({self.last_seen:%Y-%m-%d %H:%M:%S})"
