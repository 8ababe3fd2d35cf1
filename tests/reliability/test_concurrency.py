"""Races on the database: rebuilds of one board, and one team's parallel submissions against its limit.

Each thread has its own database connection (Django's are per thread) and closes it at the end; scoring
and rebuilds run in-process (eager), in the thread that committed the submission, so the commits, the
scorings and the rebuilds of all threads interleave for real on PostgreSQL.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from leaderboard.challenges.models import Team
from leaderboard.challenges.services import team_found
from leaderboard.rankings.models import BoardSnapshot
from leaderboard.rankings.services import leaderboard_rebuild
from leaderboard.submissions.models import Status, Submission
from tests.conftest import ROOT
from tests.reliability.support import submit
from tests.service.api_support import FAST_HASHERS, client_for, file, reset_throttles
from tests.service.factories import challenge_with_task, predictions, user

THREAD_TIMEOUT = 120.0


def run_in_threads(n: int, body: Callable[[int], Any]) -> list[Any]:
    """Run ``body(0..n-1)`` in n threads released together; return the results, raise the first error."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n
    errors: list[BaseException] = []

    def run(k: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[k] = body(k)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(k,), daemon=True) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=THREAD_TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0]
    return results


@pytest.fixture
def eager_errors_propagate() -> Iterator[None]:
    """In-process tasks raise their errors (a duplicate snapshot sequence must not pass silently)."""
    from leaderboard.config.celery import app

    previous = app.conf.task_eager_propagates
    app.conf.task_eager_propagates = True
    try:
        yield
    finally:
        app.conf.task_eager_propagates = previous


ENTRIES = 8


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_racing_rebuilds_of_one_board_end_with_every_scored_entry(
    postgres, eager_errors_propagate, caplog
) -> None:  # type: ignore[no-untyped-def]
    challenge, task, ids, truth = challenge_with_task(user("org"), resamples=200)
    people = [user(f"p{k}") for k in range(ENTRIES)]

    def submit_and_rebuild(k: int) -> int:
        # Commit (and score, and rebuild on commit), then rebuild once more: 2 rebuilds per thread.
        s = submit(challenge, people[k], f"e{k}", predictions(ids, truth, 0.6 + 0.04 * k, k))
        leaderboard_rebuild(task_id=task.pk, split="public")
        return s.pk

    submitted = set(run_in_threads(ENTRIES, submit_and_rebuild))
    assert "deadlock detected" not in caplog.text  # retried away, but a sign of a lock-order bug
    assert set(Submission.objects.filter(status=Status.SCORED).values_list("pk", flat=True)) == submitted

    snapshots = list(BoardSnapshot.objects.filter(task=task, split="public").order_by("sequence"))
    latest = snapshots[-1]
    assert latest.entry_count == ENTRIES
    assert {r["submission_id"] for r in latest.rows} == submitted
    # Serialised and idempotent: sequences 1..n without a gap (the unique constraint forbids duplicates),
    # each snapshot's entries include the previous one's, and no two consecutive snapshots are equal.
    assert [s.sequence for s in snapshots] == list(range(1, len(snapshots) + 1))
    entry_sets = [{r["submission_id"] for r in s.rows} for s in snapshots]
    assert all(a <= b for a, b in itertools.pairwise(entry_sets))
    assert all(a.signature["inputs"] != b.signature["inputs"] for a, b in itertools.pairwise(snapshots))
    assert len(snapshots) <= 2 * ENTRIES
    # Once everything is in, more racing rebuilds write nothing new.
    run_in_threads(4, lambda _k: leaderboard_rebuild(task_id=task.pk, split="public"))
    assert BoardSnapshot.objects.filter(task=task, split="public").count() == len(snapshots)


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_an_upload_is_stored_while_a_rebuild_of_its_board_holds_the_lock(postgres, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A rebuild locks only its task's row, and not against inserts: before, it also locked the challenge,
    so an upload (a new team, a submission referencing the challenge, its file the task) waited for every
    rebuild and could deadlock with one, which PostgreSQL broke by failing one of them: a 500 upload."""
    from leaderboard.rankings import board as engine

    challenge, task, ids, truth = challenge_with_task(user("org"), resamples=200)
    submit(challenge, user("p0"), "first", predictions(ids, truth, 0.7, 0))
    newcomer = user("newcomer")
    inside, release = threading.Event(), threading.Event()
    build_board = engine.build_board
    rebuilder: list[threading.Thread] = []

    def paused_build_board(**kwargs: Any) -> Any:
        if threading.current_thread() in rebuilder:  # only the rebuild under test pauses, lock held
            inside.set()
            assert release.wait(timeout=60)
        return build_board(**kwargs)

    monkeypatch.setattr(engine, "build_board", paused_build_board)
    BoardSnapshot.objects.filter(task=task).delete()  # so the next rebuild builds (and pauses)

    def body(k: int) -> Any:
        if k == 0:
            rebuilder.append(threading.current_thread())
            return leaderboard_rebuild(task_id=task.pk, split="public")
        assert inside.wait(timeout=30)
        return submit(challenge, newcomer, "during", predictions(ids, truth, 0.8, 1)).pk

    results: list[Any] = []
    runner = threading.Thread(target=lambda: results.extend(run_in_threads(2, body)), daemon=True)
    runner.start()
    try:
        assert inside.wait(timeout=30)
        stored = False
        deadline = time.monotonic() + 5
        while not stored and time.monotonic() < deadline:
            stored = Submission.objects.filter(name="during").exists()  # committed, while the lock is held
            time.sleep(0.05)
        assert stored, "the upload waited for the board rebuild"
    finally:
        release.set()
        runner.join(timeout=THREAD_TIMEOUT)
        connection.close()
    assert not runner.is_alive() and len(results) == 2
    assert Submission.objects.get(name="during").status == Status.SCORED


PARALLEL, LIMIT = 20, 5


def _parallel_uploads(challenge_slug: str, who: Any, ids: list[str], truth: list[str]) -> list[Any]:
    def upload(k: int) -> Any:
        client = client_for(who)
        client.raise_request_exception = False
        return client.post(
            f"/api/challenges/{challenge_slug}/submissions/",
            {"name": f"race-{k}", "file": file(f"race-{k}.csv", predictions(ids, truth, 0.8, k))},
            format="multipart",
        )

    return run_in_threads(PARALLEL, upload)


def _assert_exactly_the_limit_accepted(responses: list[Any], team_ids: set[int]) -> None:
    codes = sorted(r.status_code for r in responses)
    assert codes == [201] * LIMIT + [429] * (PARALLEL - LIMIT), codes
    for r in responses:
        if r.status_code == 429:
            body = r.json()
            assert body["message"].startswith(
                f"Your team has used its {LIMIT} submissions of the last 24 hours; the next slot opens at "
            )
            assert {k: body["extra"][k] for k in ("limit", "used")} == {"limit": "daily", "used": LIMIT}
            assert "next_slot_at" in body["extra"]
    assert Submission.objects.filter(charged=True).count() == LIMIT
    assert set(Submission.objects.values_list("team_id", flat=True)) == team_ids


def _limits_race(new_participant: bool) -> None:
    challenge, _task, ids, truth = challenge_with_task(user("org"), resamples=200, daily_limit=LIMIT)
    who = user("racer")
    if not new_participant:
        team_found(challenge=challenge, user=who, name="racers")
    responses = _parallel_uploads(challenge.slug, who, ids, truth)
    teams = set(Team.objects.filter(challenge=challenge, members=who).values_list("pk", flat=True))
    assert len(teams) == 1, "one participant, one team"
    _assert_exactly_the_limit_accepted(responses, teams)


@pytest.fixture
def fresh_throttles(settings) -> Iterator[None]:  # type: ignore[no-untyped-def]
    settings.PASSWORD_HASHERS = FAST_HASHERS
    reset_throttles()
    yield
    reset_throttles()


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("new_participant", [False, True], ids=["team", "first-submissions"])
def test_parallel_submissions_of_one_team_accept_exactly_the_limit_on_postgres(
    postgres, fresh_throttles, new_participant: bool
) -> None:  # type: ignore[no-untyped-def]
    _limits_race(new_participant)


# The embedded default in a process of its own: pytest-django's SQLite test database is in memory (shared
# cache), whose table locks fail at once instead of waiting, unlike the file the embedded default uses.
SQLITE_RACE = """
import sys
import django
django.setup()
from django.conf import settings
from tests.service.api_support import FAST_HASHERS
settings.PASSWORD_HASHERS = FAST_HASHERS
from tests.reliability.test_concurrency import _limits_race
_limits_race(new_participant=sys.argv[1] == "1")
print("exactly the limit accepted")
"""


def _embedded_env(data_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{data_dir / 'db.sqlite3'}",
        "REDIS_URL": "",
        "LEADERBOARD_DATA_DIR": str(data_dir),
        "DJANGO_SETTINGS_MODULE": "leaderboard.config.settings",
    }


@pytest.fixture(scope="module")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An embedded-default SQLite file with the schema, made once and copied by each test."""
    data_dir = tmp_path_factory.mktemp("embedded")
    migrated = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
        cwd=ROOT, env=_embedded_env(data_dir), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert migrated.returncode == 0, migrated.stderr[-3000:]
    return data_dir / "db.sqlite3"


@pytest.mark.parametrize("new_participant", [False, True], ids=["team", "first-submissions"])
def test_parallel_submissions_of_one_team_accept_exactly_the_limit_on_sqlite(
    migrated_sqlite: Path, tmp_path: Path, new_participant: bool
) -> None:
    shutil.copy(migrated_sqlite, tmp_path / "db.sqlite3")
    raced = subprocess.run(
        [sys.executable, "-c", SQLITE_RACE, "1" if new_participant else "0"],
        cwd=ROOT, env=_embedded_env(tmp_path), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert raced.returncode == 0, raced.stderr[-3000:]
    assert "exactly the limit accepted" in raced.stdout


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_parallel_retries_with_one_idempotency_key_store_one_submission_on_postgres(
    postgres, fresh_throttles
) -> None:  # type: ignore[no-untyped-def]
    """8 copies of one upload with one key sent at once (a client retrying impatiently), by a participant
    with no team yet, and the same key at once on a second challenge (other files: no team lock is
    shared, so the key's unique constraint decides): one submission, every copy answered with it."""
    challenge, _task, ids, truth = challenge_with_task(user("org"), resamples=200, daily_limit=LIMIT)
    other, _t, ids2, truth2 = challenge_with_task(user("org2"), slug="other", resamples=200)
    who = user("racer")
    data = predictions(ids, truth, 0.8, 1)

    def upload(k: int) -> Any:
        client = client_for(who)
        client.raise_request_exception = False
        slug, payload = (other.slug, predictions(ids2, truth2, 0.7, 2)) if k == 0 else (challenge.slug, data)
        return client.post(
            f"/api/challenges/{slug}/submissions/",
            {"name": "same", "file": file("p.csv", payload)},
            format="multipart",
            HTTP_IDEMPOTENCY_KEY="one-key",
        )

    responses = run_in_threads(PARALLEL // 2 + 1, upload)
    stored = list(Submission.objects.filter(submitted_by=who))
    assert len(stored) == 1, [(r.status_code, r.content[:200]) for r in responses]
    codes = sorted(r.status_code for r in responses)
    # The other challenge's copy is another upload under the same key: 422, or it got there first and
    # every copy of this one is the 422.
    if stored[0].challenge_id == challenge.pk:
        assert codes == [201] * (PARALLEL // 2) + [422], codes
        assert {r.json()["id"] for r in responses if r.status_code == 201} == {stored[0].pk}
    else:
        assert codes == [201] + [422] * (PARALLEL // 2), codes
    assert Submission.objects.filter(charged=True).count() == 1
