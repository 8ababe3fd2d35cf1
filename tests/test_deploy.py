"""docker-compose.yml is a valid deployment: web, worker, beat, postgres and redis with health checks."""

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


def compose() -> dict:  # type: ignore[type-arg]
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_declares_every_service_with_a_health_check_and_volumes() -> None:
    doc = compose()
    services = doc["services"]
    assert set(services) == {"web", "worker", "beat", "postgres", "redis"}
    for name, service in services.items():
        assert "healthcheck" in service, f"{name} has no health check"
        assert service["healthcheck"]["test"], name
    assert "gunicorn" in services["web"]["command"]
    assert services["worker"]["command"][:4] == ["celery", "-A", "leaderboard", "worker"]
    assert services["beat"]["command"][:4] == ["celery", "-A", "leaderboard", "beat"]
    assert {"appdata", "workerdata", "pgdata", "redisdata"} <= set(doc["volumes"])
    # The worker reads nothing from the web's disk (docs/deploy.md, "Several hosts"): a volume of its own.
    assert services["worker"]["volumes"] == ["workerdata:/data"]
    assert "appdata:/data" in services["web"]["volumes"]
    for app in ("web", "worker", "beat"):
        depends = services[app]["depends_on"]
        assert depends["postgres"]["condition"] == "service_healthy"
        assert depends["redis"]["condition"] == "service_healthy"
    # Every file the compose file and the image refer to exists.
    assert (ROOT / "deploy" / "Dockerfile").exists()
    assert (ROOT / "deploy" / "gunicorn.conf.py").exists()
    assert (ROOT / "deploy" / "env.example").exists()


def test_env_example_sets_every_production_only_variable() -> None:
    text = (ROOT / "deploy" / "env.example").read_text()
    for name in (
        "LEADERBOARD_ENV=production",
        "DJANGO_SECRET_KEY=",
        "DJANGO_ALLOWED_HOSTS=",
        "DATABASE_URL=",
        "REDIS_URL=",
    ):
        assert name in text


def _compose_available() -> bool:
    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _compose_available(), reason="the docker compose plugin is not installed here")
def test_docker_compose_config_accepts_the_file(tmp_path: Path) -> None:
    shutil.copy(ROOT / "docker-compose.yml", tmp_path / "docker-compose.yml")
    (tmp_path / "deploy").mkdir()
    shutil.copy(ROOT / "deploy" / "env.example", tmp_path / "deploy" / ".env")
    result = subprocess.run(
        ["docker", "compose", "config", "--quiet"], cwd=tmp_path, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_the_example_environment_passes_the_multihost_check() -> None:
    """deploy/env.example describes workers that share no disk with the web (LEADERBOARD_MULTI_HOST=1) and
    `manage.py check --deploy` finds none of leaderboard's errors in it."""
    from tests.service.test_settings import run_manage

    env = {}
    for line in (ROOT / "deploy" / "env.example").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            env[key.strip()] = value.strip()
    assert env["LEADERBOARD_MULTI_HOST"] == "1"
    result = run_manage("check", "--deploy", "--fail-level", "ERROR", **env)
    assert "leaderboard.E" not in result.stderr + result.stdout, result.stderr
    assert result.returncode == 0, result.stderr
    # The same environment with uploads on the web's disk is refused.
    refused = run_manage(
        "check", "--deploy", "--fail-level", "ERROR", **{**env, "LEADERBOARD_STORAGE": "filesystem"}
    )
    assert refused.returncode != 0 and "leaderboard.E102" in refused.stderr
