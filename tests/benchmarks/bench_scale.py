"""How the costs grow with N, K and B: ``python -m tests.benchmarks.bench_scale`` (issue 14).

Three sizes each, one process:

- the board from stored replicates (``build_board``, percentile intervals, bootstrap p-values) at
  K = 250, 1,000, 5,000 entries (B = 10,000) and at B = 2,500, 5,000, 10,000 resamples (K = 1,000), with
  its parts (pairwise standard errors, rank distribution, max-t step-down), peak traced memory, and the
  incremental update that adds the last entry to the board of the others (``stats.board_update``);
- paired approximate randomization of all entries against the leader at K = 250, 1,000, 5,000 (R as
  given, default 10,000);
- scoring one entry with W drawn (no cache) at N = 10,000, 100,000, 1,000,000 items (B as given,
  default 1,000: the cost is linear in B, see the B rows of the board), with peak traced memory.

Replicates come from the engine once for the largest K; smaller boards take their first columns, fewer
resamples the first rows (W for B1 resamples is the first B1 rows of W for B2 > B1). Figures:
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

from stats._threads import blas_threads
from stats.board import build_board
from stats.board_update import BoardCache
from stats.compare import paired_randomization
from stats.compare_ranks import _pair_standard_errors, rank_distribution, simultaneous_ranks
from stats.engine import score_entries
from stats.metrics import get_metric
from tests.benchmarks.bench_compare import _task


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def _peak_mib(fn: Callable[[], Any]) -> tuple[float, float]:
    tracemalloc.start()
    try:
        seconds, _ = _timed(fn)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return seconds, peak / 2**20


def _board_row(theta: np.ndarray, point: np.ndarray, n: int) -> str:
    k = theta.shape[1]

    def board() -> Any:
        return build_board(
            names=[f"e{j:05d}" for j in range(k)],
            values=point,
            replicates=theta,
            higher_is_better=True,
            metric_name="accuracy",
            seed=0,
            interval="percentile",
            test="bootstrap",
            n_items=n,
        )

    cpu = time.process_time()
    t_board, _ = _timed(board)
    cpu_board = time.process_time() - cpu
    _, peak = _peak_mib(board)
    with blas_threads():  # as build_board runs it
        t_se, _ = _timed(lambda: _pair_standard_errors(theta - point))
    t_rd, _ = _timed(lambda: rank_distribution(theta, higher_is_better=True))
    t_sim, sim = _timed(lambda: simultaneous_ranks(theta, point, higher_is_better=True))
    # the last entry added to the board of the others (stats.board_update)
    names = [f"e{j:05d}" for j in range(k)]
    options: dict[str, Any] = {
        "higher_is_better": True,
        "metric_name": "accuracy",
        "seed": 0,
        "interval": "percentile",
        "test": "bootstrap",
        "n_items": n,
    }
    cache = BoardCache()
    cache.build(
        names=names[:-1], values=point[:-1], replicates=np.ascontiguousarray(theta[:, :-1]), **options
    )
    t_update, _ = _timed(lambda: cache.build(names=names, values=point, replicates=theta, **options))
    return (
        f"K={k:>5} B={theta.shape[0]:>6}  board {t_board:7.2f} s (CPU {cpu_board:6.2f} s, load "
        f"{os.getloadavg()[0]:.1f})  peak {peak:6.0f} MiB  | "
        f"pair se {t_se:6.2f} s  ranks {t_rd:6.2f} s  max-t {t_sim:6.2f} s ({sim.steps} steps)  | "
        f"one new entry {t_update:6.2f} s ({cache.last})"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.bench_scale", description=__doc__)
    parser.add_argument("--entries", type=int, nargs=3, default=[250, 1000, 5000])
    parser.add_argument("--resamples", type=int, nargs=3, default=[2500, 5000, 10_000])
    parser.add_argument("--items", type=int, nargs=3, default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--engine-resamples", type=int, default=1000)
    parser.add_argument("--randomizations", type=int, default=10_000)
    args = parser.parse_args(argv)
    n = 10_000
    k_max, b_max = max(args.entries), max(args.resamples)
    metric = get_metric("accuracy")
    print(f"scaling benchmark; load average {os.getloadavg()[0]:.1f} at start")
    truth, preds = _task(n, k_max, 0)
    t_setup, scores = _timed(
        lambda: score_entries(truth, preds, metric=metric, resamples=b_max, seed=0, jackknife=False)
    )
    theta_all = np.column_stack([s.replicates for s in scores])
    del scores
    point_all = np.array([metric.finalize(metric.item_statistics(truth, p).sum(axis=0)) for p in preds])
    print(f"setup: replicates of {k_max} entries, B={b_max} in {t_setup:.0f} s (not timed below)\n")

    print(f"board vs K (N={n:,}, B={b_max:,}):")
    for k in sorted(args.entries):
        print("  " + _board_row(theta_all[:, :k], point_all[:k], n), flush=True)
    k_mid = sorted(args.entries)[1]
    print(f"board vs B (N={n:,}, K={k_mid:,}):")
    for b in sorted(args.resamples):
        print(
            "  " + _board_row(np.ascontiguousarray(theta_all[:b, :k_mid]), point_all[:k_mid], n), flush=True
        )
    del theta_all

    print(f"randomization vs K (N={n:,}, R={args.randomizations:,}, all entries vs the leader):")
    for k in sorted(args.entries):
        stats = [metric.item_statistics(truth, p) for p in preds[:k]]
        leader = int(np.argmax(point_all[:k]))
        start = time.perf_counter()
        paired_randomization(
            stats, finalize=metric.finalize, reference=leader, randomizations=args.randomizations, seed=0
        )
        t_ar = time.perf_counter() - start
        print(f"  K={k:>5}  {t_ar:7.2f} s", flush=True)

    b = args.engine_resamples
    print(f"scoring one entry, W drawn (no cache), B={b:,}, vs N:")
    for items in sorted(args.items):
        rng = np.random.default_rng(1)
        y = rng.integers(0, 10, items)
        pred = np.where(rng.random(items) < 0.8, y, (y + 1) % 10)
        tracemalloc.start()
        start = time.perf_counter()
        score_entries(y, [pred], metric=metric, resamples=b, seed=0)
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        print(f"  N={items:>9,}  {seconds:7.2f} s  peak {peak:6.0f} MiB", flush=True)
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
