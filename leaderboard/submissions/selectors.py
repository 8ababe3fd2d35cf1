"""Reads about submissions that more than one door needs: who may see a submission, and how much of its
limits a team has left."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db.models import QuerySet
from django.utils import timezone

from leaderboard.challenges.models import Challenge, EntrySelection, Team
from leaderboard.challenges.selectors import AnyUser, user_is_organizer
from leaderboard.core.exceptions import NotFoundError
from leaderboard.submissions.models import Status, Submission

SUBMISSION_NOT_FOUND = "No submission {id}."

#: The daily limit counts charged submissions of the last 24 hours (a sliding window, not a UTC day).
WINDOW = timedelta(days=1)


def submission_of_team_member(*, submission: Submission, user: AnyUser) -> bool:
    """``user`` is a member of the team that made the submission."""
    return user.is_authenticated and submission.team.members.filter(pk=user.pk).exists()


def submission_visible(*, submission: Submission, user: AnyUser) -> bool:
    """The access rule of a submission (API, site, cancelling): its team's members, the challenge's
    organizers and staff."""
    return submission_of_team_member(submission=submission, user=user) or user_is_organizer(
        challenge=submission.challenge, user=user
    )


def submission_get_visible(
    *, submission_id: int, user: AnyUser, queryset: QuerySet[Submission] | None = None
) -> Submission:
    """The submission, read through ``queryset`` (with what the caller shows of it), if the user may see
    it (:func:`submission_visible`); 404 (``NotFoundError``) for everyone else, as for a missing one."""
    qs = queryset if queryset is not None else Submission.objects.select_related("challenge", "team")
    submission = qs.filter(pk=submission_id).first()
    if submission is None or not submission_visible(submission=submission, user=user):
        raise NotFoundError(SUBMISSION_NOT_FOUND.format(id=submission_id))
    return submission


@dataclass(frozen=True)
class Quota:
    """A team's limits right now: what is used, what is left, and when the next slot opens."""

    daily_limit: int
    total_limit: int
    used_today: int  # charged submissions in the last 24 hours
    used_total: int
    next_slot_at: datetime | None  # when a daily slot frees up (None: one is free now, or the total is used)

    @property
    def left_today(self) -> int:
        return max(0, min(self.daily_limit - self.used_today, self.total_limit - self.used_total))

    @property
    def total_used_up(self) -> bool:
        return self.used_total >= self.total_limit

    @property
    def daily_used_up(self) -> bool:
        return self.used_today >= self.daily_limit


def _quota(*, challenge: Challenge, charged: QuerySet[Submission], now: datetime) -> Quota:
    used_total = charged.count()
    recent = sorted(charged.filter(created_at__gte=now - WINDOW).values_list("created_at", flat=True))
    next_slot = None
    if len(recent) >= challenge.daily_limit and used_total < challenge.total_limit:
        # the slot opens when enough of the window's submissions have aged out to go under the limit
        next_slot = recent[len(recent) - challenge.daily_limit] + WINDOW
    return Quota(challenge.daily_limit, challenge.total_limit, len(recent), used_total, next_slot)


def team_quota(*, challenge: Challenge, team: Team | None, now: datetime | None = None) -> Quota:
    """The quota of ``team`` (a user with no team yet has used nothing)."""
    now = now or timezone.now()
    if team is None:
        return Quota(challenge.daily_limit, challenge.total_limit, 0, 0, None)
    return _quota(challenge=challenge, charged=Submission.objects.filter(team=team, charged=True), now=now)


def address_quota(*, challenge: Challenge, client_key: str, now: datetime | None = None) -> Quota | None:
    """The quota that every team's uploads from one network address share (``client_key``, a keyed hash
    of the address) when the challenge counts one quota per address; None when it does not, or the
    address is unknown (an upload made by a service call, not a request)."""
    if not challenge.quota_per_address or not client_key:
        return None
    charged = Submission.objects.filter(challenge=challenge, client_key=client_key, charged=True)
    return _quota(challenge=challenge, charged=charged, now=now or timezone.now())


@dataclass(frozen=True)
class SharedAddress:
    """Several teams of one challenge that submitted from one network address (the organizer's notice)."""

    teams: tuple[str, ...]
    submissions: int


def shared_addresses(*, challenge: Challenge) -> list[SharedAddress]:
    """The network addresses (never shown: only their keyed hashes are stored) from which more than one
    team of the challenge submitted, with the teams' names: throwaway accounts look like this, and so do
    real teams behind one campus address."""
    rows = (
        Submission.objects.filter(challenge=challenge, charged=True)
        .exclude(client_key="")
        .values_list("client_key", "team__name")
        .order_by()
    )
    teams: dict[str, set[str]] = {}
    counts: dict[str, int] = {}
    for key, team in rows:
        teams.setdefault(key, set()).add(team)
        counts[key] = counts.get(key, 0) + 1
    shared = [SharedAddress(tuple(sorted(t)), counts[k]) for k, t in teams.items() if len(t) > 1]
    return sorted(shared, key=lambda a: (-len(a.teams), a.teams))


def wait_text(when: datetime, now: datetime | None = None) -> str:
    """'at 14:05 UTC (in 3 h 12 min)': when the next slot opens, in words."""
    now = now or timezone.now()
    minutes = max(1, int((when - now).total_seconds() // 60) + 1)
    hours, minutes = divmod(minutes, 60)
    span = f"{hours} h {minutes} min" if hours else f"{minutes} min"
    return f"at {when.astimezone(UTC).strftime('%Y-%m-%d %H:%M')} UTC (in {span})"


def counted_entry_replaced(*, challenge: Challenge, team: Team | None) -> Submission | None:
    """The team's submission that a new scored one would push off the board: under the "latest" rule (and
    under "selected" while nothing is selected) the newest scored submission counts, better or worse.

    The web form and the API (and so ``lb submit``) warn with it before a file is sent."""
    if team is None or challenge.entry_selection == EntrySelection.BEST:
        return None
    subs = Submission.objects.filter(team=team, is_baseline=False)
    if challenge.entry_selection == EntrySelection.SELECTED and subs.filter(selected=True).exists():
        return None
    return subs.filter(status=Status.SCORED).order_by("-created_at", "-pk").first()
