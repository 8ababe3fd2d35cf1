"""Tasks of a challenge: create, public items, hidden labels, rescoring."""

from __future__ import annotations

from typing import Any, cast

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.api import serializers as s
from leaderboard.api.renderers import CSVRenderer
from leaderboard.api.selectors import (
    rescore_job_latest,
)
from leaderboard.api.uploads import SizeLimitedUploadsMixin
from leaderboard.api.views.common import (
    ERROR_RESPONSES,
    JSONErrorsMixin,
    _read_upload,
    _user,
)
from leaderboard.challenges.selectors import (
    challenge_get,
    require_organizer,
    task_get,
)
from leaderboard.challenges.services import (
    task_create,
    task_public_mode_set,
    task_truth_replace,
)
from leaderboard.challenges.settings_spec import TEXT_METRIC_OPTIONS
from leaderboard.scoring.kinds import get_kind, kind_for_metric
from leaderboard.scoring.services import rescore_job_refresh, task_rescore


# --- tasks ------------------------------------------------------------------------------------------
class TaskListView(SizeLimitedUploadsMixin, APIView):
    """GET: the tasks of a challenge (public fields only). POST (multipart): create a task from its hidden
    labels file (organizers)."""

    parser_classes = [MultiPartParser]  # a file part: a form without one cannot carry it
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
            truth=_read_upload(truth, kind=kind_for_metric(data["metric"])),
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
            text_options={key: data[key] for key in TEXT_METRIC_OPTIONS if key in data},
            secondary_metrics=data.get("secondary_metrics") or None,
        )
        return Response(s.TaskOutputSerializer(task).data, status=status.HTTP_201_CREATED)


class TaskDetailView(APIView):
    """GET: one task. PATCH (organizers): its public board's mode (``public_mode``, ``ladder_eta``,
    ``ladder_z``); 409 once the task has submissions, like the challenge's statistics settings."""

    # JSON only: a form cannot carry the null that a nullable setting takes (issue 21, item 11)
    parser_classes = [JSONParser]

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
        fields = dict(serializer.validated_data)
        # a field the PATCH leaves out keeps the task's value (the service's None)
        updated = task_public_mode_set(task=task_get(challenge=challenge, slug=task), **fields)
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

    parser_classes = [MultiPartParser]  # a file part: a form without one cannot carry it

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
            truth=_read_upload(data["truth"], kind=get_kind(task_obj.kind)),
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
