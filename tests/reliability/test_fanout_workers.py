"""A scoring fanned out over TWO real worker processes (leaderboard.scoring.fanout): the chunks are spread
across both, the joined numbers are the bytes of one worker, and a worker killed (SIGKILL, the whole
process group) in the middle of a chunk does not stop the scoring: the chunk's lease lapses and the
sweeper, sent by beat, re-sends it to the other worker.

The task: ROC AUC (rank-based, per-resample sorting) on 40,000 items with 4,096 resamples, 16 chunks of
256 resamples, 2 per chunk task, so 8 chunk tasks of about 2 s each on this machine.
"""

from __future__ import annotations

import functools
import time

import numpy as np
import pytest

from leaderboard.challenges.services import challenge_create, task_create
from leaderboard.scoring import engine
from leaderboard.scoring.models import FanoutChunk, FanoutJob, Score
from leaderboard.scoring.selectors import task_truth_get
from leaderboard.submissions.models import Status, Submission
from tests.conftest import wait_for
from tests.reliability.support import submit
from tests.service.factories import csv_bytes, user

# The fault tests (marked `faults`) start and kill workers and private servers, with windows timed on a
# busy machine: `make test` runs them in a pytest run of their own, one after another, beside the rest,
# which runs over several processes (pytest-xdist's `xdist_group` is not applied under pytest 9.2, so a group
# could not keep them together; docs/benchmarks.md, "Over two processes").
pytestmark = [
    pytest.mark.services,
    pytest.mark.django_db(transaction=True),
    pytest.mark.faults,
]

ITEMS = 40_000
RESAMPLES = 4096
FANOUT = {
    "LEADERBOARD_FANOUT_MIN_COST": "1",
    "LEADERBOARD_FANOUT_CHUNKS": "2",
}
#: Short lease and sweep, so the killed worker's chunk is re-sent within seconds (production: 60 s, 10 s).
LEASE = {"LEADERBOARD_LEASE_SECONDS": "2", "LEADERBOARD_SWEEP_SECONDS": "0.5"}


@functools.cache
def _data() -> tuple[bytes, bytes]:
    rng = np.random.default_rng(21)
    ids = [f"i{k:06d}" for k in range(ITEMS)]
    y = rng.integers(0, 2, size=ITEMS)
    scores = np.clip(0.3 * y + 0.7 * rng.random(ITEMS), 0, 1).round(5)
    truth = csv_bytes("id,label", [(i, str(int(t))) for i, t in zip(ids, y, strict=True)])
    preds = csv_bytes("id,score", [(i, repr(float(s))) for i, s in zip(ids, scores, strict=True)])
    return truth, preds


def _challenge(slug: str):  # type: ignore[no-untyped-def]
    truth, _ = _data()
    challenge = challenge_create(
        organizer=user(f"org-{slug}"), slug=slug, title=slug, resamples=RESAMPLES, seed=0
    )
    task = task_create(
        challenge=challenge, slug="main", title="Main", metric="roc_auc", truth=truth,
        truth_name="truth.csv", stratify="none",
    )  # fmt: skip
    return challenge, task


def _one_worker_scores(challenge, task) -> list[engine.SplitScore]:  # type: ignore[no-untyped-def]
    """What one worker stores: the unchanged single-worker path, in this process."""
    _, preds = _data()
    return engine.score_files(
        task=task, truth=task_truth_get(task=task), files=[(preds, "p.csv", "csv")], challenge=challenge
    )


def _assert_one_workers_bytes(submission_id: int, expected: list[engine.SplitScore]) -> None:
    s = Submission.objects.get(pk=submission_id)
    assert s.status == Status.SCORED, s.error
    (score,) = Score.objects.filter(submission_id=submission_id)
    (want,) = expected
    assert score.value == want.value
    assert bytes(score.replicates) == want.replicates.astype("<f8").tobytes()
    assert bytes(score.jackknife) == want.jackknife.astype("<f8").tobytes()


def _status(pk: int) -> str:
    return Submission.objects.values_list("status", flat=True).get(pk=pk)


def test_chunks_spread_over_two_workers_join_into_one_workers_numbers(fault_workers) -> None:
    challenge, task = _challenge("fan-two")
    first = fault_workers(env=FANOUT)
    second = fault_workers(env=FANOUT)
    _, preds = _data()
    started = time.monotonic()
    s = submit(challenge, user("p1"), "fanned", preds)
    wait_for(lambda: _status(s.pk) != Status.QUEUED and _status(s.pk) != Status.RUNNING, timeout=300,
             interval=0.2, what="the fanned-out scoring")  # fmt: skip
    elapsed = time.monotonic() - started
    job = FanoutJob.objects.get(submission_id=s.pk)
    assert job.state == FanoutJob.State.DONE and job.done == job.total == 8
    chunks = list(FanoutChunk.objects.filter(job=job).order_by("first"))
    assert [(c.first, c.stop) for c in chunks] == [(k, k + 2) for k in range(0, 16, 2)]
    workers = {c.worker.split("@")[0] for c in chunks}
    assert workers == {first.name, second.name}, (
        workers,
        first.log_text()[-2000:],
        second.log_text()[-2000:],
    )
    _assert_one_workers_bytes(s.pk, _one_worker_scores(challenge, task))
    per_worker = {w: sum(c.worker.startswith(w + "@") for c in chunks) for w in workers}
    print(f"\n[figure] 8 chunk tasks over 2 workers {sorted(per_worker.values())}: scored in {elapsed:.1f} s")


def test_a_worker_killed_in_the_middle_of_a_chunk_does_not_stop_the_scoring(fault_workers) -> None:
    challenge, task = _challenge("fan-kill")
    env = FANOUT | LEASE
    workers = [fault_workers(env=env), fault_workers(env=env)]
    fault_workers.beat(env=env)
    _, preds = _data()
    s = submit(challenge, user("p1"), "fanned", preds)

    def running_chunk() -> FanoutChunk | None:
        return (
            FanoutChunk.objects.filter(job__submission_id=s.pk, result__isnull=True, started_at__isnull=False)
            .exclude(worker="")
            .first()
        )

    chunk = wait_for(running_chunk, timeout=180, interval=0.05, what="a chunk being computed")
    (victim,) = [w for w in workers if chunk.worker.startswith(w.name + "@")]
    victim.kill()
    killed_at = time.monotonic()
    survivor = next(w for w in workers if w is not victim)

    wait_for(lambda: _status(s.pk) == Status.SCORED, timeout=300, what="the scoring after the kill")
    recovered = time.monotonic() - killed_at
    chunk.refresh_from_db()
    assert chunk.result is not None and chunk.worker.startswith(survivor.name + "@")
    assert chunk.attempts >= 2 and chunk.sends >= 2  # re-sent by the sweeper, computed again
    assert "sweeper re-sent chunks" in survivor.log_text()
    job = FanoutJob.objects.get(submission_id=s.pk)
    assert job.state == FanoutJob.State.DONE and job.done == job.total
    assert Submission.objects.get(pk=s.pk).attempts == 1  # the submission was prepared once
    _assert_one_workers_bytes(s.pk, _one_worker_scores(challenge, task))
    print(f"\n[figure] a worker SIGKILLed mid-chunk: scored {recovered:.1f} s after the kill")
