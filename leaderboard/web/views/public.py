"""Pages anyone who may see a challenge can read: home, challenge with its boards, downloads, plots."""

from __future__ import annotations

import csv
import io
import json
import threading
from collections import OrderedDict
from typing import Any

from django.core.cache import caches
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.functional import SimpleLazyObject
from django.views.decorators.http import require_GET

from leaderboard.challenges.models import Challenge, Task
from leaderboard.challenges.selectors import private_board_visible, user_is_organizer, user_team
from leaderboard.core.exports import neutralise
from leaderboard.rankings.models import BoardSnapshot
from leaderboard.rankings.read_cache import cached_for_anonymous
from leaderboard.rankings.selectors import board_latest, summary_latest
from leaderboard.scoring.models import Split
from leaderboard.web import boards
from leaderboard.web.selectors import challenge_phase, home_challenges
from leaderboard.web.views.common import as_http, challenge_for, task_for, throttled_anonymous_reads

CSV_COLUMNS = [
    "rank", "rank_low", "rank_high", "rank_sim_low", "rank_sim_high", "name", "team", "is_baseline",
    "value", "low", "high", "diff", "diff_low", "diff_high", "p_value", "p_adjusted", "in_best_set",
    "items_needed", "n_runs", "run_mean", "run_sd", "run_min", "run_max", "submission_id",
]  # fmt: skip


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "web/home.html", {"listing": home_challenges(user=request.user)})


def _split_of(request: HttpRequest, challenge: Challenge) -> tuple[str, bool]:
    split = request.GET.get("split", Split.PUBLIC)
    if split not in (Split.PUBLIC, Split.PRIVATE):
        raise Http404("Boards are 'public' and 'private'.")
    return split, private_board_visible(challenge=challenge, user=request.user)


def _board(request: HttpRequest, task: Task, split: str) -> BoardSnapshot | None:
    with as_http():
        return board_latest(task=task, split=split, user=request.user)


#: The drawn board (table, legend, signature) is cached per snapshot and sort order: snapshots never change,
#: and drawing 1,000 rows takes about 0.4 s (docs/reliability.md, "Load").
BOARD_CACHE_SECONDS = 3600


def _board_sort(raw: str) -> str:
    """The sort order a board is drawn with, normalised (unknown keys sort by rank), so cache keys stay few."""
    key = raw.lstrip("-")
    if key not in boards.SORT_KEYS:
        return boards.DEFAULT_SORT
    return ("-" if raw.startswith("-") else "") + key


def _board_page(request: HttpRequest, snapshot: BoardSnapshot | None) -> int | None:
    """The page of the board to draw: ``?rows=all`` for every row, else ``?page=N`` (clamped), 1 by default."""
    if request.GET.get("rows") == "all":
        return None
    try:
        page = int(request.GET.get("page", "1"))
    except ValueError:
        page = 1
    pages = max(1, -(-(snapshot.entry_count if snapshot else 0) // boards.ROWS_PER_PAGE))
    return min(max(page, 1), pages)


def _lazy_board_view(snapshot: BoardSnapshot, sort: str, page: int | None) -> boards.BoardView:
    """Computed (and the snapshot's rows read) only when the template's cached board block is missing."""
    return SimpleLazyObject(  # type: ignore[return-value]
        lambda: boards.board_view(rows=snapshot.rows, signature=snapshot.signature, sort=sort, page=page)
    )


@cached_for_anonymous(["task", "split", "sort", "page", "rows"], values={"split": Split.values})
@require_GET
def challenge_detail(request: HttpRequest, slug: str) -> HttpResponse:
    challenge = challenge_for(request, slug)
    tasks = list(challenge.tasks.order_by("position", "slug"))
    task = (
        task_for(challenge, request.GET["task"]) if request.GET.get("task") else (tasks[0] if tasks else None)
    )
    split, private_visible = _split_of(request, challenge)
    snapshot = _board(request, task, split) if task is not None else None
    sort = _board_sort(request.GET.get("sort", ""))
    page = _board_page(request, snapshot)
    return render(
        request,
        "web/challenge.html",
        {
            "challenge": challenge,
            "phase": challenge_phase(challenge),
            "tasks": tasks,
            "task": task,
            "split": split,
            "private_visible": private_visible,
            "has_private": any(t.has_private_split for t in tasks),
            "snapshot": snapshot,
            "view": _lazy_board_view(snapshot, sort, page) if snapshot is not None else None,
            "sort": sort,
            "page": page if page is not None else "all",
            "board_cache_seconds": BOARD_CACHE_SECONDS,
            "is_organizer": user_is_organizer(challenge=challenge, user=request.user),
            "team": user_team(challenge=challenge, user=request.user),
        },
    )


@throttled_anonymous_reads
@require_GET
def board_download(request: HttpRequest, slug: str, task_slug: str, fmt: str) -> HttpResponse:
    if fmt not in ("csv", "json"):
        raise Http404("Boards download as board.csv or board.json.")
    challenge = challenge_for(request, slug)
    task = task_for(challenge, task_slug)
    split, _ = _split_of(request, challenge)
    snapshot = _board(request, task, split)
    if snapshot is None:
        raise Http404("This board has not been built yet.")
    rows = [boards.normalise_row(r) for r in snapshot.rows]
    filename = f"{challenge.slug}-{task.slug}-{split}-{snapshot.sequence}"
    if fmt == "json":
        payload = {
            "challenge": challenge.slug,
            "task": task.slug,
            "split": split,
            "sequence": snapshot.sequence,
            "created_at": snapshot.created_at.isoformat(),
            "signature": {k: v for k, v in snapshot.signature.items() if k != "inputs"},
            "rows": rows,
        }
        as_json = JsonResponse(payload, json_dumps_params={"indent": 2})
        as_json["Content-Disposition"] = f'attachment; filename="{filename}.json"'
        return as_json
    buffer = io.StringIO()
    extra = sorted(
        {k for r in rows for k, v in r.items() if k not in CSV_COLUMNS and not isinstance(v, dict | list)}
    )
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS + extra)
    for r in rows:
        writer.writerow([neutralise("" if r.get(c) is None else r.get(c)) for c in CSV_COLUMNS + extra])
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}.csv"'
    return response


#: The K x K rank distributions of the latest snapshots this process read (float32; 4 MB at K = 1,000),
#: so drawing another page of the same snapshot does not read the matrix again.
_DISTRIBUTIONS: OrderedDict[tuple[int, str], Any] = OrderedDict()
_DISTRIBUTIONS_KEPT = 2
_DISTRIBUTIONS_LOCK = threading.Lock()


def _rank_distribution(snapshot: BoardSnapshot) -> Any:
    import numpy as np

    key = (snapshot.pk, snapshot.created_at.isoformat())
    with _DISTRIBUTIONS_LOCK:
        if key in _DISTRIBUTIONS:
            _DISTRIBUTIONS.move_to_end(key)
            return _DISTRIBUTIONS[key]
    matrix = np.asarray(snapshot.rank_distribution or [], dtype=np.float32)
    with _DISTRIBUTIONS_LOCK:
        _DISTRIBUTIONS[key] = matrix
        while len(_DISTRIBUTIONS) > _DISTRIBUTIONS_KEPT:
            _DISTRIBUTIONS.popitem(last=False)
    return matrix


def _rank_page(request: HttpRequest, snapshot: BoardSnapshot | None) -> int:
    try:
        page = int(request.GET.get("page", "1"))
    except ValueError:
        page = 1
    return min(max(page, 1), boards.rank_pages(snapshot.entry_count if snapshot else 0))


@throttled_anonymous_reads
@cached_for_anonymous(["split", "page"], values={"split": Split.values})
@require_GET
def rank_distribution(request: HttpRequest, slug: str, task_slug: str) -> HttpResponse:
    """One page of entries (``?page=N``, 25 a page) with the ranks around theirs; the whole K x K
    distribution only as the cached image ``ranks.png``. Drawn once per snapshot and page, so a request's
    cost does not grow with K^2 (docs/web.md)."""
    challenge = challenge_for(request, slug)
    task = task_for(challenge, task_slug)
    split, private_visible = _split_of(request, challenge)
    snapshot = _board(request, task, split)
    page = _rank_page(request, snapshot)
    plot = (
        SimpleLazyObject(
            lambda: boards.rank_plot(rows=snapshot.rows, distribution=_rank_distribution(snapshot), page=page)
        )
        if snapshot
        else None
    )
    return render(
        request,
        "web/ranks.html",
        {
            "challenge": challenge,
            "task": task,
            "split": split,
            "private_visible": private_visible,
            "snapshot": snapshot,
            "plot": plot,
            "page": page,
            "board_cache_seconds": BOARD_CACHE_SECONDS,
        },
    )


@throttled_anonymous_reads
@cached_for_anonymous(["split"], values={"split": Split.values})
@require_GET
def rank_image(request: HttpRequest, slug: str, task_slug: str) -> HttpResponse:
    """The whole rank distribution of the latest snapshot as a PNG, drawn once per snapshot and cached."""
    challenge = challenge_for(request, slug)
    task = task_for(challenge, task_slug)
    split, _ = _split_of(request, challenge)
    snapshot = _board(request, task, split)
    if snapshot is None:
        raise Http404("This board has not been built yet.")
    key = f"ranks-png:{snapshot.pk}:{snapshot.created_at.isoformat()}"
    image = caches["boards"].get(key)
    if image is None:
        matrix = _rank_distribution(snapshot)
        if matrix.size == 0:
            raise Http404("This snapshot stores no rank distribution.")
        image = boards.rank_image(matrix, title=f"{task.title}: {split} board #{snapshot.sequence}")
        caches["boards"].set(key, image, BOARD_CACHE_SECONDS)
    return HttpResponse(image, content_type="image/png")


@require_GET
def summary(request: HttpRequest, slug: str) -> HttpResponse:
    challenge = challenge_for(request, slug)
    split, private_visible = _split_of(request, challenge)
    with as_http():
        summ = summary_latest(challenge=challenge, split=split, user=request.user)
    return render(
        request,
        "web/summary.html",
        {
            "challenge": challenge,
            "split": split,
            "private_visible": private_visible,
            "summary": summ,
            "data": summ.data if summ else {},
            "data_json": json.dumps(summ.data, indent=2, default=str) if summ else "",
        },
    )


@require_GET
def cd_svg(request: HttpRequest, slug: str) -> HttpResponse:
    """The stored critical-difference diagram, served as an image (scripts in an <img> never run)."""
    challenge = challenge_for(request, slug)
    split, _ = _split_of(request, challenge)
    with as_http():
        summ = summary_latest(challenge=challenge, split=split, user=request.user)
    if summ is None or not summ.svg:
        raise Http404("No critical-difference diagram yet.")
    response = HttpResponse(summ.svg, content_type="image/svg+xml; charset=utf-8")
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    return response


@throttled_anonymous_reads
@require_GET
def pairwise(request: HttpRequest, slug: str, task_slug: str) -> HttpResponse:
    """Two entries side by side, from the stored snapshot (and its pairwise table, where it stores one)."""
    challenge = challenge_for(request, slug)
    task = task_for(challenge, task_slug)
    split, private_visible = _split_of(request, challenge)
    snapshot = _board(request, task, split)
    rows = [boards.normalise_row(r) for r in snapshot.rows] if snapshot else []
    position = {str(r.get("submission_id")): i for i, r in enumerate(rows)}
    ia, ib = position.get(request.GET.get("a", "")), position.get(request.GET.get("b", ""))
    a = rows[ia] if ia is not None else None
    b = rows[ib] if ib is not None else None
    pair = None
    if snapshot is not None and ia is not None and ib is not None:
        # Read from the snapshot's stored pairwise table; nothing is computed here.
        pair = boards.pair_view(pairwise=snapshot.pairwise or {}, a=ia, b=ib)
    view = (
        boards.board_view(rows=[r for r in (a, b) if r], signature=snapshot.signature) if snapshot else None
    )
    return render(
        request,
        "web/pairwise.html",
        {
            "challenge": challenge,
            "task": task,
            "split": split,
            "private_visible": private_visible,
            "snapshot": snapshot,
            "rows": rows,
            "a": a,
            "b": b,
            "pair": pair,
            "view": view,
        },
    )
