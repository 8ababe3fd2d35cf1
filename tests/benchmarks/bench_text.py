"""Benchmarks of the text metrics (issue 20): ``python -m tests.benchmarks.bench_text [--quick]``.

1. A WMT-size board from stored statistics: 3,000 segments, 20 systems (synthetic, seeded: no download),
   corpus BLEU. Timed from the stored per-segment statistics: B = 10,000 bootstrap replicates of every
   system (the engine), the board (:func:`stats.board.build_board`: intervals, ranks, max-t verdict and
   paired randomization with R = 10,000), and sacreBLEU's own conventions reproduced exactly from its
   seed (:func:`stats.text.significance.sacrebleu_paired_bs` with B = 10,000 and ``_ar`` with
   R = 10,000, 19 systems against the first).
2. The baseline, sacreBLEU 2.6.0's own ``PairedTest`` (``--paired-bs`` / ``--paired-ar``) on the same
   systems, measured in the same run. A full run (19 comparisons; its bootstrap materialises a
   B x N x m float32 array per system, 1.2 GB at B = 10,000) is too slow and too large for this machine,
   so it runs on the baseline and two systems at B = 1,000 and R = 10,000 and is extrapolated: per
   comparison x 19, and the bootstrap linearly in B. Its own statistics extraction is timed apart
   (sacreBLEU re-extracts every system inside the test) and subtracted, so both sides start from
   statistics. The p-values of those two comparisons are compared with ours for identity.
3. One 3,000-segment submission's BLEU + chrF + TER statistics extraction (sacreBLEU's; TER compiled,
   :mod:`stats.text.ter`), against sacreBLEU's pure-Python TER in the same run (rows compared on every
   segment), and with the service's sample check (``verify="sample"``). ``--extraction-only``: this part.

Peak memory: tracemalloc's peak (numpy allocations included) in a second, untimed run of each part. Figures go to
docs/benchmarks.md with this command and ``uptime``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import os
import time
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from stats.board import build_board
from stats.engine import score_item_statistics
from stats.metrics import get_metric
from stats.text.extract import text_metric
from stats.text.significance import sacrebleu_paired_ar, sacrebleu_paired_bs
from stats.text.synthetic import SyntheticCorpus, noisy_system, synthetic_corpus


def timed(fn: Callable[[], Any], *, memory: bool = True) -> tuple[Any, float, float]:
    """Result, seconds, and the tracemalloc peak in MB of a second run (tracemalloc slows pure-Python
    code about tenfold, so the timed run is not traced; ``memory=False`` skips the second run)."""
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    if not memory:
        return out, dt, float("nan")
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return out, dt, peak / 2**20


def systems_of(corpus: SyntheticCorpus, k: int) -> list[list[str]]:
    """``k`` systems of graded quality (substitution 0.2 to 0.4, some short, some long)."""
    rng = np.random.default_rng(11)
    out = []
    for j in range(k):
        drop, insert = (0.08, 0.03) if j % 3 == 0 else (0.04, 0.06) if j % 3 == 1 else (0.05, 0.05)
        out.append(
            noisy_system(
                corpus, seed=1000 + j, substitute=float(rng.uniform(0.2, 0.4)), drop=drop, insert=insert
            )
        )
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="300 segments, 5 systems, B = R = 1,000")
    ap.add_argument("--skip-extraction", action="store_true")
    ap.add_argument("--extraction-only", action="store_true", help="part 3 only")
    args = ap.parse_args(argv)
    if args.extraction_only:
        n = 300 if args.quick else 3000
        corpus = synthetic_corpus(n, seed=0)
        bench_extraction(systems_of(corpus, 1)[0], [corpus.references])
        return
    n, k, b, r = (300, 5, 1000, 1000) if args.quick else (3000, 20, 10_000, 10_000)
    print(f"text benchmark: N = {n} segments, K = {k} systems, B = {b}, R = {r}; load: {os.getloadavg()}")
    corpus = synthetic_corpus(n, seed=0)
    refs = [corpus.references]
    systems = systems_of(corpus, k)
    bleu = text_metric("bleu")
    t0 = time.perf_counter()
    stats = [bleu.statistics(h, refs, verify=False).matrix for h in systems]
    print(f"(BLEU statistics of {k} systems extracted in {time.perf_counter() - t0:.1f} s, stored)")

    # 1. ours, from stored statistics
    metric = get_metric("bleu")

    def board() -> Any:
        scores = score_item_statistics(stats, metric=metric, resamples=b, seed=0)
        return build_board(
            names=[f"sys{j}" for j in range(k)],
            values=[s.value for s in scores],
            replicates=np.column_stack([s.replicates for s in scores]),
            jackknife=np.column_stack([s.jackknife for s in scores]),
            higher_is_better=True,
            metric_name="bleu",
            seed=0,
            item_statistics=stats,
            finalize=metric.finalize,
            randomizations=r,
        )

    built, t_board, m_board = timed(board)
    print(
        f"ours: board (B = {b} replicates + intervals, ranks, max-t, randomization R = {r}): {t_board:.2f} s, peak {m_board:.0f} MB"
    )
    _, t_bs, m_bs = timed(lambda: sacrebleu_paired_bs(stats, bleu, n_samples=b))
    print(
        f"ours: sacreBLEU's paired bootstrap, exact, {k - 1} systems, B = {b}: {t_bs:.2f} s, peak {m_bs:.0f} MB"
    )
    ar, t_ar, m_ar = timed(lambda: sacrebleu_paired_ar(stats, bleu, n_samples=r))
    print(
        f"ours: sacreBLEU's paired randomization, exact, {k - 1} systems, R = {r}: {t_ar:.2f} s, peak {m_ar:.0f} MB"
    )

    # 2. sacreBLEU's own paired tests on the baseline and two systems, extrapolated
    import sacrebleu
    from sacrebleu.significance import PairedTest

    logging.getLogger("sacrebleu").setLevel(logging.ERROR)
    sub: list[tuple[str, Sequence[str]]] = [(f"sys{j}", systems[j]) for j in range(3)]
    b_sb = min(b, 1000)
    t_ex = time.perf_counter()
    for _, h in sub:
        sacrebleu.BLEU()._extract_corpus_statistics(h, refs)
    t_extract = (time.perf_counter() - t_ex) / 3  # one system's extraction inside sacreBLEU's test
    with contextlib.redirect_stderr(io.StringIO()):
        (_, res_bs), t_sb_bs, _ = timed(
            lambda: PairedTest(sub, {"BLEU": sacrebleu.BLEU()}, refs, "bs", b_sb)(), memory=False
        )
        (_, res_ar), t_sb_ar, _ = timed(
            lambda: PairedTest(sub, {"BLEU": sacrebleu.BLEU()}, refs, "ar", r)(), memory=False
        )
    # 3 extractions (baseline + 2 systems) inside each test; 2 comparisons
    per_bs = (t_sb_bs - 3 * t_extract) / 2 * (b / b_sb)
    per_ar = (t_sb_ar - 3 * t_extract) / 2
    full_bs, full_ar = per_bs * (k - 1), per_ar * (k - 1)
    print(
        f"sacreBLEU PairedTest bs, 2 comparisons at B = {b_sb}: {t_sb_bs:.1f} s, "
        f"ar at R = {r}: {t_sb_ar:.1f} s; one extraction {t_extract:.2f} s"
    )
    print(
        f"sacreBLEU extrapolated from statistics, {k - 1} comparisons: bs at B = {b} {full_bs:.0f} s, ar at R = {r} "
        f"{full_ar:.0f} s, total {full_bs + full_ar:.0f} s"
    )
    print(
        f"ratio (sacreBLEU's paired tests / ours in its convention): bs {full_bs / t_bs:.0f}x, ar {full_ar / t_ar:.0f}x, "
        f"both {(full_bs + full_ar) / (t_bs + t_ar):.0f}x; / our whole board {(full_bs + full_ar) / t_board:.0f}x"
    )
    same_bs = sacrebleu_paired_bs(stats[:3], bleu, n_samples=b_sb).p_values[1:].tolist() == [
        x.p_value for x in res_bs["BLEU"][1:]
    ]
    same_ar = ar.p_values[1:3].tolist() == [x.p_value for x in res_ar["BLEU"][1:]]
    print(f"identical p-values: bs (B = {b_sb}) {same_bs}, ar (R = {r}) {same_ar}")
    print(
        f"board leader {built.leader}; randomization p of the runner-up {sorted(x.p_value for x in built.rows)[1]:.4g}"
    )

    # 3. extraction of one submission
    if not args.skip_extraction:
        bench_extraction(systems[0], refs)


def bench_extraction(hyp: list[str], references: Sequence[Sequence[str]]) -> None:
    """One submission's BLEU + chrF + TER statistics; TER against sacreBLEU's own in the same run."""
    refs: list[list[str | None]] = [list(r) for r in references]
    from stats.text.extract import _sacrebleu_block

    print(f"extraction of one system, N = {len(hyp)} segments; load {os.getloadavg()}")
    ter = text_metric("ter")
    _, t_cold, _ = timed(lambda: ter.statistics(hyp[:5], refs and [r[:5] for r in refs], verify=False),
                         memory=False)  # fmt: skip
    print(f"TER first call in a process (numba's compiled code loaded from its cache): {t_cold:.2f} s")
    c0 = time.process_time()
    ours, t_ter, m_ter = timed(lambda: ter.statistics(hyp, refs, verify=False).matrix, memory=False)
    c_ter = time.process_time() - c0
    c0 = time.process_time()
    theirs, t_sb, _ = timed(lambda: _sacrebleu_block(ter, hyp, refs), memory=False)
    c_sb = time.process_time() - c0
    _, _, m_ter = timed(lambda: ter.statistics(hyp, refs, verify=False).matrix)
    same = bool(np.array_equal(ours[:, :2], theirs))
    print(
        f"TER: compiled {t_ter:.2f} s (CPU {c_ter:.2f} s, peak {m_ter:.0f} MB), sacreBLEU 2.6.0 {t_sb:.1f} s "
        f"(CPU {c_sb:.1f} s): {t_sb / t_ter:.0f}x wall, {c_sb / c_ter:.0f}x CPU; rows identical on every "
        f"segment: {same}"
    )
    total_plain = t_ter
    total_cpu = c_ter
    total_checked = 0.0
    peaks = [m_ter]
    for name in ("bleu", "chrf", "ter"):
        m = text_metric(name)

        def run(verify: bool | str, m: Any = m) -> Any:
            return m.statistics(hyp, refs, verify=verify)

        dt = t_ter
        if name != "ter":
            c0 = time.process_time()
            _, dt, _ = timed(lambda: run(False), memory=False)
            total_cpu += time.process_time() - c0
            _, _, peak = timed(lambda: run(False))
            total_plain += dt
            peaks.append(peak)
        _, dt_check, _ = timed(lambda: run("sample"), memory=False)
        total_checked += dt_check
        print(
            f"extraction {name}: {dt if name != 'ter' else t_ter:.2f} s; {dt_check:.2f} s with the sample check"
        )
    print(
        f"BLEU + chrF + TER of one submission: {total_plain:.2f} s (CPU {total_cpu:.2f} s; {total_checked:.2f} s "
        f"with the service's sample checks); target 10 s; peak {max(peaks):.0f} MB; load {os.getloadavg()}"
    )


if __name__ == "__main__":
    main()
