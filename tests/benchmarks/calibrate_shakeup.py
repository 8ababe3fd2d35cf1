"""``python -m tests.benchmarks.calibrate_shakeup``: the shake-up report's tests and intervals, calibrated
by simulation (a measurement script: in tests/benchmarks, not in the shipped ``stats`` package).

Two measurements (figures in docs/comparisons.md, with this command):

- **Level of the re-split gap p-values under the null.** Every team's predictions are fixed (independent
  right/wrong per item, true accuracies spread over 0.65..0.85) and the items are split at random into a
  public and a private part, so nothing was fitted to the public part. The rate at which a team's one-sided
  gap p-value is <= 0.05 must not exceed 0.05, nor the rate at which *any* team's Holm-adjusted p-value is
  (the family-wise error the report controls).
- **Coverage of the Spearman and Kendall intervals.** Teams with true accuracies spread over 0.70..0.80 are
  scored on fresh public and private items each time; the interval from the boards' paired bootstrap
  replicates (as the service computes it) is compared with the expected observed correlation at these
  sizes (its mean over many fresh test sets).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from stats.metrics import get_metric
from stats.shakeup import shakeup


@dataclass(frozen=True)
class GapLevel:
    runs: int
    teams: int
    per_team_rate: float  # share of (run, team) with gap p <= alpha
    familywise_rate: float  # share of runs with any Holm-adjusted gap p <= alpha


def gap_level(
    *,
    runs: int = 400,
    teams: int = 10,
    n_public: int = 200,
    n_private: int = 200,
    resplits: int = 199,
    alpha: float = 0.05,
    seed: int = 2,
) -> GapLevel:
    """Rejection rates of the re-split gap test when the split is random (no overfitting)."""
    acc = get_metric("accuracy")
    rng = np.random.default_rng(seed)
    truth = np.ones(n_public + n_private, dtype=np.int64)
    p_true = np.linspace(0.65, 0.85, teams)
    names = [f"t{i}" for i in range(teams)]
    rejected = familywise = 0
    for r in range(runs):
        correct = (rng.random((truth.size, teams)) < p_true).astype(np.int64)
        order = rng.permutation(truth.size)
        public, private = order[:n_public], order[n_public:]
        pairs = []
        for k in range(teams):
            s = acc.item_statistics(truth, correct[:, k])
            pairs.append((s[public], s[private]))
        report = shakeup(
            correct[public].mean(axis=0),
            correct[private].mean(axis=0),
            names=names,
            higher_is_better=True,
            metric="accuracy",
            item_statistics=pairs,
            finalize=acc.finalize,
            resplits=resplits,
            seed=r,
        )
        p = np.array([t.gap_p for t in report.teams], dtype=np.float64)
        holm = np.array([t.gap_p_holm for t in report.teams], dtype=np.float64)
        rejected += int((p <= alpha).sum())
        familywise += int((holm <= alpha).any())
    return GapLevel(runs, teams, rejected / (runs * teams), familywise / runs)


@dataclass(frozen=True)
class Coverage:
    runs: int
    spearman_target: float
    kendall_target: float
    spearman: float  # share of intervals that hold the target
    kendall: float


def correlation_coverage(
    *,
    runs: int = 200,
    teams: int = 8,
    n: int = 500,
    resamples: int = 200,
    reference_draws: int = 4000,
    confidence: float = 0.95,
    seed: int = 1,
) -> Coverage:
    """Coverage of the report's correlation intervals for the expected observed correlation."""
    rng = np.random.default_rng(seed)
    p_true = np.linspace(0.70, 0.80, teams)
    spearman_draws, kendall_draws = [], []
    for _ in range(reference_draws):
        a = (rng.random((n, teams)) < p_true).mean(axis=0)
        b = (rng.random((n, teams)) < p_true).mean(axis=0)
        spearman_draws.append(sps.spearmanr(a, b).statistic)
        kendall_draws.append(sps.kendalltau(a, b).statistic)
    rho, tau = float(np.nanmean(spearman_draws)), float(np.nanmean(kendall_draws))
    names = [f"t{i}" for i in range(teams)]
    hit_rho = hit_tau = 0
    for _ in range(runs):
        public = (rng.random((n, teams)) < p_true).astype(np.float64)
        private = (rng.random((n, teams)) < p_true).astype(np.float64)
        # the boards' paired replicates: resample b of the public items, resample b of the private items
        w_public = rng.multinomial(n, np.full(n, 1 / n), size=resamples) / n
        w_private = rng.multinomial(n, np.full(n, 1 / n), size=resamples) / n
        report = shakeup(
            public.mean(axis=0),
            private.mean(axis=0),
            names=names,
            higher_is_better=True,
            metric="accuracy",
            public_replicates=w_public @ public,
            private_replicates=w_private @ private,
            resplits=1,
            confidence=confidence,
        )
        assert report.spearman_interval is not None and report.kendall_interval is not None
        hit_rho += report.spearman_interval[0] <= rho <= report.spearman_interval[1]
        hit_tau += report.kendall_interval[0] <= tau <= report.kendall_interval[1]
    return Coverage(runs, rho, tau, hit_rho / runs, hit_tau / runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.calibrate_shakeup", description=__doc__)
    parser.add_argument("--runs", type=int, default=1000, help="simulated boards per measurement")
    parser.add_argument("--coverage-runs", type=int, default=400, help="simulated boards for coverage")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    level = gap_level(runs=args.runs)
    se_team = np.sqrt(0.05 * 0.95 / (args.runs * level.teams))
    se_family = np.sqrt(0.05 * 0.95 / args.runs)
    print(
        f"re-split gap test under the null ({level.runs} random splits, {level.teams} teams, 200 + 200 items, "
        f"199 re-splits): per team P(p <= 0.05) = {level.per_team_rate:.4f} (Monte Carlo SE {se_team:.4f}); "
        f"any team after Holm = {level.familywise_rate:.4f} (SE {se_family:.4f}) "
        f"({time.perf_counter() - start:.1f} s)"
    )
    start = time.perf_counter()
    cov = correlation_coverage(runs=args.coverage_runs)
    print(
        f"correlation intervals (95%, {cov.runs} boards, 8 teams, 500 + 500 items, 200 resamples): "
        f"Spearman coverage {cov.spearman:.3f} of E[rho] = {cov.spearman_target:.3f}; Kendall coverage "
        f"{cov.kendall:.3f} of E[tau] = {cov.kendall_target:.3f} ({time.perf_counter() - start:.1f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
