"""Small things a new user noticed on the site (issue 13, point 3), each pinned by a test."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from tests.service import web_support as ws

pytestmark = pytest.mark.django_db

_DESCRIBED = re.compile(r'aria-describedby="([^"]+)"')
_ID = re.compile(r'\sid="([^"]+)"')


def _dangling_describedby(html: str) -> list[str]:
    ids = set(_ID.findall(html))
    return [ref for refs in _DESCRIBED.findall(html) for ref in refs.split() if ref not in ids]


def test_form_help_and_errors_are_linked_to_their_inputs(client: Client) -> None:
    # Every aria-describedby named ids that did not exist (issue 13 bug 7; axe: aria-valid-attr-value).
    organizer = ws.user("olga", staff=True)
    c = ws.challenge(organizer)
    ws.task(c)
    client.force_login(organizer)
    pages = {
        "new challenge": client.post(reverse("challenge_new"), {"title": ""}),
        "add task": client.post(reverse("task_new", args=[c.slug]), {"title": ""}),
        "submit": client.post(
            reverse("submit", args=[c.slug]),
            {"name": "x", "file_main": SimpleUploadedFile("p.csv", b"id,prediction\nnope,cat\n")},
        ),
        "team": client.get(reverse("team", args=[c.slug])),
    }
    for page, response in pages.items():
        html = response.content.decode()
        assert response.status_code in (200, 400), page
        assert _DESCRIBED.search(html), f"{page}: no described field to check"
        assert _dangling_describedby(html) == [], page
    # the errors themselves are what an error reference points at
    submit_html = pages["submit"].content.decode()
    assert 'id="id_file_main_error"' in submit_html


def test_task_form_names_the_split_values_the_server_accepts(client: Client) -> None:
    organizer = ws.user("olga", staff=True)
    c = ws.challenge(organizer)
    client.force_login(organizer)
    html = client.get(reverse("task_new", args=[c.slug])).content.decode()
    assert "true/false" not in html
    assert "&#x27;public&#x27; or &#x27;private&#x27;" in html


def test_the_leaders_compare_link_compares_it_with_the_next_entry(
    client: Client, django_capture_on_commit_callbacks
) -> None:
    # The leader's own link was pairwise/?a=X&b=X: "Entries alpha and alpha" (issue 13, bug 8).
    board = ws.make_board(django_capture_on_commit_callbacks)
    html = client.get(reverse("challenge", args=[board.challenge.slug]), {"sort": "name"}).content.decode()
    links = re.findall(r'pairwise/\?split=public&amp;a=(\d+)&amp;b=(\d+)"', html)
    assert len(links) == 3
    assert all(a != b for a, b in links)
    from leaderboard.submissions.models import Submission

    alpha, beta = (Submission.objects.get(name=n).pk for n in ("alpha", "beta"))
    assert (str(alpha), str(beta)) in links  # the leader against the runner-up, even when sorted by name
    # and the pairwise page opens on the leader against the runner-up without pressing "Compare"
    page = client.get(reverse("pairwise", args=[board.challenge.slug, board.task.slug])).content.decode()
    assert "Is the gap between alpha and beta real?" in page  # the board's verdict beside the pair test (M3)


def test_no_private_switch_or_cross_task_link_where_there_is_nothing_to_show(
    client: Client, django_capture_on_commit_callbacks
) -> None:
    # Bug 10: "Private (revealed by the organizers at the end)" on challenges without a private split;
    # the nav's "Across tasks" on a one-task challenge, where it can never show anything.
    board = ws.make_board(django_capture_on_commit_callbacks)
    slug, task = board.challenge.slug, board.task.slug
    for url in (reverse("ranks", args=[slug, task]), reverse("summary", args=[slug])):
        html = client.get(url).content.decode()
        assert "split-switch" not in html, url
        assert "Across tasks (CD diagram)" not in html, url


def test_private_switch_stays_where_a_private_board_exists(
    client: Client, django_capture_on_commit_callbacks
) -> None:
    board = ws.make_board(django_capture_on_commit_callbacks, private_every=3)
    html = client.get(reverse("ranks", args=[board.challenge.slug, board.task.slug])).content.decode()
    assert "split-switch" in html


def test_cross_task_signature_prints_no_raw_none_or_zero_resamples(
    client: Client, django_capture_on_commit_callbacks
) -> None:
    # Bug 11: "resamples 0", "seed None", "confidence None" on the summary page.
    board = ws.make_board(django_capture_on_commit_callbacks, two_tasks=True)
    html = client.get(reverse("summary", args=[board.challenge.slug])).content.decode()
    signature = html.split("<h3>Signature</h3>", 1)[1].split("</section>", 1)[0]
    assert "<dt>Metric</dt>" in signature  # keys in words (issue 22, P2)
    for raw in ("<dd>None</dd>", "<dt>Resamples</dt>", "<dt>Seed</dt>", "<dt>Confidence</dt>"):
        assert raw not in signature, raw
    assert "Across tasks (CD diagram)" in html


def test_error_pages_are_the_sites_own_with_a_way_back(client: Client, settings) -> None:
    # Bare "Not Found" in Times with no navigation (issue 13, point 3).
    settings.DEBUG = False
    response = client.get("/c/no-such-challenge/")
    html = response.content.decode()
    assert response.status_code == 404
    assert "site.css" in html and 'class="brand"' in html and "Back to the challenges" in html
    assert '<html lang="en">' in html and "favicon.svg" in html


def test_server_error_page_is_styled_and_needs_no_request_context() -> None:
    from django.template.loader import render_to_string

    html = render_to_string("500.html")  # what django.views.defaults.server_error renders: no context
    assert "Server error (500)" in html and "site.css" in html and "Back to the challenges" in html


def test_favicon(client: Client) -> None:
    response = client.get("/favicon.ico")
    assert response.status_code == 302 and response["Location"].endswith("web/favicon.svg")
    from django.contrib.staticfiles import finders

    assert finders.find("web/favicon.svg")


def test_api_docs_page_declares_its_language(client: Client) -> None:
    html = client.get("/api/docs/").content.decode()
    assert '<html lang="en">' in html and 'id="swagger-ui"' in html and "swagger-ui-bundle" in html


def test_demo_load_keeps_the_services_info_logs_off_the_console(monkeypatch, caplog) -> None:
    # `make demo` printed 212 log lines before the demo accounts line (issue 13, point 3).
    import io
    import logging

    from django.core.management import call_command

    from leaderboard.demo.management.commands import demo_load as command

    def fake_load(*, reset: bool, say) -> list:
        logging.getLogger("leaderboard.scoring.tasks").info("scored submission 1")
        logging.getLogger("leaderboard.scoring.tasks").warning("a warning still shows")
        say("computing ...")
        return []

    monkeypatch.setattr(command, "demo_load", fake_load)
    out = io.StringIO()
    with caplog.at_level(logging.NOTSET):
        logging.getLogger().setLevel(logging.INFO)
        call_command("demo_load", stdout=out)
        messages = [r.getMessage() for r in caplog.records]
        assert "scored submission 1" not in messages and "a warning still shows" in messages
        assert logging.getLogger().level == logging.INFO  # restored
        caplog.clear()
        call_command("demo_load", "--verbosity", "2", stdout=out)
        assert "scored submission 1" in [r.getMessage() for r in caplog.records]
    assert "computing ..." in out.getvalue() and "Demo accounts:" in out.getvalue()


def test_cross_task_page_has_an_entries_by_tasks_table(
    client: Client, django_capture_on_commit_callbacks
) -> None:
    board = ws.make_board(django_capture_on_commit_callbacks, two_tasks=True)
    html = client.get(reverse("summary", args=[board.challenge.slug])).content.decode()
    table = html.split('<table class="plain matrix">', 1)[1].split("</table>", 1)[0]
    head = table.split("</thead>", 1)[0]
    assert "Task main" in head and "Task second" in head and "Average rank" in head
    body_rows = re.findall(r"<tr><th scope=\"row\">([^<]+)</th>(.*?)</tr>", table)
    assert [name for name, _ in body_rows] == ["alpha", "beta", "gamma"]  # by average rank
    # alpha: 5 and 7 wrong of 60 on the two tasks
    cells = re.findall(r'<td class="num">([^<]+)</td>', body_rows[0][1])
    assert cells[:2] == [f"{55 / 60:.4f}", f"{53 / 60:.4f}"]


def test_a_bound_rounded_to_zero_on_the_decided_side_is_drawn_as_such() -> None:
    # At one decimal, a difference interval [0.004, 0.2] of a row the verdict calls "the best" was drawn
    # [0.0, +0.2] next to "significantly better": the page seemed to contradict itself.
    from leaderboard.web.boards import board_view

    rows = [
        {"name": "a", "rank": 1, "value": 0.9, "verdict": "best", "diff": 0.1, "diff_low": 0.0,
         "diff_high": 0.2, "compared_with": "b", "submission_id": 1},
        {"name": "b", "rank": 2, "value": 0.8, "verdict": "worse than the best", "diff": -0.1,
         "diff_low": -0.2, "diff_high": -0.0, "compared_with": "a", "submission_id": 2},
        {"name": "c", "rank": 2, "value": 0.8, "verdict": "could be the best", "diff": -0.1,
         "diff_low": -0.2, "diff_high": 0.0, "compared_with": "a", "submission_id": 3},
    ]  # fmt: skip
    view = board_view(rows=rows, signature={"decimals": 1, "confidence": 0.95})
    shown = {r.data["name"]: (r.diff_low_shown, r.diff_high_shown) for r in view.rows}
    assert shown == {"a": (">0", "+0.2"), "b": ("\u22120.2", "<0"), "c": ("\u22120.2", "0.0")}


def test_the_board_says_in_one_line_who_leads_and_who_cannot_be_told_apart(
    client: Client, django_capture_on_commit_callbacks
) -> None:
    # issue 13: whether the gap is real could not be read in ten seconds
    board = ws.make_board(django_capture_on_commit_callbacks)
    html = client.get(reverse("challenge", args=[board.challenge.slug])).content.decode()
    line = re.search(r'<p class="verdict board-verdict" id="board-verdict">([^<]+)</p>', html)
    assert line is not None
    from leaderboard.rankings.models import BoardSnapshot

    rows = BoardSnapshot.objects.filter(task=board.task).latest("sequence").rows
    could = [r["name"] for r in rows if r["verdict"] == "could be the best" and r["rank"] != 1]
    leader = next(r["name"] for r in rows if r["rank"] == 1)
    assert line.group(1).startswith(f"{leader} leads; ") or line.group(1).startswith(f"{leader} is the best")
    if could:
        assert f"{len(could)} other entr" in line.group(1)


def test_board_headline_wording() -> None:
    from leaderboard.web.boards import board_headline

    row = lambda name, rank, verdict: {"name": name, "rank": rank, "verdict": verdict}  # noqa: E731
    assert board_headline([row("a", 1, "best"), row("b", 2, "worse than the best")]) == (
        "a is the best: significantly better than every other entry on this test set."
    )
    assert (
        board_headline(
            [
                row("a", 1, "could be the best"),
                row("b", 2, "could be the best"),
                row("c", 3, "could be the best"),
            ],
            alpha=0.05,
        )
        == "a leads; 2 other entries (b and c) cannot be told apart from it on this test set (at \u03b1 = 0.05)."
    )
    # issue 22, P7 and A8: a one-entry board has no "other entry"; the entries that tie are named
    assert board_headline([row("a", 1, "best")]) == (
        "a is the only entry on this board: there is nothing to compare it with yet."
    )
    five = [row("a", 1, "could be the best")] + [row(n, 2, "could be the best") for n in "bcdef"]
    assert "5 other entries (b, c, d and 2 more) cannot be told apart" in board_headline(five)
    assert (
        board_headline(
            [
                row("a", 1, "could be the best"),
                row("b", 1, "could be the best"),
                row("c", 3, "worse than the best"),
            ]
        )
        == "a and b share the lead; no other entry can be told apart from them on this test set."
    )
    assert board_headline([{"name": "a", "rank": 1}]) == ""  # a snapshot written before verdicts
