"""`manage.py check --deploy`: is this configuration safe when web and workers run on several hosts?

Everything a Celery worker reads must come from storage that every host reaches: the database (hidden
labels, uploads by default, scores), the broker, and S3 when configured. Only the resample-weight cache
(RESAMPLE_CACHE_DIR) may stay on a host's own disk: it is rebuilt bit-identically from the seed.

With ``LEADERBOARD_MULTI_HOST=1`` (workers on other hosts) a setting that keeps something a worker needs on
one host is an error; without it, the same settings with separate workers (``REDIS_URL``) are a warning,
since workers may yet be moved to another host.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from django.conf import settings
from django.core import checks

LOCAL_HOSTS = {"", "localhost", "127.0.0.1", "::1", "[::1]"}


def _message(multi_host: bool, text: str, hint: str, ident: str) -> checks.CheckMessage:
    level = checks.Error if multi_host else checks.Warning
    return level(text, hint=hint, id=f"leaderboard.{'E' if multi_host else 'W'}{ident}")


def multihost_messages(config: Any = settings) -> list[checks.CheckMessage]:
    """The problems of ``config`` (Django settings, or any object with the same attributes) for several hosts."""
    multi_host = bool(getattr(config, "MULTI_HOST", False))
    separate_workers = bool(getattr(config, "REDIS_URL", "")) and not getattr(
        config, "CELERY_TASK_ALWAYS_EAGER", False
    )
    if not (multi_host or separate_workers):
        return []  # the embedded default: one process does everything, on one host
    out: list[checks.CheckMessage] = []
    if multi_host and not separate_workers:
        out.append(
            checks.Error(
                "LEADERBOARD_MULTI_HOST=1 but no REDIS_URL: tasks run inside the web process.",
                hint="Set REDIS_URL to the one Redis every host reaches (docs/deploy.md, 'Several hosts').",
                id="leaderboard.E101",
            )
        )
    backend = config.STORAGES["default"]["BACKEND"]
    if backend == "django.core.files.storage.FileSystemStorage":
        out.append(
            _message(
                multi_host,
                "Uploaded prediction files are kept on this host's disk (LEADERBOARD_STORAGE=filesystem): "
                "a worker on another host cannot read them.",
                "Use LEADERBOARD_STORAGE=database (the default) or s3.",
                "102",
            )
        )
    database = config.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        out.append(
            _message(
                multi_host,
                f"The database is a SQLite file on this host ({database['NAME']}): "
                "workers on other hosts cannot reach it.",
                "Set DATABASE_URL to the one PostgreSQL every host reaches.",
                "103",
            )
        )
    if multi_host:
        places = []
        if separate_workers:
            places.append(("REDIS_URL", urlparse(str(config.REDIS_URL)).hostname or ""))
        if database["ENGINE"] != "django.db.backends.sqlite3":
            places.append(("DATABASE_URL", str(database.get("HOST") or "")))
        if backend == "storages.backends.s3.S3Storage":
            endpoint = config.STORAGES["default"].get("OPTIONS", {}).get("endpoint_url")
            if endpoint:
                places.append(("AWS_S3_ENDPOINT_URL", urlparse(str(endpoint)).hostname or ""))
        for variable, host in places:
            if host in LOCAL_HOSTS:
                out.append(
                    checks.Error(
                        f"{variable} names this host ({host or 'a local socket'}): other hosts reach "
                        "their own, not this one.",
                        hint=f"Set {variable} to an address every host reaches.",
                        id="leaderboard.E104",
                    )
                )
    return out


@checks.register(checks.Tags.compatibility, deploy=True)
def check_multihost(app_configs: object = None, **kwargs: object) -> list[checks.CheckMessage]:
    return multihost_messages(settings)
