"""The margin holds against many accounts (issue 21, item 7): throwaway accounts made within the sign-up
throttle come from one network address, and a challenge counts one team's quota per address by default
(``Challenge.quota_per_address``), so twenty accounts get one team's submissions, not twenty teams'.

An organizer who turns the limit off (teams behind one campus address) keeps approval as the defence: an
approved team then submits with its own quota. The organizer's page names the teams that share an address.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import Client
from rest_framework.throttling import SimpleRateThrottle

from leaderboard.challenges.models import Challenge
from leaderboard.challenges.settings_spec import CHALLENGE
from leaderboard.submissions.models import Submission
from leaderboard.submissions.services import ADDRESS_DAILY_USED, client_key_of
from tests.service.api_support import FAST_HASHERS, client_for, file, reset_throttles
from tests.service.factories import challenge_with_task, predictions, user

ATTACKER = "203.0.113.7"


@pytest.fixture(autouse=True)
def _fresh(settings, monkeypatch) -> Iterator[None]:
    settings.PASSWORD_HASHERS = FAST_HASHERS
    rates = {**SimpleRateThrottle.THROTTLE_RATES, "submit": "1000/min", "token": "1000/min"}
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", rates)
    reset_throttles()
    yield
    reset_throttles()


def _submit(who, ids, truth, *, address: str = ATTACKER, k: int = 0):
    return client_for(who, address=address).post(
        "/api/challenges/toy/submissions/",
        {"name": f"probe {k}", "file": file("p.csv", predictions(ids, truth, 0.6, k))},
        format="multipart",
    )


def test_the_default_counts_one_quota_per_address() -> None:
    assert CHALLENGE["quota_per_address"].default is True
    assert Challenge._meta.get_field("quota_per_address").default is True


def test_many_accounts_from_one_address_share_one_teams_quota_api(db) -> None:
    organizer = user("org")
    challenge, _task, ids, truth = challenge_with_task(organizer, resamples=100, daily_limit=3, total_limit=4)
    accounts = [user(f"throwaway{i}") for i in range(5)]
    codes = [_submit(a, ids, truth, k=k).status_code for k, a in enumerate(accounts)]
    assert codes == [201, 201, 201, 429, 429]  # one team's daily limit (3), whichever account sends
    refused = _submit(accounts[4], ids, truth, k=9).json()
    assert refused["extra"]["limit"] == "daily" and refused["extra"]["scope"] == "address"
    assert refused["message"].startswith(ADDRESS_DAILY_USED.split("{")[0])
    assert Submission.objects.filter(challenge=challenge).count() == 3
    # The stored key is a keyed hash of the address, never the address itself.
    keys = set(Submission.objects.values_list("client_key", flat=True))
    assert keys == {client_key_of(ATTACKER)} and ATTACKER not in next(iter(keys))
    # A participant elsewhere is not charged for them; the organizer is never limited.
    assert _submit(user("honest"), ids, truth, address="198.51.100.1").status_code == 201
    assert _submit(organizer, ids, truth).status_code == 201


def test_the_total_limit_also_counts_per_address(db) -> None:
    challenge, _task, ids, truth = challenge_with_task(
        user("org"), resamples=100, daily_limit=10, total_limit=2
    )
    codes = [_submit(user(f"t{i}"), ids, truth, k=i).status_code for i in range(3)]
    assert codes == [201, 201, 429]
    assert _submit(user("t9"), ids, truth).json()["extra"] == {
        "limit": "total",
        "scope": "address",
        "used": 2,
    }
    assert challenge.submissions.count() == 2


def test_the_site_counts_per_address_too(db) -> None:
    _challenge, task, ids, truth = challenge_with_task(user("org"), resamples=100, daily_limit=1)
    codes = []
    for i in range(2):
        site = Client(REMOTE_ADDR=ATTACKER)
        site.force_login(user(f"site{i}"))
        response = site.post(
            "/c/toy/submit/",
            {"name": "m", f"file_{task.slug}": file("p.csv", predictions(ids, truth, 0.6, i))},
        )
        codes.append(response.status_code)
    assert codes == [302, 429]


def test_an_organizer_turns_it_off_and_approves_a_real_team(db) -> None:
    organizer = user("org")
    challenge, _task, ids, truth = challenge_with_task(
        organizer, resamples=100, daily_limit=1, quota_per_address=False, requires_approval=True
    )
    lab = [user("lab1"), user("lab2")]
    assert _submit(lab[0], ids, truth).status_code == 403  # approval is the defence now
    for member in lab:
        approved = client_for(organizer).post(f"/api/challenges/toy/participants/{member.username}/")
        assert approved.status_code == 200, approved.content
    assert [_submit(m, ids, truth, k=k).status_code for k, m in enumerate(lab)] == [201, 201]
    assert challenge.submissions.count() == 2


def test_the_organizer_page_names_teams_that_share_an_address(db) -> None:
    organizer = user("org")
    _challenge, _task, ids, truth = challenge_with_task(organizer, resamples=100)
    for i in range(2):
        assert _submit(user(f"acct{i}"), ids, truth, k=i).status_code == 201
    site = Client()
    site.force_login(organizer)
    page = site.get("/c/toy/organize/").content.decode()
    assert "Teams that share a network address" in page
    assert "acct0, acct1: 2 submissions" in page and ATTACKER not in page


def test_the_setting_is_offered_by_every_door(db) -> None:
    organizer = user("org")
    created = client_for(organizer).post(
        "/api/challenges/", {"slug": "c2", "title": "C2", "quota_per_address": False}, format="json"
    )
    assert created.status_code == 201, created.content
    assert created.json()["quota_per_address"] is False
    assert Challenge.objects.get(slug="c2").quota_per_address is False
    site = Client()
    site.force_login(organizer)
    assert 'name="quota_per_address"' in site.get("/c/c2/edit/").content.decode()
