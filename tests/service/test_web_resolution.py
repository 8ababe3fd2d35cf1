"""The 'Resolution' column when the paired test and the best set answer differently."""

from __future__ import annotations

import pytest
from django.urls import reverse

from leaderboard.rankings.models import BoardSnapshot
from tests.service import web_support as ws

pytestmark = pytest.mark.django_db


def test_worse_than_the_observed_leader_but_in_the_best_set_is_said_in_words(
    client, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    board = ws.make_board(django_capture_on_commit_callbacks)
    snap = BoardSnapshot.objects.filter(task=board.task, split="public").latest("sequence")
    rows = snap.rows
    # As on the demo's digits board (svm-rbf): Holm's test against the observed leader is significant,
    # the max-t set, which allows for the leader's selection, still holds the entry.
    rows[1].update(in_best_set_holm=False, in_best_set_max_t=True, in_best_set=True)
    BoardSnapshot.objects.filter(pk=snap.pk).update(rows=rows)
    html = client.get(reverse("challenge", args=[board.challenge.slug])).content.decode()
    assert "Worse than the observed leader by the paired test, yet still in the best set" in html
    assert "Worse than the observed leader, yet in the best set</dt>" in html
    # A row that both procedures separate keeps the plain wording.
    assert "Resolved: significantly worse than the leader" in html
