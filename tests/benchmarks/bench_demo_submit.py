"""The embedded demo's submit-to-answer time on a challenge with a private split (issue 22 "annoys", 24):
``python -m tests.benchmarks.bench_demo_submit [--items N] [--teams K] [--resamples B] [--posts P]``.

The embedded default (a throw-away SQLite database, Celery tasks in-process) runs the scoring and every
rebuild inside the participant's POST. A challenge of B resamples holds a task of N items (10 classes), half
of them on the private split, with K teams scored; then P new participants each POST a predictions file to
the site's submit form (Django's test client, the whole view: upload check, scoring, both boards' rebuilds,
the summary, and whatever else the rebuild queues), and the time from the POST to its answer is printed
with the load. Run it on two checkouts to compare them (``PYTHONPATH=<checkout>``); figures are in
docs/benchmarks.md with this command and the load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.benchmarks.bench_demo_submit", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--items", type=int, default=600)
    parser.add_argument("--teams", type=int, default=6)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--posts", type=int, default=3)
    args = parser.parse_args(argv)

    os.environ["LEADERBOARD_DATA_DIR"] = tempfile.mkdtemp(prefix="bench-demo-submit-")
    os.environ.pop("DATABASE_URL", None)
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.config.settings")
    import django

    django.setup()
    import io

    import numpy as np
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.urls import reverse

    from leaderboard.accounts.models import User
    from leaderboard.challenges.services import challenge_create, task_create
    from leaderboard.rankings.models import BoardSnapshot, ShakeupReport
    from leaderboard.submissions.services import Upload, submission_create

    setup_test_environment()  # the test client's host is allowed
    call_command("migrate", verbosity=0)
    n, b = args.items, args.resamples
    rng = np.random.default_rng(0)
    labels = [str(c) for c in range(10)]
    truth = rng.integers(0, 10, n)
    split = ["private" if i % 2 else "public" for i in range(n)]
    ids = [f"i{j:05d}" for j in range(n)]

    def predictions(accuracy: float) -> bytes:
        right = rng.random(n) < accuracy
        pred = np.where(right, truth, (truth + rng.integers(1, 10, n)) % 10)
        return ("id,prediction\n" + "".join(f"{i},{p}\n" for i, p in zip(ids, pred, strict=True))).encode()

    organizer = User.objects.create_user(username="org", password="a-long-bench-password-123")
    challenge = challenge_create(organizer=organizer, slug="demo", title="Demo", resamples=b)
    task_create(
        challenge=challenge,
        slug="main",
        title="Holdout",
        metric="accuracy",
        truth=(
            "id,label,split\n" + "".join(f"{i},{t},{s}\n" for i, t, s in zip(ids, truth, split, strict=True))
        ).encode(),
        truth_name="truth.csv",
        labels=labels,
        split_column="split",
    )
    print(f"embedded demo submit: N = {n:,} items (half private), K = {args.teams} teams, B = {b:,}")
    t0 = time.perf_counter()
    for k in range(args.teams):
        user = User.objects.create_user(username=f"team{k}", password="a-long-bench-password-123")
        data = predictions(0.80 + 0.15 * k / max(args.teams - 1, 1))
        submission_create(
            challenge=challenge,
            user=user,
            name=f"entry-{k}",
            files={"main": [Upload(name="p.csv", size=len(data), stream=io.BytesIO(data))]},
        )
    print(f"{args.teams} teams scored in {time.perf_counter() - t0:.1f} s (setup)")
    times = []
    for p in range(args.posts):
        user = User.objects.create_user(username=f"new{p}", password="a-long-bench-password-123")
        client = Client()
        client.force_login(user)
        data = predictions(0.9)
        load = os.getloadavg()[0]
        t = time.perf_counter()
        response = client.post(
            reverse("submit", args=[challenge.slug]),
            {"name": f"new-{p}", "file_main": SimpleUploadedFile("p.csv", data, content_type="text/csv")},
        )
        took = time.perf_counter() - t
        assert response.status_code == 302, response.status_code
        times.append(took)
        print(f"POST {p + 1}: {took:.2f} s to the answer (load average {load:.1f} before it)")
    print(
        f"median {statistics.median(times):.2f} s over {len(times)} POSTs; "
        f"snapshots {BoardSnapshot.objects.count()}, shake-up reports built {ShakeupReport.objects.count()}; "
        f"load average {os.getloadavg()[0]:.1f} at the end"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
