"""Re-scoring a task by blocks of submissions (issue 14 point 3): one Celery task per block, one rebuild.

:func:`job_start` (``services.task_rescore``) splits the task's scored and failed submissions into blocks
of ``settings.RESCORE_BLOCK`` (in id order) and sends one ``score_rescore_block`` task per block once the
request commits. A block task (:func:`block_score`) scores its submissions one after the other in one
process (the task's resample weights come from the host's memory-mapped W cache file: drawn at most once,
then read from the page cache), and the scores it stores send no board rebuild. When a block ends it turns its row
done once (a conditional UPDATE) and adds itself and its submissions to the job's counters in the same
transaction (``block_done``, ``done``); the job is complete when none of its submissions is queued or
running any more (:func:`job_complete_if_finished`, under the job's row lock), and the transaction that
marks it done sends the rebuild of the boards of every task its submissions were scored on: one rebuild
per board for the whole re-score.

A block task is acknowledged late and rejected when its worker dies, so it comes back; it is idempotent:
a submission already scored (or cancelled) is skipped, and one that another live process is scoring
(running, its lease not expired) is left to it. A block whose submissions the sweeper re-sent one by one
(their lease expired, a message was lost) ends with them: whichever process stores the last score of the
job completes it (``services._after_scoring`` calls :func:`job_refresh`). A large submission that fans out
(``scoring.fanout``) is joined by its chunk tasks, whose join rebuilds its boards as for any submission
and completes the job if it was the last.

The time limits of a block task are those of a scoring task times ``RESCORE_BLOCK``; a block whose time
runs out fails the submission it was scoring (uncharged, as a scoring task does) and sends the rest of
its submissions one by one.
"""

from __future__ import annotations

import logging
import traceback
from contextlib import nullcontext

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import InterfaceError, OperationalError, transaction
from django.db.models import F, Q
from django.db.models.functions import Least
from django.utils import timezone

from leaderboard.accounts.models import User
from leaderboard.challenges.models import Task
from leaderboard.challenges.ports import boards_rebuild
from leaderboard.scoring.models import RescoreBlock, RescoreJob
from leaderboard.submissions.models import Status, Submission, SubmissionFile

logger = logging.getLogger(__name__)

#: Platform faults: the block task is retried (it is idempotent).
PLATFORM_FAULTS = (OperationalError, InterfaceError)

TIME_LIMIT_MESSAGE = "Scoring took longer than the time limit; it was not counted against your team."


def block_size() -> int:
    return max(1, int(settings.RESCORE_BLOCK))


def job_start(*, task: Task, user: User | None) -> RescoreJob:
    """Queue every scored or failed submission of ``task`` again, in blocks; call inside a transaction."""
    ids = sorted(
        Submission.objects.filter(files__task=task, status__in=[Status.SCORED, Status.FAILED])
        .values_list("pk", flat=True)
        .distinct()
    )
    size = block_size()
    chunks = [ids[i : i + size] for i in range(0, len(ids), size)]
    job = RescoreJob.objects.create(task=task, requested_by=user, total=len(ids), block_total=len(chunks))
    Submission.objects.filter(pk__in=ids).update(
        status=Status.QUEUED, dispatched_at=None, error="", attempts=0
    )
    blocks = RescoreBlock.objects.bulk_create(
        [RescoreBlock(job=job, index=i, submission_ids=chunk) for i, chunk in enumerate(chunks)]
    )
    for block in blocks:
        transaction.on_commit(lambda block=block: block_dispatch(block=block))  # type: ignore[misc]
    if not ids:
        job.state = RescoreJob.State.DONE
        job.finished_at = timezone.now()
        job.save()
    logger.info("re-score %s of task %s: %s submissions in %s blocks", job.pk, task.pk, len(ids), len(chunks))
    return job


def block_dispatch(*, block: RescoreBlock) -> bool:
    """Send a block's task. If the broker is down its submissions keep no ``dispatched_at``, so the sweeper
    sends them one by one (``services.submissions_requeue_stuck``)."""
    from leaderboard.scoring.tasks import score_rescore_block

    try:
        score_rescore_block.apply_async(args=[block.pk])
    except Exception:  # kombu/redis raise many types when the broker is unreachable
        logger.warning("broker unreachable; re-score block %s left to the sweeper", block.pk, exc_info=True)
        return False
    Submission.objects.filter(
        pk__in=block.submission_ids, status=Status.QUEUED, dispatched_at__isnull=True
    ).update(dispatched_at=timezone.now())
    return True


def _to_score(submission_id: int) -> bool:
    """Queued, or running without a live scorer (its lease expired: the process died)."""
    now = timezone.now()
    return Submission.objects.filter(
        Q(status=Status.QUEUED)
        | Q(status=Status.RUNNING, lease_expires_at__lt=now)
        | Q(status=Status.RUNNING, lease_expires_at__isnull=True),
        pk=submission_id,
    ).exists()


def block_score(*, block_id: int, renew: bool) -> list[int]:
    """Score a block's submissions in this process; the ids of the submissions scored by this call."""
    from leaderboard.scoring import services

    block = RescoreBlock.objects.filter(pk=block_id).first()
    if block is None:
        return []
    if block.state == RescoreBlock.State.DONE:  # a duplicate message
        job_complete_if_finished(job_id=block.job_id)
        return []
    RescoreBlock.objects.filter(pk=block_id).update(attempts=F("attempts") + 1)
    scored: list[int] = []
    ids = list(block.submission_ids)
    for k, sid in enumerate(ids):
        if not _to_score(sid):
            continue  # scored already (a block that came back), cancelled, or scored by a live process
        lease = services.submission_lease_renewed(submission_id=sid) if renew else nullcontext()
        try:
            with lease:
                if services.submission_score(submission_id=sid, rebuild=False):
                    scored.append(sid)
        except PLATFORM_FAULTS:
            raise  # the task retries the block
        except SoftTimeLimitExceeded:
            logger.error("re-score block %s: submission %s exceeded the time limit", block_id, sid)
            services.submission_fail(submission_id=sid, message=TIME_LIMIT_MESSAGE)
            for rest in ids[k + 1 :]:  # out of time: the others go one by one
                if _to_score(rest):
                    services.submission_dispatch(submission_id=rest)
            break
        except MemoryError:
            logger.error("re-score block %s: submission %s ran out of memory", block_id, sid)
            services.submission_fail(submission_id=sid)
        except Exception as exc:  # a bug in the scorer: frames in the log, never the message (labels)
            frames = "".join(traceback.format_tb(exc.__traceback__))
            logger.error(
                "re-score block %s: submission %s crashed the scorer with %s\n%s",
                block_id,
                sid,
                type(exc).__name__,
                frames,
            )
            services.submission_fail(submission_id=sid)
    with transaction.atomic():
        if RescoreBlock.objects.filter(pk=block_id, state=RescoreBlock.State.RUNNING).update(
            state=RescoreBlock.State.DONE, finished_at=timezone.now()
        ):
            RescoreJob.objects.filter(pk=block.job_id).update(
                block_done=F("block_done") + 1, done=Least(F("done") + len(ids), F("total"))
            )
    job_complete_if_finished(job_id=block.job_id)
    logger.info("re-score block %s: %s of %s submissions scored here", block_id, len(scored), len(ids))
    return scored


def block_give_up(*, block_id: int) -> None:
    """A block whose retries are spent: its queued submissions go to the sweeper, one by one."""
    block = RescoreBlock.objects.filter(pk=block_id).first()
    if block is not None:
        Submission.objects.filter(pk__in=block.submission_ids, status=Status.QUEUED).update(
            dispatched_at=None
        )


def _job_submissions(job: RescoreJob) -> list[int]:
    return [sid for ids in job.blocks.values_list("submission_ids", flat=True) for sid in ids]


def job_complete_if_finished(*, job_id: int) -> bool:
    """Mark a job done once none of its submissions is queued or running, and rebuild its boards once."""
    with transaction.atomic():
        job = RescoreJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.state != RescoreJob.State.RUNNING:
            return False
        ids = _job_submissions(job)
        if Submission.objects.filter(pk__in=ids, status__in=[Status.QUEUED, Status.RUNNING]).exists():
            return False
        job.state = RescoreJob.State.DONE
        job.finished_at = timezone.now()
        job.done = job.total
        job.save(update_fields=["state", "finished_at", "done"])
        task_ids = sorted(
            set(SubmissionFile.objects.filter(submission_id__in=ids).values_list("task_id", flat=True))
            | {job.task_id}
        )
        transaction.on_commit(lambda: boards_rebuild()(task_ids=task_ids))
    logger.info("re-score %s done: boards of tasks %s rebuilt once", job_id, task_ids)
    return True


def job_refresh(*, job: RescoreJob) -> RescoreJob:
    """A block job as stored, completed first if its last submission was scored outside its blocks."""
    job_complete_if_finished(job_id=job.pk)
    job.refresh_from_db()
    return job


__all__ = [
    "block_dispatch",
    "block_give_up",
    "block_score",
    "job_complete_if_finished",
    "job_refresh",
    "job_start",
]
