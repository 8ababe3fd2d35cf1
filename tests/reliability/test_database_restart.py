"""PostgreSQL restarted during scoring: the task retries and completes; no submission is stuck.

The database is a private PostgreSQL cluster of this test (``initdb`` into a temporary directory), so
the machine's shared server is never restarted. The test process reaches it with plain psycopg; the
challenge and the submission are made by a small Django script against it, and a real worker scores.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from tests.conftest import ROOT, wait_for
from tests.reliability.conftest import PostgresCluster

# The fault tests (marked `faults`) start and kill workers and private servers, with windows timed on a
# busy machine: `make test` runs them in a pytest run of their own, one after another, beside the rest,
# which runs over several processes (pytest-xdist's `xdist_group` is not applied under pytest 9.2, so a group
# could not keep them together; docs/benchmarks.md, "Over two processes").
pytestmark = [
    pytest.mark.services,
    pytest.mark.django_db(transaction=True),
    pytest.mark.faults,
]

# Run against the private cluster: make a slow ROC AUC challenge and submit to it (dispatched on commit).
SUBMIT = textwrap.dedent(
    """
    import django
    django.setup()
    from tests.reliability.support import slow_challenge, slow_predictions_file, submit
    from tests.service.factories import user
    challenge, _task = slow_challenge(user("org"))
    print(submit(challenge, user("p1"), "restart", slow_predictions_file()).pk)
    """
)


def _query(cluster: PostgresCluster, sql: str) -> list[tuple[object, ...]] | None:
    """Rows of ``sql`` on the private database, or None while the server is unreachable."""
    import psycopg

    try:
        with cluster.connect("lb") as conn:  # type: ignore[attr-defined]
            return list(conn.execute(sql).fetchall())
    except psycopg.OperationalError:
        return None


def test_a_postgres_restart_during_scoring_is_retried_and_the_submission_completes(
    private_postgres, fault_workers
) -> None:
    cluster: PostgresCluster = private_postgres
    with cluster.connect() as conn:  # type: ignore[attr-defined]
        conn.execute("CREATE DATABASE lb")
    env = {
        **os.environ,
        "DATABASE_URL": cluster.url("lb"),
        "DJANGO_SETTINGS_MODULE": "leaderboard.config.settings",
    }
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
        cwd=ROOT, env=env, check=True, timeout=120, capture_output=True,
    )  # fmt: skip
    worker = fault_workers(env={"DATABASE_URL": cluster.url("lb")})
    env["LEADERBOARD_QUEUE"] = worker.queue
    made = subprocess.run(
        [sys.executable, "-c", SUBMIT],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=120,
        capture_output=True,
        text=True,
    )
    pk = int(made.stdout.strip().splitlines()[-1])

    def status() -> str | None:
        rows = _query(cluster, f"SELECT status FROM submissions_submission WHERE id = {pk}")
        return str(rows[0][0]) if rows else None

    wait_for(lambda: status() == "running", timeout=60, interval=0.05, what="status running")
    time.sleep(0.5)  # inside the scorer's O(N^2) jackknife, with the worker's connection open
    started = time.monotonic()
    cluster.restart()  # fast mode: every session is terminated, as in a failover or an upgrade
    restarted = time.monotonic() - started

    wait_for(lambda: status() == "scored", timeout=120, what="scoring after the restart")
    recovered = time.monotonic() - started
    log = worker.log_text()
    assert "database fault, retrying (OperationalError)" in log, log[-3000:]
    assert "Retry in" in log
    rows = _query(cluster, f"SELECT attempts, charged FROM submissions_submission WHERE id = {pk}")
    assert rows is not None and rows[0] == (2, True)  # claimed again by the retry; a normal, charged entry
    assert _query(cluster, f"SELECT count(*) FROM scoring_score WHERE submission_id = {pk}") == [(1,)]
    stuck = _query(
        cluster, "SELECT count(*) FROM submissions_submission WHERE status IN ('queued', 'running')"
    )
    assert stuck == [(0,)]
    retries = log.count("database fault, retrying")
    print(
        f"\n[figure] PostgreSQL restarted in {restarted:.1f} s during scoring: {retries} retr"
        f"{'y' if retries == 1 else 'ies'}, scored {recovered:.1f} s after the restart began"
    )
