"""Uploads in the database: time and peak memory to store and to read back one large file.

Each operation runs in a fresh process, so its peak resident memory (``ru_maxrss``) is its own: the process
at rest (Django loaded), then after storing or reading a file of the given size through the uploads
storage (``leaderboard.core.storage.DatabaseStorage``, in 4 MiB chunk rows), with the ratio to the file's
size. Needs a migrated PostgreSQL (or SQLite) in ``DATABASE_URL``; the file is deleted at the end.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/lb_bench .venv/bin/python manage.py migrate
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/lb_bench .venv/bin/python deploy/bench_storage.py --mib 50 256
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "bench/storage-{mib}.bin"


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def _child(op: str, mib: int) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.config.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.files.base import ContentFile
    from django.core.files.storage import storages

    storage = storages["default"]
    name = NAME.format(mib=mib)
    at_rest = _peak_mib()
    if op == "write":
        data = os.urandom(mib << 20)
        before = _peak_mib()  # the file's bytes are in memory, as after an upload was validated
        started = time.perf_counter()
        storage.delete(name)
        assert storage.save(name, ContentFile(data)) == name
    elif op == "read":
        before = at_rest
        started = time.perf_counter()
        with storage.open(name, "rb") as handle:
            data = handle.read()
        assert len(data) == mib << 20
    else:
        storage.delete(name)
        return
    seconds = time.perf_counter() - started
    print(json.dumps({"op": op, "mib": mib, "seconds": seconds, "before": before, "peak": _peak_mib()}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, nargs="+", default=[50, 256])
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], int(args.child[1]))
        return
    print(f"load: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} CPUs")
    for mib in args.mib:
        for op in ("write", "read"):
            out = subprocess.run(
                [sys.executable, __file__, "--child", op, str(mib)],
                capture_output=True,
                text=True,
                check=True,
            )
            r = json.loads(out.stdout.strip().splitlines()[-1])
            extra = r["peak"] - r["before"]
            print(
                f"{op:5} {mib:4d} MiB: {r['seconds']:6.2f} s ({mib / r['seconds']:6.1f} MiB/s); "
                f"peak {r['peak']:7.0f} MiB, {extra:6.0f} MiB above the process before the "
                f"{op} ({extra / mib:.2f} x the file)"
            )
        subprocess.run([sys.executable, __file__, "--child", "delete", str(mib)], check=True)


if __name__ == "__main__":
    main()
