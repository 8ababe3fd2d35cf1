"""The site's side of a Ladder board (issue 15): the released rows, their downloads, and the clear refusal
of every page that a Ladder board does not offer (the rule and the releases: ``rankings.ladder``)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from leaderboard.challenges.models import Challenge, Task
from leaderboard.rankings import ladder
from leaderboard.rankings.models import BoardSnapshot


def ladder_board_context(task: Task, snapshot: BoardSnapshot | None) -> dict[str, Any]:
    """What the board page draws for a reader of a Ladder board: the released rows and the rule."""
    return {
        "rows": ladder.reader_rows(snapshot) if snapshot is not None else [],
        "decimals": ladder.ladder_decimals(task),
        "rule": ladder.reader_signature(task)["signature_text"],
        "mode": task.public_mode,
    }


def ladder_download(task: Task, snapshot: BoardSnapshot, fmt: str, filename: str) -> HttpResponse:
    """``board.csv`` / ``board.json`` of a Ladder board: the released columns only."""
    rows = ladder.reader_rows(snapshot)
    if fmt == "json":
        payload = {
            "challenge": task.challenge.slug,
            "task": task.slug,
            "split": "public",
            "sequence": snapshot.sequence,
            "created_at": snapshot.created_at.isoformat(),
            "signature": ladder.reader_signature(task),
            "rows": rows,
        }
        response: HttpResponse = JsonResponse(payload, json_dumps_params={"indent": 2})
        response["Content-Disposition"] = f'attachment; filename="{filename}.json"'
        return response
    response = HttpResponse(ladder.ladder_csv(rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}.csv"'
    return response


def ladder_refusal(request: HttpRequest, challenge: Challenge, task: Task | None) -> HttpResponse:
    """A 404 page that says why: the page is computed from exact scores the Ladder does not release."""
    return render(
        request,
        "web/_error_page.html",
        {
            "challenge": challenge,
            "task": task,
            "error_title": "Not available under the Ladder",
            "error_text": ladder.NOT_AVAILABLE,
        },
        status=404,
    )
