"""Your notices (a submission scored or failed, a private board revealed): list them, mark them read."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.api.views.common import ERROR_RESPONSES, _user
from leaderboard.notifications.models import Notice
from leaderboard.notifications.selectors import notices_for
from leaderboard.notifications.services import notices_mark_read, preference_of, preference_set


class NoticeSerializer(serializers.ModelSerializer):
    read = serializers.SerializerMethodField()

    class Meta:
        model = Notice
        fields = ["id", "kind", "subject", "body", "url", "created_at", "read"]

    def get_read(self, notice: Notice) -> bool:
        return notice.read_at is not None


class NoticeListView(GenericAPIView):
    """GET: your notices on the site, newest first (``?unread=true``: only those not read); the same list as
    the site's Notices page. Notices you turned off on the account page are not listed."""

    serializer_class = NoticeSerializer
    permission_classes = [IsAuthenticated]
    filter_backends: list[Any] = []

    def get_queryset(self) -> Any:
        if getattr(self, "swagger_fake_view", False):
            return Notice.objects.none()
        qs = notices_for(user=self.request.user)
        if self.request.query_params.get("unread") in ("1", "true"):
            qs = qs.filter(read_at__isnull=True)
        return qs

    @extend_schema(
        parameters=[OpenApiParameter("unread", bool, description="Only the notices not read yet.")],
        responses={200: NoticeSerializer(many=True), 403: ERROR_RESPONSES[403]},
    )
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(NoticeSerializer(page, many=True).data)


_ID_MAX = 2**63 - 1  # a notice's id is a bigint: no other number names one


class NoticeReadView(APIView):
    """POST (JSON): mark notices read: ``ids`` (a list), or every notice when ``ids`` is left out."""

    permission_classes = [IsAuthenticated]
    # JSON only: a form cannot carry a list of numbers as the schema states it (issue 21, item 11)
    parser_classes = [JSONParser]

    @extend_schema(
        request=inline_serializer(
            "NoticeReadInput",
            fields={
                "ids": serializers.ListField(
                    child=serializers.IntegerField(min_value=1, max_value=_ID_MAX), required=False
                )
            },
        ),
        responses={
            200: inline_serializer("NoticeReadOutput", fields={"marked": serializers.IntegerField()}),
            **ERROR_RESPONSES,
        },
    )
    def post(self, request: Request) -> Response:
        field = serializers.ListField(
            child=serializers.IntegerField(min_value=1, max_value=_ID_MAX), required=False
        )
        if not isinstance(request.data, dict):  # a bare list (or number) is no "ids" left out: refused
            raise serializers.ValidationError('Send a JSON object: {"ids": [...]}, or {} for every notice.')
        raw = request.data.get("ids")
        ids = None if raw is None else field.run_validation(raw)
        return Response({"marked": notices_mark_read(user=_user(request), ids=ids)})


class NoticePreferenceSerializer(serializers.Serializer):
    email = serializers.BooleanField(help_text="Notices by e-mail (to the account's address).")
    site = serializers.BooleanField(help_text="Notices on the site's Notices page and in the API's list.")


class NoticePreferenceView(APIView):
    """GET: how you get notices; PUT ``{email, site}``: turn either off or on (the account page's opt-outs,
    issue 22: the command line can do what the site does)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: NoticePreferenceSerializer, 403: ERROR_RESPONSES[403]})
    def get(self, request: Request) -> Response:
        pref = preference_of(_user(request))
        return Response({"email": pref.email, "site": pref.site})

    @extend_schema(
        request=NoticePreferenceSerializer,
        responses={200: NoticePreferenceSerializer, 400: ERROR_RESPONSES[400], 403: ERROR_RESPONSES[403]},
    )
    def put(self, request: Request) -> Response:
        data = NoticePreferenceSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        pref = preference_set(
            user=_user(request), email=data.validated_data["email"], site=data.validated_data["site"]
        )
        return Response({"email": pref.email, "site": pref.site})
