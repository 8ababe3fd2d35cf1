"""Boards on real workers: every metric of the registry builds its board from uploads scored by a ``celery
worker`` process, and beat's board sweeper rebuilds a board that its scores left behind.
"""

from __future__ import annotations

import io
import time

import pytest
from django.core.cache import cache

from leaderboard.challenges.services import challenge_create, task_create
from leaderboard.rankings import services as rankings
from leaderboard.rankings.models import BoardSnapshot, BoardState
from leaderboard.submissions.models import Status, Submission
from leaderboard.submissions.services import Upload, submission_create
from stats.metrics import METRICS
from tests.conftest import wait_for
from tests.service.factories import challenge_with_task, predictions, user
from tests.service.test_board_every_metric import prediction_file, task_data

# The fault tests (marked `faults`) start and kill workers and private servers, with windows timed on a
# busy machine: `make test` runs them in a pytest run of their own, one after another, beside the rest,
# which runs over several processes (pytest-xdist's `xdist_group` is not applied under pytest 9.2, so a group
# could not keep them together; docs/benchmarks.md, "Over two processes").
pytestmark = [
    pytest.mark.services,
    pytest.mark.django_db(transaction=True),
    pytest.mark.faults,
]


def _upload(name: str, data: bytes) -> Upload:
    return Upload(name=name, size=len(data), stream=io.BytesIO(data))


def test_every_metric_builds_a_board_from_uploads_scored_by_a_worker(fault_workers) -> None:
    """One task per metric; a single-run and a three-run submission cover every task at once."""
    challenge = challenge_create(organizer=user("org"), slug="all", title="All metrics", resamples=200)
    truths = {}
    for name in sorted(n for n, m in METRICS.items() if m.task_kind == "items"):  # vision: test_vision_tasks
        _ids, truth, labels = task_data(name)
        truths[name] = truth
        slug = name.replace("_", "-")
        task_create(
            challenge=challenge,
            slug=slug,
            title=name,
            metric=name,
            truth=truth,
            truth_name="t.csv",
            labels=labels,
        )
    fault_workers()
    single = submission_create(
        challenge=challenge,
        user=user("one"),
        name="one-run",
        files={
            m.replace("_", "-"): [_upload("p.csv", prediction_file(m, t, 0.8, 1))] for m, t in truths.items()
        },
    )
    multi = submission_create(
        challenge=challenge,
        user=user("three"),
        name="three-runs",
        files={
            m.replace("_", "-"): [_upload(f"r{r}.csv", prediction_file(m, t, 0.7, 10 + r)) for r in range(3)]
            for m, t in truths.items()
        },
    )
    for s in (single, multi):
        wait_for(
            lambda s=s: Submission.objects.get(pk=s.pk).status == Status.SCORED,
            timeout=120,
            what=f"{s.name} scored",
        )
    for task in challenge.tasks.all():
        board = wait_for(
            lambda task=task: BoardSnapshot.objects.filter(task=task, split="public", entry_count=2).first(),
            timeout=120,
            what=f"the board of {task.metric} with both entries",
        )
        assert {r["submission_id"] for r in board.rows} == {single.pk, multi.pk}, task.metric
        assert not BoardState.objects.filter(task=task, failures__gt=0).exists(), task.metric


def test_beat_rebuilds_a_board_held_back_by_a_lost_coalescing_marker(fault_workers) -> None:
    """A marker says a rebuild is queued, but its message is gone (a Redis restart between the two): the
    score sends no rebuild, and for 5 minutes nothing would. Beat's board sweeper rebuilds it."""
    challenge, task, ids, truth = challenge_with_task(user("org"), resamples=200)
    fast = {"LEADERBOARD_SWEEP_SECONDS": "0.5", "LEADERBOARD_REBUILD_STALE_SECONDS": "1"}
    fault_workers(env=fast)
    assert cache.add(rankings._pending_key(task.pk, "public"), 1, rankings.REBUILD_PENDING_SECONDS)
    s = submission_create(
        challenge=challenge,
        user=user("p1"),
        name="held-back",
        files={"main": [_upload("p.csv", predictions(ids, truth, 0.8, 1))]},
    )
    wait_for(lambda: Submission.objects.get(pk=s.pk).status == Status.SCORED, timeout=60, what="scoring")
    scored = time.monotonic()
    time.sleep(1.0)
    assert not BoardSnapshot.objects.filter(task=task).exists()  # held back by the marker
    fault_workers.beat(env=fast)
    board = wait_for(
        lambda: BoardSnapshot.objects.filter(task=task, split="public").first(), timeout=60, what="the board"
    )
    assert [r["submission_id"] for r in board.rows] == [s.pk]
    print(
        f"\n[figure] board held back by a lost marker: rebuilt {time.monotonic() - scored:.1f} s after scoring"
    )
