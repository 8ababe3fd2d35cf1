"""Challenges, their tasks (hidden test sets) and the teams that take part.

The hidden labels of a task live in :class:`TaskTruth`, a separate table read through exactly one selector
(``leaderboard.scoring.selectors.task_truth_get``), used only by the scoring code. Everything on
:class:`Task` itself is public: the item ids, the label set, the metric.
"""

from __future__ import annotations

import math
import secrets

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone

# The settings' bounds are declared once, with their help texts, in settings_spec (the doors derive from it).
from leaderboard.challenges.settings_spec import (
    CHALLENGE,
    CHALLENGE_TEXT_MAX_CHARS,
    LADDER_Z_DEFAULT,
    RUNS_DEFAULT,
    TASK,
    TASK_DESCRIPTION_MAX_CHARS,
    Setting,
)


def _range(setting: Setting) -> list[MinValueValidator | MaxValueValidator]:
    """The model's validators of a declared range (settings_spec), the last guard behind the services."""
    bounds: list[MinValueValidator | MaxValueValidator] = []
    if setting.minimum is not None:
        bounds.append(MinValueValidator(setting.minimum))
    if setting.maximum is not None:
        bounds.append(MaxValueValidator(setting.maximum))
    return bounds


class Visibility(models.TextChoices):
    PUBLIC = "public", "Public (listed)"
    UNLISTED = "unlisted", "Unlisted (anyone with the link)"
    PRIVATE = "private", "Private (organizers and participants only)"


class EntrySelection(models.TextChoices):
    LATEST = "latest", "The team's latest scored submission"
    BEST = "best", "The team's best scored submission (on the public board)"
    SELECTED = "selected", "The submission the team selected"


class IntervalMethod(models.TextChoices):
    AUTO = "auto", "By metric (chosen by measured coverage: Wilson for plain proportions)"
    BCA = "bca", "BCa bootstrap"
    PERCENTILE = "percentile", "Percentile bootstrap"
    BASIC = "basic", "Basic bootstrap"


class Correction(models.TextChoices):
    HOLM = "holm", "Holm (family-wise error)"
    BH = "bh", "Benjamini-Hochberg (false discovery rate)"


class Stratify(models.TextChoices):
    AUTO = "auto", "By true class for class-based metrics (ROC AUC, AP, kappa, macro averages)"
    CLASS = "class", "By true class for every classification metric"
    NONE = "none", "Not stratified"


def default_decimals(n_items: int) -> int:
    """The board's default precision (the rule: ``rankings.precision``): decimals whose last digit's step
    is 0.4 to 4 standard errors of a proportion on ``n_items`` items.

    >>> [default_decimals(n) for n in (10, 40, 100, 1_000, 10_000, 40_000)]
    [1, 1, 1, 2, 2, 3]
    """
    if n_items < 4:
        return 1
    return max(1, math.floor(math.log10(math.sqrt(n_items) / 2)) + 1)


class PublicMode(models.TextChoices):
    PLAIN = "plain", "Plain: every submission's score is shown"
    LADDER = "ladder", "Ladder: a new score only when it beats the shown one by more than a fixed step eta"
    LADDER_FREE = (
        "ladder-free",
        "Parameter-free Ladder: a new score only when it beats the shown one by more ",
    )
    "than z standard errors of the paired difference"


class Challenge(models.Model):
    slug = models.SlugField(max_length=80, unique=True)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True, max_length=CHALLENGE_TEXT_MAX_CHARS)
    rules = models.TextField(blank=True, max_length=CHALLENGE_TEXT_MAX_CHARS)
    start = models.DateTimeField(default=timezone.now)
    end = models.DateTimeField(null=True, blank=True)
    visibility = models.CharField(max_length=10, choices=Visibility.choices, default=Visibility.PUBLIC)
    organizers = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="organized_challenges")
    daily_limit = models.PositiveIntegerField(default=5, help_text="Submissions per team per UTC day.")
    total_limit = models.PositiveIntegerField(default=100, help_text="Submissions per team in total.")
    entry_selection = models.CharField(
        max_length=10, choices=EntrySelection.choices, default=EntrySelection.LATEST
    )
    confidence = models.FloatField(default=0.95, validators=_range(CHALLENGE["confidence"]))
    resamples = models.PositiveIntegerField(default=10_000, validators=_range(CHALLENGE["resamples"]))
    interval_method = models.CharField(
        max_length=12, choices=IntervalMethod.choices, default=IntervalMethod.AUTO
    )
    correction = models.CharField(max_length=8, choices=Correction.choices, default=Correction.HOLM)
    seed = models.PositiveBigIntegerField(default=0)
    private_revealed = models.BooleanField(
        default=False, help_text="Once true, the private board is visible to everyone who sees the challenge."
    )
    requires_approval = models.BooleanField(
        default=False,
        help_text="Participants ask to take part and an organizer approves them before they may submit.",
    )
    quota_per_address = models.BooleanField(
        default=True,
        help_text="Submissions of every team from one network address share one team's limits.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-start", "slug"]

    def __str__(self) -> str:
        return self.title

    @property
    def is_open(self) -> bool:
        now = timezone.now()
        return self.start <= now and (self.end is None or now < self.end)


class Task(models.Model):
    """One hidden test set of a challenge. Public fields only; the labels are in :class:`TaskTruth`."""

    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="tasks")
    slug = models.SlugField(max_length=80)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True, max_length=TASK_DESCRIPTION_MAX_CHARS)
    metric = models.CharField(max_length=40)
    labels = models.JSONField(default=list, blank=True, help_text="The public label set (classification).")
    item_ids = models.JSONField(default=list, help_text="The public item list, in file order.")
    has_private_split = models.BooleanField(default=False)
    grouped = models.BooleanField(default=False, help_text="Items share sources: resample whole groups.")
    positive_label = models.CharField(
        max_length=200,
        blank=True,
        help_text="The positive class of a binary-score metric (ROC AUC, AP, log loss, Brier); empty: the "
        "second label in sorted order.",
    )
    stratify = models.CharField(
        max_length=8,
        choices=Stratify.choices,
        default=Stratify.AUTO,
        help_text="Resample within each true class, so every resample keeps every class (issue 11).",
    )
    truth_version = models.PositiveIntegerField(default=0)
    # A kind registered in leaderboard.scoring.kinds (no choices here: a new kind needs no migration).
    kind = models.CharField(max_length=16, default="tabular", help_text="Follows the metric.")
    vision = models.JSONField(
        default=dict,
        blank=True,
        help_text=(
            "Public settings of a detection or segmentation task: the categories (id, name), the image "
            "sizes, ignore_index, reduce_zero_label, the truth format; never an annotation."
        ),
    )
    position = models.PositiveIntegerField(default=0)
    max_runs = models.PositiveSmallIntegerField(
        default=RUNS_DEFAULT,
        validators=_range(TASK["max_runs"]),
        help_text="Files (runs, e.g. training seeds) of this task one submission may carry.",
    )
    decimals = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        validators=_range(TASK["decimals"]),
        help_text="Decimals of the numbers participants see; empty: derived from the number of items.",
    )
    public_mode = models.CharField(
        max_length=12,
        choices=PublicMode.choices,
        default=PublicMode.PLAIN,
        help_text="What the public board releases (issue 15): every score, or only Ladder progress.",
    )
    ladder_eta = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1e-9)],
        help_text="The fixed Ladder's step, in the metric's units (required in mode 'ladder').",
    )
    ladder_z = models.FloatField(
        default=LADDER_Z_DEFAULT,
        validators=_range(TASK["ladder_z"]),
        help_text="The parameter-free Ladder's step, in standard errors of the paired difference.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["challenge", "position", "slug"]
        constraints = [models.UniqueConstraint(fields=["challenge", "slug"], name="unique_task_slug")]

    def __str__(self) -> str:
        return f"{self.challenge.slug}/{self.slug}"

    @property
    def n_items(self) -> int:
        return len(self.item_ids)


class TaskTruth(models.Model):
    """The hidden labels of a task. Read only through ``scoring.selectors.task_truth_get``."""

    task = models.OneToOneField(Task, on_delete=models.CASCADE, related_name="truth")
    labels = models.JSONField(help_text="Hidden labels aligned with Task.item_ids.")
    groups = models.JSONField(null=True, blank=True, help_text="Group id per item (grouped bootstrap).")
    private = models.JSONField(null=True, blank=True, help_text="Per item: True if on the private board.")
    data = models.BinaryField(
        null=True, help_text="Detection / segmentation: the organizer's annotation file as uploaded."
    )
    version = models.PositiveIntegerField(default=1)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"hidden labels of {self.task} (version {self.version})"


def new_invite_code() -> str:
    return secrets.token_urlsafe(12)


class Team(models.Model):
    """Who submits. A participant who submits alone gets a team of one; limits count per team.

    Members join with the team's invite code, which only members see.
    """

    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="teams")
    name = models.CharField(max_length=100)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="teams")
    is_baseline = models.BooleanField(
        default=False, help_text="Entries of this team are marked as baselines."
    )
    invite_code = models.CharField(max_length=32, unique=True, default=new_invite_code, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["challenge", "name"]
        constraints = [models.UniqueConstraint(fields=["challenge", "name"], name="unique_team_name")]

    def __str__(self) -> str:
        return self.name


class Participant(models.Model):
    """A user's request to take part in a challenge that requires approval, and the organizer's answer."""

    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="participants")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="participations"
    )
    approved = models.BooleanField(default=False)
    requested_at = models.DateTimeField(auto_now_add=True)
    approved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["challenge", "requested_at"]
        constraints = [models.UniqueConstraint(fields=["challenge", "user"], name="unique_participant")]

    def __str__(self) -> str:
        return f"{self.user} in {self.challenge} ({'approved' if self.approved else 'waiting'})"
