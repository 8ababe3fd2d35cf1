"""A COCO-val-sized detection upload through the service: ``python deploy/bench_vision_upload.py``.

5,000 images, 80 classes, 500,000 detections (~50 MB of results JSON, scores to 3 decimals; the
generator of ``tests.benchmarks.bench_vision``). Measured in one process, on a fresh SQLite database in a temporary
data directory, scoring in-process as the embedded default does:

1. the organizer's task creation (the COCO annotation file parsed and checked, the task stored);
2. the participant's upload over the API (multipart through the streaming size limit, validated against
   the task's public ids, stored), with the upload's own time and peak memory;
3. the worker's scoring of that entry (matching once, B replicates of the headline AP and, for the first
   1,000 resamples, every other stat and the per-class AP) and the board rebuild.

Peak memory is the process's maximum resident set size (``ru_maxrss``) after each step (the files are
generated in a child process, so it is the service's own). Figures are
recorded in docs/benchmarks.md with this command.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import sys
import tempfile
import time
from pathlib import Path


def _generate(n_images: int, n_detections: int, directory: str) -> tuple[str, str]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the generator lives in tests/benchmarks/
    from tests.benchmarks.bench_vision import synthetic_coco

    gt, dets = synthetic_coco(n_images, 80, n_detections)
    gt_path, det_path = Path(directory) / "instances.json", Path(directory) / "results.json"
    gt_path.write_text(json.dumps(gt))
    det_path.write_text(json.dumps(dets))
    return str(gt_path), str(det_path)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=1, help="divide images and detections by this")
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args(argv)

    data_dir = tempfile.mkdtemp(prefix="lb-bench-vision-")
    os.environ["LEADERBOARD_DATA_DIR"] = data_dir
    os.environ.pop("DATABASE_URL", None)
    os.environ.pop("REDIS_URL", None)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.config.settings")
    import django

    django.setup()
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import call_command
    from rest_framework.test import APIClient

    from leaderboard.accounts.models import User
    from leaderboard.rankings.models import BoardSnapshot
    from leaderboard.submissions.models import Submission

    call_command("migrate", verbosity=0)
    n_images, n_detections = 5000 // args.scale, 500_000 // args.scale
    # The files are generated in a child process, so this process's peak memory is the service's own.
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        gt_path, det_path = pool.apply(_generate, (n_images, n_detections, data_dir))
    gt_bytes, det_bytes = Path(gt_path).read_bytes(), Path(det_path).read_bytes()
    print(f"{n_images} images, {n_detections} detections: results {len(det_bytes) / 1e6:.1f} MB, "
          f"annotations {len(gt_bytes) / 1e6:.1f} MB; B = {args.resamples}")  # fmt: skip
    print(f"baseline peak RSS (Django set up, the two files read): {_peak_mb():.0f} MB")

    organizer = User.objects.create_user(username="org", password="x-long-password-1")
    participant = User.objects.create_user(username="pat", password="x-long-password-1")
    org, pat = APIClient(), APIClient()
    org.force_authenticate(organizer)
    pat.force_authenticate(participant)
    r = org.post(
        "/api/challenges/",
        {"slug": "coco", "title": "COCO-sized", "resamples": args.resamples},
        format="json",
    )
    assert r.status_code == 201, r.content

    t0 = time.perf_counter()
    r = org.post("/api/challenges/coco/tasks/", {"slug": "val", "title": "val", "metric": "coco_ap",
                 "truth": SimpleUploadedFile("instances_val.json", gt_bytes)}, format="multipart")  # fmt: skip
    assert r.status_code == 201, r.content
    print(f"1. task creation (annotations parsed, checked, stored): {time.perf_counter() - t0:.1f} s, "
          f"peak RSS {_peak_mb():.0f} MB")  # fmt: skip

    # Upload without scoring (validation and storage only): scoring is dispatched on commit, so keep the
    # submission queued by making the scoring task a no-op for this step, then score it explicitly.
    from leaderboard.scoring import tasks as scoring_tasks
    from leaderboard.scoring.services import submission_score

    real = scoring_tasks.score_submission.apply_async
    scoring_tasks.score_submission.apply_async = lambda *a, **k: None
    t0 = time.perf_counter()
    r = pat.post("/api/challenges/coco/submissions/",
                 {"name": "detector", "file": SimpleUploadedFile("results.json", det_bytes)}, format="multipart")  # fmt: skip
    upload_s = time.perf_counter() - t0
    assert r.status_code == 201, r.content
    scoring_tasks.score_submission.apply_async = real
    print(
        f"2. upload over the API (streamed, validated, stored): {upload_s:.1f} s, peak RSS {_peak_mb():.0f} MB"
    )

    sub = Submission.objects.get()
    t0 = time.perf_counter()
    submission_score(submission_id=sub.pk)
    score_s = time.perf_counter() - t0
    snap = BoardSnapshot.objects.filter(task__slug="val").order_by("-sequence").first()
    row = snap.rows[0] if snap else {}
    print(f"3. scoring + board (matching, {args.resamples} replicates, details): {score_s:.1f} s, "
          f"peak RSS {_peak_mb():.0f} MB; AP {row.get('value', float('nan')):.4f} "
          f"[{row.get('interval', [float('nan')] * 2)[0]:.4f}, {row.get('interval', [float('nan')] * 2)[1]:.4f}]")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
