"""Coverage of the interval of an entry with several runs (issue 21): ``python -m tests.stats.runs_simulation
[REPS]`` prints the table of docs/stats.md ("Several runs per entry"); the slow test
``tests/stats/test_runs_coverage.py`` runs a smaller version.

Model: a test set of N = 500 binary items, each right with probability p0 = 0.8 (shared by every run of
the entry: the test-set error), and R runs whose scores add a training effect ``e_r ~ N(0, (ratio *
sd_items)^2)``, ``sd_items = sqrt(p0 (1 - p0) / N)``. The estimand is p0, the expected score over seeds
and test sets. The item replicates of the entry (its mean over runs) are exact bootstrap means of the
items (a resampled count is Binomial(N, k / N)) plus the runs' mean effect, as the service computes them
(every run scored with the task's W).
"""

from __future__ import annotations

import sys

import numpy as np

from stats.compare_runs import two_level_bounds, two_level_replicates
from stats.intervals import bootstrap_bounds

RUNS = (2, 3, 5, 10)
RATIOS = (0.5, 1.0, 2.0, 3.4, 4.0)
N_ITEMS, P0, RESAMPLES = 500, 0.8, 1000


def simulate_cell(runs: int, ratio: float, *, reps: int, seed: int = 0) -> dict[str, float]:
    """Coverage of p0 by the two-level t interval (``two-level-t``, the board's) and by the two-level
    percentile interval (the board's before issue 21), over ``reps`` simulated test sets."""
    rng = np.random.default_rng([seed, runs, int(ratio * 100)])
    sd_items = np.sqrt(P0 * (1 - P0) / N_ITEMS)
    hits = {"two-level-t": 0, "percentile-two-level": 0}
    for rep in range(reps):
        mean_items = rng.binomial(N_ITEMS, P0) / N_ITEMS
        effects = rng.normal(0.0, ratio * sd_items, runs)
        values = mean_items + effects
        point = float(values.mean())
        theta = rng.binomial(N_ITEMS, mean_items, RESAMPLES) / N_ITEMS + effects.mean()
        low, high = two_level_bounds(theta, point, values)
        hits["two-level-t"] += low <= P0 <= high
        two = two_level_replicates(theta, values, seed=rep, key=f"{runs}-{ratio}")
        lo, hi = bootstrap_bounds(two, point=point, method="percentile")
        hits["percentile-two-level"] += float(lo[0]) <= P0 <= float(hi[0])
    return {k: v / reps for k, v in hits.items()}


def main(argv: list[str]) -> int:
    reps = int(argv[0]) if argv else 2000
    print("| runs | seed sd / test-set sd | two-level t (board) | two-level percentile (before) |")
    print("|---|---|---|---|")
    for runs in RUNS:
        for ratio in RATIOS:
            cov = simulate_cell(runs, ratio, reps=reps)
            print(
                f"| {runs} | {ratio:g} | {cov['two-level-t']:.3f} | {cov['percentile-two-level']:.3f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
