"""Reads of challenges, tasks and teams, with the visibility rules in one place."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser
from django.db.models import Q, QuerySet

from leaderboard.accounts.models import User
from leaderboard.challenges.models import Challenge, Task, Team, Visibility
from leaderboard.core.exceptions import NotFoundError, PermissionDeniedError

AnyUser = User | AnonymousUser


ORGANIZERS_ONLY = "Only the organizers of this challenge may do that."


def user_is_organizer(*, challenge: Challenge, user: AnyUser) -> bool:
    """The access rule of organizer actions and views: the challenge's organizers, and staff."""
    if not user.is_authenticated:
        return False
    if user.is_staff:
        return True
    return challenge.organizers.filter(pk=user.pk).exists()


def require_organizer(*, challenge: Challenge, user: AnyUser) -> None:
    """:func:`user_is_organizer` as a guard: 403 (``PermissionDeniedError``) for everyone else."""
    if not user_is_organizer(challenge=challenge, user=user):
        raise PermissionDeniedError(ORGANIZERS_ONLY)


def user_team(*, challenge: Challenge, user: AnyUser) -> Team | None:
    if not user.is_authenticated:
        return None
    return Team.objects.filter(challenge=challenge, members=user).first()


def task_list(*, challenge: Challenge) -> QuerySet[Task]:
    """The tasks of a challenge in the organizer's order (``position``, then ``slug``): every page, the API
    and the rebuilds list them so."""
    return challenge.tasks.order_by("position", "slug")


def challenge_list(*, user: AnyUser) -> QuerySet[Challenge]:
    """Challenges the user may see in listings: public ones, and those they organize or take part in."""
    qs = Challenge.objects.all()
    if user.is_authenticated and user.is_staff:
        return qs
    visible = Q(visibility=Visibility.PUBLIC)
    if user.is_authenticated:
        visible |= Q(organizers=user) | Q(teams__members=user)
    return qs.filter(visible).distinct()


def challenge_get(*, slug: str, user: AnyUser) -> Challenge:
    """A challenge by slug, if the user may see it (unlisted ones by link); 404 otherwise."""
    challenge = Challenge.objects.filter(slug=slug).first()
    if challenge is None or not challenge_visible(challenge=challenge, user=user):
        raise NotFoundError(f"No challenge '{slug}'.")
    return challenge


def challenge_visible(*, challenge: Challenge, user: AnyUser) -> bool:
    if challenge.visibility in (Visibility.PUBLIC, Visibility.UNLISTED):
        return True
    if not user.is_authenticated:
        return False
    return user_is_organizer(challenge=challenge, user=user) or challenge.teams.filter(members=user).exists()


def private_board_visible(*, challenge: Challenge, user: AnyUser) -> bool:
    """The private board: organizers always; everyone else only once the organizers revealed it."""
    return challenge.private_revealed or user_is_organizer(challenge=challenge, user=user)


def task_get(*, challenge: Challenge, slug: str) -> Task:
    task = challenge.tasks.filter(slug=slug).first()
    if task is None:
        raise NotFoundError(f"Challenge '{challenge.slug}' has no task '{slug}'.")
    return task


def task_kinds(*, challenge_slug: str, task_slug: str | None = None) -> set[str]:
    """The kinds (``Task.kind``) of a challenge's tasks, or of its task ``task_slug``: empty when none
    matches. For the size bound of a request body before its fields are read (no visibility rule: only
    the kinds' names leave here, never a task)."""
    tasks = Task.objects.filter(challenge__slug=challenge_slug)
    if task_slug:
        tasks = tasks.filter(slug=task_slug)
    return set(tasks.values_list("kind", flat=True))
