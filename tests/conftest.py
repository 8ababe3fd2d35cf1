"""Shared fixtures: real services (PostgreSQL, Redis, Celery worker processes, Chromium).

Without services configured the suite runs on the embedded default (SQLite, in-process tasks) and skips
the service tests, listing them at the end. With ``REQUIRE_SERVICES=1`` (as .ci/run sets it) a missing
service is a test failure, never a skip.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

ROOT = Path(__file__).resolve().parent.parent
REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES") == "1"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")


def need(service: str, available: bool, reason: str) -> None:
    """Skip (or, with REQUIRE_SERVICES=1, fail) a test whose service is not there."""
    if available:
        return
    message = f"{service}: {reason}"
    if REQUIRE_SERVICES:
        pytest.fail(f"REQUIRE_SERVICES=1 but {message}", pytrace=False)
    pytest.skip(f"service not configured: {message}")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    skipped = [
        rep
        for rep in terminalreporter.stats.get("skipped", [])
        if isinstance(rep.longrepr, tuple) and "service not configured" in str(rep.longrepr[2])
    ]
    if skipped:
        terminalreporter.section("service tests skipped (embedded default)")
        for rep in skipped:
            terminalreporter.write_line(f"SKIPPED {rep.nodeid}: {rep.longrepr[2]}")  # type: ignore[index]
        terminalreporter.write_line(
            "Run them with PostgreSQL, Redis and Chromium: bash .ci/run (or set DATABASE_URL, REDIS_URL "
            "and REQUIRE_SERVICES=1)."
        )


def _socket_owner(port: int) -> str:
    """The process (pid and command) holding the local TCP socket of ``port``, from /proc (Linux; "" when
    not found): whose is a session still on the test database."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if len(fields) > 9 and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(f"socket:[{fields[9]}]")
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in (proc / "fd").iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd) in inodes:
                        command = (
                            (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                        )
                        return f"pid {proc.name} ({command[:160].strip()})"
    return ""


#: backend pid -> the test running and the thread when Django opened that connection (_warn_of_other_sessions)
_OPENED: dict[int, str] = {}
#: Django's own ``teardown_databases`` (``pytest_configure`` wraps it)
_teardown_databases: Any = None


def _record_connection(sender: object, connection: Any, **kwargs: object) -> None:
    with contextlib.suppress(Exception):
        pid = int(connection.connection.info.backend_pid)
        test = os.environ.get("PYTEST_CURRENT_TEST", "no test")
        _OPENED[pid] = f"{test}, thread {threading.current_thread().name}"


@pytest.fixture(scope="session", autouse=True)
def _connections_recorded() -> Iterator[None]:
    """Which test and thread opened each PostgreSQL connection (Django's ``connection_created``)."""
    from django.db.backends.signals import connection_created

    connection_created.connect(_record_connection, dispatch_uid="tests-record-connection")
    yield
    connection_created.disconnect(dispatch_uid="tests-record-connection")


def _teardown_databases_warning_of_other_sessions(*args: Any, **kwargs: Any) -> Any:
    """``django.test.utils.teardown_databases``, which pytest-django's ``django_db_setup`` imports when it
    runs, preceded by a warning naming every other session still on the PostgreSQL test database: one a
    thread or process of some test left open makes the drop fail ("is being accessed by other users"),
    and the database is left behind. At this point every other session-scoped fixture (the workers of
    the fault tests) has stopped."""
    with contextlib.suppress(Exception):
        _warn_of_other_sessions()
    return _teardown_databases(*args, **kwargs)


def pytest_configure(config: pytest.Config) -> None:
    global _teardown_databases
    import django.test.utils

    if django.test.utils.teardown_databases is not _teardown_databases_warning_of_other_sessions:
        _teardown_databases = django.test.utils.teardown_databases
        django.test.utils.teardown_databases = _teardown_databases_warning_of_other_sessions


def _warn_of_other_sessions() -> None:
    import warnings

    import psycopg
    from django.conf import settings
    from django.db import connection

    db = settings.DATABASES["default"]
    if db["ENGINE"] != "django.db.backends.postgresql" or not str(db["NAME"]).startswith("test_"):
        return
    own = connection.connection.info.backend_pid if connection.connection is not None else None
    with psycopg.connect(
        dbname=db["NAME"],
        user=db.get("USER") or None,
        password=db.get("PASSWORD") or None,
        host=db.get("HOST") or None,
        port=db.get("PORT") or None,
        connect_timeout=5,
    ) as probe:
        rows = probe.execute(
            "SELECT pid, application_name, client_port, backend_start, state, left(query, 300)"
            " FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    others = [row for row in rows if row[0] != own]
    if not others:
        return
    threads = ", ".join(sorted(t.name for t in threading.enumerate()))
    lines = [
        f"backend {pid} ({name or 'no name'}, since {start:%H:%M:%S}, {state}): client port {port} held by "
        f"{_socket_owner(port) if port and port > 0 else '?'}; opened by Django in "
        f"{_OPENED.get(pid, 'no test of this process (not a Django connection of it)')}; last query: {query!r}"
        for pid, name, port, start, state, query in others
    ]
    warnings.warn(
        pytest.PytestWarning(
            f"{len(others)} other session(s) on {db['NAME']} before its teardown:\n  "
            + "\n  ".join(lines)
            + f"\n  threads of this process: {threads}"
        ),
        stacklevel=1,
    )


@pytest.fixture
def postgres() -> None:
    from django.conf import settings

    need(
        "PostgreSQL",
        settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql",
        "DATABASE_URL is not a postgres:// URL",
    )


@pytest.fixture
def redis_url() -> str:
    from django.conf import settings

    need("Redis", bool(settings.REDIS_URL), "REDIS_URL is not set")
    import redis

    try:
        redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        need("Redis", False, f"{settings.REDIS_URL} does not answer ({exc})")
    return str(settings.REDIS_URL)


def database_url_of_current_connection() -> str:
    """The URL of the database this test runs on (pytest-django's test database), for worker processes."""
    from django.db import connection

    s = connection.settings_dict
    user = quote(s.get("USER") or "")
    password = quote(s.get("PASSWORD") or "")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    return f"postgres://{auth}{s.get('HOST') or '127.0.0.1'}:{s.get('PORT') or 5432}/{s['NAME']}"


class WorkerProcess:
    """A real ``celery worker`` OS process consuming this test session's private queue."""

    def __init__(self, *, queue: str, env: dict[str, str], log_path: Path, name: str) -> None:
        self.queue = queue
        self.env = env
        self.log_path = log_path
        self.name = name
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, concurrency: int = 1) -> None:
        self.log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [
                sys.executable, "-m", "celery", "-A", "leaderboard", "worker",
                "--loglevel=INFO", f"--concurrency={concurrency}", "--pool=prefork",
                "-Q", self.queue, "-n", f"{self.name}@%h",
                "--without-gossip", "--without-mingle",
            ],
            cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        self.wait_ready()

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"celery worker exited early; log:\n{self.log_text()}")
            if " ready." in self.log_text():
                return
            time.sleep(0.2)
        raise RuntimeError(f"celery worker not ready after {timeout}s; log:\n{self.log_text()}")

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait(timeout=10)
        if hasattr(self, "log"):
            self.log.close()


def worker_data_dir(tmp_path: Path) -> Path:
    """The data directory of the workers a test starts: another "host's" disk (see ``worker_factory``)."""
    from django.conf import settings

    path = tmp_path / "worker-host-data"
    path.mkdir(exist_ok=True)
    assert path.resolve() != Path(settings.DATA_DIR).resolve()
    return path


@pytest.fixture
def worker_factory(postgres: None, redis_url: str, tmp_path: Path, settings: object) -> Iterator[object]:
    """Start real Celery worker processes on PostgreSQL + Redis, on a queue private to this test."""
    from leaderboard.config.celery import app

    queue = f"test-{uuid.uuid4().hex[:12]}"
    previous_queue = app.conf.task_default_queue
    app.conf.task_default_queue = queue
    env = {
        **os.environ,
        "DATABASE_URL": database_url_of_current_connection(),
        "REDIS_URL": redis_url,
        "LEADERBOARD_QUEUE": queue,
        "PYTHONUNBUFFERED": "1",
    }
    # The workers stand for another host: a data directory of their own, empty, never the test process's
    # (LEADERBOARD_DATA_DIR or var/), so anything a worker reads must come from PostgreSQL or Redis.
    env["LEADERBOARD_DATA_DIR"] = str(worker_data_dir(tmp_path))
    workers: list[WorkerProcess] = []

    def start(concurrency: int = 1) -> WorkerProcess:
        w = WorkerProcess(
            queue=queue,
            env=env,
            log_path=tmp_path / f"worker{len(workers)}.log",
            name=f"w{len(workers)}-{queue}",
        )
        workers.append(w)
        w.start(concurrency=concurrency)
        return w

    try:
        start.data_dir = Path(env["LEADERBOARD_DATA_DIR"])  # type: ignore[attr-defined]
        yield start
    finally:
        for w in workers:
            w.stop()
        app.conf.task_default_queue = previous_queue
        import redis

        redis.Redis.from_url(redis_url).delete(queue)


@pytest.fixture
def chromium_path() -> str:
    available = Path(CHROMIUM).exists() or shutil.which("chromium") is not None
    need("Chromium", available, f"{CHROMIUM} not found (apt-get install chromium chromium-driver)")
    return CHROMIUM if Path(CHROMIUM).exists() else str(shutil.which("chromium"))


def wait_for(predicate, *, timeout: float = 60.0, interval: float = 0.2, what: str = "condition"):  # type: ignore[no-untyped-def]
    """Poll ``predicate`` until it returns a truthy value (returned) or fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


@pytest.fixture(autouse=True)
def _tasks_in_process_unless_a_worker_runs(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tests run Celery tasks in-process, except those that start real workers (``worker_factory``).

    Otherwise a test on the real services would send tasks to Redis with nobody consuming them.
    """
    from leaderboard.config.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = "worker_factory" not in request.fixturenames
    try:
        yield
    finally:
        app.conf.task_always_eager = previous


@pytest.fixture(autouse=True)
def _fresh_sign_up_counters() -> Iterator[None]:
    """Sign-up is throttled per address (5 an hour) and over the service (60 an hour), and anonymous reads
    per address, counted in the cache (Redis in CI, kept between runs); every test client is 127.0.0.1, so
    each test starts with fresh counters. Only those keys are deleted: the rest of the cache is the tests'
    own business."""
    from django.core.cache import cache

    with contextlib.suppress(Exception):  # a test that takes the cache's Redis down sets it up itself
        cache.delete_many(
            ["throttle_signup_127.0.0.1", "throttle_signup_global_all", "throttle_anon_read_127.0.0.1"]
        )
    yield


@pytest.fixture(autouse=True)
def _no_cached_answers_across_tests() -> Iterator[None]:
    """Anonymous board answers are cached per process under a challenge's reads version; tests reuse slugs
    with new databases (and inside a test transaction the version changes only on commit), so each test
    starts with none (leaderboard/rankings/read_cache.py)."""
    from django.core.cache import caches

    caches["answers"].clear()
    yield
    caches["answers"].clear()
