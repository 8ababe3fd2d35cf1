"""Boards: the latest (or a past) snapshot of a task, the cross-task summary and its diagram."""

from __future__ import annotations

from typing import Any

from django.core.cache import caches
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param
from rest_framework.views import APIView

from leaderboard.api import serializers as s
from leaderboard.api.renderers import CSVRenderer, SVGRenderer
from leaderboard.api.views.common import (
    ERROR_RESPONSES,
    NO_DIAGRAM,
    NO_SUMMARY,
    NO_TASKS,
    FirstRendererNegotiation,
    JSONErrorsMixin,
)
from leaderboard.challenges.selectors import (
    challenge_get,
    task_get,
    task_list,
)
from leaderboard.core.exceptions import NotFoundError
from leaderboard.rankings.selectors import (
    Channel,
    board_at,
    board_latest,
    challenge_refusal,
    reader_view,
    robustness_read,
    summary_for,
    summary_latest,
)

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
            # from the serializer the view validates with, so the schema states each bound (limit 1 to
            # 1,000, offset from 0): a request the schema calls valid is not refused (issue 21, item 11)
            s.BoardQuerySerializer,
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
            task = task_list(challenge=challenge).first()  # type: ignore[assignment]
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
        # What this reader may see of the board now (rankings.policy): the rows at the board's precision,
        # or, on a Ladder board before the reveal, only what the Ladder released.
        reader = reader_view(task, split, request.user)
        total = reader.entry_count(snapshot)
        # A CSV export is a download of the whole board; JSON answers are paginated like the API's lists.
        offset = 0 if csv else query.validated_data["offset"]
        limit = max(total, 1) if csv else query.validated_data["limit"]

        def page_url(new_offset: int | None) -> str | None:
            if new_offset is None:
                return None
            url = replace_query_param(request.build_absolute_uri(), "limit", limit)
            return replace_query_param(url, "offset", new_offset)

        def board() -> dict[str, Any]:
            return {
                "challenge": challenge.slug,
                "task": task.slug,
                "split": split,
                "metric": task.metric,
                "sequence": snapshot.sequence if snapshot else None,
                "created_at": snapshot.created_at if snapshot else None,
                "entry_count": total,
                "signature": reader.signature(snapshot),
                "offset": offset,
                "limit": limit,
                "next": page_url(offset + limit if offset + limit < total else None),
                "previous": page_url(max(offset - limit, 0) if offset > 0 else None),
                "rows": reader.rows(snapshot, offset, offset + limit),
            }

        if snapshot is not None and request.accepted_media_type == JSONRenderer.media_type:
            # A snapshot never changes, so each page's rendered JSON is cached (1,000 rows: ~0.9 MB, ~0.1 s
            # to serialise); the same renderer makes the same bytes (docs/reliability.md, "Load").
            key = (
                f"api-board:{snapshot.pk}:{snapshot.created_at.isoformat()}:{challenge.slug}:{task.slug}:"
                f"{task.metric}:{reader.decimals}:{offset}:{limit}:{reader.cache_key}:{request.build_absolute_uri()}"
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
            download = HttpResponse(reader.csv(snapshot), content_type="text/csv; charset=utf-8")
            name = f"{challenge.slug}-{task.slug}-{split}" + (f"-{snapshot.sequence}" if snapshot else "")
            download["Content-Disposition"] = f'attachment; filename="{name}.csv"'
            return download  # type: ignore[return-value]
        return Response(s.BoardOutputSerializer(board()).data)


class RobustnessView(JSONErrorsMixin, APIView):
    """GET: how stable a task's ranking is (issue 23): rank frequencies per entry with median and interval,
    Kendall's tau-b of the bootstrap rankings, the ranking schemes side by side, and what the test set
    resolves. Through the read policy: participants read it once the board is revealed (before, ``available``
    is false and says why); a Ladder board before the reveal answers 404. Built on the first read that may
    see it and kept per snapshot. The blob plot (SVG) is on the site's robustness page."""

    permission_classes = [AllowAny]

    @extend_schema(
        parameters=[SPLIT_PARAMETER],
        responses={200: s.RobustnessOutputSerializer, 404: ERROR_RESPONSES[404]},
    )
    def get(self, request: Request, slug: str, task: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        the_task = task_get(challenge=challenge, slug=task)
        split = request.query_params.get("split", "public")
        snapshot = board_latest(task=the_task, split=split, user=request.user)  # 404: a hidden split
        reader = reader_view(the_task, split, request.user)
        if not reader.allows(Channel.RANKS):
            raise NotFoundError(reader.refusal)
        if snapshot is None:
            data: dict[str, Any] = {"available": False, "reason": "No board yet."}
        else:
            data = robustness_read(reader=reader, snapshot=snapshot)
        robustness = {k: v for k, v in data.items() if k not in ("svg", "svg_reason", "max_entries")}
        return Response(
            s.RobustnessOutputSerializer(
                {
                    "challenge": challenge.slug,
                    "task": the_task.slug,
                    "split": split,
                    "sequence": snapshot.sequence if snapshot else None,
                    "robustness": robustness,
                }
            ).data
        )


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
        refusal = challenge_refusal(challenge.tasks.all(), name, request.user, Channel.SUMMARY)
        if refusal is not None:
            raise NotFoundError(refusal)  # it ranks entries by their exact values
        summary = summary_latest(challenge=challenge, split=name, user=request.user)
        if summary is None:
            raise NotFoundError(NO_SUMMARY.format(split=name))
        tasks = list(challenge.tasks.all())
        shown, svg = summary_for(summary, tasks, name, request.user)
        svg_url = None
        if svg:
            from django.urls import reverse

            svg_url = reverse("api:critical-difference", kwargs={"slug": challenge.slug}) + f"?split={name}"
        data = {
            "challenge": challenge.slug,
            "split": name,
            "sequence": summary.sequence,
            "created_at": summary.created_at,
            # As the read policy shows it: ties at the board's precision before the reveal (issue 21).
            "summary": shown,
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
        refusal = challenge_refusal(challenge.tasks.all(), name, request.user, Channel.SUMMARY)
        if refusal is not None:
            raise NotFoundError(refusal)
        summary = summary_latest(challenge=challenge, split=name, user=request.user)
        svg = summary_for(summary, challenge.tasks.all(), name, request.user)[1] if summary else ""
        if not svg:
            raise NotFoundError(NO_DIAGRAM.format(split=name))
        response = Response(svg)
        # The SVG is drawn by the service, but names in it come from participants: no scripts, ever.
        response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
        return response
