"""``python -m tests.benchmarks.simulate_selection``: how often the leader's true value is covered, naive vs adjusted.

Per setting, ``repeats`` test sets of ``items`` 0/1 items are drawn; K entries are right on each item
independently with their true accuracies; the board's common resamples are ``resamples`` multinomial
count vectors over the items, shared by every entry. The observed leader's *true* accuracy is the target.
Printed per setting: coverage of the naive interval (value +- 1.96 sd), of the conditional and of the
hybrid interval (:func:`stats.selection.leader_adjusted`), and the median error (estimate minus the
leader's true value) of the shown value, the bootstrap bias correction, and the conditional and hybrid
estimates. Races: ``close`` (every true accuracy 0.80) and ``clear`` (one entry at 0.90, the rest 0.80).
The figures are recorded in docs/comparisons.md with the command that produced them.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
from scipy import special

from stats.selection import leader_adjusted

__all__ = ["SelectionCoverage", "bootstrap_counts", "main", "selection_coverage"]


@dataclass(frozen=True)
class SelectionCoverage:
    """Coverage and median errors of one setting (see the module docstring)."""

    k: int
    race: str
    repeats: int
    naive: float
    conditional: float
    hybrid: float
    error_naive: float
    error_bias_corrected: float
    error_conditional: float
    error_hybrid: float
    width_naive: float
    width_hybrid: float


def bootstrap_counts(rng: np.random.Generator, n: int, resamples: int) -> np.ndarray:
    """``resamples`` bootstrap count vectors over ``n`` items (multinomial, by one bincount)."""
    draws = rng.integers(0, n, size=(resamples, n)) + n * np.arange(resamples)[:, None]
    return np.bincount(draws.ravel(), minlength=resamples * n).reshape(resamples, n)


def _true_values(k: int, race: str) -> np.ndarray:
    mu = np.full(k, 0.80)
    if race == "clear":
        mu[0] = 0.90
    elif race != "close":
        raise ValueError("`race` must be 'close' or 'clear'.")
    return mu


def selection_coverage(
    k: int,
    race: str,
    *,
    repeats: int,
    items: int = 500,
    resamples: int = 1000,
    seed: int = 0,
    correlation: float = 0.0,
) -> SelectionCoverage:
    """Simulate one setting (see the module docstring).

    ``correlation``: items share a latent difficulty, the entries' correctness correlated ``correlation``
    on the probit scale (0: independent entries).
    """
    key = [seed, k, 0 if race == "close" else 1]
    rng = np.random.default_rng([*key, round(correlation * 1000)] if correlation else key)
    mu = _true_values(k, race)
    threshold = special.ndtri(mu)
    hits = np.zeros(3)
    errors: list[list[float]] = [[], [], [], []]
    widths: list[list[float]] = [[], []]
    for _ in range(repeats):
        if correlation:
            latent = np.sqrt(correlation) * rng.standard_normal((items, 1))
            noise = np.sqrt(1 - correlation) * rng.standard_normal((items, k))
            correct = (latent + noise < threshold).astype(np.float64)
        else:
            correct = (rng.random((items, k)) < mu).astype(np.float64)
        weights = bootstrap_counts(rng, items, resamples).astype(np.float64)
        theta = weights @ correct / items
        values = correct.mean(axis=0)
        adj = leader_adjusted(values, theta, higher_is_better=True)
        target = mu[int(adj.leader.split("-")[1])]
        for i, iv in enumerate((adj.naive_interval, adj.conditional_interval, adj.hybrid_interval)):
            hits[i] += iv.low <= target <= iv.high
        for i, est in enumerate(
            (adj.value, adj.bias_corrected, adj.conditional_estimate, adj.hybrid_estimate)
        ):
            errors[i].append(est - target)
        widths[0].append(adj.naive_interval.high - adj.naive_interval.low)
        widths[1].append(adj.hybrid_interval.high - adj.hybrid_interval.low)
    cov = hits / repeats
    med = [float(np.median(e)) for e in errors]
    return SelectionCoverage(
        k=k,
        race=race,
        repeats=repeats,
        naive=float(cov[0]),
        conditional=float(cov[1]),
        hybrid=float(cov[2]),
        error_naive=med[0],
        error_bias_corrected=med[1],
        error_conditional=med[2],
        error_hybrid=med[3],
        width_naive=float(np.median(widths[0])),
        width_hybrid=float(np.median(widths[1])),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.benchmarks.simulate_selection", description=__doc__
    )
    parser.add_argument("--repeats", type=int, default=1000, help="test sets per setting (default 1,000)")
    parser.add_argument("--items", type=int, default=500, help="items per test set (default 500)")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1,000)")
    parser.add_argument("--k", type=int, nargs="+", default=[2, 10, 50], help="entries (default 2 10 50)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--correlation", type=float, default=0.0, help="latent item difficulty shared by the entries (probit)"
    )
    parser.add_argument("--races", nargs="+", default=["close", "clear"], choices=["close", "clear"])
    args = parser.parse_args(argv)
    start = time.perf_counter()
    print(
        "| K | race | naive | conditional | hybrid | median error: shown | bias-corrected | conditional "
        "| hybrid | median width: naive | hybrid |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for race in args.races:
        for k in args.k:
            r = selection_coverage(
                k, race, repeats=args.repeats, items=args.items, resamples=args.resamples, seed=args.seed,
                correlation=args.correlation,
            )  # fmt: skip
            print(
                f"| {k} | {race} | {r.naive:.3f} | {r.conditional:.3f} | {r.hybrid:.3f} | "
                f"{r.error_naive:+.4f} | {r.error_bias_corrected:+.4f} | {r.error_conditional:+.4f} | "
                f"{r.error_hybrid:+.4f} | {r.width_naive:.4f} | {r.width_hybrid:.4f} |"
            )
    print(f"\n{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
