"""Notify participants: a submission scored or failed, a private board revealed.

Called once the changing transaction commits, through ``challenges.ports.notices`` (scoring and
challenges sit below this app). Each event is one :class:`Notice` per recipient, unique by ``(user, key)``:
a retried task or a second call notifies nobody twice, and the e-mail goes out only with the row that was
created; so a re-score tells nobody again that a submission was scored (one that had failed and now scores
is news, and is told). The notices are made in a task (``notifications.tasks``). A notice about a score says what the participant's own status page says, read through the read
policy (``rankings.selectors.reader_view``): the board's precision, never an exact score a Ladder board
withholds, never a private score before the reveal, never a hidden label.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from leaderboard.accounts.models import User
from leaderboard.challenges.models import Challenge
from leaderboard.challenges.selectors import private_board_visible
from leaderboard.notifications.models import Notice, NoticePreference
from leaderboard.rankings.selectors import Channel, reader_view
from leaderboard.scoring.models import Score, Split
from leaderboard.submissions.models import Status, Submission

logger = logging.getLogger(__name__)

LADDER_WITHHELD = "the board shows the Ladder's released value (see the status page)"


def preference_of(user: User) -> NoticePreference:
    return NoticePreference.objects.filter(user=user).first() or NoticePreference(user=user)


def preference_set(*, user: User, email: bool, site: bool) -> NoticePreference:
    pref, _ = NoticePreference.objects.update_or_create(user=user, defaults={"email": email, "site": site})
    return pref


def site_url(path: str) -> str:
    return settings.LEADERBOARD_SITE_URL.rstrip("/") + path


def notify(*, users: Iterable[User], key: str, kind: str, subject: str, body: Any, url: str) -> list[Notice]:
    """One notice per user for the event ``key``, unless that user already has it; e-mail it to those who
    take e-mail. ``body`` is a text or a function of the user (what that user may read)."""
    created = []
    for user in users:
        pref = preference_of(user)
        text = body(user) if callable(body) else body
        try:
            with transaction.atomic():
                notice = Notice.objects.create(
                    user=user, key=key, kind=kind, subject=subject, body=text, url=url, on_site=pref.site
                )
        except IntegrityError:  # notified already (a retry): nothing more
            continue
        if pref.email and user.email:
            _email(notice, user)
        created.append(notice)
    return created


def _email(notice: Notice, user: User) -> None:
    """Send through the configured backend (settings.EMAIL_BACKEND); a mail server down loses the e-mail,
    logged, never the scoring or the reveal that caused it (the notice stays on the site)."""
    link = f"\n\n{site_url(notice.url)}" if notice.url else ""
    footer = f"\n\nTo stop these e-mails: {site_url(reverse('account'))}"
    try:
        send_mail(notice.subject, notice.body + link + footer, None, [user.email])
    except Exception:  # smtplib and socket raise many types
        logger.exception("notice %s: e-mail to user %s not sent", notice.pk, user.pk)
        return
    Notice.objects.filter(pk=notice.pk).update(emailed=True)


def _members(submission: Submission) -> list[User]:
    return list(submission.team.members.all())


def score_lines(*, submission: Submission, user: User) -> list[str]:
    """The submission's scores as ``user`` reads them on its status page: the public split, the private one
    only where its board is visible, each at the board's precision, or no number under the Ladder."""
    private_ok = private_board_visible(challenge=submission.challenge, user=user)
    lines = []
    scores = Score.objects.filter(submission=submission).select_related("task__challenge")
    for s in scores.defer("replicates", "jackknife", "item_statistics").order_by("task__position", "split"):
        if s.split != Split.PUBLIC and not private_ok:
            continue
        reader = reader_view(s.task, s.split, user)
        if reader.allows(Channel.SCORE):
            shown = f"{float(reader.value(s.value)):.{reader.decimals}f}"
        else:
            shown = LADDER_WITHHELD
        lines.append(f"  {s.task.title} ({s.split}): {shown}")
    return lines


def submission_finished(*, submission_id: int) -> list[Notice]:
    """Tell the submission's team that it was scored, or that it failed and why."""
    sub = Submission.objects.select_related("challenge", "team").filter(pk=submission_id).first()
    if sub is None or sub.status not in (Status.SCORED, Status.FAILED):
        return []
    about = f"submission #{sub.pk} “{sub.name}” to “{sub.challenge.title}”"
    url = reverse("submission", args=[sub.pk])
    if sub.status == Status.FAILED:
        return notify(
            users=_members(sub),
            key=f"failed:{sub.pk}",
            kind=Notice.Kind.FAILED,
            subject=f"Submission #{sub.pk} failed: {sub.challenge.title}"[:200],
            body=f"Your team's {about} failed.\n{sub.error}",
            url=url,
        )

    def body(user: User) -> str:
        lines = score_lines(submission=sub, user=user)
        return "\n".join([f"Your team's {about} was scored.", *lines])

    return notify(
        users=_members(sub),
        key=f"scored:{sub.pk}",
        kind=Notice.Kind.SCORED,
        subject=f"Submission #{sub.pk} scored: {sub.challenge.title}"[:200],
        body=body,
        url=url,
    )


def board_revealed(*, challenge_id: int) -> list[Notice]:
    """Tell every member of the challenge's teams that the private board is revealed (no score in it)."""
    challenge = Challenge.objects.filter(pk=challenge_id).first()
    if challenge is None or not challenge.private_revealed:
        return []
    users = User.objects.filter(teams__challenge=challenge).distinct().order_by("pk")
    closed = "" if challenge.is_open else " Submissions are closed."
    return notify(
        users=users,
        key=f"revealed:{challenge.pk}",
        kind=Notice.Kind.REVEALED,
        subject=f"Final board revealed: {challenge.title}"[:200],
        body=f"The organizers of “{challenge.title}” revealed the private board.{closed}",
        url=reverse("challenge", args=[challenge.slug]) + "?split=private",
    )


def notices_mark_read(*, user: User, ids: list[int] | None = None) -> int:
    """Mark the user's unread notices read (all, or those of ``ids``); returns how many changed."""
    qs = Notice.objects.filter(user=user, read_at__isnull=True)
    if ids is not None:
        qs = qs.filter(pk__in=ids)
    return qs.update(read_at=timezone.now())


def _send(event: str, object_id: int) -> None:
    """Make the event's notices in a task (``notifications.tasks.notify``; in-process in the embedded
    default), or here when the broker cannot be reached: a notice is late rather than lost."""
    from leaderboard.notifications.tasks import notify  # the tasks module imports this one

    try:
        notify.apply_async(args=[event, object_id])
    except Exception:  # kombu/redis raise many types when the broker is unreachable
        logger.warning("broker unreachable; notices of %s %s made here", event, object_id, exc_info=True)
        notify(event, object_id)


class _Notices:
    """The implementation of ``challenges.ports.notices``."""

    def submission_finished(self, *, submission_id: int) -> object:
        _send("submission", submission_id)
        return None

    def board_revealed(self, *, challenge_id: int) -> object:
        _send("revealed", challenge_id)
        return None


NOTICES = _Notices()
