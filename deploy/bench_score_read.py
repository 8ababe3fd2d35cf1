"""Reading a board's scores from PostgreSQL in the text and in the binary protocol (issue 24):
``python deploy/bench_score_read.py [--entries 1000 --items 10000 --resamples 10000]``.

A rebuild reads every chosen score's replicates (B float64), jackknife (N) and per-item statistics (N x 2
for accuracy): 320 KB per entry at B = N = 10,000, 320 MB at K = 1,000. Django's cursors ask for text
results, in which a bytea travels hex-encoded (twice its size) and the client decodes it;
``rankings.services._score_data_rows`` asks for binary results. This script fills a table of its own in a
database of its own (``--database``, dropped and re-created, then dropped) with K rows shaped like the
scores (accuracy replicates, a jackknife of two values, 0/1 item statistics: PostgreSQL compresses them
as it does the real ones) and times the same query both ways, alternately, ``--repeat`` times each,
printing the load average.
"""

from __future__ import annotations

import argparse
import os
import re
import time

import numpy as np
import psycopg

HOST = "127.0.0.1"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--database", default="lb_e2e_read")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"lb_e2e[a-z0-9_]*", args.database):
        raise SystemExit("the database's name must start with 'lb_e2e' (it is dropped)")
    with psycopg.connect(f"host={HOST} user=postgres dbname=postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{args.database}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{args.database}"')
    try:
        with psycopg.connect(f"host={HOST} user=postgres dbname={args.database}", autocommit=True) as conn:
            conn.execute(
                "CREATE TABLE score (id serial PRIMARY KEY, replicates bytea, jackknife bytea, items bytea)"
            )
            rng = np.random.default_rng(0)
            n, b = args.items, args.resamples
            with conn.cursor() as cur:
                for _ in range(args.entries):
                    acc = rng.uniform(0.80, 0.86)
                    rep = (rng.binomial(n, acc, b) / n).astype("<f8")
                    right = rng.random(n) < acc
                    jack = np.where(right, (right.sum() - 1) / (n - 1), right.sum() / (n - 1)).astype("<f8")
                    items = np.column_stack([right.astype(float), np.ones(n)]).astype("<f8")
                    cur.execute(
                        "INSERT INTO score (replicates, jackknife, items) VALUES (%s, %s, %s)",
                        (rep.tobytes(), jack.tobytes(), items.tobytes()),
                    )
            size = conn.execute(
                "SELECT sum(octet_length(replicates) + octet_length(jackknife) + octet_length(items)), "
                "sum(pg_column_size(replicates) + pg_column_size(jackknife) + pg_column_size(items)) FROM score"
            ).fetchone()
            assert size is not None
            print(
                f"K = {args.entries} rows: {size[0] / 1e6:.0f} MB of bytes, {size[1] / 1e6:.0f} MB stored (compressed)"
            )
            print(f"load average at the start: {os.getloadavg()}")
            times: dict[str, list[float]] = {"text": [], "binary": []}
            for _ in range(args.repeat):
                for mode in ("text", "binary"):
                    t = time.perf_counter()
                    with psycopg.ClientCursor(conn) if mode == "text" else psycopg.Cursor(conn) as cur:
                        cur.execute(
                            "SELECT id, replicates, jackknife, items FROM score", binary=mode == "binary"
                        )
                        rows = cur.fetchall()
                    times[mode].append(time.perf_counter() - t)
                    assert len(rows) == args.entries
            for mode, ts in times.items():
                print(f"{mode:>6}: " + ", ".join(f"{x:.2f} s" for x in ts))
            print(f"text / binary (best of each): {min(times['text']) / min(times['binary']):.1f}x")
            print(f"load average at the end: {os.getloadavg()}")
    finally:
        with psycopg.connect(f"host={HOST} user=postgres dbname=postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{args.database}" WITH (FORCE)')
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
