"""What a test set resolves, before and after entries (issue 23, item 3): on the board, the planning form, the
API's ``/api/plan/`` and ``lb plan``; checked against Connor's formula solved here and a direct computation
from the stored replicates."""

from __future__ import annotations

import html as htmllib
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient
from scipy import optimize
from scipy.stats import norm

from leaderboard.cli.main import cli
from leaderboard.rankings.models import BoardSnapshot
from leaderboard.rankings.services import board_robustness
from leaderboard.scoring.models import Score
from tests.service import web_support as ws
from tests.service.api_support import FAST_HASHERS, reset_throttles
from tests.service.test_ladder_board import _fresh, board  # noqa: F401 (fixtures)

Z_A, Z_B = norm.ppf(0.975), norm.ppf(0.8)


def connor_items(gap: float, discordant: float) -> float:
    """Connor (1987): items for McNemar's test to detect ``gap`` at 80% power, alpha 0.05."""
    return (Z_A * math.sqrt(discordant) + Z_B * math.sqrt(discordant - gap**2)) ** 2 / gap**2


def connor_gap(n: int, discordant: float) -> float:
    return float(
        optimize.brentq(lambda g: connor_items(g, discordant) - n, 1e-9, math.sqrt(discordant) - 1e-12)
    )


@pytest.fixture
def plain(db, django_capture_on_commit_callbacks):
    return ws.make_board(django_capture_on_commit_callbacks)


def test_before_and_after_and_each_rows_resolvable_gap(plain) -> None:
    snap = BoardSnapshot.objects.filter(task=plain.task, split="public").latest("sequence")
    res = snap.robustness["resolution"]
    # before: 60 items, accuracy, the worst case of independent errors (discordance 0.5)
    assert res["before"]["n_items"] == 60 and res["before"]["method"] == "mcnemar-connor"
    assert res["before"]["difference"] == pytest.approx(connor_gap(60, 0.5), rel=1e-6)
    # after: alpha and beta disagree on one item of 60
    assert res["after_measured"]["between"] == ["alpha", "beta"]
    assert res["after_measured"]["difference"] == pytest.approx(connor_gap(60, 1 / 60), rel=1e-6)
    # each row: (z_a/2 + z_b) * the bootstrap SD of its difference to the leader
    scores = {s.submission_id: s for s in Score.objects.filter(task=plain.task, split="public")}
    leader = next(r for r in snap.rows if r["is_leader"])
    lead = scores[leader["submission_id"]].replicate_array()
    gaps = []
    for row in snap.rows:
        if row["is_leader"]:
            assert "resolvable_gap" not in row
            continue
        se = np.std(scores[row["submission_id"]].replicate_array() - lead, ddof=1)
        assert row["resolvable_gap"] == pytest.approx((Z_A + Z_B) * se, rel=1e-9)
        gaps.append(row["resolvable_gap"])
    assert res["after"]["difference"] == pytest.approx(np.median(gaps))
    page = htmllib.unescape(Client().get(reverse("challenge", args=[plain.challenge.slug])).content.decode())
    assert "Smallest difference this test set resolves at 80% power" in page
    assert f"{res['before']['difference']:.4f}" in page
    assert f"at 80% power this test set resolves a gap of {round(gaps[0], 4)}" in page


def test_the_planning_form_answers_connors_items_for_organizers_only(plain) -> None:
    url = reverse("plan", args=[plain.challenge.slug])
    web = Client()
    web.force_login(plain.alice)
    assert web.get(url).status_code in (403, 404)
    web.force_login(plain.organizer)
    assert web.get(url).status_code == 200
    page = web.get(url, {"metric": "accuracy", "gap": "0.02", "power": "0.8", "alpha": "0.05", "accuracy": "0.9",
                         "n_items": "1000"}).content.decode()  # fmt: skip
    discordant = 2 * 0.9 * 0.1  # independent errors at 90% accuracy
    assert f"<strong>{math.ceil(connor_items(0.02, discordant))}</strong> items" in page
    assert f"{connor_gap(1000, discordant):.4f}" in page
    bad = web.get(url, {"metric": "accuracy", "gap": "-1", "power": "0.8", "alpha": "0.05"})
    assert bad.status_code == 400


def test_the_api_answers_the_plan_and_refuses_a_metric_it_cannot_plan(db) -> None:
    ok = APIClient().get("/api/plan/?metric=accuracy&gap=0.05&n_items=400")
    assert ok.status_code == 200, ok.content
    body = ok.json()
    assert body["plan"]["items"] == math.ceil(connor_items(0.05, 0.5))
    assert body["resolves"]["difference"] == pytest.approx(connor_gap(400, 0.5), rel=1e-6)
    bad = APIClient().get("/api/plan/?metric=no-such-metric&gap=0.05")
    assert bad.status_code == 400 and bad.json()["message"]


def test_lb_plan_prints_the_servers_answer(
    live_server, transactional_db, settings, tmp_path: Path, monkeypatch
) -> None:
    settings.PASSWORD_HASHERS = FAST_HASHERS
    reset_throttles()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("LB_HOST", live_server.url)
    result = CliRunner().invoke(
        cli, ["plan", "--metric", "accuracy", "--gap", "0.02", "--accuracy", "0.9", "--items", "1000"],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    items = math.ceil(connor_items(0.02, 0.18))
    assert result.output.startswith(f"{items} items detect a difference of 0.02 with power 0.8 at alpha 0.05")
    assert f"1000 items resolve a difference of {connor_gap(1000, 0.18):.4g}" in result.output


def test_the_report_answers_the_bias_items_from_the_signature_and_gives_latex(plain) -> None:
    url = reverse("report", args=[plain.challenge.slug])
    page = htmllib.unescape(Client().get(url).content.decode())
    snap = BoardSnapshot.objects.filter(task=plain.task, split="public").latest("sequence")
    for label in ("Metric", "Number of test items", "Interval method", "Test", "Multiplicity correction",
                  "Ranking scheme", "Ties", "Missing results", "Ranking robustness"):  # fmt: skip
        assert f"<dt>{label}</dt>" in page, label
    assert "accuracy (higher is better)" in page and "60 (this board: public split)" in page
    assert snap.signature["signature_text"] in page
    tau = board_robustness(snap)["kendall_tau_b"]["median"]
    # the robustness orders the entries by exact values: before the reveal only organizers read it
    assert f"median {tau:.3f}" not in page and "Shown once the board is revealed" in page
    organizer = Client()
    organizer.force_login(plain.organizer)
    assert f"median {tau:.3f}" in htmllib.unescape(organizer.get(url).content.decode())
    tex = Client().get(url, {"format": "tex"})
    assert tex["Content-Disposition"].endswith('-boards.tex"')
    text = tex.content.decode()
    assert text.startswith("\\begin{table}") and "\\toprule" in text
    leader = snap.rows[0]
    assert f"alpha & {leader['value']:.4f} [{leader['low']:.4f}, {leader['high']:.4f}] & $\\circ$" in text
    file = Client().get(url, {"format": "html"})
    assert file.content.decode().startswith("<!doctype html>") and "BIAS" in file.content.decode()


def test_the_report_withholds_a_ladder_board_before_the_reveal(board) -> None:  # noqa: F811
    _organizer, alice, *_ = board
    web = Client()
    web.force_login(alice)
    page = htmllib.unescape(web.get(reverse("report", args=["lad"])).content.decode())
    assert "Not available under the Ladder" in page and "<dt>Metric</dt>" not in page
    assert (
        "\\begin{table}" not in web.get(reverse("report", args=["lad"]), {"format": "tex"}).content.decode()
    )
