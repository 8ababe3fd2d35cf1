"""Writes of submissions: validate, charge against the limits, store, dispatch on commit."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import IO

from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from leaderboard.accounts.models import User
from leaderboard.challenges.models import Challenge, EntrySelection, Team, upload_max_bytes
from leaderboard.challenges.selectors import user_is_organizer
from leaderboard.challenges.services import team_for_user
from leaderboard.core.exceptions import (
    ApplicationError,
    ConflictError,
    LimitReachedError,
    PermissionDeniedError,
)
from leaderboard.scoring import engine
from leaderboard.submissions.models import Status, Submission, SubmissionFile

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Upload:
    """One uploaded predictions file: its name as the participant called it, and its bytes or a stream."""

    name: str
    size: int
    stream: IO[bytes]


def _file_format(upload: Upload, data: bytes) -> str:
    """The stored file's format (its extension in storage), from its first bytes; the parsers decide."""
    lower = upload.name.lower()
    if data.startswith(b"PAR1") or lower.endswith((".parquet", ".pq")):
        return SubmissionFile.Format.PARQUET
    if data.startswith(b"PK\x03\x04"):
        return SubmissionFile.Format.ZIP
    if data.startswith(b"\x1f\x8b"):
        return SubmissionFile.Format.GZIP
    if data[257:262] == b"ustar":
        return SubmissionFile.Format.TAR
    if data.lstrip()[:1] in (b"[", b"{"):
        return SubmissionFile.Format.JSON
    return SubmissionFile.Format.CSV


def submission_create(
    *,
    challenge: Challenge,
    user: User,
    name: str,
    files: Mapping[str, Sequence[Upload]],
    description: str = "",
    link: str = "",
    is_baseline: bool = False,
) -> Submission:
    """Validate every file against its task's public item list, then store and dispatch, or store nothing.

    ``files`` maps a task slug to the files of that task (one per run). A rejected submission raises
    :class:`ApplicationError` with the file, line and column, stores nothing and is not charged.
    """
    organizer = user_is_organizer(challenge=challenge, user=user)
    if not organizer and not challenge.is_open:
        raise ConflictError("This challenge is not open for submissions.")
    if is_baseline and not organizer:
        raise PermissionDeniedError("Only organizers may submit baselines.")
    name = name.strip()
    if not name:
        raise ApplicationError("A submission needs a name.", extra={"field": "name"})
    if not files:
        raise ApplicationError("A submission needs at least one predictions file.", extra={"field": "files"})
    tasks = {t.slug: t for t in challenge.tasks.all()}
    unknown = sorted(set(files) - set(tasks))
    if unknown:
        raise ApplicationError(
            f"Challenge '{challenge.slug}' has no task {', '.join(repr(u) for u in unknown)}; "
            f"its tasks are {', '.join(sorted(tasks))}.",
            extra={"field": "task"},
        )

    # 1. Validate every file (the expensive part, outside any lock). Nothing is stored yet.
    validated: list[tuple[str, int, Upload, bytes, str]] = []
    for slug, uploads in files.items():
        if not uploads:
            raise ApplicationError(f"No file for task '{slug}'.", extra={"field": "files", "task": slug})
        limit = upload_max_bytes(tasks[slug].kind)
        for run, upload in enumerate(uploads):
            if upload.size > limit:
                raise ApplicationError(
                    f"{upload.name}: the file is {upload.size:,} bytes; the limit is {limit:,} bytes.",
                    extra={"file": upload.name},
                )
            data = upload.stream.read(limit + 1)
            if len(data) > limit:
                raise ApplicationError(
                    f"{upload.name}: the file is larger than the limit of {limit:,} bytes.",
                    extra={"file": upload.name},
                )
            fmt = _file_format(upload, data[:512])
            engine.validate_predictions(data, name=upload.name, task=tasks[slug], file_format=fmt)
            validated.append((slug, run, upload, data, fmt))

    # 2. Charge and store in one transaction, with the team row locked so limits hold under concurrency.
    with transaction.atomic():
        team = team_for_user(challenge=challenge, user=user)
        team = Team.objects.select_for_update().get(pk=team.pk)
        if not organizer:
            _check_limits(challenge=challenge, team=team)
        submission = Submission.objects.create(
            challenge=challenge,
            team=team,
            submitted_by=user,
            name=name[:120],
            description=description,
            link=link,
            is_baseline=is_baseline or team.is_baseline,
            status=Status.QUEUED,
            charged=not organizer,
        )
        for slug, run, upload, data, fmt in validated:
            record = SubmissionFile(
                submission=submission,
                task=tasks[slug],
                run=run,
                original_name=upload.name[:255],
                format=fmt,
                size=len(data),
                sha256=hashlib.sha256(data).hexdigest(),
            )
            record.file.save(f"{slug}-{run}.{fmt}", ContentFile(data), save=False)
            record.save()
        submission_id = submission.pk
        transaction.on_commit(lambda: submission_dispatch(submission_id=submission_id))
    logger.info("submission %s stored for team %s in challenge %s", submission_id, team.pk, challenge.slug)
    return submission


def _check_limits(*, challenge: Challenge, team: Team) -> None:
    charged = Submission.objects.filter(team=team, charged=True)
    total = charged.count()
    if total >= challenge.total_limit:
        raise LimitReachedError(
            f"Your team has used all {challenge.total_limit} submissions of this challenge.",
            extra={"limit": "total", "used": total},
        )
    since = timezone.now() - timedelta(days=1)
    today = charged.filter(created_at__gte=since).count()
    if today >= challenge.daily_limit:
        raise LimitReachedError(
            f"Your team has used its {challenge.daily_limit} submissions of the last 24 hours; try again later.",
            extra={"limit": "daily", "used": today},
        )


def submission_dispatch(*, submission_id: int) -> bool:
    """Send the scoring task to the broker. If the broker is down the submission stays queued with no
    ``dispatched_at``, and the sweeper sends it once the broker is back (an outbox, in effect)."""
    from leaderboard.scoring.tasks import score_submission

    try:
        score_submission.apply_async(args=[submission_id])
    except Exception:  # kombu/redis raise many types when the broker is unreachable
        logger.warning("broker unreachable; submission %s left for the sweeper", submission_id, exc_info=True)
        return False
    Submission.objects.filter(pk=submission_id, dispatched_at__isnull=True).update(
        dispatched_at=timezone.now()
    )
    return True


@transaction.atomic
def submission_cancel(*, submission: Submission, user: User) -> Submission:
    """Cancel a queued submission; it is no longer charged against the team's limits."""
    if not submission.team.members.filter(pk=user.pk).exists() and not user_is_organizer(
        challenge=submission.challenge, user=user
    ):
        raise PermissionDeniedError("Only the team that made a submission may cancel it.")
    updated = Submission.objects.filter(pk=submission.pk, status=Status.QUEUED).update(
        status=Status.CANCELLED, charged=False, finished_at=timezone.now()
    )
    if not updated:
        raise ConflictError(f"Only queued submissions can be cancelled; this one is {submission.status}.")
    submission.refresh_from_db()
    return submission


@transaction.atomic
def submission_select(*, submission: Submission, user: User) -> Submission:
    """Choose this submission as the team's entry on the board (challenges with 'selected' entries)."""
    if submission.challenge.entry_selection != EntrySelection.SELECTED:
        raise ConflictError("In this challenge the board chooses entries itself; selection is off.")
    if not submission.team.members.filter(pk=user.pk).exists():
        raise PermissionDeniedError("Only the team that made a submission may select it.")
    if submission.status != Status.SCORED:
        raise ConflictError("Only scored submissions can be selected.")
    Submission.objects.filter(team=submission.team).exclude(pk=submission.pk).update(selected=False)
    submission.selected = True
    submission.save(update_fields=["selected", "updated_at"])
    transaction.on_commit(lambda: _rebuild_boards_of(submission))
    return submission


def _rebuild_boards_of(submission: Submission) -> None:
    from leaderboard.rankings.services import boards_rebuild_dispatch

    boards_rebuild_dispatch(task_ids=list(submission.files.values_list("task_id", flat=True).distinct()))
