"""Earlier board snapshots on the site, search on a board, and a BibTeX entry (issue 13, point 2)."""

from __future__ import annotations

import html as htmllib
import re

import pytest
from django.test import Client
from django.urls import reverse

from leaderboard.rankings.models import BoardSnapshot
from tests.service import web_support as ws

pytestmark = pytest.mark.django_db


def _text(response) -> str:  # type: ignore[no-untyped-def]
    return htmllib.unescape(re.sub(r"<[^>]+>", "", response.content.decode()))


def _rows(html: str) -> list[str]:
    return re.findall(r'<th scope="row"[^>]*>.*?<span class="name">([^<]+)</span>', html, flags=re.S)


@pytest.fixture
def board(django_capture_on_commit_callbacks) -> ws.Board:
    return ws.make_board(django_capture_on_commit_callbacks)


def test_an_earlier_snapshot_is_readable_on_the_site(client: Client, board: ws.Board) -> None:
    # The API had ?sequence=; the site ignored it and always drew the latest board.
    snaps = list(BoardSnapshot.objects.filter(task=board.task, split="public").order_by("sequence"))
    assert len(snaps) == 3  # one rebuild per scored submission
    url = reverse("challenge", args=[board.challenge.slug])
    first = client.get(url, {"task": board.task.slug, "sequence": snaps[0].sequence})
    assert first.status_code == 200
    text = _text(first)
    assert f"You are reading an earlier board: snapshot #{snaps[0].sequence}" in text
    assert f"The latest is #{snaps[-1].sequence}" in text
    assert _rows(first.content.decode()) == ["alpha"]  # the board as it was after the first submission
    latest = client.get(url, {"task": board.task.slug})
    assert "earlier board" not in _text(latest)
    assert sorted(_rows(latest.content.decode())) == ["alpha", "beta", "gamma"]
    history = latest.content.decode().split('<details class="history">', 1)[1].split("</details>", 1)[0]
    assert all(f"#{s.sequence}" in history for s in snaps)
    assert f"sequence={snaps[0].sequence}" in history
    # the downloads of an earlier page are that snapshot's
    csv = client.get(
        reverse("board_download", args=[board.challenge.slug, board.task.slug, "csv"]),
        {"sequence": snaps[0].sequence},
    )
    assert csv.status_code == 200 and f"-{snaps[0].sequence}.csv" in csv["Content-Disposition"]
    assert "beta" not in csv.content.decode()
    # an unknown or malformed sequence is a 404, not the latest board
    assert client.get(url, {"task": board.task.slug, "sequence": 999}).status_code == 404
    assert client.get(url, {"task": board.task.slug, "sequence": "x"}).status_code == 404


def test_search_filters_the_rows_and_keeps_the_whole_boards_ranks(client: Client, board: ws.Board) -> None:
    url = reverse("challenge", args=[board.challenge.slug])
    response = client.get(url, {"task": board.task.slug, "q": "GAM"})
    html = response.content.decode()
    assert _rows(html) == ["gamma"]
    assert "1 of 3 entries match “GAM”" in _text(response)
    assert re.search(r">\s*3\s*<", html.split('class="name">gamma', 1)[0].rsplit("<tr", 1)[1])  # rank 3 kept
    # sorting links keep the search
    assert "q=GAM" in html.split("aria-sort", 2)[1]
    none = client.get(url, {"task": board.task.slug, "q": "nobody"})
    assert _rows(none.content.decode()) == [] and "0 of 3 entries match" in _text(none)


def test_bibtex_pins_the_snapshot(client: Client, board: ws.Board) -> None:
    snap = BoardSnapshot.objects.filter(task=board.task, split="public").order_by("-sequence").first()
    assert snap is not None
    html = client.get(reverse("challenge", args=[board.challenge.slug]), {"task": board.task.slug})
    bib = htmllib.unescape(
        html.content.decode().split('<pre id="bibtex"><code>', 1)[1].split("</code>", 1)[0]
    )
    assert bib.startswith(f"@misc{{pets_main_public_{snap.sequence},")
    assert f"snapshot {snap.sequence})" in bib and f"sequence={snap.sequence}" in bib
    assert "howpublished = {\\url{http://testserver/c/pets/?task=main&split=public&sequence=" in bib
    assert bib.count("{") == bib.count("}") and bib.rstrip().endswith("}")


def test_the_api_and_the_site_download_the_same_csv_bytes(client: Client, board: ws.Board) -> None:
    # The two downloads had two schemas (the API packed intervals as "low;high" and prefixed negative
    # numbers with an apostrophe); one writer now serves both (issue 13).
    from tests.service.api_support import client_for

    site = client.get(reverse("board_download", args=[board.challenge.slug, board.task.slug, "csv"]))
    api = client_for(None).get(
        f"/api/challenges/{board.challenge.slug}/leaderboard/?task={board.task.slug}&format=csv"
    )
    assert site.status_code == api.status_code == 200
    assert site.content == api.content
    assert site["Content-Disposition"] == api["Content-Disposition"]
    header = site.content.decode().splitlines()[0].split(",")
    # the simultaneous rank set first (it agrees with the verdict), the marginal interval named as such
    assert (
        header[:5] == ["rank", "rank_sim_low", "rank_sim_high", "rank_marginal_low", "rank_marginal_high"]
        and "diff_low" in header
        and "verdict" in header
    )
    assert "'-" not in site.content.decode()  # negative numbers stay numbers
