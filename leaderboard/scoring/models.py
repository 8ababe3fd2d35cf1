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


class MetricScore(models.Model):
    """A secondary metric of a score (the task's ``secondary_metrics``, issue 20): its value and, for an
    entry of one run, its per-item statistics (hidden like the score's own: they never leave the scoring
    and ranking code). Written with the score, replaced when it is re-scored."""

    score = models.ForeignKey(Score, on_delete=models.CASCADE, related_name="metric_scores")
    metric = models.CharField(max_length=40)
    value = models.FloatField(help_text="The metric on the entry (mean over runs).")
    item_statistics = models.BinaryField(null=True, help_text="float64 (N, m) per-item statistics (one run).")
    item_statistics_shape = models.JSONField(null=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["score", "metric"], name="unique_metric_per_score")]

    def __str__(self) -> str:
        return f"{self.metric} of score {self.score_id}"

    def item_statistics_array(self) -> np.ndarray | None:
        if self.item_statistics is None or self.item_statistics_shape is None:
            return None
        return np.frombuffer(bytes(self.item_statistics), dtype="<f8").reshape(
            tuple(self.item_statistics_shape)
        )


class RescoreJob(models.Model):
    """An organizer's request to re-score every submission of a task (after fixing its labels, say)."""

    class State(models.TextChoices):
        RUNNING = "running", "Running"
        DONE = "done", "Done"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="rescore_jobs")
    requested_by = models.ForeignKey("accounts.User", on_delete=models.SET_NULL, null=True)
    total = models.PositiveIntegerField()
    done = models.PositiveIntegerField(default=0)
    block_total = models.PositiveIntegerField(
        default=0, help_text="Block tasks sent (leaderboard.scoring.rescore); 0 for jobs sent per submission."
    )
    block_done = models.PositiveIntegerField(default=0, help_text="Block tasks finished.")
    state = models.CharField(max_length=8, choices=State.choices, default=State.RUNNING)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"re-score of {self.task}: {self.done}/{self.total} ({self.state})"


class RescoreBlock(models.Model):
    """A block of a re-score's submissions, scored one after the other by one Celery task
    (``leaderboard.scoring.rescore``); ``state`` turns done once, which counts it in its job."""

    class State(models.TextChoices):
        RUNNING = "running", "Running"
        DONE = "done", "Done"

    job = models.ForeignKey(RescoreJob, on_delete=models.CASCADE, related_name="blocks")
    index = models.PositiveIntegerField()
    submission_ids = models.JSONField(default=list)
    state = models.CharField(max_length=8, choices=State.choices, default=State.RUNNING)
    attempts = models.PositiveIntegerField(default=0, help_text="Times a block task started it.")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["job", "index"], name="rescore_block_unique_index")]

    def __str__(self) -> str:
        return f"block {self.index} of re-score {self.job_id} ({self.state})"


class FanoutJob(models.Model):
    """A submission's scoring split into chunk tasks (``leaderboard.scoring.fanout``).

    The parse / validate / match step ran once and left each task's prepared state in a
    :class:`FanoutState` row; one Celery task per :class:`FanoutChunk` computes that chunk's replicates;
    ``done`` counts the chunks whose result is stored (distinct rows, recounted under this row's lock),
    and the task that brings it to ``total`` joins the chunks into the :class:`Score` rows.
    """

    class State(models.TextChoices):
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="fanout_jobs")
    attempt = models.PositiveIntegerField(help_text="The submission's scoring attempt that prepared it.")
    total = models.PositiveIntegerField(help_text="Chunk tasks to join.")
    done = models.PositiveIntegerField(default=0, help_text="Chunks whose result is stored.")
    state = models.CharField(max_length=8, choices=State.choices, default=State.RUNNING, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"fan-out of submission {self.submission_id}: {self.done}/{self.total} ({self.state})"


class FanoutState(models.Model):
    """One task's prepared scoring state (parsed predictions, matched detections; hidden): every host
    reads it from here, never from a local disk."""

    job = models.ForeignKey(FanoutJob, on_delete=models.CASCADE, related_name="states")
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="+")
    truth_version = models.PositiveIntegerField()
    payload = models.BinaryField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["job", "task"], name="unique_fanout_state")]

    def __str__(self) -> str:
        return f"prepared state of task {self.task_id} (job {self.job_id})"


class FanoutChunk(models.Model):
    """The replicates of chunks ``[first, stop)`` of a task's W (``stats.resampling.CHUNK_RESAMPLES`` rows
    each), written by the chunk task that computed them (re-running it overwrites the same row)."""

    job = models.ForeignKey(FanoutJob, on_delete=models.CASCADE, related_name="chunks")
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="+")
    first = models.PositiveIntegerField()
    stop = models.PositiveIntegerField()
    result = models.BinaryField(null=True, help_text="npz of float64 replicate arrays (no pickle).")
    worker = models.CharField(max_length=200, blank=True, help_text="The worker that stored the result.")
    attempts = models.PositiveIntegerField(default=0, help_text="Times a worker started it.")
    sends = models.PositiveIntegerField(default=0, help_text="Times its message was sent.")
    sent_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    lease_expires_at = models.DateTimeField(
        null=True, blank=True, help_text="Renewed by the process computing it; past it, that process is gone."
    )
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["task_id", "first"]
        constraints = [models.UniqueConstraint(fields=["job", "task", "first"], name="unique_fanout_chunk")]

    def __str__(self) -> str:
        return f"chunks [{self.first}, {self.stop}) of task {self.task_id} (job {self.job_id})"
