"""The shake-up report through the service: uploads, worker, both boards, the report, its doors and its
visibility (organizers always, everyone after the reveal), and the site's and the API's CSV alike."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from leaderboard.challenges.services import challenge_reveal_private
from leaderboard.rankings.models import BoardSnapshot, ShakeupReport
from leaderboard.rankings.selectors import shakeup_latest
from tests.service import web_support as ws
from tests.service.api_support import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def board(django_capture_on_commit_callbacks) -> ws.Board:
    return ws.make_board(django_capture_on_commit_callbacks, private_every=3)


def test_report_is_built_from_both_boards(board: ws.Board) -> None:
    # before the reveal only organizers read it: no rebuild built one (issue 22 "annoys", issue 24)
    assert not ShakeupReport.objects.exists()
    built = shakeup_latest(task=board.task, user=board.organizer)  # an organizer opens it: built now
    report = ShakeupReport.objects.get(
        task=board.task,
        public_sequence=BoardSnapshot.objects.filter(task=board.task, split="public")
        .latest("sequence")
        .sequence,
        private_sequence=BoardSnapshot.objects.filter(task=board.task, split="private")
        .latest("sequence")
        .sequence,
    )
    data = report.data
    assert data["available"] is True
    assert {t["name"] for t in data["teams"]} == {"alpha", "beta", "gamma"}
    public = BoardSnapshot.objects.filter(task=board.task, split="public").latest("sequence")
    private = BoardSnapshot.objects.filter(task=board.task, split="private").latest("sequence")
    pub_value = {r["name"]: r["value"] for r in public.rows}
    priv_value = {r["name"]: r["value"] for r in private.rows}
    for t in data["teams"]:
        assert t["public_value"] == pytest.approx(pub_value[t["name"]])
        assert t["private_value"] == pytest.approx(priv_value[t["name"]])
        assert 0 < t["gap_p"] <= 1 and t["gap_p_holm"] >= t["gap_p"]
        assert t["public_rank_set"] is not None and t["inside_rank_set"] in (True, False)
    assert data["resplits"] == 1000 and 0 < data["p_reference_le_observed"] <= 1
    assert data["spearman_interval"] is not None
    assert report.svg.startswith("<?xml") and "alpha" in report.svg
    assert built == report and shakeup_latest(task=board.task, user=board.organizer) == report  # kept


def test_a_rebuild_queues_the_report_only_after_the_reveal_and_never_in_process(
    board: ws.Board, monkeypatch: pytest.MonkeyPatch
) -> None:
    from celery import current_app

    from leaderboard.rankings.services import shakeup_after_rebuild

    assert current_app.conf.task_always_eager and not shakeup_after_rebuild(board.task)
    monkeypatch.setitem(current_app.conf, "task_always_eager", False)  # tasks go to workers
    assert not shakeup_after_rebuild(board.task)  # before the reveal: organizers build it when they open it
    challenge_reveal_private(challenge=board.challenge, while_open=True)
    board.task.challenge.refresh_from_db()
    assert shakeup_after_rebuild(board.task)  # everyone reads it now: a worker builds it after the rebuild
    monkeypatch.setitem(current_app.conf, "task_always_eager", True)
    # in-process (the embedded demo) the rebuild runs inside a submission's request: the first read builds it
    assert not shakeup_after_rebuild(board.task)


def test_visible_to_organizers_then_to_everyone_after_the_reveal(client: Client, board: ws.Board) -> None:
    url = reverse("shakeup", args=[board.challenge.slug, board.task.slug])
    api = f"/api/challenges/{board.challenge.slug}/shakeup/?task={board.task.slug}"
    client.force_login(board.alice)
    assert client.get(url).status_code == 404
    assert client_for(board.alice).get(api).status_code == 404
    assert Client().get(url).status_code == 404
    organizer = Client()
    organizer.force_login(board.organizer)
    page = organizer.get(url).content.decode()
    assert "Only the organizers see this page until the private board is revealed" in page
    assert "Shake-up at the reveal" in page and "alpha" in page

    challenge_reveal_private(challenge=board.challenge, while_open=True)
    page = Client().get(url).content.decode()
    assert "Only the organizers" not in page and "P(reference ≤ observed)" in page
    body = client_for(None).get(api)
    assert body.status_code == 200
    assert body.json()["report"]["summary"]["teams"] == 3
    chart = Client().get(reverse("shakeup_svg", args=[board.challenge.slug, board.task.slug]))
    assert (
        chart["Content-Type"].startswith("image/svg+xml")
        and "default-src 'none'" in chart["Content-Security-Policy"]
    )
    api_chart = client_for(None).get(body.json()["svg_url"])
    assert api_chart.status_code == 200 and api_chart.content == chart.content
    # the board page links the report
    board_page = Client().get(reverse("challenge", args=[board.challenge.slug]), {"split": "private"})
    assert reverse("shakeup", args=[board.challenge.slug, board.task.slug]) in board_page.content.decode()


def test_site_and_api_csv_are_the_same_bytes(board: ws.Board) -> None:
    challenge_reveal_private(challenge=board.challenge, while_open=True)
    site = Client().get(reverse("shakeup_csv", args=[board.challenge.slug, board.task.slug]))
    api = client_for(None).get(
        f"/api/challenges/{board.challenge.slug}/shakeup/?task={board.task.slug}&format=csv",
        HTTP_ACCEPT="text/csv",
    )
    assert site.status_code == api.status_code == 200
    assert site.content == api.content
    header, *rows = site.content.decode().splitlines()
    assert header.startswith("name,public_value,private_value,public_rank,private_rank,rank_change")
    assert len(rows) == 3
    # values at the board's precision (the test boards show 4 decimals), as on the boards themselves
    values = [float(r.split(",")[1]) for r in rows] + [float(r.split(",")[2]) for r in rows]
    assert all(round(v, 4) == v for v in values)


def test_a_task_without_a_private_split_has_no_report(
    client: Client, django_capture_on_commit_callbacks
) -> None:
    board = ws.make_board(django_capture_on_commit_callbacks)
    assert not ShakeupReport.objects.exists()
    client.force_login(board.organizer)
    assert client.get(reverse("shakeup", args=[board.challenge.slug, board.task.slug])).status_code == 404


def test_the_shakeup_page_prints_values_at_the_boards_precision(board: ws.Board) -> None:
    """Issue 22, M6: board-rounded values were padded to 4 decimals ("0.9900", a gap "0.0000"); the summary's
    values table: tests/service/test_web_boards.py::test_summary_and_cd_diagram."""
    import re

    board.task.decimals = 2
    board.task.save(update_fields=["decimals"])
    challenge_reveal_private(challenge=board.challenge, while_open=True)
    page = Client().get(reverse("shakeup", args=[board.challenge.slug, board.task.slug])).content.decode()
    cells = re.findall(r'<td class="num">([+\u2212]?\d+\.\d+)</td>', page.split('class="plain shakeup"')[1])
    # values and gaps at 2 decimals; only the re-split p-values have 3
    assert cells and {len(c.split(".")[1]) for c in cells} <= {2, 3}, cells
    assert "0.9000" not in page and sum(len(c.split(".")[1]) == 2 for c in cells) >= 9, cells


def test_a_shakeup_where_nothing_moved_says_so_not_the_luck_of_the_split(
    client: Client, board: ws.Board
) -> None:
    """Issue 22, M7 (still open in the walk of 2026-12-02): three teams, no rank change, and the verdict read
    "the shake-up is the luck of the split" beside rho 1.000 [-1.000, 1.000]."""
    client.force_login(board.organizer)
    url = reverse("shakeup", args=[board.challenge.slug, board.task.slug])

    def verdict() -> str:
        return client.get(url).content.decode().split('id="shakeup-verdict"')[1].split("</p>")[0]

    first = verdict()  # an organizer's read builds the report before the reveal (built only when readable)
    report = ShakeupReport.objects.filter(task=board.task).latest("pk")
    assert {t["rank_change"] for t in report.data["teams"]} != {0}  # here a team moved: the reference speaks
    assert "Nothing moved" not in first and "random split" in first
    # with 3 teams a moved order says as little as an unchanged one: the caveat is in every verdict
    assert "With 3 teams the correlations and the re-split reference below can say little" in first
    # the same report with every team at its public rank (the walk's board)
    report.data["teams"] = [{**t, "rank_change": 0} for t in report.data["teams"]]
    report.save(update_fields=["data"])
    text = verdict()
    assert "Nothing moved at the reveal" in text and "each of the 3 teams kept its public rank" in text
    assert "luck of the split" not in text and "can say little" in text
