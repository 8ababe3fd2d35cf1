"""Cheap, bounded board reads (issue 10 points 3 and 9).

- The rank distribution page draws one page of entries and the ranks around theirs: its size does not grow
  with K^2; the whole K x K distribution is a cached image.
- Anonymous visitors get cached answers with no ORM query (one shared-cache read of the challenge's reads
  version); any change of the challenge is shown at once.
- Anonymous reads that grow with the board are throttled per address.
"""

from __future__ import annotations

import numpy as np
import pytest
from django.core.cache import caches
from django.urls import reverse

from leaderboard.rankings.models import BoardSnapshot
from leaderboard.web.boards import RANK_IMAGE_BINS, RANK_PAGE_ROWS, RANK_WINDOW, rank_image, rank_plot
from tests.service import web_support as ws

pytestmark = pytest.mark.django_db


def _big_snapshot(board: ws.Board, k: int) -> BoardSnapshot:
    """The board's latest snapshot, rewritten to K entries with a banded rank distribution."""
    rng = np.random.default_rng(1)
    rows = [
        {"rank": i + 1, "rank_low": max(1, i - 2), "rank_high": min(k, i + 4), "name": f"entry-{i:04d}",
         "value": 0.9 - i * 1e-4, "interval": [0.8, 0.95], "submission_id": 50_000 + i}
        for i in range(k)
    ]  # fmt: skip
    counts = np.zeros((k, k), dtype=int)
    for i in range(k):
        lo, hi = max(0, i - 3), min(k, i + 4)
        counts[i, lo:hi] = rng.integers(1, 100, hi - lo)
    snap = BoardSnapshot.objects.filter(task=board.task, split="public").latest("sequence")
    BoardSnapshot.objects.filter(pk=snap.pk).update(
        rows=rows, entry_count=k, rank_distribution=counts.tolist()
    )
    snap.refresh_from_db()
    return snap


def test_the_rank_page_draws_one_page_of_entries_and_the_ranks_around_them(
    client, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    board = ws.make_board(django_capture_on_commit_callbacks)
    _big_snapshot(board, 300)
    url = reverse("ranks", args=[board.challenge.slug, board.task.slug])
    first = client.get(url)
    html = first.content.decode()
    assert first.status_code == 200
    assert "entry-0024" in html and "entry-0025" not in html
    cells = html.count('class="cell"')
    assert cells == RANK_PAGE_ROWS * (RANK_PAGE_ROWS + RANK_WINDOW)  # ranks 1-30 for entries 1-25
    assert "Page 1 of 12" in html and "page=2" in html
    third = client.get(url, {"page": "3"}).content.decode()
    assert "entry-0050" in third and "entry-0074" in third and "entry-0049" not in third
    assert third.count('class="cell"') == RANK_PAGE_ROWS * (RANK_PAGE_ROWS + 2 * RANK_WINDOW)
    assert "entry-0050: rank 46 in" in third and "entry-0050: rank 45 in" not in third
    assert "Ranks 1&ndash;45" in third and "Ranks 81&ndash;300" in third  # the rest, summed
    # bounded: the old page drew all K x K cells (6.8 MB at K = 200)
    assert len(first.content) < 400_000 and len(third) < 400_000


def test_rank_plot_page_sums_the_ranks_outside_its_window() -> None:
    k = 80
    counts = np.zeros((k, k))
    counts[30, 0] = 1  # entry 31 sometimes ranked first
    counts[30, 30] = 3
    rows = [{"name": f"e{i}"} for i in range(k)]
    plot = rank_plot(rows=rows, distribution=counts, page=2)
    assert plot is not None and plot.ranks == list(range(21, 56))
    row = plot.rows[5]  # entry 31
    assert row.name == "e30" and row.above == "25%" and row.below == "0%" and row.modal_rank == 31
    assert [c.percent for c in row.cells if c.rank == 31] == ["75%"]


def test_the_whole_distribution_is_a_bounded_cached_image(client, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    board = ws.make_board(django_capture_on_commit_callbacks)
    snap = _big_snapshot(board, 450)
    url = reverse("ranks_png", args=[board.challenge.slug, board.task.slug])
    response = client.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert response.content.startswith(b"\x89PNG")
    assert (
        caches["boards"].get(f"ranks-png:{snap.pk}:{snap.created_at.isoformat()}:plain:tied")
        == response.content
    )
    big = rank_image(np.eye(2 * RANK_IMAGE_BINS * 5), title="big")  # binned: the image does not grow
    assert len(big) < 300_000


def test_anonymous_board_reads_are_answered_without_orm_queries(
    client, django_capture_on_commit_callbacks, django_assert_num_queries
) -> None:  # type: ignore[no-untyped-def]
    board = ws.make_board(django_capture_on_commit_callbacks)
    slug = board.challenge.slug
    reads = [
        reverse("challenge", args=[slug]),
        f"/api/challenges/{slug}/leaderboard/?task=main",
        reverse("ranks", args=[slug, board.task.slug]),
    ]
    first = [client.get(url).content for url in reads]
    with django_assert_num_queries(0):
        again = [client.get(url).content for url in reads]
    assert again == first
    # a change of the challenge (on commit) is read at once
    with django_capture_on_commit_callbacks(execute=True):
        board.challenge.title = "Pets, renamed"
        board.challenge.save()
    assert "Pets, renamed" in client.get(reads[0]).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        ws.submit(board.challenge, ws.user("dora"), "delta", wrong=1)
    assert client.get(reads[1]).json()["rows"][0]["name"] == "delta"
    # signed-in users are never served an anonymous answer
    client.force_login(board.alice)
    assert "Log out" in client.get(reads[0]).content.decode()


def test_expensive_anonymous_reads_are_throttled_per_address(
    client, monkeypatch, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    from django.core.cache import cache
    from rest_framework.throttling import SimpleRateThrottle

    cache.clear()
    # DRF reads the rates once, into a class attribute; patch that.
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"anon_read": "3/min"})
    board = ws.make_board(django_capture_on_commit_callbacks)
    url = reverse("ranks", args=[board.challenge.slug, board.task.slug])
    # three renders (a cached answer is not counted: each page is drawn once, then served)
    statuses = [client.get(url, {"page": page}).status_code for page in (1, 2, 3)]
    refused = client.get(reverse("ranks_png", args=[board.challenge.slug, board.task.slug]))
    assert statuses == [200, 200, 200]
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert client.get(url, REMOTE_ADDR="10.0.0.2").status_code == 200  # another address
    pair = reverse("pairwise", args=[board.challenge.slug, board.task.slug])
    assert client.get(pair).status_code == 429
    client.force_login(board.alice)  # signed-in users are not throttled here
    assert all(client.get(url).status_code == 200 for _ in range(4))
    cache.clear()


def test_junk_parameters_are_dropped_and_every_anonymous_render_is_throttled(
    client, monkeypatch, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    """Issue 21, item 10: ``&x=N`` made a fresh, unthrottled drawing of the board for anonymous clients."""
    from django.core.cache import cache
    from rest_framework.throttling import SimpleRateThrottle

    cache.clear()
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"anon_read": "3/min"})
    board = ws.make_board(django_capture_on_commit_callbacks)
    page = reverse("challenge", args=[board.challenge.slug])
    api = f"/api/challenges/{board.challenge.slug}/leaderboard/"
    # unread parameters are dropped before the view: one drawing, then cached answers (no throttle count)
    answers = [client.get(page, {"x": n}) for n in range(10)]
    assert [a.status_code for a in answers] == [200] * 10
    assert "%3Fx%3D" not in answers[0].content.decode()  # nor reflected in the login link (?next=)
    assert all(client.get(api, {"x": n}).status_code == 200 for n in range(10))
    # values that are not cached render, and are throttled: 1 page + 1 API drawing above, then 1 more
    assert client.get(page, {"q": "alpha"}).status_code == 200
    refused = client.get(page, {"q": "beta"})
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert client.get(api, {"split": "nonsense"}).status_code == 429
    assert client.get(api, {"format": "csv"}).status_code == 429
    assert client.get(page, {"x": 99}).status_code == 200  # still served from the cache
    client.force_login(board.alice)  # signed-in readers are not throttled here
    assert all(client.get(page, {"q": f"q{n}"}).status_code == 200 for n in range(5))
    cache.clear()
