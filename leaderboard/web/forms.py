"""Forms of the site. They validate input shapes only; the services decide and raise ApplicationError."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib.auth.forms import UserCreationForm, UsernameField
from django.core.files.uploadedfile import UploadedFile
from django.utils import timezone

from leaderboard.accounts.models import User
from leaderboard.challenges.models import Challenge, Task
from leaderboard.challenges.settings_spec import (
    CHALLENGE_SETTINGS_SPEC,
    IGNORE_INDEX_DEFAULT,
    TASK_SETTINGS,
    Setting,
)
from leaderboard.challenges.settings_spec import (
    STATISTICS_FIELDS as FROZEN_ONCE_SCORED,
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

    def validate_password_for_user(self, user: Any, **kwargs: Any) -> None:
        """A weak password is the first field's fault: its errors go under "Password", not under the
        confirmation (Django's default field; issue 22, A7). A mismatch stays under the confirmation."""
        super().validate_password_for_user(user, password_field_name="password1")  # type: ignore[misc]


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one input: one file per run (training seed) of a submission."""

    widget = MultipleFileInput

    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile]:
        files = [d for d in data if d] if isinstance(data, list | tuple) else [data] if data else []
        for upload in files:
            if getattr(upload, "size", None) == 0:  # named, in the words of the API and `lb`
                raise forms.ValidationError(f"{upload.name}: the file is empty", code="empty")
        return [super(MultipleFileField, self).clean(d, initial) for d in files]


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
        chosen = any(cleaned.get(task_field_name(t)) or task_field_name(t) in self.errors for t in self.tasks)
        if not chosen:  # not when a chosen file was refused: that field says why (issue 22, A2)
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


def _numeric(s: Setting) -> dict[str, Any]:
    return {
        "min_value": s.minimum,
        "max_value": s.maximum,
        "error_messages": {"min_value": s.range_message, "max_value": s.range_message},
    }


#: A form field per kind of setting; text and labels (comma-separated on the page) are char fields.
_FIELDS: dict[str, Callable[[Setting, dict[str, Any]], forms.Field]] = {
    "int": lambda s, kw: forms.IntegerField(**_numeric(s), **kw),
    "float": lambda s, kw: forms.FloatField(**_numeric(s), **kw),
    "bool": lambda s, kw: forms.BooleanField(**{**kw, "required": False}),
    "choice": lambda s, kw: forms.ChoiceField(choices=list(s.choices), **kw),
    "metric": lambda s, kw: forms.ChoiceField(**kw),  # the site's metrics: TaskForm(metric_choices=)
    "slug": lambda s, kw: forms.SlugField(max_length=s.max_length, **kw),
    "file": lambda s, kw: forms.FileField(**kw),
    "datetime": lambda s, kw: forms.DateTimeField(**{"widget": DateTimeInput(), **kw}),
    "text": lambda s, kw: forms.CharField(max_length=s.max_length, **kw),
    "labels": lambda s, kw: forms.CharField(**kw),
}


def setting_field(setting: Setting, **overrides: Any) -> forms.Field:
    """The form field of a declared setting (``challenges.settings_spec``): its range, default, label and
    help text, with the declaration's message for a value outside the range. ``overrides`` are the page's
    own choices (a widget); the range is never overridden."""
    kwargs: dict[str, Any] = {
        "required": setting.required,
        "help_text": setting.help,
        "label": setting.verbose_label,
    }
    # (not ``in (None, "", False)``: 0 == False, and a seed's default 0 was left out, so an empty field
    # reached the service as None, a 500 on the new-challenge form)
    if (
        setting.default is not None
        and setting.default != ""
        and setting.default is not False
        and not setting.required
    ):
        kwargs["initial"] = setting.default
    field = _FIELDS[setting.kind](setting, {**kwargs, **overrides})
    if setting.positive:  # strictly above zero: no inclusive min_value says it
        field.validators.append(_declared_range(setting))
    return field


def _declared_range(setting: Setting) -> Any:
    def check(value: Any) -> None:
        message = setting.refusal(value)
        if message is not None:
            raise forms.ValidationError(message, code="range")

    return check


def setting_fields(settings: tuple[Setting, ...], **overrides: dict[str, Any]) -> dict[str, forms.Field]:
    return {s.name: setting_field(s, **overrides.get(s.name, {})) for s in settings}


class ChallengeForm(forms.Form):
    """The organizer's challenge settings (declared in ``challenges.settings_spec``); field names are the
    service's keyword arguments."""

    slug = forms.SlugField(
        max_length=80, required=False, help_text="In the address; made from the title if empty."
    )

    SETTINGS_FIELDS = tuple(s.name for s in CHALLENGE_SETTINGS_SPEC if s.name != "title")
    STATISTICS_FIELDS = tuple(s.name for s in CHALLENGE_SETTINGS_SPEC if s.name in FROZEN_ONCE_SCORED)
    FIELD_ORDER = ("title", "slug", *SETTINGS_FIELDS)

    def __init__(self, *args: Any, editing: Challenge | None = None, **kwargs: Any) -> None:
        if editing is not None and "initial" not in kwargs:
            kwargs["initial"] = {
                name: getattr(editing, name) for name in ("title", "slug", *self.SETTINGS_FIELDS)
            }
        super().__init__(*args, **kwargs)
        self.fields.update(
            setting_fields(
                CHALLENGE_SETTINGS_SPEC,
                description={"widget": forms.Textarea(attrs={"rows": 5})},
                rules={"widget": forms.Textarea(attrs={"rows": 5})},
            )
        )
        self.order_fields(self.FIELD_ORDER)
        if editing is None:  # a new challenge starts now unless the organizer says otherwise (issue 22, A10),
            # as it does from the API and ``lb create-challenge`` without --start
            self.fields["start"].initial = timezone.now().replace(second=0, microsecond=0)
        if editing is not None:
            del self.fields["slug"]
            if editing.submissions.exists():
                for name in self.STATISTICS_FIELDS:
                    self.fields[name].disabled = True
                    self.fields[name].help_text = "Frozen: submissions exist."

    def service_fields(self) -> dict[str, Any]:
        """The settings for the service; a field left empty takes its declared default (not None)."""
        defaults = {s.name: s.default for s in CHALLENGE_SETTINGS_SPEC if not s.required and not s.nullable}
        return {
            name: defaults[name]
            if self.cleaned_data[name] in (None, "") and defaults.get(name) is not None
            else self.cleaned_data[name]
            for name in ("title", *self.SETTINGS_FIELDS)
        }


def _check_size(upload: UploadedFile | None, *, kind: TaskKind) -> UploadedFile | None:
    """Refuse a file over its task kind's limit before the view reads it into memory."""
    if upload is not None:
        try:
            upload_check(upload, limit=kind.upload_max_bytes())
        except ApplicationError as exc:
            raise forms.ValidationError(exc.message) from exc
    return upload


class TaskForm(forms.Form):
    """A new task: the fields are the declared task settings (``challenges.settings_spec.TASK_SETTINGS``),
    in their order."""

    def __init__(self, *args: Any, metric_choices: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields.update(
            setting_fields(TASK_SETTINGS, description={"widget": forms.Textarea(attrs={"rows": 3})})
        )
        self.fields["metric"].choices = metric_choices  # type: ignore[attr-defined]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if cleaned.get("truth") is not None and cleaned.get("metric"):
            try:
                _check_size(cleaned["truth"], kind=kind_for_metric(cleaned["metric"]))
            except forms.ValidationError as exc:
                self.add_error("truth", exc)
        if cleaned.get("ignore_index") is None:
            cleaned["ignore_index"] = IGNORE_INDEX_DEFAULT
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


class PlanForm(forms.Form):
    """Planning a test set (issue 23): items needed for a gap at a power, and what a number of items resolves."""

    metric = forms.ChoiceField(choices=())
    gap = forms.FloatField(min_value=1e-9, help_text="The smallest difference between two entries to detect.")
    power = forms.FloatField(min_value=0.5, max_value=0.999, initial=0.8)
    alpha = forms.FloatField(min_value=1e-6, max_value=0.5, initial=0.05, help_text="Two-sided test level.")
    accuracy = forms.FloatField(
        required=False, min_value=0.0, max_value=1.0,
        help_text="0/1 metrics: the expected accuracy (blank: the worst case, discordance 0.5).",
    )  # fmt: skip
    sd = forms.FloatField(
        required=False,
        min_value=1e-12,
        help_text="Metrics that are means of per-item values: their standard deviation.",
    )
    pilot_standard_error = forms.FloatField(
        required=False, min_value=1e-12,
        help_text="Any other metric: a bootstrap standard error of a paired difference from a pilot...",
    )  # fmt: skip
    pilot_items = forms.IntegerField(
        required=False, min_value=1, help_text="... measured on this many items."
    )
    n_items = forms.IntegerField(
        required=False, min_value=1, help_text="Optional: what this many items resolve."
    )

    def __init__(self, *args: Any, metric_choices: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["metric"].choices = metric_choices  # type: ignore[attr-defined]
