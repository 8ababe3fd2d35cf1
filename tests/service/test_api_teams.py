"""Teams over HTTP: found a team, share its invite code, join, and limits counted per team."""

from __future__ import annotations

import pytest

from leaderboard.challenges.models import Team
from leaderboard.challenges.services import TEAM_HAS_SUBMISSIONS
from tests.service.api_support import FAST_HASHERS, client_for, create_challenge_over_http, file
from tests.service.factories import predictions, user


@pytest.fixture
def setup(db, settings):  # type: ignore[no-untyped-def]
    settings.PASSWORD_HASHERS = FAST_HASHERS
    organizer = user("org")
    ids, truth = create_challenge_over_http(client_for(organizer), daily_limit=2)
    return ids, truth


def test_found_share_join_and_share_the_limits(setup) -> None:  # type: ignore[no-untyped-def]
    ids, truth = setup
    ada, bob, eve = user("ada"), user("bob"), user("eve")
    founded = client_for(ada).post("/api/challenges/toy/teams/", {"name": "Lovelace"}, format="json")
    assert founded.status_code == 201, founded.content
    code = founded.json()["invite_code"]
    assert founded.json()["members"] == ["ada"]

    # The code is shown to members only: the public list has names and members, no codes.
    listing = client_for(eve).get("/api/challenges/toy/teams/").json()
    assert listing == [{"name": "Lovelace", "members": ["ada"], "is_baseline": False}]
    assert code not in client_for(None).get("/api/challenges/toy/teams/").content.decode()

    wrong = client_for(bob).post("/api/challenges/toy/teams/join/", {"invite_code": "nope"}, format="json")
    assert wrong.status_code == 404  # the code names no team (issue 21, item 11)
    assert wrong.json()["message"] == "No team of this challenge has that invite code."
    joined = client_for(bob).post("/api/challenges/toy/teams/join/", {"invite_code": code}, format="json")
    assert joined.status_code == 200
    assert joined.json()["members"] == ["ada", "bob"]
    assert client_for(bob).get("/api/challenges/toy/teams/mine/").json()["invite_code"] == code

    # The daily limit (2) is the team's: ada and bob share it.
    def submit(who, k):  # type: ignore[no-untyped-def]
        data = {"name": f"s{k}", "file": file("p.csv", predictions(ids, truth, 0.8, k))}
        return client_for(who).post("/api/challenges/toy/submissions/", data, format="multipart")

    assert submit(ada, 1).status_code == 201
    assert submit(bob, 2).status_code == 201
    third = submit(ada, 3)
    assert third.status_code == 429
    assert third.json()["extra"]["limit"] == "daily"

    # A member of a team with submissions cannot move to another team.
    other = client_for(eve).post("/api/challenges/toy/teams/", {"name": "Eve's"}, format="json")
    moved = client_for(bob).post(
        "/api/challenges/toy/teams/join/", {"invite_code": other.json()["invite_code"]}, format="json"
    )
    assert moved.status_code == 409
    assert moved.json()["message"] == TEAM_HAS_SUBMISSIONS.format(team="Lovelace")


def test_a_solo_participant_without_submissions_can_found_a_team_and_the_empty_team_goes(setup) -> None:  # type: ignore[no-untyped-def]
    cy = user("cy")
    first = client_for(cy).post("/api/challenges/toy/teams/", {"name": "First"}, format="json")
    assert first.status_code == 201
    second = client_for(cy).post("/api/challenges/toy/teams/", {"name": "Second"}, format="json")
    assert second.status_code == 201
    assert list(Team.objects.filter(members=cy).values_list("name", flat=True)) == ["Second"]
    assert not Team.objects.filter(name="First").exists()
    taken = client_for(user("dee")).post("/api/challenges/toy/teams/", {"name": "Second"}, format="json")
    assert taken.status_code == 409


def test_an_earlier_snapshot_stays_readable_by_its_sequence(
    setup, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    ids, truth = setup
    for k, who in enumerate((user("p1"), user("p2"))):
        data = {"name": f"s{k}", "file": file("p.csv", predictions(ids, truth, 0.7 + 0.1 * k, k))}
        with django_capture_on_commit_callbacks(execute=True):
            response = client_for(who).post("/api/challenges/toy/submissions/", data, format="multipart")
        assert response.status_code == 201
    latest = client_for(None).get("/api/challenges/toy/leaderboard/").json()
    first = client_for(None).get("/api/challenges/toy/leaderboard/?sequence=1").json()
    assert latest["sequence"] >= 2 and latest["entry_count"] == 2
    assert first["sequence"] == 1 and first["entry_count"] == 1
    missing = client_for(None).get("/api/challenges/toy/leaderboard/?sequence=99")
    assert missing.status_code == 404


def test_board_rows_are_paged_like_the_apis_lists_and_csv_holds_every_row(setup) -> None:  # type: ignore[no-untyped-def]
    from leaderboard.challenges.models import Task
    from leaderboard.rankings.models import BoardSnapshot

    task = Task.objects.get(challenge__slug="toy")
    rows = [{"rank": i + 1, "name": f"e{i}", "value": 1.0 - i / 1000} for i in range(250)]
    BoardSnapshot.objects.create(
        task=task, split="public", sequence=1, entry_count=250, signature={}, rows=rows
    )
    api = client_for(None)
    first = api.get("/api/challenges/toy/leaderboard/").json()
    assert (first["entry_count"], first["offset"], first["limit"], len(first["rows"])) == (250, 0, 100, 100)
    assert first["previous"] is None and "offset=100" in first["next"]
    last = api.get(first["next"]).json()
    last = api.get(last["next"]).json()
    assert [r["name"] for r in last["rows"]][:1] == ["e200"] and len(last["rows"]) == 50
    assert last["next"] is None and "offset=100" in last["previous"]
    assert len(api.get("/api/challenges/toy/leaderboard/?limit=1000").json()["rows"]) == 250
    assert api.get("/api/challenges/toy/leaderboard/?limit=1001").status_code == 400
    csv_text = api.get("/api/challenges/toy/leaderboard/?format=csv&limit=5").content.decode()
    assert len(csv_text.strip().splitlines()) == 1 + 250  # header and every row
