"""Issue 14: the faster computations give the numbers of the implementations before it (tests.benchmarks._baseline)."""

from __future__ import annotations

import numpy as np
import pytest

from stats.compare import paired_randomization
from stats.compare_ranks import rank_distribution
from stats.intervals import _quantiles, bootstrap_bounds
from stats.metrics import get_metric
from tests.benchmarks._baseline import paired_randomization_v0, quantiles_v0, rank_counts_v0


def _entries(metric: str, k: int, n: int, seed: int) -> tuple[list[np.ndarray], object]:
    rng = np.random.default_rng(seed)
    m = get_metric(metric)
    if metric == "rmse":
        truth = rng.normal(0, 1, n)
        preds = [truth + rng.normal(0, 0.5 + 0.1 * j, n) for j in range(k)]
        return [m.item_statistics(truth, p) for p in preds], m.finalize
    truth = rng.integers(0, 4, n)
    preds = []
    for j in range(k):
        p = truth.copy()
        wrong = rng.random(n) < 0.2 + 0.02 * j
        p[wrong] = rng.integers(0, 4, int(wrong.sum()))
        preds.append(p)
    preds[2] = preds[1].copy()  # an entry identical to another
    labels = list(range(4))
    return [m.item_statistics(truth, p, labels=labels) for p in preds], m.finalize


@pytest.mark.parametrize("metric", ["accuracy", "macro_f1", "rmse"])
@pytest.mark.parametrize("reference", [0, 1, 4])
def test_randomization_counts_equal_the_product_over_every_item(metric: str, reference: int) -> None:
    stats, finalize = _entries(metric, 7, 600, seed=3)
    new = paired_randomization(stats, finalize=finalize, reference=reference, randomizations=1500, seed=9)
    old = paired_randomization_v0(stats, finalize=finalize, reference=reference, randomizations=1500, seed=9)
    np.testing.assert_array_equal(new.counts, old.counts)
    np.testing.assert_array_equal(new.p_values, old.p_values)
    np.testing.assert_array_equal(new.observed, old.observed)


def test_randomization_when_every_entry_equals_the_reference() -> None:
    stats, finalize = _entries("accuracy", 3, 50, seed=1)
    same = [stats[0], stats[0].copy(), stats[0].copy()]
    result = paired_randomization(same, finalize=finalize, reference=1, randomizations=100, seed=0)
    np.testing.assert_array_equal(result.p_values, [1.0, 1.0, 1.0])


@pytest.mark.parametrize("higher", [True, False])
def test_rank_counts_equal_the_stable_ranking(higher: bool) -> None:
    rng = np.random.default_rng(5)
    theta = rng.integers(0, 6, size=(700, 40)).astype(float) / 5  # many ties
    counts = rank_distribution(theta, higher_is_better=higher).probabilities * 700
    np.testing.assert_array_equal(
        np.round(counts).astype(np.int64), rank_counts_v0(theta, higher_is_better=higher)
    )


def test_interval_quantiles_by_selection_equal_the_sort() -> None:
    rng = np.random.default_rng(6)
    theta = rng.normal(size=(999, 30))
    theta[:, 3] = 0.5  # constant column
    theta[:100, 4] = theta[100:200, 4]  # ties
    same = np.stack([np.full(30, 0.025), np.full(30, 0.975)])
    varying = np.stack([rng.uniform(0, 0.2, 30), rng.uniform(0.8, 1.0, 30)])
    varying[:, 5] = [0.0, 1.0]
    for probs in (same, varying):
        np.testing.assert_array_equal(_quantiles(theta, probs), quantiles_v0(theta, probs))
    low, high = bootstrap_bounds(theta, point=theta.mean(axis=0), method="percentile")
    np.testing.assert_allclose(low, np.quantile(theta, 0.025, axis=0), rtol=1e-13)
    np.testing.assert_allclose(high, np.quantile(theta, 0.975, axis=0), rtol=1e-13)
