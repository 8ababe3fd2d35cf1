"""Submissions: upload, list, read, cancel, select for the board."""

from __future__ import annotations

from typing import Any

import django_filters
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.api import serializers as s
from leaderboard.api.selectors import (
    submission_details_visible,
    submission_get,
    submission_list,
    submission_visible_scores,
)
from leaderboard.api.uploads import SizeLimitedUploadsMixin
from leaderboard.api.views.common import (
    ERROR_RESPONSES,
    _user,
)
from leaderboard.challenges.selectors import (
    challenge_get,
    user_is_organizer,
)
from leaderboard.core.throttles import (
    WriteScopedRateThrottle,
    client_address,
)
from leaderboard.submissions.models import Status, Submission
from leaderboard.submissions.services import submission_cancel, submission_create, submission_select


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
    parser_classes = [MultiPartParser]  # file parts: a urlencoded form cannot carry them
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
                    # required in the schema: a request without it is refused (400, "needs at least one
                    # predictions file"); a challenge of several tasks takes 'file:<task>' parts instead
                    "file": serializers.FileField(
                        help_text="One-task challenges (one part per run); a challenge of several tasks "
                        "takes one 'file:<task>' part per task (and run) instead."
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
            client_address=client_address(request),
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
