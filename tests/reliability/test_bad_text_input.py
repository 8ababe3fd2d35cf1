"""Bad text files (issue 20) through every door: the REST API, the web form and ``python -m stats score``.

The pattern of test_bad_input.py, for a text task (``mt``: BLEU against ``corpus/text/ref.txt``, four
segments): each malformed hypothesis file gets a 400 (exit code 2 on the command line) whose message is the
reader's exact ``file:line[:column]: message``, with both counts when the line counts differ; nothing is
stored and nothing is charged (a team with a daily limit of 1 can still submit afterwards). The service
names the truth by its task (the organizer's file name is not public); the command line by its file.
"""

from __future__ import annotations

import html
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from leaderboard.accounts.models import User
from leaderboard.challenges.services import challenge_create, task_create
from leaderboard.submissions.models import Submission
from stats import cli as stats_cli

TEXT = Path(__file__).resolve().parent / "corpus" / "text"
FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
BINARY = (
    "the file is binary, not text (it contains NUL bytes); upload the predictions as a CSV or Parquet file"
)
ARCHIVE = "the file is a zip archive; archives are not accepted: upload the CSV or Parquet file itself"
#: file -> message, ``{truth}`` standing for how the door names the truth
BAD = {
    "short_by_one.txt": "short_by_one.txt:4: 3 lines, but the truth {truth} has 4 segments",
    "too_long.txt": "too_long.txt:5: 6 lines, but the truth {truth} has 4 segments",
    "empty.txt": "empty.txt: the file is empty",
    "binary.txt": f"binary.txt: {BINARY}",
    "utf16.txt": "utf16.txt: the file is UTF-16 encoded; save it as UTF-8",
    "latin1.txt": "latin1.txt:1:4: byte 0xE9 is not valid UTF-8 (the file looks Latin-1 or Windows-1252 "
    "encoded); save it as UTF-8",
    "broken.jsonl": "broken.jsonl:2:24: not valid JSON: Expecting ',' delimiter",
    "unknown_id.jsonl": "unknown_id.jsonl:2: id '9' is not a segment of the task",
    "duplicate_id.csv": "duplicate_id.csv:3: duplicate id '1' (first on line 2)",
    "archive.txt": f"archive.txt: {ARCHIVE}",
}
GOOD = ["crlf_ok.txt", "bom_ok.txt"]
SERVICE_TRUTH = "of task 'mt'"


@pytest.fixture
def world(db, settings, tmp_path: Path) -> tuple[User, Path]:
    from django.core.cache import cache

    cache.clear()
    settings.PASSWORD_HASHERS = FAST_HASHERS
    storage = tmp_path / "uploads"
    settings.STORAGES = {**settings.STORAGES, "default": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(storage), "base_url": None}}}  # fmt: skip
    organizer = User.objects.create_user(username="olga", password="a-long-test-password-123")
    participant = User.objects.create_user(username="pat", password="a-long-test-password-123")
    challenge = challenge_create(
        organizer=organizer, slug="bad", title="Bad text", resamples=100, daily_limit=1, total_limit=5
    )
    task_create(challenge=challenge, slug="mt", title="MT", metric="bleu",
                truth=(TEXT / "ref.txt").read_bytes(), truth_name="ref.txt")  # fmt: skip
    return participant, storage


def _stored(storage: Path) -> list[Path]:
    return [p for p in storage.rglob("*") if p.is_file()] if storage.exists() else []


def _api(user: User) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=user)
    return client


def _post(api: APIClient, name: str, fname: str):
    data = (TEXT / fname).read_bytes()
    return api.post("/api/challenges/bad/submissions/",
                    {"name": name, "file:mt": SimpleUploadedFile(fname, data)}, format="multipart")  # fmt: skip


@pytest.mark.parametrize("fname", sorted(BAD))
def test_a_bad_text_file_over_the_api_is_a_located_400_stores_nothing_and_is_not_charged(
    world: tuple[User, Path], fname: str
) -> None:
    participant, storage = world
    api = _api(participant)
    r = _post(api, "bad", fname)
    assert r.status_code == 400, r.content
    assert r.json()["message"] == BAD[fname].format(truth=SERVICE_TRUTH)
    assert r.json()["extra"]["file"] == fname
    assert Submission.objects.count() == 0 and _stored(storage) == []
    good = _post(api, "good", "crlf_ok.txt")
    assert good.status_code == 201, good.content  # not charged
    assert _post(api, "again", "crlf_ok.txt").status_code == 429  # the limit is real


@pytest.mark.parametrize("fname", sorted(set(BAD) - {"empty.txt"}))  # the form refuses an empty file itself
def test_a_bad_text_file_in_the_web_form_shows_the_located_message(
    world: tuple[User, Path], fname: str
) -> None:
    participant, storage = world
    client = Client()
    client.force_login(participant)
    data = (TEXT / fname).read_bytes()
    r = client.post("/c/bad/submit/", {"name": "bad", "file_mt": SimpleUploadedFile(fname, data)})
    assert r.status_code == 400
    assert BAD[fname].format(truth=SERVICE_TRUTH) in html.unescape(r.content.decode())
    assert Submission.objects.count() == 0 and _stored(storage) == []


@pytest.mark.parametrize("fname", GOOD)
def test_valid_text_oddities_are_accepted(world: tuple[User, Path], fname: str) -> None:
    r = _post(_api(world[0]), "ok", fname)
    assert r.status_code == 201, r.content


@pytest.mark.parametrize("fname", sorted(BAD) + GOOD)
def test_stats_score_reports_the_same_message(
    fname: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(TEXT)
    code = stats_cli.main(["score", fname, "--truth", "ref.txt", "--metric", "bleu", "--resamples", "100"])
    err = capsys.readouterr().err
    if fname in GOOD:
        assert code == 0, err
        return
    assert code == 2, err
    assert err.rstrip("\n").endswith(BAD[fname].format(truth="ref.txt")), err
