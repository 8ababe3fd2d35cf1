"""What a participant can learn (issue 10, points 1, 5 and 8): every channel that carries a number computed
from the hidden labels, and the doors around them.

- runs per submission are a task setting (default 5), refused above it by the API and the site;
- every number a participant sees is rounded to the board's precision (``rankings.precision``): the API's
  submission detail and board (JSON and CSV), the site's board, downloads, submission and pairwise pages;
  each run's value, the runs' spread and exact discordant counts are for organizers only; the board's
  channels are checked for every registered board mode (``rankings.policy.MODES``);
- sign-up is throttled per address and over the whole service; a challenge can require approval;
- the admin's log-in is throttled like the site's;
- descriptions are bounded; CSV downloads never alter ids and files built from them upload; more than 100
  file parts answer in the API's JSON shape.
"""

from __future__ import annotations

import csv
import html as htmllib
import io
import json
import re
from collections.abc import Iterator

import pytest
from django.contrib import admin
from django.contrib.auth.models import AnonymousUser
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from rest_framework.throttling import SimpleRateThrottle

from leaderboard.challenges.models import Challenge, Participant, Task
from leaderboard.challenges.services import NOT_APPROVED, challenge_create, task_create, task_public_mode_set
from leaderboard.rankings.models import BoardSnapshot
from leaderboard.rankings.policy import MODES
from leaderboard.rankings.precision import default_decimals, round_to
from leaderboard.rankings.selectors import Channel, reader_view
from leaderboard.submissions.models import DESCRIPTION_MAX_CHARS, Submission
from tests.service.api_support import FAST_HASHERS, PASSWORD, client_for, file, reset_throttles
from tests.service.factories import LABELS, challenge_with_task, csv_bytes, make_truth, predictions, user

#: A date and time as pages print them (ISO, with seconds and fractions): removed before digit checks.
TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[+-]\d{2}:?\d{2}|Z)?")

# Every scope the service defines (sign-up, anonymous reads...), with the ones these tests exercise raised.
RATES = {
    **SimpleRateThrottle.THROTTLE_RATES,
    "token": "1000/min",
    "login": "1000/min",
    "submit": "1000/min",
    "anon_read": "1000/min",
}


@pytest.fixture(autouse=True)
def _fresh(settings, monkeypatch) -> Iterator[None]:
    settings.PASSWORD_HASHERS = FAST_HASHERS
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", dict(RATES))
    reset_throttles()
    yield
    reset_throttles()


def _toy(mode: str) -> tuple:
    """A challenge of 240 items (default precision: 1 decimal), its public board in ``mode``, and a
    participant with 3 runs scored."""
    organizer = user("org")
    challenge, task, ids, truth = challenge_with_task(organizer, resamples=200)
    if mode != task.public_mode:  # the Ladder's step at the board's precision: 1 decimal either way
        task = task_public_mode_set(task=task, public_mode=mode, ladder_eta=0.1 if mode == "ladder" else None)
    alice = user("alice")
    runs = [predictions(ids, truth, acc, k) for k, acc in enumerate((0.61, 0.73, 0.87))]
    response = client_for(alice).post(
        "/api/challenges/toy/submissions/",
        {"name": "three seeds", "file": [file(f"r{k}.csv", r) for k, r in enumerate(runs)]},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    return organizer, alice, challenge, task, ids, truth, response.json()["id"]


@pytest.fixture
def toy(transactional_db):
    return _toy("plain")


@pytest.fixture(params=sorted(MODES))
def toy_every_mode(request, transactional_db):
    """The toy challenge once per registered board mode (``rankings.policy.MODES``, issue 19)."""
    return _toy(request.param)


def _decimals_of(x: float) -> int:
    text = repr(float(x))
    return 0 if "." not in text else len(text.split(".")[1].rstrip("0"))


# --- runs per submission ---------------------------------------------------------------------------------
def test_runs_per_submission_default_to_5_and_more_are_refused_uncharged_by_api_and_site(
    transactional_db,
) -> None:
    organizer = user("org")
    _challenge, task, ids, truth = challenge_with_task(organizer, resamples=200)
    assert task.max_runs == 5
    alice = user("alice")
    six = [file(f"r{k}.csv", predictions(ids, truth, 0.7, k)) for k in range(6)]
    response = client_for(alice).post(
        "/api/challenges/toy/submissions/", {"name": "six", "file": six}, format="multipart"
    )
    assert response.status_code == 400
    body = response.json()
    assert body["message"].startswith(
        "Task 'main' takes at most 5 runs (files) per submission; this submission has 6."
    )
    assert body["extra"] == {"field": "files", "task": "main", "limit": 5, "runs": 6}
    assert not Submission.objects.exists()  # nothing stored, nothing charged

    web = Client()
    web.force_login(alice)
    response = web.post(
        reverse("submit", args=["toy"]),
        {
            "name": "six",
            "file_main": [SimpleUploadedFile(f"r{k}.csv", predictions(ids, truth, 0.7, k)) for k in range(6)],
        },
    )
    assert response.status_code == 400
    assert "takes at most 5 runs" in htmllib.unescape(response.content.decode())
    assert not Submission.objects.exists()

    # An organizer sets the limit per task (API field ``max_runs``); 1 run only here.
    org = client_for(organizer)
    ids2, truth2 = make_truth(100)
    response = org.post(
        "/api/challenges/toy/tasks/",
        {"slug": "one", "title": "One run", "metric": "accuracy", "labels": ",".join(LABELS), "max_runs": 1,
         "decimals": 3, "truth": file("t.csv", csv_bytes("id,label", list(zip(ids2, truth2, strict=True))))},
        format="multipart",
    )  # fmt: skip
    assert response.status_code == 201, response.content
    assert response.json()["max_runs"] == 1 and response.json()["decimals"] == 3
    two = [file(f"r{k}.csv", predictions(ids2, truth2, 0.7, k)) for k in range(2)]
    response = client_for(alice).post(
        "/api/challenges/toy/submissions/", {"name": "two", "file:one": two}, format="multipart"
    )
    assert response.status_code == 400 and response.json()["extra"]["limit"] == 1


# --- the board's precision --------------------------------------------------------------------------------
def test_default_precision_follows_the_number_of_items() -> None:
    assert [default_decimals(n) for n in (40, 240, 1_000, 10_000, 40_000)] == [1, 1, 2, 2, 3]
    assert round_to(0.86666, 2) == 0.87 and round_to(-0.0001, 2) == 0.0 and round_to(None, 2) is None


def test_a_participant_sees_one_rounded_value_per_task_organizers_see_each_run(toy) -> None:
    organizer, alice, _challenge, task, _ids, _truth, pk = toy
    assert task.decimals == 1
    mine = client_for(alice).get(f"/api/submissions/{pk}/").json()
    (score,) = mine["scores"]
    assert score["runs"] == 3 and score["run_values"] is None and score["decimals"] == 1
    assert _decimals_of(score["value"]) <= 1
    full = client_for(organizer).get(f"/api/submissions/{pk}/").json()["scores"][0]
    assert len(full["run_values"]) == 3 and full["decimals"] is None
    assert _decimals_of(full["value"]) > 1 and round(full["value"], 1) == score["value"]
    listing = client_for(alice).get("/api/challenges/toy/submissions/").json()["results"][0]["scores"][0]
    assert listing == score


def test_every_board_channel_is_rounded_and_hides_each_run(toy_every_mode) -> None:
    """For every board mode: whatever a mode releases, no number leaves finer than the board's precision."""
    organizer, alice, _challenge, task, _ids, _truth, pk = toy_every_mode
    stored = BoardSnapshot.objects.filter(task=task).latest("sequence").rows[0]
    assert stored["seed_sd"] is not None and _decimals_of(stored["value"]) > 1  # stored in full
    assert "run_values" not in stored  # the board's rows never carry a run's own value

    def check_row(row: dict) -> None:
        for key in ("value", "diff", "diff_se", "low", "high", "diff_low", "diff_high"):
            if row.get(key) is not None:
                assert _decimals_of(row[key]) <= 1, (key, row[key])
        # the seed spread is shown (issue 11), but at the board's precision, like the value: at more digits
        # it would tell whether two runs differ by one item (a Ladder board does not show it at all)
        for key in ("seed_sd", "test_set_sd"):
            assert row.get(key) is None or _decimals_of(row[key]) <= 1, (key, row[key])
        assert not any(k.startswith("run_") and row[k] is not None for k in row if k != "run_mean")

    for who in (None, alice, organizer):  # the public board is one page for everyone
        board = client_for(who).get("/api/challenges/toy/leaderboard/").json()
        check_row(board["rows"][0])
        assert board["signature"]["decimals"] == 1
    as_csv = client_for(alice).get("/api/challenges/toy/leaderboard/?format=csv").content.decode()
    (row,) = list(csv.DictReader(io.StringIO(as_csv)))
    assert _decimals_of(float(row["value"])) <= 1 and _decimals_of(float(row.get("seed_sd") or 0)) <= 1
    assert not any(k.startswith("runs.") for k in row)

    web = Client()
    download = json.loads(web.get(reverse("board_download", args=["toy", "main", "json"])).content)
    check_row(download["rows"][0])
    as_csv = web.get(reverse("board_download", args=["toy", "main", "csv"])).content.decode()
    (row,) = list(csv.DictReader(io.StringIO(as_csv)))
    assert _decimals_of(float(row["value"])) <= 1 and _decimals_of(float(row.get("seed_sd") or 0)) <= 1
    assert row.get("run_sd", "") == "" and row.get("run_min", "") == ""
    page = htmllib.unescape(web.get(reverse("challenge", args=["toy"])).content.decode())
    # timestamps (the snapshot's "computed at", ...) can hold any digits, "...40.143384" held "0.14"
    numbers = TIMESTAMP.sub("", page)
    assert f"{stored['value']:.4f}" not in numbers and str(stored["seed_sd"]) not in numbers
    assert f"{round(stored['value'], 1):.1f}" in page
    web.force_login(alice)
    page = htmllib.unescape(web.get(reverse("submission", args=[pk])).content.decode())
    assert f"{stored['value']:.4f}" not in page and f"{round(stored['value'], 1):.1f}" in page
    mine = htmllib.unescape(web.get(reverse("my_submissions", args=["toy"])).content.decode())
    assert f"{stored['value']:.4f}" not in mine
    status = web.get(reverse("submission_status", args=[pk])).json()
    assert set(status) == {"id", "status", "status_display", "error", "on_board", "not_counted", "final"}
    assert not any(ch.isdigit() for ch in status["not_counted"])  # empty here; never a number of a score


def test_pairwise_and_rank_pages_are_rounded_for_participants(toy_every_mode) -> None:
    """Offered by the mode: rounded; not offered (a Ladder board before the reveal): refused, saying why."""
    _organizer, _alice, _challenge, task, ids, truth, _pk = toy_every_mode
    bob = user("bob")
    response = client_for(bob).post(
        "/api/challenges/toy/submissions/",
        {"name": "bob", "file": file("b.csv", predictions(ids, truth, 0.66, 9))},
        format="multipart",
    )
    assert response.status_code == 201
    snap = BoardSnapshot.objects.filter(task=task).latest("sequence")
    web = Client()
    reader = reader_view(task, "public", AnonymousUser())
    ranks = web.get(reverse("ranks", args=["toy", "main"]))
    assert ranks.status_code == (200 if reader.allows(Channel.RANKS) else 404)
    a, b = (r["submission_id"] for r in snap.rows)
    pairwise = web.get(reverse("pairwise", args=["toy", "main"]), {"a": a, "b": b})
    page = htmllib.unescape(pairwise.content.decode())
    assert f"{snap.pairwise['difference'][0][1]:+.4f}" not in page
    if not reader.allows(Channel.PAIRWISE):
        assert pairwise.status_code == 404 and reader.refusal in page


# --- sign-up and approval ---------------------------------------------------------------------------------
def test_sign_up_is_throttled_per_address_and_over_the_whole_service(db, monkeypatch) -> None:
    monkeypatch.setattr(
        SimpleRateThrottle, "THROTTLE_RATES", {**RATES, "signup": "3/hour", "signup_global": "5/hour"}
    )
    api = client_for(None)
    codes = [
        api.post("/api/auth/register/", {"username": f"a{k}", "password": PASSWORD}, REMOTE_ADDR="10.0.0.1").status_code
        for k in range(4)
    ]  # fmt: skip
    assert codes == [201, 201, 201, 429]
    throttled = api.post(
        "/api/auth/register/", {"username": "a9", "password": PASSWORD}, REMOTE_ADDR="10.0.0.1"
    )
    assert throttled.json()["extra"]["wait"] > 0 and int(throttled["Retry-After"]) > 0
    # Other addresses: two more sign-ups, then the service-wide bound holds whatever the address.
    codes = [
        api.post("/api/auth/register/", {"username": f"b{k}", "password": PASSWORD}, REMOTE_ADDR=f"10.0.1.{k}").status_code
        for k in range(3)
    ]  # fmt: skip
    assert codes == [201, 201, 429]
    site = Client(REMOTE_ADDR="10.0.2.1")
    response = site.post(
        "/accounts/signup/", {"username": "s1", "password1": PASSWORD, "password2": PASSWORD}
    )
    assert response.status_code == 429 and "Retry-After" in response


def test_a_challenge_can_require_approved_participants_api_site_and_admin(transactional_db) -> None:
    organizer = user("org")
    challenge, _task, ids, truth = challenge_with_task(organizer, resamples=200, requires_approval=True)
    alice, bob = user("alice"), user("bob")
    data = predictions(ids, truth, 0.7, 1)

    def api_submit(who) -> int:
        return (
            client_for(who)
            .post(
                "/api/challenges/toy/submissions/",
                {"name": "m", "file": file("p.csv", data)},
                format="multipart",
            )
            .status_code
        )

    assert client_for(alice).get("/api/challenges/toy/").json()["requires_approval"] is True
    assert api_submit(alice) == 403
    refused = client_for(alice).post(
        "/api/challenges/toy/submissions/", {"name": "m", "file": file("p.csv", data)}, format="multipart"
    )
    assert refused.json()["message"] == NOT_APPROVED
    assert client_for(alice).post("/api/challenges/toy/participation/").status_code == 201
    assert client_for(alice).get("/api/challenges/toy/participation/").json()["approved"] is False
    assert api_submit(alice) == 403 and not Submission.objects.exists()
    assert client_for(alice).post("/api/challenges/toy/participants/alice/").status_code == 403
    waiting = client_for(organizer).get("/api/challenges/toy/participants/?approved=false").json()
    assert [p["username"] for p in waiting] == ["alice"]
    assert client_for(organizer).post("/api/challenges/toy/participants/alice/").json()["approved"] is True
    assert api_submit(alice) == 201

    # The site: the submit page offers to ask; the organizer page approves.
    web = Client()
    web.force_login(bob)
    page = htmllib.unescape(web.get(reverse("submit", args=["toy"])).content.decode())
    assert "Ask to take part" in page
    assert web.post(reverse("participation", args=["toy"])).status_code == 302
    assert "You asked to take part" in htmllib.unescape(
        web.get(reverse("submit", args=["toy"])).content.decode()
    )
    response = web.post(
        reverse("submit", args=["toy"]), {"name": "m", "file_main": SimpleUploadedFile("p.csv", data)}
    )
    assert response.status_code == 403
    org = Client()
    org.force_login(organizer)
    assert "bob: waiting since" in htmllib.unescape(
        org.get(reverse("organize", args=["toy"])).content.decode()
    )
    assert org.post(reverse("participant_decide", args=["toy", "bob"])).status_code == 302
    assert Participant.objects.get(user=bob).approved
    response = web.post(
        reverse("submit", args=["toy"]), {"name": "m", "file_main": SimpleUploadedFile("p.csv", data)}
    )
    assert response.status_code == 302

    # The admin: staff approve in bulk.
    carol = user("carol")
    Participant.objects.create(challenge=challenge, user=carol)
    staff = Client()
    staff.force_login(user("root", is_staff=True, is_superuser=True))
    assert Participant in admin.site._registry
    pk = Participant.objects.get(user=carol).pk
    response = staff.post("/admin/challenges/participant/", {"action": "approve", "_selected_action": [pk]})
    assert response.status_code == 302 and Participant.objects.get(user=carol).approved


# --- the admin's log-in ------------------------------------------------------------------------------------
def test_admin_login_is_throttled_like_the_sites(db, monkeypatch) -> None:
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {**RATES, "login": "5/min"})
    user("root", is_staff=True, is_superuser=True)
    client = Client()
    codes = [
        client.post("/admin/login/", {"username": "root", "password": f"guess{k}"}).status_code
        for k in range(7)
    ]
    assert codes == [200] * 5 + [429] * 2, codes
    right = client.post("/admin/login/", {"username": "root", "password": PASSWORD})
    assert right.status_code == 429 and int(right["Retry-After"]) > 0  # even the right password waits
    assert client.get("/admin/login/").status_code == 200  # reading the form is never throttled


# --- bounded text, ids, file parts ---------------------------------------------------------------------------
def test_descriptions_are_bounded_with_a_clear_400(transactional_db) -> None:
    organizer = user("org")
    _, _, ids, truth = challenge_with_task(organizer, resamples=200)
    alice = client_for(user("alice"))
    data = predictions(ids, truth, 0.7, 1)
    long = "x" * (DESCRIPTION_MAX_CHARS + 1)
    response = alice.post(
        "/api/challenges/toy/submissions/",
        {"name": "m", "description": long, "file": file("p.csv", data)},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json()["message"] == (
        f"Invalid input. description: Ensure this field has no more than {DESCRIPTION_MAX_CHARS} characters."
    )
    assert not Submission.objects.exists()
    web = Client()
    web.force_login(user("bob"))
    response = web.post(
        reverse("submit", args=["toy"]),
        {"name": "m", "description": long, "file_main": SimpleUploadedFile("p.csv", data)},
    )
    assert response.status_code == 400 and not Submission.objects.exists()
    org = client_for(organizer)
    response = org.patch("/api/challenges/toy/", {"description": "y" * 20_001}, format="json")
    assert response.status_code == 400 and "description" in response.json()["message"]
    ids2, truth2 = make_truth(50)
    response = org.post(
        "/api/challenges/toy/tasks/",
        {"slug": "t2", "title": "T2", "metric": "accuracy", "description": "z" * 5_001,
         "truth": file("t.csv", csv_bytes("id,label", list(zip(ids2, truth2, strict=True))))},
        format="multipart",
    )  # fmt: skip
    assert response.status_code == 400 and "description" in response.json()["message"]


def _task_with_ids(ids: list[str]) -> tuple[Challenge, Task, list[str]]:
    organizer = user("org")
    challenge = challenge_create(organizer=organizer, slug="ids", title="Ids", resamples=200)
    truth = [LABELS[k % 3] for k in range(len(ids))]
    data = ("id,label\n" + "".join(f"{i},{t}\n" for i, t in zip(ids, truth, strict=True))).encode()
    task = task_create(
        challenge=challenge,
        slug="main",
        title="Main",
        metric="accuracy",
        truth=data,
        truth_name="t.csv",
        labels=LABELS,
    )
    return challenge, task, truth


ODD_IDS = ["-7", "+3", "1e5", "-0.5", "=10", "-a", "@b", "+x1", "plain", "007"]


def test_items_csv_keeps_ids_exact_and_files_built_from_it_upload(transactional_db) -> None:
    _challenge, _task, _truth = _task_with_ids(ODD_IDS)
    response = client_for(None).get("/api/challenges/ids/tasks/main/items/?format=csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    written = [r[0] for r in rows[1:]]
    # Numbers and plain ids are written as they are; only formula-like text is neutralised.
    assert sorted(written) == sorted(
        ["-7", "+3", "1e5", "-0.5", "'=10", "'-a", "'@b", "'+x1", "plain", "007"]
    )
    built = "id,prediction\n" + "".join(f"{i},{LABELS[0]}\n" for i in written)
    alice = client_for(user("alice"))
    response = alice.post(
        "/api/challenges/ids/submissions/",
        {"name": "built", "file": file("p.csv", built.encode())},
        format="multipart",
    )
    assert response.status_code == 201, response.content


def test_example_csv_neutralises_formula_ids_the_same_way_and_uploads(transactional_db) -> None:
    _challenge, _task, _truth = _task_with_ids(ODD_IDS)
    alice = user("alice")
    web = Client()
    web.force_login(alice)
    example = web.get(reverse("example", args=["ids", "main"])).content
    written = [r[0] for r in list(csv.reader(io.StringIO(example.decode())))[1:]]
    assert sorted(written) == sorted(
        ["-7", "+3", "1e5", "-0.5", "'=10", "'-a", "'@b", "'+x1", "plain", "007"]
    )
    response = web.post(
        reverse("submit", args=["ids"]), {"name": "ex", "file_main": SimpleUploadedFile("e.csv", example)}
    )
    assert response.status_code == 302, htmllib.unescape(response.content.decode())[-2000:]


def test_more_than_100_file_parts_get_the_json_error_shape(transactional_db) -> None:
    organizer = user("org")
    challenge_with_task(organizer, resamples=200)
    parts = [file(f"r{k}.csv", b"id,prediction\n") for k in range(101)]
    response = client_for(user("alice")).post(
        "/api/challenges/toy/submissions/", {"name": "many", "file": parts}, format="multipart"
    )
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert response.json() == {
        "message": "The request has more than 100 file parts; send at most 100.",
        "extra": {"limit": 100},
    }


def test_the_cross_task_summary_shows_values_at_each_tasks_precision(transactional_db) -> None:
    organizer = user("org")
    challenge, _task, ids, truth = challenge_with_task(organizer, resamples=200)
    task_create(
        challenge=challenge, slug="second", title="Second", metric="accuracy", labels=LABELS, decimals=2,
        truth=csv_bytes("id,label", list(zip(ids, truth, strict=True))), truth_name="t.csv",
    )  # fmt: skip
    for k, who in enumerate(("alice", "bob")):
        files = {
            "file:main": file("m.csv", predictions(ids, truth, 0.6 + 0.1 * k, k)),
            "file:second": file("s.csv", predictions(ids, truth, 0.65 + 0.1 * k, 10 + k)),
        }
        response = client_for(user(who)).post(
            "/api/challenges/toy/submissions/", {"name": who, **files}, format="multipart"
        )
        assert response.status_code == 201, response.content
    summary = client_for(None).get("/api/challenges/toy/summary/").json()["summary"]
    assert summary["tasks"] == ["main", "second"]
    main, second = summary["scores"]
    assert all(_decimals_of(v) <= 1 for v in main) and all(_decimals_of(v) <= 2 for v in second)
    assert any(_decimals_of(v) == 2 for v in second)
    page = htmllib.unescape(Client().get(reverse("summary", args=["toy"])).content.decode())
    stored = challenge.summaries.latest("sequence").data["scores"]
    assert all(f"{v}" not in page for line in stored for v in line if _decimals_of(v) > 2)
