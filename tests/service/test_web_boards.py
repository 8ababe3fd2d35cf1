"""The public pages: home, challenge and board, downloads, rank distribution, pairwise, CD diagram."""

from __future__ import annotations

import csv
import html as htmllib
import io
import json
import re

import pytest
from django.urls import reverse

from leaderboard.challenges.models import Visibility
from leaderboard.rankings.distribution import unpack_rank_distribution
from leaderboard.rankings.models import BoardSnapshot
from tests.service import web_support as ws

pytestmark = pytest.mark.django_db


@pytest.fixture
def board(django_capture_on_commit_callbacks) -> ws.Board:
    return ws.make_board(django_capture_on_commit_callbacks)


def _board_html(client, board: ws.Board, **params: str) -> str:
    response = client.get(reverse("challenge", args=[board.challenge.slug]), params)
    assert response.status_code == 200
    return response.content.decode()


def _row_order(html: str, names: list[str]) -> list[str]:
    table = html[html.index('<table class="board"') :]
    return sorted(names, key=lambda n: table.index(f'<span class="name">{n}</span>'))


def test_home_lists_public_challenges_with_deadline_and_counts(client, board: ws.Board) -> None:
    ws.challenge(board.organizer, slug="hidden-one", visibility=Visibility.PRIVATE)
    html = client.get(reverse("home")).content.decode()
    assert board.challenge.title in html
    assert "3 teams" in html and "3 scored submissions" in html
    assert "Pets hidden-one" not in html  # private challenges are not listed for anonymous visitors


def test_board_shows_value_interval_bar_rank_interval_and_marks(client, board: ws.Board) -> None:
    snap = BoardSnapshot.objects.filter(task=board.task, split="public").latest("sequence")
    by_name = {r["name"]: r for r in snap.rows}
    html = _board_html(client, board)
    assert "<caption>" in html and 'scope="row"' in html and 'scope="col"' in html
    assert _row_order(html, ["alpha", "beta", "gamma"]) == ["alpha", "beta", "gamma"]
    alpha = by_name["alpha"]
    assert f"{alpha['value']:.4f}" in html
    assert f"[{alpha['low']:.4f}, {alpha['high']:.4f}]" in html
    # The forest plot (difference to the leader) carries its numbers as text for screen readers.
    beta = by_name["beta"]
    low_d, high_d = beta["diff_low"], beta["diff_high"]
    label = f"beta: difference to alpha {beta['diff']:+.4f}, 95% simultaneous interval "
    label += f"{low_d:+.4f} to {high_d:+.4f}"
    label = label.replace("-", "\u2212")
    assert f'aria-label="{label}"' in htmllib.unescape(html)
    assert 'aria-label="alpha: the leader, the reference at zero"' in html
    assert html.count('class="zero"') == 3  # the zero line in every row
    # the simultaneous rank set in the row (it agrees with the verdict); the marginal interval is on the rank
    # distribution page, where it is labelled (issue 22, M3)
    low, high = alpha["rank_sim_low"], alpha["rank_sim_high"]
    assert (f"could rank {low}\u2013{high}" if high != low else f"could rank {low}</span>") in html
    assert ">ranks " not in html
    # One-word verdicts, each with its explanation reachable by keyboard, and the legend names them.
    verdicts = {"best": "best", "could be the best": "tie", "worse than the best": "worse"}
    for r in snap.rows:
        word = "leader" if r["is_leader"] and r["verdict"] == "could be the best" else verdicts[r["verdict"]]
        assert f'class="verdict-tag v-{word}" tabindex="0" aria-describedby="vt-b-' in html
    assert html.count('role="tooltip"') == len(snap.rows)
    assert "max-t simultaneous confidence set for the best entry at level" in html
    text = htmllib.unescape(html)
    # the pair test against the leader is named in the signature, not presented as the verdict
    assert "McNemar's exact test" in text and "Adjusted p" not in text


def test_unresolved_gap_says_how_many_items_are_needed(client, board: ws.Board) -> None:
    snap = BoardSnapshot.objects.filter(task=board.task, split="public").latest("sequence")
    beta = next(r for r in snap.rows if r["name"] == "beta")
    assert beta["verdict"] == "could be the best" and beta["items_needed"]  # 5 vs 6 wrong of 60
    html = htmllib.unescape(_board_html(client, board))
    assert (
        f"Could be the best: not resolved from alpha on this test set; about {beta['items_needed']} items"
        in html
    )
    gamma = next(r for r in snap.rows if r["name"] == "gamma")
    assert gamma["verdict"] == "worse than the best" and gamma["in_best_set"] is False
    assert f"Worse than the best: {gamma['compared_with']} is significantly better" in html


def test_server_side_sort_by_name_and_value(client, board: ws.Board) -> None:
    assert _row_order(_board_html(client, board, sort="-name"), ["alpha", "beta", "gamma"]) == [
        "gamma",
        "beta",
        "alpha",
    ]
    assert _row_order(_board_html(client, board, sort="value"), ["alpha", "beta", "gamma"]) == [
        "gamma",
        "beta",
        "alpha",
    ]
    html = _board_html(client, board, sort="value")
    assert 'aria-sort="ascending"' in html
    # Unknown keys fall back to rank order.
    assert _row_order(_board_html(client, board, sort="evil"), ["alpha", "beta", "gamma"])[0] == "alpha"


def test_signature_under_the_table(client, board: ws.Board) -> None:
    html = _board_html(client, board)
    sig = html[html.index('class="signature"') :]
    for text in (
        "Metric",
        "accuracy",
        "Bootstrap resamples",
        "200",
        "Seed",
        "0.95 (95%)",
        "holm",
        "clopper_pearson",
    ):
        assert text in sig
    assert "inputs" not in sig  # the internal digest is not part of the signature shown


def test_private_board_hidden_until_revealed(client, django_capture_on_commit_callbacks) -> None:
    board = ws.make_board(django_capture_on_commit_callbacks, private_every=3)
    url = reverse("challenge", args=[board.challenge.slug])
    assert client.get(url, {"split": "private"}).status_code == 404
    assert "Private (revealed by the organizers at the end)" in _board_html(client, board)
    client.force_login(board.organizer)
    organizer_html = client.get(url, {"split": "private"}).content.decode()
    assert (
        "private board" in organizer_html and '<strong aria-current="page">Private</strong>' in organizer_html
    )
    # issue 22, A11: before the reveal the organizer's private board says whom it is for
    assert "Not revealed: only the organizers can see this board." in organizer_html
    assert "only the organizers can see" not in client.get(url).content.decode()  # the public board
    client.post(reverse("reveal", args=[board.challenge.slug]), {"confirm": "reveal", "when_open": "close"})
    client.logout()
    assert client.get(url, {"split": "private"}).status_code == 200


def test_private_challenge_is_404_for_strangers(client, board: ws.Board) -> None:
    secret = ws.challenge(board.organizer, slug="secret", visibility=Visibility.PRIVATE)
    assert client.get(reverse("challenge", args=[secret.slug])).status_code == 404
    client.force_login(board.organizer)
    assert client.get(reverse("challenge", args=[secret.slug])).status_code == 200


def test_csv_download_neutralises_formulas_and_json_has_signature(
    client, django_capture_on_commit_callbacks
) -> None:
    board = ws.make_board(django_capture_on_commit_callbacks)
    mallory = ws.user("mallory")
    with django_capture_on_commit_callbacks(execute=True):
        ws.submit(board.challenge, mallory, '=HYPERLINK("http://evil")', wrong=30)
    url = reverse("board_download", args=[board.challenge.slug, board.task.slug, "csv"])
    response = client.get(url)
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    names = {r["name"] for r in rows}
    assert '\'=HYPERLINK("http://evil")' in names and "alpha" in names
    alpha = next(r for r in rows if r["name"] == "alpha")
    assert alpha["rank"] == "1" and float(alpha["low"]) <= float(alpha["value"]) <= float(alpha["high"])
    data = json.loads(client.get(url.replace("board.csv", "board.json")).content)
    assert data["signature"]["metric"] == "accuracy" and "inputs" not in data["signature"]
    assert data["rows"][0]["name"] == "alpha"
    assert client.get(url.replace("board.csv", "board.xml")).status_code == 404


def test_rank_distribution_plot_and_table(client, board: ws.Board) -> None:
    snap = BoardSnapshot.objects.filter(task=board.task, split="public").latest("sequence")
    response = client.get(reverse("ranks", args=[board.challenge.slug, board.task.slug]))
    html = response.content.decode()
    assert response.status_code == 200
    assert '<svg viewBox="0 0' in html and 'role="img"' in html
    share = unpack_rank_distribution(snap.rank_distribution)[0][0]
    assert f"alpha: rank 1 in {round(share * 100):.0f}% of resamples" in html
    assert "<caption>Share of bootstrap resamples per rank</caption>" in html


def test_rank_distribution_rows_follow_the_board(client, django_capture_on_commit_callbacks) -> None:
    organizer = ws.user("olga")
    c = ws.challenge(organizer)
    t = ws.task(c)
    # The worst entry is submitted first, so the engine's input order differs from the board's order.
    for name, wrong in (("worst", 25), ("middle", 12), ("best", 1)):
        with django_capture_on_commit_callbacks(execute=True):
            ws.submit(c, ws.user(name), name, wrong=wrong)
    snap = BoardSnapshot.objects.filter(task=t, split="public").latest("sequence")
    assert [r["name"] for r in snap.rows] == ["best", "middle", "worst"]
    # Each entry is far from the others: its row of the distribution puts (almost) all mass on its rank.
    shares = unpack_rank_distribution(snap.rank_distribution)
    assert [max(range(3), key=lambda j: row[j]) for row in shares] == [0, 1, 2]
    html = client.get(reverse("ranks", args=[c.slug, t.slug])).content.decode()
    assert "best: rank 1 in 100% of resamples" in html


def test_pairwise_shows_stored_difference_and_discordant_counts(client, board: ws.Board) -> None:
    snap = BoardSnapshot.objects.filter(task=board.task, split="public").latest("sequence")
    ids = [r["submission_id"] for r in snap.rows]
    url = reverse("pairwise", args=[board.challenge.slug, board.task.slug])
    html = client.get(url, {"a": ids[0], "b": ids[2]}).content.decode()
    n10 = snap.pairwise["only_row_right"][0][2]
    n01 = snap.pairwise["only_column_right"][0][2]
    assert (n10, n01) == (15, 0)  # alpha gets 5 wrong, gamma 20 (the same first ones)
    text = htmllib.unescape(html)
    # The exact counts of discordant items are for organizers; a participant sees the rounded table.
    assert "alpha right, gamma wrong" not in text
    assert "McNemar's exact test on the discordant items" in text
    assert f"{snap.pairwise['difference'][0][2]:+.4f}" in html
    client.force_login(board.organizer)
    text = htmllib.unescape(client.get(url, {"a": ids[0], "b": ids[2]}).content.decode())
    assert f"alpha right, gamma wrong: {n10}; alpha wrong, gamma right: {n01}" in text


def test_summary_and_cd_diagram(client, django_capture_on_commit_callbacks) -> None:
    board = ws.make_board(django_capture_on_commit_callbacks, two_tasks=True)
    html = client.get(reverse("summary", args=[board.challenge.slug])).content.decode()
    assert "Critical-difference diagram" in html
    assert f'src="{reverse("cd_svg", args=[board.challenge.slug])}?split=public"' in html
    assert "Average rank" in html and "Friedman" in html
    svg = client.get(reverse("cd_svg", args=[board.challenge.slug]))
    assert svg.status_code == 200 and svg["Content-Type"].startswith("image/svg+xml")
    assert b"<svg" in svg.content and b"alpha" in svg.content
    assert "default-src 'none'" in svg["Content-Security-Policy"]
    # issue 22, M6: each task's column at its board's precision, not padded to 4 decimals
    first = board.challenge.tasks.order_by("position", "slug").first()
    first.decimals = 2
    first.save(update_fields=["decimals"])
    html = client.get(reverse("summary", args=[board.challenge.slug])).content.decode()
    table = html.split('class="plain matrix"')[1].split("</table>")[0]
    rows = re.findall(r"<tr><th scope=\"row\">.*?</tr>", table)
    cells = [re.findall(r'<td class="num">(\d+\.\d+)</td>', r) for r in rows]
    assert cells and all(len(c) == 3 for c in cells), cells  # two tasks and the average rank
    assert {tuple(len(v.split(".")[1]) for v in c) for c in cells} == {(2, 4, 3)}, cells


def test_summary_with_one_task_says_why_there_is_no_diagram(client, board: ws.Board) -> None:
    html = client.get(reverse("summary", args=[board.challenge.slug])).content.decode()
    assert "at least two tasks" in html
    assert client.get(reverse("cd_svg", args=[board.challenge.slug])).status_code == 404


def test_no_page_renders_hidden_labels(client, board: ws.Board) -> None:
    truth_lines = ws.truth_csv(60).decode().splitlines()[1:]
    client.force_login(board.organizer)
    pages = [
        reverse("challenge", args=[board.challenge.slug]),
        reverse("organize", args=[board.challenge.slug]),
        reverse("submit", args=[board.challenge.slug]),
        reverse("example", args=[board.challenge.slug, board.task.slug]),
        reverse("board_download", args=[board.challenge.slug, board.task.slug, "json"]),
        reverse("admin:challenges_task_change", args=[board.task.pk]),
    ]
    labels_in_order = ",".join(ws.truth_labels(60))
    for url in pages:
        body = client.get(url).content.decode()
        assert "\n".join(truth_lines[:10]) not in body.replace("\r\n", "\n"), url
        assert labels_in_order not in body and '"cat", "dog", "dog"' not in body, url


def test_board_before_any_submission(client) -> None:
    organizer = ws.user("olga")
    c = ws.challenge(organizer)
    ws.task(c)
    html = client.get(reverse("challenge", args=[c.slug])).content.decode()
    assert "No board yet" in html


def test_a_tie_at_rank_one_names_the_reference_leader(
    client, board: ws.Board, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        ws.submit(board.challenge, ws.user("dora"), "aardvark", wrong=5)  # alpha's twin
    html = htmllib.unescape(_board_html(client, board))
    assert (
        "tied at rank 1 with 1 other entry; this one, listed first, is the reference of the differences"
        in html
    )
    assert ">leader (tied)<" in html
    # tied at the board's precision, the two are listed by name (issue 21): "aardvark" is the reference
    assert 'aria-label="aardvark: the leader, the reference at zero"' in html
    # the difference is 0; its interval is the verdicts' test's (on this small board the randomization
    # max-t's difference +- c, stats.board), no longer the zero-width bootstrap one
    assert 'aria-label="alpha: difference to aardvark 0.0000, 95% simultaneous interval \u22120.' in html
