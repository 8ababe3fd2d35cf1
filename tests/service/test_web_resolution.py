"""The 'Resolution' column, the CSV and the API give the selection-aware verdict (issue 11, point 1)."""

from __future__ import annotations

import csv
import html as htmllib
import io

import pytest
from django.urls import reverse

from leaderboard.rankings.models import BoardSnapshot
from tests.service import web_support as ws

pytestmark = pytest.mark.django_db


def test_a_holm_rejection_against_the_observed_leader_is_not_the_verdict(
    client, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    board = ws.make_board(django_capture_on_commit_callbacks)
    snap = BoardSnapshot.objects.filter(task=board.task, split="public").latest("sequence")
    rows = snap.rows
    # As on the demo's digits board (svm-rbf): Holm's test against the observed leader is significant,
    # the max-t comparisons, which allow for the leader's selection, are not: the row could be the best.
    rows[1].update(
        in_best_set_holm=False,
        in_best_set_max_t=True,
        in_best_set=True,
        adjusted_p_value=0.001,
        p_value=0.001,
    )
    assert rows[1]["verdict"] == "could be the best"
    BoardSnapshot.objects.filter(pk=snap.pk).update(rows=rows)
    html = htmllib.unescape(client.get(reverse("challenge", args=[board.challenge.slug])).content.decode())
    name = rows[1]["name"]
    assert f"Could be the best: not resolved from {rows[0]['name']} on this test set" in html
    assert "significantly worse than the leader" not in html and "Adjusted p" not in html
    # the CSV download leads with the same verdict
    response = client.get(reverse("board_download", args=[board.challenge.slug, board.task.slug, "csv"]))
    table = list(csv.DictReader(io.StringIO(response.content.decode())))
    by_name = {r["name"]: r for r in table}
    assert by_name[name]["verdict"] == "could be the best"
    assert list(table[0])[8:10] == ["verdict", "compared_with"]


def test_the_api_rows_carry_the_verdict_and_what_decides_it(
    client, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    board = ws.make_board(django_capture_on_commit_callbacks)
    data = client.get(f"/api/challenges/{board.challenge.slug}/leaderboard/").json()
    rows = data["rows"] if "rows" in data else data["results"]
    assert {r["verdict"] for r in rows} <= {"best", "could be the best", "worse than the best"}
    for r in rows:
        low, high = r["diff_low"], r["diff_high"]
        assert (low > 0 or high < 0) == (r["verdict"] != "could be the best")
        assert r["in_best_set"] == (r["verdict"] != "worse than the best")


def test_the_pairwise_page_shows_the_rows_own_interval_with_its_sign(
    client, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    from leaderboard.web.templatetags.board import signed

    board = ws.make_board(django_capture_on_commit_callbacks)
    snap = BoardSnapshot.objects.filter(task=board.task, split="public").latest("sequence")
    assert snap.pairwise["method"] == "max-t"
    url = reverse("pairwise", args=[board.challenge.slug, board.task.slug])
    checked = 0
    for row in snap.rows:
        other = row["compared_with_submission_id"]
        page = client.get(url, {"split": "public", "a": row["submission_id"], "b": other}).content.decode()
        section = htmllib.unescape(page[page.index('id="pd-h"') :])
        low, high = row["diff_low"], row["diff_high"]
        assert f"[{signed(low)}, {signed(high)}]" in section, row["name"]
        assert f"{signed(row['diff'])}</dd>" in section
        assert "max-t simultaneous interval of every pair" in section
        separated = low > 0 or high < 0
        assert ("Yes: the board separates" in section) == separated
        assert ("Not established: the board does not separate" in section) != separated
        assert separated == (row["verdict"] != "could be the best")
        checked += 1
    assert checked == len(snap.rows) == 3


def test_runs_show_the_seed_spread_next_to_the_test_set_spread_as_rounded_aggregates(
    client, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    from leaderboard.submissions.services import Upload, submission_create

    board = ws.make_board(django_capture_on_commit_callbacks)
    runs = [ws.predictions_csv(60, wrong=w) for w in (2, 8, 14)]  # run scores 0.967, 0.867, 0.767
    with django_capture_on_commit_callbacks(execute=True):
        submission_create(
            challenge=board.challenge,
            user=ws.user("dave"),
            name="seeded",
            files={
                "main": [
                    Upload(name=f"seed{i}.csv", size=len(d), stream=io.BytesIO(d)) for i, d in enumerate(runs)
                ]
            },
        )
    data = client.get(f"/api/challenges/{board.challenge.slug}/leaderboard/").json()
    row = next(r for r in data["rows"] if r["name"] == "seeded")
    assert row["n_runs"] == 3 and row["seed_sd"] == 0.1  # sd of (0.967, 0.867, 0.767), 2 digits
    assert 0 < row["test_set_sd"] < 0.1 and row["interval_method"] == "two-level-t"
    assert "run_min" not in row and "runs" not in row  # no per-run score leaves the board
    assert "two-level bootstrap" in str(data["signature"])
    html = htmllib.unescape(client.get(reverse("challenge", args=[board.challenge.slug])).content.decode())
    assert "Runs: seed sd / test-set sd" in html and "0.1000 / " in html
    assert "0.9667" not in html and "0.7667" not in html
