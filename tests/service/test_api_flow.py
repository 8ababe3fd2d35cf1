"""The REST API end to end: organizer creates a challenge and a task, participants submit, the board
shows the statistics; every refused upload is a 400 that names file, line and column and stores nothing."""

from __future__ import annotations

import csv
import io

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from leaderboard.rankings.board import ROW_FIELDS
from leaderboard.rankings.models import BoardSnapshot
from leaderboard.submissions.models import Status, Submission
from tests.conftest import wait_for
from tests.service.api_support import (
    client_for,
    create_challenge_over_http,
    file,
)
from tests.service.factories import LABELS, predictions, user

pytestmark = pytest.mark.usefixtures("fresh_throttles")


@pytest.fixture
def board(transactional_db):
    """A challenge made over HTTP; real commits, so scoring runs (in-process) on commit as in production."""
    organizer = user("org")
    ids, truth = create_challenge_over_http(client_for(organizer))
    return organizer, ids, truth


def submit(
    client: APIClient, name: str, data: bytes, *, field: str = "file", slug: str = "toy", **extra: object
):
    return client.post(
        f"/api/challenges/{slug}/submissions/",
        {"name": name, field: file(f"{name}.csv", data), **extra},
        format="multipart",
    )


def test_whole_flow_organizer_task_participants_submit_board_shows_statistics(board) -> None:
    organizer, ids, truth = board
    good, fair = client_for(user("alice")), client_for(user("bob"))

    r = submit(good, "good", predictions(ids, truth, 0.9, 1))
    assert r.status_code == 201, r.content
    assert r.json()["status"] == Status.SCORED, r.json()
    assert [s["split"] for s in r.json()["scores"]] == ["public"]
    r2 = submit(fair, "fair", predictions(ids, truth, 0.7, 2), field="file:main")
    assert r2.status_code == 201, r2.content

    detail = good.get(f"/api/submissions/{r.json()['id']}/").json()
    assert detail["status"] == "scored" and detail["error"] == ""
    assert 0.8 < detail["scores"][0]["value"] <= 1.0

    anonymous = client_for(None)
    body = anonymous.get("/api/challenges/toy/leaderboard/").json()
    assert body["task"] == "main" and body["split"] == "public" and body["metric"] == "accuracy"
    assert body["sequence"] == BoardSnapshot.objects.filter(split="public").latest("sequence").sequence
    assert body["created_at"]
    assert [row["name"] for row in body["rows"]] == ["good", "fair"]
    top = body["rows"][0]
    assert top["rank"] == 1 and top["low"] <= top["value"] <= top["high"] and top["rank_low"] == 1
    assert {"p_value", "p_adjusted", "in_best_set", "items_needed", "diff_low", "diff_high"} <= set(top)
    assert list(top) == [f for f in ROW_FIELDS if f in top]  # the typed row, in its order
    assert body["signature"]["resamples"] == 500 and body["signature"]["metric"] == "accuracy"

    # The tasks list: public fields and the expected file format; the items behind their own URL.
    tasks = anonymous.get("/api/challenges/toy/tasks/").json()
    assert tasks[0]["n_items"] == len(ids) and tasks[0]["labels"] == LABELS
    assert tasks[0]["prediction_format"]["columns"] == ["id", "prediction"]
    page = anonymous.get(tasks[0]["items_url"] + "?limit=5&offset=5").json()
    assert page["count"] == len(ids) and [i["id"] for i in page["results"]] == ids[5:10]
    items_csv = anonymous.get(tasks[0]["items_url"] + "?format=csv")
    assert items_csv["Content-Type"].startswith("text/csv")
    assert items_csv.content.decode().split() == ["id", *ids]

    # Lists: your team's submissions; organizers see every team's; filters and ordering.
    assert [s["name"] for s in good.get("/api/challenges/toy/submissions/").json()["results"]] == ["good"]
    everyone = client_for(organizer).get("/api/challenges/toy/submissions/?ordering=name").json()
    assert [s["name"] for s in everyone["results"]] == ["fair", "good"]
    assert client_for(organizer).get("/api/challenges/toy/submissions/?status=queued").json()["count"] == 0
    assert client_for(organizer).get("/api/challenges/toy/submissions/?task=main").json()["count"] == 2


def test_hidden_labels_never_appear_in_any_response(board) -> None:
    organizer, ids, truth = board
    alice = client_for(user("alice"))
    sid = submit(alice, "a", predictions(ids, truth, 0.8, 1)).json()["id"]
    bad = (
        b"id,prediction\n" + "".join(f"{i},{t}\n" for i, t in zip(ids[:-1], truth[:-1], strict=True)).encode()
    )
    refused = submit(alice, "b", bad)
    assert refused.status_code == 400
    urls = [
        "/api/challenges/", "/api/challenges/toy/", "/api/challenges/toy/tasks/",
        "/api/challenges/toy/tasks/main/items/?format=csv", "/api/challenges/toy/leaderboard/",
        "/api/challenges/toy/leaderboard/?format=csv", f"/api/submissions/{sid}/",
        "/api/challenges/toy/submissions/",
    ]  # fmt: skip
    # The label SET is public (it is the task's vocabulary); the label of an item never is. Any label
    # printed next to an item id, or the column of hidden labels, would be a leak.
    for who in (alice, client_for(organizer)):
        for url in urls:
            text = who.get(url).content.decode()
            for i, label in list(zip(ids, truth, strict=True))[:40]:
                assert f"{i},{label}" not in text and f'"{i}": "{label}"' not in text, url
            assert ",".join(truth[:12]) not in text and " ".join(truth[:12]) not in text, url
    assert ids[-1] in refused.json()["message"]  # the missing id, not its label
    for label in LABELS:
        assert label not in refused.json()["message"]


BAD_FILES = [
    ("empty", b"", {}),
    ("header only", b"id,prediction\n", {}),
    ("wrong columns", b"id,guess\nitem-0000,zebrafinch\n", {"line": 1}),
    ("unknown label", None, {"line": 2}),
    ("duplicate id", None, {"line": 3}),
    ("latin-1", "id,prediction\nitem-0000,zébrafinch\n".encode("latin-1"), {}),
    ("utf-16", "id,prediction\nitem-0000,zebrafinch\n".encode("utf-16"), {}),
    ("NaN prediction", b"id,prediction\nitem-0000,NaN\n", {"line": 2}),
    ("missing column", b"id\nitem-0000\n", {"line": 1}),
    ("extra column", b"id,prediction,x\nitem-0000,zebrafinch,1\n", {"line": 1}),
]


@pytest.mark.parametrize(("case", "data", "where"), BAD_FILES, ids=[c[0] for c in BAD_FILES])
def test_refused_upload_is_400_with_file_line_column_stores_nothing_and_is_not_charged(
    board, case, data, where
) -> None:
    _organizer, ids, truth = board
    if case == "unknown label":
        data = (
            b"id,prediction\n"
            + f"{ids[0]},platypus\n".encode()
            + "".join(f"{i},{t}\n" for i, t in zip(ids[1:], truth[1:], strict=True)).encode()
        )
    if case == "duplicate id":
        data = b"id,prediction\n" + f"{ids[0]},{truth[0]}\n{ids[0]},{truth[0]}\n".encode()
    participant = user("p1")
    client = client_for(participant)
    r = submit(client, "bad", data)
    assert r.status_code == 400, r.content
    body = r.json()
    assert set(body) == {"message", "extra"}
    assert body["extra"]["file"] == "bad.csv" and "bad.csv" in body["message"]
    for key, value in where.items():
        assert body["extra"][key] == value, body
    assert Submission.objects.count() == 0
    # Not charged: the daily limit is still whole.
    for k in range(5):
        assert submit(client, f"ok{k}", predictions(ids, truth, 0.8, k)).status_code == 201
    over = submit(client, "over", predictions(ids, truth, 0.8, 9))
    assert over.status_code == 429
    extra = over.json()["extra"]
    assert {k: extra[k] for k in ("limit", "used")} == {"limit": "daily", "used": 5}
    assert "next_slot_at" in extra and "the next slot opens at" in over.json()["message"]


def test_a_file_over_the_limit_is_refused_while_it_streams_in(board, settings) -> None:
    _organizer, ids, truth = board
    settings.UPLOAD_MAX_BYTES = 1000
    data = predictions(ids, truth, 0.8, 1)
    assert len(data) > 1000
    r = submit(client_for(user("p1")), "big", data)
    assert r.status_code == 400, r.content
    assert r.json() == {
        "message": "big.csv: the file is larger than the limit of 1,000 bytes.",
        "extra": {"file": "big.csv"},
    }
    assert Submission.objects.count() == 0


@pytest.mark.django_db
def test_errors_share_one_shape(settings) -> None:
    anonymous = client_for(None)
    cases = [
        (anonymous.get("/api/challenges/nope/"), 404),
        (anonymous.get("/api/no/such/endpoint/"), 404),
        (anonymous.post("/api/challenges/", {"title": "x"}, format="json"), 401),
        (client_for(user("u")).post("/api/challenges/", {"title": ""}, format="json"), 400),
        (anonymous.post("/api/auth/token/", {"username": "u", "password": "wrong"}, format="json"), 401),
    ]
    for response, code in cases:
        assert response.status_code == code, response.content
        assert set(response.json()) == {"message", "extra"}, response.content
    invalid = cases[3][0].json()
    assert invalid["message"].startswith("Invalid input. title:") and "title" in invalid["extra"]["fields"]


@pytest.mark.django_db
def test_token_obtain_use_and_revoke_and_register() -> None:
    anonymous = client_for(None)
    r = anonymous.post(
        "/api/auth/register/", {"username": "newbie", "password": "a-long-test-password-123"}, format="json"
    )
    assert r.status_code == 201, r.content
    assert (
        anonymous.post(
            "/api/auth/register/",
            {"username": "newbie", "password": "a-long-test-password-123"},
            format="json",
        ).status_code
        == 409
    )
    weak = anonymous.post("/api/auth/register/", {"username": "weak", "password": "123"}, format="json")
    assert weak.status_code == 400 and list(weak.json()["extra"]["fields"]) == ["password"]
    assert "entirely numeric" in weak.json()["message"]  # the schema states it (pattern \\D)
    similar = anonymous.post(
        "/api/auth/register/", {"username": "weakling", "password": "weakling1"}, format="json"
    )
    assert similar.status_code == 400 and similar.json()["extra"] == {"field": "password"}  # Django's rule

    token = anonymous.post(
        "/api/auth/token/", {"username": "newbie", "password": "a-long-test-password-123"}, format="json"
    ).json()["token"]
    assert token == r.json()["token"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    created = client.post("/api/challenges/", {"title": "Mine", "slug": "mine"}, format="json")
    assert created.status_code == 201 and created.json()["is_organizer"] is True
    assert client.delete("/api/auth/token/").status_code == 204
    assert not Token.objects.filter(key=token).exists()
    assert client.get("/api/challenges/").status_code == 401  # the revoked token is refused


@pytest.mark.django_db
def test_token_and_register_and_submit_are_throttled(monkeypatch) -> None:
    from rest_framework.throttling import SimpleRateThrottle

    monkeypatch.setattr(
        SimpleRateThrottle, "THROTTLE_RATES", {"token": "2/min", "login": "1/min", "submit": "2/min"}
    )
    anonymous = client_for(None)
    codes = [
        anonymous.post("/api/auth/token/", {"username": "x", "password": "y"}, format="json").status_code
        for _ in range(3)
    ]
    assert codes == [401, 401, 429]  # wrong credentials, then the rate
    throttled = anonymous.post("/api/auth/token/", {"username": "x", "password": "y"}, format="json")
    assert (
        throttled.json()["message"].startswith("Request was throttled")
        and throttled.json()["extra"]["wait"] > 0
    )
    assert "Retry-After" in throttled
    codes = [
        anonymous.post(
            "/api/auth/register/",
            {"username": f"u{k}", "password": "a-long-test-password-123"},
            format="json",
        ).status_code
        for k in range(2)
    ]
    assert codes == [201, 429]

    organizer = client_for(user("org"))
    organizer.post("/api/challenges/", {"slug": "c", "title": "C"}, format="json")
    codes = [submit(organizer, "x", b"", slug="c").status_code for _ in range(3)]
    assert codes == [400, 400, 429]  # refused uploads count: the throttle protects the parser
    assert organizer.get("/api/challenges/c/submissions/").status_code == 200  # reads are not throttled


def test_csv_export_neutralises_formulas_in_names(board) -> None:
    _organizer, ids, truth = board
    for k, name in enumerate(['=HYPERLINK("http://evil")', "+1+1", "-2+3", "@SUM(A1)", "plain", "-2"]):
        r = submit(client_for(user(f"u{k}")), name, predictions(ids, truth, 0.6 + k * 0.05, k))
        assert r.status_code == 201, r.content
    response = client_for(None).get("/api/challenges/toy/leaderboard/?format=csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    names = sorted(r["name"] for r in rows)
    # A name that is a plain number runs nothing and is written as it is (ids and numbers are never altered).
    assert names == sorted(['\'=HYPERLINK("http://evil")', "'+1+1", "'-2+3", "'@SUM(A1)", "plain", "-2"])
    assert all(not r["name"].startswith(("=", "+", "@")) for r in rows)
    assert float(rows[0]["value"]) > 0  # numbers stay numbers
    same = client_for(None).get("/api/challenges/toy/leaderboard/", HTTP_ACCEPT="text/csv")
    assert same.content == response.content


def test_private_split_hidden_until_reveal_and_rescore_progress(transactional_db) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.service.factories import make_truth

    organizer = client_for(user("org"))
    organizer.post("/api/challenges/", {"slug": "kag", "title": "Kag", "resamples": 200}, format="json")
    ids, truth = make_truth(200)
    rows = "".join(
        f"{i},{t},{'private' if k % 2 else 'public'}\n"
        for k, (i, t) in enumerate(zip(ids, truth, strict=True))
    )
    labels_file = SimpleUploadedFile("truth.csv", b"id,label,split\n" + rows.encode())
    r = organizer.post(
        "/api/challenges/kag/tasks/",
        {
            "slug": "main",
            "title": "Main",
            "metric": "accuracy",
            "labels": LABELS,
            "split_column": "split",
            "truth": labels_file,
        },
        format="multipart",
    )
    assert r.status_code == 201, r.content
    assert r.json()["has_private_split"] is True
    assert "split" not in r.json() and "private" not in str(r.json()["prediction_format"])

    alice = client_for(user("alice"))
    sid = submit(alice, "a", predictions(ids, truth, 0.8, 1), slug="kag").json()["id"]
    assert [s["split"] for s in alice.get(f"/api/submissions/{sid}/").json()["scores"]] == ["public"]
    assert alice.get("/api/challenges/kag/leaderboard/?split=private").status_code == 404
    assert client_for(None).get("/api/challenges/kag/leaderboard/?split=private").status_code == 404
    assert organizer.get("/api/challenges/kag/leaderboard/?split=private").json()["rows"][0]["name"] == "a"

    assert alice.post("/api/challenges/kag/reveal/").status_code == 403
    assert organizer.post("/api/challenges/kag/reveal/").status_code == 409  # open: close, or while_open
    revealed = organizer.post("/api/challenges/kag/reveal/", {"while_open": True}, format="json")
    assert revealed.json()["private_revealed"] is True
    assert alice.get("/api/challenges/kag/leaderboard/?split=private").json()["rows"][0]["name"] == "a"
    assert sorted(s["split"] for s in alice.get(f"/api/submissions/{sid}/").json()["scores"]) == [
        "private",
        "public",
    ]

    # Fixed labels, then a re-score with progress.
    fixed = SimpleUploadedFile("fixed.csv", b"id,label,split\n" + rows.encode())
    assert (
        organizer.put(
            "/api/challenges/kag/tasks/main/truth/",
            {"truth": fixed, "split_column": "split"},
            format="multipart",
        ).status_code
        == 200
    )
    assert organizer.get("/api/challenges/kag/tasks/main/rescore/").status_code == 404
    job = organizer.post("/api/challenges/kag/tasks/main/rescore/")
    assert job.status_code == 202 and job.json()["total"] == 1
    progress = organizer.get("/api/challenges/kag/tasks/main/rescore/").json()
    assert progress["state"] == "done" and progress["progress"] == 1.0


def test_cancel_select_and_summary_and_diagram(board) -> None:
    organizer, ids, truth = board
    alice = client_for(user("alice"))
    sid = submit(alice, "a", predictions(ids, truth, 0.8, 1)).json()["id"]
    conflict = alice.delete(f"/api/submissions/{sid}/")
    assert conflict.status_code == 409 and "queued" in conflict.json()["message"]
    # Selection is off unless the challenge lets teams select.
    assert alice.post(f"/api/submissions/{sid}/select/").status_code == 409
    client_for(organizer).patch("/api/challenges/toy/", {"entry_selection": "selected"}, format="json")
    selected = alice.post(f"/api/submissions/{sid}/select/")
    assert selected.status_code == 200 and selected.json()["selected"] is True

    # One task: the summary exists but says why there is no comparison; no diagram.
    summary = client_for(None).get("/api/challenges/toy/summary/")
    if summary.status_code == 200:
        assert summary.json()["summary"]["available"] is False and summary.json()["svg_url"] is None
    else:
        assert summary.status_code == 404
    svg = client_for(None).get("/api/challenges/toy/critical-difference.svg")
    assert svg.status_code == 404 and svg["Content-Type"] == "application/json"


def test_cancel_a_queued_submission(board, monkeypatch) -> None:
    _organizer, ids, truth = board
    from leaderboard.submissions import ports

    monkeypatch.setattr(ports.submission_dispatch, "_impl", lambda **kw: False)  # the broker is "down"
    alice = client_for(user("alice"))
    sid = submit(alice, "a", predictions(ids, truth, 0.8, 1)).json()["id"]
    assert alice.get(f"/api/submissions/{sid}/").json()["status"] == "queued"
    cancelled = alice.delete(f"/api/submissions/{sid}/")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert cancelled.json()["charged"] is False


def test_multi_task_challenge_summary_and_critical_difference_svg(transactional_db) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.service.factories import csv_bytes, make_truth

    organizer = client_for(user("org"))
    organizer.post("/api/challenges/", {"slug": "multi", "title": "Multi", "resamples": 200}, format="json")
    data = {}
    for k, slug in enumerate(["t1", "t2", "t3"]):
        ids, truth = make_truth(120 + 10 * k)
        data[slug] = (ids, truth)
        labels_file = SimpleUploadedFile(
            "truth.csv", csv_bytes("id,label", list(zip(ids, truth, strict=True)))
        )
        r = organizer.post(
            "/api/challenges/multi/tasks/",
            {"slug": slug, "title": slug, "metric": "accuracy", "labels": LABELS, "truth": labels_file},
            format="multipart",
        )
        assert r.status_code == 201, r.content
    one_file = submit(client_for(user("x")), "x", b"id,prediction\n", slug="multi")
    assert one_file.status_code == 400 and "file:t1" in one_file.json()["message"]
    for j, (who, acc) in enumerate([("a", 0.9), ("b", 0.7), ("c", 0.5)]):
        parts: dict[str, object] = {"name": who}
        for slug, (ids, truth) in data.items():
            parts[f"file:{slug}"] = file(f"{slug}.csv", predictions(ids, truth, acc, j))
        r = client_for(user(who)).post("/api/challenges/multi/submissions/", parts, format="multipart")
        assert r.status_code == 201 and r.json()["status"] == "scored", r.content
    assert client_for(None).get("/api/challenges/multi/leaderboard/?task=t3").json()["task"] == "t3"
    summary = client_for(None).get("/api/challenges/multi/summary/")
    assert summary.status_code == 200, summary.content
    assert summary.json()["summary"]["available"] is True
    svg = client_for(None).get(summary.json()["svg_url"])
    assert svg.status_code == 200 and svg["Content-Type"].startswith("image/svg+xml")
    assert svg.content.lstrip().startswith((b"<?xml", b"<svg")) and b"<script" not in svg.content
    assert "default-src 'none'" in svg["Content-Security-Policy"]


@pytest.mark.django_db
def test_schema_builds_without_warnings_and_swagger_is_served_offline(client) -> None:
    from django.core.management import call_command

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null")
    schema = client.get("/api/schema/?format=json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    assert "/api/challenges/{slug}/leaderboard/" in paths and "/api/submissions/{id}/" in paths
    page = client.get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "swagger-ui" in html and "cdn.jsdelivr" not in html and "unpkg" not in html
    # The UI's script comes from our own static files (drf-spectacular-sidecar), not the Internet.
    import re

    script = re.search(r'src="([^"]*swagger-ui-bundle\.js)"', html)
    assert script and script.group(1).startswith("/static/")
    assert client.get(script.group(1)).status_code == 200


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_real_workers_score_a_submission_made_over_http(worker_factory) -> None:
    organizer = user("org")
    ids, truth = create_challenge_over_http(client_for(organizer))
    worker_factory()
    alice = client_for(user("alice"))
    r = submit(alice, "remote", predictions(ids, truth, 0.85, 3))
    assert r.status_code == 201 and r.json()["status"] in ("queued", "running", "scored")
    wait_for(
        lambda: alice.get(f"/api/submissions/{r.json()['id']}/").json()["status"] == "scored",
        timeout=90,
        what="scoring",
    )
    rows = wait_for(
        lambda: client_for(None).get("/api/challenges/toy/leaderboard/").json()["rows"],
        timeout=60,
        what="the board",
    )
    assert rows[0]["name"] == "remote" and rows[0]["rank"] == 1
