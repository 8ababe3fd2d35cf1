"""Challenges: list, create, read, update, reveal the private board."""

from __future__ import annotations

from typing import Any

from django.utils.text import slugify
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.filters import OrderingFilter
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticatedOrReadOnly
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.api import serializers as s
from leaderboard.api.views.common import (
    CONFLICT_RESPONSE,
    ERROR_RESPONSES,
    _user,
)
from leaderboard.challenges.models import Challenge
from leaderboard.challenges.selectors import (
    challenge_get,
    challenge_list,
    require_organizer,
    user_is_organizer,
    user_team,
)
from leaderboard.challenges.services import (
    challenge_create,
    challenge_reveal_private,
    challenge_update,
    slug_for,
)
from leaderboard.submissions.selectors import counted_entry_replaced


# --- challenges -------------------------------------------------------------------------------------
def _challenge_context(request: Request, challenges: list[Challenge]) -> dict[str, Any]:
    organizer_of = {c.pk for c in challenges if user_is_organizer(challenge=c, user=request.user)}
    # one challenge (the detail): the entry a new submission would replace, as the web form warns of it
    replaces = (
        {
            c.pk: counted_entry_replaced(challenge=c, team=user_team(challenge=c, user=request.user))
            for c in challenges
            if c.pk not in organizer_of
        }
        if len(challenges) == 1
        else {}
    )
    return {"request": request, "organizer_of": organizer_of, "replaces": replaces}


class ChallengeListView(GenericAPIView):
    """GET: the challenges you may see (public ones, and those you organize or take part in). POST: create
    one; you become its organizer."""

    # JSON only: a form cannot carry the null that a nullable setting takes (issue 21, item 11)
    parser_classes = [JSONParser]

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

    # JSON only: a form cannot carry the null that a nullable setting takes (issue 21, item 11)
    parser_classes = [JSONParser]

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

    @extend_schema(
        request=s.RevealInputSerializer,
        responses={
            200: s.ChallengeOutputSerializer,
            **ERROR_RESPONSES,
            409: OpenApiResponse(description="The challenge is open: say `close` or `while_open`"),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        challenge = challenge_get(slug=slug, user=request.user)
        require_organizer(challenge=challenge, user=_user(request))
        serializer = s.RevealInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        challenge = challenge_reveal_private(challenge=challenge, **serializer.validated_data)
        return Response(
            s.ChallengeOutputSerializer(challenge, context=_challenge_context(request, [challenge])).data
        )
