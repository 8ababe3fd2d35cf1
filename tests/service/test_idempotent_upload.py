"""A retried upload is stored and charged once: the API's ``Idempotency-Key`` header, the site form's hidden
token, and ``lb submit``, which sends a key and reuses it when it sends the upload again."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from leaderboard.cli.main import cli
from leaderboard.submissions.models import Submission
from leaderboard.submissions.services import IDEMPOTENCY_KEY_REUSED
from tests.service.api_support import FAST_HASHERS, client_for, file, reset_throttles
from tests.service.factories import challenge_with_task, predictions, user

pytestmark = pytest.mark.django_db


@pytest.fixture
def toy(settings):  # type: ignore[no-untyped-def]
    settings.PASSWORD_HASHERS = FAST_HASHERS
    challenge, _task, ids, truth = challenge_with_task(user("org"), resamples=200, daily_limit=1)
    return challenge, ids, truth


def _post(client, challenge, data: bytes, key: str | None, name: str = "mine"):  # type: ignore[no-untyped-def]
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    return client.post(
        f"/api/challenges/{challenge.slug}/submissions/",
        {"name": name, "file": file("p.csv", data)},
        format="multipart",
        **headers,
    )


def test_the_same_key_returns_the_stored_submission_and_charges_once(toy) -> None:
    challenge, ids, truth = toy
    client = client_for(user("p1"))
    data = predictions(ids, truth, 0.8, 1)
    first = _post(client, challenge, data, "key-1")
    assert first.status_code == 201, first.content
    assert "Idempotent-Replayed" not in first
    # The answer was lost; the client sends the same upload again. The daily limit (1) is used up, yet
    # this is no new upload: the stored submission comes back, not a 429, and nothing is stored twice.
    again = _post(client, challenge, data, "key-1")
    assert again.status_code == 201, again.content
    assert again["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]
    assert Submission.objects.filter(challenge=challenge).count() == 1
    assert Submission.objects.filter(challenge=challenge, charged=True).count() == 1
    # Without a key, another upload is a new one, refused by the limit as before.
    assert _post(client, challenge, data, None).status_code == 429


def test_the_same_key_with_another_file_is_a_clear_422_and_stores_nothing(toy) -> None:
    challenge, ids, truth = toy
    client = client_for(user("p1"))
    first = _post(client, challenge, predictions(ids, truth, 0.8, 1), "key-2")
    other = _post(client, challenge, predictions(ids, truth, 0.6, 2), "key-2")
    assert other.status_code == 422, other.content
    sid = first.json()["id"]
    assert other.json() == {
        "message": IDEMPOTENCY_KEY_REUSED.format(id=sid),
        "extra": {"submission": sid, "field": "Idempotency-Key"},
    }
    assert Submission.objects.filter(challenge=challenge).count() == 1


def test_keys_belong_to_their_user(toy) -> None:
    """Another participant's key is just a key: the same string from two users makes two submissions."""
    challenge, ids, truth = toy
    data = predictions(ids, truth, 0.8, 1)
    a = _post(client_for(user("p1")), challenge, data, "shared")
    b = _post(client_for(user("p2")), challenge, data, "shared")
    assert a.status_code == b.status_code == 201 and a.json()["id"] != b.json()["id"]


def test_the_site_form_carries_a_token_so_a_form_sent_twice_stores_one_submission(client, toy) -> None:
    challenge, ids, truth = toy
    client.force_login(user("p1"))
    page = client.get(reverse("submit", args=[challenge.slug])).content.decode()
    token = re.search(r'name="idempotency_key" value="([0-9a-f]{32})"', page)
    assert token, "the submit form has no hidden idempotency token"
    assert token.group(1) not in client.get(reverse("submit", args=[challenge.slug])).content.decode()
    data = predictions(ids, truth, 0.8, 1)
    answers = [
        client.post(
            reverse("submit", args=[challenge.slug]),
            {
                "name": "web",
                "file_main": SimpleUploadedFile("p.csv", data),
                "idempotency_key": token.group(1),
            },
        )
        for _ in range(2)
    ]
    (submission,) = Submission.objects.filter(challenge=challenge)
    assert [a.status_code for a in answers] == [302, 302]
    assert {a["Location"] for a in answers} == {reverse("submission", args=[submission.pk])}


def test_lb_sends_the_upload_again_with_the_same_key_when_the_answer_is_lost(
    live_server, transactional_db, toy, tmp_path: Path, monkeypatch
) -> None:
    challenge, ids, truth = toy
    reset_throttles()
    from rest_framework.authtoken.models import Token

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("LB_HOST", live_server.url)
    monkeypatch.setenv("LB_TOKEN", Token.objects.create(user=user("p1")).key)
    monkeypatch.setattr("leaderboard.cli.main.UPLOAD_BACKOFF", 0.01)
    keys: list[str] = []
    real_post = httpx.Client.post

    def answer_lost_once(self, url, **kwargs):  # type: ignore[no-untyped-def]
        keys.append(kwargs["headers"]["Idempotency-Key"])
        response = real_post(self, url, **kwargs)  # the server stores the upload...
        if len(keys) == 1:
            raise httpx.ReadTimeout("the answer was lost")  # ...but the client never hears of it
        return response

    monkeypatch.setattr(httpx.Client, "post", answer_lost_once)
    path = tmp_path / "p.csv"
    path.write_bytes(predictions(ids, truth, 0.8, 1))
    result = CliRunner().invoke(cli, ["submit", challenge.slug, str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (submission,) = Submission.objects.filter(challenge=challenge)
    assert f"Submission {submission.pk} accepted" in result.output
    assert len(keys) == 2 and keys[0] == keys[1] and len(keys[0]) == 32
    assert "sending again" in result.output
    reset_throttles()
