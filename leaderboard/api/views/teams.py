"""Teams and approved participation."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated, IsAuthenticatedOrReadOnly
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.accounts.models import User
from leaderboard.api import serializers as s
from leaderboard.api.views.common import (
    ERROR_RESPONSES,
    _user,
)
from leaderboard.challenges.models import Participant
from leaderboard.challenges.selectors import (
    challenge_get,
    require_organizer,
    user_team,
)
from leaderboard.challenges.services import (
    participation_approve,
    participation_request,
    participation_revoke,
    team_found,
    team_join,
)
from leaderboard.core.exceptions import NotFoundError


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
