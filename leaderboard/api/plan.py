"""Planning a test set in the API (issue 23; ``lb plan``): items needed for a gap at a power, per metric, and
what a number of items resolves. Stateless arithmetic on the request's numbers: no board, no labels."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.api.fields import OpenFloatField
from leaderboard.api.views.common import ERROR_RESPONSES, JSONErrorsMixin
from leaderboard.core.exceptions import ApplicationError
from leaderboard.rankings.board import RESOLUTION_POWER, plan_items, planned
from leaderboard.scoring.engine import metric_choices

#: The largest gap, standard deviation or standard error planned with: the squares of their ratios stay
#: finite floats (larger values overflowed to a 500; issue 21, item 11).
_LARGEST = 1e12


class PlanInputSerializer(serializers.Serializer):
    # the known metrics as the schema's enum: a request the schema calls valid names one (issue 21, item 11)
    metric = serializers.ChoiceField(choices=[name for name, _ in metric_choices()])
    gap = serializers.FloatField(min_value=1e-12, max_value=_LARGEST)
    power = serializers.FloatField(min_value=0.5, max_value=0.999, default=RESOLUTION_POWER)
    alpha = serializers.FloatField(min_value=1e-6, max_value=0.5, default=0.05)
    # strictly inside (0, 1), as the plan needs it: the schema says so (exclusiveMinimum/Maximum)
    accuracy = OpenFloatField(
        min_value=0.0,
        max_value=1.0,
        exclusive_min=True,
        exclusive_max=True,
        required=False,
        message="`accuracy` must be in (0, 1).",
    )
    sd = serializers.FloatField(min_value=1e-12, max_value=_LARGEST, required=False)
    pilot_standard_error = serializers.FloatField(min_value=1e-12, max_value=_LARGEST, required=False)
    pilot_items = serializers.IntegerField(min_value=1, required=False)
    n_items = serializers.IntegerField(min_value=1, required=False)


class PlanOutputSerializer(serializers.Serializer):
    plan = serializers.JSONField(help_text="Items needed: items, gap, alpha, power, family, method, basis.")
    resolves = serializers.JSONField(
        allow_null=True, help_text="With n_items: the smallest difference those items resolve at the power."
    )


_GIVEN = ("accuracy", "sd", "pilot_standard_error", "pilot_items")


class PlanView(JSONErrorsMixin, APIView):
    """GET: items a test set needs to detect ``gap`` at ``power`` for ``metric`` (stats.power.items_for_gap)."""

    permission_classes = [AllowAny]

    @extend_schema(
        # from the serializer the view validates with: the schema states every bound (issue 21, item 11)
        parameters=[PlanInputSerializer],
        responses={200: PlanOutputSerializer, 400: ERROR_RESPONSES[400]},
    )
    def get(self, request: Request) -> Response:
        params = PlanInputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        data: dict[str, Any] = dict(params.validated_data)
        given = {k: data[k] for k in _GIVEN if k in data}
        resolves = None
        try:
            plan = plan_items(
                data["gap"], metric=data["metric"], alpha=data["alpha"], power=data["power"], **given
            )
            if "n_items" in data:
                resolves = planned(
                    data["n_items"], metric=data["metric"], alpha=data["alpha"], power=data["power"], **given
                )
        except (ValueError, KeyError, ArithmeticError) as exc:
            raise ApplicationError(str(exc).strip("'\""), extra={"field": "metric"}) from exc
        return Response(PlanOutputSerializer({"plan": plan, "resolves": resolves}).data)
