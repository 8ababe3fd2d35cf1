"""The site's side of a board that releases less than the exact board (a Ladder board, issue 15): the
released rows drawn on the board page, and the clear refusal of every page the board's mode does not offer.
What a reader may see is decided by the read policy (``rankings.policy``); the releases: ``rankings.ladder``."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from leaderboard.challenges.models import Challenge, Task
from leaderboard.rankings.models import BoardSnapshot
from leaderboard.rankings.selectors import ReaderView


def ladder_board_context(reader: ReaderView, snapshot: BoardSnapshot | None) -> dict[str, Any]:
    """What the board page draws for a reader of a released board: the released rows and the rule."""
    return {
        "rows": reader.rows(snapshot),
        "decimals": reader.decimals,
        "rule": reader.signature(snapshot)["signature_text"],
        "mode": reader.mode.name,
    }


def ladder_refusal(request: HttpRequest, challenge: Challenge, task: Task | None, why: str) -> HttpResponse:
    """A 404 page that says why: the page is computed from exact scores the board's mode does not release."""
    return render(
        request,
        "web/_error_page.html",
        {
            "challenge": challenge,
            "task": task,
            "error_title": why.split(":", 1)[0],  # "Not available under the Ladder"
            "error_text": why,
        },
        status=404,
    )
