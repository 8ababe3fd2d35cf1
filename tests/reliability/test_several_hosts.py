"""Several hosts: a worker scores from what every host reaches (PostgreSQL and Redis), never from the web
host's disk. The workers here run with a data directory of their own, empty at start (tests/conftest.py,
``worker_data_dir``), as a worker on a second machine would; the test process is the web host.

The second test is the control: with uploads kept on the web host's disk (LEADERBOARD_STORAGE=filesystem)
the same worker cannot score, so the first test would fail if an upload were read from local disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings

from leaderboard.core.models import StoredFile
from leaderboard.scoring.models import Score
from leaderboard.scoring.services import SCORER_CRASHED
from leaderboard.submissions.models import Status, Submission
from tests.conftest import wait_for
from tests.service.api_support import client_for, file
from tests.service.factories import challenge_with_task, predictions, user

# The fault tests (marked `faults`) start and kill workers and private servers, with windows timed on a
# busy machine: `make test` runs them in a pytest run of their own, one after another, beside the rest,
# which runs over several processes (pytest-xdist's `xdist_group` is not applied under pytest 9.2, so a group
# could not keep them together; docs/benchmarks.md, "Over two processes").
pytestmark = [
    pytest.mark.services,
    pytest.mark.django_db(transaction=True),
    pytest.mark.faults,
]


def _files_under(path: Path) -> list[Path]:
    return [p for p in path.rglob("*") if p.is_file()]


def _upload_over_the_api(name: str) -> tuple[Submission, bytes]:
    challenge, _task, ids, truth = challenge_with_task(user("org"), resamples=200)
    data = predictions(ids, truth, 0.8, 5)
    r = client_for(user("p1")).post(
        f"/api/challenges/{challenge.slug}/submissions/",
        {"name": name, "file": file(f"{name}.csv", data)},
        format="multipart",
    )
    assert r.status_code == 201, r.content
    return Submission.objects.get(pk=r.json()["id"]), data


def _finished(pk: int) -> Submission:
    return wait_for(
        lambda: Submission.objects.filter(pk=pk, status__in=[Status.SCORED, Status.FAILED]).first(),
        timeout=120,
        what=f"submission {pk} to finish",
    )


def test_a_worker_with_another_data_directory_scores_an_upload_sent_through_the_api(
    fault_workers: Any,
) -> None:
    worker = fault_workers()
    worker_dir = Path(worker.env["LEADERBOARD_DATA_DIR"])
    assert worker_dir.resolve() != Path(django_settings.DATA_DIR).resolve()
    assert _files_under(worker_dir) == []  # another host's disk: nothing of the web host's is there

    s, data = _upload_over_the_api("remote")
    stored_name = s.files.get().file.name
    assert StoredFile.objects.get(name=stored_name).size == len(data)  # the upload is rows of PostgreSQL
    for directory in (worker_dir, Path(django_settings.DATA_DIR)):  # and on no host's disk
        assert not any(p.name == Path(stored_name).name for p in _files_under(directory))

    finished = _finished(s.pk)
    assert finished.status == Status.SCORED, (finished.error, worker.log_text()[-3000:])
    assert Score.objects.filter(submission=finished).exists()
    # What the worker wrote on its own disk is the resample-weight cache, rebuilt there from the seed.
    written = _files_under(worker_dir)
    assert all(p.is_relative_to(worker_dir / "resamples") for p in written), written


def test_uploads_on_the_web_hosts_disk_are_out_of_reach_of_a_worker_on_another_host(
    fault_workers: Any, settings: Any, tmp_path: Path
) -> None:
    web_disk = tmp_path / "web-host-uploads"
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(web_disk), "base_url": None},
        },
    }
    worker = fault_workers(env={"LEADERBOARD_STORAGE": "filesystem"})
    s, _data = _upload_over_the_api("on-disk")
    assert (web_disk / s.files.get().file.name).is_file()  # here, on the web host
    finished = _finished(s.pk)
    assert finished.status == Status.FAILED and finished.error == SCORER_CRASHED
    assert finished.charged is False
    assert "the scorer crashed with FileNotFoundError" in worker.log_text()
