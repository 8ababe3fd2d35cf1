"""Accounts: API tokens and registration."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, status
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.accounts.services import api_token_get_or_create, api_token_revoke, user_register
from leaderboard.api import serializers as s
from leaderboard.api.views.common import (
    CONFLICT_RESPONSE,
    ERROR_RESPONSES,
    _user,
)
from leaderboard.core.throttles import (
    SignupAddressThrottle,
    SignupGlobalThrottle,
    WriteScopedRateThrottle,
)

# --- auth -------------------------------------------------------------------------------------------
WRONG_CREDENTIALS = "Unable to log in with provided credentials."  # DRF's words, which lb shows


class TokenView(APIView):
    """POST: exchange a username and password for your API token. DELETE: revoke it."""

    throttle_classes = [WriteScopedRateThrottle]
    throttle_scope = "token"
    parser_classes = [JSONParser, FormParser, MultiPartParser]

    def get_permissions(self) -> list[Any]:
        return [IsAuthenticated()] if self.request.method == "DELETE" else [AllowAny()]

    @extend_schema(
        request=s.TokenInputSerializer,
        responses={
            200: s.TokenOutputSerializer,
            400: ERROR_RESPONSES[400],
            401: OpenApiResponse(description="Wrong username or password: {message, extra}"),
        },
    )
    def post(self, request: Request) -> Response:
        serializer = AuthTokenSerializer(data=request.data, context={"request": request})
        if not serializer.is_valid():
            if set(serializer.errors) == {"non_field_errors"}:
                # both fields given, no such user with that password: wrong credentials are a 401, as for
                # a wrong token (a 400 says the request was malformed; issue 21, item 11)
                raise exceptions.AuthenticationFailed(WRONG_CREDENTIALS)
            raise exceptions.ValidationError(serializer.errors)
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
