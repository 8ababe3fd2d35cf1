"""Slow: coverage of 95% intervals of a proportion over a grid of n, p and grouping (docs/stats.md).

Run with ``pytest -m slow tests/stats/test_coverage_grid.py -s``: it prints every cell and the worst
case per method, from which ``stats.board.default_interval`` chooses (Wilson for plain proportions, the
bootstrap for grouped items).

Plain: n items right independently with probability p. Grouped: n items in clusters of 10 whose
probability of being right is Beta-distributed with mean p and intra-cluster correlation 0.1; the
bootstrap resamples clusters. Wilson is computed on the grouped data too (ignoring the clusters) to show
why it is not offered there.
"""

from __future__ import annotations

import numpy as np
import pytest

from stats.engine import score_entries
from stats.intervals import intervals_for, proportion_bounds

pytestmark = pytest.mark.slow

REPS = 400
RESAMPLES = 1000
CLUSTER = 10
ICC = 0.1
METHODS = ("bca", "percentile", "basic", "wilson")
GRID = [(n, p) for n in (30, 100, 1000) for p in (0.5, 0.9, 0.98)]
_results: dict[tuple[bool, int, float], dict[str, float]] = {}


def _coverage(n: int, p: float, grouped: bool) -> dict[str, float]:
    rng = np.random.default_rng([n, int(p * 1000), grouped])
    hits = dict.fromkeys(METHODS, 0)
    truth = np.zeros(n, dtype=int)
    groups = np.arange(n) // CLUSTER if grouped else None
    for rep in range(REPS):
        if grouped:
            a = p * (1 - ICC) / ICC
            b = (1 - p) * (1 - ICC) / ICC
            pc = rng.beta(a, b, size=-(-n // CLUSTER))[np.arange(n) // CLUSTER]
            right = rng.random(n) < pc
        else:
            right = rng.random(n) < p
        pred = (~right).astype(int)
        (score,) = score_entries(
            truth, [pred], metric="accuracy", resamples=RESAMPLES, seed=rep, groups=groups
        )
        for method in ("bca", "percentile", "basic"):
            (iv,) = intervals_for([score], method=method)
            hits[method] += iv.low <= p <= iv.high
        low, high = proportion_bounds(int(right.sum()), n, method="wilson")
        hits["wilson"] += float(low) <= p <= float(high)
    return {m: h / REPS for m, h in hits.items()}


@pytest.mark.parametrize("grouped", [False, True])
@pytest.mark.parametrize(("n", "p"), GRID)
def test_coverage_cell(n: int, p: float, grouped: bool) -> None:
    cov = _coverage(n, p, grouped)
    _results[(grouped, n, p)] = cov
    kind = "grouped" if grouped else "plain"
    print(f"\ncoverage {kind} n={n} p={p}: " + ", ".join(f"{m} {c:.3f}" for m, c in cov.items()))
    if not grouped:
        # the default for plain proportions keeps its level within Monte Carlo error in every cell
        assert cov["wilson"] >= 0.95 - 3.5 * np.sqrt(0.05 * 0.95 / REPS)


def test_worst_case_per_method() -> None:
    if len(_results) < 2 * len(GRID):
        pytest.skip("run with the whole file: needs every cell")
    for grouped in (False, True):
        kind = "grouped" if grouped else "plain"
        for method in METHODS:
            cells = {key[1:]: cov[method] for key, cov in _results.items() if key[0] == grouped}
            (n, p), worst = min(cells.items(), key=lambda item: item[1])
            print(f"\nworst {kind} {method}: {worst:.3f} at n={n}, p={p}")
    plain = {m: min(c[m] for k, c in _results.items() if not k[0]) for m in METHODS}
    # the measured reason for the default: Wilson's worst plain cell beats every bootstrap method's
    assert plain["wilson"] > max(plain["bca"], plain["percentile"], plain["basic"])
