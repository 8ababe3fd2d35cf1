"""Upload to board on the real stack (issue 24): how long a participant waits to see a new entry.

Usage (from the repository root; PostgreSQL and Redis answering on 127.0.0.1, default ports)::

    .venv/bin/python deploy/bench_upload_to_board.py [--entries 200,1000,5000 --uploads 6 --items 10000]

For each board size K (``--entries``), in a child process of its own:

1. a database of its own (``<--database>_k<K>``, dropped and re-created), Redis database ``--redis-db``
   (its queue and shared board states emptied), a private data directory; a challenge with one accuracy task of ``--items`` items and K
   scored entries whose Score rows are bulk-inserted (``deploy/loadtest.py``'s ``create_board``: the
   engine's numbers, not K uploads);
2. gunicorn (``deploy/gunicorn.conf.py``, ``--gunicorn-workers``) and ``--celery-workers`` Celery worker
   processes (concurrency 1 each); the board of K entries is built once by a worker (timed: the full
   rebuild a new board costs);
3. ``--uploads`` uploads one after the other, each by a new team (so each adds one entry: the
   incremental board's case; a team replacing its entry is a full rebuild), through the REST API. Each
   upload is timed from the POST until the anonymous board API (through gunicorn and its read cache)
   shows the entry; the stages come from the database's timestamps and the rebuild's log line
   (``rankings.services``: lock, choose, read, state, board, write, commit).

It prints one table per K (p50 and p95 over the uploads, and each stage's median share) and writes JSON
(``--out``). The first upload after the build may land on the worker that did not build the board: the
``state`` stage and the rebuild's kind (``full``/``incremental``) say which path each took.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import loadtest  # noqa: E402  (deploy/loadtest.py: the board's data, the processes, the helpers)

HOST = loadtest.HOST
PYTHON = sys.executable
BIN = Path(PYTHON).parent
REBUILT = re.compile(
    r"board (\d+)/(\w+) rebuilt \((\w+)\): snapshot (\d+) with (\d+) entries; stages ((?:\w+=[0-9.]+s ?)+)"
    r"(?:; scores read (\d+))?(?:; board ((?:\w+=[0-9.]+s ?)*))?(?:; cpu ([0-9.]+)s)?"
)
SUCCEEDED = re.compile(r"Task (leaderboard\.[\w.]+)\[[\w-]+\] succeeded in ([0-9.]+)s")


def recreate_database(name: str) -> None:
    import psycopg

    if not re.fullmatch(r"lb_e2e[a-z0-9_]*", name):
        raise SystemExit(f"refusing to drop database {name!r}: its name must start with 'lb_e2e'")
    with psycopg.connect(f"host={HOST} user=postgres dbname=postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def drop_database(name: str) -> None:
    import psycopg

    if re.fullmatch(r"lb_e2e[a-z0-9_]*", name):
        with psycopg.connect(f"host={HOST} user=postgres dbname=postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def new_teams(challenge_id: int, count: int) -> list[str]:
    """``count`` participants, each in a team of their own with no entry yet: their API tokens."""
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from leaderboard.challenges.models import Team

    user_model = get_user_model()
    users = user_model.objects.bulk_create(
        [user_model(username=f"new-{i:03d}", password="!") for i in range(count)]
    )
    teams = Team.objects.bulk_create(
        [Team(challenge_id=challenge_id, name=f"new-{i:03d}") for i in range(count)]
    )
    Team.members.through.objects.bulk_create(
        [Team.members.through(team_id=t.pk, user_id=u.pk) for t, u in zip(teams, users, strict=True)]
    )
    return [Token.objects.create(user=u).key for u in users]


def stage_lines(procs: loadtest.Processes, names: list[str]) -> dict[int, dict[str, Any]]:
    """The rebuild log lines of the workers by snapshot sequence: kind and stage seconds."""
    out: dict[int, dict[str, Any]] = {}
    for name in names:
        for m in REBUILT.finditer(procs.log_text(name)):
            stages = {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.]+)s", m.group(6))}
            out[int(m.group(4))] = {"kind": m.group(3), "worker": name, "entries": int(m.group(5)), **stages}
            if m.group(7) is not None:  # how many scores' columns the rebuild read from the database
                out[int(m.group(4))]["scores_read"] = int(m.group(7))
            if m.group(8):  # the board stage's parts (rankings.board.build_board)
                parts = {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.]+)s", m.group(8))}
                out[int(m.group(4))]["board_parts"] = parts
            if m.group(9):  # the rebuilding process's CPU seconds (its wall stages include the load)
                out[int(m.group(4))]["cpu"] = float(m.group(9))
    return out


def snapshot_bytes(task_id: int) -> dict[str, int]:
    """The latest snapshot's JSON columns: their text length and what PostgreSQL stores (TOAST)."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(
            "SELECT octet_length(rows::text), octet_length(rank_distribution::text), pg_column_size(rows), "
            "pg_column_size(rank_distribution) FROM rankings_boardsnapshot WHERE task_id = %s "
            "ORDER BY sequence DESC LIMIT 1",
            [task_id],
        )
        row = cur.fetchone()
    names = ("rows_json", "rank_distribution_json", "rows_stored", "rank_distribution_stored")
    return dict(zip(names, row or (), strict=False))


def task_seconds(procs: loadtest.Processes, names: list[str]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for worker in names:
        for name, seconds in SUCCEEDED.findall(procs.log_text(worker)):
            out.setdefault(name.rsplit(".", 1)[-1], []).append(float(seconds))
    return out


def upload(
    args: argparse.Namespace,
    base: str,
    api: str,
    data: dict[str, Any],
    token: str,
    rng: Any,
    latest: Any,
    label: str,
) -> dict[str, Any]:
    """One upload by a new team, timed from the POST until the anonymous board API serves the entry."""
    import httpx

    from leaderboard.rankings.models import BoardSnapshot
    from leaderboard.submissions.models import Submission

    time.sleep(args.pause)  # the summary of the previous upload done: one upload at a time
    body = loadtest.predictions_csv(data["truth"], float(rng.uniform(0.80, 0.86)), rng, data["difficulty"])
    before = latest().sequence
    load_before = loadtest.loadavg()
    t0_wall, t0 = time.time(), time.perf_counter()
    with httpx.Client(base_url=base, timeout=120, headers={"Authorization": f"Token {token}"}) as h:
        r = h.post(
            f"/api/challenges/{loadtest.CHALLENGE}/submissions/",
            data={"name": f"upload {label}"},
            files={"file": ("upload.csv", body, "text/csv")},
        )
    post_s = time.perf_counter() - t0
    if r.status_code != 201:
        raise SystemExit(f"upload refused: {r.status_code} {r.text[:300]}")
    sub_id = r.json()["id"]
    loadtest.wait_until(
        lambda: (s := latest()) is not None and s.sequence > before,
        timeout=args.timeout,
        what=f"a snapshot after upload {label}",
        every=0.05,
    )
    snapshot_seen = time.perf_counter() - t0
    snap = (
        BoardSnapshot.objects.filter(task_id=data["task_id"], split="public", sequence__gt=before)
        .order_by("sequence")
        .only("sequence", "created_at", "rows")
        .first()
    )
    assert snap is not None

    def served() -> bool:
        """The anonymous API (gunicorn, its read cache) serves the snapshot with the entry."""
        with httpx.Client(base_url=base, timeout=60) as h:
            return int(h.get(api + "&limit=1").json().get("sequence") or 0) >= snap.sequence

    loadtest.wait_until(served, timeout=args.timeout, what=f"upload {label} on the API", every=0.05)
    total = time.perf_counter() - t0
    sub = Submission.objects.get(pk=sub_id)
    with httpx.Client(base_url=base, timeout=60) as h:  # the entry is on the API's board (any page)
        found = False
        for offset in range(0, len(snap.rows), 1000):
            page = h.get(f"{api}&limit=1000&offset={offset}").json()["rows"]
            found = found or any(row.get("submission_id") == sub_id for row in page)
    assert found, f"upload {label} (submission {sub_id}) not on the API's board"
    loadtest.log(f"upload {label}: on the board API after {total:.2f} s (POST {post_s:.2f} s)")
    return {
        "submission_id": sub_id,
        "sequence": snap.sequence,
        "total_s": total,
        "upload_check_s": post_s,
        # the scoring task may start before the POST's answer has arrived: a queue of 0 then
        "queue_s": max(0.0, sub.started_at.timestamp() - t0_wall - post_s),
        "scoring_s": (sub.finished_at - sub.started_at).total_seconds(),
        "snapshot_created_after_s": snap.created_at.timestamp() - t0_wall,
        "snapshot_seen_s": snapshot_seen,
        "loadavg_before": load_before,
    }


def one_size(args: argparse.Namespace, k: int) -> dict[str, Any]:  # noqa: C901 (one run, in order)
    """Everything for one board size, in this (child) process."""
    import httpx

    database = f"{args.database}_k{k}"
    data_dir = Path(tempfile.mkdtemp(prefix="lb-e2e-"))
    largs = argparse.Namespace(
        entries=k, items=args.items, resamples=args.resamples, seed=args.seed, teams=1,
        database=database, redis_db=args.redis_db, queue=args.queue,
    )  # fmt: skip
    env = loadtest.service_env(largs, data_dir)
    env["LEADERBOARD_BOARD_CACHE_BOARDS"] = str(args.board_cache_boards)
    procs = loadtest.Processes(env, data_dir)
    import redis

    broker = redis.Redis.from_url(env["REDIS_URL"])
    result: dict[str, Any] = {"entries": k, "loadavg_start": loadtest.loadavg()}
    try:
        recreate_database(database)
        broker.delete(args.queue)  # its own queue only: the Redis database may serve another benchmark
        for key in broker.scan_iter("board-state:*"):  # boards of an earlier run's database
            broker.delete(key)
        subprocess.run(
            [PYTHON, "manage.py", "migrate", "--no-input", "-v", "0"], cwd=ROOT, env=env, check=True
        )
        loadtest.django_setup(env)
        from leaderboard.rankings.models import BoardSnapshot
        from leaderboard.rankings.tasks import rebuild_leaderboard

        t = time.perf_counter()
        data = loadtest.create_board(largs)
        result["setup_s"] = round(time.perf_counter() - t, 1)
        tokens = new_teams(data["challenge_id"], args.uploads * len(args.modes.split(",")))
        port = args.port or loadtest.free_port()
        base = f"http://{HOST}:{port}"
        procs.start(
            "gunicorn",
            [str(BIN / "gunicorn"), "-c", "deploy/gunicorn.conf.py", "leaderboard.config.wsgi"],
            {"GUNICORN_BIND": f"{HOST}:{port}", "GUNICORN_WORKERS": str(args.gunicorn_workers)},
        )

        def healthy() -> bool:
            try:
                return httpx.get(f"{base}/healthz", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        loadtest.wait_until(healthy, timeout=90, what="gunicorn answering /healthz")
        task_id = data["task_id"]
        api = f"/api/challenges/{loadtest.CHALLENGE}/leaderboard/?task={loadtest.TASK}"

        def latest() -> Any:
            return (
                BoardSnapshot.objects.filter(task_id=task_id, split="public")
                .order_by("-sequence")
                .only("sequence", "entry_count", "created_at")
                .first()
            )

        import numpy as np

        rng = np.random.default_rng(args.seed + 11)
        result["modes"] = {}
        for mode in args.modes.split(","):
            names = [f"celery-{mode}{i + 1}" for i in range(args.celery_workers)]
            started = [
                procs.start(
                    name,
                    [str(BIN / "celery"), "-A", "leaderboard", "worker", "-Q", args.queue, "--concurrency", "1",
                     "-n", f"e2e-{mode}{i + 1}@%h", "--loglevel", "INFO", "--without-gossip", "--without-mingle"],
                    {"LEADERBOARD_BOARD_STATE_SHARED": "1" if mode == "shared" else "0"},
                )
                for i, name in enumerate(names)
            ]  # fmt: skip
            loadtest.wait_until(
                lambda names=names: all(" ready." in procs.log_text(n) for n in names),
                timeout=90,
                what="celery workers ready",
            )
            out: dict[str, Any] = {}
            if latest() is None:  # the board of K entries, built once (a full rebuild)
                t = time.perf_counter()
                rebuild_leaderboard.apply_async(args=[task_id, "public"])
                loadtest.wait_until(
                    lambda: latest() is not None, timeout=args.timeout, what="the first board", every=0.2
                )
                result["first_build_s"] = round(time.perf_counter() - t, 2)
                result["first_build_loadavg"] = loadtest.loadavg()
                loadtest.log(f"K = {k}: first board in {result['first_build_s']} s")
            out["uploads"] = [
                upload(args, base, api, data, tokens.pop(), rng, latest, f"{mode} {u}")
                for u in range(args.uploads)
            ]
            time.sleep(args.pause)
            lines = stage_lines(procs, names)
            for up in out["uploads"]:
                up["rebuild"] = lines.get(up["sequence"] or -1, {})
            out["worker_tasks"] = {
                name: {"count": len(v), "median_s": round(statistics.median(v), 3), "max_s": round(max(v), 3)}
                for name, v in task_seconds(procs, names).items()
            }
            out["snapshot_bytes"] = snapshot_bytes(task_id)
            for proc in started:  # the next mode's workers start from nothing kept in memory
                proc.terminate()
                proc.wait(timeout=60)
            result["modes"][mode] = out
    finally:
        procs.stop()
        result["loadavg_end"] = loadtest.loadavg()
        try:
            from django.db import connections

            connections.close_all()
        except Exception:
            pass
        if not args.keep:
            drop_database(database)
            broker.delete(args.queue)  # its own queue only: the Redis database may serve another benchmark
            import shutil

            shutil.rmtree(data_dir, ignore_errors=True)
    return result


def percentile(values: list[float], q: float) -> float:
    return loadtest.percentile(sorted(values), q)


def table(result: dict[str, Any]) -> str:
    lines = [
        f"K = {result['entries']}: first build (full) {result.get('first_build_s')} s at load "
        f"{result.get('first_build_loadavg')}; load {result['loadavg_start']} -> {result['loadavg_end']}"
    ]
    for mode, out in result["modes"].items():
        lines.append(mode_table(mode, out))
    return "\n".join(lines)


def mode_table(mode: str, result: dict[str, Any]) -> str:
    ups = result["uploads"]
    total = [u["total_s"] for u in ups]
    lines = [
        f"  workers' state {mode}: {len(ups)} uploads: p50 {percentile(total, 0.5):.2f} s, "
        f"p95 {percentile(total, 0.95):.2f} s (rebuilds: {', '.join(str(u['rebuild'].get('kind')) for u in ups)}; "
        f"scores read: {', '.join(str(u['rebuild'].get('scores_read', '-')) for u in ups)}; "
        f"load before each: {', '.join(u['loadavg_before'][0] if isinstance(u['loadavg_before'], list) else str(u['loadavg_before']) for u in ups)})",
        "  stage (median over uploads)                       seconds   share",
    ]
    med_total = statistics.median(total)

    def med(f: Any) -> float:
        vals = [f(u) for u in ups]
        vals = [v for v in vals if v is not None]
        return statistics.median(vals) if vals else float("nan")

    stages: list[tuple[str, float]] = [
        ("upload check (POST: parse, validate, store)", med(lambda u: u["upload_check_s"])),
        ("queue to the scoring worker", med(lambda u: u["queue_s"])),
        ("scoring (the worker's task)", med(lambda u: u["scoring_s"])),
    ]
    for name in ("lock", "choose", "read", "state", "board", "write", "commit"):
        stages.append((f"rebuild: {name}", med(lambda u, n=name: u["rebuild"].get(n))))
    rebuild_sum = med(
        lambda u: (
            sum(
                u["rebuild"].get(n, 0.0)
                for n in ("lock", "choose", "read", "state", "board", "write", "commit")
            )
            or None
        )
    )
    accounted = sum(v for _, v in stages[:3] if v == v) + (rebuild_sum if rebuild_sum == rebuild_sum else 0)
    stages.append(("rest: rebuild queue, cache invalidation, API read", med_total - accounted))
    for name, v in stages:
        lines.append(f"  {name:<50} {v:7.3f}  {v / med_total * 100:5.1f}%")
    cpu = med(lambda u: u["rebuild"].get("cpu"))
    if cpu == cpu:
        lines.append(f"  rebuild's CPU (the worker process, median): {cpu:.3f} s")
    part_names = list(dict.fromkeys(n for u in ups for n in u["rebuild"].get("board_parts", {})))
    if part_names:
        lines.append(
            "  board stage's parts (median): "
            + ", ".join(
                f"{n} {med(lambda u, n=n: u['rebuild'].get('board_parts', {}).get(n)):.3f}"
                for n in part_names
            )
        )
    if result.get("snapshot_bytes"):
        lines.append(f"  latest snapshot's JSON columns (bytes): {result['snapshot_bytes']}")
    for name, s in sorted(result.get("worker_tasks", {}).items()):
        lines.append(f"  worker task {name}: {s['count']} runs, median {s['median_s']} s, max {s['max_s']} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", default="200,1000,5000", help="board sizes K, comma-separated")
    parser.add_argument("--uploads", type=int, default=6)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--celery-workers", type=int, default=2)
    parser.add_argument("--gunicorn-workers", type=int, default=2)
    parser.add_argument("--board-cache-boards", type=int, default=4)
    parser.add_argument(
        "--modes",
        default="local,shared",
        help="worker setups in turn: local (the incremental state in each process only), shared (board_state)",
    )
    parser.add_argument("--pause", type=float, default=2.0, help="seconds between uploads")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--database", default="lb_e2e")
    parser.add_argument("--redis-db", type=int, default=7)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--queue", default="lb_e2e")
    parser.add_argument("--out", type=Path, default=ROOT / "var" / "bench_upload_to_board.json")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # internal: the child of one size
    args = parser.parse_args(argv)
    if args.one is not None:
        print("RESULT " + json.dumps(one_size(args, args.one), default=str))
        return 0
    results = []
    for k in [int(x) for x in args.entries.split(",") if x]:
        loadtest.log(f"K = {k}: setting up (load {loadtest.loadavg()})")
        child = subprocess.run(
            [PYTHON, __file__, *(argv if argv is not None else sys.argv[1:]), "--one", str(k)],
            cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        sys.stderr.write(child.stderr[-3000:] if child.returncode else "")
        found = [line for line in child.stdout.splitlines() if line.startswith("RESULT ")]
        for line in child.stdout.splitlines():
            if not line.startswith("RESULT "):
                print(line, flush=True)
        if not found:
            print(f"K = {k}: failed (exit {child.returncode})", flush=True)
            continue
        result = json.loads(found[-1][len("RESULT ") :])
        results.append(result)
        print(table(result), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps({"command": " ".join(sys.argv), "results": results}, indent=2, default=str)
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
