"""Writes of challenges, tasks, hidden labels and teams."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from leaderboard.accounts.models import User
from leaderboard.challenges.models import (
    Challenge,
    Participant,
    PublicMode,
    Task,
    TaskTruth,
    Team,
    default_decimals,
)
from leaderboard.challenges.ports import notices, task_kind_registry
from leaderboard.challenges.selectors import require_organizer
from leaderboard.challenges.settings_spec import (
    CHALLENGE,
    CHALLENGE_SETTINGS_SPEC,
    LADDER_Z_DEFAULT,
    PUBLIC_MODE_FIELDS,
    RUNS_DEFAULT,
    SECONDARY_METRICS,
    STATISTICS_FIELDS,
    TASK,
    Setting,
    first_refusal,
)
from leaderboard.core.exceptions import ApplicationError, ConflictError, NotFoundError

#: The settings an organizer chooses, in form order (declared in settings_spec; the doors derive from it).
CHALLENGE_SETTINGS = tuple(setting.name for setting in CHALLENGE_SETTINGS_SPEC)
CHALLENGE_FIELDS = frozenset(CHALLENGE_SETTINGS)


def _check_settings(spec: dict[str, Setting], values: dict[str, Any]) -> None:
    """Refuse the first value outside its declared range, with the declaration's message (400)."""
    refused = first_refusal(spec, values)
    if refused is not None:
        name, message = refused
        raise ApplicationError(message, extra={"field": name})


@transaction.atomic
def challenge_create(*, organizer: User, slug: str, title: str, **fields: Any) -> Challenge:
    unknown = set(fields) - CHALLENGE_FIELDS
    if unknown:
        raise ApplicationError(f"Unknown challenge fields: {', '.join(sorted(unknown))}.")
    _check_settings(CHALLENGE, {"title": title, **fields})
    if Challenge.objects.filter(slug=slug).exists():
        raise ConflictError(f"A challenge with the slug '{slug}' exists already.")
    challenge = Challenge(slug=slug, title=title, **fields)
    _check_dates(challenge.start, challenge.end)
    challenge.full_clean(exclude=["organizers"])
    challenge.save()
    challenge.organizers.add(organizer)
    return challenge


@transaction.atomic
def challenge_update(*, challenge: Challenge, **fields: Any) -> Challenge:
    unknown = set(fields) - CHALLENGE_FIELDS
    if unknown:
        raise ApplicationError(f"Unknown challenge fields: {', '.join(sorted(unknown))}.")
    _check_settings(CHALLENGE, fields)
    changed_statistics = {k for k in STATISTICS_FIELDS & set(fields) if getattr(challenge, k) != fields[k]}
    if changed_statistics and challenge.submissions.exists():
        raise ConflictError(
            "The statistics settings cannot change once submissions exist "
            f"({', '.join(sorted(changed_statistics))}); create a new challenge instead."
        )
    for key, value in fields.items():
        setattr(challenge, key, value)
    _check_dates(challenge.start, challenge.end)
    challenge.full_clean(exclude=["organizers"])
    challenge.save()
    return challenge


def _check_dates(start: datetime | None, end: datetime | None) -> None:
    if start and end and end <= start:
        raise ApplicationError("The end of a challenge must come after its start.")


REVEAL_WHILE_OPEN = (
    "The challenge is still open{until}: after the reveal every new submission would show its team its "
    "private score, one exact reading of the private labels per submission. Close submissions now and "
    "reveal, or reveal while it stays open if that is what you want."
)


@transaction.atomic
def challenge_reveal_private(
    *, challenge: Challenge, close: bool = False, while_open: bool = False
) -> Challenge:
    """Reveal the private board (usually after the end).

    While the challenge is open this is refused (``ConflictError``) unless the organizer chose: ``close``
    ends submissions now and reveals; ``while_open`` reveals and leaves it open, knowing that each new
    submission then shows its team the private score (issue 22, M5)."""
    fields = ["private_revealed"]
    newly = not challenge.private_revealed
    if challenge.is_open and not challenge.private_revealed:
        if close:
            challenge.end = timezone.now()
            fields.append("end")
        elif not while_open:
            until = f" until {challenge.end:%Y-%m-%d %H:%M} UTC" if challenge.end else " (it has no end)"
            raise ConflictError(REVEAL_WHILE_OPEN.format(until=until))
    challenge.private_revealed = True
    challenge.save(update_fields=fields)
    if newly:  # participants are told once it is committed (notifications, through a port)
        pk = challenge.pk
        transaction.on_commit(lambda: notices().board_revealed(challenge_id=pk), robust=True)
    return challenge


@transaction.atomic
def task_create(
    *,
    challenge: Challenge,
    slug: str,
    title: str,
    metric: str,
    truth: bytes,
    truth_name: str,
    labels: list[str] | None = None,
    group_column: str | None = None,
    split_column: str | None = None,
    description: str = "",
    positive: str | None = None,
    stratify: str = "auto",
    max_runs: int | None = None,
    decimals: int | None = None,
    ignore_index: int = 255,
    reduce_zero_label: bool = False,
    public_mode: str = "plain",
    ladder_eta: float | None = None,
    ladder_z: float | None = None,
    text_options: dict[str, Any] | None = None,
    secondary_metrics: Sequence[str] | None = None,
) -> Task:
    """Create a task from its hidden-labels file (parsed and validated before anything is stored).

    ``positive`` names the positive class of a binary-score metric (default: the second label in sorted
    order); ``stratify`` is ``"auto"``, ``"class"`` or ``"none"`` (see :class:`Task`). ``max_runs``: files
    per submission (default ``RUNS_DEFAULT``); ``decimals``: the board's precision (default: derived from
    the number of items, ``rankings.precision.default_decimals``, and stored). ``public_mode``,
    ``ladder_eta`` and ``ladder_z``: what the public board releases (see :func:`task_public_mode_set`).

    The metric decides the task's kind. A detection task's file is a COCO (or VOC-style) annotation file;
    a segmentation task's an archive of label maps, with ``labels`` the class names (index = pixel value)
    and ``ignore_index`` / ``reduce_zero_label`` its settings. The item list is the images in the order
    the parser gives them, recorded once: images are never re-identified afterwards. ``text_options``:
    a text task's metric options (``settings_spec.TEXT_METRIC_OPTIONS``: tokenizer, lowercase,
    smoothing, effective order), checked and kept by the text kind (its signature names them).

    ``secondary_metrics`` (issue 20): other metrics of the task, scored beside ``metric`` (the primary,
    which ranks); the board adjusts their comparisons with the leader across them and labels them so.
    Named here, before any submission, and kept in ``Task.vision``: no service changes a task's metric or
    its secondary metrics afterwards (a new task is the way to score another metric). Names may come
    comma-separated (a form's or ``lb``'s one value); the kind checks them (most kinds take none).
    """
    if challenge.tasks.filter(slug=slug).exists():
        raise ConflictError(f"Challenge '{challenge.slug}' has a task '{slug}' already.")
    # an option left empty (a form's blank choice) is its default
    text_options = {k: v for k, v in (text_options or {}).items() if v is not None and v != ""}
    _check_settings(
        TASK,
        {
            "title": title,
            "description": description,
            "max_runs": max_runs,
            "decimals": decimals,
            "stratify": stratify,
            "ignore_index": ignore_index,
            **text_options,
        },
    )
    _check_public_mode(public_mode, ladder_eta, ladder_z)
    kind = task_kind_registry().for_metric(metric)
    parsed = kind.parse_truth(
        truth,
        name=truth_name,
        metric=metric,
        labels=labels,
        group_column=group_column,
        split_column=split_column,
        positive=positive or None,
        options={
            "ignore_index": ignore_index,
            "reduce_zero_label": reduce_zero_label,
            **text_options,
        },
    )
    secondary = kind.secondary_metrics(metric, metric_names(secondary_metrics), parsed)
    task = Task.objects.create(
        challenge=challenge,
        slug=slug,
        title=title,
        description=description,
        metric=metric,
        kind=kind.name,
        vision={**parsed.vision, SECONDARY_METRICS: secondary} if secondary else parsed.vision,
        labels=parsed.label_set,
        item_ids=parsed.ids,
        has_private_split=parsed.private is not None,
        grouped=parsed.groups is not None,
        truth_version=1,
        position=challenge.tasks.count(),
        positive_label=positive or "",
        stratify=stratify,
        max_runs=RUNS_DEFAULT if max_runs is None else max_runs,
        decimals=default_decimals(len(parsed.ids)) if decimals is None else decimals,
        public_mode=public_mode,
        ladder_eta=ladder_eta,
        ladder_z=LADDER_Z_DEFAULT if ladder_z is None else ladder_z,
    )
    try:
        task.full_clean(exclude=["item_ids", "labels"])
    except DjangoValidationError as exc:
        field = next(iter(exc.message_dict), "task")
        raise ApplicationError(
            f"{field}: {' '.join(exc.message_dict[field])}", extra={"field": field}
        ) from exc
    TaskTruth.objects.create(
        task=task,
        labels=parsed.labels,
        groups=parsed.groups,
        private=parsed.private,
        data=parsed.data,
        version=1,
    )
    return task


def metric_names(names: Sequence[str] | str | None) -> list[str]:
    """Metric names from a list whose items may be comma-separated (``["chrf, ter"]`` -> ``["chrf", "ter"]``).

    >>> metric_names(["chrf, ter", "wer"]), metric_names(None), metric_names("bleu,")
    (['chrf', 'ter', 'wer'], [], ['bleu'])
    """
    if names is None:
        return []
    items = [names] if isinstance(names, str) else list(names)
    return [n.strip() for item in items for n in str(item).split(",") if n.strip()]


def _check_public_mode(mode: str, eta: float | None, z: float | None) -> None:
    _check_settings(TASK, {"public_mode": mode})
    if mode == PublicMode.LADDER and (eta is None or TASK["ladder_eta"].refusal(eta)):
        raise ApplicationError(
            "The Ladder with a fixed step needs `ladder_eta`, a positive step in the metric's units "
            "(e.g. 0.01).",
            extra={"field": "ladder_eta"},
        )
    _check_settings(TASK, {"ladder_eta": eta, "ladder_z": z})


@transaction.atomic
def task_public_mode_set(
    *,
    task: Task,
    public_mode: str | None = None,
    ladder_eta: float | None = None,
    ladder_z: float | None = None,
) -> Task:
    """Set what the public board of ``task`` releases: ``plain`` (every score), ``ladder`` (a new score
    only when it beats the shown one by more than ``ladder_eta``) or ``ladder-free`` (by more than
    ``ladder_z`` standard errors of the paired difference). Frozen once the task has a submission, like the
    statistics settings: a board whose releases were made under one rule cannot be re-read under another.
    A field left out (``None``) keeps the task's value, as in a PATCH.
    """
    task = Task.objects.select_for_update().get(pk=task.pk)
    current = {key: getattr(task, key) for key in PUBLIC_MODE_FIELDS}
    public_mode = current["public_mode"] if public_mode is None else public_mode
    z = task.ladder_z if ladder_z is None else ladder_z
    eta = (
        ladder_eta
        if ladder_eta is not None
        else (task.ladder_eta if public_mode == PublicMode.LADDER else None)
    )
    _check_public_mode(public_mode, eta, z)
    new = {"public_mode": public_mode, "ladder_eta": eta, "ladder_z": z}
    changed = sorted(k for k, v in new.items() if getattr(task, k) != v)
    if changed and task.submission_files.exists():
        raise ConflictError(
            "The public board's mode cannot change once the task has submissions "
            f"({', '.join(changed)}); the releases made so far were made under the current rule.",
            extra={"fields": changed},
        )
    for key, value in new.items():
        setattr(task, key, value)
    task.full_clean(exclude=["item_ids", "labels"])
    task.save(update_fields=[*PUBLIC_MODE_FIELDS])
    return task


@transaction.atomic
def task_truth_replace(
    *,
    task: Task,
    truth: bytes,
    truth_name: str,
    group_column: str | None = None,
    split_column: str | None = None,
) -> Task:
    """Replace the hidden labels of a task (same items, same label set), e.g. to fix labelling errors.

    Scores computed with the old labels stay until the organizer re-scores (``task_rescore``); old board
    snapshots stay readable.
    """
    kind = task_kind_registry().of_task(task)
    parsed = kind.parse_truth(
        truth,
        name=truth_name,
        metric=task.metric,
        labels=kind.replacement_labels(task),  # detection: the categories come from the file
        group_column=group_column,
        split_column=split_column,
        positive=task.positive_label or None,
        options=kind.replacement_options(task),
    )
    kept = {k: v for k, v in task.vision.items() if k != SECONDARY_METRICS}  # a setting, not the file's
    if parsed.ids != task.item_ids or parsed.vision != kept:
        raise ApplicationError(
            f"{truth_name}: the new labels file must list the same items in the same order as the task "
            f"({task.n_items} items{', the same categories and image sizes' if task.vision else ''}); create a new "
            "task for a different test set."
        )
    truth_row = TaskTruth.objects.select_for_update().get(task=task)
    truth_row.labels = parsed.labels
    truth_row.groups = parsed.groups
    truth_row.private = parsed.private
    truth_row.data = parsed.data
    truth_row.version += 1
    truth_row.save()
    task.truth_version = truth_row.version
    task.has_private_split = parsed.private is not None
    task.grouped = parsed.groups is not None
    task.save(update_fields=["truth_version", "has_private_split", "grouped"])
    return task


def team_for_user(*, challenge: Challenge, user: User) -> Team:
    """The user's team in this challenge; a participant submitting alone gets a team of one."""
    team = Team.objects.filter(challenge=challenge, members=user).first()
    if team is not None:
        return team
    with transaction.atomic():
        # Parallel first submissions of one user each made a team of one (and each team had its own
        # limits): the user's row lock, held until the caller commits, lets one make it and the rest find it.
        User.objects.select_for_update(no_key=True).filter(pk=user.pk).first()
        team = Team.objects.filter(challenge=challenge, members=user).first()
        if team is not None:
            return team
        base = user.get_username()
        name = base
        for attempt in range(1, 100):
            try:
                with transaction.atomic():
                    team = Team.objects.create(challenge=challenge, name=name)
                    team.members.add(user)
                    return team
            except IntegrityError:
                name = f"{base}-{attempt + 1}"
    raise ConflictError("Could not create a team for you; pick a team name.")


TEAM_HAS_SUBMISSIONS = (
    "You are in the team '{team}', which has submissions in this challenge; you cannot move to another "
    "team (the limits count per team)."
)


def _release_user(*, challenge: Challenge, user: User) -> None:
    """Take the user out of their current team, if it has no submissions (an empty team is deleted)."""
    current = Team.objects.select_for_update().filter(challenge=challenge, members=user).first()
    if current is None:
        return
    if current.submissions.exists():
        raise ConflictError(TEAM_HAS_SUBMISSIONS.format(team=current.name))
    current.members.remove(user)
    if not current.members.exists():
        current.delete()


@transaction.atomic
def team_found(*, challenge: Challenge, user: User, name: str) -> Team:
    """The user founds a team in this challenge (leaving their empty team of one, if any)."""
    name = name.strip()
    if not name:
        raise ApplicationError("A team needs a name.", extra={"field": "name"})
    _release_user(challenge=challenge, user=user)
    if Team.objects.filter(challenge=challenge, name=name).exists():
        raise ConflictError(
            f"A team named '{name}' exists in this challenge already.", extra={"field": "name"}
        )
    team = Team.objects.create(challenge=challenge, name=name[:100])
    team.members.add(user)
    return team


@transaction.atomic
def team_join(*, challenge: Challenge, user: User, invite_code: str) -> Team:
    """The user joins the team whose invite code they were given (members share it)."""
    team = (
        Team.objects.select_for_update().filter(challenge=challenge, invite_code=invite_code.strip()).first()
    )
    if team is None:  # the code names no team: 404, as an unknown slug (the web form shows it inline)
        raise NotFoundError("No team of this challenge has that invite code.", extra={"field": "invite_code"})
    if team.members.filter(pk=user.pk).exists():
        return team
    _release_user(challenge=challenge, user=user)
    team.members.add(user)
    return team


def slug_for(title: str) -> str:
    return slugify(title)[:80] or f"challenge-{int(timezone.now().timestamp())}"


# --- approved participation ------------------------------------------------------------------------
NOT_APPROVED = (
    "This challenge takes only approved participants; ask to take part and wait for an organizer's "
    "approval before you submit."
)
APPROVAL_OFF = "This challenge does not ask for approval; anyone who sees it may submit."


def participant_may_submit(*, challenge: Challenge, user: User) -> bool:
    """Whether ``user`` may submit: always unless the challenge requires approval; then once approved."""
    if not challenge.requires_approval:
        return True
    return Participant.objects.filter(challenge=challenge, user=user, approved=True).exists()


@transaction.atomic
def participation_request(*, challenge: Challenge, user: User) -> Participant:
    """Ask to take part (idempotent: asking again returns the same request)."""
    if not challenge.requires_approval:
        raise ConflictError(APPROVAL_OFF)
    participant, _ = Participant.objects.get_or_create(challenge=challenge, user=user)
    return participant


@transaction.atomic
def participation_approve(*, challenge: Challenge, user: User, approved_by: User) -> Participant:
    """An organizer approves (a request, or a user who has not asked yet)."""
    require_organizer(challenge=challenge, user=approved_by)
    participant, _ = Participant.objects.get_or_create(challenge=challenge, user=user)
    if not participant.approved:
        participant.approved = True
        participant.approved_at = timezone.now()
        participant.save(update_fields=["approved", "approved_at"])
    return participant


@transaction.atomic
def participation_revoke(*, challenge: Challenge, user: User, revoked_by: User) -> None:
    """An organizer withdraws an approval or turns a request down (the user may ask again)."""
    require_organizer(challenge=challenge, user=revoked_by)
    Participant.objects.filter(challenge=challenge, user=user).delete()
