"""stats.randomization (the randomization max-t) and the board's verdicts at the edges (issue 21)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from stats.board import (
    BOOTSTRAP_MAX_T,
    CLUSTER_RANDOMIZATION_MAX_T,
    DECLINED,
    ITEM_RANDOMIZATION_MAX_T,
    build_board,
)
from stats.cli import main
from stats.compare import cluster_sign_flip
from stats.engine import score_entries
from stats.metrics import get_metric
from stats.randomization import (
    Exchangeable,
    pooled_statistics,
    randomization_max_t,
    ranked_scores,
    smallest_p_value,
)


def _board(truth, preds, metric_name="accuracy", *, groups=None, **options):
    metric = get_metric(metric_name)
    labels = None if metric_name == "rmse" else [0, 1, 2]
    scores = score_entries(
        truth, preds, metric=metric_name, resamples=500, seed=1, groups=groups, labels=labels
    )
    stats = [metric.item_statistics(truth, p, labels=labels) for p in preds]
    return build_board(
        names=[f"e{i}" for i in range(len(preds))],
        values=[s.value for s in scores],
        replicates=np.column_stack([s.replicates for s in scores]),
        higher_is_better=metric.higher_is_better,
        metric_name=metric_name,
        seed=1,
        item_statistics=stats,
        finalize=metric.finalize,
        zero_one=metric.zero_one,
        grouped=groups is not None,
        groups=groups,
        interval="percentile",
        **options,
    )


def test_two_entries_equal_the_exact_cluster_sign_flip() -> None:
    metric = get_metric("macro_f1")
    rng = np.random.default_rng(5)
    truth = rng.integers(0, 3, 40)
    preds = [np.where(rng.random(40) < acc, truth, rng.integers(0, 3, 40)) for acc in (0.9, 0.6)]
    groups = np.arange(40) % 6
    stats = [metric.item_statistics(truth, p, labels=[0, 1, 2]) for p in preds]
    result = randomization_max_t(
        pooled_statistics(stats, metric.finalize, groups=groups), higher_is_better=True
    )
    flip = cluster_sign_flip(stats, groups=groups, finalize=metric.finalize, reference=0)
    assert result.exact and result.draws == 2**6 and flip.exact
    assert result.adjusted_p[0, 1] == pytest.approx(flip.p_values[1], abs=1e-15)
    assert result.marginal_p[0, 1] == result.adjusted_p[0, 1]  # one pair: no multiplicity


def test_exact_step_down_equals_brute_force() -> None:
    """Three entries on four units: all 6^4 assignments enumerated by hand; the first step's adjusted p is
    the share of assignments whose largest pairwise gap reaches the observed largest gap, the second
    step's the share whose largest gap over the other two pairs reaches the second largest."""
    rng = np.random.default_rng(3)
    per_unit = rng.integers(0, 6, (3, 4, 1)).astype(float)  # K x U x 1 counts

    def finalize(s: np.ndarray) -> np.ndarray:
        return np.asarray(s[..., 0] / 20.0)

    ex = pooled_statistics(list(per_unit), finalize)
    result = randomization_max_t(ex, higher_is_better=True)
    assert result.exact and result.draws == 6**4
    values = per_unit.sum(axis=1)[:, 0] / 20
    pairs = [(0, 1), (0, 2), (1, 2)]
    gaps = {p: abs(values[p[0]] - values[p[1]]) for p in pairs}
    ordered = sorted(pairs, key=lambda p: -gaps[p])
    perms = list(itertools.permutations(range(3)))
    hits = [0, 0, 0]
    for choice in itertools.product(perms, repeat=4):
        v = np.array([sum(per_unit[choice[u][i], u, 0] for u in range(4)) for i in range(3)]) / 20
        g = [abs(v[a] - v[b]) for a, b in ordered]
        for step in range(3):
            hits[step] += max(g[step:]) >= gaps[ordered[step]] - 1e-12
    expected = np.maximum.accumulate(np.array(hits) / 6**4)
    got = [result.adjusted_p[a, b] for a, b in ordered]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_the_smallest_p_value_of_a_design() -> None:
    assert smallest_p_value(2, 3) == 0.25
    assert smallest_p_value(2, 6) == 1 / 32
    assert smallest_p_value(3, 3) == 1 / 36


@pytest.mark.parametrize("positives", [3, 40, 297])
def test_ranked_scores_give_sklearns_values_for_any_assignment(positives: int) -> None:
    rng = np.random.default_rng(positives)
    n, k = 300, 3
    y = np.zeros(n, dtype=bool)
    y[rng.choice(n, positives, replace=False)] = True
    scores = [np.round(y + rng.normal(0, s, n), 1) for s in (0.5, 1.0, 2.0)]  # ties within and across
    raw = np.column_stack(scores)
    assign = np.stack([np.tile(np.arange(k), (n, 1)), rng.permuted(np.tile(np.arange(k), (n, 1)), axis=1)])
    for metric, oracle in (("roc_auc", roc_auc_score), ("average_precision", average_precision_score)):
        v = ranked_scores(y, scores, metric=metric).values(assign)
        np.testing.assert_allclose(v[0], [oracle(y, s) for s in scores], rtol=0, atol=1e-12)
        permuted = [raw[np.arange(n), assign[1, :, j]] for j in range(k)]
        np.testing.assert_allclose(v[1], [oracle(y, s) for s in permuted], rtol=0, atol=1e-12)


def test_any_construction_plugs_in() -> None:
    """The max-t takes any Exchangeable: here a corpus-level ratio (as corpus BLEU's precision is) of
    per-segment counts, written as a callable."""
    rng = np.random.default_rng(0)
    hits = rng.integers(0, 10, (3, 50)).astype(float)
    totals = np.full((3, 50), 10.0)
    hits[0] += 3  # entry 0 is clearly better

    def values(assign: np.ndarray) -> np.ndarray:
        seg = np.arange(50)[None, :, None]
        return np.asarray(hits[assign, seg].sum(axis=1) / totals[assign, seg].sum(axis=1))

    result = randomization_max_t(
        Exchangeable(n_units=50, n_entries=3, values=values, unit="segment"),
        higher_is_better=True,
        randomizations=999,
        seed=2,
    )
    assert not result.exact and result.draws == 999
    assert result.better[0, 1] and result.better[0, 2] and not result.better[1:, :].any()
    assert np.all(result.adjusted_p >= result.marginal_p - 1e-15)
    same = randomization_max_t(
        Exchangeable(n_units=50, n_entries=3, values=values),
        higher_is_better=True,
        randomizations=999,
        seed=2,
    )
    np.testing.assert_array_equal(same.adjusted_p, result.adjusted_p)  # seeded: reproducible


def test_three_clusters_cannot_decide_and_say_so() -> None:
    """The finding of issue 21: with 3 clusters the board said "worse than the best" next to an exact
    p = 0.25. Entry "e0" is right on every item, "e1" wrong on a quarter of them: the bootstrap (10 distinct
    resamples) separates them, no exact test can."""
    truth = np.zeros(60, dtype=int)
    preds = [truth.copy(), np.where(np.arange(60) % 4 == 0, 1, 0)]
    board = _board(truth, preds, groups=np.arange(60) % 3)
    assert board.verdict_test == DECLINED
    assert board.verdict_warning is not None and "cannot decide with 3 clusters" in board.verdict_warning
    assert "0.25" in board.verdict_warning
    assert [r.verdict for r in board.rows] == ["could be the best"] * 2
    worse = board.row("e1")
    assert worse.p_value == pytest.approx(0.25)  # the pair test: 2 of the 8 flips
    assert worse.difference_interval.low <= 0 <= worse.difference_interval.high
    assert dict(board.signature.extra)["verdict_test"] == DECLINED
    assert board.as_dict()["verdict_test"] == DECLINED


def test_enough_clusters_decide_a_clear_gap_by_randomization() -> None:
    rng = np.random.default_rng(1)
    truth = rng.integers(0, 3, 240)
    good = np.where(rng.random(240) < 0.95, truth, (truth + 1) % 3)
    bad = np.where(rng.random(240) < 0.4, truth, (truth + 1) % 3)
    board = _board(truth, [good, bad, good.copy()], groups=np.arange(240) % 12)
    assert board.verdict_test == CLUSTER_RANDOMIZATION_MAX_T and board.verdict_warning is None
    assert board.row("e1").verdict == "worse than the best"
    assert board.row("e1").p_value <= 0.05
    assert dict(board.signature.extra)["verdict_test"] == CLUSTER_RANDOMIZATION_MAX_T
    _rows_agree(board)


def _rows_agree(board) -> None:
    """Every row: the verdict, the difference interval, the pair test and the pairwise table agree."""
    table = board.pairwise()
    names = table["names"]
    for r in board.rows:
        decided = r.verdict != "could be the best"
        excludes = r.difference_interval.low > 0 or r.difference_interval.high < 0
        assert decided == excludes
        if r.verdict == "worse than the best":
            assert r.p_value <= board.alpha
        if r.compared_with is not None:
            i, j = names.index(r.name), names.index(r.compared_with)
            assert (table["low"][i][j], table["high"][i][j]) == (
                r.difference_interval.low,
                r.difference_interval.high,
            )


@pytest.mark.parametrize("seed", range(6))
def test_small_boards_use_the_randomization_max_t_and_agree(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = (10, 30, 100)[seed % 3]
    metric = ("accuracy", "macro_f1", "rmse")[seed % 3]
    truth: np.ndarray
    if metric == "rmse":
        truth = rng.normal(size=n)
        preds = [truth + rng.normal(0, s, n) for s in (0.5, 0.55, 1.5, 0.5)]
    else:
        truth = rng.integers(0, 3, n)
        preds = [np.where(rng.random(n) < a, truth, (truth + 1) % 3) for a in (0.9, 0.85, 0.3, 0.9)]
    board = _board(truth, preds, metric)
    assert board.verdict_test == ITEM_RANDOMIZATION_MAX_T
    assert dict(board.signature.extra)["verdict_test"] == ITEM_RANDOMIZATION_MAX_T
    _rows_agree(board)


def test_many_items_keep_the_bootstrap_max_t() -> None:
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 3, 400)
    preds = [np.where(rng.random(400) < a, truth, (truth + 1) % 3) for a in (0.9, 0.8)]
    board = _board(truth, preds)
    assert board.verdict_test == BOOTSTRAP_MAX_T and board.verdict_warning is None


def _auc_board(y: np.ndarray, scores: list[np.ndarray], **options):
    entries = score_entries(y, scores, metric="roc_auc", resamples=500, seed=0, jackknife=False)
    theta = np.column_stack([e.replicates for e in entries])
    return build_board(
        names=[f"e{i}" for i in range(len(scores))],
        values=[e.value for e in entries],
        replicates=theta[np.all(np.isfinite(theta), axis=1)],  # resamples without a positive dropped
        higher_is_better=True,
        metric_name="roc_auc",
        seed=0,
        interval="percentile",
        **options,
    )


def test_auc_with_few_positives_declines_without_scores_and_tests_with_them() -> None:
    rng = np.random.default_rng(4)
    y = np.zeros(500, dtype=int)
    y[:5] = 1
    scores = [y * 3.0 + rng.normal(size=500), y * 0.2 + rng.normal(size=500)]
    declined = _auc_board(y, scores, positives=5)
    assert declined.verdict_test == DECLINED
    assert declined.verdict_warning is not None and "fewer than 30 positives" in declined.verdict_warning
    assert all(r.verdict == "could be the best" for r in declined.rows)
    tested = _auc_board(y, scores, positives=5, exchangeable=ranked_scores(y == 1, scores, metric="roc_auc"))
    assert tested.verdict_test == ITEM_RANDOMIZATION_MAX_T
    _rows_agree(tested)
    plenty = _auc_board(y, scores, positives=30)  # at 30 positives the bootstrap decides
    assert plenty.verdict_test == BOOTSTRAP_MAX_T


def test_an_exchangeable_of_other_entries_is_refused() -> None:
    y = np.array([0, 1] * 20)
    scores = [np.linspace(0, 1, 40), np.linspace(1, 0, 40)]
    with pytest.raises(ValueError, match="2 entries"):
        _auc_board(y, scores, exchangeable=ranked_scores(y == 1, scores[:1], metric="roc_auc"))


def test_the_cli_tests_auc_with_few_positives_by_randomization(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's board said "worse" with p = 0.0038 where DeLong gave 0.117: with 5 positives of 300 the
    CLI now decides by the randomization max-t over the items, the pair test agrees with every verdict."""
    rng = np.random.default_rng(8)
    y = np.zeros(300, dtype=int)
    y[rng.choice(300, 5, replace=False)] = 1
    rows = [f"i{i},{'pos' if y[i] else 'neg'}" for i in range(300)]
    truth = tmp_path / "truth.csv"
    truth.write_text("id,label\n" + "\n".join(rows) + "\n")
    files = []
    for name, signal in (("a", 1.0), ("b", 0.9), ("c", 0.0)):
        score = signal * y + rng.normal(size=300)
        path = tmp_path / f"{name}.csv"
        path.write_text("id,score\n" + "\n".join(f"i{i},{score[i]:.6f}" for i in range(300)) + "\n")
        files.append(str(path))
    argv = ["leaderboard", "--truth", str(truth), "--metric", "roc_auc", "--labels", "neg,pos"]
    code = main([*argv, "--resamples", "300", "--format", "json", *files])
    out = capsys.readouterr().out
    assert code == 0
    board = json.loads(out)
    assert board["verdict_test"] == ITEM_RANDOMIZATION_MAX_T
    assert board["signature"]["extra"]["verdict_test"] == ITEM_RANDOMIZATION_MAX_T
    for row in board["rows"]:
        if row["verdict"] == "worse than the best":
            assert row["p_value"] <= 0.05


def test_a_board_of_one_entry_has_nothing_to_decide() -> None:
    truth = np.array([0, 1, 2, 0, 1] * 4)
    board = _board(truth, [truth.copy()])
    assert board.verdict_test == BOOTSTRAP_MAX_T and board.verdict_warning is None
    assert board.rows[0].verdict == "best" or board.rows[0].verdict == "could be the best"


def test_a_board_whose_pairs_are_all_decided_keeps_intervals_of_positive_width() -> None:
    """The last step's critical value when every pair is decided is that of the step that decided the last
    pair, as in the bootstrap max-t; the max over no pair (0) gave zero-width difference intervals."""
    from stats.board import build_board
    from stats.metrics import get_metric

    rng = np.random.default_rng(0)
    n = 200
    y = rng.integers(0, 2, n)
    preds = [np.where(rng.random(n) < q, y, 1 - y) for q in (0.95, 0.7, 0.5)]
    metric = get_metric("accuracy")
    stats_list = [metric.item_statistics(y, p) for p in preds]
    values = [float(metric.finalize(s.sum(axis=0)[None, :])[0]) for s in stats_list]
    weights = np.stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(500)]).astype(float)
    theta = np.column_stack([metric.finalize(weights @ s) for s in stats_list])
    board = build_board(
        names=["a", "b", "c"], values=values, replicates=theta, higher_is_better=True,
        metric_name="accuracy", seed=0, item_statistics=stats_list, finalize=metric.finalize,
        zero_one=True, n_items=n,
    )  # fmt: skip
    assert board.verdict_test == "randomization max-t over items"
    for row in board.rows:
        if row.difference is not None and row.verdict == "worse than the best":
            assert row.difference_interval.low < row.difference_interval.high, row
