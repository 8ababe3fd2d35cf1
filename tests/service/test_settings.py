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
