"""Scoring: hidden labels + predictions -> point estimate and replicate vector per (task, split)."""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from celery import current_app  # leaderboard.config.celery's app, without importing config
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from leaderboard.accounts.models import User
from leaderboard.challenges.models import Task
from leaderboard.challenges.ports import boards_rebuild, notices
from leaderboard.scoring import engine
from leaderboard.scoring.kinds import get_kind
from leaderboard.scoring.models import MetricScore, RescoreJob, Score
from leaderboard.scoring.selectors import task_truth_get
from leaderboard.submissions.models import Status, Submission, SubmissionFile

logger = logging.getLogger(__name__)

SCORER_CRASHED = (
    "Scoring failed because of a fault on our side, not in your file. It was not counted against your "
    "team's limits; the organizers have been told."
)


#: A submission whose scoring was started this many times without finishing (its worker was killed, by
#: the kernel's OOM killer say, and the task redelivered) is failed instead of crashing workers forever.
MAX_ATTEMPTS = 5
SCORER_GAVE_UP = (
    "Scoring was interrupted {attempts} times (a worker ran out of memory or crashed while scoring it), so "
    "we stopped trying. It was not counted against your team's limits; the organizers have been told."
)


def submission_dispatch(*, submission_id: int) -> bool:
    """Send the scoring task to the broker. If the broker is down the submission stays queued with no
    ``dispatched_at``, and the sweeper sends it once the broker is back (an outbox, in effect)."""
    from leaderboard.scoring.tasks import score_submission  # the tasks module imports this one

    try:
        score_submission.apply_async(args=[submission_id])
    except Exception:  # kombu/redis raise many types when the broker is unreachable
        logger.warning("broker unreachable; submission %s left for the sweeper", submission_id, exc_info=True)
        return False
    Submission.objects.filter(pk=submission_id, dispatched_at__isnull=True).update(
        dispatched_at=timezone.now()
    )
    return True


def submission_claim(*, submission_id: int) -> bool:
    """queued (or running, when a dead worker's task comes back) -> running; False if there is nothing to do.

    A conditional UPDATE, so two workers holding the same message cannot both claim a finished submission,
    and a poison submission (``MAX_ATTEMPTS`` interrupted attempts) ends as failed, uncharged.
    """
    active = Submission.objects.filter(pk=submission_id, status__in=[Status.QUEUED, Status.RUNNING])
    gave_up = active.filter(attempts__gte=MAX_ATTEMPTS).update(
        status=Status.FAILED,
        error=SCORER_GAVE_UP.format(attempts=MAX_ATTEMPTS),
        charged=False,
        finished_at=timezone.now(),
    )
    if gave_up:
        logger.error("submission %s: giving up after %s interrupted attempts", submission_id, MAX_ATTEMPTS)
        _notify_on_commit(submission_id)
        return False
    now = timezone.now()
    claimed = active.filter(attempts__lt=MAX_ATTEMPTS).update(
        status=Status.RUNNING,
        started_at=now,
        lease_expires_at=now + timedelta(seconds=settings.LEASE_SECONDS),
        attempts=F("attempts") + 1,
    )
    return bool(claimed)


@contextmanager
def submission_lease_renewed(*, submission_id: int) -> Iterator[None]:
    """Renew a running submission's lease every third of ``LEASE_SECONDS`` while the block runs.

    A thread of the process that scores it does the renewing, so the lease lapses exactly when that
    process dies (a killed worker, a lost machine) and then the sweeper re-sends the submission within
    one lease and one sweep, instead of a fixed threshold longer than any scoring could take.
    """
    stop = threading.Event()

    def renew() -> None:
        try:
            while not stop.wait(settings.LEASE_SECONDS / 3):
                try:
                    Submission.objects.filter(pk=submission_id, status=Status.RUNNING).update(
                        lease_expires_at=timezone.now() + timedelta(seconds=settings.LEASE_SECONDS)
                    )
                except DatabaseError:  # the database went away: try again at the next beat
                    logger.warning("submission %s: could not renew its lease", submission_id)
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=renew, name=f"lease-{submission_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=10)


def submission_file_bytes(f: SubmissionFile) -> bytes:
    """A submitted file's bytes, from the uploads storage every host reaches (settings.STORAGES["default"]:
    database rows by default, read chunk by chunk; or S3), never from this host's disk unless configured."""
    with f.file.open("rb") as handle:
        return bytes(handle.read())


def submission_score(*, submission_id: int, rebuild: bool = True) -> list[int]:
    """Score a submission on each of its tasks; store the scores; return the ids of the tasks scored.

    Idempotent: a submission already scored, failed or cancelled is left alone; a running one (its worker
    died) is scored again and its scores replaced, so it appears once. A large one is prepared here and
    fanned out over chunk tasks (``leaderboard.scoring.fanout``), whose join stores the scores; [] here.
    ``rebuild=False`` (a re-score's block, ``scoring.rescore``): no board rebuild once stored.
    """
    from leaderboard.scoring import fanout

    if fanout.job_running(submission_id=submission_id):  # fanned out already: the chunk tasks finish it
        logger.info("submission %s: its chunk tasks are running", submission_id)
        return []
    if not submission_claim(submission_id=submission_id):
        logger.info("submission %s: nothing to do", submission_id)
        return []
    submission = Submission.objects.select_related("challenge").get(pk=submission_id)
    files_by_task: dict[int, list[SubmissionFile]] = defaultdict(list)
    for f in submission.files.select_related("task").order_by("task_id", "run"):
        files_by_task[f.task_id].append(f)

    inputs: list[fanout.TaskInput] = []
    for files in files_by_task.values():
        task = files[0].task
        truth = task_truth_get(task=task)
        payloads = []
        for f in files:
            payloads.append((submission_file_bytes(f), f.original_name, f.format))
        inputs.append(fanout.TaskInput(task=task, truth=truth, files=payloads))
    if fanout.submission_fan_out(submission=submission, inputs=inputs):
        return []  # the chunk tasks score it; the one completing the join stores the scores

    results: list[tuple[Task, int, engine.SplitScore]] = []
    for item in inputs:
        for split_score in get_kind(item.task.kind).score_files(
            task=item.task, truth=item.truth, files=item.files, challenge=submission.challenge
        ):
            results.append((item.task, item.truth.version, split_score))
    return scores_store(submission_id=submission_id, results=results, rebuild=rebuild)


def scores_store(
    *, submission_id: int, results: list[tuple[Task, int, engine.SplitScore]], rebuild: bool = True
) -> list[int]:
    """Store a running submission's scores, mark it scored and rebuild its boards once committed (unless
    ``rebuild`` is False: a re-score's block, whose job rebuilds them once at its end).

    Returns the ids of the tasks scored ([] if the submission was cancelled or finished meanwhile).
    """
    with transaction.atomic():
        current = Submission.objects.select_for_update().get(pk=submission_id)
        if current.status != Status.RUNNING:  # cancelled or finished meanwhile
            return []
        for task, version, s in results:
            score, _ = Score.objects.update_or_create(
                submission=current,
                task=task,
                split=s.split,
                defaults={
                    "value": s.value,
                    "replicates": s.replicates.astype("<f8").tobytes(),
                    "jackknife": s.jackknife.astype("<f8").tobytes(),
                    "item_statistics": None
                    if s.item_statistics is None
                    else s.item_statistics.astype("<f8").tobytes(),
                    "item_statistics_shape": None
                    if s.item_statistics is None
                    else list(s.item_statistics.shape),
                    "run_values": s.run_values,
                    "details": s.details,
                    "resamples": s.resamples,
                    "seed": s.seed,
                    "truth_version": version,
                    "engine_version": s.engine_version,
                },
            )
            _metric_scores_store(score, s)
        current.status = Status.SCORED
        current.error = ""
        current.finished_at = timezone.now()
        current.save(update_fields=["status", "error", "finished_at", "updated_at"])
        task_ids = sorted({task.pk for task, _, _ in results})
        if rebuild:
            transaction.on_commit(lambda: _after_scoring(task_ids))
        _notify_on_commit(submission_id)  # after the rebuild: an eager one has released Ladder values
    logger.info("submission %s scored on tasks %s", submission_id, task_ids)
    return task_ids


def _metric_scores_store(score: Score, s: engine.SplitScore) -> None:
    """A score's secondary metrics, replacing those of an earlier scoring (a re-score)."""
    MetricScore.objects.filter(score=score).delete()
    MetricScore.objects.bulk_create(
        MetricScore(
            score=score,
            metric=name,
            value=result.value,
            item_statistics=None
            if result.item_statistics is None
            else result.item_statistics.astype("<f8").tobytes(),
            item_statistics_shape=None
            if result.item_statistics is None
            else list(result.item_statistics.shape),
        )
        for name, result in (s.metrics or {}).items()
    )


def _after_scoring(task_ids: list[int]) -> None:
    boards_rebuild()(task_ids=task_ids)
    for job in RescoreJob.objects.filter(task_id__in=task_ids, state=RescoreJob.State.RUNNING):
        rescore_job_refresh(job=job)


def _notify_on_commit(submission_id: int) -> None:
    """Tell the team (``notifications``, through ``challenges.ports.notices``) once the outcome is committed;
    ``robust``: a notice that cannot be made never undoes or fails the scoring. Idempotent there."""
    transaction.on_commit(lambda: notices().submission_finished(submission_id=submission_id), robust=True)


def submission_fail(*, submission_id: int, message: str = SCORER_CRASHED) -> None:
    """End a submission as failed for a platform fault: the team is not charged."""
    failed = Submission.objects.filter(pk=submission_id, status__in=[Status.QUEUED, Status.RUNNING]).update(
        status=Status.FAILED, error=message, charged=False, finished_at=timezone.now()
    )
    if failed:
        _notify_on_commit(submission_id)


def broker_started_at() -> datetime | None:
    """When the broker (Redis) last started, at the latest, or None if unknown (not Redis, or unreachable).

    A Redis restarted without persistence has lost every message sent before it started. Redis counts its
    uptime in whole seconds of a clock it caches, so the start is known to about 2 s: the later bound is
    returned, and a message sent in those 2 s after a restart is sent again (a harmless duplicate: the
    claim is conditional) rather than left behind.
    """
    url = str(current_app.conf.broker_url or "")
    if not url.startswith(("redis://", "rediss://")):
        return None
    import redis

    try:
        info = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1).info("server")
    except redis.RedisError:
        return None
    return timezone.now() - timedelta(seconds=int(info["uptime_in_seconds"]) - 2)


def submissions_requeue_stuck(
    *, running_for: int = 900, undispatched_for: float = 10, dispatched_for: int = 3600
) -> list[int]:
    """The sweeper: re-send submissions whose worker's lease expired, queued ones the broker never got,
    queued ones sent before the broker (re)started (a Redis restarted without persistence lost them), and
    queued ones still waiting an hour after they were sent.

    A running submission's lease (``lease_expires_at``) is renewed by the process scoring it; once it has
    passed, that process is gone. Rows without a lease (running before leases existed) fall back to
    ``running_for``. A re-sent submission's clock (``lease_expires_at``, ``started_at``, ``dispatched_at``)
    restarts, so it is not sent again at every sweep while its message waits in a busy queue: duplicates
    claimed at once by several workers would count as interrupted attempts and trip the poison guard.
    """
    now = timezone.now()
    lost = Q(status=Status.QUEUED, dispatched_at__lt=now - timedelta(seconds=dispatched_for))
    started = broker_started_at()
    if started is not None:
        lost |= Q(status=Status.QUEUED, dispatched_at__lt=started)
    stuck = Submission.objects.filter(
        Q(status=Status.RUNNING, lease_expires_at__lt=now)
        | Q(
            status=Status.RUNNING,
            lease_expires_at__isnull=True,
            started_at__lt=now - timedelta(seconds=running_for),
        )
        | Q(
            status=Status.QUEUED,
            dispatched_at__isnull=True,
            created_at__lt=now - timedelta(seconds=undispatched_for),
        )
        | lost
    )
    # A fanned-out submission's chunks are watched by fanout.fanout_resend_stuck instead.
    stuck_ids = stuck.exclude(fanout_jobs__state="running").values_list("pk", flat=True)
    sent = []
    for pk in stuck_ids:
        if submission_dispatch(submission_id=pk):
            sent.append(pk)
            again = timezone.now()
            # Not before the broker's (upper-bound) start: a re-send is not taken for a lost message.
            Submission.objects.filter(pk=pk, status=Status.QUEUED).update(
                dispatched_at=max(again, started) if started is not None else again
            )
            Submission.objects.filter(pk=pk, status=Status.RUNNING).filter(
                Q(lease_expires_at__lt=now) | Q(lease_expires_at__isnull=True)
            ).update(started_at=again, lease_expires_at=again + timedelta(seconds=settings.LEASE_SECONDS))
    if sent:
        logger.warning("sweeper re-sent submissions %s", sent)
    return sent


@transaction.atomic
def task_rescore(*, task: Task, user: User | None) -> RescoreJob:
    """Re-score every scored submission of a task (after its labels were fixed), in blocks of
    ``settings.RESCORE_BLOCK`` submissions, one Celery task each, and rebuild its boards once at the end
    (``leaderboard.scoring.rescore``). Old snapshots stay."""
    from leaderboard.scoring import rescore

    return rescore.job_start(task=task, user=user)


def rescore_job_refresh(*, job: RescoreJob) -> RescoreJob:
    """The job's progress; a job sent in blocks counts in the database as its blocks end (``rescore``),
    one sent per submission (before blocks) is counted from its scores."""
    if job.block_total:
        from leaderboard.scoring import rescore

        return rescore.job_refresh(job=job)
    done = (
        Score.objects.filter(
            task=job.task, truth_version=job.task.truth_version, scored_at__gte=job.created_at
        )
        .values("submission")
        .distinct()
        .count()
    )
    pending = Submission.objects.filter(
        files__task=job.task, status__in=[Status.QUEUED, Status.RUNNING]
    ).exists()
    RescoreJob.objects.filter(pk=job.pk).update(done=min(done, job.total))
    if not pending:
        RescoreJob.objects.filter(pk=job.pk, state=RescoreJob.State.RUNNING).update(
            state=RescoreJob.State.DONE, finished_at=timezone.now(), done=job.total
        )
    job.refresh_from_db()
    return job
