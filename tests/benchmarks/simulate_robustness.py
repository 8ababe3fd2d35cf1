"""``python -m tests.benchmarks.simulate_robustness``: how often the three ranking schemes disagree on the same data.

Simulated segmentation-like challenges: ``cases`` test cases, ``k`` entries; entry ``j`` scores
``Beta(a, b)`` with mean ``m_j`` on a case (a Dice-like score), except that it fails (scores 0) on a share
``f_j`` of cases; means and failure rates trade off (an entry with a higher typical score fails more
often), which is where aggregate-then-rank (the mean punishes failures) and rank-then-aggregate (a failure
costs one rank) part ways. Printed per setting: the share of simulated tasks where the schemes' winners
differ, where any rank differs, the mean Kendall tau-b between the schemes, and the median width of the
winner's bootstrap rank interval. Figures in docs/comparisons.md with the command that produced them.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from stats.robustness import ranking_schemes
from tests.benchmarks.simulate_selection import bootstrap_counts

__all__ = ["main", "scheme_disagreement"]


def _task(rng: np.random.Generator, k: int, cases: int, trade_off: bool) -> np.ndarray:
    means = np.linspace(0.80, 0.86, k)
    # with the trade-off the better typical score fails more often; without it every entry fails 5%
    fails = np.linspace(0.02, 0.10, k) if trade_off else np.full(k, 0.05)
    conc = 20.0
    s = rng.beta(means * conc, (1 - means) * conc, size=(cases, k))
    s[rng.random((cases, k)) < fails] = 0.0
    return s


def scheme_disagreement(
    k: int, cases: int, *, tasks: int, trade_off: bool = True, resamples: int = 500, seed: int = 0
) -> dict[str, float]:
    """Disagreement rates over ``tasks`` simulated tasks (see the module docstring)."""
    rng = np.random.default_rng([seed, k, cases, int(trade_off)])
    winner_agg_rta = winner_any = ranks_any = 0
    taus: dict[str, list[float]] = {}
    widths = []
    for _ in range(tasks):
        s = _task(rng, k, cases, trade_off)
        w = bootstrap_counts(rng, cases, resamples)
        rs = ranking_schemes(s, higher_is_better=True, weights=w)
        winners = [set(np.flatnonzero(np.array(sc.ranks) == 1)) for sc in rs.schemes]
        winner_agg_rta += winners[0] != winners[1]
        winner_any += not (winners[0] == winners[1] == winners[2])
        ranks_any += bool(rs.disagreements)
        for pair, t in rs.tau_between.items():
            taus.setdefault(pair, []).append(t)
        rob = rs.schemes[0].robustness
        if rob is not None:
            widths.append(rob.entries[0].high - rob.entries[0].low + 1)
    out = {
        "winner differs (aggregate vs rank-then-aggregate)": winner_agg_rta / tasks,
        "winner differs (any scheme)": winner_any / tasks,
        "some rank differs": ranks_any / tasks,
        "median ranks in the winner's 95% interval": float(np.median(widths)),
    }
    out.update({f"mean tau-b {pair}": float(np.mean(v)) for pair, v in taus.items()})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.benchmarks.simulate_robustness", description=__doc__
    )
    parser.add_argument("--tasks", type=int, default=200, help="simulated tasks per setting (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = []
    for k, cases, trade in ((5, 30, True), (5, 100, True), (10, 50, True), (5, 50, False), (10, 50, False)):
        rows.append(
            (
                k,
                cases,
                trade,
                scheme_disagreement(k, cases, tasks=args.tasks, trade_off=trade, seed=args.seed),
            )
        )
    keys = list(rows[0][3])
    print("| K | cases | failures | " + " | ".join(keys) + " |")
    print("|---|---|---|" + "---|" * len(keys))
    for k, cases, trade, r in rows:
        fails = "2-10%, rising with the mean" if trade else "5% each"
        print(f"| {k} | {cases} | {fails} | " + " | ".join(f"{r[key]:.3f}" for key in keys) + " |")
    print(f"\n{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
