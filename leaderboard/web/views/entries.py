"""The entry page: one board entry with its description and link, its team's submissions on the challenge,
its runs, and (to organizers, and to everyone once the board is revealed) its per-class breakdown.

Who sees what (tested in tests/service/test_web_entry_page.py):

- anyone who may read the board: the entry's row, description, code or paper link, the team's scored
  submissions (names and dates), the run count;
- the team's members and the organizers: every submission of the team with its status and public score;
  everyone once the board is revealed;
- organizers during the challenge, everyone after the reveal: the per-class breakdown and the confusion
  matrix (before the reveal, per-class figures of a hidden split are a channel to its labels);
- organizers only: the misclassified items with their predicted and true labels.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from leaderboard.challenges.selectors import private_board_visible, user_is_organizer
from leaderboard.rankings import ladder
from leaderboard.rankings.precision import public_rows, public_signature, task_decimals
from leaderboard.scoring.breakdown import class_breakdown, supports_breakdown
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
    if ladder.hides(task, split, request.user):
        # A Ladder board releases one shown value per team; the entry page's row, runs and history carry
        # exact scores (the team's own included), so it is not offered until the reveal.
        return ladder_refusal(request, challenge, task)
    submission = Submission.objects.select_related("team").filter(pk=pk, challenge=challenge).first()
    if submission is None:
        raise Http404(f"No entry {pk} on this challenge.")
    user = request.user
    organizer = user_is_organizer(challenge=challenge, user=user)
    member = user.is_authenticated and submission.team.members.filter(pk=user.pk).exists()
    revealed = private_board_visible(challenge=challenge, user=user)  # organizers, or after the reveal
    snapshot = _board(request, task, split)  # 404 for a private board before the reveal
    decimals = task_decimals(task)
    all_rows = public_rows(snapshot.rows, decimals) if snapshot else []
    on_board = [r for r in all_rows if r.get("submission_id") == submission.pk]
    if not on_board and not (organizer or member):
        raise Http404(f"Entry {pk} is not on the {split} board of '{task.slug}'.")
    view = (
        boards.board_view(rows=all_rows, signature=public_signature(snapshot.signature, decimals))
        if snapshot and on_board
        else None
    )
    row = next((r for r in view.rows if r.submission_id == submission.pk), None) if view else None
    if view is not None and row is not None:
        view.rows = [row]  # the entry's row, drawn on the whole board's axes
        view.total = view.last_row = view.first_row = 1

    see_scores = organizer or member or revealed
    history_qs = Submission.objects.filter(challenge=challenge, team=submission.team).order_by("-created_at")
    if not see_scores:
        history_qs = history_qs.filter(status=Status.SCORED)
    history = list(history_qs[:HISTORY_LISTED])
    scores = (
        submission_scores(submission_ids=[s.pk for s in history], include_private=revealed)
        if see_scores
        else {}
    )
    files = list(submission.files.filter(task=task).order_by("run"))

    breakdown: Any = None
    breakdown_note = ""
    if get_kind(task.kind).has_score_details:
        breakdown_note = "score_details"  # the page links to the task's per-class page instead
    elif not supports_breakdown(task):
        breakdown_note = "Per-class results apply to tasks whose predictions are labels of a label set."
    elif not revealed:
        breakdown_note = DETAILS_HIDDEN
    else:
        with as_http():
            breakdown = class_breakdown(
                submission_id=submission.pk, task=task, split=split, with_items=organizer
            )
        if breakdown is None:
            breakdown_note = "This entry has no score on this board."
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
            "history": [(s, scores.get(s.pk, [])) for s in history],
            "files": files if (organizer or member) else [],
            "n_runs": len(files),
            "breakdown": breakdown,
            "breakdown_note": breakdown_note,
            "decimals": decimals,
        },
    )
