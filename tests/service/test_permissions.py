"""The permission matrix: every API endpoint x {anonymous, participant, other team, organizer, staff}.

Each row is one request made in a fresh world (a rolled-back transaction), so writes in one case do not
change another. The world: a public challenge ``pub`` (task ``main`` with a private split, entries chosen
by selection) where ``participant`` and ``other`` each have a team and a submission; a private challenge
``priv`` where only ``participant`` takes part. Boards and summaries exist for both splits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from leaderboard.challenges.models import Challenge
from leaderboard.challenges.services import challenge_create, task_create, team_found
from leaderboard.rankings.models import BoardSnapshot, ChallengeSummary
from leaderboard.scoring.models import RescoreJob
from leaderboard.submissions.models import Status, Submission
from leaderboard.submissions.services import submission_create
from tests.service.api_support import FAST_HASHERS, PASSWORD, reset_throttles
from tests.service.factories import LABELS, csv_bytes, make_truth, predictions, upload, user

ROLES = ("anonymous", "participant", "other", "organizer", "staff")
N = 60


@dataclass
class World:
    users: dict[str, Any]
    ids: list[str]
    truth: list[str]
    mine: int  # participant's scored submission in pub
    queued: int  # participant's queued submission in pub


def _truth_file(ids: list[str], truth: list[str]) -> bytes:
    rows = "".join(
        f"{i},{t},{'private' if k % 2 else 'public'}\n"
        for k, (i, t) in enumerate(zip(ids, truth, strict=True))
    )
    return b"id,label,split\n" + rows.encode()


@pytest.fixture
def world(db, settings) -> World:  # type: ignore[no-untyped-def]
    settings.PASSWORD_HASHERS = FAST_HASHERS
    reset_throttles()
    users = {
        "participant": user("participant"),
        "other": user("other"),
        "organizer": user("organizer"),
        "staff": user("staff", is_staff=True),
    }
    ids, truth = make_truth(N)
    tasks = []
    for slug, visibility in (("pub", "public"), ("priv", "private")):
        c = challenge_create(
            organizer=users["organizer"], slug=slug, title=slug, visibility=visibility, resamples=100,
            entry_selection="selected",
        )  # fmt: skip
        tasks.append(
            task_create(
                challenge=c, slug="main", title="Main", metric="accuracy", labels=LABELS,
                truth=_truth_file(ids, truth), truth_name="truth.csv", split_column="split",
            )
        )  # fmt: skip
        for split in ("public", "private"):
            BoardSnapshot.objects.create(
                task=tasks[-1], split=split, sequence=1, entry_count=0, signature={"split": split}, rows=[]
            )
            ChallengeSummary.objects.create(
                challenge=c, split=split, sequence=1, data={"split": split}, svg="<svg/>"
            )
        RescoreJob.objects.create(task=tasks[-1], total=0, done=0, state=RescoreJob.State.DONE)
    pub = Challenge.objects.get(slug="pub")
    team_found(challenge=Challenge.objects.get(slug="priv"), user=users["participant"], name="p-team")

    def make(who: str, name: str) -> Submission:
        return submission_create(
            challenge=pub, user=users[who], name=name,
            files={"main": [upload("p.csv", predictions(ids, truth, 0.8, 1))]},
        )  # fmt: skip

    mine = make("participant", "mine")
    make("other", "theirs")
    queued = make("participant", "queued")
    # No commit happens in this test, so nothing was dispatched: mark one as scored by hand.
    Submission.objects.filter(pk=mine.pk).update(status=Status.SCORED)
    return World(users=users, ids=ids, truth=truth, mine=mine.pk, queued=queued.pk)


def _predictions(w: World) -> SimpleUploadedFile:
    return SimpleUploadedFile("p.csv", predictions(w.ids, w.truth, 0.7, 5))


@dataclass(frozen=True)
class Case:
    method: str
    path: str  # may use {mine} and {queued}
    expected: tuple[int, int, int, int, int]  # anonymous, participant, other, organizer, staff
    body: Callable[[World, str], dict[str, Any]] | None = None
    fmt: str = "json"


def _labels_body(w: World, role: str) -> dict[str, Any]:
    return {"truth": SimpleUploadedFile("t.csv", _truth_file(w.ids, w.truth)), "split_column": "split"}


def _task_body(w: World, role: str) -> dict[str, Any]:
    ids, truth = make_truth(30)
    data = csv_bytes("id,label", list(zip(ids, truth, strict=True)))
    return {
        "slug": "extra",
        "title": "Extra",
        "metric": "accuracy",
        "truth": SimpleUploadedFile("t.csv", data),
    }


OK = (200, 200, 200, 200, 200)
MEMBERS = (404, 200, 404, 200, 200)  # a private challenge: its organizers and participants
ORGANIZERS = (401, 403, 403, 200, 200)
REVEALED_ONLY_TO_ORGANIZERS = (404, 404, 404, 200, 200)

MATRIX = [
    Case(
        "POST",
        "/api/auth/token/",
        (401, 200, 200, 200, 200),  # no such user: wrong credentials (issue 21, item 11)
        lambda w, role: {"username": role, "password": PASSWORD},
    ),
    Case("DELETE", "/api/auth/token/", (401, 204, 204, 204, 204)),
    Case(
        "POST",
        "/api/auth/register/",
        (201,) * 5,
        lambda w, role: {"username": f"new-{role}", "password": PASSWORD},
    ),
    Case("GET", "/api/challenges/", OK),
    Case(
        "POST",
        "/api/challenges/",
        (401, 201, 201, 201, 201),
        lambda w, role: {"slug": f"new-{role}", "title": "New"},
    ),
    Case("GET", "/api/challenges/pub/", OK),
    Case("GET", "/api/challenges/priv/", MEMBERS),
    Case("PATCH", "/api/challenges/pub/", ORGANIZERS, lambda w, role: {"description": "changed"}),
    Case(
        "PATCH",
        "/api/challenges/priv/",
        (401, 403, 404, 200, 200),
        lambda w, role: {"description": "changed"},
    ),
    Case("POST", "/api/challenges/pub/reveal/", ORGANIZERS, lambda w, role: {"while_open": True}),
    Case("POST", "/api/challenges/priv/reveal/", (401, 403, 404, 200, 200), lambda w, role: {"close": True}),
    Case("GET", "/api/challenges/pub/tasks/", OK),
    Case("GET", "/api/challenges/priv/tasks/", MEMBERS),
    Case("POST", "/api/challenges/pub/tasks/", (401, 403, 403, 201, 201), _task_body, "multipart"),
    Case("GET", "/api/challenges/pub/tasks/main/items/", OK),
    Case("GET", "/api/challenges/priv/tasks/main/items/?format=csv", MEMBERS),
    Case("PUT", "/api/challenges/pub/tasks/main/truth/", ORGANIZERS, _labels_body, "multipart"),
    Case(
        "PUT", "/api/challenges/priv/tasks/main/truth/", (401, 403, 404, 200, 200), _labels_body, "multipart"
    ),
    Case("GET", "/api/challenges/pub/tasks/main/rescore/", ORGANIZERS),
    Case("POST", "/api/challenges/pub/tasks/main/rescore/", (401, 403, 403, 202, 202)),
    Case("GET", "/api/challenges/pub/submissions/", (401, 200, 200, 200, 200)),
    Case("GET", "/api/challenges/priv/submissions/", (401, 200, 404, 200, 200)),
    Case(
        "POST",
        "/api/challenges/pub/submissions/",
        (401, 201, 201, 201, 201),
        lambda w, role: {"name": "x", "file": _predictions(w)},
        "multipart",
    ),
    Case(
        "POST",
        "/api/challenges/priv/submissions/",
        (401, 201, 404, 201, 201),
        lambda w, role: {"name": "x", "file": _predictions(w)},
        "multipart",
    ),
    Case("GET", "/api/submissions/{mine}/", (401, 200, 404, 200, 200)),
    Case("DELETE", "/api/submissions/{queued}/", (401, 200, 404, 200, 200)),
    Case("POST", "/api/submissions/{mine}/select/", (401, 200, 404, 403, 403)),  # only the team selects
    Case("GET", "/api/submissions/999999/", (401, 404, 404, 404, 404)),
    Case("GET", "/api/challenges/pub/leaderboard/", OK),
    Case("GET", "/api/challenges/pub/leaderboard/?format=csv", OK),
    Case("GET", "/api/challenges/pub/leaderboard/?split=private", REVEALED_ONLY_TO_ORGANIZERS),
    Case("GET", "/api/challenges/pub/leaderboard/?split=private&format=csv", REVEALED_ONLY_TO_ORGANIZERS),
    Case("GET", "/api/challenges/priv/leaderboard/", MEMBERS),
    Case("GET", "/api/challenges/pub/summary/", OK),
    Case("GET", "/api/challenges/pub/summary/?split=private", REVEALED_ONLY_TO_ORGANIZERS),
    Case("GET", "/api/challenges/priv/summary/", MEMBERS),
    Case("GET", "/api/challenges/pub/critical-difference.svg", OK),
    Case("GET", "/api/challenges/pub/critical-difference.svg?split=private", REVEALED_ONLY_TO_ORGANIZERS),
    Case("GET", "/api/challenges/priv/critical-difference.svg", MEMBERS),
    Case("GET", "/api/challenges/pub/teams/", OK),
    Case("GET", "/api/challenges/priv/teams/", MEMBERS),
    Case("GET", "/api/challenges/pub/teams/mine/", (401, 200, 200, 404, 404)),  # the two submitters' teams
    # Moving out of a team that has submissions is refused (limits count per team).
    Case(
        "POST", "/api/challenges/pub/teams/", (401, 409, 409, 201, 201), lambda w, role: {"name": f"t-{role}"}
    ),
    Case(
        "POST",
        "/api/challenges/pub/teams/join/",
        (401, 404, 404, 404, 404),  # a code no team has: 404 (issue 21, item 11)
        lambda w, r: {"invite_code": "x"},
    ),
    Case("GET", "/api/schema/", OK),
    Case("GET", "/api/docs/", OK),
]


@pytest.mark.parametrize("case", MATRIX, ids=[f"{c.method} {c.path}" for c in MATRIX])
@pytest.mark.parametrize("role", ROLES)
def test_permission_matrix(world: World, case: Case, role: str) -> None:
    client = APIClient()
    if role != "anonymous":
        client.force_authenticate(user=world.users[role])
    path = case.path.format(mine=world.mine, queued=world.queued)
    kwargs: dict[str, Any] = {}
    if case.body is not None:
        kwargs = {"data": case.body(world, role), "format": case.fmt}
    response = getattr(client, case.method.lower())(path, **kwargs)
    expected = case.expected[ROLES.index(role)]
    assert response.status_code == expected, (role, case.method, path, response.content[:300])
    if expected >= 400:
        assert set(response.json()) == {"message", "extra"}


@pytest.mark.parametrize("role", ROLES)
def test_lists_show_only_what_the_role_may_see(world: World, role: str) -> None:
    client = APIClient()
    if role != "anonymous":
        client.force_authenticate(user=world.users[role])
    slugs = {c["slug"] for c in client.get("/api/challenges/").json()["results"]}
    assert slugs == ({"pub"} if role in ("anonymous", "other") else {"pub", "priv"})
    if role == "anonymous":
        return
    names = sorted(s["name"] for s in client.get("/api/challenges/pub/submissions/").json()["results"])
    expected = {"participant": ["mine", "queued"], "other": ["theirs"]}.get(
        role, ["mine", "queued", "theirs"]
    )
    assert names == expected


def test_private_board_opens_to_everyone_who_sees_the_challenge_once_revealed(world: World) -> None:
    Challenge.objects.filter(slug="pub").update(private_revealed=True)
    for role in ROLES:
        client = APIClient()
        if role != "anonymous":
            client.force_authenticate(user=world.users[role])
        assert client.get("/api/challenges/pub/leaderboard/?split=private").status_code == 200, role
