"""The team page: found a team, see the invite code, join with it, errors inline."""

from __future__ import annotations

import pytest
from django.test import Client

from leaderboard.challenges.models import Team
from tests.service.api_support import FAST_HASHERS, client_for, create_challenge_over_http
from tests.service.factories import user


@pytest.fixture
def challenge(db, settings):  # type: ignore[no-untyped-def]
    settings.PASSWORD_HASHERS = FAST_HASHERS
    create_challenge_over_http(client_for(user("org")))
    return "toy"


def test_found_then_join_through_the_page(challenge: str) -> None:
    ada, bob = Client(), Client()
    ada.force_login(user("ada"))
    bob.force_login(user("bob"))
    assert ada.get(f"/c/{challenge}/team/").status_code == 200
    response = ada.post(f"/c/{challenge}/team/", {"action": "found", "found-name": "Lovelace"}, follow=True)
    code = Team.objects.get(name="Lovelace").invite_code
    assert f'<code id="invite-code">{code}</code>' in response.content.decode()
    wrong = bob.post(f"/c/{challenge}/team/", {"action": "join", "join-invite_code": "nope"})
    assert wrong.status_code == 400
    assert "No team of this challenge has that invite code." in wrong.content.decode()
    bob.post(f"/c/{challenge}/team/", {"action": "join", "join-invite_code": code})
    assert sorted(Team.objects.get(name="Lovelace").members.values_list("username", flat=True)) == [
        "ada",
        "bob",
    ]


def test_the_page_needs_a_login_and_hides_codes_from_others(challenge: str) -> None:
    assert Client().get(f"/c/{challenge}/team/").status_code == 302
    ada = Client()
    ada.force_login(user("ada"))
    ada.post(f"/c/{challenge}/team/", {"action": "found", "found-name": "Lovelace"})
    eve = Client()
    eve.force_login(user("eve"))
    page = eve.get(f"/c/{challenge}/team/").content.decode()
    assert Team.objects.get(name="Lovelace").invite_code not in page
