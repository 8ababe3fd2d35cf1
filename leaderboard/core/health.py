"""Reachability checks of the database and the broker, for /healthz and `manage.py healthcheck`."""

from __future__ import annotations

from dataclasses import dataclass

from celery import current_app  # leaderboard.config.celery's app, without importing config
from django.conf import settings
from django.db import connection


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def check_database() -> Check:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any driver error means "not reachable"; the detail says which
        return Check("database", False, f"{type(exc).__name__}: {exc}".strip()[:300])
    return Check("database", True, connection.vendor)


def check_broker() -> Check:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return Check("broker", True, "embedded (tasks run in-process)")
    try:
        with current_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:  # kombu raises several types; all mean "not reachable"
        return Check("broker", False, f"{type(exc).__name__}: {exc}".strip()[:300])
    return Check("broker", True, "redis")


def run_checks() -> list[Check]:
    return [check_database(), check_broker()]
