"""Reading uploads (issue 10 point 4, issue 14 point 5): the pyarrow fast path against the line-precise reader.

Command (from the repository root)::

    .venv/bin/python -m tests.benchmarks.bench_io [--rows 1000000] [--parquet-rows 5000000]

Each case runs in a fresh Python process (so its peak RSS is its own) and prints wall time, the peak traced
by ``tracemalloc`` and the growth of the peak RSS over the process's RSS before the call (the file's bytes
are already in memory then, as they are in a web worker that checks an upload):

1. a predictions CSV of ``--rows`` rows (45 MB at the default, the largest task by default), valid: checked
   only (``check_only=True``, what a web process does with an upload), read (what scoring does: the
   result is an array of N fixed-width strings, 124 MB here), then the line-precise reader
   (``stats.io._slow_predictions``, the reader before this change) on the same bytes;
2. the same file with a bad label near its end, checked: the fast path's refusal and message;
3. a Parquet file of ``--parquet-rows`` rows (about 35 KB, one id repeated) for a task of 1,000 items:
   refused from its metadata; the line-precise reader on it only with ``--old-parquet`` (1.4 GB).
"""

from __future__ import annotations

import argparse
import io
import json
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

#: Long label names, so that 1,000,000 rows (the default largest task) make a 45 MB file.
LABELS = [
    "a cat sitting on a garden wall 1",
    "a dog running on a wet beach 22",
    "a small bird on a high branch",
    "a fish in a pond at sunset 4",
]

#: the repository root: the cases run as ``python -m tests.benchmarks.bench_io`` from it
ROOT = Path(__file__).resolve().parents[2]


def _csv(rows: int, bad_row: int | None = None) -> tuple[list[str], bytes]:
    ids = [f"item-{i:07d}" for i in range(rows)]
    body = io.StringIO()
    body.write("id,prediction\n")
    for i, item in enumerate(ids):
        body.write(f"{item},{'cow' if i == bad_row else LABELS[i % 4]}\n")
    return ids, body.getvalue().encode()


def _parquet(rows: int) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = io.BytesIO()
    table = pa.table({"id": pa.array(["item-0000001"] * rows), "prediction": pa.array(["cat"] * rows)})
    pq.write_table(table, out, compression="zstd")
    return out.getvalue()


def _case(name: str, rows: int, parquet_rows: int) -> dict[str, Any]:
    from stats import io as sio

    labels = LABELS
    if name.startswith("parquet"):
        ids = [f"item-{i:07d}" for i in range(1000)]
        data = _parquet(parquet_rows)
    else:
        ids, data = _csv(rows, bad_row=rows - 10 if name.startswith("csv refused") else None)

    check_only = "check only" in name  # what a web process does with an upload

    def fast() -> Any:
        return sio.read_predictions(
            data, item_ids=ids, kind="label", label_set=labels, name="p", check_only=check_only
        )

    def old() -> Any:
        table = sio._table(data, "p")
        return sio._slow_predictions(
            table, item_ids=ids, kind="label", label_set=labels, probabilities=False, min_ranks=1
        )

    call = old if name.endswith("(line-precise reader)") else fast
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    t = time.perf_counter()
    try:
        call()
        outcome = "accepted"
    except sio.InputError as exc:
        outcome = str(exc)
    seconds = time.perf_counter() - t
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "case": name,
        "file_bytes": len(data),
        "seconds": round(seconds, 3),
        "traced_peak_mib": round(traced / 2**20, 1),
        "rss_growth_mib": round((rss_after - rss_before) / 1024, 1),
        "peak_rss_mib": round(rss_after / 1024, 1),
        "outcome": outcome[:100],
    }


CASES = [
    "csv valid, check only (fast path)",
    "csv valid (fast path)",
    "csv valid (line-precise reader)",
    "csv refused, check only (fast path)",
    "parquet rows (fast path)",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--parquet-rows", type=int, default=5_000_000)
    parser.add_argument("--old-parquet", action="store_true")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.case:
        print(json.dumps(_case(args.case, args.rows, args.parquet_rows)))
        return 0
    cases = CASES + (["parquet rows (line-precise reader)"] if args.old_parquet else [])
    results = []
    for case in cases:
        command = [
            sys.executable,
            "-m",
            "tests.benchmarks.bench_io",
            "--case",
            case,
            "--rows",
            str(args.rows),
        ]
        command += ["--parquet-rows", str(args.parquet_rows)]
        out = subprocess.run(command, check=True, capture_output=True, text=True, cwd=ROOT).stdout
        results.append(json.loads(out.strip().splitlines()[-1]))
        print(json.dumps(results[-1]), flush=True)
    by = {r["case"]: r for r in results}
    fast, old = by["csv valid (fast path)"], by["csv valid (line-precise reader)"]
    print(
        f"csv valid: fast {fast['seconds']} s / {fast['rss_growth_mib']} MiB RSS growth; line-precise reader "
        f"{old['seconds']} s / {old['rss_growth_mib']} MiB: {old['seconds'] / fast['seconds']:.1f}x faster, "
        f"{old['rss_growth_mib'] / max(fast['rss_growth_mib'], 0.1):.1f}x less memory"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
