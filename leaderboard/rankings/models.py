"""Immutable board snapshots: pages and the API read the latest one; no statistics at request time."""

from __future__ import annotations

from django.db import models

from leaderboard.challenges.models import Challenge, Task


class BoardSnapshot(models.Model):
    """One rebuild of one task's board (public or private split). Never updated after it is written."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="snapshots")
    split = models.CharField(max_length=8)
    sequence = models.PositiveIntegerField(help_text="1, 2, ... per (task, split); the latest is the board.")
    entry_count = models.PositiveIntegerField()
    signature = models.JSONField()
    rows = models.JSONField(help_text="Ranked rows, as stats.board renders them, plus entry metadata.")
    rank_distribution = models.JSONField(
        default=list, help_text="K x K: how often each entry took each rank."
    )
    pairwise = models.JSONField(default=dict, help_text="Every pair of entries (boards of up to 60 entries).")
    robustness = models.JSONField(
        default=dict,
        blank=True,
        help_text="What the test set resolves (rankings.board.build_resolution) and the scores the board read; "
        "the rank robustness itself is built on first read (RobustnessReport). Snapshots written before "
        "that hold the whole robustness here.",
    )
    ladder_rows = models.JSONField(
        default=list,
        blank=True,
        help_text="A public board in a Ladder mode: the rows the Ladder released (rankings.ladder); the only "
        "rows non-organizers read before the reveal.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task", "split", "-sequence"]
        constraints = [
            models.UniqueConstraint(fields=["task", "split", "sequence"], name="unique_snapshot_sequence")
        ]

    def __str__(self) -> str:
        return f"{self.task} {self.split} #{self.sequence} ({self.entry_count} entries)"


class ChallengeSummary(models.Model):
    """The cross-task summary of a challenge: average ranks, Friedman, critical difference, the diagram."""

    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="summaries")
    split = models.CharField(max_length=8)
    sequence = models.PositiveIntegerField()
    data = models.JSONField()
    svg = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["challenge", "split", "-sequence"]
        constraints = [
            models.UniqueConstraint(fields=["challenge", "split", "sequence"], name="unique_summary_sequence")
        ]

    def __str__(self) -> str:
        return f"{self.challenge} {self.split} summary #{self.sequence}"


class ShakeupReport(models.Model):
    """The shake-up report of a task: its public board against its private board (one pair of snapshots).

    Built by a worker after a board of a task with a private split is rebuilt (it reads per-item
    statistics, which never leave the ranking code); pages and the API only read it. Visible to organizers
    always and to everyone once the private board is revealed.
    """

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="shakeup_reports")
    public_sequence = models.PositiveIntegerField()
    private_sequence = models.PositiveIntegerField()
    data = models.JSONField()
    svg = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task", "-private_sequence", "-public_sequence"]
        constraints = [
            models.UniqueConstraint(
                fields=["task", "public_sequence", "private_sequence"], name="unique_shakeup_per_snapshots"
            )
        ]

    def __str__(self) -> str:
        return f"{self.task} shake-up (public #{self.public_sequence}, private #{self.private_sequence})"


class RobustnessReport(models.Model):
    """How stable one snapshot's ranking is (``rankings.board.build_robustness``): rank frequencies with
    median and interval, the blob plot and its text, Kendall's tau-b of the bootstrap rankings, the ranking
    schemes.

    Not paid by the rebuild: built on the first read that may see it (``rankings.services.board_robustness``)
    and kept here, one per snapshot, so every process reads the same one. Never updated, but for the blob plot
    (``svg``), drawn once by the first read that shows it.
    """

    snapshot = models.OneToOneField(BoardSnapshot, on_delete=models.CASCADE, related_name="robustness_report")
    data = models.JSONField(help_text="Everything but the blob plot.")
    svg = models.TextField(  # noqa: DJ001 (null: not drawn yet; "": nothing to draw)
        null=True,
        blank=True,
        help_text="The blob plot, drawn on the first read of the page that shows it (the costly part); "
        "null: not drawn yet, empty: nothing to draw (a board over BLOB_MAX_ENTRIES, or no robustness).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"robustness of {self.snapshot}"


class BoardState(models.Model):
    """How a board's rebuilds are going: when one last read every score, and the last failure, if any.

    The sweeper compares ``checked_at`` with the task's latest score to find a board left behind (a lost
    rebuild message, a lost coalescing marker, a rebuild that failed); the organizer page shows the error
    next to the stale board. Never shown to participants.
    """

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="board_states")
    split = models.CharField(max_length=8)
    checked_at = models.DateTimeField(
        null=True, blank=True, help_text="When the last successful rebuild read the scores."
    )
    resent_at = models.DateTimeField(null=True, blank=True, help_text="When the sweeper last re-sent it.")
    error = models.TextField(blank=True, help_text="The last failed rebuild's error (organizers only).")
    failed_at = models.DateTimeField(null=True, blank=True)
    failures = models.PositiveIntegerField(default=0, help_text="Failed attempts since the last success.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["task", "split"], name="unique_board_state")]

    def __str__(self) -> str:
        return f"{self.task} {self.split}: checked {self.checked_at}, failures {self.failures}"


class LadderRelease(models.Model):
    """What the public board released for one submission of a task in a Ladder mode (rankings.ladder).

    Written once, by the public board's rebuild with the task locked, in the order the scores reach the
    board; never updated (a re-score releases again under the new ``truth_version``). ``shown`` is the
    value the team's public row shows after this submission; ``moved`` whether this submission became the
    shown one. ``threshold`` (the step it had to beat) is computed from hidden labels: organizers only.
    """

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="ladder_releases")
    submission = models.ForeignKey(
        "submissions.Submission", on_delete=models.CASCADE, related_name="ladder_releases"
    )
    truth_version = models.PositiveIntegerField()
    entry_key = models.CharField(max_length=40, help_text='"team:<id>" or "baseline:<submission id>".')
    shown = models.FloatField(null=True, help_text="The team's public value after this submission.")
    shown_submission = models.ForeignKey(
        "submissions.Submission", on_delete=models.CASCADE, null=True, related_name="+"
    )
    moved = models.BooleanField()
    threshold = models.FloatField(null=True, help_text="The step it had to beat (organizers only).")
    message = models.TextField(help_text="In words, for the participant.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["task", "submission", "truth_version"], name="unique_ladder_release"
            )
        ]

    def __str__(self) -> str:
        return f"{self.task} submission {self.submission_id}: shown {self.shown} (moved: {self.moved})"
