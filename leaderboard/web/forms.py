"""Forms of the site. They validate input shapes only; the services decide and raise ApplicationError."""

from __future__ import annotations

import uuid
from typing import Any

from django import forms
from django.contrib.auth.forms import UserCreationForm, UsernameField
from django.core.files.uploadedfile import UploadedFile

from leaderboard.accounts.models import User
from leaderboard.challenges.models import (
    CHALLENGE_TEXT_MAX_CHARS,
    DECIMALS_MAX,
    LADDER_Z_DEFAULT,
    RUNS_DEFAULT,
    RUNS_MAX,
    TASK_DESCRIPTION_MAX_CHARS,
    Challenge,
    Correction,
    EntrySelection,
    IntervalMethod,
    PublicMode,
    Task,
    Visibility,
)
from leaderboard.core.exceptions import ApplicationError
from leaderboard.core.uploads import upload_check
from leaderboard.scoring.kinds import TaskKind, get_kind, kind_for_metric
from leaderboard.submissions.models import DESCRIPTION_MAX_CHARS, LINK_MAX_CHARS


class SignupForm(UserCreationForm):
    class Meta:
        model = User
        fields = ("username", "email")
        field_classes = {"username": UsernameField}


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one input: one file per run (training seed) of a submission."""

    widget = MultipleFileInput

    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile]:
        single = super().clean
        if isinstance(data, list | tuple):
            return [single(d, initial) for d in data if d]
        return [single(data, initial)] if data else []


def task_field_name(task: Task) -> str:
    return f"file_{task.slug}"


class SubmissionForm(forms.Form):
    name = forms.CharField(max_length=120, help_text="How the entry is called on the board.")
    description = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}), required=False, max_length=DESCRIPTION_MAX_CHARS
    )
    link = forms.URLField(
        required=False,
        max_length=LINK_MAX_CHARS,
        help_text="Code or paper (optional).",
        assume_scheme="https",
    )
    # One token per drawn form: a form sent twice (a double click, a retry after a lost answer) stores one
    # submission, and the second sending shows the first's page.
    idempotency_key = forms.CharField(
        widget=forms.HiddenInput, required=False, max_length=255, initial=lambda: uuid.uuid4().hex
    )

    def __init__(self, *args: Any, tasks: list[Task], allow_baseline: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tasks = tasks
        for task in tasks:
            kind = get_kind(task.kind)
            self.fields[task_field_name(task)] = MultipleFileField(
                label=f"Predictions for {task.title}",
                required=False,
                help_text=f"{kind.upload_help}; several files are several runs (seeds), at most {task.max_runs}.",
                widget=MultipleFileInput(
                    attrs={"accept": kind.upload_accept, "data-max-bytes": kind.upload_max_bytes()}
                ),
            )
        if allow_baseline:
            self.fields["is_baseline"] = forms.BooleanField(
                required=False, label="Baseline", help_text="Marked as a baseline on the board."
            )

    def task_fields(self) -> list[tuple[Task, forms.BoundField]]:
        return [(t, self[task_field_name(t)]) for t in self.tasks]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if not any(cleaned.get(task_field_name(t)) for t in self.tasks):
            raise forms.ValidationError("Choose at least one predictions file.")
        for task in self.tasks:
            for upload in cleaned.get(task_field_name(task)) or []:
                try:
                    _check_size(upload, kind=get_kind(task.kind))
                except forms.ValidationError as exc:
                    self.add_error(task_field_name(task), exc)
        return cleaned


class DateTimeInput(forms.DateTimeInput):
    input_type = "datetime-local"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(format="%Y-%m-%dT%H:%M", **kwargs)


class ChallengeForm(forms.Form):
    """The organizer's challenge settings; field names are the service's keyword arguments."""

    title = forms.CharField(max_length=200)
    slug = forms.SlugField(
        max_length=80, required=False, help_text="In the address; made from the title if empty."
    )
    description = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 5}), required=False, max_length=CHALLENGE_TEXT_MAX_CHARS
    )
    rules = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 5}), required=False, max_length=CHALLENGE_TEXT_MAX_CHARS
    )
    start = forms.DateTimeField(widget=DateTimeInput(), help_text="UTC.")
    end = forms.DateTimeField(widget=DateTimeInput(), required=False, help_text="UTC; empty for no end.")
    visibility = forms.ChoiceField(choices=Visibility.choices, initial=Visibility.PUBLIC)
    daily_limit = forms.IntegerField(min_value=1, initial=5, help_text="Submissions per team per 24 hours.")
    total_limit = forms.IntegerField(min_value=1, initial=100, help_text="Submissions per team in total.")
    entry_selection = forms.ChoiceField(choices=EntrySelection.choices, initial=EntrySelection.LATEST)
    confidence = forms.FloatField(min_value=0.5, max_value=0.999, initial=0.95)
    resamples = forms.IntegerField(min_value=100, max_value=100_000, initial=10_000)
    interval_method = forms.ChoiceField(choices=IntervalMethod.choices, initial=IntervalMethod.AUTO)
    correction = forms.ChoiceField(choices=Correction.choices, initial=Correction.HOLM)
    seed = forms.IntegerField(min_value=0, initial=0)
    requires_approval = forms.BooleanField(
        required=False,
        label="Approved participants only",
        help_text="Participants ask to take part; they may submit once an organizer approves them.",
    )

    SETTINGS_FIELDS = (
        "description", "rules", "start", "end", "visibility", "daily_limit", "total_limit",
        "entry_selection", "confidence", "resamples", "interval_method", "correction", "seed",
        "requires_approval",
    )  # fmt: skip
    STATISTICS_FIELDS = ("confidence", "resamples", "interval_method", "correction", "seed")

    def __init__(self, *args: Any, editing: Challenge | None = None, **kwargs: Any) -> None:
        if editing is not None and "initial" not in kwargs:
            kwargs["initial"] = {
                name: getattr(editing, name) for name in ("title", "slug", *self.SETTINGS_FIELDS)
            }
        super().__init__(*args, **kwargs)
        if editing is not None:
            del self.fields["slug"]
            if editing.submissions.exists():
                for name in self.STATISTICS_FIELDS:
                    self.fields[name].disabled = True
                    self.fields[name].help_text = "Frozen: submissions exist."

    def service_fields(self) -> dict[str, Any]:
        return {name: self.cleaned_data[name] for name in ("title", *self.SETTINGS_FIELDS)}


def _check_size(upload: UploadedFile | None, *, kind: TaskKind) -> UploadedFile | None:
    """Refuse a file over its task kind's limit before the view reads it into memory."""
    if upload is not None:
        try:
            upload_check(upload, limit=kind.upload_max_bytes())
        except ApplicationError as exc:
            raise forms.ValidationError(exc.message) from exc
    return upload


class TaskForm(forms.Form):
    title = forms.CharField(max_length=200)
    slug = forms.SlugField(max_length=80)
    description = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}), required=False, max_length=TASK_DESCRIPTION_MAX_CHARS
    )
    max_runs = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=RUNS_MAX,
        initial=RUNS_DEFAULT,
        label="Runs per submission",
        help_text="Files of this task one submission may carry (training seeds). Each run's value is shown "
        "only as part of the mean, at the board's precision.",
    )
    decimals = forms.IntegerField(
        min_value=1,
        max_value=DECIMALS_MAX,
        required=False,
        label="Decimals shown",
        help_text="The board's precision: participants see every number rounded to this many decimals. "
        "Empty: derived from the number of items.",
    )
    metric = forms.ChoiceField()
    labels = forms.CharField(
        required=False,
        help_text=(
            "The label set, comma-separated (classification); empty to take it from the labels file. "
            "Segmentation: the class names, in pixel-value order (0, 1, 2, ...)."
        ),
    )
    group_column = forms.CharField(
        required=False, help_text="Column of the group (writer, patient...) for the grouped bootstrap."
    )
    split_column = forms.CharField(
        required=False,
        help_text=(
            "Column that says, per item, 'public' or 'private' (the private items form the board "
            "revealed at the end)."
        ),
    )
    positive = forms.CharField(
        required=False,
        max_length=200,
        label="Positive class",
        help_text="For ROC AUC, average precision, log loss and Brier: the class the scores are the "
        "probability of. Empty: the second label in sorted order.",
    )
    stratify = forms.ChoiceField(
        choices=[
            ("auto", "By true class for class-based metrics (ROC AUC, AP, kappa, macro averages)"),
            ("class", "By true class for every classification metric"),
            ("none", "Not stratified"),
        ],
        initial="auto",
        required=False,
        label="Resampling",
        help_text="Stratified resampling keeps every class in every resample, so rare-class metrics stay defined.",
    )
    public_mode = forms.ChoiceField(
        choices=PublicMode.choices,
        initial=PublicMode.PLAIN,
        required=False,
        label="Public board",
        help_text="Under a Ladder the public board shows a team's new score only when it beats the shown one "
        "by more than a step, which stops participants from climbing the public board by probing it "
        "(docs/comparisons.md). Cannot change once the task has submissions.",
    )
    ladder_eta = forms.FloatField(
        required=False,
        min_value=1e-9,
        label="Ladder step (fixed)",
        help_text="Mode 'Ladder': the step in the metric's units, e.g. 0.01.",
    )
    ladder_z = forms.FloatField(
        required=False,
        min_value=0,
        max_value=10,
        initial=LADDER_Z_DEFAULT,
        label="Ladder step (standard errors)",
        help_text=f"Mode 'parameter-free Ladder': the step in standard errors of the paired difference "
        f"(default {LADDER_Z_DEFAULT:g}: the smallest that kept the boosting attack under one standard error).",
    )
    ignore_index = forms.IntegerField(
        min_value=0, max_value=65535, initial=255, required=False,
        help_text="Segmentation: the label-map value of pixels that are not scored.",
    )  # fmt: skip
    reduce_zero_label = forms.BooleanField(
        required=False,
        help_text="Segmentation (ADE20K): label 0 is ignored and the other labels shift by -1.",
    )
    truth = forms.FileField(
        label="Hidden labels file",
        help_text=(
            "CSV or Parquet with an id column and the labels; detection: a COCO annotation JSON (or "
            "VOC-style); segmentation: a zip or tar of PNG label maps named <image id>.png. Stored "
            "privately; never shown again."
        ),
    )

    def __init__(self, *args: Any, metric_choices: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["metric"].choices = metric_choices  # type: ignore[attr-defined]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if cleaned.get("truth") is not None and cleaned.get("metric"):
            try:
                _check_size(cleaned["truth"], kind=kind_for_metric(cleaned["metric"]))
            except forms.ValidationError as exc:
                self.add_error("truth", exc)
        if cleaned.get("ignore_index") is None:
            cleaned["ignore_index"] = 255
        return cleaned

    def label_list(self) -> list[str] | None:
        raw = self.cleaned_data.get("labels") or ""
        labels = [x.strip() for x in raw.split(",") if x.strip()]
        return labels or None


class TruthReplaceForm(forms.Form):
    group_column = forms.CharField(required=False)
    split_column = forms.CharField(required=False)
    truth = forms.FileField(label="Corrected hidden labels file", help_text="Same items in the same order.")

    def __init__(self, *args: Any, task: Task, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.task = task

    def clean_truth(self) -> UploadedFile | None:
        return _check_size(self.cleaned_data.get("truth"), kind=get_kind(self.task.kind))
