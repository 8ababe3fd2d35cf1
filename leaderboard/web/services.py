"""The site's one write of its own: the user's API token (DRF's Token model).

Everything else the pages change goes through the domain services. These two functions belong in
``leaderboard/accounts/services.py`` once that module exists; the pages would then import them there.
"""

from __future__ import annotations

from django.db import transaction
from rest_framework.authtoken.models import Token

from leaderboard.accounts.models import User


def api_token_get_or_create(*, user: User) -> Token:
    token, _ = Token.objects.get_or_create(user=user)
    return token


@transaction.atomic
def api_token_regenerate(*, user: User) -> Token:
    """A new token; the old one stops working at once (the CLI must log in again)."""
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)
