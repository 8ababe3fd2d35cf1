"""The OpenAPI schema describes every answer (issue 10 point 8; schemathesis checks it in
tests/reliability/test_fuzz.py): these pin the fixes it led to."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("post", "/api/challenges/%C3%A4%C3%B6/submissions/"),  # not a slug: no route matches
        ("patch", "/api/challenges/x%0Ay/"),
        ("get", "/api/challenges/x%0Ay/critical-difference.svg"),  # a newline in the path
    ],
)
def test_unknown_api_paths_answer_the_json_404_whatever_the_method(client, method: str, path: str) -> None:  # type: ignore[no-untyped-def]
    client.cookies["sessionid"] = "whatever"  # a browser's cookie made Django ask for a CSRF token
    response = getattr(client, method)(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json()["message"] == "No such API endpoint."


def test_every_operation_documents_its_errors_in_the_error_shape(client) -> None:  # type: ignore[no-untyped-def]
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    assert schema["components"]["schemas"]["Error"]["required"] == ["message", "extra"]
    operations = [
        (p, m, op) for p, item in schema["paths"].items() for m, op in item.items() if m != "parameters"
    ]
    assert len(operations) >= 20
    for path, method, op in operations:
        responses = op["responses"]
        assert {"401", "503"} <= responses.keys(), (method, path)
        if "{" in path:
            assert "404" in responses, (method, path)
        for code, response in responses.items():
            if code[0] in "45":
                assert response["content"]["application/json"]["schema"] == {
                    "$ref": "#/components/schemas/Error"
                }
    items = schema["paths"]["/api/challenges/{slug}/tasks/{task}/items/"]["get"]["responses"]["200"]
    assert items["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/PaginatedItemList"
    }
    assert "409" in schema["paths"]["/api/challenges/"]["post"]["responses"]


def test_the_board_rows_are_typed_in_the_schema_by_the_stored_row(client) -> None:  # type: ignore[no-untyped-def]
    """``BoardOutputSerializer.rows`` is the stored row's declaration (``rankings.board.SnapshotRow``),
    not an untyped list of objects (issue 19, item 7); a Ladder board's released columns are a part of it."""
    from leaderboard.rankings.board import ROW_FIELDS
    from leaderboard.rankings.policy import LADDER_COLUMNS

    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    schemas = schema["components"]["schemas"]
    assert schemas["BoardOutput"]["properties"]["rows"]["items"] == {
        "$ref": "#/components/schemas/SnapshotRow"
    }
    row = schemas["SnapshotRow"]["properties"]
    assert list(row) == list(ROW_FIELDS) and set(LADDER_COLUMNS) <= set(row)
    assert row["value"]["type"] == "number" and row["rank"]["type"] == "integer"
    assert row["is_baseline"]["type"] == "boolean" and row["verdict"]["type"] == "string"


def test_every_operation_documents_the_429_it_can_answer_and_answers_it_in_the_error_shape(
    client, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """Issue 21, item 11: a 429 on POST /api/auth/register/ (and any throttled operation) was undocumented."""
    from django.core.cache import cache
    from rest_framework.throttling import SimpleRateThrottle

    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    for path, item in schema["paths"].items():
        for method, op in item.items():
            if method != "parameters":
                assert "Retry-After" in op["responses"]["429"]["headers"], (method, path)
    cache.clear()
    monkeypatch.setattr(
        SimpleRateThrottle, "THROTTLE_RATES", {**SimpleRateThrottle.THROTTLE_RATES, "signup": "1/hour"}
    )
    register = [
        client.post("/api/auth/register/", {"username": f"u{k}", "password": "a long pass phrase 7"})
        for k in range(2)
    ]
    assert [r.status_code for r in register] == [201, 429]
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"anon_read": "1/min"})
    reads = [client.get("/api/challenges/none/leaderboard/", {"split": "nonsense"}) for _ in range(2)]
    assert reads[1].status_code == 429
    for answer in (register[1], reads[1]):
        assert answer["Content-Type"] == "application/json" and int(answer["Retry-After"]) > 0
        assert set(answer.json()) == {"message", "extra"}
    cache.clear()
