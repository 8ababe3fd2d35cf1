"""Benchmark of the comparison layer: ``python -m stats.bench_compare``.

On K entries, N items and B resamples (default 200 x 10,000 x 10,000), with replicates from the engine
(the task's common weights, accuracy), it times in one process:

1. everything a board rebuild computes from stored replicates: value and difference intervals, paired
   bootstrap p-values against the leader, Holm, the marginal rank distribution, the max-t simultaneous
   rank sets and best set (with step-down) - the target is under 1 s in total;
2. McNemar's exact test of all entries against the leader;
3. paired approximate randomization with R draws of all entries against the leader in matrix products
   - the target is under 2 s;

and the straightforward per-pair loops doing the same work: the max-t statistic pair by pair, the rank
distribution resample by resample with ``scipy.stats.rankdata``, the bootstrap p-values and intervals
entry by entry, and randomization entry by entry and draw by draw. The slow loops are timed on a subset
(stated in the output) and extrapolated linearly. Figures: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats as sps

from stats.board import build_board
from stats.compare import bootstrap_p_values, holm, mcnemar_exact, paired_randomization
from stats.compare_ranks import rank_distribution, simultaneous_ranks
from stats.engine import score_entries
from stats.metrics import get_metric


def _timed(fn: Callable[[], Any], repeat: int = 1) -> tuple[float, Any]:
    best = float("inf")
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def _task(n: int, k: int, seed: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """Labels and K predictions whose accuracies spread from 0.80 to 0.86, errors partly shared."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 10, n)
    hard = rng.random(n)  # item difficulty shared by all entries
    preds = []
    for j in range(k):
        skill = 0.80 + 0.06 * j / max(k - 1, 1)
        right = (0.6 * hard + 0.4 * rng.random(n)) < skill
        preds.append(np.where(right, truth, (truth + 1 + rng.integers(0, 9, n)) % 10))
    return truth, preds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m stats.bench_compare", description=__doc__)
    parser.add_argument("--entries", type=int, default=200)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--randomizations", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    k, n, b, r = args.entries, args.items, args.resamples, args.randomizations
    metric = get_metric("accuracy")

    print(f"comparison benchmark: K={k} entries, N={n:,} items, B={b:,} resamples, R={r:,} randomizations")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, numpy {np.__version__}")
    truth, preds = _task(n, k, args.seed)
    t_setup, scores = _timed(
        lambda: score_entries(truth, preds, metric=metric, resamples=b, seed=args.seed, jackknife=False)
    )
    theta = np.column_stack([s.replicates for s in scores])
    point = np.array([s.value for s in scores])
    stats = [metric.item_statistics(truth, p) for p in preds]
    leader = int(np.argmax(point))
    print(f"setup (engine, not timed below): replicates of {k} entries in {t_setup:.2f} s")
    print()

    # -- 1. from stored replicates ------------------------------------------------------------------
    def board() -> Any:
        return build_board(
            names=[f"e{j:03d}" for j in range(k)],
            values=point,
            replicates=theta,
            higher_is_better=True,
            metric_name="accuracy",
            seed=args.seed,
            interval="percentile",
            test="bootstrap",
            n_items=n,
        )

    t_board, _ = _timed(board, repeat=3)
    t_rd, _ = _timed(lambda: rank_distribution(theta, higher_is_better=True), repeat=3)
    t_sim, sim = _timed(lambda: simultaneous_ranks(theta, point, higher_is_better=True), repeat=3)
    t_single, _ = _timed(
        lambda: simultaneous_ranks(theta, point, higher_is_better=True, stepdown=False), repeat=3
    )
    diff = theta - theta[:, [leader]]
    t_p, _ = _timed(lambda: holm(bootstrap_p_values(diff, point - point[leader])), repeat=3)

    # straightforward loops, same work
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    subset = pairs[:: max(1, len(pairs) // 400)]

    def maxt_loop() -> None:
        m = np.zeros(b)
        for i, j in subset:
            d = theta[:, i] - theta[:, j]
            se = d.std(ddof=1)
            if se > 0:
                m = np.maximum(m, np.abs(d - (point[i] - point[j])) / se)
        np.quantile(m, 0.95)

    t_maxt_sub, _ = _timed(maxt_loop)
    t_maxt_loop = t_maxt_sub * len(pairs) / len(subset) * sim.steps
    rows = min(b, 300)
    t_rank_sub, _ = _timed(lambda: [sps.rankdata(-theta[i], method="min") for i in range(rows)])
    t_rank_loop = t_rank_sub * b / rows

    def p_loop() -> None:
        for j in range(k):
            d = theta[:, j] - theta[:, leader]
            np.percentile(d, [2.5, 97.5])
            min(1.0, 2 * (1 + min((d <= 0).sum(), (d >= 0).sum())) / (1 + b))

    t_p_loop, _ = _timed(p_loop)
    loop_total = t_maxt_loop + t_rank_loop + t_p_loop

    print("1. board from stored replicates (intervals, p-values, Holm, rank distribution, max-t sets)")
    print(f"   build_board, all of it (percentile, bootstrap p)  {t_board:8.3f} s   (target < 1 s)")
    print(f"     rank distribution (B x K ranks, K x K table)    {t_rd:8.3f} s")
    print(f"     max-t simultaneous ranks + best set, step-down  {t_sim:8.3f} s   ({sim.steps} steps)")
    print(f"     max-t single step                               {t_single:8.3f} s")
    print(f"     bootstrap p-values + Holm, all vs leader        {t_p:8.3f} s")
    print(
        f"   per-pair loops: max-t {t_maxt_loop:.2f} s (timed on {len(subset)} of {len(pairs)} pairs, x{sim.steps} "
        f"steps), rankdata per resample {t_rank_loop:.2f} s (timed on {rows} of {b} rows), "
        f"p/intervals per entry {t_p_loop:.2f} s"
    )
    print(f"   loops total {loop_total:.2f} s -> ratio {loop_total / t_board:.0f}x")
    print()

    # -- 2. McNemar ----------------------------------------------------------------------------------
    def mcnemar_all() -> Any:
        c = np.column_stack([s[:, 0] for s in stats]) > 0.5
        return mcnemar_exact((c & ~c[:, [leader]]).sum(0), (~c & c[:, [leader]]).sum(0))

    t_mc, _ = _timed(mcnemar_all, repeat=3)

    def mcnemar_loop() -> None:
        for j in range(k):
            a, bb = stats[j][:, 0] > 0.5, stats[leader][:, 0] > 0.5
            nb, nc = int((a & ~bb).sum()), int((~a & bb).sum())
            if nb + nc:
                _ = sps.binomtest(nb, nb + nc).pvalue

    t_mc_loop, _ = _timed(mcnemar_loop)
    print("2. McNemar exact, all entries vs leader")
    print(
        f"   vectorised {t_mc:.4f} s; per-pair binomtest loop {t_mc_loop:.3f} s -> ratio {t_mc_loop / t_mc:.0f}x"
    )
    print()

    # -- 3. approximate randomization ----------------------------------------------------------------
    t_ar, _ = _timed(
        lambda: paired_randomization(
            stats, finalize=metric.finalize, reference=leader, randomizations=r, seed=args.seed
        )
    )
    t_ar64, _ = _timed(
        lambda: paired_randomization(
            stats,
            finalize=metric.finalize,
            reference=leader,
            randomizations=r,
            seed=args.seed,
            dtype=np.float64,
        )
    )
    rng = np.random.default_rng(1)
    draws = 200
    a_col, l_col = stats[0][:, 0], stats[leader][:, 0]

    def ar_draw_loop() -> None:
        observed = abs(a_col.mean() - l_col.mean())
        hits = 0
        for _ in range(draws):
            swap = rng.random(n) < 0.5
            x = np.where(swap, l_col, a_col)
            y = np.where(swap, a_col, l_col)
            hits += abs(x.mean() - y.mean()) >= observed
        (1 + hits) / (1 + draws)

    t_loop_sub, _ = _timed(ar_draw_loop)
    t_ar_loop = t_loop_sub * (r / draws) * (k - 1)
    per_entry = 10

    def ar_entry_loop() -> None:
        for j in range(per_entry):
            paired_randomization(
                [stats[j], stats[leader]],
                finalize=metric.finalize,
                reference=1,
                randomizations=r,
                seed=args.seed,
            )

    t_entry_sub, _ = _timed(ar_entry_loop)
    t_ar_entry = t_entry_sub * (k - 1) / per_entry
    print(f"3. paired approximate randomization, R={r:,}, all {k - 1} entries vs leader")
    print(f"   one swap matrix, matrix products (float32, exact)  {t_ar:8.3f} s   (target < 2 s)")
    print(f"   same in float64                                   {t_ar64:8.3f} s")
    print(
        f"   entry by entry (same code, one pair at a time)     {t_ar_entry:8.2f} s   "
        f"(timed on {per_entry} entries) -> ratio {t_ar_entry / t_ar:.0f}x"
    )
    print(
        f"   entry by entry, draw by draw (numpy per draw)      {t_ar_loop:8.1f} s   "
        f"(timed on {draws} draws of 1 entry) -> ratio {t_ar_loop / t_ar:.0f}x"
    )


if __name__ == "__main__":
    main()
