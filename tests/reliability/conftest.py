"""Fixtures of the fault tests: private Redis and PostgreSQL servers, and workers with fault knobs.

The machine's shared PostgreSQL and Redis are never stopped: a test that needs a server to go down starts
its own (``redis-server`` on a free port, a throw-away PostgreSQL cluster from ``initdb``) and stops that.
Every process started here is stopped in a ``finally``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT, WorkerProcess, database_url_of_current_connection, need, worker_data_dir

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop_process(proc: subprocess.Popen[bytes] | None, *, timeout: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after ``timeout``: the process (group) is gone when this returns."""
    if proc is None or proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


class RedisServer:
    """A private ``redis-server`` on a free port, which a test may stop and start again."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 15.0) -> None:
        import redis

        self.workdir.mkdir(parents=True, exist_ok=True)
        log = (self.workdir / "redis.log").open("ab")
        self.proc = subprocess.Popen(
            [
                REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--daemonize", "no", "--dir", str(self.workdir),
            ],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        log.close()
        deadline = time.monotonic() + timeout
        while True:
            try:
                redis.Redis.from_url(self.url, socket_connect_timeout=0.5).ping()
                return
            except redis.RedisError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server on port {self.port} did not start") from None
                time.sleep(0.1)

    def stop(self) -> None:
        stop_process(self.proc)
        self.proc = None

    def freeze(self) -> None:
        """SIGSTOP: connections are still accepted (by the kernel) but nothing answers, as in a partition."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)


@pytest.fixture
def private_redis(redis_url: str) -> Iterator[RedisServer]:
    """A Redis of this test only (``redis_url`` first: the suite's services must be configured)."""
    need("redis-server", Path(REDIS_SERVER).exists(), f"{REDIS_SERVER} not found")
    workdir = Path(tempfile.mkdtemp(prefix="lb-redis-"))
    server = RedisServer(workdir)
    try:
        server.start()
        yield server
    finally:
        server.thaw()  # a stopped (SIGSTOP) process would ignore SIGTERM
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


@contextlib.contextmanager
def celery_broker(url: str) -> Iterator[None]:
    """Point this test process's Celery app at another broker (its pools are rebuilt), then back."""
    from leaderboard.config.celery import app

    def reset_pools() -> None:
        # kombu keeps connection and producer pools in global registries keyed by URL: closing one
        # pool would leave a closed pool registered for that URL, so empty the registries instead.
        from kombu import pools

        pools.reset()
        app._pool = None
        app.amqp._producer_pool = None

    previous = app.conf.broker_url
    app.conf.broker_url = url
    reset_pools()
    try:
        yield
    finally:
        app.conf.broker_url = previous
        reset_pools()


class FaultWorker(WorkerProcess):
    """A ``celery worker`` as in tests/conftest.py, which a test can find the pool children of and kill."""

    def start(self, concurrency: int = 1) -> None:
        self.log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [
                sys.executable, "-m", "celery", "-A", "leaderboard", "worker",
                "--loglevel=INFO", f"--concurrency={concurrency}", "--pool=prefork",
                "-Q", self.queue, "-n", f"{self.name}@%h",
                "--without-gossip", "--without-mingle", "--without-heartbeat",
            ],
            cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        self.wait_ready()

    def pool_children(self) -> list[int]:
        """The pids of the prefork pool's children (from /proc, no psutil)."""
        assert self.proc is not None
        path = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        try:
            return [int(p) for p in path.read_text().split()]
        except FileNotFoundError:
            return []

    def kill(self) -> None:
        """SIGKILL the whole worker (main process and pool children), as a machine losing power would."""
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)


class BeatProcess(WorkerProcess):
    """A ``celery beat`` process (the periodic sweepers), with its schedule file in the test's directory."""

    def start(self, concurrency: int = 1) -> None:
        self.log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [
                sys.executable, "-m", "celery", "-A", "leaderboard", "beat", "--loglevel=INFO",
                "--schedule", str(self.log_path.with_suffix(".schedule")), "--max-interval", "1",
            ],
            cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while "beat: Starting" not in self.log_text():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"celery beat did not start; log:\n{self.log_text()}")
            time.sleep(0.2)


WorkerStarter = Callable[..., FaultWorker]


@pytest.fixture
def fault_workers(postgres: None, redis_url: str, tmp_path: Path) -> Iterator[WorkerStarter]:
    """Start real workers on a queue private to this test: ``start(broker=..., env=...)``.

    Like ``worker_factory`` (tasks leave this process for real workers), with a choice of broker (a
    private Redis) and extra environment. Every worker is stopped at the end.
    """
    import redis

    from leaderboard.config.celery import app

    queue = f"faults-{uuid.uuid4().hex[:12]}"
    previous_queue, previous_eager = app.conf.task_default_queue, app.conf.task_always_eager
    app.conf.task_default_queue = queue
    app.conf.task_always_eager = False
    workers: list[FaultWorker | BeatProcess] = []
    brokers = {redis_url}

    def environment(broker: str | None, env: dict[str, str] | None) -> dict[str, str]:
        brokers.add(broker or redis_url)
        return {
            **os.environ,
            "DATABASE_URL": database_url_of_current_connection(),
            "REDIS_URL": broker or redis_url,
            "LEADERBOARD_QUEUE": queue,
            "PYTHONUNBUFFERED": "1",
            # Another host's disk: nothing the test process wrote under its data directory is there.
            "LEADERBOARD_DATA_DIR": str(worker_data_dir(tmp_path)),
            **(env or {}),
        }

    def start(
        *,
        broker: str | None = None,
        env: dict[str, str] | None = None,
        concurrency: int = 1,
    ) -> FaultWorker:
        w = FaultWorker(
            queue=queue,
            env=environment(broker, env),
            log_path=tmp_path / f"worker{len(workers)}.log",
            name=f"w{len(workers)}-{queue}",
        )
        workers.append(w)
        w.start(concurrency=concurrency)
        return w

    def beat(*, broker: str | None = None, env: dict[str, str] | None = None) -> BeatProcess:
        """Start ``celery beat`` sending the sweepers to this test's queue (``start.beat(...)``)."""
        b = BeatProcess(
            queue=queue,
            env=environment(broker, env),
            log_path=tmp_path / f"beat{len(workers)}.log",
            name="beat",
        )
        workers.append(b)
        b.start()
        return b

    start.beat = beat  # type: ignore[attr-defined]
    start.data_dir = worker_data_dir(tmp_path)  # type: ignore[attr-defined]

    try:
        yield start
    finally:
        for w in workers:
            w.stop()
        app.conf.task_default_queue = previous_queue
        app.conf.task_always_eager = previous_eager
        for url in brokers:
            with contextlib.suppress(redis.RedisError):
                _forget_queue(redis.Redis.from_url(url, socket_connect_timeout=1), queue)


def _forget_queue(client: object, queue: str) -> None:
    """Delete the queue and the unacknowledged messages a killed worker left for it in kombu's
    ``unacked`` hash (they would be restored into a queue nobody consumes after the visibility timeout)."""
    import json

    client.delete(queue)  # type: ignore[attr-defined]
    for tag, raw in client.hgetall("unacked").items():  # type: ignore[attr-defined]
        with contextlib.suppress(ValueError, TypeError, IndexError):
            if json.loads(raw)[2] == queue:
                client.hdel("unacked", tag)  # type: ignore[attr-defined]
                client.zrem("unacked_index", tag)  # type: ignore[attr-defined]


def _postgres_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
    return str(candidates[-1]) if candidates else None


class PostgresCluster:
    """A throw-away PostgreSQL cluster (``initdb`` in a temporary directory) on a free port, trust auth.

    PostgreSQL refuses to run as root: as root the server runs as the ``postgres`` system user.
    """

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.data = workdir / "data"
        self.port = free_port()
        self.initdb = _postgres_bin("initdb")
        self.pg_ctl = _postgres_bin("pg_ctl")

    def url(self, dbname: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{dbname}"

    def _run(self, *argv: str, timeout: float = 60) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run([*prefix, *argv], check=True, timeout=timeout, capture_output=True)

    def create(self) -> None:
        assert self.initdb is not None
        if os.geteuid() == 0:
            shutil.chown(self.workdir, user="postgres", group="postgres")
        self._run(
            self.initdb, "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"
        )

    def _ctl(self, action: str, *extra: str) -> None:
        assert self.pg_ctl is not None
        options = f"-p {self.port} -k {self.workdir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(
            self.pg_ctl, action, "-D", str(self.data), "-w", "-t", "30", "-m", "fast",
            "-l", str(self.workdir / "server.log"), "-o", options, *extra,
        )  # fmt: skip

    def start(self) -> None:
        self._ctl("start")

    def restart(self) -> None:
        self._ctl("restart")

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._ctl("stop")

    def connect(self, dbname: str = "postgres") -> object:
        import psycopg

        return psycopg.connect(self.url(dbname), autocommit=True, connect_timeout=5)


@pytest.fixture
def private_postgres(postgres: None) -> Iterator[PostgresCluster]:
    """A PostgreSQL server of this test only, which the test may restart; removed at the end."""
    workdir = Path(tempfile.mkdtemp(prefix="lb-pg-"))
    cluster = PostgresCluster(workdir)
    need("PostgreSQL binaries", cluster.initdb is not None and cluster.pg_ctl is not None, "initdb not found")
    try:
        cluster.create()
        cluster.start()
        yield cluster
    finally:
        try:
            cluster.stop()
        except Exception:  # never leave a server behind: kill the postmaster by its pid file
            with contextlib.suppress(Exception):
                pid = int((cluster.data / "postmaster.pid").read_text().split()[0])
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(workdir, ignore_errors=True)
