"""Submissions: one or more prediction files (one per task, optionally several runs) and their status."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from leaderboard.challenges.models import Challenge, Task, Team


class Status(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SCORED = "scored", "Scored"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


#: Longest submission description (characters): it is shown on every board row, so it is bounded.
DESCRIPTION_MAX_CHARS = 1_000
LINK_MAX_CHARS = 200


class Submission(models.Model):
    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="submissions")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="submissions")
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="submissions"
    )
    name = models.CharField(max_length=120)
    description = models.TextField(blank=True, max_length=DESCRIPTION_MAX_CHARS)
    link = models.URLField(blank=True, max_length=LINK_MAX_CHARS, help_text="Code or paper.")
    is_baseline = models.BooleanField(default=False)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED, db_index=True)
    error = models.TextField(blank=True, help_text="Shown to the participant; never holds hidden labels.")
    selected = models.BooleanField(default=False, help_text="Chosen by the team to count on the board.")
    charged = models.BooleanField(default=True, help_text="Counts against the team's limits.")
    attempts = models.PositiveIntegerField(default=0, help_text="Scoring attempts (platform retries).")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    dispatched_at = models.DateTimeField(null=True, blank=True, help_text="When the task reached the broker.")
    started_at = models.DateTimeField(null=True, blank=True)
    lease_expires_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="While running: the worker renews this lease; once it has passed, the sweeper re-sends.",
    )
    finished_at = models.DateTimeField(null=True, blank=True)
    idempotency_key = models.CharField(
        max_length=255, blank=True, help_text="The client's key: a retried upload returns this submission."
    )
    request_digest = models.CharField(
        max_length=64, blank=True, help_text="sha256 of what was uploaded under the idempotency key."
    )
    client_key = models.CharField(
        max_length=32,
        blank=True,
        help_text="A keyed hash of the network address the upload came from (never the address): "
        "submissions from one address share one team's limits (Challenge.quota_per_address).",
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["team", "created_at"]),
            models.Index(fields=["challenge", "client_key", "created_at"]),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["submitted_by", "idempotency_key"],
                condition=~models.Q(idempotency_key=""),
                name="unique_idempotency_key_per_user",
            )
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.name} ({self.status})"


def _upload_to(instance: SubmissionFile, filename: str) -> str:
    # The name of the file in the uploads storage (the database by default, settings.STORAGES); no URL serves it.
    return f"submissions/{instance.submission.challenge_id}/{instance.submission_id}/{instance.task_id}-{instance.run}.{instance.format}"


class SubmissionFile(models.Model):
    class Format(models.TextChoices):
        CSV = "csv", "CSV"
        PARQUET = "parquet", "Parquet"
        JSON = "json", "JSON (COCO results)"
        GZIP = "gz", "gzip-compressed (COCO results JSON or CSV)"
        ZIP = "zip", "zip archive (label maps)"
        TAR = "tar", "tar archive (label maps)"

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="files")
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="submission_files")
    run = models.PositiveIntegerField(default=0, help_text="0, 1, ... for several runs (training seeds).")
    file = models.FileField(upload_to=_upload_to, max_length=300)
    original_name = models.CharField(max_length=255)
    format = models.CharField(max_length=8, choices=Format.choices)
    size = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)

    class Meta:
        ordering = ["task", "run"]
        constraints = [
            models.UniqueConstraint(fields=["submission", "task", "run"], name="unique_submission_task_run")
        ]

    def __str__(self) -> str:
        return f"{self.original_name} (submission {self.submission_id}, run {self.run})"
