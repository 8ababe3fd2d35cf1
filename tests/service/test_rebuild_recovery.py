"""A board never silently stops: a failed rebuild is retried, a board left behind is rebuilt by the sweeper,
and the organizer page shows a stale board with its error and when it happened.

Tasks run in-process here (Celery's eager mode runs a retry at once, without its countdown); the same
sweeper on real workers and beat is in tests/reliability/test_rebuild_workers.py.
"""

from __future__ import annotations

from datetime import UTC, timedelta

import pytest
from django.core.cache import cache
from django.db.models import F
from django.test import Client
from django.utils import timezone

from leaderboard.challenges import ports as challenge_ports
from leaderboard.rankings import board as board_builder
from leaderboard.rankings import services as rankings
from leaderboard.rankings.models import BoardSnapshot, BoardState
from leaderboard.rankings.services import boards_requeue_stale
from leaderboard.rankings.tasks import REBUILD_RETRIES
from leaderboard.scoring.models import Score
from leaderboard.submissions.models import Status
from leaderboard.submissions.services import submission_create
from tests.service.factories import challenge_with_task, predictions, upload, user

pytestmark = pytest.mark.django_db(transaction=True)

PLANTED = "planted rebuild failure"


@pytest.fixture
def board(transactional_db):  # type: ignore[no-untyped-def]
    organizer = user("org")
    challenge, task, ids, truth = challenge_with_task(organizer, resamples=200)
    return organizer, challenge, task, ids, truth


def _submit(challenge, name, ids, truth, seed):  # type: ignore[no-untyped-def]
    data = predictions(ids, truth, 0.8, seed)
    s = submission_create(
        challenge=challenge, user=user(name), name=name, files={"main": [upload(f"{name}.csv", data)]}
    )
    s.refresh_from_db()
    assert s.status == Status.SCORED, s.error
    return s


def _latest(task) -> BoardSnapshot | None:  # type: ignore[no-untyped-def]
    return BoardSnapshot.objects.filter(task=task, split="public").order_by("-sequence").first()


def _age_scores(task, seconds: float) -> None:  # type: ignore[no-untyped-def]
    """Move the board's history ``seconds`` into the past, as if that much time had gone by."""
    back = timedelta(seconds=seconds)
    Score.objects.filter(task=task).update(scored_at=F("scored_at") - back)
    BoardState.objects.filter(task=task).update(checked_at=F("checked_at") - back)
    BoardSnapshot.objects.filter(task=task).update(created_at=F("created_at") - back)


def test_a_rebuild_that_fails_once_is_retried_and_the_board_catches_up(board, monkeypatch) -> None:
    _organizer, challenge, task, ids, truth = board
    real = board_builder.build_board
    calls = []

    def fails_once(**kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 1:
            raise ValueError(PLANTED)
        return real(**kwargs)

    monkeypatch.setattr(board_builder, "build_board", fails_once)
    s = _submit(challenge, "p1", ids, truth, 1)
    snap = _latest(task)
    assert snap is not None and [r["submission_id"] for r in snap.rows] == [s.pk]
    assert len(calls) == 2
    state = BoardState.objects.get(task=task, split="public")
    assert state.failures == 0 and state.error == "" and state.checked_at is not None  # healed


def test_a_rebuild_that_keeps_failing_leaves_the_stale_board_with_its_error_for_organizers(
    board, monkeypatch
) -> None:
    organizer, challenge, task, ids, truth = board
    first = _submit(challenge, "p1", ids, truth, 1)
    assert _latest(task).entry_count == 1  # type: ignore[union-attr]

    def always_fails(**kwargs):  # type: ignore[no-untyped-def]
        raise ValueError(PLANTED)

    monkeypatch.setattr(board_builder, "build_board", always_fails)
    _submit(challenge, "p2", ids, truth, 2)
    snap = _latest(task)
    assert snap is not None and snap.sequence == 1 and [r["submission_id"] for r in snap.rows] == [first.pk]
    state = BoardState.objects.get(task=task, split="public")
    assert state.failures == 1 + REBUILD_RETRIES  # the first attempt and its bounded retries
    assert state.error == f"ValueError: {PLANTED}" and state.failed_at is not None

    page = Client()
    page.force_login(organizer)
    html = page.get(f"/c/{challenge.slug}/organize/").content.decode()
    assert "Stale." in html and PLANTED in html
    assert state.failed_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S") in html
    # Participants see the last snapshot, never the error.
    participant = Client()
    participant.force_login(user("p3"))
    assert PLANTED not in participant.get(f"/c/{challenge.slug}/").content.decode()

    # The sweeper waits before trying a failing board again, then does, and the fixed rebuild heals it.
    _age_scores(task, 120)
    assert boards_requeue_stale(stale_for=60, retry_after=600) == []
    BoardState.objects.filter(pk=state.pk).update(failed_at=timezone.now() - timedelta(seconds=700))
    monkeypatch.undo()
    assert boards_requeue_stale(stale_for=60, retry_after=600) == [(task.pk, "public")]
    assert _latest(task).entry_count == 2  # type: ignore[union-attr]
    html = page.get(f"/c/{challenge.slug}/organize/").content.decode()
    assert "Stale." not in html and "Up to date." in html


def test_the_sweeper_rebuilds_a_board_whose_rebuild_message_was_lost(board, monkeypatch) -> None:
    _organizer, challenge, task, ids, truth = board
    _submit(challenge, "p1", ids, truth, 1)
    monkeypatch.setattr(challenge_ports.boards_rebuild, "_impl", lambda **kwargs: None)  # the message is lost
    _submit(challenge, "p2", ids, truth, 2)
    assert _latest(task).entry_count == 1  # type: ignore[union-attr]
    assert boards_requeue_stale(stale_for=60, retry_after=600) == []  # too recent: it may be on its way
    _age_scores(task, 120)
    assert boards_requeue_stale(stale_for=60, retry_after=600) == [(task.pk, "public")]
    assert _latest(task).entry_count == 2  # type: ignore[union-attr]
    assert boards_requeue_stale(stale_for=60, retry_after=600) == []  # up to date: nothing to send


def test_the_sweeper_rebuilds_a_board_held_back_by_a_lost_coalescing_marker(board) -> None:
    """A marker says "a rebuild is queued" but its message is gone: scores send nothing for 5 minutes."""
    _organizer, challenge, task, ids, truth = board
    _submit(challenge, "p1", ids, truth, 1)
    assert cache.add(rankings._pending_key(task.pk, "public"), 1, rankings.REBUILD_PENDING_SECONDS)
    _submit(challenge, "p2", ids, truth, 2)
    assert _latest(task).entry_count == 1  # type: ignore[union-attr]
    _age_scores(task, 120)
    assert boards_requeue_stale(stale_for=60, retry_after=600) == [(task.pk, "public")]
    assert _latest(task).entry_count == 2  # type: ignore[union-attr]
    assert cache.get(rankings._pending_key(task.pk, "public")) is None  # the rebuild cleared it
