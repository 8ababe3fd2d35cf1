"""Writes of submissions: validate, charge against the limits, store, and hand to scoring on commit
(``leaderboard.scoring.services.submission_dispatch``, through ``submissions.ports``: scoring sits above
submissions in the app graph and registers it)."""

from __future__ import annotations

import hashlib
import hmac
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.utils import timezone

from leaderboard.accounts.models import User
from leaderboard.challenges import ports as challenge_ports
from leaderboard.challenges.models import Challenge, EntrySelection, Task, Team
from leaderboard.challenges.ports import task_kind_registry
from leaderboard.challenges.selectors import user_is_organizer
from leaderboard.challenges.services import NOT_APPROVED, participant_may_submit, team_for_user
from leaderboard.core.exceptions import (
    ApplicationError,
    ConflictError,
    LimitReachedError,
    PermissionDeniedError,
    UnprocessableError,
)
from leaderboard.core.uploads import upload_read
from leaderboard.submissions import ports
from leaderboard.submissions.models import (
    DESCRIPTION_MAX_CHARS,
    LINK_MAX_CHARS,
    Status,
    Submission,
    SubmissionFile,
)
from leaderboard.submissions.selectors import (
    Quota,
    address_quota,
    submission_of_team_member,
    submission_visible,
    team_quota,
    wait_text,
)

logger = logging.getLogger(__name__)

TOO_MANY_RUNS = (
    "Task '{task}' takes at most {limit} runs (files) per submission; this submission has {n}. "
    "Send fewer runs, or ask the organizers to raise the task's limit."
)
DESCRIPTION_TOO_LONG = "The description is {n:,} characters; the limit is {limit:,}."


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


#: One checked file: task slug, run, the upload, its bytes and the stored format.
Checked = tuple[str, int, Upload, bytes, str]


def submission_create(
    *,
    challenge: Challenge,
    user: User,
    name: str,
    files: Mapping[str, Sequence[Upload]],
    description: str = "",
    link: str = "",
    is_baseline: bool = False,
    idempotency_key: str = "",
    client_address: str = "",
) -> Submission:
    """Validate every file against its task's public item list, then store and dispatch, or store nothing.

    ``files`` maps a task slug to the files of that task (one per run). A rejected submission raises
    :class:`ApplicationError` with the file, line and column, stores nothing and is not charged.

    With an ``idempotency_key`` (the client's, per user), a retried upload whose first answer was lost
    returns the submission stored the first time (``replayed`` set on it), neither stored nor charged
    again; the same key with other files or another name is refused (422).

    Three steps (Zulip's ``check_`` / ``do_`` split): check the request and every file, outside any lock
    (the expensive part); then, in one transaction with the team row locked so limits hold under
    concurrency, charge and store; scoring gets the submission once that transaction commits.
    """
    organizer = user_is_organizer(challenge=challenge, user=user)
    name = _check_request(
        challenge=challenge, user=user, organizer=organizer, name=name, description=description,
        link=link, is_baseline=is_baseline, idempotency_key=idempotency_key,
    )  # fmt: skip
    tasks = _check_tasks(challenge=challenge, files=files)
    checked = _check_files(files=files, tasks=tasks)
    digest = _request_digest(name, checked) if idempotency_key else ""
    client_key = client_key_of(client_address)
    with transaction.atomic():
        team = Team.objects.select_for_update().get(pk=team_for_user(challenge=challenge, user=user).pk)
        # A retry of an upload that used the last slot is no new one: look for it before the limits.
        replay = (
            _idempotent_replay(user=user, key=idempotency_key, digest=digest) if idempotency_key else None
        )
        if replay is not None:
            return replay
        if not organizer:
            _check_limits(challenge=challenge, team=team)
            _check_address_limits(challenge=challenge, client_key=client_key)
        submission, replayed = _store(
            challenge=challenge, team=team, user=user, name=name, description=description, link=link,
            is_baseline=is_baseline, organizer=organizer, idempotency_key=idempotency_key, digest=digest,
            tasks=tasks, checked=checked, client_key=client_key,
        )  # fmt: skip
        if replayed:
            return submission
        submission_id = submission.pk
        transaction.on_commit(lambda: ports.submission_dispatch()(submission_id=submission_id))
    logger.info("submission %s stored for team %s in challenge %s", submission_id, team.pk, challenge.slug)
    return submission


def _check_request(
    *,
    challenge: Challenge,
    user: User,
    organizer: bool,
    name: str,
    description: str,
    link: str,
    is_baseline: bool,
    idempotency_key: str,
) -> str:
    """Refuse what no file could fix (closed, not approved, bad name or texts); the stripped name."""
    if len(idempotency_key) > IDEMPOTENCY_KEY_MAX or not idempotency_key.isprintable():
        raise ApplicationError(IDEMPOTENCY_KEY_INVALID, extra={"field": "Idempotency-Key"})
    if not organizer and not challenge.is_open:
        raise ConflictError("This challenge is not open for submissions.")
    if is_baseline and not organizer:
        raise PermissionDeniedError("Only organizers may submit baselines.")
    if not organizer and not participant_may_submit(challenge=challenge, user=user):
        raise PermissionDeniedError(NOT_APPROVED, extra={"approval": "required"})
    name = name.strip()
    if not name:
        raise ApplicationError("A submission needs a name.", extra={"field": "name"})
    if len(description) > DESCRIPTION_MAX_CHARS:
        raise ApplicationError(
            DESCRIPTION_TOO_LONG.format(n=len(description), limit=DESCRIPTION_MAX_CHARS),
            extra={"field": "description", "limit": DESCRIPTION_MAX_CHARS},
        )
    if len(link) > LINK_MAX_CHARS:
        raise ApplicationError(
            f"The link is {len(link):,} characters; the limit is {LINK_MAX_CHARS}.",
            extra={"field": "link", "limit": LINK_MAX_CHARS},
        )
    return name


def _check_tasks(*, challenge: Challenge, files: Mapping[str, Sequence[Upload]]) -> dict[str, Task]:
    """The challenge's tasks by slug, once every named task exists and its runs are within its limit."""
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
    for slug, uploads in files.items():
        # Each run's value is a probe of the hidden labels: a task bounds the runs of one submission.
        if len(uploads) > tasks[slug].max_runs:
            raise ApplicationError(
                TOO_MANY_RUNS.format(task=slug, limit=tasks[slug].max_runs, n=len(uploads)),
                extra={"field": "files", "task": slug, "limit": tasks[slug].max_runs, "runs": len(uploads)},
            )
    return tasks


def _check_files(*, files: Mapping[str, Sequence[Upload]], tasks: dict[str, Task]) -> list[Checked]:
    """Read and check every file against its task's public item list (scoring's readers); store nothing."""
    checked: list[Checked] = []
    for slug, uploads in files.items():
        if not uploads:
            raise ApplicationError(f"No file for task '{slug}'.", extra={"field": "files", "task": slug})
        for run, upload in enumerate(uploads):
            kind = task_kind_registry().of_task(tasks[slug])
            data = upload_read(upload, limit=kind.upload_max_bytes(), stream=upload.stream)
            fmt = _file_format(upload, data[:512])
            kind.validate_predictions(data, name=upload.name, task=tasks[slug])
            checked.append((slug, run, upload, data, fmt))
    return checked


def _store(
    *,
    challenge: Challenge,
    team: Team,
    user: User,
    name: str,
    description: str,
    link: str,
    is_baseline: bool,
    organizer: bool,
    idempotency_key: str,
    digest: str,
    tasks: dict[str, Task],
    checked: list[Checked],
    client_key: str,
) -> tuple[Submission, bool]:
    """The submission row and its files (inside the caller's transaction, the team row locked), or the
    one a parallel request with the same idempotency key stored first (then ``True``)."""
    try:
        with transaction.atomic():  # a savepoint: the key's unique constraint may refuse the row
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
                idempotency_key=idempotency_key,
                request_digest=digest,
                client_key=client_key,
            )
    except IntegrityError:  # a parallel request with this key (another team's lock) committed first
        replay = (
            _idempotent_replay(user=user, key=idempotency_key, digest=digest) if idempotency_key else None
        )
        if replay is None:
            raise
        return replay, True
    for slug, run, upload, data, fmt in checked:
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
    return submission, False


#: Keys are the client's (a UUID, say): printable, at most this long.
IDEMPOTENCY_KEY_MAX = 255
IDEMPOTENCY_KEY_INVALID = (
    f"The Idempotency-Key must be printable text of at most {IDEMPOTENCY_KEY_MAX} characters."
)
IDEMPOTENCY_KEY_REUSED = (
    "This Idempotency-Key was used for another upload (submission {id}, with other files or another name). "
    "Use a new key for a new upload; retry an upload with the key it was first sent with."
)


def _request_digest(name: str, validated: Sequence[Checked]) -> str:
    """What was uploaded, to tell a retry of an upload from another upload under the same key."""
    h = hashlib.sha256(name.encode())
    for slug, run, _upload, data, _fmt in sorted(validated, key=lambda v: (v[0], v[1])):
        h.update(f"\0{slug}\0{run}\0".encode())
        h.update(hashlib.sha256(data).digest())
    return h.hexdigest()


def _idempotent_replay(*, user: User, key: str, digest: str) -> Submission | None:
    """The submission stored earlier under this key (the same upload), or None; 422 for another upload."""
    earlier = Submission.objects.filter(submitted_by=user, idempotency_key=key).first()
    if earlier is None:
        return None
    if earlier.request_digest != digest:
        raise UnprocessableError(
            IDEMPOTENCY_KEY_REUSED.format(id=earlier.pk),
            extra={"submission": earlier.pk, "field": "Idempotency-Key"},
        )
    earlier.replayed = True  # type: ignore[attr-defined]
    logger.info("submission %s returned again for its idempotency key", earlier.pk)
    return earlier


def _check_limits(*, challenge: Challenge, team: Team) -> None:
    quota = team_quota(challenge=challenge, team=team)
    if quota.total_used_up:
        raise LimitReachedError(
            f"Your team has used all {challenge.total_limit} submissions of this challenge.",
            extra={"limit": "total", "used": quota.used_total},
        )
    if quota.daily_used_up:
        when = f"; the next slot opens {wait_text(quota.next_slot_at)}" if quota.next_slot_at else ""
        raise LimitReachedError(
            f"Your team has used its {challenge.daily_limit} submissions of the last 24 hours{when}.",
            extra={
                "limit": "daily",
                "used": quota.used_today,
                **({"next_slot_at": quota.next_slot_at.isoformat()} if quota.next_slot_at else {}),
            },
        )


ADDRESS_TOTAL_USED = (
    "The teams submitting from your network address have used all {limit} submissions of this challenge: "
    "it counts one team's quota per address, so that new accounts do not multiply what the board tells "
    "about the hidden labels. If several real teams share your address, ask the organizers to turn "
    "approval on and this limit off."
)
ADDRESS_DAILY_USED = (
    "The teams submitting from your network address have used its {limit} submissions of the last 24 "
    "hours{when}: this challenge counts one team's quota per address. If several real teams share your "
    "address, ask the organizers to turn approval on and this limit off."
)


def client_key_of(address: str) -> str:
    """A keyed hash of a client's network address (HMAC with the secret key): equal addresses give equal
    keys, and the stored key does not give the address back. Empty for an unknown address."""
    if not address:
        return ""
    return hmac.new(settings.SECRET_KEY.encode(), address.encode(), hashlib.sha256).hexdigest()[:32]


def _check_address_limits(*, challenge: Challenge, client_key: str) -> None:
    """Refuse an upload once the teams that send from this address have used one team's quota (a
    challenge with ``quota_per_address``), with the same ``extra`` as a team's limit plus its scope."""
    if not challenge.quota_per_address or not client_key:
        return
    # Teams are locked one by one; the challenge row serialises the uploads of different teams from one
    # address, so two at once cannot both take the address's last slot.
    Challenge.objects.select_for_update().filter(pk=challenge.pk).first()
    quota: Quota | None = address_quota(challenge=challenge, client_key=client_key)
    if quota is None:
        return
    if quota.total_used_up:
        raise LimitReachedError(
            ADDRESS_TOTAL_USED.format(limit=challenge.total_limit),
            extra={"limit": "total", "scope": "address", "used": quota.used_total},
        )
    if quota.daily_used_up:
        when = f"; the next slot opens {wait_text(quota.next_slot_at)}" if quota.next_slot_at else ""
        raise LimitReachedError(
            ADDRESS_DAILY_USED.format(limit=challenge.daily_limit, when=when),
            extra={
                "limit": "daily",
                "scope": "address",
                "used": quota.used_today,
                **({"next_slot_at": quota.next_slot_at.isoformat()} if quota.next_slot_at else {}),
            },
        )


@transaction.atomic
def submission_cancel(*, submission: Submission, user: User) -> Submission:
    """Cancel a queued submission; it is no longer charged against the team's limits."""
    if not submission_visible(submission=submission, user=user):
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
    if not submission_of_team_member(submission=submission, user=user):
        raise PermissionDeniedError("Only the team that made a submission may select it.")
    if submission.status != Status.SCORED:
        raise ConflictError("Only scored submissions can be selected.")
    Submission.objects.filter(team=submission.team).exclude(pk=submission.pk).update(selected=False)
    submission.selected = True
    submission.save(update_fields=["selected", "updated_at"])
    transaction.on_commit(lambda: _rebuild_boards_of(submission))
    return submission


def _rebuild_boards_of(submission: Submission) -> None:
    challenge_ports.boards_rebuild()(
        task_ids=list(submission.files.values_list("task_id", flat=True).distinct())
    )
