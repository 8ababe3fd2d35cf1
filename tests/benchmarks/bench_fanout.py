"""Benchmark of a detection scoring fanned out by fixed resample chunks (issues 12 and 14):
``python -m tests.benchmarks.bench_fanout [--quick] [--chunks K]``.

COCO-val shape (the generator of :mod:`tests.benchmarks.bench_vision`: 5,000 images, 80 classes, 500,000
detections, scores to 3 decimals), B = 10,000 resamples: 40 fixed chunks of 256 rows of W. The service
(``leaderboard.scoring.fanout``) matches the entry once, then sends one Celery task per range of chunks;
each computes every AP / AR stat in the chunks holding the first 1,000 rows (the entry's page) and the
headline alone after them, exactly as measured here.

Measured in one run: the once-per-entry step (parse, match) and the size of the prepared state the
service stores as a database row; then K chunks (half among the first four, half after them) computed by
one process, and the same K chunks shared by two processes at once (two workers; forked, so they start
from the same prepared state as workers reading it from the database). The per-chunk times give the
extrapolation to all 40 chunks (stated as such: one worker would need about 40 chunk-times, more than the
600 s soft limit), and the two-worker wall time against the one-worker time on the same chunks is the
measured speedup. The chunks computed by the two processes are checked to be the one process's bytes.

Figures are recorded in docs/benchmarks.md with this command and the load (``uptime``) at the time.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import sys
import time
import zlib
from typing import Any

import numpy as np

from leaderboard.scoring import state_codec
from stats.resampling import CHUNK_RESAMPLES, ResampleDesign, iter_unit_weight_chunks, resample_design
from stats.vision.detection import DetectionTask, MatchedEntry, _Curves, detection_strata
from stats.vision.detection_io import DetectionTruth, parse_coco_results, parse_coco_truth
from tests.benchmarks.bench_vision import synthetic_coco

#: The service's rows of W with every stat (leaderboard.scoring.engine.DETAIL_RESAMPLES).
DETAIL_ROWS = 1000
HEADLINE = "AP"

_STATE: dict[str, Any] = {}  # the prepared state, inherited by the forked workers


def _chunk(c: int) -> tuple[int, float, dict[str, np.ndarray]]:
    """One chunk as the service's chunk task computes it: (chunk, seconds, replicates)."""
    task, entry, design = _STATE["task"], _STATE["entry"], _STATE["design"]
    t0 = time.perf_counter()
    ((_, w),) = list(iter_unit_weight_chunks(design, chunks=range(c, c + 1)))
    want = None if c * CHUNK_RESAMPLES < DETAIL_ROWS else [HEADLINE]
    reps = task.replicates(entry, w, stats=want)
    return c, time.perf_counter() - t0, reps


def _worker(chunks: list[int], out: Any) -> None:
    results = [_chunk(c) for c in chunks]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out.put((os.getpid(), peak, [(c, s, {k: v.tobytes() for k, v in r.items()}) for c, s, r in results]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.benchmarks.bench_fanout", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--quick", action="store_true", help="a tenth of the sizes (a smoke run)")
    parser.add_argument("--chunks", type=int, default=4, help="chunks measured (even; default 4)")
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args(argv)
    scale = 10 if args.quick else 1
    n_images, n_classes, n_dets = 5000 // scale, 80, 500_000 // scale
    k = max(2, args.chunks - args.chunks % 2)

    print(
        f"COCO-val shape: {n_images} images, {n_classes} classes, {n_dets} detections, B = {args.resamples}"
    )
    gt, dets = synthetic_coco(n_images, n_classes, n_dets)
    gt_bytes, det_bytes = json.dumps(gt).encode(), json.dumps(dets).encode()
    del dets
    t0 = time.perf_counter()
    truth = parse_coco_truth(gt_bytes, name="truth.json")
    task = DetectionTask(truth)
    detections = parse_coco_results(det_bytes, truth, name="results.json")
    entry = task.match(detections)
    prepare_s = time.perf_counter() - t0
    design = resample_design(n_images, resamples=args.resamples, seed=0, strata=detection_strata(truth))
    # as leaderboard.scoring.fanout stores it: arrays (npz) + a JSON outline, zlib 1, no pickle; the
    # truth's index (DetectionTask) is rebuilt by each chunk task
    state_codec.register(DetectionTruth, MatchedEntry, _Curves, ResampleDesign)
    state = {"truth": truth, "entry": entry, "design": design}
    t0 = time.perf_counter()
    stored = state_codec.dumps(state)
    pack_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    back = state_codec.loads(stored)
    DetectionTask(back["truth"])
    unpack_s = time.perf_counter() - t0
    raw = len(zlib.decompress(stored))
    print(f"once per entry (parse + match, the prepare task): {prepare_s:.1f} s")
    print(
        f"prepared state: {raw / 1e6:.1f} MB of arrays, stored (zlib 1) {len(stored) / 1e6:.1f} MB; "
        f"write {pack_s:.1f} s, read back with the truth's index rebuilt {unpack_s:.1f} s"
    )
    _STATE.update(task=task, entry=entry, design=design)

    n_chunks = design.n_chunks
    first_detail = -(-DETAIL_ROWS // CHUNK_RESAMPLES)  # chunks holding the first 1,000 rows
    # full chunks only (the last one may be short): half among the first, half among the last full ones
    measured = list(range(k // 2)) + list(range(n_chunks - 1 - k // 2, n_chunks - 1))
    print(
        f"{n_chunks} chunks of {CHUNK_RESAMPLES}; every stat in chunks 0..{first_detail - 1}, headline after"
    )

    t0 = time.perf_counter()
    one = [_chunk(c) for c in measured]
    one_s = time.perf_counter() - t0
    for c, s, _ in one:
        print(f"  one worker, chunk {c:2d} ({'all stats' if c < first_detail else 'headline'}): {s:.1f} s")

    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    shares = [measured[0::2], measured[1::2]]  # each worker one detail chunk and one headline chunk
    t0 = time.perf_counter()
    procs = [ctx.Process(target=_worker, args=(share, queue)) for share in shares]
    for p in procs:
        p.start()
    got = [queue.get() for _ in procs]
    for p in procs:
        p.join()
    two_s = time.perf_counter() - t0
    by_chunk = {c: r for _, _, rows in got for c, _, r in rows}
    same = all(
        set(by_chunk[c]) == set(r) and all(by_chunk[c][key] == r[key].tobytes() for key in r)
        for c, _, r in one
    )
    peaks = [peak for _, peak, _ in got]
    for pid, peak, rows in got:
        times = ", ".join(f"chunk {c} {s:.1f} s" for c, s, _ in rows)
        print(f"  worker {pid}: {times}; peak {peak:.0f} MB")

    detail = np.mean([s for c, s, _ in one if c < first_detail])
    headline = np.mean([s for c, s, _ in one if c >= first_detail])
    one_total = first_detail * detail + (n_chunks - first_detail) * headline
    speedup = one_s / two_s
    print(f"{k} chunks: one worker {one_s:.1f} s, two workers at once {two_s:.1f} s (speedup {speedup:.2f}x)")
    print(f"two workers' chunks equal one worker's bytes: {same}")
    print(
        f"extrapolated to all {n_chunks} chunks (from the per-chunk times above, not run): one worker "
        f"{one_total:.0f} s + {prepare_s:.0f} s prepare; two workers {one_total / speedup:.0f} s + prepare; "
        f"per chunk task of 4 chunks (FANOUT_CHUNKS=4) at most {4 * max(detail, headline):.0f} s"
    )
    print(f"peak memory per worker: {max(peaks):.0f} MB")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
