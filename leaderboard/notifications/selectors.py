from __future__ import annotations

from django.db.models import QuerySet

from leaderboard.challenges.selectors import AnyUser
from leaderboard.notifications.models import Notice


def notices_for(*, user: AnyUser) -> QuerySet[Notice]:
    """The user's site notices, newest first (none for a visitor)."""
    if not user.is_authenticated:
        return Notice.objects.none()
    return Notice.objects.filter(user_id=user.pk, on_site=True)


def unread_count(*, user: AnyUser) -> int:
    return notices_for(user=user).filter(read_at__isnull=True).count()
