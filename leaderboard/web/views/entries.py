"""The entry page: one board entry with its description and link, its team's submissions on the challenge,
its runs, and (to organizers, and to everyone once the board is revealed) its per-class breakdown.

Who sees what (tested in tests/service/test_web_entry_page.py):

- anyone who may read the board: the entry's row, description, code or paper link, the team's scored
  submissions (names and dates), the run count;
- the team's members and the organizers: every submission of the team with its status and public score;
  everyone once the board is revealed;
- organizers during the challenge, everyone after the reveal: the per-class breakdown and the confusion
  matrix (before the reveal, per-class figures of a hidden split are a channel to its labels);
- organizers only: the misclassified items with their predicted and true labels;
- organizers during the challenge, everyone after the reveal: a text task's worst segments by their own
  score (segment ids and values; the hypothesis and references to organizers only).
"""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from leaderboard.challenges.models import Task
from leaderboard.challenges.selectors import private_board_visible, user_is_organizer
from leaderboard.rankings.models import BoardSnapshot
from leaderboard.rankings.selectors import Channel, ReaderView, reader_view
from leaderboard.scoring.breakdown import class_breakdown, supports_breakdown, worst_segments
from leaderboard.scoring.kinds import get_kind
from leaderboard.scoring.models import Split
from leaderboard.submissions.models import Status, Submission
from leaderboard.web import boards
from leaderboard.web.ladder import ladder_refusal
from leaderboard.web.selectors import DETAILS_HIDDEN, submission_scores
from leaderboard.web.views.common import as_http, challenge_for, task_for, throttled_anonymous_reads
from leaderboard.web.views.public import _board

#: Submissions of the team listed on the entry page (the newest first).
HISTORY_LISTED = 50


@throttled_anonymous_reads
@require_GET
def entry(request: HttpRequest, slug: str, task_slug: str, pk: int) -> HttpResponse:
    challenge = challenge_for(request, slug)
    task = task_for(challenge, task_slug)
    split = request.GET.get("split", Split.PUBLIC)
    if split not in (Split.PUBLIC, Split.PRIVATE):
        raise Http404("Boards are 'public' and 'private'.")
    reader = reader_view(task, split, request.user)
    if not reader.allows(Channel.ENTRY):
        # A Ladder board releases one shown value per team; the entry page's row, runs and history carry
        # exact scores (the team's own included), so it is not offered until the reveal.
        return ladder_refusal(request, challenge, task, reader.refusal)
    submission = Submission.objects.select_related("team").filter(pk=pk, challenge=challenge).first()
    if submission is None:
        raise Http404(f"No entry {pk} on this challenge.")
    user = request.user
    organizer = user_is_organizer(challenge=challenge, user=user)
    member = user.is_authenticated and submission.team.members.filter(pk=user.pk).exists()
    revealed = private_board_visible(challenge=challenge, user=user)  # organizers, or after the reveal
    snapshot = _board(request, task, split)  # 404 for a private board before the reveal
    decimals = reader.decimals
    view, row = _entry_row(snapshot, submission, reader)
    if row is None and not (organizer or member):
        raise Http404(f"Entry {pk} is not on the {split} board of '{task.slug}'.")
    see_scores = organizer or member or revealed
    files = list(submission.files.filter(task=task).order_by("run"))
    breakdown, breakdown_note = _entry_breakdown(
        task, submission, split=split, revealed=revealed, organizer=organizer
    )
    worst = (
        worst_segments(submission_id=submission.pk, task=task, split=split, with_text=organizer)
        if revealed
        else None
    )
    return render(
        request,
        "web/entry.html",
        {
            "challenge": challenge,
            "task": task,
            "split": split,
            "submission": submission,
            "snapshot": snapshot,
            "view": view,
            "row": row,
            "entry_links": False,
            "is_organizer": organizer,
            "is_member": member,
            "revealed": revealed,
            "private_visible": revealed,
            "see_scores": see_scores,
            "history": _team_history(submission, see_scores=see_scores, revealed=revealed, user=user),
            "files": files if (organizer or member) else [],
            "n_runs": len(files),
            "breakdown": breakdown,
            "breakdown_note": breakdown_note,
            "worst": worst,
            "decimals": decimals,
        },
    )


def _entry_row(
    snapshot: BoardSnapshot | None, submission: Submission, reader: ReaderView
) -> tuple[boards.BoardView | None, boards.RowView | None]:
    """The entry's row on the board as this reader may read it, drawn on the whole board's axes (None
    when it is not on it)."""
    all_rows = reader.rows(snapshot)
    if snapshot is None or not any(r.get("submission_id") == submission.pk for r in all_rows):
        return None, None
    view = boards.board_view(rows=all_rows, signature=reader.signature(snapshot))
    row = next((r for r in view.rows if r.submission_id == submission.pk), None)
    if row is not None:
        view.rows = [row]
        view.total = view.last_row = view.first_row = 1
    return view, row


def _team_history(
    submission: Submission, *, see_scores: bool, revealed: bool, user: Any
) -> list[tuple[Submission, list[Any]]]:
    """The team's latest submissions with their scores (scored ones only, without scores, to others)."""
    history_qs = Submission.objects.filter(challenge=submission.challenge, team=submission.team).order_by(
        "-created_at"
    )
    if not see_scores:
        history_qs = history_qs.filter(status=Status.SCORED)
    history = list(history_qs[:HISTORY_LISTED])
    scores = (
        # every task's score of the team's submissions, each as this reader may read it (a Ladder task's
        # public score is its release: the entry page of another task must not show it exactly)
        submission_scores(submission_ids=[s.pk for s in history], include_private=revealed, user=user)
        if see_scores
        else {}
    )
    return [(s, scores.get(s.pk, [])) for s in history]


def _entry_breakdown(
    task: Task, submission: Submission, *, split: str, revealed: bool, organizer: bool
) -> tuple[Any, str]:
    """The per-class breakdown of an entry once revealed, or the note that says why not."""
    if get_kind(task.kind).has_score_details:
        return None, "score_details"  # the page links to the task's per-class page instead
    if not supports_breakdown(task):
        return None, "Per-class results apply to tasks whose predictions are labels of a label set."
    if not revealed:
        return None, DETAILS_HIDDEN
    with as_http():
        breakdown = class_breakdown(submission_id=submission.pk, task=task, split=split, with_items=organizer)
    return breakdown, "" if breakdown is not None else "This entry has no score on this board."
