"""Pages anyone who may see a challenge can read: home, challenge with its boards, downloads, plots."""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from typing import Any
from urllib.parse import urlencode

from django.core.cache import caches
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.functional import SimpleLazyObject
from django.views.decorators.http import require_GET

from leaderboard.challenges.models import Challenge, Task
from leaderboard.challenges.selectors import private_board_visible, task_list, user_is_organizer, user_team
from leaderboard.rankings.exports import shakeup_csv
from leaderboard.rankings.models import BoardSnapshot
from leaderboard.rankings.precision import (
    public_shakeup,
    task_decimals,
)
from leaderboard.rankings.read_cache import cached_for_anonymous
from leaderboard.rankings.selectors import (
    Channel,
    ReaderView,
    board_at,
    board_latest,
    challenge_refusal,
    reader_view,
    resolution_read,
    robustness_read,
    shakeup_latest,
    summary_for,
    summary_latest,
)
from leaderboard.scoring.kinds import get_kind
from leaderboard.scoring.models import Split
from leaderboard.web import boards
from leaderboard.web.ladder import ladder_board_context, ladder_refusal
from leaderboard.web.selectors import DETAILS_HIDDEN, challenge_phase, home_challenges, score_details
from leaderboard.web.views.common import as_http, challenge_for, task_for, throttled_anonymous_reads


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


def _lazy_board_view(
    reader: ReaderView, snapshot: BoardSnapshot, sort: str, page: int | None, query: str = ""
) -> boards.BoardView:
    """Computed (and the snapshot's rows read) only when the template's cached board block is missing.

    Every number is as the reader may read it (``rankings.policy``: rounded to the board's precision)."""
    return SimpleLazyObject(  # type: ignore[return-value]
        lambda: boards.board_view(
            rows=reader.rows(snapshot),
            signature=reader.signature(snapshot),
            sort=sort,
            page=page,
            query=query,
            resolution=resolution_read(reader=reader, snapshot=snapshot)
            if reader.allows(Channel.RANKS)
            else None,
        )
    )


def _sequence_of(request: HttpRequest) -> int | None:
    """``?sequence=N``: an earlier snapshot of the board (old boards stay readable after a re-score)."""
    raw = request.GET.get("sequence", "")
    if not raw:
        return None
    if not raw.isdigit():
        raise Http404("A snapshot's sequence is a whole number.")
    return int(raw)


#: Earlier snapshots listed under a board (the newest first); older ones stay readable by ?sequence=.
HISTORY_LISTED = 20


def _history(task: Task, split: str) -> list[dict[str, Any]]:
    rows = (
        BoardSnapshot.objects.filter(task=task, split=split)
        .order_by("-sequence")
        .values("sequence", "created_at", "entry_count")[:HISTORY_LISTED]
    )
    return [dict(r) for r in rows]


def _bibtex(
    request: HttpRequest, challenge: Challenge, task: Task, split: str, snapshot: BoardSnapshot
) -> str:
    """A BibTeX entry that pins the snapshot (its URL carries the sequence, so the cited board stays the
    board a reader finds). Braces and backslashes in titles are dropped: BibTeX would read them as markup."""

    def clean(text: str) -> str:
        return "".join(ch for ch in text if ch not in "{}\\")

    url = request.build_absolute_uri(
        reverse("challenge", args=[challenge.slug])
        + "?"
        + urlencode({"task": task.slug, "split": split, "sequence": snapshot.sequence})
    )
    key = re.sub(r"[^A-Za-z0-9]+", "_", f"{challenge.slug}_{task.slug}_{split}_{snapshot.sequence}")
    created = snapshot.created_at
    signature = clean(str(snapshot.signature.get("signature_text", "")))
    note = f"{snapshot.entry_count} entries; metric {task.metric}; snapshot built {created:%Y-%m-%d}"
    if signature:
        note += f"; signature {signature}"
    title = (
        f"{clean(challenge.title)}: {clean(task.title)} ({split} leaderboard, snapshot {snapshot.sequence})"
    )
    return "\n".join(
        [
            f"@misc{{{key},",
            f"  title = {{{title}}},",
            f"  author = {{{{Organizers of {clean(challenge.title)}}}}},",
            f"  howpublished = {{\\url{{{url}}}}},",
            f"  year = {{{created:%Y}}},",
            f"  month = {created.strftime('%b').lower()},",
            f"  note = {{{note}}}",
            "}",
        ]
    )


@cached_for_anonymous(
    ["task", "split", "sort", "page", "rows", "q", "sequence"], values={"split": Split.values, "q": [""]}
)
@require_GET
def challenge_detail(request: HttpRequest, slug: str) -> HttpResponse:
    challenge = challenge_for(request, slug)
    tasks = list(task_list(challenge=challenge))
    task = (
        task_for(challenge, request.GET["task"]) if request.GET.get("task") else (tasks[0] if tasks else None)
    )
    split, private_visible = _split_of(request, challenge)
    sequence = _sequence_of(request)
    latest = _board(request, task, split) if task is not None else None
    snapshot = latest
    if task is not None and sequence is not None and latest is not None and sequence != latest.sequence:
        with as_http():
            snapshot = board_at(task=task, split=split, user=request.user, sequence=sequence)
    query = " ".join(request.GET.get("q", "").split())[:100]
    sort = _board_sort(request.GET.get("sort", ""))
    page = _board_page(request, snapshot)
    board_qs = urlencode(
        {
            **({"task": task.slug} if task else {}),
            "split": split,
            **({"sequence": snapshot.sequence} if snapshot is not latest and snapshot else {}),
            **({"q": query} if query else {}),
        }
    )
    reader = reader_view(task, split, request.user) if task is not None else None
    ladder_board = ladder_board_context(reader, snapshot) if reader is not None and not reader.exact else None
    return render(
        request,
        "web/challenge.html",
        {
            "ladder_board": ladder_board,
            "reader_key": reader.cache_key if reader is not None else "",
            "challenge": challenge,
            "phase": challenge_phase(challenge),
            "tasks": tasks,
            "task": task,
            "split": split,
            "private_visible": private_visible,
            "has_private": any(t.has_private_split for t in tasks),
            "snapshot": snapshot,
            "latest": latest,
            "history": _history(task, split) if task and latest and latest.sequence > 1 else [],
            "bibtex": _bibtex(request, challenge, task, split, snapshot) if task and snapshot else "",
            "query": query,
            "board_qs": board_qs,
            "view": _lazy_board_view(reader, snapshot, sort, page, query)
            if reader is not None and snapshot is not None and ladder_board is None
            else None,
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
    sequence = _sequence_of(request)
    if sequence is None:
        snapshot = _board(request, task, split)
    else:
        with as_http():
            snapshot = board_at(task=task, split=split, user=request.user, sequence=sequence)
    if snapshot is None:
        raise Http404("This board has not been built yet.")
    filename = f"{challenge.slug}-{task.slug}-{split}-{snapshot.sequence}"
    reader = reader_view(task, split, request.user)
    if fmt == "json":
        payload = {
            "challenge": challenge.slug,
            "task": task.slug,
            "split": split,
            "sequence": snapshot.sequence,
            "created_at": snapshot.created_at.isoformat(),
            "signature": {k: v for k, v in reader.signature(snapshot).items() if k != "inputs"},
            "rows": reader.rows(snapshot),
        }
        as_json = JsonResponse(payload, json_dumps_params={"indent": 2})
        as_json["Content-Disposition"] = f'attachment; filename="{filename}.json"'
        return as_json
    # one CSV schema and writer for this download and the API's ?format=csv (the same bytes)
    response = HttpResponse(reader.csv(snapshot), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}.csv"'
    return response


#: The K x K rank distributions of the latest snapshots this process read (float32; 4 MB at K = 1,000),
#: so drawing another page of the same snapshot does not read the matrix again.
_DISTRIBUTIONS: OrderedDict[tuple[int, str], Any] = OrderedDict()
_DISTRIBUTIONS_KEPT = 2
_DISTRIBUTIONS_LOCK = threading.Lock()


def _rank_distribution(snapshot: BoardSnapshot) -> Any:
    import numpy as np

    from leaderboard.rankings.distribution import unpack_rank_distribution

    key = (snapshot.pk, snapshot.created_at.isoformat())
    with _DISTRIBUTIONS_LOCK:
        if key in _DISTRIBUTIONS:
            _DISTRIBUTIONS.move_to_end(key)
            return _DISTRIBUTIONS[key]
    matrix = unpack_rank_distribution(snapshot.rank_distribution).astype(np.float32)
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


@cached_for_anonymous(["split", "page"], values={"split": Split.values})  # throttles what it renders
@require_GET
def rank_distribution(request: HttpRequest, slug: str, task_slug: str) -> HttpResponse:
    """One page of entries (``?page=N``, 25 a page) with the ranks around theirs; the whole K x K
    distribution only as the cached image ``ranks.png``. Drawn once per snapshot and page, so a request's
    cost does not grow with K^2 (docs/web.md)."""
    challenge = challenge_for(request, slug)
    task = task_for(challenge, task_slug)
    split, private_visible = _split_of(request, challenge)
    reader = reader_view(task, split, request.user)
    if not reader.allows(Channel.RANKS):
        return ladder_refusal(request, challenge, task, reader.refusal)
    snapshot = _board(request, task, split)
    page = _rank_page(request, snapshot)
    # the board's answer beside the distribution (issue 22, M3): the heat map is not a test
    headline = (
        SimpleLazyObject(
            lambda: boards.board_headline(
                reader.rows(snapshot), alpha=reader.signature(snapshot).get("alpha")
            )
        )
        if snapshot
        else ""
    )
    plot = (
        SimpleLazyObject(
            lambda: boards.rank_plot(
                rows=reader.rows(snapshot),
                distribution=reader.distribution(snapshot, _rank_distribution(snapshot)),
                page=page,
                decimals=reader.p_decimals,
            )
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
            "has_private": task.has_private_split,
            "private_visible": private_visible,
            "snapshot": snapshot,
            "plot": plot,
            "headline": headline,
            "page": page,
            "board_cache_seconds": BOARD_CACHE_SECONDS,
        },
    )


@cached_for_anonymous(["split"], values={"split": Split.values})  # throttles what it renders
@require_GET
def robustness(request: HttpRequest, slug: str, task_slug: str) -> HttpResponse:
    """How stable the ranking is (issue 23): the blob plot with its text alternative, Kendall's tau-b of the
    bootstrap rankings and the ranking schemes side by side: built on the first read that may see them and
    kept per snapshot (``rankings.selectors.robustness_read``)."""
    challenge = challenge_for(request, slug)
    task = task_for(challenge, task_slug)
    split, private_visible = _split_of(request, challenge)
    reader = reader_view(task, split, request.user)
    if not reader.allows(Channel.RANKS):
        return ladder_refusal(request, challenge, task, reader.refusal)
    snapshot = _board(request, task, split)
    data = robustness_read(reader=reader, snapshot=snapshot, svg=True) if snapshot else {}
    return render(
        request,
        "web/robustness.html",
        {
            "challenge": challenge,
            "task": task,
            "split": split,
            "has_private": task.has_private_split,
            "private_visible": private_visible,
            "snapshot": snapshot,
            "rob": boards.robustness_view(data),
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
    reader = reader_view(task, split, request.user)
    if not reader.allows(Channel.RANKS):
        raise Http404(reader.refusal)
    snapshot = _board(request, task, split)
    if snapshot is None:
        raise Http404("This board has not been built yet.")
    key = f"ranks-png:{snapshot.pk}:{snapshot.created_at.isoformat()}:{reader.cache_key}"
    image = caches["boards"].get(key)
    if image is None:
        matrix = reader.distribution(snapshot, _rank_distribution(snapshot))
        if not matrix:
            raise Http404("This snapshot stores no rank distribution.")
        image = boards.rank_image(matrix, title=f"{task.title}: {split} board #{snapshot.sequence}")
        caches["boards"].set(key, image, BOARD_CACHE_SECONDS)
    return HttpResponse(image, content_type="image/png")


@require_GET
def summary(request: HttpRequest, slug: str) -> HttpResponse:
    challenge = challenge_for(request, slug)
    split, private_visible = _split_of(request, challenge)
    tasks = list(challenge.tasks.all())
    refusal = challenge_refusal(tasks, split, request.user, Channel.SUMMARY)
    if refusal is not None:
        return ladder_refusal(request, challenge, None, refusal)  # it ranks entries by their exact values
    with as_http():
        summ = summary_latest(challenge=challenge, split=split, user=request.user)
    # As the read policy shows it: each task's values at its precision, and before the reveal the ranks of
    # those values, ties sharing their average rank (issue 21).
    data = summary_for(summ, tasks, split, request.user)[0] if summ else {}
    return render(
        request,
        "web/summary.html",
        {
            "challenge": challenge,
            "split": split,
            "has_private": any(t.has_private_split for t in tasks),
            "private_visible": private_visible,
            "summary": summ,
            "data": data,
            "cd_list": boards.cd_list(data),
            "signature_items": _readable_signature(data.get("signature") if summ else None),
            "matrix": _entries_by_tasks(tasks, data) if summ else None,
            "data_json": json.dumps(data, indent=2, default=str) if summ else "",
        },
    )


def _entries_by_tasks(tasks: list[Task], data: dict[str, Any]) -> dict[str, Any] | None:
    """The entries x tasks table of values (what a Papers-with-Code reader looks for first), ordered by
    average rank, from the values the summary was computed on (one board snapshot per task)."""
    keys, scores, slugs = data.get("keys") or {}, data.get("scores"), data.get("tasks")
    # The score columns follow the entries' keys in sorted order (engine.build_summary); the stored
    # name -> key mapping is a JSON object, whose order PostgreSQL's jsonb does not keep.
    names = sorted(keys, key=lambda name: keys[name])
    if not names or not scores or not slugs:
        return None
    titles = {t.slug: t.title for t in tasks}
    # each column at its task's precision, as its board shows it (issue 22, M6: not padded to 4 decimals)
    decimals = {t.slug: task_decimals(t) for t in tasks}
    column = {name: i for i, name in enumerate(names)}
    order = [e["name"] for e in data.get("entries", []) if e.get("name") in column] or names
    average = {e["name"]: e.get("average_rank") for e in data.get("entries", [])}
    return {
        "tasks": [titles.get(slug, slug) for slug in slugs],
        "snapshots": data.get("snapshots") or [],
        "rows": [
            {
                "name": name,
                "average_rank": average.get(name),
                "values": [
                    {"value": scores[t][column[name]], "decimals": decimals.get(slug, 4)}
                    for t, slug in enumerate(slugs)
                ],
            }
            for name in order
        ],
    }


def _readable_signature(signature: dict[str, Any] | None) -> list[tuple[str, Any]]:
    """The signature's settings that apply, without raw ``None`` or "resamples 0" for a rank test that
    draws no resamples."""
    if not signature:
        return []
    items = [(k, v) for k, v in signature.items() if k != "extra"]
    items += list((signature.get("extra") or {}).items())
    return [
        (k.replace("_", " ").capitalize(), boards.readable_value(v))
        for k, v in items
        if v not in (None, "", "None", "none") and not (k == "resamples" and v in (0, "0"))
    ]


@require_GET
def cd_svg(request: HttpRequest, slug: str) -> HttpResponse:
    """The stored critical-difference diagram, served as an image (scripts in an <img> never run)."""
    challenge = challenge_for(request, slug)
    split, _ = _split_of(request, challenge)
    refusal = challenge_refusal(challenge.tasks.all(), split, request.user, Channel.SUMMARY)
    if refusal is not None:
        raise Http404(refusal)
    with as_http():
        summ = summary_latest(challenge=challenge, split=split, user=request.user)
    svg = summary_for(summ, challenge.tasks.all(), split, request.user)[1] if summ else ""
    if not svg:
        raise Http404("No critical-difference diagram yet.")
    response = HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    return response


@throttled_anonymous_reads
@require_GET
def pairwise(request: HttpRequest, slug: str, task_slug: str) -> HttpResponse:
    """Two entries side by side, from the stored snapshot (and its pairwise table, where it stores one)."""
    challenge = challenge_for(request, slug)
    task = task_for(challenge, task_slug)
    split, private_visible = _split_of(request, challenge)
    reader = reader_view(task, split, request.user)
    if not reader.allows(Channel.PAIRWISE):
        return ladder_refusal(request, challenge, task, reader.refusal)
    snapshot = _board(request, task, split)
    rows = reader.rows(snapshot)
    position = {str(r.get("submission_id")): i for i, r in enumerate(rows)}
    # Without a choice, the page opens on the leader against the second entry (it was empty until "Compare").
    default_a = str(rows[0].get("submission_id")) if rows else ""
    default_b = str(rows[1].get("submission_id")) if len(rows) > 1 else ""
    ia = position.get(request.GET.get("a", default_a))
    ib = position.get(request.GET.get("b", default_b))
    a = rows[ia] if ia is not None else None
    b = rows[ib] if ib is not None else None
    pair = None
    if snapshot is not None and ia is not None and ib is not None:
        # Read from the snapshot's stored pairwise table; nothing is computed here.
        # Organizers see the exact counts of discordant items; everyone else the rounded table.
        pair = boards.pair_view(pairwise=reader.pairwise(snapshot), a=ia, b=ib)
        if pair is not None:  # what the single test alone would say, beside the board's verdict (M3)
            pair["alone_real"] = boards.alone_real(pair, reader.signature(snapshot).get("alpha"))
    view = (
        boards.board_view(rows=[r for r in (a, b) if r], signature=reader.signature(snapshot))
        if snapshot
        else None
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
            "a_verdict": boards.short_verdict(a) if a else "",
            "b_verdict": boards.short_verdict(b) if b else "",
            "view": view,
            "pair_warnings": _pair_warnings(snapshot, a, b),
        },
    )


def _pair_warnings(
    snapshot: BoardSnapshot | None, a: dict[str, Any] | None, b: dict[str, Any] | None
) -> list[str]:
    """The board's warnings about this pair (a text task's brevity-penalty warning names both entries)."""
    if snapshot is None or a is None or b is None:
        return []
    names = (f" {a.get('name')} ", f" {b.get('name')} ")
    return [w for w in snapshot.signature.get("warnings", []) if all(n in w for n in names)]


# --- the shake-up report at the reveal ----------------------------------------------------------------
def _shakeup(request: HttpRequest, slug: str, task_slug: str) -> tuple[Challenge, Task, Any]:
    challenge = challenge_for(request, slug)
    task = task_for(challenge, task_slug)
    with as_http():
        report = shakeup_latest(task=task, user=request.user)
    return challenge, task, report


@require_GET
def shakeup(request: HttpRequest, slug: str, task_slug: str) -> HttpResponse:
    """Public against private at the reveal: organizers always, everyone once the private board is out."""
    challenge, task, report = _shakeup(request, slug, task_slug)
    teams = report.data.get("teams", []) if report else []
    return render(
        request,
        "web/shakeup.html",
        {
            # nothing moved at the reveal: the verdict says so, not "the luck of the split" (issue 22, M7)
            "unchanged": bool(teams) and all(t.get("rank_change") == 0 for t in teams),
            "n_teams": len(teams),
            "challenge": challenge,
            "task": task,
            "report": report,
            "data": public_shakeup(report.data, task_decimals(task)) if report else {},
            "decimals": task_decimals(task),  # values and gaps at the board's precision (issue 22, M6)
            "revealed": challenge.private_revealed,
            "signature_items": _readable_signature(report.data.get("signature") if report else None),
        },
    )


@require_GET
def shakeup_download(request: HttpRequest, slug: str, task_slug: str) -> HttpResponse:
    """The report's teams as CSV: the same bytes as the API's ``?format=csv`` (one writer for both)."""
    challenge, task, report = _shakeup(request, slug, task_slug)
    if report is None:
        raise Http404("No shake-up report yet.")
    body = shakeup_csv(public_shakeup(report.data, task_decimals(task)))
    response = HttpResponse(body, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = (
        f'attachment; filename="{challenge.slug}-{task.slug}-shakeup-{report.private_sequence}.csv"'
    )
    return response


@require_GET
def shakeup_svg(request: HttpRequest, slug: str, task_slug: str) -> HttpResponse:
    _challenge, _task, report = _shakeup(request, slug, task_slug)
    if report is None or not report.svg:
        raise Http404("No shake-up chart yet.")
    response = HttpResponse(report.svg, content_type="image/svg+xml; charset=utf-8")
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    return response


@require_GET
def task_classes(request: HttpRequest, slug: str, task_slug: str) -> HttpResponse:
    """A detection or segmentation entry's other metrics and per-class results with intervals, and its
    precision-recall curves: to organizers, and to everyone once the board is revealed."""
    challenge = challenge_for(request, slug)
    task = task_for(challenge, task_slug)
    if not get_kind(task.kind).has_score_details:
        raise Http404("Per-class results are shown for detection and segmentation tasks.")
    split, private_visible = _split_of(request, challenge)
    context = {"challenge": challenge, "task": task, "split": split, "private_visible": private_visible}
    if not private_visible or not reader_view(task, split, request.user).allows(Channel.SCORE_DETAILS):
        return render(request, "web/classes.html", {**context, "hidden": DETAILS_HIDDEN}, status=403)
    snapshot = _board(request, task, split)
    rows = list(snapshot.rows) if snapshot else []
    chosen = request.GET.get("entry", "")
    row = next((r for r in rows if str(r.get("submission_id")) == chosen), rows[0] if rows else None)
    details = score_details(submission_id=row["submission_id"], task_id=task.pk, split=split) if row else None
    return render(
        request,
        "web/classes.html",
        {**context, "snapshot": snapshot, "rows": rows, "row": row, "details": details},
    )
