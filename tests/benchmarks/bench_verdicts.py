"""What the randomization max-t verdicts cost: ``python -m tests.benchmarks.bench_verdicts`` (issue 21).

A board of K entries on N < 300 items with per-item statistics gets its verdicts from the randomization
max-t (``stats.randomization``); the same board given only the test-set size keeps the bootstrap max-t.
Both are built in this run, so the baseline is measured beside the figure. Figures: docs/comparisons.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from stats.board import build_board
from stats.metrics import get_metric

SIZES = (("accuracy", 10, 299), ("accuracy", 100, 299), ("macro_f1", 100, 299), ("macro_f1", 30, 100))


def _seconds(fn: Callable[[], object], repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    rng = np.random.default_rng(0)
    print("| metric | K | N | bootstrap verdicts (s) | randomization verdicts (s) | verdict test |")
    print("|---|---:|---:|---:|---:|---|")
    for name, k, n in SIZES:
        metric = get_metric(name)
        truth = rng.integers(0, 3, n)
        preds = [np.where(rng.random(n) < a, truth, (truth + 1) % 3) for a in rng.uniform(0.6, 0.9, k)]
        stats = [metric.item_statistics(truth, p, labels=[0, 1, 2]) for p in preds]
        w = rng.multinomial(n, np.full(n, 1 / n), size=1000).astype(float)
        common: dict[str, Any] = {
            "names": [f"e{i}" for i in range(k)],
            "values": metric.finalize(np.stack([s.sum(axis=0) for s in stats])),
            "replicates": np.column_stack([metric.finalize(w @ s) for s in stats]),
            "higher_is_better": True,
            "metric_name": name,
            "seed": 1,
            "interval": "percentile",
            "zero_one": metric.zero_one,
        }
        board = build_board(**common, item_statistics=stats, finalize=metric.finalize, test="bootstrap")
        with_items = {**common, "item_statistics": stats, "finalize": metric.finalize, "test": "bootstrap"}
        baseline = _seconds(partial(build_board, **common, n_items=n))
        randomized = _seconds(partial(build_board, **with_items))
        print(
            f"| {name} | {k} | {n} | {baseline:.3f} | {randomized:.3f} | {board.verdict_test} |", flush=True
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
