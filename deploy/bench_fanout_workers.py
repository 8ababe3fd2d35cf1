"""A COCO-val-shape detection entry at B = 10,000 fanned out over ONE and then TWO real Celery workers (issue 24).

Usage (from the repository root; PostgreSQL and Redis answering on 127.0.0.1)::

    .venv/bin/python deploy/bench_fanout_workers.py [--scale 1 --resamples 10000 --workers 1,2]

On a database of its own (``--database``, dropped and re-created) and Redis database ``--redis-db`` (its own
queue): one detection task (5,000 images, 80 classes; the generator of ``tests.benchmarks.bench_vision``,
500,000 detections, scores to 3 decimals) in a challenge with ``--resamples`` resamples, so the entry
is fanned out (``leaderboard.scoring.fanout``: the prepare step matches it once and stores the state, then
one ``score_chunk`` task per ``FANOUT_CHUNKS`` chunks of 256 resamples). For each worker count N in
``--workers``, N Celery worker processes (concurrency 1 each) start, the same entry is submitted (by a new
team) through ``submissions.services.submission_create`` (validated and stored as the API does), and
the wall time from the submission to its status ``scored`` and to the board showing it is measured; the
workers' logs give each task's time (prepare, chunks, join). The scores of every run are checked to be
the same bytes. Printed with the load average before and after each run.

Measurement, not extrapolation: every chunk of the entry is computed by the workers.
"""

from __future__ import annotations

import argparse
import io
import json
import multiprocessing
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import loadtest  # noqa: E402  (the processes and helpers of deploy/loadtest.py)
from bench_upload_to_board import drop_database, recreate_database  # noqa: E402

PYTHON = sys.executable
BIN = Path(PYTHON).parent
SUCCEEDED = re.compile(r"Task (leaderboard\.[\w.]+)\[[\w-]+\] succeeded in ([0-9.]+)s")


def _generate(n_images: int, n_detections: int, directory: str) -> tuple[str, str]:
    sys.path.insert(0, str(ROOT))
    from tests.benchmarks.bench_vision import synthetic_coco

    gt, dets = synthetic_coco(n_images, 80, n_detections)
    gt_path, det_path = Path(directory) / "instances.json", Path(directory) / "results.json"
    gt_path.write_text(json.dumps(gt))
    det_path.write_text(json.dumps(dets))
    return str(gt_path), str(det_path)


def main(argv: list[str] | None = None) -> int:  # noqa: C901 (one run, in order)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=int, default=1, help="divide images and detections by this")
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--workers", default="1,2", help="worker counts, in turn")
    parser.add_argument("--chunks-per-task", type=int, default=4, help="LEADERBOARD_FANOUT_CHUNKS")
    parser.add_argument("--database", default="lb_e2e_fanout")
    parser.add_argument("--redis-db", type=int, default=7)
    parser.add_argument("--queue", default="lb_e2e_fanout")
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--out", type=Path, default=ROOT / "var" / "bench_fanout_workers.json")
    args = parser.parse_args(argv)

    data_dir = Path(tempfile.mkdtemp(prefix="lb-e2e-fanout-"))
    largs = argparse.Namespace(database=args.database, redis_db=args.redis_db, queue=args.queue)
    env = loadtest.service_env(largs, data_dir)
    env.update(
        LEADERBOARD_FANOUT_CHUNKS=str(args.chunks_per_task),
        LEADERBOARD_FANOUT_DETECTION_MIN_RESAMPLES="2000",
        PYTHONUNBUFFERED="1",
    )
    procs = loadtest.Processes(env, data_dir)
    import redis

    broker = redis.Redis.from_url(env["REDIS_URL"])
    results: dict[str, Any] = {"command": " ".join([Path(PYTHON).name, *sys.argv]), "runs": []}
    try:
        recreate_database(args.database)
        broker.delete(args.queue)  # its own queue only: the Redis database may serve another benchmark
        import subprocess

        subprocess.run(
            [PYTHON, "manage.py", "migrate", "--no-input", "-v", "0"], cwd=ROOT, env=env, check=True
        )
        loadtest.django_setup(env)
        from django.contrib.auth import get_user_model

        from leaderboard.challenges.models import Team
        from leaderboard.challenges.services import challenge_create, task_create
        from leaderboard.rankings.models import BoardSnapshot
        from leaderboard.scoring.models import FanoutJob, Score
        from leaderboard.submissions.models import Status, Submission
        from leaderboard.submissions.services import Upload, submission_create

        n_images, n_detections = 5000 // args.scale, 500_000 // args.scale
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            gt_path, det_path = pool.apply(_generate, (n_images, n_detections, str(data_dir)))
        gt_bytes, det_bytes = Path(gt_path).read_bytes(), Path(det_path).read_bytes()
        users = get_user_model()
        organizer = users.objects.create_user("fanout-org", password=None)
        challenge = challenge_create(
            organizer=organizer, slug="coco", title="COCO-val shape", resamples=args.resamples,
            daily_limit=1000, total_limit=1000,
        )  # fmt: skip
        task = task_create(
            challenge=challenge, slug="val", title="val", metric="coco_ap", truth=gt_bytes,
            truth_name="instances_val.json",
        )  # fmt: skip
        loadtest.log(
            f"{n_images} images, {n_detections} detections ({len(det_bytes) / 1e6:.1f} MB), B = {args.resamples}"
        )
        reference: list[tuple[Any, ...]] | None = None
        for count in [int(x) for x in args.workers.split(",") if x]:
            names = [f"celery-{count}w-{i + 1}" for i in range(count)]
            started = [
                procs.start(
                    name,
                    [str(BIN / "celery"), "-A", "leaderboard", "worker", "-Q", args.queue, "--concurrency", "1",
                     "-n", f"{name}@%h", "--loglevel", "INFO", "--without-gossip", "--without-mingle"],
                )
                for name in names
            ]  # fmt: skip
            loadtest.wait_until(
                lambda names=names: all(" ready." in procs.log_text(n) for n in names),
                timeout=120,
                what="celery workers ready",
            )
            who = users.objects.create_user(f"fanout-{count}", password=None)
            team = Team.objects.create(challenge=challenge, name=f"team-{count}")
            team.members.add(who)
            load_before = loadtest.loadavg()
            t0 = time.perf_counter()
            sub = submission_create(
                challenge=challenge, user=who, name=f"detector ({count} workers)",
                files={"val": [Upload(name="results.json", size=len(det_bytes), stream=io.BytesIO(det_bytes))]},
            )  # fmt: skip
            stored_s = time.perf_counter() - t0
            loadtest.wait_until(
                lambda pk=sub.pk: Submission.objects.get(pk=pk).status in (Status.SCORED, Status.FAILED),
                timeout=args.timeout,
                what="the entry scored",
                every=0.5,
            )
            scored_s = time.perf_counter() - t0
            sub.refresh_from_db()
            if sub.status != Status.SCORED:
                raise SystemExit(f"scoring failed: {sub.error}")
            loadtest.wait_until(
                lambda pk=sub.pk: any(
                    r["submission_id"] == pk
                    for s in BoardSnapshot.objects.filter(task=task).order_by("-sequence")[:1]
                    for r in s.rows
                ),
                timeout=600,
                what="the entry on the board",
                every=0.5,
            )
            board_s = time.perf_counter() - t0
            tasks: dict[str, list[float]] = {}
            per_worker: dict[str, int] = {}
            for name in names:
                for task_name, seconds in SUCCEEDED.findall(procs.log_text(name)):
                    short = task_name.rsplit(".", 1)[-1]
                    tasks.setdefault(short, []).append(float(seconds))
                    if short == "score_chunk":
                        per_worker[name] = per_worker.get(name, 0) + 1
            job = FanoutJob.objects.filter(submission=sub).first()
            score = Score.objects.get(submission=sub, task=task)
            signature = (score.value, bytes(score.replicates), json.dumps(score.details, sort_keys=True))
            same = None if reference is None else signature == reference
            reference = reference or signature
            run = {
                "workers": count,
                "stored_s": round(stored_s, 2),
                "scored_s": round(scored_s, 2),
                "on_board_s": round(board_s, 2),
                "chunk_tasks": job.total if job else None,
                "chunk_tasks_per_worker": per_worker,
                "tasks": {
                    k: {
                        "count": len(v),
                        "sum_s": round(sum(v), 1),
                        "median_s": round(statistics.median(v), 2),
                    }
                    for k, v in tasks.items()
                },
                "same_bytes_as_first_run": same,
                "value": score.value,
                "loadavg_before": load_before,
                "loadavg_after": loadtest.loadavg(),
            }
            loadtest.log(f"{count} worker(s): {run}")
            results["runs"].append(run)
            for proc in started:
                proc.terminate()
                proc.wait(timeout=60)
        runs = results["runs"]
        if len(runs) >= 2:
            one = next((r for r in runs if r["workers"] == 1), runs[0])
            for r in runs:
                r["speedup_scored"] = round(one["scored_s"] / r["scored_s"], 2)
        print()
        print(
            "workers | submission stored | scored (wall) | on the board | speed-up | chunk tasks per worker | load before -> after"
        )
        for r in runs:
            print(
                f"{r['workers']} | {r['stored_s']} s | {r['scored_s']} s | {r['on_board_s']} s | "
                f"{r.get('speedup_scored', 1.0)}x | {r['chunk_tasks_per_worker']} | {r['loadavg_before']} -> {r['loadavg_after']}"
            )
            print(f"    tasks: {r['tasks']}; same bytes as the first run: {r['same_bytes_as_first_run']}")
    finally:
        procs.stop()
        try:
            from django.db import connections

            connections.close_all()
        except Exception:
            pass
        drop_database(args.database)
        broker.delete(args.queue)
        import shutil

        shutil.rmtree(data_dir, ignore_errors=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
