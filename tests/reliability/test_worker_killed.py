"""A worker killed (SIGKILL) while scoring: the submission is scored exactly once, with the numbers of an
undisturbed run, and its board entry appears once.

Two faults: the pool child that runs the task dies (the kernel's OOM killer picks it, say), and the whole
worker dies (the machine loses power). In the first the worker's main process sees the child's death
and, because tasks are ``acks_late`` with ``reject_on_worker_lost``, puts the message back for another
child. In the second nobody is left to put it back (Redis would redeliver it only after the visibility
timeout, 16 minutes); the sweeper, run by beat every 30 s, re-sends a submission left ``running``.
"""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

from leaderboard.rankings.models import BoardSnapshot
from leaderboard.scoring.models import Score
from leaderboard.scoring.services import submissions_requeue_stuck
from leaderboard.submissions.models import Status, Submission
from tests.conftest import wait_for
from tests.reliability.support import slow_challenge, slow_expected, slow_predictions_file, submit
from tests.service.factories import user

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def _status(pk: int) -> str:
    return Submission.objects.values_list("status", flat=True).get(pk=pk)


def _wait_running(pk: int) -> None:
    wait_for(lambda: _status(pk) == Status.RUNNING, timeout=60, interval=0.05, what="status running")
    time.sleep(0.5)  # well inside the O(N^2) jackknife, seconds before the scores are written


def _assert_scored_once_with_the_undisturbed_numbers(submission_id: int, task_id: int) -> None:
    s = Submission.objects.get(pk=submission_id)
    assert s.status == Status.SCORED, s.error
    scores = list(Score.objects.filter(submission_id=submission_id))
    assert [(x.task_id, x.split) for x in scores] == [(task_id, "public")]  # one Score row per task/split
    expected = slow_expected()
    assert scores[0].value == pytest.approx(expected.value, abs=1e-12)
    np.testing.assert_allclose(scores[0].replicate_array(), expected.replicates, rtol=0, atol=1e-12)
    jackknife = scores[0].jackknife_array()
    assert jackknife is not None
    np.testing.assert_allclose(jackknife, expected.jackknife, rtol=0, atol=1e-12)
    board = wait_for(
        lambda: (
            BoardSnapshot.objects.filter(task_id=task_id, split="public", entry_count=1)
            .order_by("-sequence")
            .first()
        ),
        timeout=60,
        what="the board snapshot",
    )
    assert [r["submission_id"] for r in board.rows] == [submission_id]  # the entry appears once


def test_a_pool_child_killed_while_scoring_is_redelivered_and_scored_once(fault_workers) -> None:
    challenge, task = slow_challenge(user("org"))
    worker = fault_workers()
    s = submit(challenge, user("p1"), "killed-child", slow_predictions_file())
    _wait_running(s.pk)
    (child,) = worker.pool_children()
    os.kill(child, signal.SIGKILL)
    killed_at = time.monotonic()

    wait_for(lambda: _status(s.pk) == Status.SCORED, timeout=90, what="scoring after the kill")
    recovered = time.monotonic() - killed_at
    assert worker.proc is not None and worker.proc.poll() is None  # the worker itself lives on
    assert child not in worker.pool_children()  # a new child did the work
    assert "WorkerLostError" in worker.log_text()
    assert Submission.objects.get(pk=s.pk).attempts == 2  # claimed by the dead child, then by its successor
    _assert_scored_once_with_the_undisturbed_numbers(s.pk, task.pk)
    print(f"\n[figure] pool child SIGKILLed: scored {recovered:.1f} s after the kill")


def test_a_whole_worker_killed_while_scoring_is_swept_and_scored_once_by_another(fault_workers) -> None:
    challenge, task = slow_challenge(user("org"))
    first = fault_workers()
    s = submit(challenge, user("p1"), "killed-worker", slow_predictions_file())
    _wait_running(s.pk)
    first.kill()
    killed_at = time.monotonic()
    time.sleep(1.0)
    assert _status(s.pk) == Status.RUNNING  # left behind: nobody will finish or re-send it by itself

    fault_workers()  # another worker, on the same queue
    # As beat would (every 30 s, with a 15-minute threshold in production; 0 s here).
    assert submissions_requeue_stuck(running_for=0) == [s.pk]
    wait_for(lambda: _status(s.pk) == Status.SCORED, timeout=90, what="scoring by the second worker")
    recovered = time.monotonic() - killed_at
    _assert_scored_once_with_the_undisturbed_numbers(s.pk, task.pk)
    # A second sweep finds nothing left to do.
    assert submissions_requeue_stuck(running_for=0) == []
    print(f"\n[figure] whole worker SIGKILLed: scored {recovered:.1f} s after the kill (sweep at once)")
