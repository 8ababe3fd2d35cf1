"""The board of a task: the one owner of what a board snapshot holds, built from the ``stats`` package.

``build_board`` turns the stored scores of a task's entries into the snapshot's rows (:class:`SnapshotRow`),
signature (:class:`BoardSignature`, flat, one key per meaning), rank distribution and pairwise table
(``stats.board.Board.pairwise``: the board's own max-t ``pair_bounds``, so a pair shows the numbers its
rows show); no item labels are needed. They are written once, in the snapshot, and the API, the site
and both downloads read them as stored (snapshots written in older shapes were upgraded once, by the
migration ``rankings/0005_snapshot_rows_upgraded``).

``build_shakeup`` and ``build_summary`` build the reveal's shake-up report and the cross-task summary
from stored snapshots.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from functools import partial
from typing import TYPE_CHECKING, Any, TypedDict, cast

import numpy as np
from django.utils import timezone

import stats
from leaderboard.core.exceptions import ApplicationError
from leaderboard.rankings.distribution import pack_rank_distribution
from leaderboard.scoring.engine import metric_higher_is_better, task_metric_labels
from leaderboard.scoring.kinds import get_kind
from leaderboard.scoring.selectors import task_minority_count
from stats.board_update import BoardCache  # also for rankings.board_cache: one importer of stats here
from stats.cddiagram import cd_diagram_svg
from stats.checks import UNDEFINED_RULE, defined_rows, design_warnings, undefined_warning, value_warnings
from stats.compare_ranks import min_ranks
from stats.crosstask import compare_across_tasks
from stats.ladder import LadderBoard
from stats.metrics import get_metric
from stats.power import board_resolution, items_for_gap, measured_resolution_zero_one, planned_resolution
from stats.robustness import (
    RankingSchemes,
    SchemeRanking,
    blob_plot_svg,
    challenge_ranking,
    rank_robustness,
    ranking_schemes,
)
from stats.selection import SELECTION_METHOD, leader_adjusted
from stats.shakeup import shakeup, slope_chart_svg

if TYPE_CHECKING:
    from leaderboard.challenges.models import Challenge, Task
    from leaderboard.rankings.models import BoardSnapshot
    from leaderboard.rankings.services import Entry

#: The statistics engine's version (``rankings.board_cache`` keys its kept boards by it).
ENGINE_VERSION: str = stats.__version__


# --- the snapshot's row and signature -------------------------------------------------------------------
class SnapshotRow(TypedDict, total=False):
    """One entry of a stored board, as the API returns it, the site draws it and the CSV writes it.

    Numbers are stored in full; readers round them to the board's precision (``rankings.precision``).
    """

    # the entry
    rank: int
    name: str
    team: str
    key: str  # the entry across tasks and snapshots: ``team:<id>``, or a baseline submission
    is_baseline: bool
    submission_id: int
    # a Ladder board's row (rankings.ladder): the submission whose released score the row shows, when it is
    # not the entry the row names (the team selected another one)
    shown_from: str | None
    submitted_at: str
    description: str
    link: str
    # its value, with the board's interval method, and its ranks
    value: float
    low: float | None
    high: float | None
    interval_method: str
    interval_warning: str | None
    rank_low: int  # the marginal rank interval
    rank_high: int
    rank_sim_low: int  # the simultaneous rank set (max-t)
    rank_sim_high: int
    # the verdict: max-t comparison with the best (``stats.board``)
    verdict: str
    is_leader: bool
    compared_with: str | None  # the entry's name it is compared with (the leader; the runner-up for it)
    compared_with_key: str | None
    compared_with_submission_id: int | None
    diff: float | None  # value minus compared_with's value, with its max-t simultaneous interval
    diff_low: float | None
    diff_high: float | None
    diff_se: float | None
    in_best_set: bool
    in_best_set_max_t: bool
    in_best_set_holm: bool
    # the pair test against the observed leader (not the verdict), and the items it would need
    p_value: float | None
    p_adjusted: float | None
    items_needed: int | None
    # entries with several runs (seeds)
    n_runs: int | None
    seed_sd: float | None
    test_set_sd: float | None
    # the leader only (boards of two entries or more): its value adjusted for having been selected as the
    # best of the board (the winner's curse, ``stats.selection.leader_adjusted``): the hybrid estimate and
    # interval of Andrews, Kitagawa and McCloskey, the conditional one (an end is None where it is
    # unbounded), and the bootstrap bias correction from the common resamples
    adjusted_value: float | None
    adjusted_low: float | None
    adjusted_high: float | None
    conditional_value: float | None
    conditional_low: float | None
    conditional_high: float | None
    bias_corrected: float | None
    # the smallest difference to the leader this row's paired test resolves at 80% power (issue 23:
    # ``stats.power.board_resolution``, from the bootstrap standard error of the paired difference)
    resolvable_gap: float | None
    # the task's secondary metrics (issue 20), in the organizer's order: each ``{"metric", "value",
    # "p_value", "p_adjusted"}``, the entry's value, its paired test against the leader (by the primary
    # metric), and that p-value adjusted across the secondary metrics
    # (``stats.text.significance.adjust_across_metrics``); only on boards of tasks that name some
    secondary: list[dict[str, Any]] | None


#: The row's fields in order: the API's keys and the downloads' columns.
ROW_FIELDS: tuple[str, ...] = tuple(SnapshotRow.__annotations__)
_ROW_FIELD_SET = frozenset(ROW_FIELDS)  # membership per key of every row (K rows per rebuild)


class BoardSignature(TypedDict, total=False):
    """How a board was computed: every setting once, under one name (``stats.signature`` settings that
    have no field here, e.g. ``runs`` or ``randomizations``, are kept under their own names)."""

    metric: str
    higher_is_better: bool
    split: str
    interval_method: str
    confidence: float
    resamples: int
    seed: int
    stratify: str
    grouped: str
    test: str
    correction: str
    alpha: float
    power: float
    verdict_method: str
    verdict_level: float
    difference_interval: str
    best_set_method: str
    stepdown: str
    rank_ties: str
    positive: str
    undefined_resamples: int
    undefined_rule: str
    # the leader's selection adjustment (``stats.selection``; the numbers are on the leader's row)
    selection_method: str
    selection_beta: float
    selection_cutoff: float
    selection_event: str
    selection_resolution: float
    selection_bias: str
    selection_rule: str
    warnings: list[str]
    engine_version: str
    # the task's secondary metrics (issue 20): names, primary, test, adjustment and its label
    secondary_metrics: dict[str, Any]
    signature_text: str  # ``stats.signature.Signature`` as text: what reproduces the numbers
    created: str
    inputs: str  # digest of what the board was built from (``rankings.services``)


#: Names of older snapshots (``stats.signature.Signature.as_dict`` merged with the board's settings) ->
#: the one name of each meaning; ``None``: a second copy of a setting stored under another name.
_SIGNATURE_RENAMES: dict[str, str | None] = {
    "method": "interval_method",
    "version": "engine_version",
    "best_set": "best_set_method",
    "verdict": None,  # the words of verdict_method and alpha
}


def flat_signature(signature: Mapping[str, Any], extra: Mapping[str, Any] | None = None) -> BoardSignature:
    """One key per meaning from a signature and ``stats.signature`` settings (``extra``): the board's
    typed settings win over the same setting's text copy in ``extra``."""
    out: dict[str, Any] = {}
    for key, value in signature.items():
        name = _SIGNATURE_RENAMES.get(key, key)
        if key == "extra" or name is None or (key != name and name in signature):
            continue  # both names stored: the one name's value holds
        out[name] = value
    for key, value in (extra or {}).items():
        name = _SIGNATURE_RENAMES.get(key, key)
        if name is not None and name not in out:
            out[name] = value
    return cast(BoardSignature, out)


#: ``stats.board``'s row names -> the snapshot row's names.
_ROW_PAIRS = {
    "interval": ("low", "high"),
    "rank_interval": ("rank_low", "rank_high"),
    "simultaneous_rank_interval": ("rank_sim_low", "rank_sim_high"),
    "difference_interval": ("diff_low", "diff_high"),
}
_ROW_RENAMES = {
    "difference": "diff",
    "adjusted_p_value": "p_adjusted",
    "difference_standard_error": "diff_se",
}


def snapshot_row(stored: Mapping[str, Any]) -> SnapshotRow:
    """A row in the snapshot's shape (:class:`SnapshotRow`, its fields in order) from ``stats.board``'s row
    (pairs and long names are flattened) or from a row already in the shape (the same values come back).
    Keys the row does not define are left out."""
    row: dict[str, Any] = {}
    for old, (lo, hi) in _ROW_PAIRS.items():
        pair = stored.get(old)
        if isinstance(pair, Sequence) and not isinstance(pair, str) and len(pair) == 2:
            row[lo], row[hi] = pair[0], pair[1]
    for old, new in _ROW_RENAMES.items():
        if old in stored:
            row[new] = stored[old]
    row.update({k: v for k, v in stored.items() if k in _ROW_FIELD_SET})
    return cast(SnapshotRow, {k: row[k] for k in ROW_FIELDS if k in row})


def _board_row(r: Mapping[str, Any], entry: Entry, by_key: Mapping[str, Entry]) -> SnapshotRow:
    """The snapshot's row of one entry from its ``stats.board`` row (whose names are entry keys)."""
    sub = entry.score.submission
    other = None if r["compared_with"] is None else by_key[r["compared_with"]]
    return snapshot_row(
        {
            **r,
            "key": entry.key,
            "name": entry.name,
            "compared_with": None if other is None else other.name,
            "compared_with_key": r["compared_with"],
            "compared_with_submission_id": None if other is None else other.score.submission.pk,
            "team": entry.team,
            "is_baseline": sub.is_baseline,
            "submission_id": sub.pk,
            "submitted_at": sub.created_at.isoformat(),
            "description": sub.description,
            "link": sub.link,
        }
    )


def ladder_board(
    *, mode: str, higher_is_better: bool, eta: float, precision: int, z: float, shown: float | None
) -> LadderBoard:
    """One team's public value under a Ladder (``stats.ladder.LadderBoard``), for the Ladder modes of
    ``rankings.policy`` (moved here from ``scoring.engine``: the public board's rule is a rankings concern)."""
    return LadderBoard(
        mode=mode,  # type: ignore[arg-type]
        higher_is_better=higher_is_better,
        eta=eta,
        precision=precision,
        z=z,
        shown=shown,
    )


# --- boards --------------------------------------------------------------------------------------------
#: Pairwise tables (every pair of entries) are stored for boards up to this size; they cost K^2 per board.
PAIRWISE_MAX_ENTRIES = 60


#: The attribute of a ``Score`` (read for a rebuild) that holds its column's digest
#: (``BoardCache.column_digest`` of its replicates and jackknife), computed once per score and process and
#: kept with its columns (``board_cache.score_data``).
COLUMN_DIGEST = "_board_column_digest"


def column_digest_of(score: Any) -> str | None:
    """The digest of a score's column (its replicates and jackknife as stored), computed on first use and
    kept on the instance; None without replicates."""
    digest = getattr(score, COLUMN_DIGEST, None)
    if digest is None and score.replicates is not None:
        digest = BoardCache.column_digest(score.replicate_array(), score.jackknife_array())
        setattr(score, COLUMN_DIGEST, digest)
    return digest


def stack_columns(columns: list[Any]) -> Any:
    """``np.column_stack`` of float64 columns of one length, the same array (C-ordered, the same bytes),
    copied column by column into one new array: at K = 5,000, B = 10,000 0.25 s against 0.50 s (measured,
    docs/benchmarks.md "Fourth pass"). Anything else goes to ``np.column_stack`` (its result, its errors)."""
    if not columns or any(
        not isinstance(c, np.ndarray) or c.ndim != 1 or c.dtype != np.float64 or len(c) != len(columns[0])
        for c in columns
    ):
        return np.column_stack(columns)
    out = np.empty((len(columns[0]), len(columns)))
    for j, c in enumerate(columns):
        out[:, j] = c
    return out


def _board_sds(board: Any, keys: list[str]) -> Any:
    """The entries' test-set standard deviations as the stats board computed them, in the order of ``keys``."""
    sd_of = {r.name: r.test_set_sd for r in board.rows}
    return np.array([sd_of[k] for k in keys])


@dataclass(frozen=True)
class BuiltBoard:
    rows: list[SnapshotRow]
    signature: BoardSignature
    rank_distribution: dict[str, Any] | list[list[float]]
    pairwise: dict[str, Any]
    robustness: dict[str, Any] = field(default_factory=dict)
    #: wall seconds of the build's parts (the rebuild's log line: where the board stage goes)
    parts: dict[str, float] = field(default_factory=dict)


def build_board(
    *, task: Task, split: str, entries: list[Entry], cache: BoardCache | None = None
) -> BuiltBoard:
    """All statistics of one board from the stored scores of its entries (no item labels needed).

    ``cache``: a :class:`stats.board_update.BoardCache` to build with (``rankings.board_cache``): the same
    board, through the update path when it holds the previous board minus one entry."""
    from stats.board import build_board as stats_build_board
    from stats.board import discordant_counts
    from stats.compare import mcnemar_exact

    challenge = task.challenge
    metric = get_kind(task.kind).task_metric(task)
    now = timezone.now().isoformat()
    if not entries:
        return BuiltBoard(
            rows=[],
            signature={
                "metric": task.metric,
                "resamples": challenge.resamples,
                "seed": challenge.seed,
                "confidence": challenge.confidence,
                "interval_method": challenge.interval_method,
                "correction": challenge.correction,
                "engine_version": stats.__version__,
                "split": split,
                "created": now,
            },
            rank_distribution=[],
            pairwise={},
        )
    parts = Laps()
    keys = [e.key for e in entries]
    values = np.array([e.score.value for e in entries])
    theta = stack_columns([e.score.replicate_array() for e in entries])
    # resamples in which the metric is undefined: the stated rule of stats.checks (dropped for all, counted);
    # a board never fails for it, it warns when more than UNDEFINED_LIMIT are dropped
    try:
        keep, undefined = defined_rows(theta, limit=1.0)
    except ValueError as exc:
        raise ApplicationError(f"The board of {task} cannot be built: {exc}.") from exc
    resamples_stored = theta.shape[0]
    if undefined:  # else every row is kept: the same array, without a copy of B x K (80 MB at K = 1,000)
        theta = theta[keep]
    jack_list = [e.score.jackknife_array() for e in entries]
    jackknife = stack_columns(jack_list) if all(j is not None and len(j) for j in jack_list) else None
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
    # a rank metric on binary truth: its verdict declines below stats.board.FEW_POSITIVES of the smaller
    # class (the bootstrap claims falsely 0.21 of the time with 3 positives, issue 21)
    positives = task_minority_count(task=task, split=split) if metric.rank_based else None
    parts.lap("stack")
    edge_warnings += value_warnings(metric, values.tolist(), [e.name for e in entries])
    edge_warnings += undefined_warning(undefined, resamples_stored)
    edge_warnings += get_kind(task.kind).board_warnings(
        task,
        names=[e.name for e in entries],
        values=values,
        item_statistics=[np.asarray(s, dtype=np.float64) for s in item_stats] if have_items else None,
        groups=group_codes,
    )
    parts.lap("warnings")
    # the update path checks the previous entries' columns by these digests (kept with their bytes), not
    # by the arrays (O(B K): 0.8 GB hashed or compared per build at K = 5,000); only when the columns are the
    # stored ones (no resample dropped) with their jackknife
    digests: list[str] | None = None
    if cache is not None and not undefined and jackknife is not None:
        found = [column_digest_of(e.score) for e in entries]
        digests = None if any(d is None for d in found) else cast(list[str], found)
    build = stats_build_board if cache is None else partial(cache.build, column_digests=digests)
    board = build(
        names=keys,
        values=values,
        replicates=theta,
        higher_is_better=metric.higher_is_better,
        metric_name=metric.name,
        seed=challenge.seed,
        confidence=challenge.confidence,
        interval=get_kind(task.kind).board_interval(
            task.metric, challenge, has_jackknife=jackknife is not None
        ),
        jackknife=jackknife,
        correction=challenge.correction,
        item_statistics=[np.asarray(s, dtype=np.float64) for s in item_stats] if have_items else None,
        finalize=metric.finalize if have_items else None,
        zero_one=metric.zero_one,
        n_items=_n_items(entries) or task.n_items,
        runs=runs if any(r is not None for r in runs) else None,
        grouped=task.grouped,
        groups=group_codes,
        positives=positives,
    )
    parts.lap("stats")
    # the verdict's own warning (a declined verdict says why: few clusters, few positives)
    edge_warnings += [board.verdict_warning] if board.verdict_warning else []
    data = board.as_dict(rank_probabilities=False)  # packed below from the array, not from a list of lists
    by_key = {e.key: e for e in entries}
    order = [r["name"] for r in data["rows"]]
    rows = [_board_row(r, by_key[r["name"]], by_key) for r in data["rows"]]
    parts.lap("rows")
    stats_signature = data["signature"]
    settings = {
        **{k: v for k, v in stats_signature.items() if k != "extra"},
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
    signature = flat_signature(settings, stats_signature.get("extra"))
    # the entries' standard deviations are the board's own (its rows' test-set sd: ``theta.std(axis=0,
    # ddof=1)`` to the bit, kept per column on the update path), not an O(B K) reduction again; unless runs
    # made the board's replicates differ from these
    sds = None if any(r is not None for r in runs) else _board_sds(board, keys)
    signature.update(_adjust_leader(rows, keys, values, theta, metric, challenge, sd=sds))
    parts.lap("leader")
    secondary = secondary_metrics_board(task=task, entries=entries, rows=rows)
    if secondary is not None:
        signature["secondary_metrics"] = secondary
    # stats.board gives the rank probabilities in the board's row order (best first), like the rows.
    index = {k: i for i, k in enumerate(keys)}
    parts.lap("secondary")
    rank_distribution = pack_rank_distribution(board.rank_probabilities.round(6))
    parts.lap("pack")

    pairwise: dict[str, Any] = {}
    if len(entries) <= PAIRWISE_MAX_ENTRIES:
        # The board's own method for every pair (stats.board), so a pair shows the interval its rows show.
        pairwise = board.pairwise()
        pairwise["names"] = [by_key[k].name for k in order]
        if have_items and metric.zero_one:
            # McNemar's discordant counts as stats.board counts them for its pair test and items needed
            only_row = discordant_counts([np.asarray(item_stats[index[k]]) for k in order])
            only_col = only_row.T
            pairwise["only_row_right"] = only_row.tolist()
            pairwise["only_column_right"] = only_col.tolist()
            pairwise["mcnemar_p"] = np.asarray(mcnemar_exact(only_row, only_col)).round(12).tolist()
    # the rank robustness is not built here: it is built on first read from the same stored scores
    # (build_snapshot_robustness, rankings.services.board_robustness), so no rebuild pays for it
    robustness: dict[str, Any] = {}
    robustness["resolution"] = build_resolution(
        rows=rows,
        keys=keys,
        values=values,
        theta=theta,
        correct=(  # the leader's and the runner-up's items only: the measured resolution reads no other
            {k: np.asarray(item_stats[index[k]])[:, 0] > 0.5 for k in (str(r.get("key")) for r in rows[:2])}
            if have_items and metric.zero_one
            else None
        ),
        metric=task.metric,
        higher_is_better=metric.higher_is_better,
        n_items=_n_items(entries) or task.n_items,
        alpha=float(data["alpha"]),
        # the board's own standard deviations of the differences to the leader (the same numbers), unless
        # runs made the board's replicates differ from the stored ones
        leader_difference_sd=None
        if any(r is not None for r in runs)
        else dict(zip((r.name for r in board.rows), board.leader_difference_sd.tolist(), strict=True)),
        leader=board.leader,
    )
    parts.lap("resolution")
    return BuiltBoard(
        rows=rows,
        signature=signature,
        rank_distribution=rank_distribution,
        pairwise=pairwise,
        robustness=robustness,
        parts=parts.seconds,
    )


#: The correction of the secondary metrics' p-values across metrics (``adjust_across_metrics``'s default).
SECONDARY_CORRECTION = "holm"


def secondary_label(*, n: int, primary: str, named: Any) -> str:
    """The words shown beside the secondary metrics' comparisons (board page, API signature, CSV header).

    >>> from datetime import datetime, timezone as tz
    >>> secondary_label(n=2, primary="bleu", named=datetime(2026, 12, 2, 4, 5, tzinfo=tz.utc))
    'adjusted across 2 metrics (Holm); primary: bleu, named before 2026-12-02 04:05 UTC'
    """
    when = named.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"adjusted across {n} metrics (Holm); primary: {primary}, named before {when}"


def secondary_metrics_board(
    *, task: Task, entries: list[Entry], rows: list[SnapshotRow]
) -> dict[str, Any] | None:
    """The task's secondary metrics on its board (issue 20), or None for a task that names none.

    The primary metric (``task.metric``) ranks; for each secondary metric every entry gets its value and
    the paired approximate randomization test against the leader (the primary's leader: exact for any
    corpus metric, ``stats.compare.paired_randomization`` on the stored per-item statistics, with the
    challenge's resamples and seed). For each entry, the p-values of the secondary metrics are adjusted
    together (Holm) by ``stats.text.significance.adjust_across_metrics``, the primary's p-value left as it
    is; the rows get ``secondary`` and the signature says what was done, under the label. An entry
    without per-item statistics (several runs) has its value and no test.
    """
    from leaderboard.scoring.models import MetricScore
    from stats.compare import paired_randomization
    from stats.text.significance import adjust_across_metrics

    kind = get_kind(task.kind)
    names = kind.secondary_names(task)
    if not names or not rows:
        return None
    challenge = task.challenge
    stored: dict[tuple[int, str], MetricScore] = {
        (m.score_id, m.metric): m for m in MetricScore.objects.filter(score__in=[e.score.pk for e in entries])
    }
    by_key = {e.key: e for e in entries}
    keys = [str(r["key"]) for r in rows]
    leader = next((i for i, r in enumerate(rows) if r.get("is_leader")), 0)
    values: dict[str, list[float | None]] = {}
    p_values: dict[str, list[float]] = {}
    for name in names:
        found = [stored.get((by_key[k].score.pk, name)) for k in keys]
        values[name] = [None if m is None else m.value for m in found]
        statistics = [None if m is None else m.item_statistics_array() for m in found]
        p = [math.nan] * len(keys)
        if len(keys) > 1 and all(s is not None for s in statistics):
            result = paired_randomization(
                [np.asarray(s, dtype=np.float64) for s in statistics],
                finalize=kind.secondary_metric(task, name).finalize,
                reference=leader,
                randomizations=challenge.resamples,
                seed=challenge.seed,
            )
            p = [float(x) for x in result.p_values]
        p_values[name] = p
    # the entries tested on every secondary metric (not the leader; not an entry of several runs, nor a
    # board of one entry); the primary's p-value is passed as the function wants it and left unadjusted
    tested = [
        i for i in range(len(keys)) if i != leader and all(math.isfinite(p_values[n][i]) for n in names)
    ]
    adjusted_p = {name: [math.nan] * len(keys) for name in names}
    if tested:
        primary_p = [rows[i].get("p_value") for i in tested]
        adjusted = adjust_across_metrics(
            {
                task.metric: [1.0 if p is None else float(p) for p in primary_p],
                **{name: [p_values[name][i] for i in tested] for name in names},
            },
            primary=task.metric,
            correction=SECONDARY_CORRECTION,
        )
        for name in names:
            for j, i in enumerate(tested):
                adjusted_p[name][i] = float(adjusted.p_values[name][j])
    for i, row in enumerate(rows):
        row["secondary"] = [
            {
                "metric": name,
                "value": values[name][i],
                "p_value": None if i == leader or not math.isfinite(p_values[name][i]) else p_values[name][i],
                "p_adjusted": None if not math.isfinite(adjusted_p[name][i]) else adjusted_p[name][i],
            }
            for name in names
        ]
    return {
        "primary": task.metric,
        "metrics": names,
        "higher_is_better": {name: kind.secondary_metric(task, name).higher_is_better for name in names},
        "named": task.created_at.isoformat(),
        "test": f"paired approximate randomization against the leader, R = {challenge.resamples}, "
        f"seed {challenge.seed}",
        "correction": f"{SECONDARY_CORRECTION} across the {len(names)} secondary metrics, entry by entry; "
        f"the primary ({task.metric}) unadjusted",
        "label": secondary_label(n=len(names), primary=task.metric, named=task.created_at),
    }


#: Rank robustness (rank frequencies, blob plot, Kendall's tau-b of every bootstrap ranking) is computed
#: for boards up to this size: tau-b is vectorised over the resamples up to 300 entries (above, scipy per
#: resample: about 19 s at 1,000 entries), and a blob plot of more rows is not read anyway.
ROBUSTNESS_MAX_ENTRIES = 300
#: The blob plot (SVG) is drawn for boards up to this size: it draws K^2 circles (about 1.5 MB at 60 entries,
#: 31 MB at 300); larger boards keep the text alternative and the table, which say the same.
BLOB_MAX_ENTRIES = 30
#: The three ranking schemes side by side need per-item scores (zero-one metrics: 1 if the item is right)
#: and K (K - 1) Wilcoxon tests for test-then-rank: for boards up to this size (4.4 s at 60 entries and
#: 1,000 items, 0.5 s at 20; docs/service.md).
SCHEMES_MAX_ENTRIES = 20


def _display_names(rows: Sequence[SnapshotRow]) -> list[str]:
    names = [str(r.get("name", "")) for r in rows]
    if len(set(names)) != len(names):
        names = [f"{r.get('name', '')} ({r.get('team', '')})" for r in rows]
    return names


def build_snapshot_robustness(
    *, task: Task, rows: Sequence[SnapshotRow], scores: Mapping[int, Any], draw: bool = True
) -> dict[str, Any]:
    """:func:`build_robustness` of a stored board from the scores it was built from (``scores``: submission
    id -> Score with its replicates and per-item statistics), with the inputs ``build_board`` gives it: the
    values and replicates in the rows' order, resamples where the metric is undefined dropped for all
    (``stats.checks.defined_rows``), per-item right/wrong for a zero-one metric."""
    metric = get_metric(task.metric)
    title = f"{task.challenge.title}: {task.title}"
    if not 2 <= len(rows) <= ROBUSTNESS_MAX_ENTRIES:  # said without reading a replicate
        return build_robustness(
            rows=rows,
            values=None,
            theta=None,
            item_scores=None,
            higher_is_better=True,
            confidence=0.95,
            title=title,
        )
    ordered = [scores[int(r["submission_id"])] for r in rows]
    values = np.array([s.value for s in ordered])
    theta = np.column_stack([s.replicate_array() for s in ordered])
    keep, _ = defined_rows(theta, limit=1.0)
    item_stats = [s.item_statistics_array() for s in ordered]
    have_items = all(x is not None for x in item_stats) and not metric.rank_based
    return build_robustness(
        rows=rows,
        values=values,
        theta=theta[keep],
        item_scores=(
            np.column_stack([np.asarray(x)[:, 0] for x in item_stats])
            if have_items and metric.zero_one
            else None
        ),
        higher_is_better=metric.higher_is_better,
        confidence=task.challenge.confidence,
        title=title,
        draw=draw,
    )


def build_robustness(
    *,
    rows: Sequence[SnapshotRow],
    values: Any,
    theta: Any,
    item_scores: Any,
    higher_is_better: bool,
    confidence: float,
    title: str,
    draw: bool = True,
) -> dict[str, Any]:
    """How stable the board's ranking is (BIAS; challengeR), in the rows' order: ``stats.robustness``'s rank
    frequencies and tau-b with the blob plot and its text, and the three ranking schemes when the board has
    per-item scores. Empty, with the reason, outside the sizes stated above or when it is undefined.

    ``draw``: draw the blob plot (``svg``; nearly all of the cost: 1.77 s of 1.83 s on a board of 3 entries at load 15);
    without it ``svg`` is empty and everything else the same."""
    k = len(rows)
    if k < 2:
        return {"available": False, "reason": "A ranking of fewer than two entries has nothing to vary."}
    if k > ROBUSTNESS_MAX_ENTRIES:
        return {
            "available": False,
            "reason": f"Rank robustness is computed for boards of up to {ROBUSTNESS_MAX_ENTRIES} entries; "
            f"this board has {k} (the rank distribution and the rank sets on the board still hold).",
        }
    names = _display_names(rows)
    try:
        result = rank_robustness(
            values, theta, higher_is_better=higher_is_better, names=names, confidence=confidence
        )
    except ValueError as exc:
        return {"available": False, "reason": f"Not computed: {exc}"}
    out: dict[str, Any] = {
        "available": True,
        **result.as_dict(),
        "keys": [r.get("key") for r in rows],
        "text": result.text(),
        "svg": blob_plot_svg(result, title=title).decode() if draw and k <= BLOB_MAX_ENTRIES else "",
        "svg_reason": ""
        if k <= BLOB_MAX_ENTRIES
        else f"The blob plot is drawn for boards of up to {BLOB_MAX_ENTRIES} entries.",
        "max_entries": ROBUSTNESS_MAX_ENTRIES,
    }
    if item_scores is not None and k <= SCHEMES_MAX_ENTRIES:
        schemes = ranking_schemes(
            np.asarray(item_scores, dtype=np.float64), higher_is_better=higher_is_better, names=names
        )
        out["schemes"] = schemes.as_dict()
    else:
        out["schemes_reason"] = (
            "The ranking schemes need per-item scores (zero-one metrics) and are computed for boards of up "
            f"to {SCHEMES_MAX_ENTRIES} entries."
        )
    return out


#: How the service reads ``stats.selection``'s stated rules (the board's signature carries it).
SELECTION_RULE = (
    "the board's leader (first by name among entries tied for first); direction by the metric; ties and "
    "discrete metrics: the selection event relaxed by half the metric's step; an unbounded end of the "
    "conditional interval is left empty (the hybrid interval is always bounded); boards of one entry have "
    "no selection to adjust for; every estimate and end is clipped to the metric's range, and no estimate is "
    "above the leader's value (below, for a lower-is-better metric): selecting the maximum biases it upward "
    "only, so an upward correction is the metric's discreteness, not information; the interval is on the "
    "normal scale, the board's value interval on its own method's, so their ends need not nest"
)

#: The leader's adjusted numbers that are estimates of its value (capped at the shown value by the rule).
_ADJUSTED_ESTIMATES = ("adjusted_value", "conditional_value", "bias_corrected")
_ADJUSTED_ENDS = ("adjusted_low", "adjusted_high", "conditional_low", "conditional_high")


def adjusted_within_rule(
    adjusted: Mapping[str, float | None],
    *,
    value: float,
    higher_is_better: bool,
    value_range: tuple[float, float],
) -> dict[str, float | None]:
    """The leader's selection-adjusted numbers under the stated rule (``SELECTION_RULE``, issue 23):

    - every estimate and interval end is clipped to the metric's range (an accuracy's adjusted upper end
      never reads 1.02);
    - no estimate claims an upward correction of the selected maximum: the bias-corrected, hybrid and
      conditional estimates are at most the leader's value (at least, for a lower-is-better metric).
      Selecting the best of K entries can only bias the best's value upward; on a discrete metric the
      bootstrap's bias can still come out negative by a fraction of one item, and that is not news.
      (The demo's iris board: bias-corrected 0.9342 above the shown 0.9333 becomes 0.9333.)

    The interval's ends are not capped by the board's value interval: the hybrid interval is on the normal
    scale and can reach past the Clopper-Pearson end on both sides (Andrews, Kitagawa and McCloskey's hybrid
    is wider than the naive interval in close races); the page says so. ``None`` stays ``None``."""
    low, high = value_range
    out: dict[str, float | None] = {}
    for key, number in adjusted.items():
        if number is None or not math.isfinite(number):
            out[key] = number if number is None else None
            continue
        number = min(max(float(number), low), high)
        if key in _ADJUSTED_ESTIMATES:
            number = min(number, value) if higher_is_better else max(number, value)
        out[key] = number
    return out


class Laps:
    """Wall seconds of consecutive parts of a piece of work, in order (:func:`build_board`'s parts; the
    rebuild's stages, ``rankings.services``), for a log line: ``lap(name)`` ends the part ``name``."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] = self.seconds.get(name, 0.0) + now - self._last
        self._last = now

    def __str__(self) -> str:
        return " ".join(f"{k}={v:.3f}s" for k, v in self.seconds.items())


def _adjust_leader(
    rows: list[SnapshotRow],
    keys: list[str],
    values: Any,
    theta: Any,
    metric: Any,
    challenge: Challenge,
    *,
    sd: Any = None,
) -> BoardSignature:
    """The leader's selection-adjusted estimates on its row, and their settings for the signature.

    A leader whose replicates are all equal has no sampling distribution to adjust: its row keeps no
    adjusted numbers and the signature says why (``selection_rule``)."""
    leader = next((r for r in rows if r.get("is_leader")), None)
    if leader is None or len(keys) < 2:
        return {}
    try:
        adj = leader_adjusted(
            values,
            theta,
            higher_is_better=metric.higher_is_better,
            names=keys,
            confidence=challenge.confidence,
            metric=metric.name,
            seed=challenge.seed,
            sd=sd,
        )
    except ValueError as exc:
        return {"selection_method": SELECTION_METHOD, "selection_rule": f"not adjusted: {exc}"}
    cond = adj.conditional_interval.as_dict()
    leader.update(
        adjusted_within_rule(  # type: ignore[typeddict-item]
            {
                "adjusted_value": adj.hybrid_estimate,
                "adjusted_low": adj.hybrid_interval.low,
                "adjusted_high": adj.hybrid_interval.high,
                "conditional_value": float(adj.conditional_estimate)
                if np.isfinite(adj.conditional_estimate)
                else None,
                "conditional_low": cond["low"],
                "conditional_high": cond["high"],
                "bias_corrected": adj.bias_corrected,
            },
            value=float(np.asarray(values, dtype=np.float64)[keys.index(str(leader.get("key")))]),
            higher_is_better=metric.higher_is_better,
            value_range=metric.value_range,
        )
    )
    return {
        "selection_method": SELECTION_METHOD,
        "selection_beta": adj.beta,
        "selection_cutoff": adj.cutoff,
        "selection_event": adj.selection_event,
        "selection_resolution": adj.resolution,
        "selection_bias": "bootstrap maximum over the common resamples",
        "selection_rule": SELECTION_RULE,
    }


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
    metric = get_kind(task.kind).task_metric(task)
    pub_rows, priv_rows, keys = _shakeup_entries(public, private, public_scores, private_scores)
    if len(keys) < 2:
        return {
            "available": False,
            "reason": "Fewer than two teams are on both the public and the private board.",
        }, ""
    pub_s = [public_scores[pub_rows[k]["submission_id"]] for k in keys]
    priv_s = [private_scores[priv_rows[k]["submission_id"]] for k in keys]
    names = _shakeup_names(pub_rows, keys)
    challenge = task.challenge
    report = shakeup(
        [float(pub_rows[k]["value"]) for k in keys],
        [float(priv_rows[k]["value"]) for k in keys],
        names=names,
        higher_is_better=metric.higher_is_better,
        metric=metric.name,
        public_rank_sets=[_rank_set(pub_rows[k]) for k in keys],
        private_best_set=[priv_rows[k].get("in_best_set") for k in keys],
        **_shakeup_replicates(pub_s, priv_s),
        **_shakeup_items(metric, pub_s, priv_s),
        resplits=SHAKEUP_RESPLITS,
        seed=challenge.seed,
        confidence=challenge.confidence,
    )
    data = {
        **report.as_dict(),
        "available": True,
        "public_sequence": public.sequence,
        "private_sequence": private.sequence,
        "higher_is_better": metric.higher_is_better,
        "keys": dict(zip(names, keys, strict=True)),
    }
    return data, slope_chart_svg(report, title=f"{challenge.title}: {task.title}").decode()


def _shakeup_entries(
    public: BoardSnapshot,
    private: BoardSnapshot,
    public_scores: dict[int, Any],
    private_scores: dict[int, Any],
) -> tuple[dict[str, SnapshotRow], dict[str, SnapshotRow], list[str]]:
    """Each board's team rows by key, and the keys on both boards with a stored score on each."""
    pub_rows = {r["key"]: r for r in public.rows if not r.get("is_baseline")}
    priv_rows = {r["key"]: r for r in private.rows if not r.get("is_baseline")}
    keys = [
        k
        for k in sorted(set(pub_rows) & set(priv_rows))
        if pub_rows[k]["submission_id"] in public_scores and priv_rows[k]["submission_id"] in private_scores
    ]
    return pub_rows, priv_rows, keys


def _shakeup_names(rows: dict[str, SnapshotRow], keys: list[str]) -> list[str]:
    """Entry names, with the team added when two entries share a name."""
    names = [str(rows[k]["name"]) for k in keys]
    if len(set(names)) != len(names):
        names = [f"{rows[k]['name']} ({rows[k]['team']})" for k in keys]
    return names


def _shakeup_replicates(pub_s: list[Any], priv_s: list[Any]) -> dict[str, Any]:
    """Both boards' bootstrap replicates, entries in columns, when they pair (same resamples)."""
    pub_rep = np.column_stack([s.replicate_array() for s in pub_s])
    priv_rep = np.column_stack([s.replicate_array() for s in priv_s])
    paired = pub_rep.shape == priv_rep.shape
    return {
        "public_replicates": pub_rep if paired else None,
        "private_replicates": priv_rep if paired else None,
    }


def _shakeup_items(metric: Any, pub_s: list[Any], priv_s: list[Any]) -> dict[str, Any]:
    """Per-item statistics for the re-split reference: decomposable metrics whose scores stored them."""
    item_stats = [
        (a.item_statistics_array(), b.item_statistics_array()) for a, b in zip(pub_s, priv_s, strict=True)
    ]
    if metric.rank_based or any(a is None or b is None for a, b in item_stats):
        return {"item_statistics": None, "finalize": None}
    return {
        "item_statistics": [(np.asarray(a, np.float64), np.asarray(b, np.float64)) for a, b in item_stats],
        "finalize": metric.finalize,
    }


def _rank_set(row: SnapshotRow) -> tuple[int, int] | None:
    if row.get("rank_sim_low") is not None and row.get("rank_sim_high") is not None:
        return int(row["rank_sim_low"]), int(row["rank_sim_high"])
    return None


# --- cross-task summary ----------------------------------------------------------------------------------
def build_summary(
    *,
    challenge: Challenge,
    snapshots: list[tuple[Task, BoardSnapshot]],
    robustness_of: Callable[[BoardSnapshot], Mapping[str, Any]],
) -> tuple[dict[str, Any], str]:
    """Average ranks, Friedman / Iman-Davenport, Nemenyi CD and cliques over the tasks, and the diagram.

    ``robustness_of``: a snapshot's rank robustness (``rankings.services.board_robustness``, built on first
    read and kept), whose ranking schemes the summary puts side by side across the tasks.

    Entries are matched across tasks by their key (a team, or a baseline submission); only entries
    present on every task's board take part, and only tasks sharing one direction of "better".
    """
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
    higher = directions.pop()
    metric = ",".join(sorted({t.metric for t, _ in snapshots}))
    result = compare_across_tasks(
        scores, names=names, higher_is_better=higher, alpha=0.05, posthoc="nemenyi", metric=metric
    )
    data = result.as_dict()
    data["available"] = True
    data["tasks"] = [t.slug for t, _ in snapshots]
    data["snapshots"] = [s.sequence for _, s in snapshots]
    data["keys"] = dict(zip(names, common, strict=True))
    data["scores"] = scores.tolist()
    data["higher_is_better"] = higher
    data["metric"] = metric
    data["ranking_schemes"] = _schemes_across_tasks(snapshots, common, names, robustness_of)
    svg = cd_diagram_svg(result, title=challenge.title).decode()
    from leaderboard.rankings.precision import task_decimals  # precision imports this module

    data["tied"] = tied_summary(data, {t.slug: task_decimals(t) for t, _ in snapshots}, title=challenge.title)
    return data, svg


#: Why the tied summary (before the reveal, for everyone but organizers) has no ranking schemes.
SCHEMES_WITHHELD = (
    "Shown once the board is revealed: the schemes rank the entries by their exact values, finer than the "
    "board's rounded numbers a participant reads until then."
)


def tied_summary(
    data: Mapping[str, Any], decimals_by_task: Mapping[str, int], *, title: str
) -> dict[str, Any]:
    """The cross-task summary as a participant reads it before the reveal (issue 21, item 8): computed from
    each task's values at its board's precision, so entries whose values are equal as shown tie on that
    task and share its average rank (Friedman's rule), and the average ranks, the test, the critical
    difference's cliques and the diagram say no more than the rounded values. The ranking schemes rank by
    exact values and are withheld. Stored beside the exact summary (``data["tied"]``, its diagram in
    ``svg``); organizers read the exact one. ``data``: :func:`build_summary`'s."""
    from leaderboard.rankings.precision import round_to

    tasks = list(data.get("tasks") or [])
    names = sorted(data.get("keys") or {}, key=lambda name: data["keys"][name])
    scores = [
        [round_to(v, decimals_by_task.get(slug, 1)) for v in line]
        for slug, line in zip(tasks, data.get("scores") or [], strict=True)
    ]
    result = compare_across_tasks(
        np.array(scores, dtype=np.float64),
        names=names,
        higher_is_better=bool(data.get("higher_is_better", True)),
        alpha=0.05,
        posthoc="nemenyi",
        metric=str(data.get("metric", "")),
    )
    out = result.as_dict()
    out.update(
        available=True,
        tasks=tasks,
        snapshots=data.get("snapshots"),
        keys=data.get("keys"),
        scores=scores,
        ranking_schemes={"available": False, "reason": SCHEMES_WITHHELD},
        svg=cd_diagram_svg(result, title=title).decode(),
        rule="each task's values at its board's precision; ties share their average rank",
    )
    return out


#: Which way each ranking scheme's score is better (``stats.robustness.SCHEMES``): the values by the
#: metric, the mean per-item rank lower, the count of tests won higher.
_SCHEME_HIGHER = {"rank-then-aggregate": False, "test-then-rank": True}


def _schemes_across_tasks(
    snapshots: list[tuple[Task, BoardSnapshot]],
    common: list[str],
    names: list[str],
    robustness_of: Callable[[BoardSnapshot], Mapping[str, Any]],
) -> dict[str, Any]:
    """Aggregate-then-rank, rank-then-aggregate and test-then-rank across the tasks, each with its consensus
    (``stats.robustness.challenge_ranking``), for the entries on every task's board: each task's scheme
    scores as its board's rebuild stored them (computed over all of that board's entries), re-ranked among
    these entries. Needs every task's schemes (per-item scores; boards up to SCHEMES_MAX_ENTRIES)."""
    per_task: dict[str, RankingSchemes] = {}
    for task, snap in snapshots:
        robustness = robustness_of(snap)
        stored = robustness.get("schemes")
        keys = robustness.get("keys") or []
        if not stored or not set(common) <= set(keys):
            return {"available": False, "reason": f"Task '{task.slug}' stores no ranking schemes."}
        where = [keys.index(k) for k in common]
        higher = metric_higher_is_better(task.metric)
        schemes = []
        for sch in stored["schemes"]:
            scores = np.asarray(sch["scores"], dtype=np.float64)[where]
            better = _SCHEME_HIGHER.get(sch["scheme"], higher)
            ranks = min_ranks(scores, higher_is_better=better)
            schemes.append(SchemeRanking(sch["scheme"], tuple(scores.tolist()), tuple(int(r) for r in ranks)))
        per_task[task.slug] = RankingSchemes(
            names=tuple(names),
            schemes=tuple(schemes),
            disagreements=(),
            tau_between={},
            alpha=float(stored.get("alpha", 0.05)),
            missing_value=float(stored.get("missing_value", 0.0)),
            missing=int(stored.get("missing", 0)),
            rules=str(stored.get("rules", "")),
        )
    result = challenge_ranking(per_task).as_dict()
    result.pop("per_task", None)
    return {
        "available": True,
        **result,
        "rule": "each task's scheme scores over its whole board, re-ranked among the entries on every task",
    }


# --- what the test set resolves (issue 23) ---------------------------------------------------------------
#: The power at which a board states the smallest difference its test set resolves.
RESOLUTION_POWER = 0.8


def planned(
    n_items: int, *, metric: str, alpha: float = 0.05, power: float = RESOLUTION_POWER, **given: Any
) -> dict[str, Any]:
    """Before any entry: the smallest difference ``n_items`` items resolve (``stats.power.planned_resolution``
    with the metric family's conservative default), or why it cannot be said without a pilot."""
    try:
        return planned_resolution(n_items, metric=metric, alpha=alpha, power=power, **given).as_dict()
    except (ValueError, TypeError) as exc:
        return {"difference": None, "n_items": n_items, "reason": str(exc), "alpha": alpha, "power": power}


def plan_items(
    gap: float, *, metric: str, alpha: float = 0.05, power: float = RESOLUTION_POWER, **given: Any
) -> dict[str, Any]:
    """For organizers planning a test set: items needed to detect ``gap`` at ``power`` for ``metric``
    (``stats.power.items_for_gap``; ``given``: ``accuracy``, ``discordant``, ``correlation``, ``sd``,
    ``pilot_standard_error`` with ``pilot_items``). Raises ValueError with the library's reason."""
    try:
        return items_for_gap(gap, metric=metric, alpha=alpha, power=power, **given).as_dict()
    except TypeError as exc:
        raise ValueError(str(exc)) from exc


def build_resolution(
    *,
    rows: list[SnapshotRow],
    keys: list[str],
    values: Any,
    theta: Any,
    correct: Mapping[str, Any] | None,
    metric: str,
    higher_is_better: bool,
    n_items: int,
    alpha: float,
    leader_difference_sd: Mapping[str, float] | None = None,
    leader: str | None = None,
) -> dict[str, Any]:
    """The smallest difference the test set resolves at 80% power, before (from the number of items) and
    after (from the entries: each row's bootstrap standard error of its difference to the leader, and for a
    zero-one metric the measured discordance of the leader and the runner-up). Sets ``resolvable_gap`` on
    every row but the leader's. ``leader_difference_sd`` (by key): the standard deviations of each entry's
    replicates minus those of ``leader`` when the board has them (``stats.board.Board``), not computed
    again."""
    out: dict[str, Any] = {"power": RESOLUTION_POWER, "alpha": alpha}
    if n_items:
        out["before"] = planned(n_items, metric=metric, alpha=alpha)
    if len(keys) < 2:
        return out

    def resolution(sd: Mapping[str, float] | None) -> Any:
        return board_resolution(
            values,
            theta,
            higher_is_better=higher_is_better,
            names=keys,
            alpha=alpha,
            power=RESOLUTION_POWER,
            leader_difference_sd=None if sd is None else [sd[k] for k in keys],
        )

    res = resolution(leader_difference_sd)
    if leader_difference_sd is not None and res.leader != leader:  # differences to another entry: computed
        res = resolution(None)
    gap = dict(zip(res.names, res.differences, strict=True))
    for row in rows:
        if row.get("key") != res.leader:
            row["resolvable_gap"] = gap.get(str(row.get("key")))
    out["after"] = {
        "difference": res.task_difference,
        "method": "z-test with the bootstrap standard error of the paired difference (median over entries)",
    }
    order = [str(r.get("key")) for r in rows]
    if correct is not None and len(order) > 1:
        measured = measured_resolution_zero_one(
            correct[order[0]].astype(int), correct[order[1]].astype(int), alpha=alpha, power=RESOLUTION_POWER
        )
        out["after_measured"] = {**measured.as_dict(), "between": [rows[0].get("name"), rows[1].get("name")]}
    return out
