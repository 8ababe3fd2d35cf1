"""Writes of accounts: sign-up and API tokens (DRF's Token model: one token per user)."""

from __future__ import annotations

from django.contrib.auth import password_validation
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from rest_framework.authtoken.models import Token

from leaderboard.accounts.models import User
from leaderboard.core.exceptions import ApplicationError, ConflictError

USERNAME_TAKEN = "The username '{username}' is taken."


@transaction.atomic
def user_register(*, username: str, password: str, email: str = "") -> User:
    username = username.strip()
    if User.objects.filter(username__iexact=username).exists():
        raise ConflictError(USERNAME_TAKEN.format(username=username), extra={"field": "username"})
    user = User(username=username, email=email)
    try:
        user.full_clean(exclude=["password"])
    except DjangoValidationError as exc:
        field = next(iter(exc.message_dict), "username")
        raise ApplicationError(" ".join(exc.messages), extra={"field": field}) from exc
    try:
        password_validation.validate_password(password, user=user)
    except DjangoValidationError as exc:
        raise ApplicationError(" ".join(exc.messages), extra={"field": "password"}) from exc
    user.set_password(password)
    user.save()
    return user


def api_token_get_or_create(*, user: User) -> Token:
    """The user's API token; created on first use."""
    token, _ = Token.objects.get_or_create(user=user)
    return token


@transaction.atomic
def api_token_regenerate(*, user: User) -> Token:
    """A new token; the old one stops working at once (the CLI must log in again)."""
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)


def api_token_revoke(*, user: User) -> None:
    """Delete the user's token: every client holding it is logged out. A new one is issued on next login."""
    Token.objects.filter(user=user).delete()
