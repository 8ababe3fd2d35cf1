"""The board and the randomization test give the numbers of the code before the second pass of issue 14
(``tests.benchmarks._baseline_v1``, the bench's named baseline) to the last bit."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

import stats.board as board_module
from stats.board import Board, build_board
from stats.compare import paired_randomization
from stats.compare_ranks import _gram_operand, _pair_standard_errors
from stats.metrics import get_metric
from tests.benchmarks import _baseline_v1


@contextmanager
def _v1() -> Iterator[None]:
    """The baseline's board, its standard errors from the Gram operand of issue 24 (the deviations rounded
    per column so that the Gram matrix is exact on any BLAS, ``stats.compare_ranks._gram_operand``): the one
    intended change of the numbers since the baseline; everything else must give its bits."""
    saved = (
        board_module.rank_distribution,
        board_module.simultaneous_ranks,
        _baseline_v1._pair_standard_errors,
    )
    pair_standard_errors = _baseline_v1._pair_standard_errors
    board_module.rank_distribution = _baseline_v1.rank_distribution  # type: ignore[assignment]
    board_module.simultaneous_ranks = _baseline_v1.simultaneous_ranks  # type: ignore[assignment]
    _baseline_v1._pair_standard_errors = lambda y: pair_standard_errors(_gram_operand(y))
    try:
        yield
    finally:
        (
            board_module.rank_distribution,
            board_module.simultaneous_ranks,
            _baseline_v1._pair_standard_errors,
        ) = saved


def test_the_gram_operand_moves_the_standard_errors_by_less_than_a_millionth() -> None:
    """The documented size of the change: on a board with few items the standard errors of the exact Gram
    matrix differ from the unrounded ones by less than 1e-6 relative."""
    rng = np.random.default_rng(1)
    n, b, k = 50, 300, 40
    correct = (rng.random((n, k)) < rng.uniform(0.5, 0.8, k)).astype(float)
    correct[:, 1] = correct[:, 0]
    theta = rng.multinomial(n, np.full(n, 1 / n), size=b).astype(float) @ correct / n
    y = theta - correct.mean(axis=0)
    se_new, sd_new = _pair_standard_errors(y)
    se_old, sd_old = _baseline_v1._pair_standard_errors(y)
    np.testing.assert_allclose(se_new, se_old, rtol=1e-6, atol=0)
    np.testing.assert_allclose(sd_new, sd_old, rtol=1e-6, atol=0)
    assert se_new[0, 1] == 0.0  # identical entries stay at exactly 0


def _input_order(board: Board, table: np.ndarray) -> np.ndarray:
    """A (K, K) table of the board (rows in rank order) back in the input order (names "t<i>")."""
    idx = [int(r.name[1:]) for r in board.rows]
    out = np.empty_like(table)
    out[np.ix_(idx, idx)] = table
    return out


def _same(a: Board, b: Board) -> None:
    assert a.as_dict() == b.as_dict()
    assert np.array_equal(a.better, b.better)
    assert np.array_equal(a.rank_probabilities, b.rank_probabilities)
    # the pairwise standard errors: the baseline's upper triangle (input order) to the last bit; its lower
    # triangle differed from the upper one in the last bit for a few pairs, the new table is symmetric
    se_a = _input_order(a, a.pair_standard_errors)
    se_b = _input_order(b, b.pair_standard_errors)
    upper = np.triu_indices(se_a.shape[0], 1)
    assert np.array_equal(se_a[upper], se_b[upper])
    assert np.array_equal(se_a, se_a.T)
    np.testing.assert_allclose(se_a, se_b, rtol=1e-14, atol=0)


@pytest.mark.parametrize(
    ("seed", "k", "higher"), [(0, 12, True), (1, 40, False), (2, 90, True), (3, 120, False)]
)
def test_board_equals_the_baseline(seed: int, k: int, higher: bool) -> None:
    rng = np.random.default_rng(seed)
    n, b = 50, 300  # few items: many exact ties between entries and between resamples
    correct = (rng.random((n, k)) < rng.uniform(0.5, 0.8, k)).astype(float)
    correct[:, 1] = correct[:, 0]  # two identical entries (se = 0)
    counts = rng.multinomial(n, np.full(n, 1 / n), size=b).astype(float)
    theta = counts @ correct / n
    point = correct.mean(axis=0)
    if not higher:
        theta, point = 1 - theta, 1 - point
    args: dict[str, Any] = {
        "names": [f"t{i}" for i in range(k)],
        "values": point,
        "replicates": theta,
        "higher_is_better": higher,
        "metric_name": "accuracy",
        "seed": 0,
        "interval": "percentile",
        "test": "bootstrap",
        "n_items": n,
    }
    new = build_board(**args)
    with _v1():
        old = build_board(**args)
    _same(new, old)


@pytest.mark.parametrize("metric_name", ["accuracy", "macro_f1", "mae"])
def test_randomization_equals_the_baseline(metric_name: str) -> None:
    rng = np.random.default_rng(5)
    metric = get_metric(metric_name)
    n, k = 300, 30
    truth: np.ndarray
    preds: list[np.ndarray]
    if metric_name == "mae":
        truth = rng.normal(size=n)
        preds = [truth + rng.normal(scale=rng.uniform(0.5, 1.0), size=n) for _ in range(k)]
        preds[4] = preds[0].copy()  # an entry equal to another
        stats = [metric.item_statistics(truth, p) for p in preds]
    else:
        truth = rng.integers(0, 3, n)
        preds = [np.where(rng.random(n) < rng.uniform(0.5, 0.9), truth, (truth + 1) % 3) for _ in range(k)]
        preds[4] = preds[7].copy()
        stats = [metric.item_statistics(truth, p, labels=[0, 1, 2]) for p in preds]
    for reference in (0, 7, k - 1):
        new = paired_randomization(
            stats, finalize=metric.finalize, reference=reference, randomizations=700, seed=3
        )
        old = _baseline_v1.paired_randomization_v1(
            stats, finalize=metric.finalize, reference=reference, randomizations=700, seed=3
        )
        assert np.array_equal(new.counts, old.counts)
        assert np.array_equal(new.p_values, old.p_values)
        assert np.array_equal(new.observed, old.observed)
