"""The challenge report (issue 23, item 4): what organizers publish, answering the BIAS checklist's ranking and
statistics items (Maier-Hein et al. 2020) from each board's own signature, with a LaTeX table of each board.

Every number comes from the stored snapshots as the reader may read them (``rankings.policy``): a board the
reader may not read exactly (the Ladder before the reveal) is named with the policy's refusal, not shown.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET

from leaderboard.challenges.models import Challenge, Task
from leaderboard.rankings.exports import board_latex
from leaderboard.rankings.models import BoardSnapshot
from leaderboard.rankings.selectors import Channel, board_latest, reader_view, robustness_read
from leaderboard.scoring.models import Split
from leaderboard.web import boards
from leaderboard.web.views.common import as_http, challenge_for

#: The ranking rule every board uses (``stats.board``): the BIAS item "ranking method" in words.
RANKING_METHOD = (
    "aggregate, then rank: entries are ranked by the metric's value on the whole test set (rank 1 the best); "
    "the verdicts and the best set compare every entry with the best by max-t simultaneous intervals"
)
MISSING_RULE = (
    "an entry is on a board once it has a scored submission for the task (no imputation); in the ranking "
    "schemes side by side a missing per-item result is ranked worst on its item"
)


def _robustness_words(rob: dict[str, Any]) -> str:
    if not rob.get("available"):
        return str(rob.get("reason") or "not computed for this snapshot")
    tau = rob.get("kendall_tau_b") or {}
    interval = tau.get("interval") or [None, None]
    text = (
        f"Kendall's tau-b between the board's ranking and {rob.get('resamples')} bootstrap rankings: median "
        f"{tau.get('median', 0):.3f}, {tau.get('confidence', 0.95):.0%} of resamples in "
        f"[{interval[0]:.3f}, {interval[1]:.3f}]"
    )
    schemes = rob.get("schemes")
    if schemes:
        disagree = schemes.get("disagreements") or []
        text += "; aggregate-then-rank, rank-then-aggregate and test-then-rank " + (
            f"disagree on {', '.join(disagree)}" if disagree else "agree on every entry"
        )
    return text


def _checklist(task: Task, sig: dict[str, Any], rob: dict[str, Any]) -> list[tuple[str, str]]:
    """The BIAS ranking and statistics items, answered from the board's signature."""
    confidence = float(sig.get("confidence") or 0.95)
    return [
        ("Metric", f"{sig.get('metric', task.metric)} ({'higher' if sig.get('higher_is_better') else 'lower'} is better)"),
        ("Number of test items", f"{task.n_items} (this board: {sig.get('split', '')} split)"),
        ("Interval method", f"{sig.get('interval_method', '')}, {confidence:.0%}, {sig.get('resamples', '')} "
                            f"bootstrap resamples, seed {sig.get('seed', '')}"),
        ("Test", boards.test_name(sig.get("test"))),
        ("Multiplicity correction", f"{sig.get('correction', '')} at alpha = {sig.get('alpha', '')}"),
        ("Ranking scheme", RANKING_METHOD + (f" ({sig.get('verdict_method')})" if sig.get("verdict_method") else "")),
        ("Ties", str(sig.get("rank_ties") or "equal values share the smallest rank (min ranks: 1, 2, 2, 4)")),
        ("Missing results", f"{MISSING_RULE}; resamples in which the metric is undefined: "
                            f"{sig.get('undefined_rule', 'none')} ({sig.get('undefined_resamples', 0)} dropped)"),
        ("Leader adjusted for selection", f"{sig.get('selection_method', 'not computed')}, beta "
                                          f"{sig.get('selection_beta', '')}: {sig.get('selection_event', '')}"),
        ("Ranking robustness", _robustness_words(rob)),
    ]  # fmt: skip


def _task_report(request: HttpRequest, task: Task, split: str) -> dict[str, Any]:
    reader = reader_view(task, split, request.user)
    with as_http():
        snapshot: BoardSnapshot | None = board_latest(task=task, split=split, user=request.user)
    if snapshot is None:
        return {"task": task, "withheld": "No board yet."}
    if not reader.allows(Channel.RANKS):
        return {"task": task, "withheld": reader.refusal}
    rows = reader.rows(snapshot)
    sig = reader.signature(snapshot)
    rob = robustness_read(reader=reader, snapshot=snapshot)
    view = boards.board_view(rows=rows, signature=sig, resolution=rob.get("resolution"))
    caption = f"{task.challenge.title}: {task.title} ({split} board, {sig.get('metric', task.metric)})"
    return {
        "task": task,
        "snapshot": snapshot,
        "view": view,
        "checklist": _checklist(task, sig, rob),
        "latex": board_latex(
            rows, reader.decimals, caption=caption, confidence=float(sig.get("confidence") or 0.95)
        ),
        "signature_text": sig.get("signature_text", ""),
    }


def _context(request: HttpRequest, challenge: Challenge, split: str) -> dict[str, Any]:
    return {
        "challenge": challenge,
        "split": split,
        "tasks": [_task_report(request, t, split) for t in challenge.tasks.all()],
    }


@require_GET
def report(request: HttpRequest, slug: str) -> HttpResponse:
    """The challenge report: the page; ``?format=html`` the standalone file, ``?format=tex`` every board's
    LaTeX table."""
    challenge = challenge_for(request, slug)
    split = request.GET.get("split", Split.PUBLIC)
    if split not in (Split.PUBLIC, Split.PRIVATE):
        split = Split.PUBLIC
    context = _context(request, challenge, split)
    fmt = request.GET.get("format", "")
    if fmt == "tex":
        text = "\n".join(t["latex"] for t in context["tasks"] if "latex" in t)
        response = HttpResponse(text, content_type="application/x-tex; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{slug}-{split}-boards.tex"'
        return response
    if fmt == "html":
        response = HttpResponse(render_to_string("web/report_file.html", context, request=request))
        response["Content-Disposition"] = f'attachment; filename="{slug}-{split}-report.html"'
        return response
    return render(request, "web/report.html", context)
