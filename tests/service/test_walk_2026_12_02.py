"""Small defects the walk of 2026-12-02 found (docs/walk-2026-12-02.md), each with a test that fails on the
code it walked."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from tests.service import web_support as ws


@pytest.fixture
def plain(db, django_capture_on_commit_callbacks):
    return ws.make_board(django_capture_on_commit_callbacks)


def test_an_organizers_private_board_of_a_task_without_a_private_split_says_so(plain) -> None:
    """The walk (as the demo's organizer, ?split=private on uci-digits) read "No board yet: it appears when
    the first submission of this task is scored." beside a scored board: the task has no private split."""
    assert not plain.task.has_private_split
    web = Client()
    web.force_login(plain.organizer)
    text = web.get(reverse("challenge", args=[plain.challenge.slug]) + "?split=private").content.decode()
    assert "This task has no private split" in text
    assert "No board yet" not in text


def test_the_reveal_of_a_challenge_without_a_private_split_says_what_it_opens(plain) -> None:
    """The walk found "Reveal the private board" offered on the demo's challenges, none of which has a private
    split (N4): the organize page now says there is no private board and what the reveal opens instead."""
    web = Client()
    web.force_login(plain.organizer)
    text = web.get(reverse("organize", args=[plain.challenge.slug])).content.decode()
    assert 'id="reveal-no-private"' in text and "there is no private board" in text
    assert "The private board is visible to organizers only" not in text


def test_a_challenge_with_a_private_split_keeps_its_reveal_text(
    db, django_capture_on_commit_callbacks
) -> None:
    board = ws.make_board(django_capture_on_commit_callbacks, private_every=3)
    web = Client()
    web.force_login(board.organizer)
    text = web.get(reverse("organize", args=[board.challenge.slug])).content.decode()
    assert "The private board is visible to organizers only" in text and "reveal-no-private" not in text
