"""The shake-up report in the API: JSON (the report), CSV (one row per team) and the slope chart (SVG).

Organizers read it at any time; everyone else once the organizers reveal the private board (404 before,
as for the private board itself).
"""

from __future__ import annotations

from django.http import HttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.api.renderers import CSVRenderer, SVGRenderer
from leaderboard.api.views.common import ERROR_RESPONSES, FirstRendererNegotiation, JSONErrorsMixin
from leaderboard.challenges.models import Task
from leaderboard.challenges.selectors import challenge_get, task_get, task_list
from leaderboard.core.exceptions import NotFoundError
from leaderboard.rankings.exports import shakeup_team_rows
from leaderboard.rankings.models import ShakeupReport
from leaderboard.rankings.precision import public_shakeup, task_decimals
from leaderboard.rankings.selectors import shakeup_latest

NO_REPORT = "No shake-up report of task '{task}' yet: it is built once both its boards exist."
TASK_PARAMETER = OpenApiParameter("task", str, description="Task slug; the first task by default.")


class ShakeupOutputSerializer(serializers.Serializer):
    challenge = serializers.CharField()
    task = serializers.CharField()
    public_sequence = serializers.IntegerField()
    private_sequence = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    report = serializers.JSONField(
        help_text="The report: correlations, reference, teams, summary, signature."
    )
    svg_url = serializers.CharField(allow_null=True)


def _report(request: Request, slug: str) -> tuple[Task, ShakeupReport]:
    challenge = challenge_get(slug=slug, user=request.user)
    task_slug = request.query_params.get("task")
    task = (
        task_get(challenge=challenge, slug=task_slug)
        if task_slug
        else task_list(challenge=challenge).filter(has_private_split=True).first()
    )
    if task is None:
        raise NotFoundError(f"Challenge '{challenge.slug}' has no task with a private split.")
    report = shakeup_latest(task=task, user=request.user)
    if report is None:
        raise NotFoundError(NO_REPORT.format(task=task.slug))
    return task, report


class ShakeupView(JSONErrorsMixin, APIView):
    """GET: the shake-up report of a task at the reveal (``?format=csv``: one row per team)."""

    permission_classes = [AllowAny]
    renderer_classes = [JSONRenderer, CSVRenderer]

    @extend_schema(
        parameters=[TASK_PARAMETER],
        responses={200: ShakeupOutputSerializer, 404: ERROR_RESPONSES[404]},
    )
    def get(self, request: Request, slug: str) -> Response:
        task, report = _report(request, slug)
        data = public_shakeup(report.data, task_decimals(task))  # the board's precision (rankings.precision)
        if isinstance(request.accepted_renderer, CSVRenderer):
            response = Response({"rows": shakeup_team_rows(data)})
            response["Content-Disposition"] = (
                f'attachment; filename="{slug}-{task.slug}-shakeup-{report.private_sequence}.csv"'
            )
            return response
        svg_url = None
        if report.svg:
            svg_url = reverse("api:shakeup-chart", kwargs={"slug": slug}) + f"?task={task.slug}"
        data = {
            "challenge": slug,
            "task": task.slug,
            "public_sequence": report.public_sequence,
            "private_sequence": report.private_sequence,
            "created_at": report.created_at,
            "report": data,
            "svg_url": svg_url,
        }
        return Response(ShakeupOutputSerializer(data).data)


class ShakeupChartView(JSONErrorsMixin, APIView):
    """GET: the slope chart of the shake-up report (public to private rank), as SVG."""

    permission_classes = [AllowAny]
    renderer_classes = [SVGRenderer, JSONRenderer]
    content_negotiation_class = FirstRendererNegotiation

    @extend_schema(
        parameters=[TASK_PARAMETER],
        responses={(200, "image/svg+xml"): OpenApiTypes.STR, 404: ERROR_RESPONSES[404]},
    )
    def get(self, request: Request, slug: str) -> Response | HttpResponse:
        task, report = _report(request, slug)
        if not report.svg:
            raise NotFoundError(NO_REPORT.format(task=task.slug))
        response = Response(report.svg)
        # Team names in the chart come from participants: no scripts, ever.
        response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
        return response
