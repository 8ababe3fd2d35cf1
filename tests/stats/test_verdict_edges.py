"""Slow A/A simulations: the board's verdicts hold their level at the edges (issue 21; docs/comparisons.md,
"Verdicts at the edges").

Few clusters (3, 6, 12, 30 of 20 items), few items (10, 30, 100), few positives (3, 5, 10, 30 of 500 items)
for ROC AUC and average precision; accuracy, macro-F1 and RMSE; K = 2 and 5 or 10 entries of equal true
quality. Each cell asserts that the share of boards with any false "worse than the best" or "best" is at
most ``alpha + 3`` Monte Carlo standard errors of a rate of ``alpha`` (3 so that about 1 in 700 cells fails
by chance, not 1 in 40 at 2). Run ``python -m tests.stats.verdict_edges_simulation`` for the table.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.stats.verdict_edges_simulation import (
    ALPHA,
    CLUSTER_CELLS,
    ITEM_CELLS,
    POSITIVE_CELLS,
    decomposable_cell,
    positives_cell,
)

pytestmark = pytest.mark.slow


def _cells(
    table: tuple[tuple[str, tuple[str, ...], tuple[int, ...], tuple[int, ...], int], ...],
) -> list[tuple]:
    return [
        (design, metric, k, size, boards)
        for design, metrics, ks, sizes, boards in table
        for metric in metrics
        for k in ks
        for size in sizes
    ]


def _check(rate: float, boards: int) -> None:
    assert rate <= ALPHA + 3 * np.sqrt(ALPHA * (1 - ALPHA) / boards)


@pytest.mark.parametrize(("design", "metric", "k", "size", "boards"), _cells(CLUSTER_CELLS + ITEM_CELLS))
def test_false_claims_with_few_clusters_or_items(
    design: str, metric: str, k: int, size: int, boards: int
) -> None:
    cell = decomposable_cell(design, metric, k, size, boards)
    print(f"\n[figure] A/A {design}={size} {metric} K={k}: {cell.rate:.3f} ({cell.verdict_tests})")
    _check(cell.rate, boards)
    if design == "clusters" and size == 3:
        assert cell.verdict_tests == "declined"  # no exact test reaches 0.05 with 3 clusters


@pytest.mark.parametrize(("design", "metric", "k", "size", "boards"), _cells(POSITIVE_CELLS))
def test_false_claims_with_few_positives(design: str, metric: str, k: int, size: int, boards: int) -> None:
    cell = positives_cell(metric, k, size, boards)
    print(f"\n[figure] A/A positives={size} {metric} K={k}: {cell.rate:.3f} ({cell.verdict_tests})")
    _check(cell.rate, boards)
