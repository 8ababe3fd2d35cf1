"""Benchmark of the engine against ``scipy.stats.bootstrap``: ``python -m tests.benchmarks.bench``.

Runs in one process, side by side, on N items, K entries and B resamples (default 10,000 x 50 x
10,000):

1. the baseline: ``scipy.stats.bootstrap`` (vectorised, percentile) on each entry's 0/1 correctness,
   run once on all K entries (measured, not extrapolated; ``--baseline-entries`` times fewer entries and
   extrapolates linearly, as said in the output);
2. the engine end to end for accuracy, including drawing W, with BCa intervals;
3. the engine with W cached on disk, for one new entry and for all K;
4. macro-F1 with 10 classes for all K, W cached;
5. drawing W alone against the drawing of before issue 14 (``tests.benchmarks._baseline.draw_chunk_v0``), and
   checks that their bytes are equal.

It prints wall times, the ratio to the baseline and the throughput in resample x item x entry per
second, and the peak memory traced (tracemalloc) of the end-to-end run. Figures: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy import stats as sps

from stats.engine import score_entries
from stats.intervals import intervals_for
from stats.resampling import _draw_chunk, resample_design, unit_weights
from tests.benchmarks._baseline import draw_chunk_v0


def _timed(fn: Callable[[], Any], repeat: int = 1) -> tuple[float, Any]:
    best = float("inf")
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def _peak_mib(fn: Callable[[], Any]) -> float:
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


def _data(n: int, k: int, classes: int, seed: int) -> tuple[np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, classes, n)
    preds = []
    for acc in np.linspace(0.80, 0.90, k):
        wrong = rng.random(n) >= acc
        preds.append(np.where(wrong, (truth + rng.integers(1, classes, n)) % classes, truth))
    return truth, preds


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; returns 0."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.benchmarks.bench", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--entries", type=int, default=50)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--baseline-entries", type=int, default=0, help="0: all entries (default)")
    args = parser.parse_args(argv)
    n, k, b = args.items, args.entries, args.resamples
    kb = k if args.baseline_entries <= 0 else min(args.baseline_entries, k)
    work = float(n) * k * b

    print(f"tests.benchmarks.bench: N={n} items, K={k} entries, B={b} resamples")
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, cores {os.cpu_count()}, "
        f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '-')}, "
        f"OPENBLAS_L2_SIZE={os.environ.get('OPENBLAS_L2_SIZE', '-')}"
    )
    truth, preds = _data(n, k, 2, seed=1)
    correct = np.stack([(p == truth).astype(np.float64) for p in preds])

    def baseline() -> Any:
        return sps.bootstrap(
            (correct[:kb],),
            np.mean,
            n_resamples=b,
            vectorized=True,
            axis=-1,
            method="percentile",
            batch=max(1, 25_000_000 // (n * kb)),  # about 200 MB of resampled data at a time
            rng=np.random.default_rng(0),
        )

    t_base_part, _ = _timed(baseline)
    t_base = t_base_part * k / kb
    how = "measured" if kb == k else f"extrapolated linearly from {kb} entries"
    print(
        f"\n1. scipy.stats.bootstrap, percentile, vectorised: {t_base_part:.2f} s for {kb} entries "
        f"(one call); for {k} entries ({how}): {t_base:.1f} s"
    )

    def end_to_end() -> Any:
        scores = score_entries(truth, preds, metric="accuracy", resamples=b, seed=0)
        return intervals_for(scores, method="bca")

    t_e2e, _ = _timed(end_to_end)
    rows = [("2. engine end to end (draw W, W @ S, jackknife, BCa), accuracy", t_e2e, work)]

    with tempfile.TemporaryDirectory(prefix="stats-bench-") as cache:
        design = resample_design(n, resamples=b, seed=0)
        t_build, _ = _timed(lambda: unit_weights(design, cache_dir=cache))
        print(f"   (drawing W alone and writing its cache: {t_build:.2f} s, {n * b / 2**20:.0f} MiB uint8)")

        def cached(entries: list[np.ndarray], metric: str, labels: Any = None) -> Any:
            scores = score_entries(
                truth_c, entries, metric=metric, labels=labels, resamples=b, seed=0, cache_dir=cache
            )
            return intervals_for(scores, method="bca")

        truth_c = truth
        t_one, _ = _timed(lambda: cached(preds[:1], "accuracy"), repeat=3)
        t_all, _ = _timed(lambda: cached(preds, "accuracy"), repeat=2)
        rows.append(("3a. engine, W cached, one new entry, accuracy", t_one, float(n) * b))
        rows.append((f"3b. engine, W cached, all {k} entries, accuracy", t_all, work))
        truth10, preds10 = _data(n, k, 10, seed=2)
        truth_c = truth10
        t_f1, _ = _timed(lambda: cached(preds10, "macro_f1", list(range(10))), repeat=2)
        rows.append((f"4. engine, W cached, all {k} entries, macro-F1 10 classes", t_f1, work))
        peak = _peak_mib(end_to_end)
        t_draw, _ = _timed(lambda: [_draw_chunk(design, c) for c in range(design.n_chunks)])
        t_draw_old, _ = _timed(lambda: [draw_chunk_v0(design, c) for c in range(design.n_chunks)])
        same = all(np.array_equal(_draw_chunk(design, c), draw_chunk_v0(design, c)) for c in range(3))

    print(f"\n{'case':<62} {'wall s':>8} {'x baseline':>11} {'res*item*entry/s':>17}")
    print(
        f"{'1. scipy.stats.bootstrap (all K entries)':<62} {t_base:>8.2f} {1.0:>11.1f} {work / t_base:>17.3g}"
    )
    for label, seconds, amount in rows:
        base = t_base if amount == work else t_base / k
        print(f"{label:<62} {seconds:>8.3f} {base / seconds:>11.1f} {amount / seconds:>17.3g}")
    print(f"\npeak traced memory of the end-to-end run (tracemalloc): {peak:.0f} MiB")
    print(
        f"drawing W alone ({b} x {n}): {t_draw:.3f} s; before issue 14 (tests.benchmarks._baseline): {t_draw_old:.3f} s "
        f"-> ratio {t_draw_old / t_draw:.1f}x; same bytes: {same}"
    )
    print("targets: end to end >= 8x, cached >= 50x, one new entry < 0.2 s, macro-F1 all entries < 2 s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
