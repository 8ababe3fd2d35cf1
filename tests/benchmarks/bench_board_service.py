"""Benchmark of the service's board rebuild with and without the incremental board (issue 14 point 1):
``python -m tests.benchmarks.bench_board_service [--entries K] [--items N] [--resamples B]``.

A throw-away SQLite database (in a temporary data directory; Celery in-process) holds a task of N items
and K teams' scores with B replicates and per-item statistics (the engine's numbers for predictions of
spread accuracy, ``tests.benchmarks.bench_compare``'s generator). Measured, in one run and one process:

1. ``leaderboard_rebuild`` of the board of K (a full rebuild: nothing kept yet);
2. one more team's score stored, then ``leaderboard_rebuild`` with this process's kept board: the update
   path (``rankings.board_cache``);
3. the same board of K + 1 again with the cache cleared and the snapshot of 2 deleted: the full rebuild.

Each rebuild is the whole service call (reading the scores, the board, writing the snapshot). The snapshots
of 2 and 3 are compared (rows, signature without its time, rank distribution): they must be equal.
Figures are recorded in docs/benchmarks.md with this command and the load (``uptime``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.benchmarks.bench_board_service", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=2, help="runs of the three rebuilds")
    parser.add_argument(
        "--profile", choices=["update", "full"], help="cProfile of that rebuild in the last run (top 25)"
    )
    args = parser.parse_args(argv)
    k, n, b = args.entries, args.items, args.resamples

    os.environ["LEADERBOARD_DATA_DIR"] = tempfile.mkdtemp(prefix="bench-board-")
    os.environ.pop("DATABASE_URL", None)
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.config.settings")
    import django

    django.setup()
    import numpy as np
    from django.core.management import call_command

    import stats
    from leaderboard.accounts.models import User
    from leaderboard.challenges.models import Team
    from leaderboard.challenges.services import challenge_create, task_create
    from leaderboard.rankings import board_cache
    from leaderboard.rankings.models import BoardSnapshot
    from leaderboard.rankings.services import leaderboard_rebuild
    from leaderboard.scoring.models import Score
    from leaderboard.submissions.models import Status, Submission
    from stats.engine import score_entries
    from stats.metrics import get_metric
    from tests.benchmarks.bench_compare import _task

    call_command("migrate", verbosity=0)
    print(f"service board rebuild: K = {k:,} entries (+1), N = {n:,} items, B = {b:,} resamples")
    print(f"load average {os.getloadavg()[0]:.1f} at start; SQLite in {os.environ['LEADERBOARD_DATA_DIR']}")
    metric = get_metric("accuracy")
    truth, preds = _task(n, k + 1, 0)
    t0 = time.perf_counter()
    organizer = User.objects.create_user(username="org", password="a-long-bench-password-123")
    challenge = challenge_create(organizer=organizer, slug="bench", title="Bench", resamples=b)
    labels = [str(c) for c in range(10)]
    task = task_create(
        challenge=challenge,
        slug="main",
        title="Main",
        metric="accuracy",
        truth=("id,label\n" + "".join(f"i{j},{t}\n" for j, t in enumerate(truth))).encode(),
        truth_name="truth.csv",
        labels=labels,
    )
    scores = score_entries(truth, preds, metric=metric, resamples=b, seed=challenge.seed, jackknife=False)

    def store(j: int) -> None:
        team = Team.objects.create(challenge=challenge, name=f"team-{j:05d}")
        sub = Submission.objects.create(
            challenge=challenge, team=team, name=f"e{j:05d}", status=Status.SCORED
        )
        items = metric.item_statistics(truth, preds[j])
        Score.objects.create(
            submission=sub,
            task=task,
            split="public",
            value=scores[j].value,
            replicates=scores[j].replicates.astype("<f8").tobytes(),
            item_statistics=np.asarray(items, dtype="<f8").tobytes(),
            item_statistics_shape=list(np.shape(items)),
            resamples=b,
            seed=challenge.seed,
            truth_version=task.truth_version,
            engine_version=stats.__version__,
        )

    for j in range(k):
        store(j)
    print(f"setup (engine and {k} score rows, not timed below): {time.perf_counter() - t0:.1f} s")

    from leaderboard.rankings import board as board_builder

    real_build = board_builder.build_board
    inner: list[float] = []

    def timed_build(**kwargs: object) -> object:  # the board alone, inside the service call
        start = time.process_time()
        out = real_build(**kwargs)  # type: ignore[arg-type]
        inner.append(time.process_time() - start)
        return out

    board_builder.build_board = timed_build  # type: ignore[assignment]

    def rebuild() -> tuple[float, float, float, BoardSnapshot]:
        """(wall, CPU, CPU of the board alone) of one leaderboard_rebuild, and its snapshot."""
        start, cpu = time.perf_counter(), time.process_time()
        snap = leaderboard_rebuild(task_id=task.pk, split="public")
        assert snap is not None
        return time.perf_counter() - start, time.process_time() - cpu, inner[-1], snap

    def line(label: str, t: tuple[float, float, float, BoardSnapshot]) -> None:
        print(f"   {label:58s} wall {t[0]:7.3f} s  CPU {t[1]:7.3f} s  (board alone: CPU {t[2]:6.3f} s)")

    def profiled(fn: Callable[[], Any], on: bool) -> Any:
        if not on:
            return fn()
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        out = profiler.runcall(fn)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
        return out

    same = True
    for rep in range(args.repeat):
        print(f"run {rep + 1}:")
        Submission.objects.filter(name=f"e{k:05d}").delete()
        Team.objects.filter(name=f"team-{k:05d}").delete()
        BoardSnapshot.objects.filter(task=task).delete()
        board_cache.clear()
        line(f"1. board of {k}, nothing kept (full)", rebuild())
        store(k)
        updated = profiled(rebuild, args.profile == "update" and rep == args.repeat - 1)
        path = board_cache.peek(task.pk, "public")
        line(f"2. one more entry, the board of {k} kept ({path.last if path else 'none'})", updated)
        BoardSnapshot.objects.filter(pk=updated[3].pk).delete()
        board_cache.clear()
        full = profiled(rebuild, args.profile == "full" and rep == args.repeat - 1)
        line(f"3. the same board of {k + 1}, cache cleared (full)", full)
        a, b_ = updated[3], full[3]
        equal = (
            a.rows == b_.rows
            and a.rank_distribution == b_.rank_distribution
            and {x: v for x, v in a.signature.items() if x != "created"}
            == {x: v for x, v in b_.signature.items() if x != "created"}
        )
        same = same and equal
        print(
            f"   full / update: wall {full[0] / updated[0]:.2f}x, CPU {full[1] / updated[1]:.2f}x, board CPU "
            f"{full[2] / updated[2]:.2f}x; same snapshot: {equal}"
        )
    print(f"load average {os.getloadavg()[0]:.1f} at end")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
