"""/healthz reports database and broker reachability."""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_healthz_embedded_default_is_ok(client: Client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["checks"]["database"]["ok"] is True


def test_healthz_reports_an_unreachable_broker_with_503(client: Client, settings) -> None:  # type: ignore[no-untyped-def]
    from leaderboard.config.celery import app

    settings.CELERY_TASK_ALWAYS_EAGER = False
    previous = app.conf.broker_url
    app.conf.broker_url = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    try:
        response = client.get("/healthz")
    finally:
        app.conf.broker_url = previous
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["broker"]["ok"] is False
    assert body["checks"]["database"]["ok"] is True


def test_healthz_on_real_redis_is_ok(client: Client, settings, redis_url: str) -> None:  # type: ignore[no-untyped-def]
    settings.CELERY_TASK_ALWAYS_EAGER = False
    response = client.get("/healthz")
    assert response.status_code == 200, response.content
    assert response.json()["checks"]["broker"] == {"ok": True, "detail": "redis"}
