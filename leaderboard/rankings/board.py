"""The board of a task: the one owner of what a board snapshot holds, built from the ``stats`` package.

``build_board`` turns the stored scores of a task's entries into the snapshot's rows, signature, rank
distribution and pairwise table (no item labels are needed); ``build_shakeup`` and ``build_summary``
build the reveal's shake-up report and the cross-task summary from stored snapshots.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from django.utils import timezone

import stats
from leaderboard.core.exceptions import ApplicationError
from leaderboard.scoring.engine import metric_higher_is_better, task_metric_labels, vision_interval
from stats.checks import UNDEFINED_RULE, defined_rows, design_warnings, undefined_warning, value_warnings
from stats.metrics import get_metric

if TYPE_CHECKING:
    from leaderboard.challenges.models import Challenge, Task
    from leaderboard.rankings.models import BoardSnapshot
    from leaderboard.rankings.services import Entry


# --- boards --------------------------------------------------------------------------------------------
#: Pairwise tables (every pair of entries) are stored for boards up to this size; they cost K^2 per board.
PAIRWISE_MAX_ENTRIES = 60


@dataclass(frozen=True)
class BuiltBoard:
    rows: list[dict[str, Any]]
    signature: dict[str, Any]
    rank_distribution: list[list[float]]
    pairwise: dict[str, Any]


def build_board(*, task: Task, split: str, entries: list[Entry]) -> BuiltBoard:
    """All statistics of one board from the stored scores of its entries (no item labels needed)."""
    from stats.board import build_board as stats_build_board
    from stats.compare import mcnemar_exact

    challenge = task.challenge
    metric = get_metric(task.metric)
    now = timezone.now().isoformat()
    if not entries:
        return BuiltBoard(
            rows=[],
            signature={
                "metric": task.metric,
                "resamples": challenge.resamples,
                "seed": challenge.seed,
                "confidence": challenge.confidence,
                "method": challenge.interval_method,
                "correction": challenge.correction,
                "version": stats.__version__,
                "split": split,
                "created": now,
            },
            rank_distribution=[],
            pairwise={},
        )
    keys = [e.key for e in entries]
    values = np.array([e.score.value for e in entries])
    theta = np.column_stack([e.score.replicate_array() for e in entries])
    # resamples in which the metric is undefined: the stated rule of stats.checks (dropped for all, counted);
    # a board never fails for it, it warns when more than UNDEFINED_LIMIT are dropped
    try:
        keep, undefined = defined_rows(theta, limit=1.0)
    except ValueError as exc:
        raise ApplicationError(f"The board of {task} cannot be built: {exc}.") from exc
    resamples_stored = theta.shape[0]
    theta = theta[keep]
    jack_list = [e.score.jackknife_array() for e in entries]
    jackknife = np.column_stack(jack_list) if all(j is not None and len(j) for j in jack_list) else None  # type: ignore[arg-type]
    item_stats = [e.score.item_statistics_array() for e in entries]
    have_items = all(s is not None for s in item_stats) and not metric.rank_based
    runs = [e.score.run_values if len(e.score.run_values) > 1 else None for e in entries]
    group_codes = None
    edge_warnings: list[str] = []
    if task.grouped:
        from leaderboard.scoring.selectors import task_group_codes

        codes = task_group_codes(task=task, split=split)
        n_groups = len(set(codes)) if codes else 0
        edge_warnings += design_warnings(n_groups, grouped=True)
        if have_items and codes is not None and len(codes) == len(item_stats[0]):  # type: ignore[arg-type]
            group_codes = np.asarray(codes)
    edge_warnings += value_warnings(metric, values.tolist(), [e.name for e in entries])
    edge_warnings += undefined_warning(undefined, resamples_stored)
    board = stats_build_board(
        names=keys,
        values=values,
        replicates=theta,
        higher_is_better=metric.higher_is_better,
        metric_name=metric.name,
        seed=challenge.seed,
        confidence=challenge.confidence,
        interval=vision_interval(task.metric, challenge)
        if task.kind != "tabular"
        else _interval_method(challenge.interval_method, has_jackknife=jackknife is not None),
        jackknife=jackknife,
        correction=challenge.correction,
        item_statistics=[np.asarray(s, dtype=np.float64) for s in item_stats] if have_items else None,
        finalize=metric.finalize if have_items else None,
        zero_one=metric.zero_one,
        n_items=_n_items(entries) or task.n_items,
        runs=runs if any(r is not None for r in runs) else None,
        grouped=task.grouped,
        groups=group_codes,
    )
    data = board.as_dict()
    by_key = {e.key: e for e in entries}
    order = [r["name"] for r in data["rows"]]
    rows = []
    for r in data["rows"]:
        e = by_key[r["name"]]
        sub = e.score.submission
        rows.append(
            {
                **r,
                "key": e.key,
                "name": e.name,
                "compared_with": None if r["compared_with"] is None else by_key[r["compared_with"]].name,
                "compared_with_key": r["compared_with"],
                "compared_with_submission_id": None
                if r["compared_with"] is None
                else by_key[r["compared_with"]].score.submission.pk,
                "team": e.team,
                "is_baseline": sub.is_baseline,
                "submission_id": sub.pk,
                "submitted_at": sub.created_at.isoformat(),
                "description": sub.description,
                "link": sub.link,
            }
        )
    signature = {
        **data["signature"],
        "signature_text": data["signature_text"],
        "test": data["test"],
        "correction": data["correction"],
        "interval_method": data["interval_method"],
        "verdict_method": data["verdict_method"],
        "verdict_level": data["verdict_level"],
        "best_set_method": data["best_set_method"],
        "alpha": data["alpha"],
        "power": data["power"],
        "higher_is_better": data["higher_is_better"],
        "split": split,
        "created": now,
        "stratify": task.stratify,
        "undefined_resamples": undefined,
        "undefined_rule": UNDEFINED_RULE,
        "warnings": edge_warnings,
        **(
            {"positive": (task_metric_labels(task) or ["", ""])[1]}
            if metric.prediction_kind == "score"
            else {}
        ),
    }
    # stats.board gives the rank probabilities in the board's row order (best first), like the rows.
    index = {k: i for i, k in enumerate(keys)}
    rank_distribution = np.asarray(data["rank_probabilities"]).tolist()

    pairwise: dict[str, Any] = {}
    if len(entries) <= PAIRWISE_MAX_ENTRIES:
        # The board's own method for every pair (stats.board), so a pair shows the interval its rows show.
        pairwise = board.pairwise()
        pairwise["names"] = [by_key[k].name for k in order]
        if have_items and metric.zero_one:
            right = np.column_stack([np.asarray(item_stats[index[k]])[:, 0] > 0.5 for k in order])
            only_row = (right[:, :, None] & ~right[:, None, :]).sum(axis=0)
            only_col = only_row.T
            pairwise["only_row_right"] = only_row.tolist()
            pairwise["only_column_right"] = only_col.tolist()
            pairwise["mcnemar_p"] = np.asarray(mcnemar_exact(only_row, only_col)).round(12).tolist()
    return BuiltBoard(rows=rows, signature=signature, rank_distribution=rank_distribution, pairwise=pairwise)


def _interval_method(setting: str, *, has_jackknife: bool) -> str | None:
    """The board's value-interval method from the challenge's setting: ``auto`` lets the metric choose
    (Wilson for plain proportions, docs/stats.md); BCa falls back to percentile without a jackknife."""
    if setting == "auto":
        return None
    if setting == "bca" and not has_jackknife:
        return "percentile"
    return setting


def _n_items(entries: list[Entry]) -> int:
    """The number of test items behind the entries' scores (for the items-needed calculation)."""
    shapes = [e.score.item_statistics_shape for e in entries if e.score.item_statistics_shape]
    if shapes:
        return int(shapes[0][0])
    jack = entries[0].score.jackknife_array()
    return len(jack) if jack is not None else 0


# --- shake-up report at the reveal ---------------------------------------------------------------------
#: Re-splits of the shake-up report's reference (the Monte Carlo p-values resolve to 1/1001).
SHAKEUP_RESPLITS = 1000


def build_shakeup(
    *,
    task: Task,
    public: BoardSnapshot,
    private: BoardSnapshot,
    public_scores: dict[int, Any],
    private_scores: dict[int, Any],
) -> tuple[dict[str, Any], str]:
    """The shake-up report of the entries on both boards (teams; baselines are left out), and its chart.

    ``public_scores`` and ``private_scores`` map a submission id to its stored Score on that split; their
    per-item statistics feed the re-split reference and stay here (only aggregates leave).
    """
    from stats.shakeup import shakeup, slope_chart_svg

    metric = get_metric(task.metric)
    pub_rows = {r["key"]: r for r in public.rows if not r.get("is_baseline")}
    priv_rows = {r["key"]: r for r in private.rows if not r.get("is_baseline")}
    keys = sorted(set(pub_rows) & set(priv_rows))
    keys = [k for k in keys if pub_rows[k]["submission_id"] in public_scores]
    keys = [k for k in keys if priv_rows[k]["submission_id"] in private_scores]
    if len(keys) < 2:
        return {
            "available": False,
            "reason": "Fewer than two teams are on both the public and the private board.",
        }, ""
    pub_s = [public_scores[pub_rows[k]["submission_id"]] for k in keys]
    priv_s = [private_scores[priv_rows[k]["submission_id"]] for k in keys]
    names = [str(pub_rows[k]["name"]) for k in keys]
    if len(set(names)) != len(names):
        names = [f"{pub_rows[k]['name']} ({pub_rows[k]['team']})" for k in keys]
    item_stats = [
        (a.item_statistics_array(), b.item_statistics_array()) for a, b in zip(pub_s, priv_s, strict=True)
    ]
    have_items = not metric.rank_based and all(a is not None and b is not None for a, b in item_stats)
    pub_rep = np.column_stack([s.replicate_array() for s in pub_s])
    priv_rep = np.column_stack([s.replicate_array() for s in priv_s])
    paired = pub_rep.shape == priv_rep.shape
    challenge = task.challenge
    report = shakeup(
        [float(pub_rows[k]["value"]) for k in keys],
        [float(priv_rows[k]["value"]) for k in keys],
        names=names,
        higher_is_better=metric.higher_is_better,
        metric=metric.name,
        public_rank_sets=[_rank_set(pub_rows[k]) for k in keys],
        private_best_set=[priv_rows[k].get("in_best_set") for k in keys],
        public_replicates=pub_rep if paired else None,
        private_replicates=priv_rep if paired else None,
        item_statistics=[(np.asarray(a, np.float64), np.asarray(b, np.float64)) for a, b in item_stats]
        if have_items
        else None,
        finalize=metric.finalize if have_items else None,
        resplits=SHAKEUP_RESPLITS,
        seed=challenge.seed,
        confidence=challenge.confidence,
    )
    data = report.as_dict()
    data["available"] = True
    data["public_sequence"] = public.sequence
    data["private_sequence"] = private.sequence
    data["higher_is_better"] = metric.higher_is_better
    data["keys"] = dict(zip(names, keys, strict=True))
    title = f"{challenge.title}: {task.title}"
    return data, slope_chart_svg(report, title=title).decode()


def _rank_set(row: dict[str, Any]) -> tuple[int, int] | None:
    sim = row.get("simultaneous_rank_interval")
    if isinstance(sim, list | tuple) and len(sim) == 2:
        return int(sim[0]), int(sim[1])
    if row.get("rank_sim_low") is not None and row.get("rank_sim_high") is not None:
        return int(row["rank_sim_low"]), int(row["rank_sim_high"])
    return None


# --- cross-task summary ----------------------------------------------------------------------------------
def build_summary(
    *, challenge: Challenge, snapshots: list[tuple[Task, BoardSnapshot]]
) -> tuple[dict[str, Any], str]:
    """Average ranks, Friedman / Iman-Davenport, Nemenyi CD and cliques over the tasks, and the diagram.

    Entries are matched across tasks by their key (a team, or a baseline submission); only entries
    present on every task's board take part, and only tasks sharing one direction of "better".
    """
    from stats.cddiagram import cd_diagram_svg
    from stats.crosstask import compare_across_tasks

    if len(snapshots) < 2:
        return {
            "available": False,
            "reason": "A cross-task comparison needs at least two tasks with boards.",
        }, ""
    directions = {metric_higher_is_better(t.metric) for t, _ in snapshots}
    if len(directions) != 1:
        return {"available": False, "reason": "The tasks' metrics disagree on whether higher is better."}, ""
    per_task = [{r["key"]: r for r in snap.rows} for _, snap in snapshots]
    common = sorted(set.intersection(*(set(rows) for rows in per_task)))
    if len(common) < 2:
        return {"available": False, "reason": "Fewer than two entries are on every task's board."}, ""
    names = [per_task[0][k]["name"] for k in common]
    if len(set(names)) != len(names):
        names = [f"{per_task[0][k]['name']} ({per_task[0][k]['team']})" for k in common]
    scores = np.array([[rows[k]["value"] for k in common] for rows in per_task])
    result = compare_across_tasks(
        scores,
        names=names,
        higher_is_better=directions.pop(),
        alpha=0.05,
        posthoc="nemenyi",
        metric=",".join(sorted({t.metric for t, _ in snapshots})),
    )
    data = result.as_dict()
    data["available"] = True
    data["tasks"] = [t.slug for t, _ in snapshots]
    data["snapshots"] = [s.sequence for _, s in snapshots]
    data["keys"] = dict(zip(names, common, strict=True))
    data["scores"] = scores.tolist()
    svg = cd_diagram_svg(result, title=challenge.title).decode()
    return data, svg
