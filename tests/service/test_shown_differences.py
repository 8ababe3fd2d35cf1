"""A shown difference adds up from the shown values (issue 22, P1).

The walk read random-forest's difference -0.014 beside the values 0.973 and 0.988 (0.973 - 0.988 = -0.015):
the column was the unrounded difference -0.01447, rounded. The rule (``rankings.precision.shown_differences``):
every reader reads the difference of the shown values, its interval widened to cover it, never across zero on
a decided row; the board, the API, both downloads and the participant's tied view agree.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from leaderboard.rankings.precision import participant_rows, public_rows, round_to
from tests.service import web_support as ws

LEADER: dict[str, Any] = {
    "key": "team:1",
    "name": "knn-3",
    "value": 0.98776,
    "diff": None,
    "verdict": "could be the best",
}


def _row(key: str, name: str, value: float, low: float, high: float, verdict: str) -> dict:
    return {
        "key": key,
        "name": name,
        "value": value,
        "diff": value - LEADER["value"],
        "diff_low": low,
        "diff_high": high,
        "compared_with": "knn-3",
        "compared_with_key": "team:1",
        "verdict": verdict,
    }


def test_the_walks_difference_is_the_difference_of_the_shown_values() -> None:
    forest = _row("team:2", "random-forest", 0.97329, -0.0201, -0.0143, "worse than the best")
    (_, shown) = public_rows([LEADER, forest], 3)
    assert (shown["value"], shown["diff"]) == (0.973, -0.015)  # was -0.014: the rounded exact -0.01447
    assert shown["diff_low"] == -0.020 and shown["diff_high"] == -0.014  # -0.0143 rounded: it covers -0.015
    # a page of the board still finds its rows' reference on the whole board
    (only,) = public_rows([LEADER, forest], 3, start=1)
    assert only["diff"] == -0.015


def test_the_interval_is_widened_to_cover_it_but_never_across_zero_on_a_decided_row() -> None:
    tight = _row("team:2", "tight", 0.98849, 0.0005, 0.0009, "could be the best")
    (_, row) = public_rows([LEADER, tight], 3)
    assert row["diff"] == 0.0 and row["diff_low"] == 0.0 and row["diff_high"] == 0.001
    decided = _row("team:3", "decided", 0.98749, -0.0004, -0.0001, "worse than the best")
    (_, row) = public_rows([LEADER, decided], 3)
    # shown 0.987 and 0.988: the difference is theirs, -0.001, although the exact one rounds to 0.000
    assert row["diff"] == round_to(0.987 - 0.988, 3) == -0.001
    same = _row("team:4", "same", 0.98770, -0.0001, -0.00005, "worse than the best")
    (_, row) = public_rows([LEADER, same], 3)
    # equal shown values on a decided row: the difference is 0.000 and the bounds are not pulled across
    # zero; each rounds to 0 on its own and the page writes the decided side "<0"
    assert row["diff"] == 0.0 and row["diff_high"] == 0.0 and row["diff_low"] == 0.0


@pytest.fixture
def plain(db, django_capture_on_commit_callbacks):
    return ws.make_board(django_capture_on_commit_callbacks)


def _adds_up(rows: list[dict], decimals: int) -> None:
    value = {r["name"]: float(r["value"]) for r in rows}
    for r in rows:
        if r.get("compared_with") and r.get("diff") not in (None, ""):
            assert float(r["diff"]) == pytest.approx(
                round_to(value[r["name"]] - value[r["compared_with"]], decimals), abs=1e-12
            ), r
            assert float(r["diff_low"]) <= float(r["diff"]) <= float(r["diff_high"]), r


@pytest.mark.parametrize("who", ["organizer", "visitor", "participant"])
def test_every_reader_reads_differences_that_add_up(plain, who) -> None:
    web = Client()
    if who == "organizer":
        web.force_login(plain.organizer)
    elif who == "participant":
        web.force_login(plain.alice)
    data = web.get(reverse("board_download", args=[plain.challenge.slug, "main", "json"])).json()
    decimals = int(data["signature"]["decimals"])
    _adds_up(data["rows"], decimals)
    text = web.get(reverse("board_download", args=[plain.challenge.slug, "main", "csv"])).content.decode()
    _adds_up(list(csv.DictReader(io.StringIO(text))), decimals)


def test_participants_before_the_reveal_read_the_same_rule() -> None:
    forest = _row("team:2", "random-forest", 0.97329, -0.0201, -0.0143, "worse than the best")
    (_, row) = participant_rows([dict(LEADER, diff=0.0), forest], 3)
    assert row["diff"] == -0.015


def _walk_pair(board: ws.Board) -> list[dict]:
    """The walk's two values on the board of ``make_board``: the leader 0.98776 and the runner-up 0.97329 at
    3 decimals (shown 0.988 and 0.973), their exact difference -0.01447 (rounded: -0.014)."""
    from leaderboard.rankings.models import BoardSnapshot

    board.task.decimals = 3
    board.task.save(update_fields=["decimals"])
    snap = BoardSnapshot.objects.filter(task=board.task, split="public").latest("sequence")
    rows, pairwise = snap.rows, snap.pairwise
    rows[0]["value"], rows[1]["value"] = 0.98776, 0.97329
    rows[1]["diff"], rows[1]["diff_low"], rows[1]["diff_high"] = -0.01447, -0.0201, -0.0143
    pairwise["difference"][1][0], pairwise["difference"][0][1] = -0.01447, 0.01447
    pairwise["low"][1][0], pairwise["high"][1][0] = -0.0201, -0.0143
    pairwise["low"][0][1], pairwise["high"][0][1] = 0.0143, 0.0201
    pairwise["significant"][0][1] = pairwise["significant"][1][0] = True
    BoardSnapshot.objects.filter(pk=snap.pk).update(rows=rows, pairwise=pairwise)
    return rows


def _pair_difference(web: Client, board: ws.Board, a: int, b: int) -> tuple[str, str]:
    import html as htmllib
    import re

    page = htmllib.unescape(
        web.get(reverse("pairwise", args=[board.challenge.slug, "main"]), {"a": a, "b": b}).content.decode()
    )
    diff = re.search(r"<dt>Difference \(A . B\)</dt><dd>([^<]+)</dd>", page)
    interval = re.search(r"<dt>Simultaneous interval</dt><dd>([^<]+)</dd>", page)
    assert diff and interval, page
    assert "as shown above, at the board's 3 decimals" in page  # the page states the rule and the precision
    return diff.group(1), interval.group(1)


@pytest.mark.parametrize("who", ["organizer", "visitor after the reveal"])
def test_the_pairwise_page_shows_the_difference_of_the_values_it_shows(plain, who) -> None:
    """The task's left item of issue 22, P1: the organizer's pairwise page (and every exact reader's after
    the reveal) printed the rounded exact difference -0.014 under the rows 0.988 and 0.973."""
    rows = _walk_pair(plain)
    web = Client()
    if who == "organizer":
        web.force_login(plain.organizer)
    else:
        plain.challenge.private_revealed = True
        plain.challenge.save(update_fields=["private_revealed"])
    leader, runner = rows[0]["submission_id"], rows[1]["submission_id"]
    diff, interval = _pair_difference(web, plain, runner, leader)
    assert diff == "\u22120.015", diff  # 0.973 - 0.988; was -0.014
    assert interval == "[\u22120.020, \u22120.014]", interval  # covers it, does not reach zero
    diff, interval = _pair_difference(web, plain, leader, runner)
    assert (diff, interval) == ("+0.015", "[+0.014, +0.020]")
