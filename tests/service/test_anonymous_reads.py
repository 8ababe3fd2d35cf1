"""Every anonymous read that renders is throttled (issue 21, item 10): not only the board (cached and
throttled before), but the summary, shake-up, report, per-class and home pages, the diagrams and every API
read, whatever junk query parameters make a request look new (``core.middleware``). A render is an answer
that ran a database query; answers from the anonymous cache run none and are not counted.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.throttling import SimpleRateThrottle

from leaderboard.submissions.models import Submission
from tests.service.api_support import FAST_HASHERS, reset_throttles
from tests.service.test_golden_boards import RATES
from tests.service.test_tied_ranks import two_tasks  # noqa: F401  (the fixture)

RATE = 3


@pytest.fixture(autouse=True)
def _fresh(settings, monkeypatch) -> Iterator[None]:
    settings.PASSWORD_HASHERS = FAST_HASHERS
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", dict(RATES))
    reset_throttles()
    yield
    reset_throttles()


def _pages() -> list[str]:
    entry = Submission.objects.order_by("pk").first()
    assert entry is not None
    return [
        "/",
        "/c/two/",
        "/c/two/summary/",
        "/c/two/report/",
        "/c/two/critical-difference.svg",
        "/c/two/t/main/shakeup/",
        "/c/two/t/main/shakeup.svg",
        "/c/two/t/main/classes/",
        "/c/two/t/main/pairwise/",
        "/c/two/t/main/ranks/",
        f"/c/two/t/main/entries/{entry.pk}/",
        "/c/two/t/main/board.csv",
        "/api/challenges/",
        "/api/challenges/two/",
        "/api/challenges/two/tasks/",
        "/api/challenges/two/summary/",
        "/api/challenges/two/critical-difference.svg",
        "/api/challenges/two/leaderboard/",
        "/api/schema/",
    ]


def test_every_anonymous_render_is_throttled_whatever_the_query(two_tasks, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {**RATES, "anon_read": f"{RATE}/min"})
    unthrottled = {}
    for path in _pages():
        reset_throttles()
        renders, codes = 0, []
        for k in range(RATE + 3):
            with CaptureQueriesContext(connection) as queries:
                response = Client().get(path, {"x": str(k)})
            codes.append(response.status_code)
            if response.status_code != 429 and len(queries):
                renders += 1
        if renders > RATE or (429 not in codes and renders == len(codes)):
            unthrottled[path] = codes
    assert not unthrottled, f"anonymous renders not throttled: {unthrottled}"


def test_signed_in_readers_and_health_checks_are_not_throttled(two_tasks, monkeypatch) -> None:  # noqa: F811
    organizer, _players = two_tasks
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {**RATES, "anon_read": "1/min"})
    reset_throttles()
    site = Client()
    site.force_login(organizer)
    assert {site.get("/c/two/summary/", {"x": str(k)}).status_code for k in range(4)} == {200}
    assert 429 not in {Client().get("/healthz").status_code for _ in range(4)}
    limited = [Client().get("/api/challenges/", {"x": str(k)}) for k in range(3)]
    assert limited[-1].status_code == 429 and "Retry-After" in limited[-1]
    assert limited[-1].json()["extra"]["wait"] >= 1  # the API's one error shape


def test_a_made_up_authorization_header_does_not_skip_the_throttle(two_tasks, monkeypatch) -> None:  # noqa: F811
    """Only an API token is checked before the view renders; ``Authorization: x`` on a page, a token on a
    page (which reads sessions only), or a scheme the API does not accept leave the reader anonymous:
    cached or throttled like any visitor (each fails on a check of the header's mere presence)."""
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {**RATES, "anon_read": "1/min"})
    cases = [("/c/two/summary/", "x"), ("/c/two/", "Token abc"), ("/c/two/t/main/ranks/", "Token abc"),
             ("/api/challenges/", "Basic Zm9vOmJhcg==")]  # fmt: skip
    for path, header in cases:
        reset_throttles()
        renders = 0
        for k in range(4):
            with CaptureQueriesContext(connection) as queries:
                response = Client().get(path, {"x": str(k)}, HTTP_AUTHORIZATION=header)
            renders += response.status_code != 429 and len(queries) > 0
        assert renders <= 1, (path, header, renders)
    reset_throttles()
    wrong_token = [
        Client().get("/api/challenges/", HTTP_AUTHORIZATION="Token abc").status_code for _ in range(3)
    ]
    assert wrong_token == [401, 401, 401]  # refused by the API's authentication before any render
