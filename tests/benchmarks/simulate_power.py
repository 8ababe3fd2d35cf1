"""``python -m tests.benchmarks.simulate_power``: does a test set of the planned size give the stated power?

For a bootstrap metric (macro-F1 of three classes; entry ``b`` right 80% of the time, ``a`` 75%, their
correctness correlated), the true gap is measured on 200,000 items; a pilot of ``pilot`` items gives the
bootstrap standard error of the paired difference; :func:`stats.power.items_for_gap` plans the test-set
size for 80% power at 5% two-sided; then ``runs`` test sets of that size are drawn and the paired z-test
with the bootstrap standard error is applied. The share of runs that detect the gap is the measured
power. The figures are recorded in docs/comparisons.md with the command that produced them.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np
from scipy import special

from stats.engine import score_entries
from stats.power import items_for_gap

__all__ = ["PowerCheck", "macro_f1_pair", "main", "planned_power"]

_LABELS = [0, 1, 2]


def macro_f1_pair(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Truth and two entries' predictions on ``n`` items (see the module docstring)."""
    truth = rng.integers(0, 3, n)
    u = rng.random(n)
    v = np.where(rng.random(n) < 0.5, u, rng.random(n))
    a = np.where(u < 0.75, truth, (truth + rng.integers(1, 3, n)) % 3)
    b = np.where(v < 0.80, truth, (truth + rng.integers(1, 3, n)) % 3)
    return truth, a, b


@dataclass(frozen=True)
class PowerCheck:
    """The planned size and the measured power (see the module docstring)."""

    true_gap: float
    pilot_standard_error: float
    items: int
    runs: int
    detected: int

    @property
    def power(self) -> float:
        """Share of runs in which the paired z-test detected the gap."""
        return self.detected / self.runs


def planned_power(
    *, runs: int = 200, pilot: int = 2000, resamples: int = 500, seed: int = 2026
) -> PowerCheck:
    """Plan a test set for the true gap from a pilot, then measure the power on ``runs`` test sets."""
    rng = np.random.default_rng(seed)
    truth, a, b = macro_f1_pair(rng, 200_000)
    big = score_entries(
        truth, [a, b], metric="macro_f1", labels=_LABELS, resamples=2, seed=0, jackknife=False
    )
    true_gap = big[1].value - big[0].value
    truth, a, b = macro_f1_pair(rng, pilot)
    first = score_entries(
        truth, [a, b], metric="macro_f1", labels=_LABELS, resamples=2000, seed=1, jackknife=False
    )
    se = float(np.std(first[1].replicates - first[0].replicates, ddof=1))
    plan = items_for_gap(true_gap, metric="macro_f1", pilot_standard_error=se, pilot_items=pilot)
    if plan.items is None:
        raise ValueError("the true gap is 0: nothing to plan")
    z = float(special.ndtri(0.975))
    detected = 0
    for r in range(runs):
        truth, a, b = macro_f1_pair(rng, plan.items)
        s = score_entries(
            truth, [a, b], metric="macro_f1", labels=_LABELS, resamples=resamples, seed=r, jackknife=False
        )
        d = s[1].value - s[0].value
        detected += bool(abs(d) > z * np.std(s[1].replicates - s[0].replicates, ddof=1))
    return PowerCheck(
        true_gap=true_gap, pilot_standard_error=se, items=plan.items, runs=runs, detected=detected
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.simulate_power", description=__doc__)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--pilot", type=int, default=2000)
    parser.add_argument("--resamples", type=int, default=500)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    c = planned_power(runs=args.runs, pilot=args.pilot, resamples=args.resamples, seed=args.seed)
    half = 1.96 * np.sqrt(c.power * (1 - c.power) / c.runs)
    print(
        f"true macro-F1 gap {c.true_gap:.4f}; pilot ({args.pilot} items) bootstrap se {c.pilot_standard_error:.4f}; "
        f"planned items {c.items}; detected in {c.detected}/{c.runs} runs: power {c.power:.3f} "
        f"(+- {half:.3f}), target 0.80"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
