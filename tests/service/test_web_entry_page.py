"""The entry page (issue 13, point 1): description and link, the team's submissions, the runs, and the
per-class breakdown with its access rules.

- a participant (the entry's own team included) never sees per-class figures before the reveal;
- organizers see them during the challenge, with the misclassified items (ids, predicted, true);
- everyone sees them after the reveal, but never the misclassified items.
"""

from __future__ import annotations

import html as htmllib

import pytest
from django.test import Client
from django.urls import reverse

from leaderboard.challenges.services import challenge_reveal_private
from leaderboard.submissions.models import Submission
from leaderboard.web.selectors import DETAILS_HIDDEN
from tests.service import web_support as ws

pytestmark = pytest.mark.django_db


@pytest.fixture
def board(django_capture_on_commit_callbacks) -> ws.Board:
    b = ws.make_board(django_capture_on_commit_callbacks)
    Submission.objects.filter(name="alpha").update(
        description="Logistic regression on\nhand-made features.", link="https://example.org/alpha-paper"
    )
    return b


def _alpha(board: ws.Board) -> Submission:
    return Submission.objects.get(challenge=board.challenge, name="alpha")


def _url(board: ws.Board, sub: Submission, split: str = "public") -> str:
    return reverse("entry", args=[board.challenge.slug, board.task.slug, sub.pk]) + f"?split={split}"


def _page(client: Client, url: str, user=None) -> str:  # type: ignore[no-untyped-def]
    if user is not None:
        client.force_login(user)
    response = client.get(url)
    assert response.status_code == 200, response.status_code
    return htmllib.unescape(response.content.decode())


def _has_breakdown(html: str) -> bool:
    return "Confusion matrix" in html and "Most confused pairs" in html and 'class="plain per-class"' in html


def test_board_names_link_to_their_entry_pages(client: Client, board: ws.Board) -> None:
    html = client.get(reverse("challenge", args=[board.challenge.slug])).content.decode()
    alpha = _alpha(board)
    assert (
        f'href="{_url(board, alpha)}"'.replace("&", "&amp;") in html or f'href="{_url(board, alpha)}"' in html
    )


def test_anyone_sees_description_link_history_and_row_but_no_per_class_before_the_reveal(
    client: Client, board: ws.Board
) -> None:
    for who in (None, board.bob, board.alice):  # a visitor, another team, the entry's own team
        c = Client()
        html = _page(c, _url(board, _alpha(board)), who)
        assert "Logistic regression on" in html and "hand-made features." in html
        assert 'href="https://example.org/alpha-paper" rel="nofollow noopener noreferrer"' in html
        assert "Submissions of alice" in html or "Submissions of " in html
        assert 'class="board"' in html and "alpha" in html  # the entry's row on the board's axes
        assert DETAILS_HIDDEN in html
        assert not _has_breakdown(html)
        assert "item000" not in html and "Misclassified" not in html


def test_history_scores_only_for_the_team_and_organizers_before_the_reveal(
    client: Client, board: ws.Board
) -> None:
    url = _url(board, _alpha(board))
    assert "Scores</th>" not in _page(Client(), url)
    assert "Scores</th>" not in _page(Client(), url, board.bob)
    assert "Scores</th>" in _page(Client(), url, board.alice)
    assert "Scores</th>" in _page(Client(), url, board.organizer)


def test_organizer_sees_per_class_confusion_and_the_misclassified_items(
    client: Client, board: ws.Board
) -> None:
    html = _page(client, _url(board, _alpha(board)), board.organizer)
    assert _has_breakdown(html)
    assert "55 of 60 items of the public split right" in html  # alpha gets the first 5 items wrong
    assert "Misclassified items (organizers only)" in html
    truth = ws.truth_labels(60)
    for i in range(5):
        wrong = ws.LABELS[1 - ws.LABELS.index(truth[i])]
        assert f'<th scope="row">item{i:03d}</th><td>{wrong}</td><td>{truth[i]}</td>' in html
    assert "item005" not in html
    # the confusion matrix's off-diagonal counts add up to the 5 wrong items
    cells = html[html.index('class="plain confusion"') :].split("</table>")[0]
    off = [int(part.split("</td>")[0].split(">")[-1]) for part in cells.split('class="num off">')[1:]]
    assert sum(off) == 5


def test_everyone_sees_per_class_after_the_reveal_but_never_the_items(
    client: Client, board: ws.Board
) -> None:
    challenge_reveal_private(challenge=board.challenge, while_open=True)
    for who in (None, board.bob):
        html = _page(Client(), _url(board, _alpha(board)), who)
        assert _has_breakdown(html)
        assert "Misclassified" not in html and "item000" not in html and "item004" not in html


def test_an_entry_not_on_the_board_is_not_found_for_others(
    client: Client, board: ws.Board, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    old = _alpha(board)
    with django_capture_on_commit_callbacks(execute=True):
        ws.submit(
            board.challenge, board.alice, "alpha-2", wrong=7
        )  # the latest counts: alpha leaves the board
    assert Client().get(_url(board, old)).status_code == 404
    c = Client()
    c.force_login(board.alice)
    html = _page(c, _url(board, old))
    assert "is not on the latest public board" in html
    assert "alpha-2" in html  # the team's history lists the newer submission


def test_private_split_entry_page_is_not_found_before_the_reveal(django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    b = ws.make_board(django_capture_on_commit_callbacks, private_every=3)
    alpha = Submission.objects.get(challenge=b.challenge, name="alpha")
    assert Client().get(_url(b, alpha, "private")).status_code == 404
    c = Client()
    c.force_login(b.organizer)
    html = _page(c, _url(b, alpha, "private"))
    assert _has_breakdown(html) and "of 20 items of the private split right" in html
