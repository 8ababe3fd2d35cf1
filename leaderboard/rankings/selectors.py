"""Reads of boards: the latest snapshot, with the private board hidden until revealed."""

from __future__ import annotations

from leaderboard.challenges.models import Challenge, Task
from leaderboard.challenges.selectors import AnyUser, private_board_visible
from leaderboard.core.exceptions import NotFoundError
from leaderboard.rankings.models import BoardSnapshot, ChallengeSummary, ShakeupReport
from leaderboard.scoring.models import Split


def _check_split(*, challenge: Challenge, split: str, user: AnyUser) -> None:
    if split not in (Split.PUBLIC, Split.PRIVATE):
        raise NotFoundError(f"No board '{split}'; boards are 'public' and 'private'.")
    if split == Split.PRIVATE and not private_board_visible(challenge=challenge, user=user):
        raise NotFoundError("The private board is not revealed yet.")


#: The heavy JSON columns of a snapshot (K = 1,000: rows about 0.9 MB, the K x K rank distribution about
#: 5 MB) are loaded only when read: a page served from its cache needs neither (docs/reliability.md, Load).
HEAVY_SNAPSHOT_FIELDS = ("rows", "rank_distribution", "pairwise")


def board_latest(*, task: Task, split: str, user: AnyUser) -> BoardSnapshot | None:
    """The latest snapshot; its heavy fields (``HEAVY_SNAPSHOT_FIELDS``) load on first access."""
    _check_split(challenge=task.challenge, split=split, user=user)
    return (
        BoardSnapshot.objects.filter(task=task, split=split)
        .defer(*HEAVY_SNAPSHOT_FIELDS)
        .order_by("-sequence")
        .first()
    )


def board_at(*, task: Task, split: str, user: AnyUser, sequence: int) -> BoardSnapshot:
    """An earlier snapshot (boards before a re-score stay readable)."""
    _check_split(challenge=task.challenge, split=split, user=user)
    snapshot = BoardSnapshot.objects.filter(task=task, split=split, sequence=sequence).first()
    if snapshot is None:
        raise NotFoundError(f"The {split} board of '{task.slug}' has no snapshot {sequence}.")
    return snapshot


def summary_latest(*, challenge: Challenge, split: str, user: AnyUser) -> ChallengeSummary | None:
    _check_split(challenge=challenge, split=split, user=user)
    return ChallengeSummary.objects.filter(challenge=challenge, split=split).order_by("-sequence").first()


def shakeup_latest(*, task: Task, user: AnyUser) -> ShakeupReport | None:
    """The latest shake-up report of a task: organizers always, everyone once the private board is revealed."""
    if not task.has_private_split:
        raise NotFoundError(f"Task '{task.slug}' has no private split: there is no reveal to report on.")
    _check_split(challenge=task.challenge, split=Split.PRIVATE, user=user)
    return ShakeupReport.objects.filter(task=task).order_by("-private_sequence", "-public_sequence").first()
