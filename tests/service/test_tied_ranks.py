"""A participant learns no more than the rounded numbers (issue 21, items 8 and 9).

Before the reveal, entries whose values are equal at the board's precision share one rank, are listed by
name, and show the same figures in every channel a non-organizer reads (API JSON and CSV, the site's
downloads, the board page, the pairwise and rank pages); organizers read the exact order. The audit's
200-entry board: the shown rows tell apart at most 60 exact counts (``tests/benchmarks/rounded_board_leak``).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.throttling import SimpleRateThrottle

from leaderboard.challenges.models import Challenge
from leaderboard.challenges.services import challenge_create, challenge_reveal_private, task_create
from leaderboard.rankings.models import BoardSnapshot
from tests.benchmarks.rounded_board_leak import IDENTITY, RANK_COLUMNS, audit_rows, figures
from tests.service.api_support import FAST_HASHERS, client_for, file, reset_throttles
from tests.service.factories import LABELS, user
from tests.service.test_golden_boards import RATES, _file, _truth

#: (team, name, right of 61 public items): "first" (0.656) and "second" (0.705) both show 0.7 at one
#: decimal; exactly, "second" is ahead. By name, "first" is listed first.
ENTRIES = [("alice", "second", 43), ("bob", "first", 40), ("carol", "carol", 50), ("dave", "dave", 35)]


@pytest.fixture(autouse=True)
def _fresh(settings, monkeypatch) -> Iterator[None]:
    settings.PASSWORD_HASHERS = FAST_HASHERS
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", dict(RATES))
    reset_throttles()
    yield
    reset_throttles()


@pytest.fixture
def tied(transactional_db):
    organizer = user("org")
    challenge = challenge_create(organizer=organizer, slug="tied", title="Tied", resamples=200)
    truth = _truth()
    rows = "".join(f"{i},{t},{s}\n" for i, t, s in zip(*truth, strict=True))
    task_create(
        challenge=challenge,
        slug="main",
        title="Main task",
        metric="accuracy",
        truth=("id,label,split\n" + rows).encode(),
        truth_name="truth.csv",
        labels=LABELS,
        split_column="split",
        decimals=1,
    )
    players = {}
    for team, name, right in ENTRIES:
        players[team] = user(team)
        response = client_for(players[team]).post(
            "/api/challenges/tied/submissions/",
            {"name": name, "file": file(f"{name}.csv", _file(truth, right, right))},
            format="multipart",
        )
        assert response.status_code == 201, response.content
    return organizer, players


def _shown(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in IDENTITY}


def _check_tied(rows: list[dict]) -> None:
    """carol 0.8 alone; first and second tied at 0.7 (rank 2, by name, the same figures); dave 4th."""
    assert [r["name"] for r in rows] == ["carol", "first", "second", "dave"]
    assert [int(r["rank"]) for r in rows] == [1, 2, 2, 4]
    assert _shown(rows[1]) == _shown(rows[2])


def _csv_rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_the_stored_board_has_an_exact_order_the_tie_hides(tied) -> None:
    stored = BoardSnapshot.objects.filter(split="public").latest("sequence").rows
    assert [r["name"] for r in stored] == ["carol", "second", "first", "dave"]
    assert stored[1]["value"] > stored[2]["value"] and round(stored[1]["value"], 1) == round(
        stored[2]["value"], 1
    )


@pytest.mark.parametrize("who", ["anonymous", "participant"])
def test_every_channel_shows_ties_at_the_boards_precision_to_non_organizers(tied, who) -> None:
    _organizer, players = tied
    reader = None if who == "anonymous" else players["alice"]
    api = client_for(reader)
    web = Client()
    if reader is not None:
        api.force_login(reader)
        web.force_login(reader)
    _check_tied(api.get("/api/challenges/tied/leaderboard/").json()["rows"])
    page = api.get("/api/challenges/tied/leaderboard/?limit=2&offset=1").json()["rows"]
    assert [r["name"] for r in page] == ["first", "second"] and page[0]["rank"] == page[1]["rank"] == 2
    _check_tied(_csv_rows(api.get("/api/challenges/tied/leaderboard/?format=csv").content.decode()))
    _check_tied(_csv_rows(web.get(reverse("board_download", args=["tied", "main", "csv"])).content.decode()))
    _check_tied(json.loads(web.get(reverse("board_download", args=["tied", "main", "json"])).content)["rows"])
    # the board page lists the tied entries by name
    board = web.get(reverse("challenge", args=["tied"])).content.decode()
    assert board.index(">first<") < board.index(">second<")
    # the pairwise page: the two tied entries against each other read the same both ways round
    ids = {r["name"]: r["submission_id"] for r in BoardSnapshot.objects.latest("sequence").rows}

    def pair(a: str, b: str) -> str:
        html = web.get(
            reverse("pairwise", args=["tied", "main"]), {"a": ids[a], "b": ids[b]}
        ).content.decode()
        html = re.sub(r"first|second|bob|alice", "X", html.rsplit("</form>", 1)[-1])  # after the choice
        for pk in (ids["first"], ids["second"]):  # links to either submission
            html = re.sub(rf"(submission\D{{0,4}}|[?&;][ab]=|/){pk}\b", r"\1N", html)
        return html

    assert pair("first", "second") == pair("second", "first")
    assert pair("carol", "first") == pair("carol", "second")
    # the rank page: the tied entries' lines are one line, each share at the board's precision
    ranks = web.get(reverse("ranks", args=["tied", "main"])).content.decode()
    opacities = re.findall(r'fill-opacity="([^"]*)"', ranks)
    assert opacities and all(len(o.split(".")[-1]) <= 2 for o in opacities)
    lines = re.findall(r"<title>(first|second): rank (\d+) in ([^<]*) of resamples</title>", ranks)
    assert [(r, p) for n, r, p in lines if n == "first"] == [(r, p) for n, r, p in lines if n == "second"]


def test_organizers_and_everyone_after_the_reveal_read_the_exact_order(tied) -> None:
    organizer, _players = tied
    api = client_for(organizer)
    api.force_login(organizer)
    rows = api.get("/api/challenges/tied/leaderboard/").json()["rows"]
    assert [r["name"] for r in rows] == ["carol", "second", "first", "dave"]
    assert [r["rank"] for r in rows] == [1, 2, 3, 4]
    challenge_reveal_private(challenge=Challenge.objects.get(slug="tied"), while_open=True)
    anonymous = client_for(None).get("/api/challenges/tied/leaderboard/?split=public").json()["rows"]
    assert [r["name"] for r in anonymous] == ["carol", "second", "first", "dave"]


def test_the_audits_board_tells_apart_at_most_60_exact_counts() -> None:
    """Issue 21: 200 entries with 150..349 of 500 public items right; today 176 (200 with ranks)."""
    rows = audit_rows()
    got = figures(rows)
    assert got["organizer rows with ranks"] == 200  # the exact board tells every count apart
    assert got["participant rows with ranks"] <= 60, got
    assert got["participant rows without ranks"] <= got["participant rows with ranks"]
    assert set(RANK_COLUMNS) <= set(rows[0])


# --- the cross-task summary (issue 21, item 8) -----------------------------------------------------------
@pytest.fixture
def two_tasks(transactional_db):
    """Two tasks at one decimal, the same files on both: "second" (43 of 61 public items, 0.705) is ahead of
    "first" (40, 0.656) on each task exactly, and both show 0.7; "carol" (50) leads both."""
    organizer = user("org")
    challenge = challenge_create(organizer=organizer, slug="two", title="Two", resamples=200)
    truth = _truth()
    rows = "".join(f"{i},{t},{s}\n" for i, t, s in zip(*truth, strict=True))
    for slug in ("main", "other"):
        task_create(
            challenge=challenge, slug=slug, title=slug, metric="accuracy",
            truth=("id,label,split\n" + rows).encode(), truth_name="truth.csv", labels=LABELS,
            split_column="split", decimals=1,
        )  # fmt: skip
    players = {}
    for team, name, right in (("alice", "second", 43), ("bob", "first", 40), ("carol", "carol", 50)):
        players[team] = user(team)
        data = _file(truth, right, right)
        response = client_for(players[team]).post(
            "/api/challenges/two/submissions/",
            {"name": name, "file:main": file("m.csv", data), "file:other": file("o.csv", data)},
            format="multipart",
        )
        assert response.status_code == 201, response.content
    return organizer, players


def _average_ranks(reader) -> dict[str, float]:
    response = client_for(reader).get("/api/challenges/two/summary/")
    assert response.status_code == 200, response.content
    return {e["name"]: e["average_rank"] for e in response.json()["summary"]["entries"]}


def test_the_summary_ranks_rounded_values_for_participants_and_exact_ones_for_organizers(two_tasks) -> None:
    organizer, players = two_tasks
    assert _average_ranks(organizer) == {"carol": 1.0, "second": 2.0, "first": 3.0}
    for reader in (players["bob"], None):  # a participant, a visitor: ties share their average rank
        assert _average_ranks(reader) == {"carol": 1.0, "second": 2.5, "first": 2.5}
    shown = client_for(players["bob"]).get("/api/challenges/two/summary/").json()["summary"]
    assert shown["ranking_schemes"]["available"] is False and "tied" not in shown
    # The site's page and both diagrams follow the same rule.
    site = Client()
    page = site.get("/c/two/summary/").content.decode()
    assert "2.5" in page or "2.50" in page
    organizer_site = Client()
    organizer_site.force_login(organizer)
    diagram, exact = (c.get("/c/two/critical-difference.svg") for c in (site, organizer_site))
    assert diagram.status_code == exact.status_code == 200 and diagram.content != exact.content
    api_svg = client_for(None).get("/api/challenges/two/critical-difference.svg")
    assert api_svg.status_code == 200 and api_svg.content == diagram.content
    # After the reveal everyone reads the exact order.
    challenge_reveal_private(challenge=Challenge.objects.get(slug="two"), while_open=True)
    assert _average_ranks(players["bob"]) == {"carol": 1.0, "second": 2.0, "first": 3.0}
