"""Large boards are drawn 100 rows a page (every row with ?rows=all); bars share one axis across pages."""

from __future__ import annotations

import pytest
from django.urls import reverse

from leaderboard.rankings.board import snapshot_row
from leaderboard.rankings.models import BoardSnapshot
from leaderboard.submissions.models import Submission
from leaderboard.web.boards import ROWS_PER_PAGE, board_view
from tests.service import web_support as ws

pytestmark = pytest.mark.django_db


def _rows(k: int) -> list[dict]:  # type: ignore[type-arg]
    return [
        {
            "rank": i + 1,
            "name": f"entry-{i:04d}",
            "value": 0.9 - i * 0.0005,
            "interval": [0.88 - i * 0.0005, 0.92 - i * 0.0005],
            "submission_id": 10_000 + i,
            "is_leader": i == 0,
        }
        for i in range(k)
    ]


def test_board_view_pages_and_the_shared_axis() -> None:
    rows = [snapshot_row(r) for r in _rows(250)]  # from rows in stats.board's shape, as build_board does
    assert rows[0]["low"] == pytest.approx(0.88)
    first = board_view(rows=rows, signature={}, page=1)
    last = board_view(rows=rows, signature={}, page=3)
    every = board_view(rows=rows, signature={})
    assert [len(v.rows) for v in (first, last, every)] == [ROWS_PER_PAGE, 50, 250]
    assert (first.first_row, first.last_row, last.first_row, last.last_row) == (1, 100, 201, 250)
    assert last.rows[0].name == "entry-0200"
    assert first.axis == last.axis == every.axis  # bars are comparable from page to page
    assert board_view(rows=rows, signature={}, page=99).page == 3  # clamped


def test_the_board_page_shows_one_page_and_links_to_the_rest(
    client, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    board = ws.make_board(django_capture_on_commit_callbacks)
    snap = BoardSnapshot.objects.filter(task=board.task, split="public").latest("sequence")
    BoardSnapshot.objects.filter(pk=snap.pk).update(rows=_rows(250), entry_count=250)
    url = reverse("challenge", args=[board.challenge.slug])
    html = client.get(url).content.decode()
    assert "entries 1\u2013100 of 250" in html
    assert "entry-0099" in html and "entry-0100" not in html
    assert "page=2#board" in html and "rows=all#board" in html
    second = client.get(url, {"page": "2"}).content.decode()
    assert "entries 101\u2013200 of 250" in second and "entry-0100" in second and "entry-0099" not in second
    every = client.get(url, {"rows": "all"}).content.decode()
    assert "entry-0249" in every and "All 250 entries." in every
    assert "entries 1\u2013100 of 250" in client.get(url, {"page": "nonsense"}).content.decode()


def test_the_status_page_draws_the_board_page_that_holds_the_submission(
    client, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    board = ws.make_board(django_capture_on_commit_callbacks)
    snap = BoardSnapshot.objects.filter(task=board.task, split="public").latest("sequence")
    mine = snap.rows[0]
    rows = _rows(250)
    rows[180] = {**mine, "rank": 181}  # the participant's entry, far down a long board
    BoardSnapshot.objects.filter(pk=snap.pk).update(rows=rows, entry_count=250)
    sub = Submission.objects.get(pk=mine["submission_id"])
    client.force_login(sub.submitted_by)
    html = client.get(reverse("submission", args=[sub.pk])).content.decode()
    assert "entries 101\u2013200 of 250" in html
    assert "entry-0150" in html and "entry-0099" not in html
