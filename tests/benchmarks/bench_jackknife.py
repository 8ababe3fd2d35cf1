"""Benchmark of the leave-one-out (jackknife) values of ROC AUC and average precision:
``python -m tests.benchmarks.bench_jackknife``.

Side by side in one process, for one entry of N items (default 20,000, 1% to 50% positives):

1. the baseline: the previous engine path, one leave-one-out weight row per item evaluated by the
   rank-based replicate code in chunks of 256 rows, O(N^2);
2. the closed form now used by the engine: DeLong's placement values for the AUC and prefix/suffix sums
   for AP, O(N) after one O(N log N) sort.

It prints both wall times, the ratio, and the largest absolute difference between the two (they must
agree to rounding). Figures: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from stats.metrics import RankedScores, get_metric

CHUNK = 256


def _old_leave_one_out(metric_name: str, ranked: RankedScores, n: int) -> np.ndarray:
    metric = get_metric(metric_name)
    out = np.empty(n)
    for start in range(0, n, CHUNK):
        rows = np.arange(start, min(start + CHUNK, n))
        w = np.ones((rows.shape[0], n), dtype=np.uint8)
        w[np.arange(rows.shape[0]), rows] = 0
        out[start : rows[-1] + 1] = metric.rank_replicates(ranked, w)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.bench_jackknife", description=__doc__)
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--positives", type=float, default=0.1, help="share of positive items")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    n = args.items
    y = (rng.random(n) < args.positives).astype(int)
    scores = np.round(0.5 * y + rng.random(n), 3)  # with ties
    print(f"python {platform.python_version()}, numpy {np.__version__}, N = {n}, positives {y.mean():.3f}")
    for name in ("roc_auc", "average_precision"):
        metric = get_metric(name)
        ranked = metric.rank_prepare(y, scores)
        start = time.perf_counter()
        old = _old_leave_one_out(name, ranked, n)
        t_old = time.perf_counter() - start
        start = time.perf_counter()
        new = metric.rank_leave_one_out(metric.rank_prepare(y, scores))
        t_new = time.perf_counter() - start
        assert new is not None
        diff = float(np.nanmax(np.abs(new - old)))
        print(
            f"{name:18s} baseline O(N^2) weight rows {t_old:8.3f} s | closed form {t_new * 1e3:8.2f} ms "
            f"(sort included) | {t_old / t_new:,.0f}x | max |difference| {diff:.1e}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
