"""Load test (issue 7, "Load"): a 1,000-entry board on a 10,000-item task, read by 50 clients, and a burst.

Usage (from the repository root; PostgreSQL and Redis answering on 127.0.0.1, default ports)::

    .venv/bin/python deploy/loadtest.py [--entries 1000 --items 10000 --clients 50 --requests 1000 --burst 200]

Every byte of traffic goes to 127.0.0.1. The script

1. creates its own database (``lbload``, dropped and re-created; nothing else is touched), uses Redis
   database 3 and a private ``LEADERBOARD_DATA_DIR`` (a temporary directory), and migrates;
2. creates a challenge with one accuracy task of ``--items`` items and ``--entries`` scored entries. The
   entries' Score rows are computed with the engine directly, in bulk (``stats.engine.score_entries``
   with the task's own resample weights W, in chunks of 100 entries: the same numbers the per-submission
   path stores); the board is then built by the real ``leaderboard_rebuild`` service, timed in a fresh
   process (time and peak RSS of each phase);
3. starts gunicorn (``deploy/gunicorn.conf.py``, two workers) and ``--celery-workers`` Celery worker
   processes (concurrency 1 each) on that database and Redis;
4. measures the board page and the board API with ``--clients`` concurrent clients, closed loop (each
   client sends its next request as soon as the last one is answered) and with a think time (each client
   waits ``--think`` seconds between requests): p50, p95, p99, max, throughput, errors;
5. sends a burst of ``--burst`` submissions through the REST API from ``--teams`` teams, checks that each
   was accepted and stored, waits until every one is scored and on the board, and reads the workers' logs
   to say where the time went (scoring vs board rebuilds);
6. stops every process it started and drops its database (``--keep`` keeps them for inspection).

Results are printed and written as JSON (``--out``, default ``var/loadtest.json``). Loops are bounded in
count and in time (``--read-seconds``, ``--burst-timeout``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"  # the only address this script ever sends anything to
PYTHON = sys.executable
BIN = Path(PYTHON).parent
CHALLENGE, TASK = "load", "test"
N_LABELS = 10


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def loadavg() -> str:
    return Path("/proc/loadavg").read_text().split(" ")[:3].__str__()


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def service_env(args: argparse.Namespace, data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_DEBUG", "DJANGO_SETTINGS_MODULE")}
    env.update(
        DATABASE_URL=f"postgres://postgres@{HOST}:5432/{args.database}",
        REDIS_URL=f"redis://{HOST}:6379/{args.redis_db}",
        LEADERBOARD_QUEUE=args.queue,
        LEADERBOARD_DATA_DIR=str(data_dir),
        LEADERBOARD_ENV="development",
        DJANGO_SETTINGS_MODULE="leaderboard.config.settings",
        PYTHONPATH=str(ROOT),
    )
    return env


def django_setup(env: dict[str, str]) -> None:
    os.environ.update(env)
    os.environ.pop("DJANGO_DEBUG", None)
    sys.path.insert(0, str(ROOT))
    import logging

    import django

    django.setup()
    logging.getLogger("httpx").setLevel(logging.WARNING)  # no log line per request


# --- 1. database and data ----------------------------------------------------------------------------
def recreate_database(name: str) -> None:
    import psycopg

    if not re.fullmatch(r"lbload[a-z0-9_]*", name):
        raise SystemExit(f"refusing to drop database {name!r}: its name must start with 'lbload'")
    with psycopg.connect(f"host={HOST} user=postgres dbname=postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def drop_database(name: str) -> None:
    import psycopg

    if re.fullmatch(r"lbload[a-z0-9_]*", name):
        with psycopg.connect(f"host={HOST} user=postgres dbname=postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def predictions_csv(truth: Any, accuracy: float, rng: Any, difficulty: Any) -> bytes:
    """A predictions file whose accuracy is about ``accuracy`` (harder items are missed first)."""
    import numpy as np

    n = len(truth)
    right = difficulty < accuracy + 0.02 * (rng.random(n) - 0.5)
    pred = np.where(right, truth, (truth + rng.integers(1, N_LABELS, n)) % N_LABELS)
    lines = ["id,prediction"] + [f"item-{i:05d},{p}" for i, p in enumerate(pred.tolist())]
    return ("\n".join(lines) + "\n").encode()


def create_board(args: argparse.Namespace) -> dict[str, Any]:
    """Challenge, task, users, teams and ``--entries`` scored submissions (Score rows in bulk)."""
    import numpy as np
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from django.utils import timezone
    from rest_framework.authtoken.models import Token

    import stats
    from leaderboard.challenges.models import Team
    from leaderboard.challenges.services import challenge_create, task_create
    from leaderboard.scoring import engine
    from leaderboard.scoring.models import Score
    from leaderboard.scoring.selectors import task_truth_get
    from leaderboard.submissions.models import Status, Submission
    from stats.engine import score_entries
    from stats.metrics import get_metric

    user_model = get_user_model()
    rng = np.random.default_rng(args.seed)
    truth = rng.integers(0, N_LABELS, args.items)
    difficulty = rng.random(args.items)
    truth_csv = "id,label\n" + "".join(f"item-{i:05d},{y}\n" for i, y in enumerate(truth.tolist()))
    organizer = user_model.objects.create_user("load-organizer", password=None)
    challenge = challenge_create(
        organizer=organizer,
        slug=CHALLENGE,
        title="Load test",
        resamples=args.resamples,
        seed=args.seed,
        daily_limit=100_000,  # raised for the burst (defaults: 5 a day, 100 in total)
        total_limit=100_000,
    )
    task = task_create(
        challenge=challenge,
        slug=TASK,
        title="10,000 items",
        metric="accuracy",
        truth=truth_csv.encode(),
        truth_name="truth.csv",
        labels=[str(i) for i in range(N_LABELS)],
    )
    hidden = task_truth_get(task=task)
    truth_values = np.asarray(hidden.labels)
    metric = get_metric(task.metric)

    t0 = time.perf_counter()
    users = user_model.objects.bulk_create(
        [user_model(username=f"load-{i:04d}", password="!") for i in range(args.entries)]
    )
    teams = Team.objects.bulk_create(
        [Team(challenge=challenge, name=f"team-{i:04d}") for i in range(args.entries)]
    )
    Team.members.through.objects.bulk_create(
        [Team.members.through(team_id=t.pk, user_id=u.pk) for t, u in zip(teams, users, strict=True)]
    )
    now = timezone.now()
    accuracies = np.linspace(0.80, 0.86, args.entries)
    timing = {"parse": 0.0, "score": 0.0, "store": 0.0}
    for start in range(0, args.entries, 100):
        stop = min(args.entries, start + 100)
        t = time.perf_counter()
        files = [predictions_csv(truth, float(a), rng, difficulty) for a in accuracies[start:stop]]
        runs = [engine._read_predictions(f, name="p.csv", task=task) for f in files]
        timing["parse"] += time.perf_counter() - t
        t = time.perf_counter()
        scores = score_entries(
            truth_values,
            runs,
            metric=metric,
            labels=task.labels or None,
            resamples=challenge.resamples,
            seed=challenge.seed,
            cache_dir=settings.RESAMPLE_CACHE_DIR,
        )
        items = [metric.item_statistics(truth_values, r, labels=task.labels or None) for r in runs]
        timing["score"] += time.perf_counter() - t
        t = time.perf_counter()
        with transaction.atomic():
            subs = Submission.objects.bulk_create(
                [
                    Submission(
                        challenge=challenge,
                        team=teams[i],
                        submitted_by=users[i],
                        name=f"model {i:04d}",
                        status=Status.SCORED,
                        started_at=now,
                        finished_at=now,
                        dispatched_at=now,
                        attempts=1,
                    )
                    for i in range(start, stop)
                ]
            )
            Score.objects.bulk_create(
                [
                    Score(
                        submission=sub,
                        task=task,
                        split="public",
                        value=float(s.value),
                        replicates=s.replicates.astype("<f8").tobytes(),
                        jackknife=s.jackknife.astype("<f8").tobytes(),
                        item_statistics=it.astype("<f8").tobytes(),
                        item_statistics_shape=list(it.shape),
                        run_values=[float(s.value)],
                        resamples=challenge.resamples,
                        seed=challenge.seed,
                        truth_version=task.truth_version,
                        engine_version=stats.__version__,
                    )
                    for sub, s, it in zip(subs, scores, items, strict=True)
                ]
            )
        timing["store"] += time.perf_counter() - t
    timing["total"] = time.perf_counter() - t0
    burst_users = users[: args.teams]
    tokens = [Token.objects.create(user=u).key for u in burst_users]
    return {
        "challenge_id": challenge.pk,
        "task_id": task.pk,
        "tokens": tokens,
        "truth": truth,
        "difficulty": difficulty,
        "bulk_entries_seconds": {k: round(v, 2) for k, v in timing.items()},
    }


def measure_rebuild(task_id: int) -> dict[str, Any]:
    """In this (fresh) process: the phases of a rebuild, then the real ``leaderboard_rebuild``."""
    import tracemalloc

    from leaderboard.challenges.models import Task
    from leaderboard.rankings import board as board_builder
    from leaderboard.rankings import services as rankings

    out: dict[str, Any] = {}
    task = Task.objects.select_related("challenge").get(pk=task_id)
    t = time.perf_counter()
    entries = rankings._choose_entries(task, "public")
    if hasattr(rankings, "_load_score_data"):  # the replicates are read apart from the choice of entries
        rankings._load_score_data(entries)
    out["load_entries_s"] = round(time.perf_counter() - t, 2)
    out["rss_after_load_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    tracemalloc.start()
    t = time.perf_counter()
    board_builder.build_board(task=task, split="public", entries=entries)
    out["build_board_s"] = round(time.perf_counter() - t, 2)
    out["build_board_traced_peak_mib"] = round(tracemalloc.get_traced_memory()[1] / 2**20)
    tracemalloc.stop()
    del entries
    t = time.perf_counter()
    snapshot = rankings.leaderboard_rebuild(task_id=task_id, split="public")
    out["leaderboard_rebuild_s"] = round(time.perf_counter() - t, 2)
    out["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    out["snapshot_id"] = snapshot.pk if snapshot else None
    t = time.perf_counter()
    again = rankings.leaderboard_rebuild(task_id=task_id, split="public")
    out["unchanged_rebuild_s"] = round(time.perf_counter() - t, 2)
    out["unchanged_rebuild_wrote_nothing"] = (
        again is not None and snapshot is not None and again.pk == snapshot.pk
    )
    return out


def snapshot_figures(task_id: int) -> dict[str, Any]:
    from django.db import connection

    from leaderboard.rankings.models import BoardSnapshot

    with connection.cursor() as cur:
        cur.execute(
            "SELECT entry_count, octet_length(rows::text), octet_length(rank_distribution::text), "
            "octet_length(pairwise::text), pg_column_size(rows), pg_column_size(rank_distribution) "
            "FROM rankings_boardsnapshot WHERE task_id = %s ORDER BY sequence DESC LIMIT 1",
            [task_id],
        )
        row = cur.fetchone()
    assert row is not None
    out = {
        "entries": row[0],
        "rows_json_bytes": row[1],
        "rank_distribution_json_bytes": row[2],
        "pairwise_json_bytes": row[3],
        "rows_stored_bytes": row[4],
        "rank_distribution_stored_bytes": row[5],
    }
    from django.contrib.auth.models import AnonymousUser

    from leaderboard.challenges.models import Task
    from leaderboard.rankings.selectors import board_latest

    task = Task.objects.select_related("challenge").get(pk=task_id)
    for label, read in (
        (
            "read_full_snapshot_s",
            lambda: BoardSnapshot.objects.filter(task_id=task_id).order_by("-sequence").first(),
        ),
        ("read_board_latest_s", lambda: board_latest(task=task, split="public", user=AnonymousUser())),
    ):
        times = []
        for _ in range(5):
            t = time.perf_counter()
            read()
            times.append(time.perf_counter() - t)
        out[label] = round(sorted(times)[2], 4)
    return out


# --- 2. processes --------------------------------------------------------------------------------------
class Processes:
    """The processes this script started; stopped in ``stop`` (also on errors and Ctrl-C)."""

    def __init__(self, env: dict[str, str], log_dir: Path) -> None:
        self.env, self.log_dir = env, log_dir
        self.procs: list[tuple[str, subprocess.Popen[bytes]]] = []

    def start(
        self, name: str, argv: list[str], extra: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        handle = open(self.log_dir / f"{name}.log", "wb")  # noqa: SIM115 (closed with the process)
        proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            env={**self.env, **(extra or {})},
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.procs.append((name, proc))
        return proc

    def stop(self) -> None:
        for _name, proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 30
        for name, proc in self.procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log(f"{name} (pid {proc.pid}) did not stop in 30 s: SIGKILL to its process group")
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)

    def log_text(self, name: str) -> str:
        return (self.log_dir / f"{name}.log").read_text(errors="replace")


def wait_until(check: Callable[[], bool], *, timeout: float, what: str, every: float = 0.5) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if check():
            return time.monotonic() - start
        time.sleep(every)
    raise TimeoutError(f"{what}: not within {timeout:.0f} s")


# --- 3. reads ------------------------------------------------------------------------------------------
_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(root: int) -> float:
    """User + system CPU seconds of process ``root`` and its children (gunicorn's master and workers)."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            pid, ppid = int(stat.parent.name), int(fields[1])
            if root in (pid, ppid):
                total += (int(fields[11]) + int(fields[12])) / _TICKS
    return total


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index]


def read_load(
    base: str, path: str, *, clients: int, requests: int, seconds: float, think: float, server_pid: int
) -> dict[str, Any]:
    """``clients`` threads, each with its own connection, until ``requests`` answers or ``seconds`` pass."""
    import httpx

    latencies: list[float] = []
    errors: dict[str, int] = defaultdict(int)
    sizes: list[int] = []
    lock = threading.Lock()
    budget = iter(range(requests))
    deadline = time.monotonic() + seconds

    def client() -> None:
        with httpx.Client(base_url=base, timeout=30.0) as http:
            while time.monotonic() < deadline:
                with lock:
                    if next(budget, None) is None:
                        return
                t = time.perf_counter()
                try:
                    response = http.get(path)
                    elapsed = time.perf_counter() - t
                    key = None if response.status_code == 200 else f"HTTP {response.status_code}"
                    size = len(response.content)
                except httpx.HTTPError as exc:
                    elapsed, key, size = time.perf_counter() - t, type(exc).__name__, 0
                with lock:
                    latencies.append(elapsed)
                    sizes.append(size)
                    if key:
                        errors[key] += 1
                if think:
                    time.sleep(think)

    load_before = loadavg()
    start = time.perf_counter()
    server_cpu, client_cpu = cpu_seconds(server_pid), time.process_time()
    with ThreadPoolExecutor(max_workers=clients) as pool:
        for future in [pool.submit(client) for _ in range(clients)]:
            future.result()
    wall = time.perf_counter() - start
    server_cpu, client_cpu = cpu_seconds(server_pid) - server_cpu, time.process_time() - client_cpu
    ms = sorted(x * 1000 for x in latencies)
    return {
        "path": path,
        "clients": clients,
        "think_s": think,
        "requests": len(ms),
        "wall_s": round(wall, 1),
        "throughput_rps": round(len(ms) / wall, 1),
        "p50_ms": round(percentile(ms, 0.50), 1),
        "p95_ms": round(percentile(ms, 0.95), 1),
        "p99_ms": round(percentile(ms, 0.99), 1),
        "max_ms": round(ms[-1], 1) if ms else None,
        "errors": dict(errors),
        "response_bytes": max(sizes) if sizes else 0,
        # where the CPU went: the server (gunicorn) and this client, per request, in milliseconds
        "server_cpu_ms_per_request": round(server_cpu / max(1, len(ms)) * 1000, 1),
        "client_cpu_ms_per_request": round(client_cpu / max(1, len(ms)) * 1000, 1),
        "loadavg_before": load_before,
        "loadavg_after": loadavg(),
    }


# --- 4. the burst --------------------------------------------------------------------------------------
TASK_LINE = re.compile(r"Task (leaderboard\.[\w.]+)\[[\w-]+\] succeeded in ([0-9.]+)s")


def burst(args: argparse.Namespace, base: str, data: dict[str, Any], procs: Processes) -> dict[str, Any]:
    import httpx
    import numpy as np

    from leaderboard.rankings.models import BoardSnapshot
    from leaderboard.submissions.models import Status, Submission

    rng = np.random.default_rng(args.seed + 1)
    files = [
        predictions_csv(data["truth"], float(a), rng, data["difficulty"])
        for a in rng.uniform(0.80, 0.86, args.burst)
    ]
    before = set(Submission.objects.values_list("pk", flat=True))
    answers: list[tuple[int, int, int | None, str]] = []  # (team, status, submission id, text)
    lock = threading.Lock()

    def send(i: int) -> None:
        token = data["tokens"][i % len(data["tokens"])]
        with httpx.Client(base_url=base, timeout=120.0, headers={"Authorization": f"Token {token}"}) as http:
            r = http.post(
                f"/api/challenges/{CHALLENGE}/submissions/",
                data={"name": f"burst {i:03d}"},
                files={"file": (f"burst-{i:03d}.csv", files[i], "text/csv")},
            )
        with lock:
            answers.append(
                (
                    i % len(data["tokens"]),
                    r.status_code,
                    r.json().get("id") if r.status_code == 201 else None,
                    r.text[:200],
                )
            )

    load_before = loadavg()
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=min(args.clients, args.burst)) as pool:
        for future in [pool.submit(send, i) for i in range(args.burst)]:
            future.result()
    accept_s = time.perf_counter() - t0
    accepted = [pk for _, code, pk, _ in answers if code == 201]
    refused = [(code, text) for _, code, _, text in answers if code != 201]
    # The board counts each team's latest submission ("latest" entry rule): those must reach the board.
    latest_of_team: dict[int, int] = {}
    for team, code, pk, _ in answers:
        if code == 201 and pk is not None:
            latest_of_team[team] = max(pk, latest_of_team.get(team, 0))
    expected_on_board = set(latest_of_team.values())
    stored = set(Submission.objects.values_list("pk", flat=True)) - before
    log(f"burst: {len(accepted)} accepted in {accept_s:.1f} s, {len(refused)} refused, {len(stored)} stored")

    def all_scored() -> bool:
        return Submission.objects.filter(pk__in=accepted).exclude(status=Status.SCORED).count() == 0

    def on_board() -> bool:
        snap = (
            BoardSnapshot.objects.filter(task_id=data["task_id"], split="public")
            .order_by("-sequence")
            .only("rows")
            .first()
        )
        ids = {r["submission_id"] for r in snap.rows} if snap else set()
        return expected_on_board <= ids

    timed_out = None
    scored_s = board_s = float("nan")
    try:  # one clock for both waits: --burst-timeout bounds the whole burst
        wait_until(all_scored, timeout=args.burst_timeout, what="all burst submissions scored", every=1)
        scored_s = time.perf_counter() - t0
        wait_until(
            on_board,
            timeout=max(1.0, args.burst_timeout - scored_s),
            what="the board showing every burst submission",
            every=1,
        )
        board_s = time.perf_counter() - t0
    except TimeoutError as exc:  # report how far it got
        timed_out = f"{exc} (after {time.perf_counter() - t0:.0f} s)"
        log(timed_out)
    subs = list(
        Submission.objects.filter(pk__in=accepted).values("status", "started_at", "finished_at", "attempts")
    )
    per_submission = sorted(
        (s["finished_at"] - s["started_at"]).total_seconds()
        for s in subs
        if s["finished_at"] and s["started_at"]
    )
    worker_tasks: dict[str, list[float]] = defaultdict(list)
    for name, _proc in procs.procs:
        if name.startswith("celery"):
            for task, seconds in TASK_LINE.findall(procs.log_text(name)):
                worker_tasks[task.rsplit(".", 1)[-1]].append(float(seconds))
    snapshots = BoardSnapshot.objects.filter(task_id=data["task_id"]).count()
    return {
        "submissions": args.burst,
        "teams": len(data["tokens"]),
        "accepted": len(accepted),
        "refused": refused[:5],
        "stored": len(stored),
        "lost": len(set(accepted) - stored),
        "accept_wall_s": round(accept_s, 1),
        "accepted_per_s": round(len(accepted) / accept_s, 1),
        "all_scored_s": round(scored_s, 1),
        "all_on_board_s": round(board_s, 1),
        "scored_per_minute": round(
            sum(s["status"] == Status.SCORED for s in subs)
            / (time.perf_counter() - t0 if timed_out else scored_s)
            * 60,
            1,
        ),
        "timed_out": timed_out,
        "scored": sum(s["status"] == Status.SCORED for s in subs),
        "statuses": sorted({s["status"] for s in subs}),
        "max_attempts": max((s["attempts"] for s in subs), default=0),
        "scoring_s_p50": round(percentile(per_submission, 0.5), 2),
        "scoring_s_max": round(per_submission[-1], 2) if per_submission else None,
        "worker_tasks": {
            k: {"count": len(v), "total_s": round(sum(v), 1), "mean_s": round(sum(v) / len(v), 2)}
            for k, v in sorted(worker_tasks.items())
        },
        "snapshots_written": snapshots,
        "loadavg_before": load_before,
        "loadavg_after": loadavg(),
    }


# --- main ----------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=1000, help="per endpoint and mode")
    parser.add_argument("--read-seconds", type=float, default=120, help="wall-clock cap per read run")
    parser.add_argument("--think", type=float, default=1.0, help="think time of the second read mode")
    parser.add_argument("--burst", type=int, default=200)
    parser.add_argument("--teams", type=int, default=10)
    parser.add_argument("--burst-timeout", type=float, default=1800)
    parser.add_argument("--celery-workers", type=int, default=2)
    parser.add_argument("--gunicorn-workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--database", default="lbload")
    parser.add_argument("--redis-db", type=int, default=3)
    parser.add_argument("--queue", default="lbload")
    parser.add_argument("--out", type=Path, default=ROOT / "var" / "loadtest.json")
    parser.add_argument("--keep", action="store_true", help="keep the database, Redis keys and files")
    parser.add_argument("--skip", default="", help="comma-separated phases to skip: reads,burst")
    parser.add_argument("--measure-rebuild", type=int, help=argparse.SUPPRESS)  # internal: child process
    args = parser.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))

    if args.measure_rebuild is not None:  # the child that times a rebuild in a fresh process
        django_setup(dict(os.environ))
        print(json.dumps(measure_rebuild(args.measure_rebuild)))
        return 0

    data_dir = Path(tempfile.mkdtemp(prefix="lbload-"))
    env = service_env(args, data_dir)
    results: dict[str, Any] = {
        "command": " ".join([Path(PYTHON).name, *sys.argv]),
        "cpus": os.cpu_count(),
        "openblas_env": {k: v for k, v in os.environ.items() if k.startswith("OPENBLAS")},
        "loadavg_start": loadavg(),
    }
    procs = Processes(env, data_dir)
    import redis

    broker = redis.Redis.from_url(env["REDIS_URL"])
    try:
        log(f"database {args.database}, Redis db {args.redis_db}, data dir {data_dir}")
        recreate_database(args.database)
        broker.flushdb()
        subprocess.run(
            [PYTHON, "manage.py", "migrate", "--no-input", "-v", "0"], cwd=ROOT, env=env, check=True
        )
        django_setup(env)

        log(f"creating {args.entries} entries on a task of {args.items} items (B = {args.resamples})")
        data = create_board(args)
        results["bulk_entries_seconds"] = data["bulk_entries_seconds"]
        log(f"entries: {data['bulk_entries_seconds']}")

        log("timing a rebuild of the board in a fresh process")
        child = subprocess.run(
            [PYTHON, __file__, "--measure-rebuild", str(data["task_id"])],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        results["rebuild"] = json.loads(child.stdout.strip().splitlines()[-1])
        results["rebuild"]["loadavg"] = loadavg()
        log(f"rebuild: {results['rebuild']}")
        results["snapshot"] = snapshot_figures(data["task_id"])
        log(f"snapshot: {results['snapshot']}")

        port = free_port()
        base = f"http://{HOST}:{port}"
        gunicorn = procs.start(
            "gunicorn",
            [str(BIN / "gunicorn"), "-c", "deploy/gunicorn.conf.py", "leaderboard.config.wsgi"],
            {"GUNICORN_BIND": f"{HOST}:{port}", "GUNICORN_WORKERS": str(args.gunicorn_workers)},
        )
        for i in range(args.celery_workers):
            procs.start(
                f"celery{i + 1}",
                [
                    str(BIN / "celery"),
                    "-A",
                    "leaderboard",
                    "worker",
                    "-Q",
                    args.queue,
                    "--concurrency",
                    "1",
                    "-n",
                    f"lbload{i + 1}@%h",
                    "--loglevel",
                    "INFO",
                    "--without-gossip",
                    "--without-mingle",
                ],
            )
        import httpx

        def healthy() -> bool:
            with contextlib.suppress(httpx.HTTPError):
                return httpx.get(f"{base}/healthz", timeout=2).status_code == 200
            return False

        wait_until(healthy, timeout=60, what="gunicorn answering /healthz")
        wait_until(
            lambda: all(
                f"lbload{i + 1}@" in procs.log_text(f"celery{i + 1}")
                and "ready" in procs.log_text(f"celery{i + 1}")
                for i in range(args.celery_workers)
            ),
            timeout=60,
            what="celery workers ready",
        )
        log(f"gunicorn on {base} ({args.gunicorn_workers} workers), {args.celery_workers} celery workers")

        page = f"/c/{CHALLENGE}/?task={TASK}"
        api = f"/api/challenges/{CHALLENGE}/leaderboard/?task={TASK}"
        if "reads" not in skip:
            reads = []
            for path in (page, api):
                with httpx.Client(base_url=base, timeout=60) as http:
                    single = []
                    for _ in range(5):  # warm-up, and the latency of one request alone
                        t = time.perf_counter()
                        assert http.get(path).status_code == 200, path
                        single.append(time.perf_counter() - t)
                results.setdefault("single_request_ms", {})[path] = round(sorted(single)[2] * 1000, 1)
                for think in (0.0, args.think):
                    r = read_load(
                        base,
                        path,
                        clients=args.clients,
                        requests=args.requests,
                        seconds=args.read_seconds,
                        think=think,
                        server_pid=gunicorn.pid,
                    )
                    log(f"reads: {r}")
                    reads.append(r)
            results["reads"] = reads
        if "burst" not in skip and args.burst:
            results["burst"] = burst(args, base, data, procs)
            log(f"burst: {results['burst']}")
    finally:
        procs.stop()
        results["loadavg_end"] = loadavg()
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2, default=str))
        log(f"results in {args.out}")
        if not args.keep:
            with contextlib.suppress(Exception):
                from django.db import connections

                connections.close_all()
            drop_database(args.database)
            broker.flushdb()
            shutil.rmtree(data_dir, ignore_errors=True)
        else:
            log(f"kept: database {args.database}, Redis db {args.redis_db}, {data_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
