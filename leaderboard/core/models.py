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


class StoredFile(models.Model):
    """A file kept in the database (``leaderboard.core.storage.DatabaseStorage``): every host reads it.

    Its bytes are :class:`StoredFileChunk` rows of at most ``CHUNK_BYTES`` each, so neither a write nor a
    read ever passes one large value through the database driver (see the storage module).
    """

    name = models.CharField(max_length=300, unique=True)
    size = models.PositiveBigIntegerField()
    chunk_size = models.PositiveIntegerField(help_text="Bytes in each chunk but the last.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.size:,} bytes)"


class StoredFileChunk(models.Model):
    """One piece of a :class:`StoredFile`'s bytes, in order of ``index`` (0, 1, ...)."""

    file = models.ForeignKey(StoredFile, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    data = models.BinaryField()

    class Meta:
        ordering = ["file", "index"]
        constraints = [models.UniqueConstraint(fields=["file", "index"], name="unique_stored_file_chunk")]

    def __str__(self) -> str:
        return f"{self.file_id}[{self.index}]"
