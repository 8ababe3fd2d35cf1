"""A submission that crashes the scorer ends as failed with a message for the participant, is not charged to
the team, and the worker survives: it scores the next submission.

Three real crashes in a real worker process: the stored file corrupted in storage after upload (a storage
fault; the upload itself was valid), an out-of-memory (the pool child under an address-space limit,
numpy raises MemoryError), and a child the kernel kills on every attempt (the OOM killer's way), which
the poison guard ends after ``MAX_ATTEMPTS``.
"""

from __future__ import annotations

import os
import resource
import signal
from pathlib import Path

import numpy as np
import pytest
from django.core.files.base import ContentFile

from leaderboard.challenges.services import challenge_create, task_create
from leaderboard.scoring.services import MAX_ATTEMPTS, SCORER_CRASHED, SCORER_GAVE_UP
from leaderboard.submissions.models import Status, Submission
from tests.conftest import wait_for
from tests.reliability.support import slow_challenge, slow_predictions_file, submit
from tests.service.factories import challenge_with_task, csv_bytes, predictions, user

# The fault tests (marked `faults`) start and kill workers and private servers, with windows timed on a
# busy machine: `make test` runs them in a pytest run of their own, one after another, beside the rest,
# which runs over several processes (pytest-xdist's `xdist_group` is not applied under pytest 9.2, so a group
# could not keep them together; docs/benchmarks.md, "Over two processes").
pytestmark = [
    pytest.mark.services,
    pytest.mark.django_db(transaction=True),
    pytest.mark.faults,
]


def _finished(pk: int) -> Submission | None:
    s = Submission.objects.get(pk=pk)
    return s if s.status in (Status.SCORED, Status.FAILED) else None


def _wait_finished(pk: int, timeout: float = 90) -> Submission:
    return wait_for(lambda: _finished(pk), timeout=timeout, what=f"submission {pk} to finish")


def _assert_failed_uncharged(s: Submission, message: str) -> None:
    assert s.status == Status.FAILED
    assert s.error == message
    assert s.charged is False


def test_a_file_corrupted_in_storage_fails_uncharged_and_the_worker_scores_the_next(fault_workers) -> None:
    challenge, _task, ids, truth = challenge_with_task(user("org"), resamples=200)
    participant = user("p1")
    bad = submit(challenge, participant, "corrupted", predictions(ids, truth, 0.8, 1))
    # Valid at upload; then the storage loses the second half of the file before a worker reads it.
    stored = bad.files.get().file
    with stored.open("rb") as handle:
        half = handle.read()[: stored.size // 2]
    stored.storage.delete(stored.name)
    assert stored.storage.save(stored.name, ContentFile(half)) == stored.name

    worker = fault_workers()
    _assert_failed_uncharged(_wait_finished(bad.pk), SCORER_CRASHED)
    (child,) = worker.pool_children()
    assert "the scorer crashed with ApplicationError" in worker.log_text()

    good = submit(challenge, participant, "next", predictions(ids, truth, 0.8, 2))
    assert _wait_finished(good.pk).status == Status.SCORED
    assert worker.pool_children() == [child]  # the same child process: it survived the crash


def _vm_size(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmSize for pid {pid}")


#: A macro-F1 task with many classes: its per-item statistics are N x (3 x classes + 1) floats,
#: 1.2 GB for 100,000 items and 500 classes, from a 2 MB upload.
HUGE_ITEMS, HUGE_CLASSES = 100_000, 500
#: The pool child may grow this much beyond its size after scoring a small submission.
HEADROOM = 512 * 1024 * 1024


def test_an_out_of_memory_fails_uncharged_and_the_worker_scores_the_next(fault_workers) -> None:
    organizer, participant = user("org"), user("p1")
    small, _task, ids, truth = challenge_with_task(organizer, slug="small", resamples=200)
    worker = fault_workers()
    first = submit(small, participant, "warm-up", predictions(ids, truth, 0.8, 1))
    assert _wait_finished(first.pk).status == Status.SCORED
    (child,) = worker.pool_children()
    # A per-child memory limit, as a container's would be, set on the warmed-up child.
    limit = _vm_size(child) + HEADROOM
    resource.prlimit(child, resource.RLIMIT_AS, (limit, limit))

    rng = np.random.default_rng(3)
    classes = [f"c{k:03d}" for k in range(HUGE_CLASSES)]
    huge_ids = [f"h{i:06d}" for i in range(HUGE_ITEMS)]
    huge_truth = [classes[k] for k in rng.integers(0, HUGE_CLASSES, HUGE_ITEMS)]
    huge = challenge_create(organizer=organizer, slug="huge", title="Huge", resamples=200)
    task_create(
        challenge=huge,
        slug="main",
        title="Many classes",
        metric="macro_f1",
        truth=csv_bytes("id,label", list(zip(huge_ids, huge_truth, strict=True))),
        truth_name="truth.csv",
        labels=classes,
    )
    guesses = [classes[k] for k in rng.integers(0, HUGE_CLASSES, HUGE_ITEMS)]
    oom = submit(
        huge, participant, "oom", csv_bytes("id,prediction", list(zip(huge_ids, guesses, strict=True)))
    )
    _assert_failed_uncharged(_wait_finished(oom.pk, timeout=120), SCORER_CRASHED)
    assert "scoring ran out of memory" in worker.log_text()
    assert worker.pool_children() == [child]  # MemoryError was raised and caught: the child lives on

    after = submit(small, participant, "after", predictions(ids, truth, 0.8, 2))
    assert _wait_finished(after.pk).status == Status.SCORED


def test_a_child_killed_on_every_attempt_ends_failed_by_the_poison_guard(fault_workers) -> None:
    """The kernel's OOM killer SIGKILLs the child each time; the worker redelivers; the guard stops it."""
    challenge, _task = slow_challenge(user("org"))
    worker = fault_workers()
    s = submit(challenge, user("p1"), "poison", slow_predictions_file())
    for attempt in range(1, MAX_ATTEMPTS + 1):
        wait_for(
            lambda attempt=attempt: Submission.objects.filter(
                pk=s.pk, status=Status.RUNNING, attempts=attempt
            ).exists(),
            timeout=60,
            interval=0.05,
            what=f"attempt {attempt}",
        )
        (child,) = worker.pool_children()
        os.kill(child, signal.SIGKILL)
    _assert_failed_uncharged(_wait_finished(s.pk), SCORER_GAVE_UP.format(attempts=MAX_ATTEMPTS))
    assert worker.log_text().count("WorkerLostError") >= MAX_ATTEMPTS
    assert worker.proc is not None and worker.proc.poll() is None

    challenge_ok, _t, ids, truth = challenge_with_task(user("org2"), slug="after", resamples=200)
    good = submit(challenge_ok, user("p2"), "next", predictions(ids, truth, 0.8, 2))
    assert _wait_finished(good.pk).status == Status.SCORED
