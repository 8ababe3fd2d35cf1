"""API-specific writes: sign-up for API users and DRF tokens.

``user_register`` is not API-specific in spirit (the sign-up page needs it too); it lives here until
``leaderboard/accounts/services.py`` exists, and should move there.
"""

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


def token_issue(*, user: User) -> Token:
    """The user's API token (one per user, as DRF's token model has it); created on first use."""
    token, _ = Token.objects.get_or_create(user=user)
    return token


def token_revoke(*, user: User) -> None:
    """Delete the user's token: every client holding it is logged out. A new one is issued on next login."""
    Token.objects.filter(user=user).delete()
