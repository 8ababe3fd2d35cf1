"""Tests of stats.board.build_board, end to end from the engine's replicates."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from stats.board import build_board, discordant_counts
from stats.compare import holm, items_needed_mcnemar
from stats.engine import score_entries
from stats.metrics import get_metric

ACCURACY = get_metric("accuracy")


def _task(n: int = 400, seed: int = 0) -> tuple[np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, n)
    preds = []
    for q in (0.80, 0.78, 0.70, 0.55):
        preds.append(np.where(rng.random(n) < q, truth, rng.integers(0, 3, n)))
    preds.append(preds[1].copy())  # a twin of entry 1
    return truth, preds


NAMES = ["alpha", "bravo", "charlie", "delta", "echo"]


def _board(metric: str = "accuracy", *, order: list[int] | None = None, **options):  # type: ignore[no-untyped-def]
    truth, preds = _task()
    order = order or list(range(len(preds)))
    preds = [preds[i] for i in order]
    names = [NAMES[i] for i in order]
    m = get_metric(metric)
    scores = score_entries(truth, preds, metric=m, labels=[0, 1, 2], names=names, resamples=1000, seed=7)
    kwargs = {
        "names": names,
        "values": [s.value for s in scores],
        "replicates": np.column_stack([s.replicates for s in scores]),
        "jackknife": np.column_stack([s.jackknife for s in scores]),
        "higher_is_better": m.higher_is_better,
        "metric_name": m.name,
        "seed": 7,
        "randomizations": 2000,
    }
    if not m.rank_based:
        kwargs["item_statistics"] = [m.item_statistics(truth, p, labels=[0, 1, 2]) for p in preds]
        kwargs["finalize"] = m.finalize
        kwargs["zero_one"] = m.zero_one
    kwargs.update(options)
    return build_board(**kwargs), truth, preds


def test_accuracy_board_uses_mcnemar_against_the_leader() -> None:
    board, truth, preds = _board()
    assert board.test == "mcnemar"
    assert board.leader == "alpha"
    leader = board.row("alpha")
    assert leader.rank == 1 and leader.is_leader and leader.p_value == 1.0
    # the leader's difference is to the entry least separated from it (the runner-up here)
    assert leader.compared_with == "bravo" and leader.difference == pytest.approx(0.02)
    right = [p == truth for p in preds]
    for i, name in enumerate(NAMES[1:], start=1):
        only_entry = int((right[i] & ~right[0]).sum())
        only_leader = int((~right[i] & right[0]).sum())
        n = only_entry + only_leader
        expected = 1.0 if n == 0 else sps.binomtest(only_entry, n, 0.5).pvalue
        row = board.row(name)
        assert row.p_value == pytest.approx(expected, rel=1e-12)
        assert (
            row.items_needed == items_needed_mcnemar(gap=(only_entry - only_leader) / 400, discordant=n / 400)
            if only_entry != only_leader
            else row.items_needed is None
        )
    raw = [board.row(n).p_value for n in NAMES[1:]]
    np.testing.assert_allclose([board.row(n).adjusted_p_value for n in NAMES[1:]], holm(raw))
    assert [r.rank for r in board.rows] == sorted(r.rank for r in board.rows)


def test_discordant_counts_are_the_pair_tests_counts() -> None:
    """The library's McNemar counts (what the service's pairwise page shows) count each pair's items one
    entry has right and the other wrong, and give the board's own pair-test p-values."""
    board, truth, preds = _board()
    metric = get_metric("accuracy")
    counts = discordant_counts([metric.item_statistics(truth, p) for p in preds])
    right = [p == truth for p in preds]
    for i in range(len(preds)):
        for j in range(len(preds)):
            assert counts[i, j] == int((right[i] & ~right[j]).sum())
    for i, name in enumerate(NAMES[1:], start=1):
        n = int(counts[i, 0] + counts[0, i])
        expected = 1.0 if n == 0 else sps.binomtest(int(counts[i, 0]), n, 0.5).pvalue
        assert board.row(name).p_value == pytest.approx(expected, rel=1e-12)


def test_identical_entries_get_identical_numbers() -> None:
    board, _, _ = _board()
    a = board.row("bravo").as_dict()
    b = board.row("echo").as_dict()
    a.pop("name"), b.pop("name")
    assert a == b


def test_best_sets_and_rank_intervals_are_consistent() -> None:
    board, _, _ = _board()
    for row in board.rows:
        lo, hi = row.simultaneous_rank_interval
        assert lo <= row.rank <= hi
        assert row.in_best_set == row.in_best_set_max_t
        assert row.in_best_set_max_t == (lo == 1)
        if row.is_leader:
            assert row.in_best_set_holm and row.in_best_set_max_t
    assert not board.row("delta").in_best_set  # 0.55 vs 0.80 on 400 items is resolved
    np.testing.assert_allclose(board.rank_probabilities.sum(axis=1), 1.0)


@given(st.permutations(list(range(5))))
@settings(max_examples=8, deadline=None)
def test_input_order_never_changes_a_number(order: list[int]) -> None:
    base, _, _ = _board(test="randomization")
    moved, _, _ = _board(order=order, test="randomization")
    assert _rounded(base.as_dict()) == _rounded(moved.as_dict())


def _rounded(doc: object) -> object:
    """Floats to 10 significant digits: BLAS may sum a permuted covariance in another order."""
    if isinstance(doc, float):
        return float(f"{doc:.10g}")
    if isinstance(doc, dict):
        return {k: _rounded(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_rounded(v) for v in doc]
    return doc


def test_randomization_for_macro_f1_and_bootstrap_for_auc() -> None:
    board, _, _ = _board("macro_f1")
    assert board.test == "randomization"
    assert board.signature.as_dict()["extra"]["randomizations"] == "2000"
    rng = np.random.default_rng(1)
    truth = rng.integers(0, 2, 300)
    scores = [truth * s + rng.normal(0, 1, 300) for s in (1.5, 1.0, 0.2)]
    entries = score_entries(truth, scores, metric="roc_auc", names=["a", "b", "c"], resamples=800, seed=3)
    auc = build_board(
        names=["a", "b", "c"],
        values=[e.value for e in entries],
        replicates=np.column_stack([e.replicates for e in entries]),
        higher_is_better=True,
        metric_name="roc_auc",
        seed=3,
        interval="basic",
        n_items=300,
    )
    assert auc.test == "bootstrap-basic"
    assert auc.leader == "a"
    assert auc.row("c").p_value < 0.01
    assert auc.row("c").items_needed is not None and auc.row("c").items_needed < 300


def test_lower_is_better_metric() -> None:
    rng = np.random.default_rng(2)
    truth = rng.normal(size=200)
    preds = [truth + rng.normal(0, s, 200) for s in (0.5, 0.3, 1.0)]
    entries = score_entries(truth, preds, metric="rmse", names=["x", "y", "z"], resamples=500, seed=1)
    m = get_metric("rmse")
    board = build_board(
        names=["x", "y", "z"],
        values=[e.value for e in entries],
        replicates=np.column_stack([e.replicates for e in entries]),
        higher_is_better=False,
        metric_name="rmse",
        seed=1,
        item_statistics=[m.item_statistics(truth, p) for p in preds],
        finalize=m.finalize,
        randomizations=500,
        runs=[[0.31, 0.30, 0.32], None, [1.0, 1.1]],
    )
    assert board.leader == "y"
    assert board.row("x").difference > 0  # value - leader, in metric units
    assert board.row("x").n_runs == 3 and board.row("y").runs is None
    doc = board.as_dict()
    json.dumps(doc, allow_nan=False)
    assert doc["signature"]["metric"] == "rmse" and doc["rows"][0]["name"] == "y"


def test_validation_names_the_parameter() -> None:
    good = {
        "names": ["a", "b"], "values": [0.5, 0.4], "replicates": np.ones((10, 2)), "higher_is_better": True,
        "metric_name": "m", "seed": 0,
    }  # fmt: skip
    with pytest.raises(ValueError, match="`names` must hold at least one name, all unique"):
        build_board(**{**good, "names": ["a", "a"]})
    with pytest.raises(ValueError, match=r"`replicates` must have shape \(B, 2\)"):
        build_board(**{**good, "replicates": np.ones((10, 3))})
    with pytest.raises(ValueError, match="`interval` 'bca' needs `jackknife`"):
        build_board(**good, interval="bca")
    with pytest.raises(ValueError, match="`test` 'mcnemar' needs `item_statistics`"):
        build_board(**good, test="mcnemar")
    with pytest.raises(ValueError, match="`values` disagree with `finalize`"):
        build_board(
            **good,
            item_statistics=[np.ones((4, 1)), np.zeros((4, 1))],
            finalize=ACCURACY.finalize,
            zero_one=True,
        )
    with pytest.raises(ValueError, match="`correction` must be one of"):
        build_board(**good, correction="bonferroni")


def test_a_board_of_one_entry() -> None:
    theta = np.random.default_rng(0).normal(0.5, 0.01, (100, 1))
    board = build_board(
        names=["solo"], values=[0.5], replicates=theta, higher_is_better=True, metric_name="m", seed=0
    )
    (row,) = board.rows
    assert row.is_leader and row.in_best_set and row.simultaneous_rank_interval == (1, 1)
    assert json.loads(json.dumps(board.as_dict(), allow_nan=False))["max_t_critical_value"] is None
