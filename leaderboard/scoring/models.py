"""What scoring stores: per (submission, task, split) the point estimate and the bootstrap replicates.

Replicates are float64 vectors of length B (the task's resamples), computed with the task's fixed resample
weights, so the replicates of two submissions of the same task are paired. The per-item statistics are
kept (as float64 bytes) for the paired tests that need items (McNemar, approximate randomization); they
encode per-item correctness on hidden items and therefore never leave the scoring and ranking code.

Rows written before float64 (float32 bytes, half the length) are read when they are exact in float32
(every value an integer: 0/1 correctness, class counts); real-valued ones (errors, losses) are not exact
there, so they read as absent and their board uses the paired bootstrap until the task is re-scored.
"""

from __future__ import annotations

import numpy as np
from django.db import models

from leaderboard.challenges.models import Task
from leaderboard.submissions.models import Submission


class Split(models.TextChoices):
    PUBLIC = "public", "Public board"
    PRIVATE = "private", "Private board"


class Score(models.Model):
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="scores")
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="scores")
    split = models.CharField(max_length=8, choices=Split.choices, default=Split.PUBLIC)
    value = models.FloatField(help_text="Point estimate (mean over runs when there are several).")
    replicates = models.BinaryField(help_text="float64 bootstrap replicates, length = resamples.")
    jackknife = models.BinaryField(null=True, help_text="float64 leave-one-out values (for BCa).")
    item_statistics = models.BinaryField(null=True, help_text="float64 (N, m) per-item statistics (one run).")
    item_statistics_shape = models.JSONField(null=True)
    run_values = models.JSONField(default=list, help_text="The metric of each run.")
    details = models.JSONField(
        null=True,
        blank=True,
        help_text=(
            "Detection / segmentation: the other metrics and the per-class values with intervals and "
            "precision-recall curves (aggregates over the hidden annotations: shown only to organizers "
            "until the board is revealed)."
        ),
    )
    resamples = models.PositiveIntegerField()
    seed = models.PositiveBigIntegerField()
    truth_version = models.PositiveIntegerField()
    engine_version = models.CharField(max_length=20)
    created_at = models.DateTimeField(auto_now_add=True)
    scored_at = models.DateTimeField(auto_now=True, help_text="Last (re-)scoring.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["submission", "task", "split"], name="unique_score_per_split")
        ]

    def __str__(self) -> str:
        return f"{self.submission_id}/{self.task_id}/{self.split}: {self.value:.4f}"

    @property
    def n_runs(self) -> int:
        return max(1, len(self.run_values))

    def replicate_array(self) -> np.ndarray:
        return np.frombuffer(bytes(self.replicates), dtype=np.float64)

    def jackknife_array(self) -> np.ndarray | None:
        return None if self.jackknife is None else np.frombuffer(bytes(self.jackknife), dtype=np.float64)

    def item_statistics_array(self) -> np.ndarray | None:
        if self.item_statistics is None or self.item_statistics_shape is None:
            return None
        raw = bytes(self.item_statistics)
        shape = tuple(self.item_statistics_shape)
        if len(raw) == 8 * int(np.prod(shape)):
            return np.frombuffer(raw, dtype="<f8").reshape(shape)
        legacy = np.frombuffer(raw, dtype="<f4").reshape(shape).astype(np.float64)
        return legacy if np.array_equal(legacy, np.round(legacy)) else None


class RescoreJob(models.Model):
    """An organizer's request to re-score every submission of a task (after fixing its labels, say)."""

    class State(models.TextChoices):
        RUNNING = "running", "Running"
        DONE = "done", "Done"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="rescore_jobs")
    requested_by = models.ForeignKey("accounts.User", on_delete=models.SET_NULL, null=True)
    total = models.PositiveIntegerField()
    done = models.PositiveIntegerField(default=0)
    state = models.CharField(max_length=8, choices=State.choices, default=State.RUNNING)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"re-score of {self.task}: {self.done}/{self.total} ({self.state})"
