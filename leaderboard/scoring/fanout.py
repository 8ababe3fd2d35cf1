"""Scoring fanned out over Celery workers by fixed resample chunks (issues 12 and 14).

A large scoring (a tabular task of many items x resamples, a detection task with many resamples) does
not fit one worker's time limit. Its work splits by rows of the task's resample weights ``W``, which are
drawn in fixed chunks of :data:`stats.resampling.CHUNK_RESAMPLES` rows from the task's seed, so any row
range is computed on its own and the bytes do not depend on the chunking:

1. **Prepare** (the ``score_submission`` task, once): parse and validate the files, match detections,
   compute the point values and jackknife values; store each task's prepared state as a
   :class:`~leaderboard.scoring.models.FanoutState` row (the database: every host reads it, no local
   disk), create one :class:`~leaderboard.scoring.models.FanoutChunk` row per range of
   ``FANOUT_CHUNKS`` chunks and send one ``score_chunk`` task per row.
2. **Chunk** (``score_chunk``, one per row, on any worker): compute the replicates of chunks
   ``[first, stop)`` (the per-host W cache is the only local file read, rebuilt from the seed), then,
   under the job row's lock, store them in the chunk's row (a second delivery overwrites the same row)
   and recount the job's stored chunks (distinct rows, not increments).
3. **Join** (the chunk task whose count reaches the total, exactly once under that lock): concatenate
   the chunks in order into the :class:`~leaderboard.scoring.models.Score` rows (bit-identical to
   one worker's), mark the submission scored and rebuild its boards once the transaction commits.

Failures: a chunk task is ``acks_late`` with ``reject_on_worker_lost`` (a killed pool child's message
comes back); its process renews the chunk's lease while computing, and the sweeper
(:func:`fanout_resend_stuck`, run with ``sweep_stuck_submissions``) re-sends chunks whose lease lapsed
(the whole worker died) or whose message never reached or was lost by the broker. A chunk started or
sent ``FANOUT_MAX_ATTEMPTS`` times without finishing fails the submission, uncharged, with a message.

What is prepared, chunked and joined is the task kind's (``TaskKind.fans_out``, ``fanout_prepare``,
``fanout_chunk``, ``fanout_join`` in :mod:`leaderboard.scoring.kinds`); a kind that does not fan out
(segmentation) is scored whole by the prepare step of a fanned-out submission.
"""

from __future__ import annotations

import io
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import numpy as np
from celery import current_app  # leaderboard.config.celery's app, without importing config
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from leaderboard.challenges.models import Challenge, Task
from leaderboard.scoring import engine, state_codec
from leaderboard.scoring.kinds import get_kind
from leaderboard.scoring.models import FanoutChunk, FanoutJob, FanoutState
from leaderboard.scoring.selectors import HiddenTruth
from leaderboard.submissions.models import Status, Submission

logger = logging.getLogger(__name__)

FANOUT_GAVE_UP = (
    "Scoring was split into {total} parts run by several workers, and one part was interrupted {attempts} "
    "times (a worker ran out of memory or crashed while scoring it), so we stopped trying. It was not "
    "counted against your team's limits; the organizers have been told."
)
#: The prepared state of a task scored whole in the prepare step (its kind does not fan out).
SCORED = "scored"
#: A chunk whose message did not reach the broker is sent again after this long (as a submission's).
UNDISPATCHED_SECONDS = 10
#: A chunk sent but not started is sent again after this long (its message may have been lost).
DISPATCHED_SECONDS = 3600


@dataclass(frozen=True)
class TaskInput:
    """One task of a submission: the task, its hidden truth and the files (bytes, name, format) of its runs."""

    task: Task
    truth: HiddenTruth
    files: list[tuple[bytes, str, str]]

    def __repr__(self) -> str:  # never print hidden labels or predictions
        return f"TaskInput(task={self.task.pk}, runs={len(self.files)})"


# --- the rule ------------------------------------------------------------------------------------------
def task_fans_out(*, task: Task, runs: int, resamples: int) -> bool:
    """Whether a task's scoring is large enough to fan out (settings ``FANOUT_*``).

    The kind decides (``TaskKind.fans_out``). Tabular: items x resamples x runs at least
    ``FANOUT_MIN_COST`` (the product ``W @ S`` and the metric's finalisation grow with it). Detection: at
    least ``FANOUT_DETECTION_MIN_RESAMPLES`` resamples (a COCO-val-sized entry costs 15 to 22 ms per
    resample here, several times that on a busy machine: docs/benchmarks.md). Segmentation: never. Never
    when tasks run in-process (the embedded default) unless ``FANOUT_IN_PROCESS``.
    """
    if current_app.conf.task_always_eager and not settings.FANOUT_IN_PROCESS:
        return False  # tasks run in this process (the embedded default): no other worker to share with
    if engine.resample_chunks(resamples) <= max(1, settings.FANOUT_CHUNKS):
        return False  # one chunk task would be the whole work
    return get_kind(task.kind).fans_out(task=task, runs=runs, resamples=resamples)


def chunk_ranges(resamples: int) -> list[range]:
    """The fixed chunk ranges ``[first, stop)`` of the chunk tasks: ``FANOUT_CHUNKS`` chunks each."""
    n, size = engine.resample_chunks(resamples), max(1, settings.FANOUT_CHUNKS)
    return [range(a, min(a + size, n)) for a in range(0, n, size)]


def job_running(*, submission_id: int) -> bool:
    """A running submission whose chunk tasks are at work (its scoring message must not start again)."""
    return FanoutJob.objects.filter(
        submission_id=submission_id, state=FanoutJob.State.RUNNING, submission__status=Status.RUNNING
    ).exists()


# --- 1. prepare ----------------------------------------------------------------------------------------
def submission_fan_out(*, submission: Submission, inputs: list[TaskInput]) -> bool:
    """Prepare a claimed submission and send its chunk tasks, if one of its tasks is large enough.

    Returns False (nothing stored) when the submission is to be scored in this worker.
    """
    challenge = submission.challenge
    if not any(task_fans_out(task=i.task, runs=len(i.files), resamples=challenge.resamples) for i in inputs):
        return False
    states: list[tuple[TaskInput, bytes, bool]] = []
    for item in inputs:
        payload, chunked = _prepare(item, challenge)
        blob = _dump(payload)
        if len(blob) > settings.FANOUT_STATE_MAX_BYTES:
            logger.warning(
                "submission %s: prepared state of task %s is %s bytes, above FANOUT_STATE_MAX_BYTES; "
                "scoring it in one worker",
                submission.pk,
                item.task.pk,
                len(blob),
            )
            return False
        states.append((item, blob, chunked))
    ranges = chunk_ranges(challenge.resamples)
    with transaction.atomic():
        current = Submission.objects.select_for_update().get(pk=submission.pk)
        if current.status != Status.RUNNING:  # cancelled or finished meanwhile: nothing to send
            return True
        FanoutJob.objects.filter(submission=current).delete()  # an earlier, interrupted attempt's
        job = FanoutJob.objects.create(submission=current, attempt=current.attempts, total=0)
        rows = []
        for item, blob, chunked in states:
            FanoutState.objects.create(
                job=job, task=item.task, truth_version=item.truth.version, payload=blob
            )
            if chunked:
                rows += [FanoutChunk(job=job, task=item.task, first=r.start, stop=r.stop) for r in ranges]
        FanoutChunk.objects.bulk_create(rows)
        job.total = len(rows)
        job.save(update_fields=["total"])
        ids = list(
            FanoutChunk.objects.filter(job=job).order_by("task_id", "first").values_list("pk", flat=True)
        )
        transaction.on_commit(lambda: chunks_send(chunk_ids=ids))
    logger.info("submission %s: fanned out into %s chunk tasks", submission.pk, len(ids))
    return True


def _prepare(item: TaskInput, challenge: Challenge) -> tuple[dict[str, Any], bool]:
    """A task's prepared state (pickled into its FanoutState row) and whether it is scored by chunks."""
    task = item.task
    kind = get_kind(task.kind)
    prepared = kind.fanout_prepare(task=task, truth=item.truth, files=item.files, challenge=challenge)
    if prepared is not None:
        return {"kind": kind.name, **prepared}, True
    scores = kind.score_files(task=task, truth=item.truth, files=item.files, challenge=challenge)
    return {"kind": SCORED, "scores": scores}, False


def _dump(payload: dict[str, Any]) -> bytes:
    """A prepared state as stored: arrays in an npz archive plus a JSON outline, zlib level 1, no pickle
    (``leaderboard.scoring.state_codec``; a COCO-val entry's state: docs/benchmarks.md, "Fan-out")."""
    return state_codec.dumps(payload)


def _load(stored: Any) -> dict[str, Any]:
    """A prepared state back (written by :func:`_dump` in :func:`submission_fan_out` only), completed by
    its kind (``TaskKind.fanout_load``: a detection run's ground-truth index is rebuilt from its arrays)."""
    payload: dict[str, Any] = state_codec.loads(stored)
    if payload["kind"] == SCORED:
        return payload
    return get_kind(payload["kind"]).fanout_load(payload)


def chunks_send(*, chunk_ids: list[int]) -> list[int]:
    """Send one ``score_chunk`` task per chunk; a chunk the broker did not take is left for the sweeper."""
    from leaderboard.scoring.tasks import score_chunk

    sent = []
    for pk in chunk_ids:
        try:
            score_chunk.apply_async(args=[pk])
        except Exception:  # kombu/redis raise many types when the broker is unreachable
            logger.warning("broker unreachable; chunk %s left for the sweeper", pk, exc_info=True)
            continue
        FanoutChunk.objects.filter(pk=pk).update(sends=F("sends") + 1, sent_at=timezone.now())
        sent.append(pk)
    return sent


# --- 2. one chunk --------------------------------------------------------------------------------------
def chunk_score(*, chunk_id: int, worker: str, renew: bool = True) -> list[int]:
    """Compute and store one chunk's replicates; join the job if this chunk completes it.

    Returns the ids of the tasks scored by the join ([] when this chunk did not complete the job, or
    the job is over).
    """
    now = timezone.now()
    started = FanoutChunk.objects.filter(
        pk=chunk_id, job__state=FanoutJob.State.RUNNING, job__submission__status=Status.RUNNING
    ).update(
        attempts=F("attempts") + 1,
        started_at=now,
        lease_expires_at=now + timedelta(seconds=settings.LEASE_SECONDS),
        worker=worker[:200],  # who is computing it (the one that stores it, once stored)
    )
    if not started:
        logger.info("chunk %s: its job is over (or gone); nothing to do", chunk_id)
        return []
    chunk = FanoutChunk.objects.select_related("job").get(pk=chunk_id)
    if chunk.attempts > settings.FANOUT_MAX_ATTEMPTS:
        logger.error("chunk %s: giving up after %s interrupted attempts", chunk_id, chunk.attempts - 1)
        job_fail(job_id=chunk.job_id, message=_gave_up(chunk.job, chunk.attempts - 1))
        return []
    state = FanoutState.objects.get(job_id=chunk.job_id, task_id=chunk.task_id)
    payload = _load(state.payload)
    with _chunk_lease_renewed(chunk_id=chunk_id, enabled=renew):
        arrays = _chunk_arrays(payload, range(chunk.first, chunk.stop))
    out = io.BytesIO()
    savez: Any = np.savez  # numpy arrays only: read back with allow_pickle=False
    savez(out, **arrays)
    return chunk_store(chunk_id=chunk_id, result=out.getvalue(), worker=worker)


def _chunk_arrays(payload: dict[str, Any], chunks: range) -> dict[str, np.ndarray]:
    """The replicates of chunks ``chunks``, as the kind names them (``TaskKind.fanout_chunk``)."""
    return get_kind(payload["kind"]).fanout_chunk(payload, chunks)


def chunk_store(*, chunk_id: int, result: bytes, worker: str) -> list[int]:
    """Store a chunk's result and recount the job's stored chunks under the job's lock; join when complete."""
    job_id = FanoutChunk.objects.values_list("job_id", flat=True).get(pk=chunk_id)
    with transaction.atomic():
        job = FanoutJob.objects.select_for_update().get(pk=job_id)
        if job.state != FanoutJob.State.RUNNING:
            return []
        FanoutChunk.objects.filter(pk=chunk_id).update(
            result=result, worker=worker[:200], finished_at=timezone.now(), lease_expires_at=None
        )
        done = FanoutChunk.objects.filter(job=job, result__isnull=False).count()  # distinct rows
        FanoutJob.objects.filter(pk=job.pk).update(done=done)
        if done < job.total:
            return []
        return _join(job)


# --- 3. the join ---------------------------------------------------------------------------------------
def _join(job: FanoutJob) -> list[int]:
    """Concatenate every task's chunks in order into its scores and store them (under the job's lock)."""
    from leaderboard.scoring.services import scores_store

    challenge = Challenge.objects.get(submissions__pk=job.submission_id)
    results: list[tuple[Task, int, engine.SplitScore]] = []
    for state in FanoutState.objects.filter(job=job).select_related("task").order_by("task_id"):
        payload = _load(state.payload)
        task = state.task
        scores: list[engine.SplitScore]
        if payload["kind"] == SCORED:
            scores = payload["scores"]
        else:
            parts = []
            for row in FanoutChunk.objects.filter(job=job, task=task).order_by("first"):
                with np.load(io.BytesIO(bytes(row.result or b"")), allow_pickle=False) as z:
                    parts.append((range(row.first, row.stop), {key: z[key] for key in z.files}))
            scores = _join_task(task, challenge, payload, parts)
        results += [(task, state.truth_version, s) for s in scores]
    task_ids = scores_store(submission_id=job.submission_id, results=results)
    FanoutJob.objects.filter(pk=job.pk).update(state=FanoutJob.State.DONE, finished_at=timezone.now())
    FanoutState.objects.filter(job=job).delete()  # the prepared state is no longer needed
    logger.info("submission %s: joined %s chunks", job.submission_id, job.total)
    return task_ids


def _join_task(
    task: Task,
    challenge: Challenge,
    payload: dict[str, Any],
    parts: list[tuple[range, dict[str, np.ndarray]]],
) -> list[engine.SplitScore]:
    expected = 0
    for chunks, _ in parts:  # consecutive from 0 to the last chunk, or the join is refused
        if chunks.start != expected:
            raise RuntimeError(f"chunks of task {task.pk} are not consecutive at {expected}")
        expected = chunks.stop
    if expected != engine.resample_chunks(challenge.resamples):
        raise RuntimeError(f"chunks of task {task.pk} stop at {expected}")
    return get_kind(payload["kind"]).fanout_join(task=task, challenge=challenge, payload=payload, parts=parts)


# --- failures ------------------------------------------------------------------------------------------
def _gave_up(job: FanoutJob, attempts: int) -> str:
    return FANOUT_GAVE_UP.format(total=job.total, attempts=attempts)


def job_fail(*, job_id: int, message: str | None = None) -> None:
    """End a fan-out and its submission as failed for a platform fault: the team is not charged."""
    from leaderboard.scoring.services import submission_fail

    with transaction.atomic():
        job = FanoutJob.objects.select_for_update().get(pk=job_id)
        if job.state != FanoutJob.State.RUNNING:
            return
        FanoutJob.objects.filter(pk=job_id).update(state=FanoutJob.State.FAILED, finished_at=timezone.now())
        FanoutState.objects.filter(job_id=job_id).delete()
        if message is None:
            submission_fail(submission_id=job.submission_id)
        else:
            submission_fail(submission_id=job.submission_id, message=message)


def chunk_fail(*, chunk_id: int, message: str | None = None) -> None:
    job_id = FanoutChunk.objects.filter(pk=chunk_id).values_list("job_id", flat=True).first()
    if job_id is not None:
        job_fail(job_id=job_id, message=message)


@contextmanager
def _chunk_lease_renewed(*, chunk_id: int, enabled: bool) -> Iterator[None]:
    """Renew the chunk's lease every third of ``LEASE_SECONDS`` while it is computed (see
    ``services.submission_lease_renewed``): the lease lapses exactly when this process dies."""
    if not enabled:
        yield
        return
    stop = threading.Event()

    def renew() -> None:
        try:
            while not stop.wait(settings.LEASE_SECONDS / 3):
                try:
                    FanoutChunk.objects.filter(pk=chunk_id, result__isnull=True).update(
                        lease_expires_at=timezone.now() + timedelta(seconds=settings.LEASE_SECONDS)
                    )
                except DatabaseError:
                    logger.warning("chunk %s: could not renew its lease", chunk_id)
        finally:
            connection.close()

    thread = threading.Thread(target=renew, name=f"chunk-lease-{chunk_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=10)


# --- the sweeper ---------------------------------------------------------------------------------------
def fanout_resend_stuck() -> list[int]:
    """Re-send the chunks of running fan-outs that will not finish by themselves; return their ids.

    A chunk is re-sent when its lease lapsed (the process computing it died: a lost worker's message is
    otherwise redelivered only after Redis's visibility timeout), when its message never reached the
    broker, when it was sent before the broker (re)started, or when it waited ``DISPATCHED_SECONDS``
    unstarted. A chunk already sent ``FANOUT_MAX_ATTEMPTS`` times fails the submission, uncharged.
    Jobs whose submission is no longer running (it failed, or an organizer removed it) are closed.
    """
    from leaderboard.scoring.services import broker_started_at

    for job_id in (
        FanoutJob.objects.filter(state=FanoutJob.State.RUNNING)
        .exclude(submission__status=Status.RUNNING)
        .values_list("pk", flat=True)
    ):
        with transaction.atomic():
            FanoutJob.objects.filter(pk=job_id, state=FanoutJob.State.RUNNING).update(
                state=FanoutJob.State.FAILED, finished_at=timezone.now()
            )
            FanoutState.objects.filter(job_id=job_id).delete()
    now = timezone.now()
    waiting = Q(lease_expires_at__isnull=True)
    lost = Q(lease_expires_at__lt=now)
    lost |= waiting & Q(
        sent_at__isnull=True, job__created_at__lt=now - timedelta(seconds=UNDISPATCHED_SECONDS)
    )
    lost |= waiting & Q(sent_at__lt=now - timedelta(seconds=DISPATCHED_SECONDS))
    started = broker_started_at()
    if started is not None:
        lost |= waiting & Q(sent_at__lt=started)
    stuck = FanoutChunk.objects.filter(
        lost, job__state=FanoutJob.State.RUNNING, job__submission__status=Status.RUNNING, result__isnull=True
    ).select_related("job")
    resend = []
    for chunk in stuck:
        if chunk.sends >= settings.FANOUT_MAX_ATTEMPTS:
            logger.error(
                "chunk %s: sent %s times without finishing; failing the submission", chunk.pk, chunk.sends
            )
            job_fail(job_id=chunk.job_id, message=_gave_up(chunk.job, chunk.sends))
            continue
        # the old lease is cleared: the chunk now waits as a sent message (the clock restarts)
        FanoutChunk.objects.filter(pk=chunk.pk, result__isnull=True).update(lease_expires_at=None)
        resend.append(chunk.pk)
    sent = chunks_send(chunk_ids=resend)
    if sent:
        logger.warning("sweeper re-sent chunks %s", sent)
    return sent
