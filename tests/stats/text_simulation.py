"""A/A simulations of the paired tests of corpus BLEU (issue 20): false-rejection rates of every p-value
rule and of the board's verdict at 10, 20, 47, 94 and 188 segments.

A pool of synthetic segments (stats.text.synthetic), each with five system outputs drawn from the same
noise process, so the outputs of a segment are exchangeable: any two systems form an A/A pair. A test
set of n segments is drawn from the pool without replacement; BLEU statistics were extracted once per
pool segment and output (sacreBLEU 2.6.0), so a simulated test set costs matrix products only.

Used by the slow tests of test_text_simulation.py; ``python -m tests.stats.text_simulation [reps [metric]]``
prints the A/A tables of docs/text.md, ``python -m tests.stats.text_simulation coverage [reps]`` the coverage of
the intervals of BLEU, chrF and TER, ``python -m tests.stats.text_simulation verdict [reps]`` the board
verdict's false claims for BLEU, chrF and TER.
"""

from __future__ import annotations

import sys
import time
from functools import lru_cache

import numpy as np

from stats.board import build_board
from stats.compare import bootstrap_p_values, paired_randomization
from stats.engine import score_item_statistics
from stats.resampling import resample_weights
from stats.text.extract import text_metric
from stats.text.significance import sacrebleu_paired_ar, sacrebleu_paired_bs
from stats.text.synthetic import noisy_system, synthetic_corpus

SIZES = (10, 20, 47, 94, 188)
RULES = ("koehn", "2delta", "sacrebleu_bs", "randomization", "sacrebleu_ar")
POOL = 1500
SYSTEMS = 5


@lru_cache(maxsize=4)
def pool(metric_name: str = "bleu", systems: int = SYSTEMS) -> np.ndarray:
    """Statistics of the pool: (systems, POOL, m)."""
    corpus = synthetic_corpus(POOL, seed=20, vocabulary=3000)
    m = text_metric(metric_name)
    outs = [
        noisy_system(corpus, seed=100 + k, substitute=0.3, drop=0.06, insert=0.05) for k in range(systems)
    ]
    return np.stack([m.statistics(o, [corpus.references], verify=False, workers=2).matrix for o in outs])


COVERAGE_METHODS = ("percentile", "basic", "bca")


def coverage(
    metric_name: str, n: int, reps: int, *, seed: int = 0, resamples: int = 1000, confidence: float = 0.95
) -> dict[str, float]:
    """Share of intervals that cover the population value, per method: test sets of ``n`` segments drawn
    with replacement from the pool (so the population is the pool's empirical distribution and its value
    is the metric of the whole pool, exactly)."""
    from stats.intervals import intervals_for
    from stats.metrics import get_metric

    stats = pool(metric_name, 1)[0]
    metric = get_metric(metric_name)
    truth = float(metric.finalize(stats.sum(axis=0)))
    rng = np.random.default_rng([seed, n, 11])
    hits = dict.fromkeys(COVERAGE_METHODS, 0)
    for r in range(reps):
        rows = rng.choice(POOL, n, replace=True)
        (score,) = score_item_statistics([stats[rows]], metric=metric, resamples=resamples, seed=r)
        for method in COVERAGE_METHODS:
            (iv,) = intervals_for([score], method=method, confidence=confidence)
            hits[method] += iv.low <= truth <= iv.high
    return {k: v / reps for k, v in hits.items()}


def aa_rates(
    n: int, reps: int, *, seed: int = 0, metric_name: str = "bleu", draws: int = 1000, alpha: float = 0.05
) -> dict[str, float]:
    """Share of A/A pairs rejected at ``alpha`` by each rule at ``n`` segments."""
    stats = pool(metric_name)
    m = text_metric(metric_name)
    fin = m.finalize
    rng = np.random.default_rng([seed, n])
    hits = dict.fromkeys(RULES, 0)
    for r in range(reps):
        rows = rng.choice(POOL, n, replace=False)
        a_idx, b_idx = rng.choice(SYSTEMS, 2, replace=False)
        sa, sb = stats[a_idx, rows], stats[b_idx, rows]
        w = resample_weights(n, resamples=draws, seed=r).astype(np.float64)
        d = fin(w @ sb) - fin(w @ sa)
        obs = float(fin(sb.sum(axis=0)) - fin(sa.sum(axis=0)))
        hits["koehn"] += float(bootstrap_p_values(d, obs, rule="percentile")) <= alpha
        hits["2delta"] += float(bootstrap_p_values(d, obs, rule="basic")) <= alpha
        res = paired_randomization([sa, sb], finalize=fin, reference=0, randomizations=draws, seed=r)
        hits["randomization"] += float(res.p_values[1]) <= alpha
        hits["sacrebleu_bs"] += (
            float(sacrebleu_paired_bs([sa, sb], m, n_samples=draws, seed=r + 1).p_values[1]) <= alpha
        )
        hits["sacrebleu_ar"] += (
            float(sacrebleu_paired_ar([sa, sb], m, n_samples=draws, seed=r + 1).p_values[1]) <= alpha
        )
    return {k: v / reps for k, v in hits.items()}


def board_false_claims(
    n: int,
    reps: int,
    *,
    k: int = 2,
    seed: int = 0,
    metric_name: str = "bleu",
    resamples: int = 1000,
    shuffle: bool = False,
) -> float:
    """Share of boards of ``k`` exchangeable systems on which the verdict calls some entry "worse than the
    best" (a false claim), through :func:`stats.board.build_board` with its defaults (max-t verdict).

    The pool's five outputs were drawn from one process, but on the pool itself they differ (BLEU 29.3 to
    30.5 on its 1,500 segments), and every test set is drawn from that one pool: a board of systems 0
    and 1 then has a true difference to find. ``shuffle=True`` assigns the pool's outputs of each drawn
    segment to the systems at random, per board, so the systems are exchangeable given the segments
    (the randomization test's null, exactly)."""
    stats = pool(metric_name)
    metric = text_metric(metric_name)
    from stats.metrics import get_metric

    registry = get_metric(metric_name)
    rng = np.random.default_rng([seed, n, k, 7])
    claims = 0
    for r in range(reps):
        rows = rng.choice(POOL, n, replace=False)
        systems = rng.choice(SYSTEMS, k, replace=False)
        per = [stats[s, rows] for s in systems]
        if shuffle:  # each segment's outputs dealt to the systems at random
            deal = rng.permuted(np.tile(np.arange(SYSTEMS), (n, 1)), axis=1)[:, :k]
            per = [stats[deal[:, j], rows] for j in range(k)]
        scores = score_item_statistics(per, metric=registry, resamples=resamples, seed=r)
        board = build_board(
            names=[f"s{j}" for j in range(k)],
            values=[s.value for s in scores],
            replicates=np.column_stack([s.replicates for s in scores]),
            jackknife=np.column_stack([s.jackknife for s in scores]),
            higher_is_better=registry.higher_is_better,
            metric_name=metric_name,
            seed=r,
            item_statistics=per,
            finalize=metric.finalize,
            randomizations=resamples,
        )
        claims += any(row.verdict == "worse than the best" for row in board.rows)
    return claims / reps


def main(argv: list[str]) -> None:
    if argv and argv[0] == "verdict":
        reps = int(argv[1]) if len(argv) > 1 else 500
        shuffle = "--shuffle" in argv
        metrics = tuple(a for a in argv[2:] if a != "--shuffle") or ("bleu", "chrf", "ter")
        t0 = time.perf_counter()
        print(f"Board verdict false claims, alpha 0.05, {reps} boards per cell, B = R = 1000")
        print("| metric | systems | " + " | ".join(str(n) for n in SIZES) + " |")
        print("|---|---|" + "---|" * len(SIZES))
        for name in metrics:
            for k in (2, 5):
                print(f"| {name} | {k} | ", end="", flush=True)
                for n in SIZES:  # cell by cell: a long run's first cells are usable before its end
                    rate = board_false_claims(n, reps, k=k, metric_name=name, shuffle=shuffle)
                    print(f"{rate:.3f} | ", end="", flush=True)
                print(flush=True)
        print(f"({time.perf_counter() - t0:.0f} s)")
        return
    if argv and argv[0] == "coverage":
        reps = int(argv[1]) if len(argv) > 1 else 500
        t0 = time.perf_counter()
        print(f"Coverage of 95% intervals, {reps} test sets per size, B = 1000")
        print("| metric | n | " + " | ".join(COVERAGE_METHODS) + " |")
        print("|---|---|" + "---|" * len(COVERAGE_METHODS))
        for name in ("bleu", "chrf", "ter"):
            for n in (20, 47, 188):
                c = coverage(name, n, reps)
                print(f"| {name} | {n} | " + " | ".join(f"{c[k]:.3f}" for k in COVERAGE_METHODS) + " |")
        print(f"({time.perf_counter() - t0:.0f} s)")
        return
    reps = int(argv[0]) if argv else 1000
    name = argv[1] if len(argv) > 1 else "bleu"
    t0 = time.perf_counter()
    print(f"A/A false-rejection rates, {name}, alpha 0.05, {reps} pairs per size, B = R = 1000")
    print("| rule | " + " | ".join(str(n) for n in SIZES) + " |")
    print("|---|" + "---|" * len(SIZES))
    table = {n: aa_rates(n, reps, metric_name=name) for n in SIZES}
    for rule in RULES:
        print(f"| {rule} | " + " | ".join(f"{table[n][rule]:.3f}" for n in SIZES) + " |")
    for k in (2, 5):
        rates = [board_false_claims(n, reps, k=k, metric_name=name) for n in SIZES]
        print(f"| board verdict, {k} systems | " + " | ".join(f"{x:.3f}" for x in rates) + " |")
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main(sys.argv[1:])
