from typing import Any

from django.http import HttpRequest

from leaderboard.notifications.selectors import unread_count


def notices(request: HttpRequest) -> dict[str, Any]:
    """``unread_notices`` for the header's bell: one COUNT per page of a logged-in user, lazily."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"unread_notices": 0}
    return {"unread_notices": lambda: unread_count(user=user)}
