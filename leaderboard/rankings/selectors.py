"""Reads of boards: the latest snapshot, with the private board hidden until revealed, and what a reader may
see of it (:func:`reader_view`, the read policy of ``rankings.policy``: every channel asks it)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Max

from leaderboard.challenges.models import Challenge, Task
from leaderboard.challenges.selectors import AnyUser, private_board_visible, task_list
from leaderboard.core.exceptions import NotFoundError
from leaderboard.rankings.models import BoardSnapshot, BoardState, ChallengeSummary, ShakeupReport
from leaderboard.rankings.policy import (
    Channel,
    ReaderView,
    challenge_refusal,
    reader_view,
    releases_of,
    summary_for,
)
from leaderboard.rankings.services import board_robustness, shakeup_current, splits_of, stored_resolution
from leaderboard.scoring.models import Score, Split
from leaderboard.submissions.models import Status

__all__ = [
    "BoardHealth",
    "Channel",
    "ReaderView",
    "board_at",
    "board_health",
    "board_latest",
    "challenge_refusal",
    "reader_view",
    "releases_of",
    "resolution_read",
    "robustness_read",
    "shakeup_latest",
    "summary_for",
    "summary_latest",
]


def _check_split(*, challenge: Challenge, split: str, user: AnyUser) -> None:
    if split not in (Split.PUBLIC, Split.PRIVATE):
        raise NotFoundError(f"No board '{split}'; boards are 'public' and 'private'.")
    if split == Split.PRIVATE and not private_board_visible(challenge=challenge, user=user):
        raise NotFoundError("The private board is not revealed yet.")


#: The heavy JSON columns of a snapshot (K = 1,000: rows about 0.9 MB, the K x K rank distribution about
#: 5 MB) are loaded only when read: a page served from its cache needs neither (docs/reliability.md, Load).
HEAVY_SNAPSHOT_FIELDS = ("rows", "rank_distribution", "pairwise", "robustness")


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
    public = reader_view(task, Split.PUBLIC, user)  # the report publishes the public board's values
    if not public.allows(Channel.SHAKEUP):
        raise NotFoundError(public.refusal)
    # built now if the latest pair of boards has none yet: a rebuild queues it only after the reveal
    # (rankings.services.shakeup_after_rebuild), so organizers before it, and the embedded demo, build it here
    return shakeup_current(task=task)


def robustness_read(*, reader: ReaderView, snapshot: BoardSnapshot, svg: bool = False) -> dict[str, Any]:
    """The snapshot's rank robustness as ``reader`` reads it (``ReaderView.robustness``; the caller checks
    ``Channel.RANKS``). Built on the first read that may see it (``rankings.services.board_robustness``;
    ``svg``: with the blob plot, for the page that shows it): a reader it is withheld from (a participant
    before the reveal) reads what the test set resolves only, and builds nothing."""
    if reader.tied and snapshot.entry_count >= 2:
        return reader.robustness(stored_resolution(snapshot))
    return reader.robustness(board_robustness(snapshot, svg=svg))


def resolution_read(*, reader: ReaderView, snapshot: BoardSnapshot) -> dict[str, Any] | None:
    """What the snapshot's test set resolves (stored by the rebuild), as ``reader`` reads it."""
    return reader.robustness(stored_resolution(snapshot)).get("resolution")


@dataclass(frozen=True)
class BoardHealth:
    """For organizers: a board's latest snapshot and how its rebuilds are going."""

    task: Task
    split: str
    snapshot_sequence: int | None
    snapshot_at: datetime | None
    entry_count: int
    stale: bool  # scores exist that the latest snapshot does not include
    error: str
    failed_at: datetime | None
    failures: int


def board_health(*, challenge: Challenge) -> list[BoardHealth]:
    """Every board of a challenge, for its organizers (errors are never shown to participants)."""
    out = []
    for task in task_list(challenge=challenge):
        states = {s.split: s for s in BoardState.objects.filter(task=task)}
        for split in splits_of(task):
            snap = (
                BoardSnapshot.objects.filter(task=task, split=split)
                .only("sequence", "created_at", "entry_count")
                .order_by("-sequence")
                .first()
            )
            newest = Score.objects.filter(
                task=task, split=split, truth_version=task.truth_version, submission__status=Status.SCORED
            ).aggregate(at=Max("scored_at"))["at"]
            state = states.get(split)
            checked = state.checked_at if state is not None and state.checked_at else None
            if checked is None and snap is not None:
                checked = snap.created_at
            out.append(
                BoardHealth(
                    task=task,
                    split=split,
                    snapshot_sequence=snap.sequence if snap else None,
                    snapshot_at=snap.created_at if snap else None,
                    entry_count=snap.entry_count if snap else 0,
                    stale=newest is not None and (checked is None or newest > checked),
                    error=state.error if state is not None else "",
                    failed_at=state.failed_at if state is not None else None,
                    failures=state.failures if state is not None else 0,
                )
            )
    return out
