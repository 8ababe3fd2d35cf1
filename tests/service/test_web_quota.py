"""What a participant expects before choosing a file: submissions left, when the next slot opens, and a
warning when a new submission replaces the team's counted entry (issue 13, point 2)."""

from __future__ import annotations

import html as htmllib
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from leaderboard.challenges.models import EntrySelection
from leaderboard.submissions.models import Submission
from leaderboard.submissions.selectors import team_quota
from tests.service import web_support as ws

pytestmark = pytest.mark.django_db


def _text(html: bytes) -> str:
    return htmllib.unescape(re.sub(r"<[^>]+>", "", html.decode()))


def _page(client: Client, slug: str) -> str:
    return _text(client.get(reverse("submit", args=[slug])).content)


def test_submit_page_says_how_many_are_left_before_a_file_is_chosen(
    client: Client, django_capture_on_commit_callbacks
) -> None:
    organizer, alice = ws.user("olga"), ws.user("alice")
    c = ws.challenge(organizer, daily_limit=2, total_limit=10)
    ws.task(c)
    client.force_login(alice)
    assert "2 submissions left in the last 24 hours (0 of 2 used; 0 of 10 in total)" in _page(client, c.slug)
    with django_capture_on_commit_callbacks(execute=True):
        ws.submit(c, alice, "first", wrong=5)
    assert "1 submission left in the last 24 hours (1 of 2 used; 1 of 10 in total)" in _page(client, c.slug)
    with django_capture_on_commit_callbacks(execute=True):
        ws.submit(c, alice, "second", wrong=4)
    # the first submission is 2 hours old: its slot opens 22 hours from now
    first = Submission.objects.get(name="first")
    first.created_at = timezone.now() - timedelta(hours=2)
    first.save(update_fields=["created_at"])
    page = _page(client, c.slug)
    expected = (first.created_at + timedelta(days=1)).strftime("%Y-%m-%d %H:%M")
    assert (
        f"the next slot opens at {expected} UTC (in 21 h" in page
        or f"the next slot opens at {expected} UTC (in 22 h" in page
    )
    mine = _text(client.get(reverse("my_submissions", args=[c.slug])).content)
    assert f"none left now, the next slot opens at {expected} UTC" in mine
    # the refusal at the limit says when, too
    with pytest.raises(Exception) as refused:
        ws.submit(c, alice, "third", wrong=3)
    assert f"the next slot opens at {expected} UTC" in str(refused.value)


def test_quota_of_a_team_at_its_total_limit_has_no_next_slot(django_capture_on_commit_callbacks) -> None:
    organizer, alice = ws.user("olga"), ws.user("alice")
    c = ws.challenge(organizer, daily_limit=5, total_limit=1)
    ws.task(c)
    with django_capture_on_commit_callbacks(execute=True):
        sub = ws.submit(c, alice, "only", wrong=5)
    quota = team_quota(challenge=c, team=sub.team)
    assert quota.total_used_up and quota.left_today == 0 and quota.next_slot_at is None


def test_a_warning_before_a_submission_replaces_the_counted_entry(
    client: Client, django_capture_on_commit_callbacks
) -> None:
    # Under "latest", a participant's best entry silently left the board when a worse one was submitted.
    organizer, alice = ws.user("olga"), ws.user("alice")
    c = ws.challenge(organizer)
    ws.task(c)
    client.force_login(alice)
    assert "replaces" not in _page(client, c.slug)  # nothing to replace yet
    with django_capture_on_commit_callbacks(execute=True):
        best = ws.submit(c, alice, "my best", wrong=1)
    page = _page(client, c.slug)
    assert (
        f"once scored, this submission replaces #{best.pk} “my best” on the board, even if it scores worse"
        in page
    )

    c.entry_selection = EntrySelection.BEST
    c.save(update_fields=["entry_selection"])
    assert "replaces #" not in _page(client, c.slug)
