"""Celery tasks of scoring: ids in, one service call, idempotent, retried by the task."""

from __future__ import annotations

import logging
import socket
import traceback

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import InterfaceError, OperationalError

from leaderboard.scoring.fanout import chunk_fail, chunk_score, fanout_resend_stuck
from leaderboard.scoring.rescore import block_give_up, block_score
from leaderboard.scoring.services import (
    submission_fail,
    submission_lease_renewed,
    submission_score,
    submissions_requeue_stuck,
)

logger = logging.getLogger(__name__)

# Platform faults: the database went away. Retried with backoff; never charged to the team.
PLATFORM_FAULTS = (OperationalError, InterfaceError)


@shared_task(
    bind=True,
    name="leaderboard.scoring.tasks.score_submission",
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=5,
)
def score_submission(self, submission_id: int) -> list[int]:
    try:
        if self.request.is_eager:  # in-process (the embedded default): no other process to take over
            return submission_score(submission_id=submission_id)
        with submission_lease_renewed(submission_id=submission_id):
            return submission_score(submission_id=submission_id)
    except PLATFORM_FAULTS as exc:
        if self.request.retries >= self.max_retries:
            logger.exception("submission %s: database unreachable after retries", submission_id)
            submission_fail(submission_id=submission_id)
            return []
        logger.warning("submission %s: database fault, retrying (%s)", submission_id, type(exc).__name__)
        raise self.retry(exc=exc, countdown=min(2**self.request.retries, 30)) from exc
    except SoftTimeLimitExceeded:
        logger.error("submission %s: scoring exceeded its time limit", submission_id)
        submission_fail(
            submission_id=submission_id,
            message="Scoring took longer than the time limit; it was not counted against your team.",
        )
        return []
    except MemoryError:
        logger.error("submission %s: scoring ran out of memory", submission_id)
        submission_fail(submission_id=submission_id)
        return []
    except Exception as exc:
        # A bug in the scorer. The log gets the exception type and the frames (file, line, function) but
        # not the exception's message, which could quote a hidden label; the participant a plain message.
        frames = "".join(traceback.format_tb(exc.__traceback__))
        logger.error(
            "submission %s: the scorer crashed with %s\n%s", submission_id, type(exc).__name__, frames
        )
        submission_fail(submission_id=submission_id)
        return []


@shared_task(
    bind=True,
    name="leaderboard.scoring.tasks.score_chunk",
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=5,
)
def score_chunk(self, chunk_id: int) -> list[int]:
    """One chunk of a fanned-out scoring (leaderboard.scoring.fanout); the faults as ``score_submission``."""
    worker = self.request.hostname or socket.gethostname()
    try:
        return chunk_score(chunk_id=chunk_id, worker=worker, renew=not self.request.is_eager)
    except PLATFORM_FAULTS as exc:
        if self.request.retries >= self.max_retries:
            logger.exception("chunk %s: database unreachable after retries", chunk_id)
            chunk_fail(chunk_id=chunk_id)
            return []
        logger.warning("chunk %s: database fault, retrying (%s)", chunk_id, type(exc).__name__)
        raise self.retry(exc=exc, countdown=min(2**self.request.retries, 30)) from exc
    except SoftTimeLimitExceeded:
        logger.error("chunk %s: scoring exceeded its time limit", chunk_id)
        chunk_fail(
            chunk_id=chunk_id,
            message="Scoring took longer than the time limit; it was not counted against your team.",
        )
        return []
    except MemoryError:
        logger.error("chunk %s: scoring ran out of memory", chunk_id)
        chunk_fail(chunk_id=chunk_id)
        return []
    except Exception as exc:  # a bug in the scorer: frames in the log, never the message (labels)
        frames = "".join(traceback.format_tb(exc.__traceback__))
        logger.error("chunk %s: the scorer crashed with %s\n%s", chunk_id, type(exc).__name__, frames)
        chunk_fail(chunk_id=chunk_id)
        return []


@shared_task(
    bind=True,
    name="leaderboard.scoring.tasks.score_rescore_block",
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=5,
    # a block scores up to RESCORE_BLOCK submissions: each gets a scoring task's time
    soft_time_limit=settings.CELERY_TASK_SOFT_TIME_LIMIT * max(1, settings.RESCORE_BLOCK),
    time_limit=settings.CELERY_TASK_TIME_LIMIT * max(1, settings.RESCORE_BLOCK),
)
def score_rescore_block(self, block_id: int) -> list[int]:
    """One block of a re-score (leaderboard.scoring.rescore): idempotent, retried on database faults; the
    scorer's own faults fail the one submission, as ``score_submission`` does."""
    try:
        return block_score(block_id=block_id, renew=not self.request.is_eager)
    except PLATFORM_FAULTS as exc:
        if self.request.retries >= self.max_retries:
            logger.exception("re-score block %s: database unreachable after retries", block_id)
            block_give_up(block_id=block_id)
            return []
        logger.warning("re-score block %s: database fault, retrying (%s)", block_id, type(exc).__name__)
        raise self.retry(exc=exc, countdown=min(2**self.request.retries, 30)) from exc


@shared_task(name="leaderboard.scoring.tasks.sweep_stuck_submissions", acks_late=True)
def sweep_stuck_submissions() -> list[int]:
    """The sweeper: submissions to re-send, then the chunks of fanned-out scorings (their ids)."""
    return submissions_requeue_stuck() + fanout_resend_stuck()
