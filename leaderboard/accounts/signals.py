"""Every save or deletion of a user or an API token drops its cached copy (``accounts.auth_cache``)."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver
from rest_framework.authtoken.models import Token

from leaderboard.accounts.auth_cache import forget_token, forget_user
from leaderboard.accounts.models import User


@receiver(post_save, sender=User, dispatch_uid="auth-cache-user-saved")
@receiver(post_delete, sender=User, dispatch_uid="auth-cache-user-deleted")
def _user_changed(sender: Any, instance: User, **kwargs: Any) -> None:
    forget_user(instance.pk)


@receiver(post_save, sender=Token, dispatch_uid="auth-cache-token-saved")
@receiver(post_delete, sender=Token, dispatch_uid="auth-cache-token-deleted")
def _token_changed(sender: Any, instance: Token, **kwargs: Any) -> None:
    forget_token(instance.key)
