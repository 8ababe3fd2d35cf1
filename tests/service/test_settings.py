"""Settings come from the environment; production-only values fail at start with a clear message."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "LEADERBOARD_ENV"))}
    clean.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120
    )


def test_production_without_secret_key_refuses_to_start() -> None:
    result = run_manage("check", LEADERBOARD_ENV="production", DJANGO_ALLOWED_HOSTS="example.org")
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set when LEADERBOARD_ENV=production" in result.stderr


def test_production_without_allowed_hosts_refuses_to_start() -> None:
    result = run_manage("check", LEADERBOARD_ENV="production", DJANGO_SECRET_KEY="x" * 60)
    assert result.returncode != 0
    assert "DJANGO_ALLOWED_HOSTS must be set when LEADERBOARD_ENV=production" in result.stderr


def test_unknown_environment_name_is_refused() -> None:
    result = run_manage("check", LEADERBOARD_ENV="staging")
    assert result.returncode != 0
    assert "LEADERBOARD_ENV must be 'development' or 'production', not 'staging'" in result.stderr


def test_production_settings_pass_the_deploy_checklist() -> None:
    result = run_manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        LEADERBOARD_ENV="production",
        DJANGO_SECRET_KEY="k" * 20 + "-production-secret-with-enough-entropy-0123456789",
        DJANGO_ALLOWED_HOSTS="leaderboard.example.org",
    )
    assert result.returncode == 0, result.stderr + result.stdout
    assert "no issues" in result.stdout


def test_embedded_default_uses_sqlite_and_in_process_tasks() -> None:
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "print(settings.DATABASES['default']['ENGINE'], settings.CELERY_TASK_ALWAYS_EAGER)"
    )
    clean = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    clean["DJANGO_SETTINGS_MODULE"] = "leaderboard.config.settings"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True)
    assert out.stdout.split() == ["django.db.backends.sqlite3", "True"], out.stderr


def _settings_of(env: dict[str, str]) -> list[str]:
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.REDIS_URL, s.CELERY_BROKER_URL, s.CACHES['default'].get('LOCATION', '-'), s.DATA_DIR, sep='|')"
    )
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "LEADERBOARD_", "REDIS_"))
    }
    clean.update(DJANGO_SETTINGS_MODULE="leaderboard.config.settings", **env)
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().split("|")


def test_each_xdist_test_process_gets_its_own_redis_database_and_data_directory(tmp_path: Path) -> None:
    """Under pytest-xdist, process gwN moves to Redis database (the given + 1 + N) and a data directory of
    its own; a process it starts (a Celery worker, which inherits the moved environment) does not move
    again; outside xdist nothing moves."""
    base = {"REDIS_URL": "redis://127.0.0.1:6379/1", "LEADERBOARD_DATA_DIR": str(tmp_path)}
    moved = "redis://127.0.0.1:6379/3"
    assert _settings_of({**base, "PYTEST_XDIST_WORKER": "gw1"}) == [
        moved,
        moved,
        moved,
        str(tmp_path / "xdist-gw1"),
    ]
    gw0 = _settings_of({**base, "PYTEST_XDIST_WORKER": "gw0"})
    assert gw0[0] == "redis://127.0.0.1:6379/2" and gw0[3] == str(tmp_path / "xdist-gw0")
    child = {"PYTEST_XDIST_WORKER": "gw1", "LEADERBOARD_TEST_PROCESS": "gw1"}
    inherited = {"REDIS_URL": moved, "LEADERBOARD_DATA_DIR": str(tmp_path / "xdist-gw1"), **child}
    assert _settings_of(inherited) == [moved, moved, moved, str(tmp_path / "xdist-gw1")]
    assert _settings_of(base) == [base["REDIS_URL"]] * 3 + [str(tmp_path)]
    embedded = _settings_of({"PYTEST_XDIST_WORKER": "gw1", "LEADERBOARD_DATA_DIR": str(tmp_path)})
    assert embedded == ["", "memory://localhost/", "-", str(tmp_path / "xdist-gw1")]
