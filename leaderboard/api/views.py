"""The REST API: each view validates its input, makes one service or selector call, serializes the result.

Visibility: ``challenge_get`` answers 404 for a challenge the user may not see; ``require_organizer``
answers 403 for managing actions; ``rankings.selectors`` answer 404 for a private board not revealed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

import django_filters
from django.core.cache import caches
from django.http import HttpResponse
from django.utils.text import slugify
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.filters import OrderingFilter
from rest_framework.generics import GenericAPIView
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser, FormParser, JSONParser, MultiPartParser
from rest_framework.permissions import AllowAny, IsAuthenticated, IsAuthenticatedOrReadOnly
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param
from rest_framework.views import APIView

from leaderboard.accounts.models import User
from leaderboard.accounts.services import api_token_get_or_create, api_token_revoke, user_register
from leaderboard.api import serializers as s
from leaderboard.api.renderers import CSVRenderer, SVGRenderer
from leaderboard.api.selectors import (
    rescore_job_latest,
    submission_details_visible,
    submission_get,
    submission_list,
    submission_visible_scores,
)
from leaderboard.api.throttles import (
    SignupAddressThrottle,
    SignupGlobalThrottle,
    WriteScopedRateThrottle,
)
from leaderboard.api.uploads import SizeLimitedUploadsMixin
from leaderboard.challenges.models import Challenge, Participant, upload_max_bytes
from leaderboard.challenges.selectors import (
    challenge_get,
    challenge_list,
    task_get,
    user_is_organizer,
    user_team,
)
from leaderboard.challenges.services import (
    challenge_create,
    challenge_reveal_private,
    challenge_update,
    participation_approve,
    participation_request,
    participation_revoke,
    require_organizer,
    slug_for,
    task_create,
    task_public_mode_set,
    task_truth_replace,
    team_found,
    team_join,
)
from leaderboard.core.exceptions import ApplicationError, NotFoundError
from leaderboard.rankings import ladder
from leaderboard.rankings.exports import board_csv
from leaderboard.rankings.precision import (
    challenge_decimals,
    public_rows,
    public_signature,
    public_summary,
    task_decimals,
)
from leaderboard.rankings.selectors import board_at, board_latest, summary_latest
from leaderboard.scoring.engine import task_kind
from leaderboard.scoring.models import Split
from leaderboard.scoring.services import rescore_job_refresh, task_rescore
from leaderboard.submissions.models import Status, Submission
from leaderboard.submissions.services import submission_cancel, submission_create, submission_select

NO_TASKS = "Challenge '{slug}' has no tasks yet."
NO_SUMMARY = "No cross-task summary of the {split} board yet."
NO_DIAGRAM = "No critical-difference diagram of the {split} board yet."

ERROR_RESPONSES = {
    400: OpenApiResponse(description="Invalid input: {message, extra}"),
    403: OpenApiResponse(description="Not allowed: {message, extra}"),
    404: OpenApiResponse(description="Not found or not visible: {message, extra}"),
}
CONFLICT_RESPONSE = OpenApiResponse(description="Exists already: {message, extra}")


def _user(request: Request) -> User:
    """The authenticated user (the view's permission classes guarantee one)."""
    return cast(User, request.user)


def _read_upload(upload: Any, *, kind: str) -> bytes:
    """The bytes of an organizer's labels file, refused before it is read whole if over its kind's limit."""
    limit = upload_max_bytes(kind)
    if upload.size > limit:
        raise ApplicationError(
            f"{upload.name}: the file is {upload.size:,} bytes; the limit is {limit:,} bytes.",
            extra={"file": upload.name},
        )
    return cast(bytes, upload.read())


class JSONErrorsMixin:
    """Errors stay JSON (``{message, extra}``) even when the client asked for CSV or SVG."""

    def handle_exception(self, exc: Exception) -> Response:
        response = super().handle_exception(exc)  # type: ignore[misc]
        request = self.request  # type: ignore[attr-defined]
        request.accepted_renderer = JSONRenderer()
        request.accepted_media_type = "application/json"
        return cast(Response, response)


class FirstRendererNegotiation(BaseContentNegotiation):
    """For image endpoints: always the view's first renderer, whatever the Accept header says."""

    def select_parser(self, request: Request, parsers: Iterable[BaseParser]) -> BaseParser | None:
        return next(iter(parsers), None)

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        first = next(iter(renderers))
        return first, first.media_type


# --- auth -------------------------------------------------------------------------------------------
class TokenView(APIView):
    """POST: exchange a username and password for your API token. DELETE: revoke it."""

    throttle_classes = [WriteScopedRateThrottle]
    throttle_scope = "token"
    parser_classes = [JSONParser, FormParser, MultiPartParser]

    def get_permissions(self) -> list[Any]:
        return [IsAuthenticated()] if self.request.method == "DELETE" else [AllowAny()]

    @extend_schema(
        request=s.TokenInputSerializer, responses={200: s.TokenOutputSerializer, 400: ERROR_RESPONSES[400]}
    )
    def post(self, request: Request) -> Response:
        serializer = AuthTokenSerializer(data=request.data, context={"request": request})
        serializer.is_valid(raise_exception=True)
        user = serializer.validated_data["user"]
        token = api_token_get_or_create(user=user)
        return Response(s.TokenOutputSerializer({"token": token.key, "username": user.get_username()}).data)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request: Request) -> Response:
        api_token_revoke(user=_user(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class RegisterView(APIView):
    """Sign up; answers with the new account's API token."""

    permission_classes = [AllowAny]
    # The ``login`` rate, then sign-up's own rates per address and over the whole service.
    throttle_classes = [WriteScopedRateThrottle, SignupAddressThrottle, SignupGlobalThrottle]
    throttle_scope = "login"

    def check_throttles(self, request: Request) -> None:
        # In order, stopping at the first refusal: a request refused for its address is not counted
        # against the service-wide bound (DRF would ask every throttle, and each would count it).
        for throttle in self.get_throttles():
            if not throttle.allow_request(request, self):
                self.throttled(request, throttle.wait() or 1.0)

    @extend_schema(
        request=s.RegisterInputSerializer,
        responses={201: s.TokenOutputSerializer, 400: ERROR_RESPONSES[400], 409: CONFLICT_RESPONSE},
    )
    def post(self, request: Request) -> Response:
        serializer = s.RegisterInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user = user_register(**serializer.validated_data)
        token = api_token_get_or_create(user=user)
        data = s.TokenOutputSerializer({"token": token.key, "username": user.get_username()}).data
        return Response(data, status=status.HTTP_201_CREATED)


# --- challenges -------------------------------------------------------------------------------------
def _challenge_context(request: Request, challenges: list[Challenge]) -> dict[str, Any]:
    return {
        "request": request,
        "organizer_of": {c.pk for c in challenges if user_is_organizer(challenge=c, user=request.user)},
    }


class ChallengeListView(GenericAPIView):
    """GET: the challenges you may see (public ones, and those you organize or take part in). POST: create
    one; you become its organizer."""

    serializer_class = s.ChallengeOutputSerializer
    permission_classes = [IsAuthenticatedOrReadOnly]
    filter_backends = [OrderingFilter]
    ordering_fields = ["start", "end", "slug", "created_at"]

    def get_queryset(self) -> Any:
        return challenge_list(user=self.request.user).prefetch_related("tasks")

    @extend_schema(responses=s.ChallengeOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        items = list(page or [])
        data = s.ChallengeOutputSerializer(items, many=True, context=_challenge_context(request, items)).data
        return self.get_paginated_response(data)

    @extend_schema(
        request=s.ChallengeInputSerializer,
        responses={201: s.ChallengeOutputSerializer, **ERROR_RESPONSES, 409: CONFLICT_RESPONSE},
    )
    def post(self, request: Request) -> Response:
        serializer = s.ChallengeInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        fields = dict(serializer.validated_data)
        slug = fields.pop("slug", None) or slug_for(fields["title"])
        challenge = challenge_create(organizer=_user(request), slug=slugify(slug), **fields)
        data = s.ChallengeOutputSerializer(challenge, context=_challenge_context(request, [challenge])).data
        return Response(data, status=status.HTTP_201_CREATED)


class ChallengeDetailView(APIView):
    """GET: one challenge. PATCH: change its settings (organizers)."""

    @extend_schema(responses={200: s.ChallengeOutputSerializer, 404: ERROR_RESPONSES[404]})
    def get(self, request: Request, slug: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        return Response(
            s.ChallengeOutputSerializer(challenge, context=_challenge_context(request, [challenge])).data
        )

    @extend_schema(
        request=s.ChallengeUpdateSerializer,
        responses={200: s.ChallengeOutputSerializer, **ERROR_RESPONSES, 409: CONFLICT_RESPONSE},
    )
    def patch(self, request: Request, slug: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        require_organizer(challenge=challenge, user=_user(request))
        serializer = s.ChallengeUpdateSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        challenge = challenge_update(challenge=challenge, **serializer.validated_data)
        return Response(
            s.ChallengeOutputSerializer(challenge, context=_challenge_context(request, [challenge])).data
        )


class ChallengeRevealView(APIView):
    """POST: reveal the private board to everyone who sees the challenge (organizers)."""

    @extend_schema(request=None, responses={200: s.ChallengeOutputSerializer, **ERROR_RESPONSES})
    def post(self, request: Request, slug: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        require_organizer(challenge=challenge, user=_user(request))
        challenge = challenge_reveal_private(challenge=challenge)
        return Response(
            s.ChallengeOutputSerializer(challenge, context=_challenge_context(request, [challenge])).data
        )


# --- tasks ------------------------------------------------------------------------------------------
class TaskListView(SizeLimitedUploadsMixin, APIView):
    """GET: the tasks of a challenge (public fields only). POST (multipart): create a task from its hidden
    labels file (organizers)."""

    parser_classes = [MultiPartParser, FormParser]
    upload_any_kind = True

    @extend_schema(responses={200: s.TaskOutputSerializer(many=True), 404: ERROR_RESPONSES[404]})
    def get(self, request: Request, slug: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        tasks = challenge.tasks.select_related("challenge")
        return Response(s.TaskOutputSerializer(tasks, many=True).data)

    @extend_schema(
        request={"multipart/form-data": s.TaskInputSerializer},
        responses={201: s.TaskOutputSerializer, **ERROR_RESPONSES},
    )
    def post(self, request: Request, slug: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        require_organizer(challenge=challenge, user=_user(request))
        serializer = s.TaskInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        truth = data["truth"]
        task = task_create(
            challenge=challenge,
            slug=data["slug"],
            title=data["title"],
            description=data["description"],
            metric=data["metric"],
            labels=data.get("labels") or None,
            group_column=data["group_column"] or None,
            split_column=data["split_column"] or None,
            truth=_read_upload(truth, kind=task_kind(data["metric"])),
            truth_name=truth.name,
            positive=data["positive"] or None,
            stratify=data["stratify"],
            max_runs=data["max_runs"],
            decimals=data["decimals"],
            ignore_index=data["ignore_index"],
            reduce_zero_label=data["reduce_zero_label"],
            public_mode=data["public_mode"],
            ladder_eta=data["ladder_eta"],
            ladder_z=data["ladder_z"],
        )
        return Response(s.TaskOutputSerializer(task).data, status=status.HTTP_201_CREATED)


class TaskDetailView(APIView):
    """GET: one task. PATCH (organizers): its public board's mode (``public_mode``, ``ladder_eta``,
    ``ladder_z``); 409 once the task has submissions, like the challenge's statistics settings."""

    @extend_schema(responses={200: s.TaskOutputSerializer, 404: ERROR_RESPONSES[404]})
    def get(self, request: Request, slug: str, task: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        return Response(s.TaskOutputSerializer(task_get(challenge=challenge, slug=task)).data)

    @extend_schema(
        request=s.TaskSettingsInputSerializer,
        responses={
            200: s.TaskOutputSerializer,
            **ERROR_RESPONSES,
            409: OpenApiResponse(description="Frozen"),
        },
    )
    def patch(self, request: Request, slug: str, task: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        require_organizer(challenge=challenge, user=_user(request))
        serializer = s.TaskSettingsInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        updated = task_public_mode_set(
            task=task_get(challenge=challenge, slug=task), **serializer.validated_data
        )
        return Response(s.TaskOutputSerializer(updated).data)


class TaskItemsView(JSONErrorsMixin, GenericAPIView):
    """GET: the public item ids of a task, in the task's order; paginated, or all of them with ``?format=csv``."""

    serializer_class = s.ItemSerializer
    renderer_classes = [JSONRenderer, CSVRenderer]
    filter_backends: list[Any] = []

    @extend_schema(responses={200: s.ItemSerializer(many=True), 404: ERROR_RESPONSES[404]})
    def get(self, request: Request, slug: str, task: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        item_ids = task_get(challenge=challenge, slug=task).item_ids
        items = [{"id": i} for i in item_ids]
        if isinstance(request.accepted_renderer, CSVRenderer):
            response = Response(items)
            response["Content-Disposition"] = f'attachment; filename="{challenge.slug}-{task}-items.csv"'
            return response
        page = self.paginate_queryset(cast(Any, items))
        return self.get_paginated_response(s.ItemSerializer(page, many=True).data)


class TaskTruthView(SizeLimitedUploadsMixin, APIView):
    """PUT (multipart): replace the hidden labels of a task, same items (organizers). Re-score afterwards."""

    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        request={"multipart/form-data": s.TruthInputSerializer},
        responses={200: s.TaskOutputSerializer, **ERROR_RESPONSES},
    )
    def put(self, request: Request, slug: str, task: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        require_organizer(challenge=challenge, user=_user(request))
        task_obj = task_get(challenge=challenge, slug=task)
        serializer = s.TruthInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        updated = task_truth_replace(
            task=task_obj,
            truth=_read_upload(data["truth"], kind=task_obj.kind),
            truth_name=data["truth"].name,
            group_column=data["group_column"] or None,
            split_column=data["split_column"] or None,
        )
        return Response(s.TaskOutputSerializer(updated).data)


class TaskRescoreView(APIView):
    """POST: re-score every submission of the task (organizers). GET: the progress of the latest re-score."""

    permission_classes = [IsAuthenticated]

    def _task(self, request: Request, slug: str, task: str) -> Any:
        challenge = challenge_get(slug=slug, user=request.user)
        require_organizer(challenge=challenge, user=_user(request))
        return challenge, task_get(challenge=challenge, slug=task)

    @extend_schema(responses={200: s.RescoreJobOutputSerializer, **ERROR_RESPONSES})
    def get(self, request: Request, slug: str, task: str) -> Response:
        challenge, _ = self._task(request, slug, task)
        job = rescore_job_refresh(job=rescore_job_latest(challenge=challenge, task_slug=task))
        return Response(s.RescoreJobOutputSerializer(job).data)

    @extend_schema(request=None, responses={202: s.RescoreJobOutputSerializer, **ERROR_RESPONSES})
    def post(self, request: Request, slug: str, task: str) -> Response:
        _, task_obj = self._task(request, slug, task)
        job = task_rescore(task=task_obj, user=_user(request))
        return Response(s.RescoreJobOutputSerializer(job).data, status=status.HTTP_202_ACCEPTED)


# --- submissions ------------------------------------------------------------------------------------
class SubmissionFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=Status.choices)
    task = django_filters.CharFilter(field_name="files__task__slug", distinct=True, help_text="Task slug.")

    class Meta:
        model = Submission
        fields = ["status", "task"]


def _visible_scores(
    request: Request, submissions: list[Submission], *, details: bool = False
) -> dict[str, Any]:
    return {
        "request": request,
        "visible_scores": {
            sub.pk: submission_visible_scores(submission=sub, user=request.user) for sub in submissions
        },
        # Organizers see full precision and each run; a participant one value per task, rounded.
        "full_precision": {
            sub.pk: user_is_organizer(challenge=sub.challenge, user=request.user) for sub in submissions
        },
        # A vision score's details (per-class figures) on the submission's own address, where visible.
        "details_visible": {
            sub.pk for sub in submissions if submission_details_visible(submission=sub, user=request.user)
        }
        if details
        else set(),
    }


class SubmissionListView(SizeLimitedUploadsMixin, GenericAPIView):
    """GET: your team's submissions (organizers: all). POST (multipart): submit predictions: ``file`` for a
    one-task challenge, ``file:<task>`` per task otherwise; repeat a part for several runs. An
    ``Idempotency-Key`` header makes a retry safe: the same key returns the submission stored the first
    time (header ``Idempotent-Replayed: true``), never a second one; the same key with other files is 422."""

    serializer_class = s.SubmissionOutputSerializer
    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser, FormParser]
    throttle_classes = [WriteScopedRateThrottle]
    throttle_scope = "submit"
    filterset_class = SubmissionFilter
    ordering_fields = ["created_at", "status", "name", "id"]

    def get_queryset(self) -> Any:
        if getattr(self, "swagger_fake_view", False):
            return Submission.objects.none()
        challenge = challenge_get(slug=self.kwargs["slug"], user=self.request.user)
        return submission_list(challenge=challenge, user=self.request.user)

    @extend_schema(responses={200: s.SubmissionOutputSerializer(many=True), 404: ERROR_RESPONSES[404]})
    def get(self, request: Request, slug: str) -> Response:
        page = list(self.paginate_queryset(self.filter_queryset(self.get_queryset())) or [])
        data = s.SubmissionOutputSerializer(page, many=True, context=_visible_scores(request, page)).data
        return self.get_paginated_response(data)

    @extend_schema(
        request={
            "multipart/form-data": inline_serializer(
                "SubmissionUpload",
                fields={
                    "name": serializers.CharField(),
                    "description": serializers.CharField(required=False),
                    "link": serializers.URLField(required=False),
                    "is_baseline": serializers.BooleanField(required=False),
                    "file": serializers.FileField(
                        required=False, help_text="One-task challenges; or one 'file:<task>' part per task."
                    ),
                },
            )
        },
        parameters=[
            OpenApiParameter(
                "Idempotency-Key",
                str,
                OpenApiParameter.HEADER,
                description="A key of the client's (a UUID): a retry with it returns the first upload's submission.",
            )
        ],
        responses={
            201: s.SubmissionOutputSerializer,
            422: OpenApiResponse(description="Idempotency-Key already used for another upload"),
            429: OpenApiResponse(description="Limit reached"),
            **ERROR_RESPONSES,
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        serializer = s.SubmissionInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        files = s.uploads_by_task(
            {key: request.FILES.getlist(key) for key in request.FILES},
            challenge=challenge,
            task_slugs=list(challenge.tasks.values_list("slug", flat=True)),
        )
        created = submission_create(
            challenge=challenge,
            user=_user(request),
            files=files,
            idempotency_key=request.headers.get("Idempotency-Key", "").strip(),
            **serializer.validated_data,
        )
        submission = submission_get(submission_id=created.pk, user=request.user)  # as scored by now, if eager
        data = s.SubmissionOutputSerializer(submission, context=_visible_scores(request, [submission])).data
        # A retry with the key of a stored upload gets that submission, as the first answer would have.
        replayed = {"Idempotent-Replayed": "true"} if getattr(created, "replayed", False) else None
        return Response(data, status=status.HTTP_201_CREATED, headers=replayed)


class SubmissionDetailView(APIView):
    """GET: a submission's status, error and scores on the boards you may see. DELETE: cancel it (queued)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: s.SubmissionOutputSerializer, 404: ERROR_RESPONSES[404]})
    def get(self, request: Request, pk: int) -> Response:
        submission = submission_get(submission_id=pk, user=request.user)
        return Response(
            s.SubmissionOutputSerializer(
                submission, context=_visible_scores(request, [submission], details=True)
            ).data
        )

    @extend_schema(
        request=None,
        responses={
            200: s.SubmissionOutputSerializer,
            **ERROR_RESPONSES,
            409: OpenApiResponse(description="Not queued"),
        },
    )
    def delete(self, request: Request, pk: int) -> Response:
        submission = submission_cancel(
            submission=submission_get(submission_id=pk, user=request.user), user=_user(request)
        )
        submission = submission_get(submission_id=submission.pk, user=request.user)
        return Response(
            s.SubmissionOutputSerializer(submission, context=_visible_scores(request, [submission])).data
        )


class SubmissionSelectView(APIView):
    """POST: make this scored submission your team's entry (challenges whose entries are selected)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=None,
        responses={
            200: s.SubmissionOutputSerializer,
            **ERROR_RESPONSES,
            409: OpenApiResponse(description="Selection off or not scored"),
        },
    )
    def post(self, request: Request, pk: int) -> Response:
        submission = submission_select(
            submission=submission_get(submission_id=pk, user=request.user), user=_user(request)
        )
        submission = submission_get(submission_id=submission.pk, user=request.user)
        return Response(
            s.SubmissionOutputSerializer(submission, context=_visible_scores(request, [submission])).data
        )


# --- teams ------------------------------------------------------------------------------------------
class TeamListView(APIView):
    """GET: the teams of a challenge and their members. POST: found a team (you become its member)."""

    permission_classes = [IsAuthenticatedOrReadOnly]

    @extend_schema(responses={200: s.TeamOutputSerializer(many=True), 404: ERROR_RESPONSES[404]})
    def get(self, request: Request, slug: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        teams = challenge.teams.prefetch_related("members").order_by("name")
        return Response(s.TeamOutputSerializer(teams, many=True).data)

    @extend_schema(
        request=s.TeamFoundInputSerializer,
        responses={
            201: s.MyTeamOutputSerializer,
            **ERROR_RESPONSES,
            409: OpenApiResponse(description="Conflict"),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        serializer = s.TeamFoundInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        team = team_found(challenge=challenge, user=_user(request), name=serializer.validated_data["name"])
        return Response(s.MyTeamOutputSerializer(team).data, status=status.HTTP_201_CREATED)


class MyTeamView(APIView):
    """GET: your team in this challenge, with its invite code (members only)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: s.MyTeamOutputSerializer, **ERROR_RESPONSES})
    def get(self, request: Request, slug: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        team = user_team(challenge=challenge, user=request.user)
        if team is None:
            raise NotFoundError("You have no team in this challenge yet; found one or join one.")
        return Response(s.MyTeamOutputSerializer(team).data)


class TeamJoinView(APIView):
    """POST: join the team whose invite code you were given."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=s.TeamJoinInputSerializer,
        responses={
            200: s.MyTeamOutputSerializer,
            **ERROR_RESPONSES,
            409: OpenApiResponse(description="Conflict"),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        serializer = s.TeamJoinInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        team = team_join(
            challenge=challenge, user=_user(request), invite_code=serializer.validated_data["invite_code"]
        )
        return Response(s.MyTeamOutputSerializer(team).data)


# --- approved participation -------------------------------------------------------------------------
class ParticipationView(APIView):
    """Challenges that take approved participants only. GET: your request and whether it is approved.
    POST: ask to take part (an organizer approves you before you may submit)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: s.ParticipantOutputSerializer, **ERROR_RESPONSES})
    def get(self, request: Request, slug: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        participant = Participant.objects.filter(challenge=challenge, user=_user(request)).first()
        if participant is None:
            raise NotFoundError("You have not asked to take part in this challenge.")
        return Response(s.ParticipantOutputSerializer(participant).data)

    @extend_schema(
        request=None,
        responses={
            201: s.ParticipantOutputSerializer,
            **ERROR_RESPONSES,
            409: OpenApiResponse(description="Approval off"),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        participant = participation_request(challenge=challenge, user=_user(request))
        return Response(s.ParticipantOutputSerializer(participant).data, status=status.HTTP_201_CREATED)


class ParticipantListView(APIView):
    """GET: who asked to take part, and who is approved (organizers). ``?approved=false`` for the waiting."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        parameters=[OpenApiParameter("approved", bool)],
        responses={200: s.ParticipantOutputSerializer(many=True), **ERROR_RESPONSES},
    )
    def get(self, request: Request, slug: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        require_organizer(challenge=challenge, user=_user(request))
        qs = Participant.objects.filter(challenge=challenge).select_related("user")
        approved = request.query_params.get("approved")
        if approved in ("true", "false"):
            qs = qs.filter(approved=approved == "true")
        return Response(s.ParticipantOutputSerializer(qs, many=True).data)


class ParticipantDetailView(APIView):
    """POST: approve this user (organizers). DELETE: withdraw the approval or turn the request down."""

    permission_classes = [IsAuthenticated]

    def _target(self, username: str) -> User:
        user = User.objects.filter(username=username).first()
        if user is None:
            raise NotFoundError(f"No user '{username}'.")
        return user

    @extend_schema(request=None, responses={200: s.ParticipantOutputSerializer, **ERROR_RESPONSES})
    def post(self, request: Request, slug: str, username: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        participant = participation_approve(
            challenge=challenge, user=self._target(username), approved_by=_user(request)
        )
        return Response(s.ParticipantOutputSerializer(participant).data)

    @extend_schema(request=None, responses={204: None, **ERROR_RESPONSES})
    def delete(self, request: Request, slug: str, username: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        participation_revoke(challenge=challenge, user=self._target(username), revoked_by=_user(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- boards -----------------------------------------------------------------------------------------
SPLIT_PARAMETER = OpenApiParameter("split", str, enum=["public", "private"], default="public")
#: Seconds a rendered board (JSON) stays cached; snapshots are immutable, so this only bounds memory.
BOARD_CACHE_SECONDS = 3600


class LeaderboardView(JSONErrorsMixin, APIView):
    """GET: the latest snapshot of a task's board: rows, signature, sequence and time. CSV with
    ``?format=csv`` or ``Accept: text/csv`` (text cells that a spreadsheet would run as formulas are
    neutralised)."""

    permission_classes = [AllowAny]
    renderer_classes = [JSONRenderer, CSVRenderer]

    @extend_schema(
        parameters=[
            OpenApiParameter("task", str, description="Task slug; the first task by default."),
            SPLIT_PARAMETER,
            OpenApiParameter("sequence", int, description="An earlier snapshot; the latest by default."),
            OpenApiParameter("limit", int, description="Rows per page (default 100, at most 1,000)."),
            OpenApiParameter("offset", int, description="The first row of the page (default 0)."),
        ],
        responses={200: s.BoardOutputSerializer, 404: ERROR_RESPONSES[404]},
    )
    def get(self, request: Request, slug: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        query = s.BoardQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        task_slug = query.validated_data.get("task")
        if task_slug:
            task = task_get(challenge=challenge, slug=task_slug)
        else:
            task = challenge.tasks.order_by("position", "slug").first()  # type: ignore[assignment]
            if task is None:
                raise NotFoundError(NO_TASKS.format(slug=challenge.slug))
        split = query.validated_data["split"]
        sequence = query.validated_data.get("sequence")
        snapshot = (
            board_latest(task=task, split=split, user=request.user)
            if sequence is None
            else board_at(task=task, split=split, user=request.user, sequence=sequence)
        )

        csv = isinstance(request.accepted_renderer, CSVRenderer)
        total = snapshot.entry_count if snapshot else 0
        # A CSV export is a download of the whole board; JSON answers are paginated like the API's lists.
        offset = 0 if csv else query.validated_data["offset"]
        limit = max(total, 1) if csv else query.validated_data["limit"]

        def page_url(new_offset: int | None) -> str | None:
            if new_offset is None:
                return None
            url = replace_query_param(request.build_absolute_uri(), "limit", limit)
            return replace_query_param(url, "offset", new_offset)

        decimals = task_decimals(task)  # the board's precision: every number a reader sees is rounded
        # A Ladder board (issue 15): a non-organizer reads only what the Ladder released (rankings.ladder).
        hidden = ladder.hides(task, split, request.user)
        if hidden:
            released = ladder.reader_rows(snapshot) if snapshot else []
            total = len(released)
            limit = max(total, 1) if csv else limit

        def board() -> dict[str, Any]:
            if hidden:
                rows = released[offset : offset + limit]
            else:
                rows = public_rows(snapshot.rows[offset : offset + limit], decimals) if snapshot else []
            signature = public_signature(snapshot.signature, decimals) if snapshot else {}
            if hidden:
                signature = ladder.reader_signature(task)
            return {
                "challenge": challenge.slug,
                "task": task.slug,
                "split": split,
                "metric": task.metric,
                "sequence": snapshot.sequence if snapshot else None,
                "created_at": snapshot.created_at if snapshot else None,
                "entry_count": total,
                "signature": signature,
                "offset": offset,
                "limit": limit,
                "next": page_url(offset + limit if offset + limit < total else None),
                "previous": page_url(max(offset - limit, 0) if offset > 0 else None),
                "rows": rows,
            }

        if snapshot is not None and request.accepted_media_type == JSONRenderer.media_type:
            # A snapshot never changes, so each page's rendered JSON is cached (1,000 rows: ~0.9 MB, ~0.1 s
            # to serialise); the same renderer makes the same bytes (docs/reliability.md, "Load").
            key = (
                f"api-board:{snapshot.pk}:{snapshot.created_at.isoformat()}:{challenge.slug}:{task.slug}:"
                f"{task.metric}:{decimals}:{offset}:{limit}:{hidden}:{request.build_absolute_uri()}"
            )
            body = caches["boards"].get(key)
            if body is None:
                data = s.BoardOutputSerializer(board()).data
                body = request.accepted_renderer.render(
                    data, JSONRenderer.media_type, self.get_renderer_context()
                )
                caches["boards"].set(key, body, BOARD_CACHE_SECONDS)
            return HttpResponse(body, content_type=JSONRenderer.media_type)  # type: ignore[return-value]
        if csv:
            # The whole board in the site's CSV schema, from the same writer: the API's download and the
            # site's board.csv are the same bytes for the same snapshot (rankings.exports).
            if hidden:
                text = ladder.ladder_csv(released)
            else:
                text = board_csv(snapshot.rows, decimals) if snapshot else board_csv([], decimals)
            download = HttpResponse(text, content_type="text/csv; charset=utf-8")
            name = f"{challenge.slug}-{task.slug}-{split}" + (f"-{snapshot.sequence}" if snapshot else "")
            download["Content-Disposition"] = f'attachment; filename="{name}.csv"'
            return download  # type: ignore[return-value]
        return Response(s.BoardOutputSerializer(board()).data)


class SummaryView(APIView):
    """GET: the cross-task summary (average ranks, Friedman, critical difference, cliques)."""

    permission_classes = [AllowAny]

    @extend_schema(
        parameters=[SPLIT_PARAMETER], responses={200: s.SummaryOutputSerializer, 404: ERROR_RESPONSES[404]}
    )
    def get(self, request: Request, slug: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        split = s.BoardQuerySerializer(data=request.query_params)
        split.is_valid(raise_exception=True)
        name = split.validated_data["split"]
        if name == Split.PUBLIC and ladder.any_hidden(challenge.tasks.all(), request.user):
            raise NotFoundError(ladder.NOT_AVAILABLE)  # it ranks entries by their exact public values
        summary = summary_latest(challenge=challenge, split=name, user=request.user)
        if summary is None:
            raise NotFoundError(NO_SUMMARY.format(split=name))
        svg_url = None
        if summary.svg:
            from django.urls import reverse

            svg_url = reverse("api:critical-difference", kwargs={"slug": challenge.slug}) + f"?split={name}"
        data = {
            "challenge": challenge.slug,
            "split": name,
            "sequence": summary.sequence,
            "created_at": summary.created_at,
            # Per-task values at each task's precision (rankings.precision); the rest is rank-based.
            "summary": public_summary(summary.data, challenge_decimals(list(challenge.tasks.all()))),
            "svg_url": svg_url,
        }
        return Response(s.SummaryOutputSerializer(data).data)


class CriticalDifferenceView(JSONErrorsMixin, APIView):
    """GET: the critical-difference diagram of the latest summary, as SVG."""

    permission_classes = [AllowAny]
    renderer_classes = [SVGRenderer, JSONRenderer]
    content_negotiation_class = FirstRendererNegotiation

    @extend_schema(
        parameters=[SPLIT_PARAMETER],
        responses={(200, "image/svg+xml"): OpenApiTypes.STR, 404: ERROR_RESPONSES[404]},
    )
    def get(self, request: Request, slug: str) -> Response | HttpResponse:
        challenge = challenge_get(slug=slug, user=request.user)
        split = s.BoardQuerySerializer(data=request.query_params)
        split.is_valid(raise_exception=True)
        name = split.validated_data["split"]
        if name == Split.PUBLIC and ladder.any_hidden(challenge.tasks.all(), request.user):
            raise NotFoundError(ladder.NOT_AVAILABLE)
        summary = summary_latest(challenge=challenge, split=name, user=request.user)
        if summary is None or not summary.svg:
            raise NotFoundError(NO_DIAGRAM.format(split=name))
        response = Response(summary.svg)
        # The SVG is drawn by the service, but names in it come from participants: no scripts, ever.
        response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
        return response
