"""Input serializers validate the shape of a request; output serializers choose what leaves.

Nothing here reads :class:`~leaderboard.challenges.models.TaskTruth`: the hidden labels, the groups and
which items are private never appear in a response.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import IO, Any, cast

from django.core.files.uploadedfile import UploadedFile
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from leaderboard.challenges.models import (
    DECIMALS_MAX,
    LADDER_Z_DEFAULT,
    RUNS_DEFAULT,
    RUNS_MAX,
    TASK_DESCRIPTION_MAX_CHARS,
    Challenge,
    PublicMode,
    Task,
    Team,
)
from leaderboard.challenges.services import CHALLENGE_SETTINGS
from leaderboard.core.exceptions import ApplicationError
from leaderboard.rankings import ladder
from leaderboard.rankings.precision import round_to, task_decimals
from leaderboard.scoring.kinds import get_kind, kind_choices
from leaderboard.scoring.models import RescoreJob, Score
from leaderboard.submissions.models import DESCRIPTION_MAX_CHARS, LINK_MAX_CHARS, Submission, SubmissionFile
from leaderboard.submissions.services import Upload

FILE_FIELD = "file"
TASK_FILE_PREFIX = "file:"
NAME_THE_TASK = "Challenge '{challenge}' has several tasks; send each file as 'file:<task>' ({fields})."
UNKNOWN_FILE_FIELD = "Unexpected file field '{field}'; send 'file' or 'file:<task>'."


# --- accounts ---------------------------------------------------------------------------------------
class RegisterInputSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(write_only=True, style={"input_type": "password"})
    email = serializers.EmailField(required=False, allow_blank=True, default="")


class TokenInputSerializer(serializers.Serializer):
    username = serializers.CharField()
    password = serializers.CharField(write_only=True, style={"input_type": "password"})


class TokenOutputSerializer(serializers.Serializer):
    token = serializers.CharField()
    username = serializers.CharField()


# --- challenges -------------------------------------------------------------------------------------


class ChallengeInputSerializer(serializers.ModelSerializer):
    """Creation: ``slug`` is optional (made from the title)."""

    slug = serializers.SlugField(max_length=80, required=False)

    class Meta:
        model = Challenge
        fields = ["slug", *CHALLENGE_SETTINGS]


class ChallengeUpdateSerializer(serializers.ModelSerializer):
    class Meta:
        model = Challenge
        fields = list(CHALLENGE_SETTINGS)


class ChallengeOutputSerializer(serializers.ModelSerializer):
    is_open = serializers.BooleanField(read_only=True)
    tasks = serializers.SerializerMethodField()
    is_organizer = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField()

    class Meta:
        model = Challenge
        fields = ["slug", *CHALLENGE_SETTINGS, "is_open", "private_revealed", "tasks", "is_organizer", "url"]

    def get_tasks(self, obj: Challenge) -> list[str]:
        return [t.slug for t in obj.tasks.all()]

    def get_is_organizer(self, obj: Challenge) -> bool:
        organizer_of: set[int] = self.context.get("organizer_of", set())
        return obj.pk in organizer_of

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


class TaskInputSerializer(serializers.Serializer):
    slug = serializers.SlugField(max_length=80)
    title = serializers.CharField(max_length=200)
    description = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=TASK_DESCRIPTION_MAX_CHARS
    )
    metric = serializers.CharField(max_length=40)
    max_runs = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=RUNS_MAX,
        default=RUNS_DEFAULT,
        help_text="Runs per submission.",
    )
    decimals = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=DECIMALS_MAX,
        default=None,
        help_text="The board's precision; empty: derived from the number of items.",
    )
    public_mode = serializers.ChoiceField(
        choices=PublicMode.choices,
        required=False,
        default=PublicMode.PLAIN,
        help_text="What the public board releases: plain (every score), ladder (fixed step ladder_eta), "
        "ladder-free (ladder_z standard errors of the paired difference). Frozen once submissions exist.",
    )
    ladder_eta = serializers.FloatField(
        required=False, allow_null=True, default=None, help_text="The fixed Ladder's step (mode ladder)."
    )
    ladder_z = serializers.FloatField(
        required=False,
        allow_null=True,
        default=None,
        help_text=f"The parameter-free Ladder's step in paired standard errors (default {LADDER_Z_DEFAULT:g}).",
    )
    labels = serializers.ListField(child=serializers.CharField(), required=False, allow_empty=True)
    group_column = serializers.CharField(required=False, allow_blank=True, default="")
    split_column = serializers.CharField(required=False, allow_blank=True, default="")
    positive = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        help_text="Positive class of a binary-score metric (ROC AUC, AP, log loss, Brier); default: the "
        "second label in sorted order.",
    )
    stratify = serializers.ChoiceField(
        choices=["auto", "class", "none"],
        required=False,
        default="auto",
        help_text="Resample within each true class: auto (class-based metrics), class, none.",
    )
    ignore_index = serializers.IntegerField(
        required=False,
        min_value=0,
        max_value=65535,
        default=255,
        help_text="Segmentation: pixels not scored.",
    )
    reduce_zero_label = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Segmentation (ADE20K): label 0 is ignored, the rest shift by -1.",
    )
    truth = serializers.FileField(
        help_text=(
            "The hidden labels: CSV or Parquet, one row per item; detection: a COCO annotation JSON (or "
            "VOC-style); segmentation: a zip or tar of PNG label maps, one per image id (labels = class names)."
        )
    )

    def validate_labels(self, value: list[str]) -> list[str]:
        # Multipart clients often send one comma-separated value: accept both forms.
        if len(value) == 1 and "," in value[0]:
            return [v.strip() for v in value[0].split(",") if v.strip()]
        return value


class TaskSettingsInputSerializer(serializers.Serializer):
    """PATCH of a task's public-board mode (refused with 409 once the task has submissions)."""

    public_mode = serializers.ChoiceField(choices=PublicMode.choices)
    ladder_eta = serializers.FloatField(required=False, allow_null=True, default=None)
    ladder_z = serializers.FloatField(required=False, allow_null=True, default=None)


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

    def _ladder_hidden(self, obj: Score) -> bool:
        request = self.context.get("request")
        return request is not None and ladder.hides(obj.task, obj.split, request.user)

    def rounded_value(self, obj: Score) -> float | None:
        if self._ladder_hidden(obj):
            return None  # a Ladder board: the participant sees only the release (``ladder``)
        return obj.value if self._full() else round_to(obj.value, task_decimals(obj.task))

    @extend_schema_field({"type": "object", "additionalProperties": {}, "nullable": True})
    def get_ladder(self, obj: Score) -> dict[str, Any] | None:
        if not self._ladder_hidden(obj):
            return None
        release = ladder.releases_of(submission_ids=[obj.submission_id]).get((obj.submission_id, obj.task_id))
        return ladder.release_view(release, obj.task)

    def get_decimals(self, obj: Score) -> int | None:
        return None if self._full() else task_decimals(obj.task)

    def get_run_values(self, obj: Score) -> list[float] | None:
        return list(obj.run_values) if self._full() and not self._ladder_hidden(obj) else None

    @extend_schema_field({"type": "object", "additionalProperties": {}, "nullable": True})
    def get_details(self, obj: Score) -> dict[str, Any] | None:
        # Aggregates over hidden annotations: only where the caller may see them (the view decides).
        if obj.submission_id not in self.context.get("details_visible", ()) or self._ladder_hidden(obj):
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
    rows = serializers.ListField(child=serializers.DictField(), help_text="In rank order, this page only.")


class SummaryOutputSerializer(serializers.Serializer):
    challenge = serializers.CharField()
    split = serializers.CharField()
    sequence = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    summary = serializers.DictField()
    svg_url = serializers.CharField(allow_null=True)


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
