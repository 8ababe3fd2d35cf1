"""Exact coverage of the binomial intervals: ``python -m stats.coverage``.

The coverage of an interval for a proportion at ``(n, p)`` is a finite sum: the probability of every
count ``x`` whose interval holds ``p``, ``sum_x P(X = x | n, p) 1[low(x) <= p <= high(x)]``. No
simulation, so no Monte Carlo error: a cell of the grid is a number, not an estimate (Brown, Cai &
DasGupta 2001 compute their figures the same way). Every method here is symmetric (the interval of
``n - x`` is the mirror of the interval of ``x``), so the coverage at ``1 - p`` equals that at ``p`` and
the grid lists ``p >= 0.5`` only.

This chose the default interval of plain proportions (docs/adr/0007-proportion-interval.md): the grid
below, for every proportion method of :mod:`stats.intervals`, with its worst cell and the expected width.

References
----------
.. [1] Brown, L. D., Cai, T. T. and DasGupta, A. (2001). Interval Estimation for a Binomial Proportion.
       Statistical Science 16(2), 101-133.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from stats.intervals import DEFAULT_CONFIDENCE, PROPORTION_METHODS, proportion_bounds

__all__ = ["GRID_N", "GRID_P", "CoverageGrid", "coverage_grid", "exact_coverage", "expected_width", "main"]

#: The grid of issue 21: test-set sizes and true proportions (and, by symmetry, their mirrors 1 - p).
GRID_N: tuple[int, ...] = (10, 20, 30, 50, 100, 200, 500, 1000)
GRID_P: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999)


def exact_coverage(method: str, n: int, p: float, *, confidence: float = DEFAULT_CONFIDENCE) -> float:
    """The exact coverage of ``method``'s interval at ``n`` items and true proportion ``p``.

    Examples
    --------
    >>> round(exact_coverage("wald", 20, 0.98), 3)  # REFERENCE.md: exact coverage table
    0.332
    >>> round(exact_coverage("wilson", 30, 0.995), 3)  # issue 21: Wilson at x = n - 1
    0.86
    """
    x = np.arange(n + 1)
    low, high = proportion_bounds(x, n, method=method, confidence=confidence)
    pmf = sps.binom.pmf(x, n, p)
    return float(pmf[(low <= p) & (p <= high)].sum())


def expected_width(method: str, n: int, p: float, *, confidence: float = DEFAULT_CONFIDENCE) -> float:
    """The expected width ``sum_x P(X = x) (high(x) - low(x))`` of ``method``'s interval."""
    x = np.arange(n + 1)
    low, high = proportion_bounds(x, n, method=method, confidence=confidence)
    return float((sps.binom.pmf(x, n, p) * (high - low)).sum())


@dataclass(frozen=True)
class CoverageGrid:
    """Exact coverage and expected width of one method on a grid.

    Attributes
    ----------
    method : str
    n, p : tuple
        The grid's sizes (rows) and proportions (columns).
    coverage, width : ndarray, shape (len(n), len(p))
    """

    method: str
    n: tuple[int, ...]
    p: tuple[float, ...]
    coverage: np.ndarray
    width: np.ndarray

    def worst(self) -> tuple[float, int, float]:
        """``(coverage, n, p)`` of the worst cell."""
        i, j = np.unravel_index(int(np.argmin(self.coverage)), self.coverage.shape)
        return float(self.coverage[i, j]), self.n[i], self.p[j]


def coverage_grid(
    method: str,
    *,
    n: Sequence[int] = GRID_N,
    p: Sequence[float] = GRID_P,
    confidence: float = DEFAULT_CONFIDENCE,
) -> CoverageGrid:
    """Exact coverage and expected width of ``method`` in every cell of the grid ``n x p``."""
    cov = np.array([[exact_coverage(method, ni, pj, confidence=confidence) for pj in p] for ni in n])
    width = np.array([[expected_width(method, ni, pj, confidence=confidence) for pj in p] for ni in n])
    return CoverageGrid(method, tuple(int(v) for v in n), tuple(float(v) for v in p), cov, width)


def _markdown(grid: CoverageGrid) -> str:
    lines = [
        f"**{grid.method}** (worst {grid.worst()[0]:.3f} at n = {grid.worst()[1]}, p = {grid.worst()[2]:g}; "
        f"mean expected width {grid.width.mean():.4f})",
        "",
        "| n | " + " | ".join(f"{v:g}" for v in grid.p) + " |",
        "|---|" + "---|" * len(grid.p),
    ]
    for i, ni in enumerate(grid.n):
        lines.append(f"| {ni} | " + " | ".join(f"{c:.3f}" for c in grid.coverage[i]) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Print the exact grid of every proportion method (Markdown tables, as in docs/stats.md)."""
    parser = argparse.ArgumentParser(
        prog="python -m stats.coverage", description="Exact coverage of the binomial intervals on a grid."
    )
    parser.add_argument("--methods", default=",".join(PROPORTION_METHODS), help="comma-separated methods")
    parser.add_argument("--confidence", type=float, default=DEFAULT_CONFIDENCE)
    args = parser.parse_args(argv)
    for method in args.methods.split(","):
        sys.stdout.write(_markdown(coverage_grid(method, confidence=args.confidence)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
