"""Benchmark of the comparison layer: ``python -m tests.benchmarks.bench_compare``.

On K entries, N items and B resamples (default 1,000 x 10,000 x 10,000), with replicates from the engine
(the task's common weights, accuracy), it times in one process:

1. everything a board rebuild computes from stored replicates (``build_board``: value and difference
   intervals, paired bootstrap p-values against the leader, Holm, the marginal rank distribution, the
   max-t simultaneous rank sets and best set with step-down), its peak traced memory, and the same call
   with the implementations of before issue 14 (``tests.benchmarks._baseline``: dense float32 max-t, stable argsort
   ranks, sorted interval quantiles) measured in the same run - the targets are under 1 s and 300 MB;
2. a board with one more entry (what a new submission costs: a full rebuild);
3. McNemar's exact test of all entries against the leader;
4. paired approximate randomization with R draws of all entries against the leader, against the
   implementation of before issue 14 - the target is under 2 s;

and the straightforward per-pair loops doing the same work: the max-t statistic pair by pair, the rank
distribution resample by resample with ``scipy.stats.rankdata``, the bootstrap p-values and intervals
entry by entry, and randomization entry by entry and draw by draw. The slow loops are timed on a subset
(stated in the output) and extrapolated linearly. ``--no-baseline`` skips the old implementations (for
large K).

5. (issue 24) the board on every **family** of boards (``tests/benchmarks/families.py``: spread accuracies,
   nested errors as in the load test, near-duplicate entries, many exact ties, a mix): ``build_board``'s
   time (the first call on it, without tracemalloc) and peak traced memory (a second, traced call), new
   entries on it (``BoardCache``: the first after the cache's full build, then ``--chain`` more, each on the
   previous one's board), on both of its paths (the previous columns compared element by element, and by
   the column digests the service passes), and whether the first and the last equal the full rebuilds,
   beside the max-t search of before issue 24 (``tests.benchmarks._baseline_v2``) on the same board in the
   same run (up to ``--baseline-max`` entries: it took 175 s on the nested board of 1,000). The worst
   family's time is the figure that counts. ``--families all`` (default) or a comma-separated list,
   ``--family NAME`` for one. Above 2,000 entries only this section runs (the other sections' baselines
   and loops are O(B K^2) in Python or float32 and would take hours): ``--entries 10000`` is the K = 10,000
   board (N = B = 10,000).

Figures: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from scipy import stats as sps

import stats.board as board_module
import stats.intervals as intervals_module
from stats.board import build_board
from stats.board_update import BoardCache
from stats.compare import bootstrap_p_values, holm, mcnemar_exact, paired_randomization
from stats.compare_ranks import _gram_operand, rank_distribution, simultaneous_ranks
from stats.engine import score_entries
from stats.metrics import get_metric
from tests.benchmarks import _baseline, _baseline_v1, _baseline_v2, families

#: CPU seconds (all threads of the process) of the fastest run of the last ``_timed`` call: on the shared
#: machine the wall time is mostly waiting for a core, the CPU time much less so.
_CPU = [0.0]


def _timed(fn: Callable[[], Any], repeat: int = 1) -> tuple[float, Any]:
    best = float("inf")
    result = None
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        result = fn()
        wall = time.perf_counter() - start
        if wall < best:
            best, _CPU[0] = wall, time.process_time() - cpu
    return best, result


def _peak_mib(fn: Callable[[], Any]) -> float:
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


@contextmanager
def _before_issue_14() -> Iterator[None]:
    """``build_board`` with the implementations of before issue 14 (tests.benchmarks._baseline)."""
    saved = (board_module.simultaneous_ranks, board_module.rank_distribution, intervals_module._quantiles)
    board_module.simultaneous_ranks = _baseline.simultaneous_ranks_v0
    board_module.rank_distribution = _baseline.rank_distribution_v0
    intervals_module._quantiles = _baseline.quantiles_v0
    try:
        yield
    finally:
        board_module.simultaneous_ranks, board_module.rank_distribution, intervals_module._quantiles = saved


@contextmanager
def _main_v1() -> Iterator[None]:
    """``build_board`` with the comparison code of main before the incremental board (tests.benchmarks._baseline_v1)."""
    saved = (
        board_module.simultaneous_ranks,
        board_module.rank_distribution,
        _baseline_v1._pair_standard_errors,
    )
    pair_standard_errors = _baseline_v1._pair_standard_errors
    board_module.simultaneous_ranks = _baseline_v1.simultaneous_ranks  # type: ignore[assignment]
    board_module.rank_distribution = _baseline_v1.rank_distribution  # type: ignore[assignment]
    # the Gram matrix of issue 24 (exact on any BLAS), so that the boards compare equal
    _baseline_v1._pair_standard_errors = lambda y: pair_standard_errors(_gram_operand(y))
    try:
        yield
    finally:
        (
            board_module.simultaneous_ranks,
            board_module.rank_distribution,
            _baseline_v1._pair_standard_errors,
        ) = saved


def _v1_blas(fn: Callable[[], Any]) -> Callable[[], Any]:
    """``fn`` with the BLAS threads of main before this change (OpenBLAS's default: every core)."""

    def run() -> Any:
        saved = os.environ.get("LEADERBOARD_BLAS_THREADS")
        os.environ["LEADERBOARD_BLAS_THREADS"] = str(os.cpu_count() or 1)
        try:
            return fn()
        finally:
            if saved is None:
                del os.environ["LEADERBOARD_BLAS_THREADS"]
            else:
                os.environ["LEADERBOARD_BLAS_THREADS"] = saved

    return run


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


def _board_options(n: int, seed: int) -> dict[str, Any]:
    return {
        "higher_is_better": True,
        "metric_name": "accuracy",
        "seed": seed,
        "interval": "percentile",
        "test": "bootstrap",
        "n_items": n,
    }


def _traced(fn: Callable[[], Any]) -> tuple[float, float, float, Any]:
    """Wall time, CPU time and peak traced memory (MiB) of one call, tracemalloc on."""
    gc.collect()
    tracemalloc.start()
    try:
        start, cpu = time.perf_counter(), time.process_time()
        result = fn()
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return wall, cpu, peak / 2**20, result


def _one_family(
    family: str,
    *,
    k: int,
    n: int,
    b: int,
    seed: int,
    baseline_max: int,
    check: bool,
    trace_entry: bool = False,
    chain: int = 4,
) -> tuple[str, float, float, list[float], list[float]]:
    """One line of section 5: (family, build_board's time, peak MiB, the first new entry's time on each
    path (columns compared, column digests), the median of the next ``chain`` entries' on each path)."""
    options = _board_options(n, seed)
    start = time.perf_counter()
    theta_all, point_all = families.replicates(families.correctness(family, n, k + 1, seed=seed), b, seed)
    setup = time.perf_counter() - start
    entry_names = [f"e{j:05d}" for j in range(k + 1)]
    theta, point = theta_all[:, :k], point_all[:k]

    def board(t: np.ndarray = theta, v: np.ndarray = point) -> Any:
        return build_board(names=entry_names[: t.shape[1]], values=v, replicates=t, **options)

    # the time from the first call on the family's board, without tracemalloc (its hooks cost time in
    # every allocation), at every K; the peak from a second, traced call. With ``--family`` the first call
    # is the process's, a cold one, the figure to hold against the target: at K = 10,000 (mix, 2 threads) a first call took 30-31 s, a warm
    # untraced call after a traced one 27.0 s, the traced call 34.7 s (docs/benchmarks.md, section 9)
    t_board, got = _timed(board)
    cpu_board = _CPU[0]
    del got
    gc.collect()
    t_traced, _, peak, got = _traced(board)
    old = "not run"
    if 0 < k <= baseline_max:
        with _baseline_v2.before_issue_24():
            t_old, old_board = _timed(board)
        old = (
            f"{t_old:8.2f} s (CPU {_CPU[0]:7.2f} s; {t_old / t_board:5.1f}x, same board: "
            f"{old_board.as_dict() == got.as_dict()})"
        )
    del got
    # the new entries: the first on the board of K (the cache's first update after its full build), then a
    # chain of ``chain`` more, each on the previous one's board (a board that keeps receiving entries, the
    # service's steady state: the buffers kept by the cache are warm). Their columns are drawn after the
    # board's (the same resamples W), so the board of K and the first new entry are unchanged.
    chained = [f"e{j:05d}" for j in range(k + 1, k + 1 + chain)]
    extra, extra_point = np.empty((b, 0)), np.empty(0)
    if chain:
        extra, extra_point = families.replicates(
            families.correctness(family, n, chain, seed=seed + 1), b, seed
        )
    names_all = entry_names + chained
    point_chain = np.concatenate([point_all, extra_point])
    digests = [BoardCache.column_digest(theta_all[:, j], None) for j in range(k + 1)]
    digests += [BoardCache.column_digest(extra[:, j], None) for j in range(chain)]

    def columns(m: int) -> np.ndarray:
        """The first m columns, row-major as the service stacks them, made before a timed build (a view
        of the first columns of a wider array would be copied inside ``BoardCache.build``: 0.8 GB)."""
        if m <= k + 1:
            return theta_all if m == k + 1 else theta
        return np.hstack([theta_all, extra[:, : m - k - 1]])

    lines, firsts, steady, boards = [], [], [], []
    for path in ("columns compared", "column digests"):
        with_digests = path == "column digests"

        def build(
            m: int, cache: BoardCache, replicates: np.ndarray, with_digests: bool = with_digests
        ) -> Any:
            extra_args = {"column_digests": digests[:m]} if with_digests else {}
            return cache.build(
                names=names_all[:m], values=point_chain[:m], replicates=replicates, **extra_args, **options
            )

        cache = BoardCache()
        entry_peak = ""
        if trace_entry:  # the cache and the update together, traced (the new entry's time then includes it)
            gc.collect()
            tracemalloc.start()
        try:
            build(k, cache, theta)
            if trace_entry:
                held = tracemalloc.get_traced_memory()[0] / 2**20
                tracemalloc.reset_peak()
            t_first, first_board = _timed(lambda cache=cache: build(k + 1, cache, theta_all))  # type: ignore[misc]
            if trace_entry:
                peak_entry = tracemalloc.get_traced_memory()[1] / 2**20
                entry_peak = f"; traced: cache {held:.0f} MiB, peak with the update {peak_entry:.0f} MiB"
        finally:
            if trace_entry:
                tracemalloc.stop()
        cpu_first, last = _CPU[0], cache.last
        if check:
            boards.append((k + 1, first_board))
        del first_board
        times, cpus, kinds = [], [], set()
        chain_board = None
        for m in range(k + 2, k + 2 + chain):
            del chain_board
            replicates = columns(m)
            t, chain_board = _timed(
                lambda m=m, cache=cache, replicates=replicates: build(m, cache, replicates)  # type: ignore[misc]
            )
            del replicates
            times.append(t)
            cpus.append(_CPU[0])
            kinds.add(cache.last)
        if check and chain:
            boards.append((k + 1 + chain, chain_board))
        cache.clear()  # its memory free before the next cache's board
        del chain_board
        firsts.append(t_first)
        chain_text = ""
        if times:
            steady.append(float(np.median(times)))
            chain_text = (
                f", the next {chain}: median {np.median(times):.2f} s (min {min(times):.2f}, max {max(times):.2f};"
                f" CPU median {np.median(cpus):.2f} s; {'/'.join(sorted(kinds))})"
            )
        lines.append(f"{path}: first {t_first:.2f} s (CPU {cpu_first:.2f} s, {last}{entry_peak}){chain_text}")
    same = "not checked"
    if check:  # the first new entry's board and the chain's last against the full rebuilds
        fulls = {
            m: build_board(names=names_all[:m], values=point_chain[:m], replicates=columns(m), **options)
            for m in sorted({m for m, _ in boards})
        }
        same = str(
            all(
                fulls[m].as_dict() == got.as_dict()
                and fulls[m].max_t_critical_value == got.max_t_critical_value
                and bool(np.array_equal(fulls[m].pair_standard_errors, got.pair_standard_errors))
                for m, got in boards
            )
        )
    print(
        f"   {family:16s} setup {setup:6.1f} s | build_board {t_board:8.2f} s (CPU {cpu_board:7.2f} s"
        f"; traced call {t_traced:.2f} s), peak {peak:7.0f} MiB | before issue 24: {old} | "
        f"new entry, {'; '.join(lines)}; the boards of the first and the last the full rebuilds': {same}",
        flush=True,
    )
    return family, t_board, peak, firsts, steady if steady else firsts


def families_section(
    names: list[str],
    *,
    k: int,
    n: int,
    b: int,
    seed: int,
    baseline_max: int,
    check: bool,
    baseline_on: list[str] | None = None,
    trace_entry: bool = False,
    chain: int = 4,
) -> None:
    """Section 5: the board, its memory and new entries on every family, beside the search of before
    issue 24 on the same board."""
    print(f"5. the board on every family of boards (K={k:,}, N={n:,}, B={b:,}; tests/benchmarks/families.py)")
    print(f"   load average {os.getloadavg()[0]:.1f} at the start of the section")
    table = [
        _one_family(
            family,
            k=k,
            n=n,
            b=b,
            seed=seed,
            baseline_max=baseline_max if baseline_on is None or family in baseline_on else 0,
            check=check,
            trace_entry=trace_entry,
            chain=chain,
        )
        for family in names
    ]
    if not table:
        return
    worst = max(table, key=lambda row: row[1])
    # the new entry on each path, the largest first entry and the largest chain median over the families
    # (each may be another family's); the service passes column digests
    entry = "; ".join(
        f"{path}: the first {max(row[3][i] for row in table):.2f} s, then median {max(row[4][i] for row in table):.2f} s"
        for i, path in reversed(list(enumerate(("columns compared", "column digests (the service's path)"))))
    )
    print(
        f"   worst family: {worst[0]} {worst[1]:.2f} s (targets at K = 10,000: < 30 s), peak memory "
        f"{max(row[2] for row in table):.0f} MiB (< 3 GB), new entry, the largest over the families: {entry} "
        f"(< 2 s); load average {os.getloadavg()[0]:.1f} at the end of the section"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.bench_compare", description=__doc__)
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--randomizations", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-baseline", action="store_true", help="skip the implementations before issue 14")
    parser.add_argument("--no-loops", action="store_true", help="skip the per-pair loops")
    parser.add_argument("--families", default="all", help="families of section 5: 'all', 'none' or a list")
    parser.add_argument("--family", help="one family for section 5 (and nothing else)")
    parser.add_argument("--only-families", action="store_true", help="run section 5 only")
    parser.add_argument(
        "--trace-entry",
        action="store_true",
        help="section 5: trace the memory of each cache and its first new entry (that time then includes tracing)",
    )
    parser.add_argument(
        "--chain",
        type=int,
        default=4,
        help="section 5: new entries timed after the first, each on the previous one's board (default 4)",
    )
    parser.add_argument(
        "--baseline-families",
        default="all",
        help="families on which section 5 runs the search of before issue 24 ('all' or a list)",
    )
    parser.add_argument(
        "--baseline-max",
        type=int,
        default=1000,
        help="largest K at which section 5 runs the search of before issue 24",
    )
    parser.add_argument(
        "--check",
        choices=("auto", "yes", "no"),
        default="auto",
        help="compare the new entry's board with a full rebuild (auto: K <= 2,000)",
    )
    args = parser.parse_args(argv)
    k, n, b, r = args.entries, args.items, args.resamples, args.randomizations
    metric = get_metric("accuracy")
    if args.family is not None:
        chosen = [args.family]
    elif args.families == "all":
        chosen = list(families.FAMILIES)
    elif args.families == "none":
        chosen = []
    else:
        chosen = [f.strip() for f in args.families.split(",") if f.strip()]
    for family in chosen:
        if family not in families.FAMILIES:
            parser.error(f"unknown family {family!r}; one of {', '.join(families.FAMILIES)}")
    check = args.check == "yes" or (args.check == "auto" and k <= 2000)
    baseline_on = None if args.baseline_families == "all" else args.baseline_families.split(",")
    if args.family is not None or args.only_families or k > 2000:
        print(f"comparison benchmark, families of boards: K={k:,} entries, N={n:,} items, B={b:,} resamples")
        print(
            f"machine: {platform.machine()}, {os.cpu_count()} cores, numpy {np.__version__}, "
            f"load average {os.getloadavg()[0]:.1f} at start"
        )
        families_section(
            chosen,
            k=k,
            n=n,
            b=b,
            seed=args.seed,
            baseline_max=args.baseline_max,
            check=check,
            baseline_on=baseline_on,
            trace_entry=args.trace_entry,
            chain=args.chain,
        )
        return

    print(f"comparison benchmark: K={k:,} entries, N={n:,} items, B={b:,} resamples, R={r:,} randomizations")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, numpy {np.__version__}, "
        f"load average {os.getloadavg()[0]:.1f} at start"
    )
    truth, preds = _task(n, k + 1, args.seed)
    t_setup, scores = _timed(
        lambda: score_entries(truth, preds, metric=metric, resamples=b, seed=args.seed, jackknife=False)
    )
    theta_all = np.column_stack([s.replicates for s in scores])
    point_all = np.array([s.value for s in scores])
    # the board has entries 0..K-1; entry K is the "new submission" of case 2
    theta, point = theta_all[:, :k], point_all[:k]
    stats = [metric.item_statistics(truth, p) for p in preds[:k]]
    leader = int(np.argmax(point))
    print(f"setup (engine, not timed below): replicates of {k + 1} entries in {t_setup:.1f} s")
    print()

    def board(t: np.ndarray = theta, v: np.ndarray = point) -> Any:
        return build_board(
            names=[f"e{j:05d}" for j in range(t.shape[1])],
            values=v,
            replicates=t,
            higher_is_better=True,
            metric_name="accuracy",
            seed=args.seed,
            interval="percentile",
            test="bootstrap",
            n_items=n,
        )

    # -- 1. from stored replicates ------------------------------------------------------------------
    t_board, new_board = _timed(board, repeat=2)
    cpu_board = _CPU[0]
    peak = _peak_mib(board)
    t_rd, _ = _timed(lambda: rank_distribution(theta, higher_is_better=True), repeat=2)
    t_sim, sim = _timed(lambda: simultaneous_ranks(theta, point, higher_is_better=True), repeat=2)
    t_single, _ = _timed(lambda: simultaneous_ranks(theta, point, higher_is_better=True, stepdown=False))
    diff = theta - theta[:, [leader]]
    t_p, _ = _timed(lambda: holm(bootstrap_p_values(diff, point - point[leader])), repeat=2)

    print("1. board from stored replicates (intervals, p-values, Holm, rank distribution, max-t sets)")
    print(
        f"   build_board, all of it (percentile, bootstrap p)  {t_board:8.3f} s   (target < 1 s; CPU {cpu_board:.3f} s)"
    )
    print(f"     peak traced memory (tracemalloc)                {peak:8.0f} MiB (target < 300 MiB)")
    print(f"     rank distribution (B x K ranks, K x K table)    {t_rd:8.3f} s")
    print(f"     max-t simultaneous ranks + best set, step-down  {t_sim:8.3f} s   ({sim.steps} steps)")
    print(f"     max-t single step                               {t_single:8.3f} s")
    print(f"     bootstrap p-values + Holm, all vs leader        {t_p:8.3f} s")

    def board_v1() -> Any:
        with _main_v1():
            return board()

    t_v1_board, v1_board = _timed(_v1_blas(board_v1), repeat=2)
    print(
        f"   main before this change (tests.benchmarks._baseline_v1, all BLAS threads), same run: build_board "
        f"{t_v1_board:8.3f} s (CPU {_CPU[0]:.3f} s) -> ratio {t_v1_board / t_board:.2f}x; same board: "
        f"{v1_board.as_dict() == new_board.as_dict()}"
    )
    if not args.no_baseline:
        with _before_issue_14():
            t_old_board, old_board = _timed(board)
        t_old_rd, _ = _timed(lambda: _baseline.rank_distribution_v0(theta, higher_is_better=True))
        t_old_sim, old_sim = _timed(
            lambda: _baseline.simultaneous_ranks_v0(theta, point, higher_is_better=True)
        )
        same_sets = sum(
            a.simultaneous_rank_interval == o.simultaneous_rank_interval
            for a, o in zip(new_board.rows, old_board.rows, strict=True)
        )
        print("   before issue 14 (tests.benchmarks._baseline), same run:")
        print(f"     build_board {t_old_board:8.3f} s -> ratio {t_old_board / t_board:.1f}x")
        print(f"     rank distribution {t_old_rd:8.3f} s -> ratio {t_old_rd / t_rd:.1f}x")
        print(
            f"     max-t step-down {t_old_sim:8.3f} s ({old_sim.steps} steps, float32) -> ratio "
            f"{t_old_sim / t_sim:.1f}x; critical values {old_sim.critical_value:.6f} (float32) vs "
            f"{sim.critical_value:.6f}; simultaneous rank sets equal for {same_sets} of {k} entries"
        )
    if not args.no_loops:
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
        print(
            f"   per-pair loops: max-t {t_maxt_loop:.1f} s (timed on {len(subset)} of {len(pairs)} pairs, "
            f"x{sim.steps} steps), rankdata per resample {t_rank_loop:.2f} s (timed on {rows} of {b} rows), "
            f"p/intervals per entry {t_p_loop:.2f} s; total {loop_total:.1f} s -> ratio "
            f"{loop_total / t_board:.0f}x"
        )
    print()

    # -- 2. one more entry --------------------------------------------------------------------------
    t_more, full_more = _timed(lambda: board(theta_all, point_all))
    names_all = [f"e{j:05d}" for j in range(k + 1)]
    options: dict[str, Any] = {
        "higher_is_better": True,
        "metric_name": "accuracy",
        "seed": args.seed,
        "interval": "percentile",
        "test": "bootstrap",
    }
    updates = []
    for _ in range(2):
        # the same board of K each time, one new entry on it (an update takes the kept state's arrays:
        # a fresh cache per run)
        cache = BoardCache()
        cache.build(names=names_all[:k], values=point, replicates=theta, n_items=n, **options)
        updates.append(
            _timed(
                lambda cache=cache: cache.build(  # type: ignore[misc]
                    names=names_all, values=point_all, replicates=theta_all, n_items=n, **options
                )
            )
        )
    t_update, inc_board = min(updates, key=lambda u: u[0])
    cpu_update = _CPU[0]
    print(f"2. a new entry on the board of {k}")
    print(f"   full rebuild with {k + 1} entries                   {t_more:8.3f} s")
    print(
        f"   incremental (stats.board_update.BoardCache)        {t_update:8.3f} s   (target < 0.5 s; CPU of the "
        f"last {cpu_update:.3f} s) -> ratio "
        f"{t_more / t_update:.1f}x; same board as the full rebuild: {inc_board.as_dict() == full_more.as_dict()} "
        f"({cache.last})"
    )
    print()

    # -- 3. McNemar ----------------------------------------------------------------------------------
    def mcnemar_all() -> Any:
        c = np.column_stack([s[:, 0] for s in stats]) > 0.5
        return mcnemar_exact((c & ~c[:, [leader]]).sum(0), (~c & c[:, [leader]]).sum(0))

    t_mc, _ = _timed(mcnemar_all, repeat=3)
    print("3. McNemar exact, all entries vs leader")
    line = f"   vectorised {t_mc:.4f} s"
    if not args.no_loops:

        def mcnemar_loop() -> None:
            for j in range(k):
                a, bb = stats[j][:, 0] > 0.5, stats[leader][:, 0] > 0.5
                nb, nc = int((a & ~bb).sum()), int((~a & bb).sum())
                if nb + nc:
                    _ = sps.binomtest(nb, nb + nc).pvalue

        t_mc_loop, _ = _timed(mcnemar_loop)
        line += f"; per-pair binomtest loop {t_mc_loop:.3f} s -> ratio {t_mc_loop / t_mc:.0f}x"
    print(line)
    print()

    # -- 4. approximate randomization ----------------------------------------------------------------
    def rand(fn: Callable[..., Any] = paired_randomization, **kw: Any) -> Any:
        return fn(stats, finalize=metric.finalize, reference=leader, randomizations=r, seed=args.seed, **kw)

    t_ar, new_rand = _timed(rand, repeat=2)
    cpu_ar = _CPU[0]
    t_ar64, _ = _timed(lambda: rand(dtype=np.float64))
    t_ar_v1, v1_rand = _timed(_v1_blas(lambda: rand(_baseline_v1.paired_randomization_v1)), repeat=2)
    cpu_ar_v1 = _CPU[0]
    print(f"4. paired approximate randomization, R={r:,}, all {k - 1} entries vs leader")
    print(
        f"   one swap matrix, moving items only (float32, exact) {t_ar:8.3f} s   (target < 2 s; CPU {cpu_ar:.3f} s)"
    )
    print(f"   same in float64                                   {t_ar64:8.3f} s")
    print(
        f"   main before this change (tests.benchmarks._baseline_v1)      {t_ar_v1:8.3f} s (CPU {cpu_ar_v1:.3f} s) -> ratio "
        f"{t_ar_v1 / t_ar:.2f}x "
        f"(same counts: {bool(np.array_equal(v1_rand.counts, new_rand.counts))})"
    )
    if not args.no_baseline:
        t_ar_old, old_rand = _timed(lambda: rand(_baseline.paired_randomization_v0))
        same = bool(np.array_equal(old_rand.counts, new_rand.counts))
        print(
            f"   before issue 14 (every item in the product)       {t_ar_old:8.3f} s -> ratio "
            f"{t_ar_old / t_ar:.1f}x (same counts: {same})"
        )
    if not args.no_loops:
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
        per_entry = 5

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
        print(
            f"   entry by entry (same code, one pair at a time)     {t_ar_entry:8.1f} s   "
            f"(timed on {per_entry} entries) -> ratio {t_ar_entry / t_ar:.0f}x"
        )
        print(
            f"   entry by entry, draw by draw (numpy per draw)      {t_ar_loop:8.1f} s   "
            f"(timed on {draws} draws of 1 entry) -> ratio {t_ar_loop / t_ar:.0f}x"
        )
    print()
    if chosen:
        families_section(
            chosen,
            k=k,
            n=n,
            b=b,
            seed=args.seed,
            baseline_max=args.baseline_max,
            check=check,
            baseline_on=baseline_on,
            trace_entry=args.trace_entry,
            chain=args.chain,
        )
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
