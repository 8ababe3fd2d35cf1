"""Uploads live where every host reads them: database rows by default (leaderboard/core/storage.py), or an
S3 bucket; files left on disk by older versions are copied in by a data migration; and `check --deploy`
refuses settings that keep something a worker reads on one host (leaderboard/core/checks.py)."""

from __future__ import annotations

import importlib
import io
import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import IntegrityError

from leaderboard.core import storage as dbstorage
from leaderboard.core.checks import multihost_messages
from leaderboard.core.models import StoredFile, StoredFileChunk
from leaderboard.scoring.services import submission_file_bytes
from leaderboard.submissions.models import Status, Submission, SubmissionFile
from leaderboard.submissions.services import submission_create
from tests.conftest import need
from tests.service.factories import challenge_with_task, predictions, upload, user
from tests.service.test_settings import run_manage

copy_migration = importlib.import_module("leaderboard.submissions.migrations.0005_storage_blobs")

FILESYSTEM = "django.core.files.storage.FileSystemStorage"


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(dbstorage, "CHUNK_BYTES", 10)
    return 10


@pytest.mark.django_db
def test_the_default_storage_keeps_files_as_chunk_rows_and_reads_them_back(small_chunks: int) -> None:
    data = bytes(range(256)) * 3 + b"tail"  # 772 bytes: 77 full chunks and one of 2
    name = default_storage.save("submissions/1/2/main-0.csv", ContentFile(data))
    assert name == "submissions/1/2/main-0.csv"
    stored = StoredFile.objects.get(name=name)
    assert (stored.size, stored.chunk_size) == (len(data), small_chunks)
    assert StoredFileChunk.objects.filter(file=stored).count() == 78
    assert default_storage.exists(name) and default_storage.size(name) == len(data)
    with default_storage.open(name) as handle:
        assert handle.read() == data
    with default_storage.open(name) as handle:  # partial reads and seeks across chunk boundaries
        handle.seek(7)
        assert handle.read(25) == data[7:32]
        handle.seek(-5, io.SEEK_END)
        assert handle.read() == data[-5:]
        handle.seek(0)
        assert b"".join(handle.chunks(33)) == data
    # A second file under the same name gets another name: nothing is overwritten.
    other = default_storage.save(name, ContentFile(b"x"))
    assert other != name and default_storage.open(other).read() == b"x"
    assert default_storage.listdir("submissions/1") == (["2"], [])
    assert sorted(default_storage.listdir("submissions/1/2")[1]) == sorted(
        [name, other][i].rsplit("/", 1)[1] for i in (0, 1)
    )
    default_storage.delete(name)
    assert not default_storage.exists(name)
    assert not StoredFileChunk.objects.filter(file_id=stored.pk).exists()
    with pytest.raises(FileNotFoundError):
        default_storage.open(name)


@pytest.mark.django_db
def test_an_empty_file_and_the_refusals_of_the_database_storage() -> None:
    name = default_storage.save("empty.csv", ContentFile(b""))
    assert default_storage.open(name).read() == b"" and default_storage.size(name) == 0
    with pytest.raises(ValueError, match="reading only"):
        default_storage.open(name, "wb")
    with pytest.raises(ValueError, match="never served by URL"):
        default_storage.url(name)
    with pytest.raises(FileNotFoundError):
        default_storage.size("nope.csv")


@pytest.mark.django_db
def test_a_file_whose_write_breaks_midway_leaves_no_row(small_chunks: int) -> None:
    def pieces():  # type: ignore[no-untyped-def]
        yield b"a" * 25
        raise OSError("the client went away")

    with pytest.raises(OSError, match="went away"):
        dbstorage.write_file("broken.csv", pieces())
    assert not StoredFile.objects.exists() and not StoredFileChunk.objects.exists()


@pytest.mark.django_db
def test_an_upload_is_stored_in_the_transaction_of_its_submission(
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    challenge, _task, ids, truth = challenge_with_task(user("org"))
    participant = user("p1")
    data = predictions(ids, truth, 0.8, 1)
    with django_capture_on_commit_callbacks(execute=True):
        s = submission_create(
            challenge=challenge, user=participant, name="ok", files={"main": [upload("p.csv", data)]}
        )
    assert Submission.objects.get(pk=s.pk).status == Status.SCORED  # scored in-process, from the rows
    f = s.files.get()
    assert StoredFile.objects.get(name=f.file.name).size == len(data) == f.size
    assert submission_file_bytes(f) == data

    def refuse(self: SubmissionFile, *args: Any, **kwargs: Any) -> None:
        raise IntegrityError("the row could not be written")

    monkeypatch.setattr(SubmissionFile, "save", refuse)
    with pytest.raises(IntegrityError):
        submission_create(
            challenge=challenge, user=participant, name="lost", files={"main": [upload("q.csv", data)]}
        )
    assert not Submission.objects.filter(name="lost").exists()
    assert StoredFile.objects.count() == 1  # the second upload's bytes rolled back with its submission


@pytest.mark.django_db
def test_the_migration_copies_files_left_on_disk_into_the_database(
    settings: Any, tmp_path: Path, caplog: Any
) -> None:
    database_storage = settings.STORAGES["default"]
    settings.MEDIA_ROOT = tmp_path / "uploads"
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": FILESYSTEM,
            "OPTIONS": {"location": str(settings.MEDIA_ROOT), "base_url": None},
        },
    }
    challenge, _task, ids, truth = challenge_with_task(user("org"))
    participant = user("p1")
    old = predictions(ids, truth, 0.7, 2)
    kept = submission_create(
        challenge=challenge, user=participant, name="old", files={"main": [upload("o.csv", old)]}
    )
    lost = submission_create(
        challenge=challenge, user=participant, name="lost", files={"main": [upload("l.csv", old)]}
    )
    kept_name, lost_name = kept.files.get().file.name, lost.files.get().file.name
    assert (settings.MEDIA_ROOT / kept_name).read_bytes() == old
    (settings.MEDIA_ROOT / lost_name).unlink()
    assert not StoredFile.objects.exists()

    settings.STORAGES = {**settings.STORAGES, "default": database_storage}
    with caplog.at_level(logging.WARNING, logger="leaderboard.migrations"):
        copy_migration.copy_files_from_disk(apps, None)
    assert StoredFile.objects.get(name=kept_name).size == len(old)
    assert submission_file_bytes(SubmissionFile.objects.get(submission=kept)) == old
    assert not StoredFile.objects.filter(name=lost_name).exists()
    assert lost_name in caplog.text and "1 missing" in caplog.text
    copy_migration.copy_files_from_disk(apps, None)  # again: nothing copied twice
    assert StoredFile.objects.count() == 1


def _moto() -> Any:
    try:
        import boto3
        import moto
        import storages  # noqa: F401
    except ImportError as exc:
        need("S3 test libraries", False, f"{exc.name} is not installed (pip install -e '.[dev]')")
    return boto3, moto


@pytest.mark.django_db
def test_s3_storage_from_the_environment_stores_and_scores_an_upload(
    settings: Any, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    boto3, moto = _moto()
    from leaderboard.config.settings import _uploads_storage

    for key, value in {
        "AWS_STORAGE_BUCKET_NAME": "lb-uploads",
        "AWS_S3_REGION_NAME": "eu-west-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_LOCATION": "predictions",
    }.items():
        monkeypatch.setenv(key, value)
    config = _uploads_storage("s3")
    assert config["BACKEND"] == "storages.backends.s3.S3Storage"
    assert config["OPTIONS"]["file_overwrite"] is False and config["OPTIONS"]["default_acl"] is None
    with moto.mock_aws():
        s3 = boto3.client("s3", region_name="eu-west-1")
        s3.create_bucket(Bucket="lb-uploads", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
        settings.STORAGES = {**settings.STORAGES, "default": config}
        challenge, _task, ids, truth = challenge_with_task(user("org"))
        data = predictions(ids, truth, 0.8, 4)
        with django_capture_on_commit_callbacks(execute=True):
            s = submission_create(
                challenge=challenge, user=user("p1"), name="s3", files={"main": [upload("p.csv", data)]}
            )
        f = s.files.get()
        body = s3.get_object(Bucket="lb-uploads", Key=f"predictions/{f.file.name}")["Body"].read()
        assert body == data
        assert submission_file_bytes(f) == data
        assert Submission.objects.get(pk=s.pk).status == Status.SCORED
        assert not StoredFile.objects.exists()


def test_storage_settings_refuse_what_they_cannot_serve(monkeypatch: pytest.MonkeyPatch) -> None:
    from leaderboard.config.settings import _uploads_storage

    with pytest.raises(ImproperlyConfigured, match="'database', 's3' or 'filesystem'"):
        _uploads_storage("nfs")
    monkeypatch.delenv("AWS_STORAGE_BUCKET_NAME", raising=False)
    _moto()
    with pytest.raises(ImproperlyConfigured, match="AWS_STORAGE_BUCKET_NAME"):
        _uploads_storage("s3")
    monkeypatch.setenv("AWS_STORAGE_BUCKET_NAME", "b")
    monkeypatch.setenv("AWS_S3_ENDPOINT_URL", "https://minio.internal:9000")
    assert _uploads_storage("s3")["OPTIONS"]["endpoint_url"] == "https://minio.internal:9000"
    assert _uploads_storage("database") == {"BACKEND": "leaderboard.core.storage.DatabaseStorage"}


# --- check --deploy: several hosts ---------------------------------------------------------------------
def config(**overrides: Any) -> SimpleNamespace:
    """A multi-host-safe configuration, changed by ``overrides``."""
    values: dict[str, Any] = {
        "MULTI_HOST": True,
        "REDIS_URL": "redis://redis.internal:6379/0",
        "CELERY_TASK_ALWAYS_EAGER": False,
        "STORAGES": {"default": {"BACKEND": "leaderboard.core.storage.DatabaseStorage"}},
        "DATABASES": {
            "default": {"ENGINE": "django.db.backends.postgresql", "NAME": "lb", "HOST": "db.internal"}
        },
    }
    values.update(overrides)
    return SimpleNamespace(**values)


SQLITE = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": "/srv/var/db.sqlite3"}}


def ids(messages: list[Any]) -> list[str]:
    return sorted(m.id for m in messages)


def test_the_multihost_check_passes_a_safe_layout_and_names_each_unsafe_setting() -> None:
    assert multihost_messages(config()) == []
    s3 = {
        "default": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {"endpoint_url": "https://s3.internal"},
        }
    }
    assert multihost_messages(config(STORAGES=s3)) == []
    fs = {"default": {"BACKEND": FILESYSTEM, "OPTIONS": {"location": "/data/uploads"}}}
    assert ids(multihost_messages(config(STORAGES=fs))) == ["leaderboard.E102"]
    assert ids(multihost_messages(config(DATABASES=SQLITE))) == ["leaderboard.E103"]
    assert ids(multihost_messages(config(REDIS_URL="", CELERY_TASK_ALWAYS_EAGER=True))) == [
        "leaderboard.E101"
    ]
    local_db = {"default": {"ENGINE": "django.db.backends.postgresql", "NAME": "lb", "HOST": "127.0.0.1"}}
    local = multihost_messages(config(DATABASES=local_db, REDIS_URL="redis://localhost:6379/0"))
    assert ids(local) == ["leaderboard.E104", "leaderboard.E104"]
    assert any("DATABASE_URL" in m.msg for m in local) and any("REDIS_URL" in m.msg for m in local)
    local_s3 = {
        "default": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {"endpoint_url": "http://localhost:9000"},
        }
    }
    assert ids(multihost_messages(config(STORAGES=local_s3))) == ["leaderboard.E104"]
    # Separate workers without LEADERBOARD_MULTI_HOST: warnings, as they may yet move to another host.
    assert ids(multihost_messages(config(MULTI_HOST=False, STORAGES=fs, DATABASES=SQLITE))) == [
        "leaderboard.W102",
        "leaderboard.W103",
    ]
    # The embedded default (one process, tasks in-process) is one host by construction.
    assert (
        multihost_messages(
            config(
                MULTI_HOST=False, REDIS_URL="", CELERY_TASK_ALWAYS_EAGER=True, STORAGES=fs, DATABASES=SQLITE
            )
        )
        == []
    )


def test_check_deploy_fails_a_multi_host_configuration_with_uploads_on_disk() -> None:
    env = {
        "LEADERBOARD_MULTI_HOST": "1",
        "LEADERBOARD_STORAGE": "filesystem",
        "DATABASE_URL": "postgres://lb@db.internal:5432/lb",
        "REDIS_URL": "redis://redis.internal:6379/0",
    }
    refused = run_manage("check", "--deploy", "--fail-level", "ERROR", **env)
    assert refused.returncode != 0
    assert "leaderboard.E102" in refused.stderr and "cannot read them" in refused.stderr
    passed = run_manage(
        "check", "--deploy", "--fail-level", "ERROR", **{**env, "LEADERBOARD_STORAGE": "database"}
    )
    assert passed.returncode == 0, passed.stderr
    assert "leaderboard." not in passed.stderr + passed.stdout


@pytest.mark.django_db
def test_deleting_a_challenge_deletes_its_uploads_bytes_once_committed(
    django_capture_on_commit_callbacks: Any,
) -> None:
    challenge, _task, ids, truth = challenge_with_task(user("org"))
    data = predictions(ids, truth, 0.8, 1)
    submission_create(challenge=challenge, user=user("p1"), name="a", files={"main": [upload("a.csv", data)]})
    assert StoredFile.objects.count() == 1
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        challenge.delete()
    assert StoredFile.objects.count() == 1  # not before the deletion commits
    for callback in callbacks:
        callback()
    assert not StoredFile.objects.exists() and not StoredFileChunk.objects.exists()
