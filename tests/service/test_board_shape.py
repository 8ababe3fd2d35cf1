"""One typed row and one flat signature (issue 13, point 4): written once by ``rankings.board`` and read as
stored by the API, the site and both downloads; snapshots written before were upgraded once, by a data
migration (issue 19, item 7), not on every read."""

from __future__ import annotations

import csv
import io
from importlib import import_module

import pytest
from django.apps import apps
from django.urls import reverse
from rest_framework.test import APIClient

from leaderboard.rankings.board import ROW_FIELDS
from leaderboard.rankings.exports import CSV_COLUMNS
from leaderboard.rankings.models import BoardSnapshot
from tests.service import web_support as ws

pytestmark = pytest.mark.django_db
UPGRADE = import_module("leaderboard.rankings.migrations.0005_snapshot_rows_upgraded")
upgrade_row, upgrade_signature = UPGRADE.upgrade_row, UPGRADE.upgrade_signature

#: A row and a signature as snapshots stored them before (stats.board's names, the signature with the
#: stats.signature settings nested in ``extra`` and several settings twice).
OLD_ROW = {
    "name": "alpha", "rank": 1, "value": 0.8125, "interval": [0.75, 0.875], "interval_method": "wilson",
    "interval_warning": None, "rank_interval": [1, 2], "simultaneous_rank_interval": [1, 2],
    "verdict": "could be the best", "compared_with": "beta", "difference": 0.0625,
    "difference_interval": [-0.01, 0.13], "difference_standard_error": 0.03, "p_value": 0.04,
    "adjusted_p_value": 0.08, "in_best_set": True, "in_best_set_max_t": True, "in_best_set_holm": True,
    "items_needed": 400, "n_runs": None, "test_set_sd": 0.02, "seed_sd": None, "is_leader": True,
    "key": "team:1", "compared_with_key": "team:2", "compared_with_submission_id": 2, "team": "a",
    "is_baseline": False, "submission_id": 1, "submitted_at": "2026-01-01T00:00:00+00:00",
    "description": "", "link": "", "runs": {"n": 3, "mean": 0.81, "sd": 0.004, "min": 0.806, "max": 0.815},
}  # fmt: skip
OLD_SIGNATURE = {
    "metric": "accuracy", "method": "wilson", "resamples": 200, "seed": 0, "confidence": 0.95,
    "version": "0.1.0",
    "extra": {"alpha": "0.05", "best_set": "max-t", "correction": "holm", "grouped": "False",
              "power": "0.8", "rank_ties": "min", "stepdown": "True", "test": "mcnemar",
              "verdict": "max-t comparisons with the best, level 0.05",
              "difference_interval": "max-t simultaneous, 0.95"},
    "signature_text": "metric:accuracy|method:wilson|...", "test": "mcnemar", "correction": "holm",
    "interval_method": "wilson", "verdict_method": "max-t", "verdict_level": 0.95, "best_set_method": "max-t",
    "alpha": 0.05, "power": 0.8, "higher_is_better": True, "split": "public", "created": "2026-01-01",
}  # fmt: skip


def test_the_migration_knows_the_rows_fields() -> None:
    """The migration's frozen field list is the row's (if the row grows, the migration stays as it was:
    no snapshot stored before it can hold the new fields)."""
    assert [f for f in ROW_FIELDS if f in UPGRADE.ROW_FIELDS] == list(UPGRADE.ROW_FIELDS)


def test_an_old_row_and_signature_are_upgraded_to_one_key_per_meaning() -> None:
    row = upgrade_row(OLD_ROW)
    assert list(row) == [f for f in ROW_FIELDS if f in row]
    assert (row["low"], row["high"], row["rank_low"], row["rank_high"]) == (0.75, 0.875, 1, 2)
    assert (row["diff"], row["diff_low"], row["diff_high"], row["diff_se"]) == (0.0625, -0.01, 0.13, 0.03)
    assert row["p_adjusted"] == 0.08 and row["compared_with"] == "beta"
    assert not {"interval", "difference", "adjusted_p_value", "runs"} & set(row)  # a run's figures stay out
    assert upgrade_row(row) == row  # a row in the shape comes back as it is
    sig = upgrade_signature(OLD_SIGNATURE)
    assert "extra" not in sig and not {"method", "version", "best_set", "verdict"} & set(sig)
    assert sig["interval_method"] == "wilson" and sig["engine_version"] == "0.1.0"
    assert sig["alpha"] == 0.05 and sig["test"] == "mcnemar"  # the typed value, not extra's text copy
    assert sig["stepdown"] == "True" and sig["difference_interval"] == "max-t simultaneous, 0.95"
    assert upgrade_signature(sig) == sig
    before_verdicts = {k: v for k, v in OLD_ROW.items() if k not in ("verdict", "compared_with", "is_leader")}
    older = upgrade_row({**before_verdicts, "rank": 2})
    assert older["compared_with"] == "the leader"
    assert older["verdict"] == "could be the best"  # from its max-t best-set flag, once
    assert upgrade_row({**before_verdicts, "in_best_set_max_t": False})["verdict"] == "worse than the best"


def test_a_new_snapshot_stores_the_typed_row_and_every_reader_reads_it_as_stored(
    client, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    board = ws.make_board(django_capture_on_commit_callbacks)
    snap = BoardSnapshot.objects.filter(task=board.task, split="public").latest("sequence")
    # stored in the shape (as a set of keys: PostgreSQL's jsonb keeps no key order)
    assert all(set(r) <= set(ROW_FIELDS) for r in snap.rows)
    # the pairwise table is the board's own max-t bounds: a row's pair with the entry deciding its
    # verdict shows the row's numbers (stats.board.Board.pairwise, not a second computation)
    position = {r["name"]: i for i, r in enumerate(snap.rows)}
    for i, r in enumerate(snap.rows):
        j = position[r["compared_with"]]
        cell = [snap.pairwise[k][i][j] for k in ("difference", "low", "high")]
        assert cell == pytest.approx([r["diff"], r["diff_low"], r["diff_high"]], rel=1e-12, abs=1e-15)
    assert "extra" not in snap.signature and "method" not in snap.signature
    assert snap.signature["engine_version"] and snap.signature["interval_method"]
    api = APIClient().get(f"/api/challenges/{board.challenge.slug}/leaderboard/").json()
    assert [set(r) for r in api["rows"]] == [set(r) for r in snap.rows]
    assert all(list(r) == [f for f in ROW_FIELDS if f in r] for r in api["rows"])  # read in the row's order
    assert set(api["signature"]) - {"decimals"} <= set(snap.signature)
    site = client.get(reverse("board_download", args=[board.challenge.slug, board.task.slug, "csv"]))
    table = list(csv.reader(io.StringIO(site.content.decode())))
    assert table[0] == CSV_COLUMNS and len(table) == 1 + len(snap.rows)


def test_an_old_snapshot_still_renders_on_the_site_in_the_api_and_in_the_downloads(
    client, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    board = ws.make_board(django_capture_on_commit_callbacks)
    snap = BoardSnapshot.objects.filter(task=board.task, split="public").latest("sequence")
    BoardSnapshot.objects.filter(pk=snap.pk).update(rows=[OLD_ROW], signature=OLD_SIGNATURE, entry_count=1)
    # the other snapshots in the shape the migration ran on (fields added to the row since, e.g. the leader's
    # selection adjustment, did not exist when it ran)
    for other in BoardSnapshot.objects.exclude(pk=snap.pk):
        rows = [{k: v for k, v in r.items() if k in UPGRADE.ROW_FIELDS} for r in other.rows]
        BoardSnapshot.objects.filter(pk=other.pk).update(rows=rows)
    others = list(BoardSnapshot.objects.exclude(pk=snap.pk).values_list("pk", "rows", "signature"))
    UPGRADE.upgrade_snapshots(apps, None)  # the data migration, once
    stored = BoardSnapshot.objects.get(pk=snap.pk)
    assert stored.rows == [upgrade_row(OLD_ROW)] and stored.signature == upgrade_signature(OLD_SIGNATURE)
    # snapshots in the shape are left as they are
    assert list(BoardSnapshot.objects.exclude(pk=snap.pk).values_list("pk", "rows", "signature")) == others
    html = client.get(reverse("challenge", args=[board.challenge.slug])).content.decode()
    assert ("alpha" in html and "Wilson" in html) or "wilson" in html
    api = APIClient().get(f"/api/challenges/{board.challenge.slug}/leaderboard/").json()
    (row,) = api["rows"]
    assert row["low"] is not None and row["p_adjusted"] is not None and "interval" not in row
    assert api["signature"]["interval_method"] == "wilson" and "extra" not in api["signature"]
    api_csv = APIClient().get(f"/api/challenges/{board.challenge.slug}/leaderboard/?format=csv").content
    site_csv = client.get(reverse("board_download", args=[board.challenge.slug, board.task.slug, "csv"]))
    assert api_csv == site_csv.content  # one schema, one writer: the same bytes
    (line,) = list(csv.DictReader(io.StringIO(api_csv.decode())))
    assert line["diff_low"] != "" and "runs" not in line and "run_sd" not in line
