"""Input serializers validate the shape of a request; output serializers choose what leaves.

Nothing here reads :class:`~leaderboard.challenges.models.TaskTruth`: the hidden labels, the groups and
which items are private never appear in a response.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any, cast, get_args, get_origin, get_type_hints

from django.contrib.auth.models import AnonymousUser
from django.core.files.uploadedfile import UploadedFile
from django.core.validators import RegexValidator
from django.db import models
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from leaderboard.api.fields import OpenFloatField, RFC3339DateTimeField
from leaderboard.challenges.models import Challenge, Task, Team
from leaderboard.challenges.services import CHALLENGE_SETTINGS
from leaderboard.challenges.settings_spec import (
    CHALLENGE_SETTINGS_SPEC,
    SECONDARY_METRICS,
    TASK,
    TASK_SETTINGS,
    Setting,
)
from leaderboard.core.exceptions import ApplicationError
from leaderboard.rankings.board import SnapshotRow
from leaderboard.rankings.precision import task_decimals
from leaderboard.rankings.selectors import Channel, ReaderView, reader_view
from leaderboard.scoring.engine import metric_choices
from leaderboard.scoring.kinds import get_kind, kind_choices
from leaderboard.scoring.models import RescoreJob, Score
from leaderboard.submissions.models import DESCRIPTION_MAX_CHARS, LINK_MAX_CHARS, Submission, SubmissionFile
from leaderboard.submissions.services import Upload

PASSWORD_MIN_LENGTH = 8  # Django's MinimumLengthValidator, the project's AUTH_PASSWORD_VALIDATORS
FILE_FIELD = "file"
TASK_FILE_PREFIX = "file:"
NAME_THE_TASK = "Challenge '{challenge}' has several tasks; send each file as 'file:<task>' ({fields})."
UNKNOWN_FILE_FIELD = "Unexpected file field '{field}'; send 'file' or 'file:<task>'."


# --- accounts ---------------------------------------------------------------------------------------
class RegisterInputSerializer(serializers.Serializer):
    """The rules the schema can state: the username's characters (Django's username validator, written
    without ``\\Z`` so any JSON Schema engine reads it), the password's minimum length and that it is not
    all digits. Its similarity to the username and the list of common passwords cannot be stated: such a
    password is refused with 400 (tests/reliability/test_fuzz.py accepts that 400 for this operation)."""

    username = serializers.CharField(
        max_length=150, validators=[RegexValidator(r"^[\w.@+-]+$", "Letters, digits and @/./+/-/_ only.")]
    )
    password = serializers.CharField(
        write_only=True,
        style={"input_type": "password"},
        min_length=PASSWORD_MIN_LENGTH,
        error_messages={"min_length": "This password is too short. It must contain at least 8 characters."},
        validators=[RegexValidator(r"\D", "This password is entirely numeric.")],
    )
    email = serializers.EmailField(required=False, allow_blank=True, default="")


class TokenInputSerializer(serializers.Serializer):
    # minLength 1 in the schema: a blank field is refused as the view's AuthTokenSerializer refuses it
    username = serializers.CharField(min_length=1)
    password = serializers.CharField(write_only=True, min_length=1, style={"input_type": "password"})


class TokenOutputSerializer(serializers.Serializer):
    token = serializers.CharField()
    username = serializers.CharField()


# --- challenges -------------------------------------------------------------------------------------


class RevealInputSerializer(serializers.Serializer):
    """How to reveal an open challenge's private board: once revealed, each new submission would show its
    team the private score, so an open challenge needs one of the two (409 otherwise)."""

    close = serializers.BooleanField(default=False, help_text="Close submissions now, then reveal.")
    while_open = serializers.BooleanField(
        default=False, help_text="Reveal and keep the challenge open (new submissions show private scores)."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["close"] and attrs["while_open"]:
            raise serializers.ValidationError("Say 'close' or 'while_open', not both.")
        return attrs


def _challenge_extra_kwargs() -> dict[str, dict[str, Any]]:
    """Help texts and range messages of the declared challenge settings (the model carries the ranges)."""
    extra: dict[str, dict[str, Any]] = {}
    for setting in CHALLENGE_SETTINGS_SPEC:
        kwargs: dict[str, Any] = {"help_text": setting.help} if setting.help else {}
        if setting.kind in ("int", "float"):
            kwargs["error_messages"] = {
                "min_value": setting.range_message,
                "max_value": setting.range_message,
            }
        if kwargs:
            extra[setting.name] = kwargs
    return extra


CHALLENGE_EXTRA_KWARGS = _challenge_extra_kwargs()


class ChallengeInputSerializer(serializers.ModelSerializer):
    """Creation: ``slug`` is optional (made from the title)."""

    slug = serializers.SlugField(max_length=80, required=False)
    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        models.DateTimeField: RFC3339DateTimeField,
    }

    class Meta:
        model = Challenge
        fields = ["slug", *CHALLENGE_SETTINGS]
        extra_kwargs = CHALLENGE_EXTRA_KWARGS


class ChallengeUpdateSerializer(serializers.ModelSerializer):
    # every RFC 3339 date-time the schema's ``format: date-time`` allows (issue 21, item 11)
    serializer_field_mapping = ChallengeInputSerializer.serializer_field_mapping

    class Meta:
        model = Challenge
        fields = list(CHALLENGE_SETTINGS)
        extra_kwargs = CHALLENGE_EXTRA_KWARGS


class ReplacedEntrySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class ChallengeOutputSerializer(serializers.ModelSerializer):
    is_open = serializers.BooleanField(read_only=True)
    tasks = serializers.SerializerMethodField()
    is_organizer = serializers.SerializerMethodField()
    replaces = serializers.SerializerMethodField(
        help_text=(
            "Your team's submission that your next scored submission would push off the board (the latest "
            "counts, better or worse); null when none would, and in listings."
        )
    )
    url = serializers.SerializerMethodField()

    class Meta:
        model = Challenge
        fields = [
            "slug",
            *CHALLENGE_SETTINGS,
            "is_open",
            "private_revealed",
            "tasks",
            "is_organizer",
            "replaces",
            "url",
        ]

    def get_tasks(self, obj: Challenge) -> list[str]:
        return [t.slug for t in obj.tasks.all()]

    def get_is_organizer(self, obj: Challenge) -> bool:
        organizer_of: set[int] = self.context.get("organizer_of", set())
        return obj.pk in organizer_of

    @extend_schema_field(ReplacedEntrySerializer(allow_null=True))
    def get_replaces(self, obj: Challenge) -> dict[str, Any] | None:
        replaced = self.context.get("replaces", {}).get(obj.pk)
        return None if replaced is None else {"id": replaced.pk, "name": replaced.name}

    def get_url(self, obj: Challenge) -> str:
        return reverse("api:challenge-detail", kwargs={"slug": obj.slug})


# --- tasks ------------------------------------------------------------------------------------------
def prediction_format(task: Task) -> dict[str, Any]:
    """What a predictions file for this task looks like (public: derived from the metric and item list)."""
    kind = get_kind(task.kind)
    return kind.api_format(task, kind.prediction_format(task.metric))


class TaskOutputSerializer(serializers.ModelSerializer):
    # The registered kinds (leaderboard.scoring.kinds), an enum in the schema as the model's choices were.
    kind = serializers.ChoiceField(choices=kind_choices(), help_text="Follows the metric.", required=False)
    n_items = serializers.IntegerField(read_only=True)
    decimals = serializers.SerializerMethodField(
        help_text="The board's precision: decimals of every number participants see."
    )
    prediction_format = serializers.SerializerMethodField()
    items_url = serializers.SerializerMethodField()

    class Meta:
        model = Task
        fields = [
            "slug",
            "title",
            "description",
            "metric",
            "kind",
            "vision",
            "labels",
            "n_items",
            "has_private_split",
            "grouped",
            "positive_label",
            "stratify",
            "position",
            "max_runs",
            "decimals",
            "public_mode",
            "ladder_eta",
            "ladder_z",
            "prediction_format",
            "items_url",
        ]

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_prediction_format(self, obj: Task) -> dict[str, Any]:
        return prediction_format(obj)

    def get_decimals(self, obj: Task) -> int:
        return task_decimals(obj)

    def get_items_url(self, obj: Task) -> str:
        return reverse("api:task-items", kwargs={"slug": obj.challenge.slug, "task": obj.slug})


def _float(s: Setting, kw: dict[str, Any]) -> serializers.Field:
    if not s.positive:
        return serializers.FloatField(**_numeric(s), **kw)
    # strictly above zero: the schema states it (``exclusiveMinimum``), so a generated 0 is not "valid"
    message = f"`{s.name}` must be a positive number."
    numeric = {**_numeric(s), "min_value": 0.0 if s.minimum is None else s.minimum}
    numeric["error_messages"] = {**numeric["error_messages"], "min_value": message}
    return OpenFloatField(exclusive_min=True, message=message, **numeric, **kw)


def _numeric(s: Setting) -> dict[str, Any]:
    return {
        "min_value": s.minimum,
        "max_value": s.maximum,
        "error_messages": {"min_value": s.range_message, "max_value": s.range_message},
        "validators": [_declared_range(s)] if s.positive else [],
    }


def _text(s: Setting) -> dict[str, Any]:
    return {"max_length": s.max_length}


def _list_of_text(s: Setting, kw: dict[str, Any]) -> serializers.Field:
    kw.pop("allow_null", None)
    return serializers.ListField(child=serializers.CharField(), allow_empty=True, **kw)


#: A serializer field per kind of setting (``metric`` is a name checked by the service).
_FIELDS: dict[str, Callable[[Setting, dict[str, Any]], serializers.Field]] = {
    "int": lambda s, kw: serializers.IntegerField(**_numeric(s), **kw),
    "float": _float,
    "bool": lambda s, kw: serializers.BooleanField(**kw),
    "choice": lambda s, kw: serializers.ChoiceField(choices=list(s.choices), **kw),
    "labels": _list_of_text,
    "file": lambda s, kw: serializers.FileField(**kw),
    "datetime": lambda s, kw: RFC3339DateTimeField(**kw),
    "slug": lambda s, kw: serializers.SlugField(**_text(s), **kw),
    # the known metrics as the schema's enum, so a request the schema calls valid names one (issue 21)
    "metric": lambda s, kw: serializers.ChoiceField(choices=[name for name, _ in metric_choices()], **kw),
    "text": lambda s, kw: serializers.CharField(**_text(s), allow_blank=not s.required, **kw),
}


def setting_field(setting: Setting, **overrides: Any) -> serializers.Field:
    """The serializer field of a declared setting (``challenges.settings_spec``): range, default and help
    text, and the declaration's message for a value outside the range (the OpenAPI schema shows the
    range as minimum/maximum)."""
    kwargs: dict[str, Any] = {"help_text": setting.help or None}
    if not setting.required:
        kwargs["default"] = setting.default
    if setting.nullable:
        kwargs["allow_null"] = True
    kwargs.update(overrides)
    if kwargs.get("required"):
        kwargs.pop("default", None)
    return _FIELDS[setting.kind](setting, kwargs)


def _declared_range(setting: Setting) -> Any:
    def check(value: Any) -> None:
        message = setting.refusal(value)
        if message is not None:
            raise serializers.ValidationError(message, code="range")

    return check


class TaskInputSerializer(serializers.Serializer):
    """A new task: the declared task settings (``challenges.settings_spec.TASK_SETTINGS``)."""

    def get_fields(self) -> dict[str, serializers.Field]:
        return {s.name: setting_field(s) for s in TASK_SETTINGS}

    def validate_labels(self, value: list[str] | None) -> list[str] | None:
        # Multipart clients often send one comma-separated value: accept both forms.
        if value and len(value) == 1 and "," in value[0]:
            return [v.strip() for v in value[0].split(",") if v.strip()]
        return value


#: Task fields named once, at creation, that no PATCH changes.
FIXED_TASK_FIELDS = ("metric", SECONDARY_METRICS)


class TaskSettingsInputSerializer(serializers.Serializer):
    """PATCH of a task's public-board mode (refused with 409 once the task has submissions). Every field
    is optional, as in any PATCH: a field left out keeps the task's value."""

    def get_fields(self) -> dict[str, serializers.Field]:
        return {
            "public_mode": setting_field(TASK["public_mode"], required=False, default=serializers.empty),
            "ladder_eta": setting_field(TASK["ladder_eta"]),
            "ladder_z": setting_field(TASK["ladder_z"]),
        }

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # The primary metric and the secondary ones are named before any submission (issue 20): a PATCH
        # naming them is refused rather than ignored, so no client believes it changed them.
        named = sorted(k for k in FIXED_TASK_FIELDS if k in getattr(self, "initial_data", {}))
        if named:
            raise serializers.ValidationError(
                dict.fromkeys(
                    named,
                    "Named when the task was created and fixed: a task's primary and secondary metrics "
                    "cannot change (create a new task to score another metric).",
                )
            )
        return attrs


class TruthInputSerializer(serializers.Serializer):
    group_column = serializers.CharField(required=False, allow_blank=True, default="")
    split_column = serializers.CharField(required=False, allow_blank=True, default="")
    truth = serializers.FileField(
        help_text="The corrected hidden labels, same items (same format as at creation)."
    )


class ItemSerializer(serializers.Serializer):
    id = serializers.CharField()


class RescoreJobOutputSerializer(serializers.ModelSerializer):
    task = serializers.CharField(source="task.slug")
    progress = serializers.SerializerMethodField()

    class Meta:
        model = RescoreJob
        fields = ["id", "task", "state", "total", "done", "progress", "created_at", "finished_at"]

    def get_progress(self, obj: RescoreJob) -> float:
        return 1.0 if obj.total == 0 else round(obj.done / obj.total, 4)


# --- submissions ------------------------------------------------------------------------------------
class SubmissionInputSerializer(serializers.Serializer):
    """The fields of a submission; the files come as ``file`` or ``file:<task>`` multipart parts."""

    name = serializers.CharField(max_length=120)
    description = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=DESCRIPTION_MAX_CHARS
    )
    link = serializers.URLField(required=False, allow_blank=True, default="", max_length=LINK_MAX_CHARS)
    is_baseline = serializers.BooleanField(required=False, default=False)


def uploads_by_task(
    files: Mapping[str, Sequence[UploadedFile]], *, challenge: Challenge, task_slugs: Sequence[str]
) -> dict[str, list[Upload]]:
    """``file`` (one-task challenges) or ``file:<task>`` parts -> the service's ``{task: [Upload, ...]}``.

    Several parts with the same name are several runs of the same task.
    """
    out: dict[str, list[Upload]] = {}
    for field, parts in files.items():
        if field == FILE_FIELD:
            if len(task_slugs) != 1:
                fields = ", ".join(f"'{TASK_FILE_PREFIX}{s}'" for s in task_slugs) or "no tasks yet"
                raise ApplicationError(
                    NAME_THE_TASK.format(challenge=challenge.slug, fields=fields), extra={"field": field}
                )
            slug = task_slugs[0]
        elif field.startswith(TASK_FILE_PREFIX):
            slug = field[len(TASK_FILE_PREFIX) :]
        else:
            raise ApplicationError(UNKNOWN_FILE_FIELD.format(field=field), extra={"field": field})
        out.setdefault(slug, []).extend(
            Upload(name=part.name or field, size=part.size or 0, stream=cast(IO[bytes], part))
            for part in parts
        )
    return out


class SubmissionFileOutputSerializer(serializers.ModelSerializer):
    task = serializers.CharField(source="task.slug")
    name = serializers.CharField(source="original_name")

    class Meta:
        model = SubmissionFile
        fields = ["task", "run", "name", "format", "size", "sha256"]


class ScoreOutputSerializer(serializers.ModelSerializer):
    """A score as its reader may see it: organizers at full precision with each run's value; participants
    the value rounded to the board's precision and ``run_values`` null (``rankings.precision``)."""

    task = serializers.CharField(source="task.slug")
    runs = serializers.IntegerField(source="n_runs")
    value = serializers.SerializerMethodField(method_name="rounded_value")
    run_values = serializers.SerializerMethodField(
        help_text="Each run's value: organizers only (null for participants)."
    )
    decimals = serializers.SerializerMethodField(help_text="Decimals of `value`; null: full precision.")
    ladder = serializers.SerializerMethodField(
        help_text="A public board in a Ladder mode, for participants: `shown` (the value the board shows for "
        "the team after this submission), `moved` and `message` (in words, why); `value` is then null."
    )
    details = serializers.SerializerMethodField(
        help_text=(
            "Detection / segmentation, on a submission's own address: every metric and the per-class "
            "values with intervals; null unless you organize the challenge or its board is revealed."
        )
    )

    class Meta:
        model = Score
        fields = [
            "task",
            "split",
            "value",
            "decimals",
            "run_values",
            "runs",
            "scored_at",
            "details",
            "ladder",
        ]

    def _full(self) -> bool:
        return bool(self.context.get("full_precision"))

    def _reader(self, obj: Score) -> ReaderView:
        """What the caller may see of this score's board (``rankings.policy``); no request: anonymous."""
        request = self.context.get("request")
        return reader_view(obj.task, obj.split, request.user if request is not None else AnonymousUser())

    def rounded_value(self, obj: Score) -> float | None:
        reader = self._reader(obj)
        if not reader.allows(Channel.SCORE):
            return None  # a Ladder board: the participant sees only the release (``ladder``)
        return obj.value if self._full() else reader.value(obj.value)

    @extend_schema_field({"type": "object", "additionalProperties": {}, "nullable": True})
    def get_ladder(self, obj: Score) -> dict[str, Any] | None:
        return self._reader(obj).release(obj.submission_id)

    def get_decimals(self, obj: Score) -> int | None:
        return None if self._full() else task_decimals(obj.task)

    def get_run_values(self, obj: Score) -> list[float] | None:
        return list(obj.run_values) if self._full() and self._reader(obj).allows(Channel.RUN_VALUES) else None

    @extend_schema_field({"type": "object", "additionalProperties": {}, "nullable": True})
    def get_details(self, obj: Score) -> dict[str, Any] | None:
        # Aggregates over hidden annotations: only where the caller may see them (the view decides).
        if obj.submission_id not in self.context.get("details_visible", ()) or not self._reader(obj).allows(
            Channel.SCORE_DETAILS
        ):
            return None
        details = Score.objects.filter(pk=obj.pk).values_list("details", flat=True).first()
        if not details:
            return None
        return {k: v for k, v in details.items() if k != "curves_svg"}


class SubmissionOutputSerializer(serializers.ModelSerializer):
    challenge = serializers.CharField(source="challenge.slug")
    team = serializers.CharField(source="team.name")
    files = SubmissionFileOutputSerializer(many=True)
    scores = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField()

    class Meta:
        model = Submission
        fields = [
            "id",
            "challenge",
            "team",
            "name",
            "description",
            "link",
            "is_baseline",
            "status",
            "error",
            "selected",
            "charged",
            "created_at",
            "started_at",
            "finished_at",
            "files",
            "scores",
            "url",
        ]

    @extend_schema_field(ScoreOutputSerializer(many=True))
    def get_scores(self, obj: Submission) -> list[dict[str, Any]]:
        # The view decides which splits are visible (private only once revealed, or to organizers).
        visible: Mapping[int, Sequence[Score]] = self.context.get("visible_scores", {})
        full = bool(self.context.get("full_precision", {}).get(obj.pk))
        return ScoreOutputSerializer(  # type: ignore[return-value]
            visible.get(obj.pk, []), many=True, context={**self.context, "full_precision": full}
        ).data

    def get_url(self, obj: Submission) -> str:
        return reverse("api:submission-detail", kwargs={"pk": obj.pk})


# --- boards -----------------------------------------------------------------------------------------
#: Board rows per API page, as the API's other lists are paginated (a 1,000-row board is 650 KB of JSON).
BOARD_PAGE_SIZE = 100
BOARD_MAX_LIMIT = 1000


class BoardQuerySerializer(serializers.Serializer):
    task = serializers.SlugField(required=False, help_text="Task slug; the first task by default.")
    split = serializers.ChoiceField(choices=["public", "private"], default="public")
    sequence = serializers.IntegerField(
        required=False, min_value=1, help_text="An earlier snapshot of the board; the latest by default."
    )
    limit = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=BOARD_MAX_LIMIT,
        default=BOARD_PAGE_SIZE,
        help_text=f"Rows per page (at most {BOARD_MAX_LIMIT}); CSV exports always hold every row.",
    )
    offset = serializers.IntegerField(required=False, min_value=0, default=0)


#: Row fields a row always carries with a value (a Ladder board's released rows included); any other field
#: may be null: numbers are rounded to the board's precision and a non-finite one is shown as null.
ROW_NEVER_NULL = ("rank", "name", "team", "is_baseline")
_ROW_FIELD_TYPES: dict[type, type[serializers.Field]] = {
    bool: serializers.BooleanField,
    int: serializers.IntegerField,
    float: serializers.FloatField,
    str: serializers.CharField,
}


SECONDARY_HELP = (
    "The task's secondary metrics (only on tasks that name some), in order: metric, value, p_value (paired "
    "randomization test against the leader) and p_adjusted (adjusted across the secondary metrics, Holm); "
    "the signature's secondary_metrics says how, under its label."
)


def _row_field(name: str, hint: Any) -> serializers.Field:
    (kind,) = [a for a in get_args(hint) if a is not type(None)] or [hint]
    if get_origin(kind) is list:  # the secondary metrics: [{metric, value, p_value, p_adjusted}]
        return serializers.ListField(
            child=serializers.DictField(), required=False, allow_null=True, help_text=SECONDARY_HELP
        )
    extra: dict[str, Any] = {"allow_blank": True} if kind is str else {}
    return _ROW_FIELD_TYPES[kind](required=False, allow_null=name not in ROW_NEVER_NULL, **extra)


#: The OpenAPI schema of one board row, derived from the stored row's declaration
#: (``rankings.board.SnapshotRow``); a Ladder board's released rows carry ``LADDER_COLUMNS`` of it only.
SnapshotRowSerializer = type(
    "SnapshotRowSerializer",
    (serializers.Serializer,),
    {name: _row_field(name, hint) for name, hint in get_type_hints(SnapshotRow).items()},
)


@extend_schema_field(SnapshotRowSerializer(many=True))
class BoardRowsField(serializers.ListField):
    """The board's rows as the read policy gives them (``rankings.policy``), passed through as they are:
    typed in the schema by :data:`SnapshotRowSerializer`."""


class BoardOutputSerializer(serializers.Serializer):
    challenge = serializers.CharField()
    task = serializers.CharField()
    split = serializers.CharField()
    metric = serializers.CharField()
    sequence = serializers.IntegerField(
        allow_null=True, help_text="The snapshot's number; null: no board yet."
    )
    created_at = serializers.DateTimeField(allow_null=True)
    entry_count = serializers.IntegerField(help_text="Rows on the whole board.")
    signature = serializers.DictField()
    offset = serializers.IntegerField()
    limit = serializers.IntegerField()
    next = serializers.URLField(allow_null=True, help_text="The next page of rows; null on the last.")
    previous = serializers.URLField(allow_null=True)
    rows = BoardRowsField(child=serializers.DictField(), help_text="In rank order, this page only.")


class SummaryOutputSerializer(serializers.Serializer):
    challenge = serializers.CharField()
    split = serializers.CharField()
    sequence = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    summary = serializers.DictField()
    svg_url = serializers.CharField(allow_null=True)


class EntryRanksSerializer(serializers.Serializer):
    name = serializers.CharField()
    rank = serializers.IntegerField(
        help_text="The entry's rank on the board (1 = best; ties take the lower)."
    )
    median = serializers.IntegerField(help_text="Its median rank over the bootstrap resamples.")
    interval = serializers.ListField(
        child=serializers.IntegerField(), help_text="Its rank interval over the resamples (the confidence)."
    )
    frequencies = serializers.ListField(
        child=serializers.FloatField(), help_text="Share of resamples in which it took rank 1, 2, ..., K."
    )


class KendallTauSerializer(serializers.Serializer):
    mean = serializers.FloatField()
    median = serializers.FloatField()
    interval = serializers.ListField(child=serializers.FloatField())
    confidence = serializers.FloatField()
    undefined = serializers.IntegerField(help_text="Resamples in which every entry tied (tau-b undefined).")
    histogram = serializers.DictField(help_text="20 bins on [-1, 1]: {edges, counts}.")


class RobustnessSerializer(serializers.Serializer):
    """How stable a board's ranking is (issue 23; ``rankings.board.build_robustness``) as the read policy
    gives it: withheld (``available`` false, with the reason) from participants before the reveal."""

    available = serializers.BooleanField()
    reason = serializers.CharField(required=False, help_text="Why it is not available (when it is not).")
    scheme = serializers.CharField(required=False)
    confidence = serializers.FloatField(required=False)
    higher_is_better = serializers.BooleanField(required=False)
    resamples = serializers.IntegerField(required=False)
    ties = serializers.CharField(required=False)
    entries = EntryRanksSerializer(many=True, required=False, help_text="In the board's order.")
    kendall_tau_b = KendallTauSerializer(
        required=False, help_text="Kendall's tau-b between the board's ranking and each bootstrap ranking."
    )
    keys = serializers.ListField(child=serializers.CharField(allow_null=True), required=False)
    text = serializers.CharField(required=False, help_text="The blob plot's text alternative.")
    schemes = serializers.DictField(
        required=False,
        help_text="Aggregate-then-rank, rank-then-aggregate and test-then-rank side by side (boards with "
        "per-item scores of up to 20 entries).",
    )
    schemes_reason = serializers.CharField(required=False)
    resolution = serializers.DictField(
        required=False, help_text="The smallest difference the test set resolves at 80% power."
    )


class RobustnessOutputSerializer(serializers.Serializer):
    challenge = serializers.CharField()
    task = serializers.CharField()
    split = serializers.CharField()
    sequence = serializers.IntegerField(
        allow_null=True, help_text="The snapshot's number; null: no board yet."
    )
    robustness = RobustnessSerializer()


# --- teams ------------------------------------------------------------------------------------------
class TeamOutputSerializer(serializers.Serializer):
    name = serializers.CharField()
    members = serializers.SerializerMethodField()
    is_baseline = serializers.BooleanField()

    def get_members(self, obj: Team) -> list[str]:
        return sorted(m.get_username() for m in obj.members.all())


class MyTeamOutputSerializer(TeamOutputSerializer):
    invite_code = serializers.CharField(help_text="Give it to the people who should join your team.")


class TeamFoundInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)


class TeamJoinInputSerializer(serializers.Serializer):
    invite_code = serializers.CharField(max_length=32)


# --- approved participation -------------------------------------------------------------------------
class ParticipantOutputSerializer(serializers.Serializer):
    username = serializers.CharField(source="user.username")
    approved = serializers.BooleanField()
    requested_at = serializers.DateTimeField()
    approved_at = serializers.DateTimeField(allow_null=True)
