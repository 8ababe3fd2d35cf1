"""A real task through the broker to a real `celery worker` process, and the same flow embedded."""

import pytest

from leaderboard.core.models import WorkerHeartbeat
from leaderboard.core.tasks import worker_heartbeat
from tests.conftest import wait_for


@pytest.mark.django_db
def test_embedded_default_runs_the_task_in_process() -> None:
    worker_heartbeat.delay("embedded-host")
    beat = WorkerHeartbeat.objects.get(hostname="embedded-host")
    assert beat.beats == 1
    worker_heartbeat.delay("embedded-host")
    beat.refresh_from_db()
    assert beat.beats == 2


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_real_worker_process_consumes_a_task_from_redis_and_writes_postgres(worker_factory) -> None:  # type: ignore[no-untyped-def]
    worker = worker_factory()
    result = worker_heartbeat.delay()  # no hostname: the worker records its own node name
    assert result.id
    beat = wait_for(
        lambda: WorkerHeartbeat.objects.filter(hostname__startswith=worker.name).first(),
        timeout=60,
        what="the worker's heartbeat row",
    )
    assert beat.beats == 1
    assert worker.proc.pid != __import__("os").getpid()
    assert "leaderboard.core.tasks.worker_heartbeat" in worker.log_text()
