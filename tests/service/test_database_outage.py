"""While PostgreSQL is unreachable (down, restarting) the service answers 503 with Retry-After: the API in
its JSON error shape, the site with a plain page; never Django's HTML 500. Once it is back, all is normal.

The outage is made by pointing this process's connection at a port nobody listens on (what a stopped or
restarting server looks like to Django: connection refused); the shared server is never stopped.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection
from django.utils.html import escape
from rest_framework.test import APIClient

from leaderboard.core.views import DATABASE_UNAVAILABLE, RETRY_AFTER_SECONDS
from tests.reliability.conftest import free_port
from tests.service.api_support import FAST_HASHERS, file
from tests.service.factories import challenge_with_task, predictions, user

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def outage(postgres: None) -> Iterator[object]:
    """``with outage():`` the database refuses connections inside the block."""
    import contextlib

    @contextlib.contextmanager
    def down() -> Iterator[None]:
        port = connection.settings_dict["PORT"]
        connection.close()
        connection.settings_dict["PORT"] = str(free_port())
        try:
            yield
        finally:
            connection.close()
            connection.settings_dict["PORT"] = port

    return down


def test_api_and_pages_answer_503_with_retry_after_while_the_database_is_down(outage, settings) -> None:
    settings.PASSWORD_HASHERS = FAST_HASHERS
    challenge, _task, ids, truth = challenge_with_task(user("org"), resamples=200)
    participant = user("p1")
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=participant).key
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    api.raise_request_exception = False  # what a client would get, not the test's re-raise
    site = APIClient()
    site.raise_request_exception = False

    with outage():
        answers = {
            "api list": api.get("/api/challenges/"),
            "api board": api.get(f"/api/challenges/{challenge.slug}/leaderboard/"),
            "api upload": api.post(
                f"/api/challenges/{challenge.slug}/submissions/",
                {"name": "during", "file": file("p.csv", predictions(ids, truth, 0.8, 1))},
                format="multipart",
            ),
        }
        for what, r in answers.items():
            assert r.status_code == 503, (what, r.status_code, r.content[:300])
            assert r["Retry-After"] == str(RETRY_AFTER_SECONDS), what
            assert r["Content-Type"] == "application/json", what
            assert r.json() == {
                "message": DATABASE_UNAVAILABLE,
                "extra": {"retry_after": RETRY_AFTER_SECONDS},
            }
        page = site.get(f"/c/{challenge.slug}/")
        assert page.status_code == 503 and page["Retry-After"] == str(RETRY_AFTER_SECONDS)
        assert page["Content-Type"].startswith("text/html")
        html = page.content.decode()
        assert (
            escape(DATABASE_UNAVAILABLE) in html and "Back in a moment" in html and "Server Error" not in html
        )

    # Back: the same requests are answered normally, and the upload refused during the outage is not stored.
    assert api.get("/api/challenges/").status_code == 200
    assert site.get(f"/c/{challenge.slug}/").status_code == 200
    assert not challenge.submissions.filter(name="during").exists()


def test_other_server_errors_stay_500(settings, monkeypatch, postgres) -> None:
    """Only the database's unavailability is a 503: a bug is still a 500 (and logged as one)."""
    from leaderboard.api import views

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("a bug")

    monkeypatch.setattr(views.ChallengeListView, "get", broken)
    client = APIClient()
    client.raise_request_exception = False
    r = client.get("/api/challenges/")
    assert r.status_code == 500 and "Retry-After" not in r
