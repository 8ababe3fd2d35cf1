"""The board page and the board API are cached per snapshot: the cached answer equals the uncached one,
and a new snapshot is shown at once (docs/reliability.md, "Load": 1,000 rows took 0.4 s to draw)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from leaderboard.submissions.models import Status
from leaderboard.submissions.services import submission_create
from tests.service.factories import challenge_with_task, predictions, upload, user


@pytest.fixture
def board(transactional_db):  # type: ignore[no-untyped-def]
    challenge, _task, ids, truth = challenge_with_task(user("org"), slug="cached")
    for i, name in enumerate(["alpha", "beta"]):
        _submit(challenge, ids, truth, name, 0.6 + 0.2 * i, i)
    return challenge, ids, truth


def _submit(challenge, ids, truth, name: str, accuracy: float, seed: int) -> None:  # type: ignore[no-untyped-def]
    sub = submission_create(
        challenge=challenge,
        user=user(name),
        name=name,
        files={"main": [upload(f"{name}.csv", predictions(ids, truth, accuracy, seed))]},
    )
    sub.refresh_from_db()
    assert sub.status == Status.SCORED, sub.error


def test_cached_api_board_equals_the_uncached_rendering(client, board) -> None:  # type: ignore[no-untyped-def]
    url = "/api/challenges/cached/leaderboard/?task=main"
    first, second = client.get(url), client.get(url)  # the second one is served from the cache
    assert first.status_code == second.status_code == 200
    assert first["Content-Type"] == second["Content-Type"] == "application/json"
    assert first.content == second.content
    uncached = client.get(url, HTTP_ACCEPT="application/json; indent=2")  # not cached: rendered anew
    assert json.loads(uncached.content) == json.loads(first.content)
    data = json.loads(first.content)
    assert [r["name"] for r in data["rows"]] == ["beta", "alpha"]
    assert data["entry_count"] == 2 and data["sequence"] >= 1


def test_a_new_snapshot_is_read_at_once_by_the_page_and_the_api(client, board) -> None:  # type: ignore[no-untyped-def]
    challenge, ids, truth = board
    page = reverse("challenge", args=["cached"])
    api = "/api/challenges/cached/leaderboard/?task=main"
    assert '<span class="name">alpha</span>' in client.get(page).content.decode()
    assert len(json.loads(client.get(api).content)["rows"]) == 2
    _submit(challenge, ids, truth, "gamma", 0.9, 7)
    html = client.get(page).content.decode()
    assert '<span class="name">gamma</span>' in html
    assert "3 entries" in html
    assert json.loads(client.get(api).content)["rows"][0]["name"] == "gamma"
    # sort orders are cached apart; unknown ones are drawn (and cached) as the default order
    by_name = _table(client.get(page, {"sort": "name"}).content.decode())
    assert by_name.index(">alpha<") < by_name.index(">beta<") < by_name.index(">gamma<")
    by_rank = _table(client.get(page, {"sort": "rank"}).content.decode())
    assert by_rank.index(">gamma<") < by_rank.index(">beta<") < by_rank.index(">alpha<")
    assert _table(client.get(page, {"sort": "bogus"}).content.decode()) == by_rank


def _table(html: str) -> str:
    return html[
        html.index('<table class="board"') : html.index("</table>", html.index('<table class="board"'))
    ]


def test_boards_are_read_while_the_shared_cache_is_down(client, board, settings) -> None:  # type: ignore[no-untyped-def]
    # The drawn boards live in each web process ("boards" cache), not in Redis: reads never wait for it.
    settings.CACHES = {
        **settings.CACHES,
        "default": {
            "BACKEND": "leaderboard.core.redis_cache.SharedClientRedisCache",  # the service's
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens there
            "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2},
        },
    }
    page = client.get(reverse("challenge", args=["cached"]))
    api = client.get("/api/challenges/cached/leaderboard/?task=main")
    assert page.status_code == 200 and '<span class="name">alpha</span>' in page.content.decode()
    assert api.status_code == 200 and len(json.loads(api.content)["rows"]) == 2
