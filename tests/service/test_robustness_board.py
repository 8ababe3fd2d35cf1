"""Ranking robustness of each board (issue 23, item 2), built on first read and kept per snapshot (not by the
rebuild), checked against a direct computation from the stored replicates and per-item results, and scipy's
``kendalltau``."""

from __future__ import annotations

import html as htmllib

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse
from scipy import stats as sps

from leaderboard.rankings import board as board_module
from leaderboard.rankings.models import BoardSnapshot, RobustnessReport
from leaderboard.rankings.services import board_robustness
from leaderboard.scoring.models import Score
from tests.service import web_support as ws
from tests.service.test_ladder_board import _fresh, board  # noqa: F401 (fixtures)


@pytest.fixture
def plain(db, django_capture_on_commit_callbacks):
    return ws.make_board(django_capture_on_commit_callbacks)


def _snapshot(task) -> BoardSnapshot:
    return BoardSnapshot.objects.filter(task=task, split="public").latest("sequence")


def _stored(snap: BoardSnapshot) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Values, replicates and per-item right/wrong in the board's row order."""
    scores = {s.submission_id: s for s in Score.objects.filter(task=snap.task, split="public")}
    ordered = [scores[r["submission_id"]] for r in snap.rows]
    values = np.array([s.value for s in ordered])
    theta = np.column_stack([s.replicate_array() for s in ordered])
    right = np.column_stack([np.asarray(s.item_statistics_array())[:, 0] for s in ordered])
    return values, theta, right


def test_rank_frequencies_and_tau_b_match_a_direct_computation(plain) -> None:
    snap = _snapshot(plain.task)
    rob = board_robustness(snap)
    assert rob["available"] and [e["name"] for e in rob["entries"]] == [r["name"] for r in snap.rows]
    values, theta, _ = _stored(snap)
    # ranks in every resample, min ranks with 1 = best, by scipy
    ranks = np.apply_along_axis(lambda v: sps.rankdata(-v, method="min"), 1, theta).astype(int)
    k = theta.shape[1]
    for j, entry in enumerate(rob["entries"]):
        shares = np.bincount(ranks[:, j], minlength=k + 1)[1:] / len(ranks)
        assert entry["frequencies"] == pytest.approx(shares, abs=1e-6)
        cumulative = np.cumsum(shares)
        assert entry["median"] == int(np.argmax(cumulative >= 0.5 - 1e-9)) + 1
    board_ranks = sps.rankdata(-values, method="min")
    taus = np.array([sps.kendalltau(board_ranks, r).statistic for r in ranks])
    taus = taus[np.isfinite(taus)]
    assert rob["kendall_tau_b"]["median"] == pytest.approx(np.median(taus), abs=1e-12)
    assert rob["kendall_tau_b"]["mean"] == pytest.approx(taus.mean(), abs=1e-12)
    assert rob["text"].startswith("Rank over") and rob["svg"].startswith("<?xml")


def test_the_rebuild_builds_none_and_the_first_read_builds_and_keeps_it(plain, monkeypatch) -> None:
    snap = _snapshot(plain.task)
    # the rebuild stored what the test set resolves and the scores it read, not the robustness
    assert set(snap.robustness) == {"resolution", "scores"} and not RobustnessReport.objects.exists()
    url = reverse("robustness", args=[plain.challenge.slug, plain.task.slug])
    # a participant before the reveal reads it withheld, and builds nothing
    assert "Shown once the board is revealed" in htmllib.unescape(Client().get(url).content.decode())
    assert not RobustnessReport.objects.exists()
    # without the blob plot (the API, the summary's schemes), then with it (the page): drawn once, the
    # numbers the same
    plain_read = board_robustness(snap, svg=False)
    assert plain_read["svg"] == "" and RobustnessReport.objects.get().svg is None
    first = board_robustness(snap)
    assert RobustnessReport.objects.get().snapshot == snap and "scores" not in first
    assert first["svg"].startswith("<?xml") and {**first, "svg": ""} == plain_read
    assert first["resolution"] == snap.robustness["resolution"]

    def refuse(**kwargs):
        raise AssertionError("built twice")

    monkeypatch.setattr(board_module, "build_snapshot_robustness", refuse)
    again = board_robustness(BoardSnapshot.objects.get(pk=snap.pk))  # another process: read from the database
    assert again == first


def test_a_board_rescored_since_says_so_instead_of_mixing_scores(plain) -> None:
    snap = _snapshot(plain.task)
    score = Score.objects.filter(task=plain.task, split="public").first()
    score.save()  # a re-score: its scored_at moves on
    rob = board_robustness(snap)
    assert rob["available"] is False and "re-scored" in rob["reason"] and "resolution" in rob


def test_the_three_schemes_match_a_direct_computation(plain) -> None:
    snap = _snapshot(plain.task)
    schemes = {s["scheme"]: s for s in board_robustness(snap)["schemes"]["schemes"]}
    values, _, right = _stored(snap)
    assert schemes["aggregate-then-rank"]["ranks"] == list(sps.rankdata(-values, method="min").astype(int))
    item_ranks = np.apply_along_axis(lambda v: sps.rankdata(-v, method="min"), 1, right)
    assert schemes["rank-then-aggregate"]["scores"] == pytest.approx(item_ranks.mean(axis=0))
    # gamma (20 wrong) loses a one-sided Wilcoxon test to alpha and beta; alpha and beta differ on one item
    assert schemes["test-then-rank"]["scores"] == [1.0, 1.0, 0.0]


def test_the_page_shows_the_blob_plot_its_text_and_the_schemes(plain) -> None:
    url = reverse("robustness", args=[plain.challenge.slug, plain.task.slug])
    # before the reveal a participant or visitor reads no per-entry robustness: it orders the entries by
    # their exact values (issue 21, item 8)
    withheld = htmllib.unescape(Client().get(url).content.decode())
    assert "Shown once the board is revealed" in withheld and 'id="blob-text"' not in withheld
    organizer = Client()
    organizer.force_login(plain.organizer)
    page = htmllib.unescape(organizer.get(url).content.decode())
    assert 'src="data:image/svg+xml;base64,' in page and 'id="blob-text"' in page
    assert "Rank over " in page and "Kendall's tau-b with the full ranking" in page
    assert 'id="schemes-table"' in page and "Rank per item, then aggregate" in page
    board_page = Client().get(reverse("challenge", args=[plain.challenge.slug])).content.decode()
    assert url in board_page


def test_large_boards_state_the_rule_instead(monkeypatch) -> None:
    monkeypatch.setattr(board_module, "ROBUSTNESS_MAX_ENTRIES", 2)
    out = board_module.build_robustness(
        rows=[{"name": n, "key": n} for n in "abc"],
        values=np.array([0.9, 0.8, 0.7]),
        theta=np.random.default_rng(0).normal([0.9, 0.8, 0.7], 0.05, size=(100, 3)),
        item_scores=None,
        higher_is_better=True,
        confidence=0.95,
        title="t",
    )
    assert out == {"available": False, "reason": out["reason"]} and "up to 2 entries" in out["reason"]


def test_the_ladder_refuses_the_page_before_the_reveal(board) -> None:  # noqa: F811
    organizer, alice, *_ = board
    url = reverse("robustness", args=["lad", "main"])
    web = Client()
    web.force_login(alice)
    assert web.get(url).status_code == 404
    web.force_login(organizer)
    assert web.get(url).status_code == 200


def test_the_summary_puts_the_schemes_side_by_side_across_tasks_with_their_consensus(
    db, django_capture_on_commit_callbacks
) -> None:
    from leaderboard.rankings.models import ChallengeSummary
    from stats.robustness import challenge_ranking, ranking_schemes

    b = ws.make_board(django_capture_on_commit_callbacks, two_tasks=True)
    data = ChallengeSummary.objects.filter(challenge=b.challenge, split="public").latest("sequence").data
    got = data["ranking_schemes"]
    assert got["available"] and got["names"] == ["alpha", "beta", "gamma"]
    # the library on the per-item results directly (every entry is on both boards)
    per_task = {}
    for task in b.challenge.tasks.order_by("pk"):
        snap = _snapshot(task)
        _, _, right = _stored(snap)
        per_task[task.slug] = ranking_schemes(
            right, higher_is_better=True, names=[r["name"] for r in snap.rows]
        )
    want = challenge_ranking(per_task)
    for scheme, c in want.consensus.items():
        assert got["consensus"][scheme]["ranks"] == list(c.ranks)
        assert got["consensus"][scheme]["mean_ranks"] == pytest.approx(c.mean_ranks)
    organizer = Client()
    organizer.force_login(b.organizer)
    page = organizer.get(reverse("summary", args=[b.challenge.slug])).content.decode()
    assert 'id="consensus-table"' in page and "rank-then-aggregate" in page
    # Before the reveal a visitor reads the summary of the values at the board's precision, which has no
    # schemes (they rank by exact values; issue 21, item 8), and why.
    visitor = Client().get(reverse("summary", args=[b.challenge.slug])).content.decode()
    assert 'id="consensus-table"' not in visitor and "Shown once the board is revealed" in visitor


def test_the_api_gives_it_through_the_read_policy(plain) -> None:
    """GET /api/challenges/<slug>/tasks/<task>/robustness/: organizers read it at any time; a participant
    reads it withheld before the reveal (and builds nothing) and in full after; the numbers are the stored
    ones as the read policy rounds them."""
    from leaderboard.challenges.services import challenge_reveal_private
    from tests.service.api_support import client_for

    url = f"/api/challenges/{plain.challenge.slug}/tasks/{plain.task.slug}/robustness/"
    before = client_for(plain.alice).get(url)
    assert before.status_code == 200 and before.json()["sequence"] == _snapshot(plain.task).sequence
    withheld = before.json()["robustness"]
    assert withheld["available"] is False and "Shown once the board is revealed" in withheld["reason"]
    assert "entries" not in withheld and "kendall_tau_b" not in withheld and "resolution" in withheld
    assert not RobustnessReport.objects.exists()
    assert client_for(None).get(url).json()["robustness"]["available"] is False

    organizer = client_for(plain.organizer).get(url).json()["robustness"]
    stored = board_robustness(_snapshot(plain.task))
    assert organizer["available"] is True and "svg" not in organizer
    assert [e["name"] for e in organizer["entries"]] == ["alpha", "beta", "gamma"]
    assert [e["median"] for e in organizer["entries"]] == [e["median"] for e in stored["entries"]]
    assert organizer["kendall_tau_b"]["median"] == stored["kendall_tau_b"]["median"]
    assert organizer["text"] == stored["text"] and "schemes" in organizer

    challenge_reveal_private(challenge=plain.challenge, while_open=True)
    after = client_for(plain.alice).get(url).json()["robustness"]
    assert after["available"] is True and after["entries"] == organizer["entries"]
    assert client_for(plain.alice).get(url + "?split=private").json()["sequence"] is None  # no such board
    assert client_for(plain.alice).get(url.replace(plain.task.slug, "nope")).status_code == 404


def test_the_api_schema_types_it() -> None:
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    op = schema["paths"]["/api/challenges/{slug}/tasks/{task}/robustness/"]["get"]
    ref = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert ref.endswith("/RobustnessOutput")
    props = schema["components"]["schemas"]["Robustness"]["properties"]
    assert {"available", "entries", "kendall_tau_b", "schemes", "resolution"} <= set(props)


def test_the_api_refuses_it_on_a_ladder_board_before_the_reveal(board) -> None:  # noqa: F811
    from tests.service.api_support import client_for

    organizer, alice, *_ = board
    url = "/api/challenges/lad/tasks/main/robustness/"
    assert client_for(alice).get(url).status_code == 404
    assert client_for(organizer).get(url).status_code == 200
