"""Pages of a participant: submit, the status of a submission, my submissions, cancel and select."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from leaderboard.challenges.models import EntrySelection, Participant
from leaderboard.challenges.selectors import private_board_visible, task_list, user_is_organizer, user_team
from leaderboard.challenges.services import participant_may_submit, participation_request
from leaderboard.core.exceptions import ApplicationError
from leaderboard.core.throttles import client_address
from leaderboard.rankings.selectors import Channel, reader_view
from leaderboard.scoring.kinds import DEFAULT_KIND, get_kind, upload_limit
from leaderboard.submissions.models import Status, Submission
from leaderboard.submissions.selectors import counted_entry_replaced, team_quota, wait_text
from leaderboard.submissions.services import Upload, submission_cancel, submission_create, submission_select
from leaderboard.web import boards
from leaderboard.web.formats import example_download, task_format
from leaderboard.web.forms import SubmissionForm, task_field_name
from leaderboard.web.selectors import (
    counted_instead,
    rows_of_submission,
    score_details,
    submission_for_user,
    submission_scores,
    team_submissions,
)
from leaderboard.web.views.common import as_http, challenge_for, error_context, size_limited_uploads, task_for


@size_limited_uploads
@login_required
def submit(request: HttpRequest, slug: str) -> HttpResponse:
    challenge = challenge_for(request, slug)
    tasks = list(task_list(challenge=challenge))
    organizer = user_is_organizer(challenge=challenge, user=request.user)
    form = SubmissionForm(request.POST or None, request.FILES or None, tasks=tasks, allow_baseline=organizer)
    error: dict[str, Any] | None = None
    status = 200
    if request.method == "POST":
        if form.is_valid():
            files = {
                task.slug: [Upload(name=f.name or "upload", size=f.size or 0, stream=f) for f in uploads]
                for task in tasks
                if (uploads := form.cleaned_data.get(task_field_name(task)))
            }
            try:
                submission = submission_create(
                    challenge=challenge,
                    user=request.user,  # type: ignore[arg-type]
                    name=form.cleaned_data["name"],
                    files=files,
                    description=form.cleaned_data["description"],
                    link=form.cleaned_data["link"],
                    is_baseline=bool(form.cleaned_data.get("is_baseline")),
                    idempotency_key=form.cleaned_data["idempotency_key"],
                    client_address=client_address(request),
                )
            except ApplicationError as exc:
                error = error_context(exc)
                _attach_error(form, exc, tasks, error)
                status = exc.status_code
            else:
                return redirect("submission", pk=submission.pk)
        else:
            status = 400
    team = user_team(challenge=challenge, user=request.user)
    return render(
        request,
        "web/submit.html",
        {
            "challenge": challenge,
            "quota": None if organizer else _quota_view(challenge, team),
            "replaces": None if organizer else counted_entry_replaced(challenge=challenge, team=team),
            "form": form,
            "task_rows": [(t, field, task_format(t)) for t, field in form.task_fields()],
            "error": error,
            "max_bytes": upload_limit({t.kind for t in tasks} or [DEFAULT_KIND]),
            "is_organizer": organizer,
            "approval": _approval_state(challenge, request.user, organizer),
        },
        status=status,
    )


def _quota_view(challenge: Any, team: Any) -> dict[str, Any]:
    """What the submit and "my submissions" pages say about the limits, before a file is chosen."""
    quota = team_quota(challenge=challenge, team=team)
    return {
        "quota": quota,
        "next_slot": wait_text(quota.next_slot_at) if quota.next_slot_at else "",
    }


def _approval_state(challenge: Any, user: Any, organizer: bool) -> str:
    """'' (may submit), 'ask' (has not asked) or 'waiting' (asked, not approved yet)."""
    if organizer or participant_may_submit(challenge=challenge, user=user):
        return ""
    asked = Participant.objects.filter(challenge=challenge, user=user).exists()
    return "waiting" if asked else "ask"


@login_required
@require_POST
def participation(request: HttpRequest, slug: str) -> HttpResponse:
    """Ask to take part in a challenge that takes approved participants only."""
    challenge = challenge_for(request, slug)
    try:
        participation_request(challenge=challenge, user=request.user)  # type: ignore[arg-type]
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, "You asked to take part; you may submit once an organizer approves you.")
    return redirect("submit", slug=challenge.slug)


def _attach_error(form: SubmissionForm, exc: ApplicationError, tasks: list, error: dict[str, Any]) -> None:
    """Show a service error next to the field it is about (the file's task, or the name)."""
    extra = exc.extra or {}
    target = None
    if extra.get("field") == "name":
        target = "name"
    elif extra.get("task"):
        target = f"file_{extra['task']}"
    elif extra.get("file"):
        for task in tasks:
            if any(f.name == extra["file"] for f in form.cleaned_data.get(task_field_name(task)) or []):
                target = task_field_name(task)
                break
    error["field"] = target
    if target is None:
        return
    text = exc.message
    if error["where"] and not text.startswith(str(extra.get("file", "\0"))):
        text = f"{error['where']}: {text}"
    form.add_error(target, text)


@require_GET
def example(request: HttpRequest, slug: str, task_slug: str) -> HttpResponse:
    challenge = challenge_for(request, slug)
    task = task_for(challenge, task_slug)
    example = example_download(task)
    response = HttpResponse(example.data, content_type=example.content_type)
    response["Content-Disposition"] = f'attachment; filename="{example.name}"'
    return response


def _status_payload(submission: Submission, rows: list) -> dict[str, Any]:
    scored = submission.status == Status.SCORED
    # Scored but on no board: once every board of its tasks has been rebuilt since, another entry of the
    # team counts there (the "best" or "selected" rule), and nothing more will change (issue 22, M1).
    instead = counted_instead(submission=submission) if scored and not rows else []
    return {
        "id": submission.pk,
        "status": submission.status,
        "status_display": submission.get_status_display(),
        "error": submission.error,
        "on_board": bool(rows),
        "not_counted": _not_counted_message(submission, instead),
        # The page stops updating once nothing more will change: failed, cancelled, or scored and on a
        # board, or scored and left off rebuilt boards by the entry rule.
        "final": submission.status in (Status.FAILED, Status.CANCELLED) or (scored and bool(rows or instead)),
    }


def _not_counted_message(submission: Submission, instead: list) -> str:
    """ "Scored. Not on the board: ..." naming the entry that counts instead, and how to change that."""
    if not instead:
        return ""
    parts = []
    for snap, row in instead:
        where = snap.task.title
        if row is None:
            parts.append(f"{where}: your team has no entry on the board")
        else:
            parts.append(
                f"{where}: your team's counted entry is #{row.get('submission_id')} “{row.get('name')}”"
            )
    rule = submission.challenge.get_entry_selection_display().lower()
    hint = (
        " Select this submission on “My submissions” to count it instead."
        if submission.challenge.entry_selection == EntrySelection.SELECTED
        else ""
    )
    return f"Scored. Not on the board, which counts {rule} ({'; '.join(parts)}).{hint}"


@login_required
@require_GET
def submission_detail(request: HttpRequest, pk: int) -> HttpResponse:
    with as_http():
        sub = submission_for_user(pk=pk, user=request.user)
    private = private_board_visible(challenge=sub.challenge, user=request.user)
    found = rows_of_submission(submission=sub, include_private=private)
    # A Ladder board's row holds the exact statistics: its reader sees the release instead (``scores``).
    readers = [(snap, row, reader_view(snap.task, snap.split, request.user)) for snap, row in found]
    # The page of each board that holds the submission's row (boards are drawn 100 rows a page).
    board_rows = [
        (
            snap,
            boards.board_view(
                rows=reader.rows(snap),
                signature=reader.signature(snap),
                page=snap.rows.index(row) // boards.ROWS_PER_PAGE + 1,
            ),
        )
        for snap, row, reader in readers
        if reader.allows(Channel.SUBMISSION_ROWS)
    ]
    payload = _status_payload(sub, found)
    scores = submission_scores(submission_ids=[sub.pk], include_private=private, user=request.user).get(
        sub.pk, []
    )
    # Per-class figures of a vision task speak about its hidden annotations: organizers, or once revealed.
    details = [
        (f.task, score_details(submission_id=sub.pk, task_id=f.task_id, split="public"))
        for f in sub.files.all()
        if get_kind(f.task.kind).has_score_details
        and f.run == 0
        and private
        and sub.status == Status.SCORED
        and reader_view(f.task, "public", request.user).allows(Channel.SCORE_DETAILS)
    ]
    return render(
        request,
        "web/submission.html",
        {
            "submission": sub,
            "challenge": sub.challenge,
            "board_rows": board_rows,
            "scores": scores,
            "details": details,
            "status": payload,
            "can_cancel": sub.status == Status.QUEUED,
        },
    )


@login_required
@require_GET
def submission_status(request: HttpRequest, pk: int) -> JsonResponse:
    with as_http():
        sub = submission_for_user(pk=pk, user=request.user)
    private = private_board_visible(challenge=sub.challenge, user=request.user)
    return JsonResponse(_status_payload(sub, rows_of_submission(submission=sub, include_private=private)))


@login_required
@require_GET
def my_submissions(request: HttpRequest, slug: str) -> HttpResponse:
    challenge = challenge_for(request, slug)
    team = user_team(challenge=challenge, user=request.user)
    subs = list(team_submissions(challenge=challenge, team=team))
    private = private_board_visible(challenge=challenge, user=request.user)
    scores = submission_scores(
        submission_ids=[s.pk for s in subs], include_private=private, user=request.user
    )
    return render(
        request,
        "web/my_submissions.html",
        {
            "challenge": challenge,
            "team": team,
            "items": [(s, scores.get(s.pk, [])) for s in subs],
            "selection_on": challenge.entry_selection == EntrySelection.SELECTED,
            "limits_used": sum(1 for s in subs if s.charged),
            "quota": _quota_view(challenge, team),
        },
    )


def _back(request: HttpRequest, sub: Submission) -> HttpResponse:
    target = request.POST.get("next", "")
    if target == "submission":
        return redirect("submission", pk=sub.pk)
    return redirect(reverse("my_submissions", kwargs={"slug": sub.challenge.slug}))


@login_required
@require_POST
def cancel(request: HttpRequest, pk: int) -> HttpResponse:
    with as_http():
        sub = submission_for_user(pk=pk, user=request.user)
    try:
        submission_cancel(submission=sub, user=request.user)  # type: ignore[arg-type]
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Submission #{sub.pk} cancelled; it does not count against your limits.")
    return _back(request, sub)


@login_required
@require_POST
def select(request: HttpRequest, pk: int) -> HttpResponse:
    with as_http():
        sub = submission_for_user(pk=pk, user=request.user)
    try:
        submission_select(submission=sub, user=request.user)  # type: ignore[arg-type]
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Submission #{sub.pk} ({sub.name}) now counts as your team's entry.")
    return _back(request, sub)
