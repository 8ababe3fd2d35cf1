"""Signed-in board reads cost little and are never shared (issue 21, item 10): each reader's answer (page
and API) is cached under a key that holds the reader (user, staff, organizer of this challenge, CSRF
cookie), so a repeated read runs a few queries and no view, an organizer's exact view never reaches a
participant, and an organizer who is removed reads a participant's view at once.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle

from leaderboard.challenges.models import Challenge
from tests.service.api_support import FAST_HASHERS, reset_throttles
from tests.service.test_golden_boards import RATES
from tests.service.test_tied_ranks import tied  # noqa: F401  (the fixture)


@pytest.fixture(autouse=True)
def _fresh(settings, monkeypatch) -> Iterator[None]:
    settings.PASSWORD_HASHERS = FAST_HASHERS
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", dict(RATES))
    reset_throttles()
    yield
    reset_throttles()


def _api(user) -> APIClient:
    return APIClient(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")


def _names(client, path: str) -> list[str]:
    response = client.get(path)
    assert response.status_code == 200, response.content
    return [r["name"] for r in response.json()["rows"]]


BOARD = "/api/challenges/tied/leaderboard/?task=main"
EXACT = ["carol", "second", "first", "dave"]  # what organizers read
TIED = ["carol", "first", "second", "dave"]  # participants: "first" and "second" tie at 0.7, by name


def test_signed_in_api_reads_are_cached_per_reader_and_never_shared(tied) -> None:  # noqa: F811
    organizer, players = tied
    assert _names(_api(organizer), BOARD) == EXACT
    assert _names(_api(players["bob"]), BOARD) == TIED
    with CaptureQueriesContext(connection) as queries:
        assert _names(_api(players["bob"]), BOARD) == TIED
    assert len(queries) <= 3, [q["sql"][:80] for q in queries.captured_queries]
    # An organizer removed from the challenge reads the participant's view at once, not a cached one.
    Challenge.objects.get(slug="tied").organizers.remove(organizer)
    assert _names(_api(organizer), BOARD) == TIED
    assert _api(organizer).get(BOARD, HTTP_AUTHORIZATION="Token wrong").status_code == 401


def test_signed_in_pages_are_cached_per_reader_and_never_shared(tied) -> None:  # noqa: F811
    organizer, players = tied
    pages = {}
    for who, user in (("organizer", organizer), ("bob", players["bob"])):
        site = Client()
        site.force_login(user)
        site.get("/c/tied/?task=main")  # sets the CSRF cookie: an answer that sets a cookie is not cached
        first = site.get("/c/tied/?task=main").content.decode()
        with CaptureQueriesContext(connection) as queries:
            again = site.get("/c/tied/?task=main").content.decode()
        assert again == first
        assert len(queries) <= 4, [q["sql"][:80] for q in queries.captured_queries]
        pages[who] = first
    organizer_page, bob_page = pages["organizer"], pages["bob"]
    assert organizer_page.index(">second<") < organizer_page.index(">first<")
    assert bob_page.index(">first<") < bob_page.index(">second<")
    assert "bob" in bob_page and ">org<" not in bob_page
