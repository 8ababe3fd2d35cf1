"""The service's one adapter to ``stats/``: parsing uploads, scoring, building boards and summaries.

Everything the service asks of the statistics package goes through here, so the package's API is used in
one place and the hidden labels only meet predictions inside these functions.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from django.conf import settings
from django.utils import timezone

import stats
from leaderboard.core.exceptions import ApplicationError
from stats import io as stats_io
from stats.checks import (
    UNDEFINED_RULE,
    class_strata,
    defined_rows,
    design_warnings,
    order_positive,
    truth_problem,
    undefined_warning,
    units_problem,
    value_warnings,
)
from stats.engine import score_entries
from stats.ladder import LadderBoard
from stats.metrics import get_metric

if TYPE_CHECKING:
    from leaderboard.challenges.models import Challenge, Task
    from leaderboard.rankings.models import BoardSnapshot
    from leaderboard.rankings.services import Entry
    from leaderboard.scoring.selectors import HiddenTruth


#: Task.stratify -> the ``stratify`` argument of :func:`stats.checks.class_strata`.
STRATIFY: dict[str, bool | None] = {"auto": None, "class": True, "none": False}


def metric_higher_is_better(name: str) -> bool:
    return get_metric(name).higher_is_better


def metric_choices() -> list[tuple[str, str]]:
    from stats.metrics import METRICS

    return [(name, name.replace("_", " ")) for name in sorted(METRICS)]


def task_kind(metric: str) -> str:
    """The kind of task a metric scores: ``tabular``, ``detection`` or ``segmentation``."""
    return VISION_METRICS.get(metric, "tabular")


def input_error(exc: stats_io.InputError) -> ApplicationError:
    """An InputError from the parser as the service's error, with where it happened in ``extra``."""
    extra = {"file": exc.file, "line": exc.line, "column": exc.column}
    return ApplicationError(str(exc), extra={k: v for k, v in extra.items() if v is not None})


# --- public description of a task's files -------------------------------------------------------------------
@dataclass(frozen=True)
class PredictionFormat:
    """What a predictions file of a task looks like: public, derived from the metric alone."""

    metric: str
    description: str
    higher_is_better: bool
    kind: str
    columns: list[str]
    probabilities: bool


def prediction_format(metric_name: str) -> PredictionFormat:
    if metric_name in VISION_METRICS:
        return _vision_prediction_format(metric_name)
    metric = get_metric(metric_name)
    return PredictionFormat(
        metric=metric.name,
        description=metric.description,
        higher_is_better=metric.higher_is_better,
        kind=metric.prediction_kind,
        columns=["id", *stats_io.prediction_columns(metric.prediction_kind, ranks=metric.ranks or 1)],
        probabilities=metric.scores_are_probabilities,
    )


# --- hidden labels -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ParsedTruth:
    ids: list[str]
    labels: list[Any]
    label_set: list[str]
    groups: list[str] | None
    private: list[bool] | None
    kind: str = "tabular"
    vision: dict[str, Any] = field(default_factory=dict)  # public settings of a vision task
    data: bytes | None = None  # a vision task's annotation file, stored as uploaded (hidden)

    def __repr__(self) -> str:  # never print hidden labels
        return f"ParsedTruth(items={len(self.ids)})"


def parse_truth(
    data: bytes,
    *,
    name: str,
    metric: str,
    labels: Sequence[str] | None,
    group_column: str | None,
    split_column: str | None,
    positive: str | None = None,
    ignore_index: int = 255,
    reduce_zero_label: bool = False,
) -> ParsedTruth:
    """Parse an organizer's hidden-labels file (``id,label`` [+ group column] [+ split column]).

    The split column, when named, says per item ``public`` or ``private`` (Kaggle-style boards); it is
    read here and the rest of the file by :func:`stats.io.read_truth`, which checks everything else.
    A test set on which the metric is undefined whatever the predictions (one class for ROC AUC, a
    constant truth for R^2), a split with fewer than two items or groups, and a positive class outside
    the label set are refused here, at upload (issue 11).

    Detection and segmentation tasks read their annotation file instead (:func:`_parse_vision_truth`).
    """
    if metric in VISION_METRICS:
        if group_column or split_column:
            raise ApplicationError(
                f"{name}: detection and segmentation tasks have no group or split column.",
                extra={"file": name, "field": "group_column" if group_column else "split_column"},
            )
        return _parse_vision_truth(
            data,
            name=name,
            metric=metric,
            class_names=labels,
            ignore_index=ignore_index,
            reduce_zero_label=reduce_zero_label,
        )
    try:
        metric_obj = get_metric(metric)
    except (KeyError, ValueError) as exc:
        raise ApplicationError(str(exc).strip("'\""), extra={"field": "metric"}) from exc
    private_by_id: dict[str, bool] | None = None
    split_position = 0  # the removed split column's 1-based position in a CSV file
    try:
        if split_column:
            data, private_by_id, split_position = _split_off_column(data, name=name, column=split_column)
        truth = stats_io.read_truth(
            io.BytesIO(data),
            name=name,
            kind=metric_obj.prediction_kind if metric_obj.prediction_kind == "value" else "label",
            label_set=list(labels) if labels else None,
            group_column=group_column,
            max_bytes=settings.UPLOAD_MAX_BYTES,
            max_rows=settings.TASK_MAX_ITEMS,
        )
    except stats_io.InputError as exc:
        if split_position and exc.column is not None and exc.column >= split_position:
            exc.column += 1  # the column's position in the organizer's file, split column included
        raise input_error(exc) from exc
    ids = [str(i) for i in truth.ids.tolist()]
    if metric_obj.prediction_kind == "value":
        label_set: list[str] = []
    else:
        label_set = [str(x) for x in labels] if labels else truth.label_set()
    private = None if private_by_id is None else [private_by_id[i] for i in ids]
    if private is not None and (all(private) or not any(private)):
        raise ApplicationError(
            f"{name}: the column '{split_column}' must mark some items 'public' and some 'private'.",
            extra={"file": name, "line": 1},
        )
    _check_truth_edges(
        metric_obj,
        truth.labels,
        label_set=label_set,
        positive=positive,
        groups=truth.groups,
        private=private,
        name=name,
    )
    return ParsedTruth(
        ids=ids,
        labels=truth.labels.tolist(),
        label_set=label_set,
        groups=None if truth.groups is None else [str(g) for g in truth.groups.tolist()],
        private=private,
    )


def task_metric_labels(task: Task) -> list[str] | None:
    """The label set as the metric takes it: ``[negative, positive]`` for binary-score metrics."""
    metric = get_metric(task.metric)
    if not task.labels:
        return None
    if metric.prediction_kind == "score" and len(task.labels) == 2:
        return order_positive(task.labels, task.positive_label or None)[0]
    return list(task.labels)


def task_positive_class(task: Task) -> str | None:
    """The positive class of a task with a binary-score metric (None for other metrics)."""
    try:
        if get_metric(task.metric).prediction_kind != "score":
            return None
        labels = task_metric_labels(task)
    except ValueError:
        return None
    return None if labels is None else str(labels[1])


def _check_truth_edges(
    metric: Any,
    labels: np.ndarray,
    *,
    label_set: list[str],
    positive: str | None,
    groups: np.ndarray | None,
    private: list[bool] | None,
    name: str,
) -> None:
    ordered: list[str] | None = label_set or None
    if metric.prediction_kind == "score" and label_set:
        try:
            ordered = order_positive(label_set, positive or None)[0]
        except ValueError as exc:
            raise ApplicationError(f"{name}: {exc}.", extra={"field": "positive"}) from exc
    elif positive:
        raise ApplicationError(
            f"A positive class applies to binary-score metrics (ROC AUC, AP, log loss, Brier), not {metric.name}.",
            extra={"field": "positive"},
        )
    mask_all = np.ones(labels.shape[0], dtype=bool)
    splits = [("", mask_all)]
    if private is not None:
        p = np.asarray(private, dtype=bool)
        splits = [(" (public split)", ~p), (" (private split)", p)]
    for where, mask in splits:
        n_units = int(mask.sum()) if groups is None else len(set(np.asarray(groups)[mask].tolist()))
        too_few = units_problem(n_units, grouped=groups is not None)
        if too_few is not None:
            raise ApplicationError(f"{name}{where}: {too_few}.", extra={"file": name})
        problem = truth_problem(metric, labels[mask], labels=ordered)
        if problem is not None:
            raise ApplicationError(f"{name}{where}: {problem}.", extra={"file": name})


def _split_off_column(data: bytes, *, name: str, column: str) -> tuple[bytes, dict[str, bool], int]:
    """Remove the split column from a truth file; return the rest, ``id -> is private`` and the column's
    1-based position (CSV; 0 for Parquet).

    A CSV file is decoded by the one parser's rules (archives, UTF-16, Latin-1 are refused with their
    messages) and rewritten so that every row starts on the line it started on in the organizer's file,
    so the line numbers of later errors are the file's own.
    """
    import csv

    if not data.strip():
        raise stats_io.InputError("the file is empty", file=name)
    if data.startswith(b"PAR1"):
        return _split_off_parquet_column(data, name=name, column=column)
    text = stats_io.decode_text(data, name=name)
    reader = csv.reader(io.StringIO(text, newline=""))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    header: list[str] | None = None
    private: dict[str, bool] = {}
    c = id_col = 0
    written = prev_end = 0  # physical lines written so far / read so far
    try:
        for row in reader:
            start, prev_end = prev_end + 1, reader.line_num
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if header is None:
                header = [h.strip() for h in row]
                if column not in header:
                    if len(header) == 1 and (";" in header[0] or "\t" in header[0]):
                        label = "';'" if ";" in header[0] else "tabs"
                        raise stats_io.InputError(
                            f"the file seems to use {label} as delimiter; use commas", file=name, line=start
                        )
                    raise stats_io.InputError(f"missing split column '{column}'", file=name, line=start)
                if "id" not in header:
                    raise stats_io.InputError("missing column 'id'", file=name, line=start)
                c, id_col = header.index(column), header.index("id")
            else:
                if len(row) != len(header):
                    raise stats_io.InputError(
                        f"expected {len(header)} fields, found {len(row)}", file=name, line=start
                    )
                value = row[c].strip().lower()
                if value not in ("public", "private"):
                    raise stats_io.InputError(
                        f"split '{row[c].strip()}' must be 'public' or 'private'",
                        file=name,
                        line=start,
                        column=c + 1,
                    )
                private[row[id_col].strip()] = value == "private"
            out.write("\n" * (start - 1 - written))  # blank lines keep the row on its own line number
            kept = [v for j, v in enumerate(row) if j != c]
            writer.writerow(kept)
            written = start - 1 + 1 + sum(v.count("\n") + v.count("\r") - v.count("\r\n") for v in kept)
    except csv.Error as exc:
        raise stats_io.InputError(f"malformed CSV: {exc}", file=name, line=prev_end + 1) from None
    if header is None:
        raise stats_io.InputError("the file is empty", file=name)
    return out.getvalue().encode(), private, c + 1


def _split_off_parquet_column(data: bytes, *, name: str, column: str) -> tuple[bytes, dict[str, bool], int]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(io.BytesIO(data))
    except Exception as exc:  # pyarrow raises several types for a damaged file
        raise stats_io.InputError(f"not a readable Parquet file ({type(exc).__name__})", file=name) from None
    if column not in table.column_names:
        raise stats_io.InputError(f"missing split column '{column}'", file=name)
    if "id" not in table.column_names:
        raise stats_io.InputError("missing column 'id'", file=name)
    ids = table.column("id").to_pylist()
    private: dict[str, bool] = {}
    for r, value in enumerate(table.column(column).to_pylist(), start=1):
        text = "" if value is None else str(value).strip()
        if text.lower() not in ("public", "private"):
            raise stats_io.InputError(
                f"row {r}, column '{column}': split '{text}' must be 'public' or 'private'", file=name
            )
        private["" if ids[r - 1] is None else str(ids[r - 1]).strip()] = text.lower() == "private"
    out = io.BytesIO()
    pq.write_table(table.drop_columns([column]), out)
    return out.getvalue(), private, 0


# --- predictions ---------------------------------------------------------------------------------------
def _read_predictions(
    data: bytes, *, name: str, task: Task, file_format: str, check_only: bool = False
) -> np.ndarray:
    metric = get_metric(task.metric)
    return stats_io.read_predictions(
        io.BytesIO(data),
        item_ids=task.item_ids,
        kind=metric.prediction_kind,
        label_set=task.labels or None,
        probabilities=metric.scores_are_probabilities,
        min_ranks=metric.ranks or 1,
        name=name,
        max_bytes=settings.UPLOAD_MAX_BYTES,
        check_only=check_only,
    )


def validate_predictions(data: bytes, *, name: str, task: Task, file_format: str) -> None:
    """Check a predictions file against the task's PUBLIC item list and label set (never the labels)."""
    if task.kind != "tabular":
        _read_vision_predictions(data, name=name, task=task)
        return
    try:
        _read_predictions(data, name=name, task=task, file_format=file_format, check_only=True)
    except stats_io.InputError as exc:
        raise input_error(exc) from exc


# --- scoring -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SplitScore:
    split: str
    value: float
    replicates: np.ndarray
    jackknife: np.ndarray
    item_statistics: np.ndarray | None
    run_values: list[float]
    resamples: int
    seed: int
    engine_version: str
    details: dict[str, Any] | None = None  # vision: other metrics, per-class values, curves


def score_files(
    *, task: Task, truth: HiddenTruth, files: list[tuple[bytes, str, str]], challenge: Challenge
) -> list[SplitScore]:
    """Score one task's files (one per run) on each split of the task, with the task's fixed resamples."""
    if task.kind != "tabular":
        return _score_vision_files(task=task, truth=truth, files=files, challenge=challenge)
    out = []
    for plan in tabular_plan(task=task, truth=truth, files=files):
        scores = score_entries(
            plan.truth,
            plan.runs,
            metric=plan.metric,
            labels=plan.labels,
            resamples=challenge.resamples,
            seed=challenge.seed,
            groups=plan.groups,
            strata=plan.strata,
            cache_dir=settings.RESAMPLE_CACHE_DIR,
        )
        out.append(
            tabular_split_score(
                split=plan.split,
                values=[s.value for s in scores],
                replicates=[s.replicates for s in scores],
                jackknifes=[s.jackknife for s in scores],
                item_statistics=plan.item_statistics,
                challenge=challenge,
            )
        )
    return out


@dataclass(frozen=True)
class TabularPlan:
    """What one split of a tabular task is scored from (hidden: stays in the scoring code)."""

    split: str
    metric: str
    truth: np.ndarray
    runs: list[np.ndarray]
    labels: list[str] | None
    groups: np.ndarray | None
    strata: Any
    item_statistics: np.ndarray | None

    def __repr__(self) -> str:  # never print hidden labels
        return f"TabularPlan(split={self.split}, items={len(self.truth)})"


def tabular_plan(*, task: Task, truth: HiddenTruth, files: list[tuple[bytes, str, str]]) -> list[TabularPlan]:
    """Parse a tabular task's files (one per run) and lay out each split's scoring inputs."""
    metric = get_metric(task.metric)
    runs = []
    for data, name, fmt in files:
        try:
            runs.append(_read_predictions(data, name=name, task=task, file_format=fmt))
        except stats_io.InputError as exc:  # validated at upload; only a changed task gets here
            raise input_error(exc) from exc
    truth_values = np.asarray(truth.labels)
    labels = task_metric_labels(task)
    n = len(truth_values)
    private = np.zeros(n, dtype=bool) if truth.private is None else np.asarray(truth.private, dtype=bool)
    splits = [("public", ~private)] + ([("private", private)] if truth.private is not None else [])
    out = []
    for split, mask in splits:
        if not mask.any():
            continue
        groups = None if truth.groups is None else np.asarray(truth.groups)[mask]
        strata, _ = class_strata(metric, truth_values[mask], groups=groups, stratify=STRATIFY[task.stratify])
        item_stats = None
        if len(runs) == 1 and not metric.rank_based:
            item_stats = metric.item_statistics(truth_values[mask], runs[0][mask], labels=labels)
        out.append(
            TabularPlan(
                split=split,
                metric=metric.name,
                truth=truth_values[mask],
                runs=[r[mask] for r in runs],
                labels=labels,
                groups=groups,
                strata=strata,
                item_statistics=item_stats,
            )
        )
    return out


def tabular_split_score(
    *,
    split: str,
    values: list[float],
    replicates: list[np.ndarray],
    jackknifes: list[np.ndarray],
    item_statistics: np.ndarray | None,
    challenge: Challenge,
) -> SplitScore:
    """One split's stored score from its runs' values, replicates and jackknife values (their means)."""
    return SplitScore(
        split=split,
        value=float(np.mean(values)),
        replicates=np.mean(replicates, axis=0),
        jackknife=np.mean(jackknifes, axis=0),
        item_statistics=item_statistics,
        run_values=[float(v) for v in values],
        resamples=challenge.resamples,
        seed=challenge.seed,
        engine_version=stats.__version__,
    )


def resample_chunks(resamples: int) -> int:
    """The number of fixed chunks of W (``stats.resampling.CHUNK_RESAMPLES`` rows) of ``resamples`` rows."""
    from stats.resampling import chunk_count

    return chunk_count(resamples)


def tabular_fixed_parts(plan: TabularPlan, *, challenge: Challenge) -> tuple[list[float], list[np.ndarray]]:
    """The runs' point values and jackknife values (they do not depend on the chunks of W; chunk 0 is the
    cheapest call that gives them, and it checks that the metric is defined on the test set)."""
    scores = score_entries(
        plan.truth,
        plan.runs,
        metric=plan.metric,
        labels=plan.labels,
        resamples=challenge.resamples,
        seed=challenge.seed,
        groups=plan.groups,
        strata=plan.strata,
        chunks=range(1),
        cache_dir=settings.RESAMPLE_CACHE_DIR,
    )
    return [s.value for s in scores], [s.jackknife for s in scores]


def tabular_chunk_replicates(
    plan: TabularPlan, *, resamples: int, seed: int, chunks: range
) -> list[np.ndarray]:
    """Each run's replicates on the rows of chunks ``chunks`` of W (the same bytes as those rows of the
    whole computation: stats.engine multiplies blocks fixed by N alone)."""
    scores = score_entries(
        plan.truth,
        plan.runs,
        metric=plan.metric,
        labels=plan.labels,
        resamples=resamples,
        seed=seed,
        groups=plan.groups,
        strata=plan.strata,
        chunks=chunks,
        cache_dir=settings.RESAMPLE_CACHE_DIR,
        jackknife=False,
    )
    return [s.replicates for s in scores]


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
        interval=_vision_interval(task.metric, challenge)
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


def ladder_board(
    *, mode: str, higher_is_better: bool, eta: float, precision: int, z: float, shown: float | None
) -> LadderBoard:
    """One team's public value under the Ladder (``stats.ladder.LadderBoard``), for ``rankings.ladder``."""
    return LadderBoard(
        mode=mode,  # type: ignore[arg-type]
        higher_is_better=higher_is_better,
        eta=eta,
        precision=precision,
        z=z,
        shown=shown,
    )


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


# --- detection and segmentation --------------------------------------------------------------------------
def _vision_metrics() -> dict[str, str]:
    """The metrics of vision tasks (the organizer's headline choice) -> their task kind, from the registry."""
    from stats.metrics import METRICS

    return {name: m.task_kind for name, m in METRICS.items() if m.task_kind in ("detection", "segmentation")}


#: Metric name -> ``detection`` or ``segmentation``.
VISION_METRICS: dict[str, str] = _vision_metrics()


def _vision_prediction_format(metric_name: str) -> PredictionFormat:
    metric = get_metric(metric_name)
    detection = metric.task_kind == "detection"
    return PredictionFormat(
        metric=metric.name,
        description=metric.description,
        higher_is_better=metric.higher_is_better,
        kind=metric.task_kind,
        columns=["image_id", "category_id", "bbox", "score"] if detection else [],
        probabilities=False,
    )


# What the vision scorers of ``stats`` return, as the adapter uses it: point values and replicates of
# every metric of the task's kind, per-class values and replicates, and (detection) precision per class at
# the recall thresholds.
@dataclass(frozen=True)
class _VisionResult:
    values: dict[str, float]  # metric name -> point value
    replicates: dict[str, np.ndarray]  # metric name -> (B,)
    class_names: list[str]
    class_values: np.ndarray  # (C,), NaN where undefined
    class_replicates: np.ndarray  # (B, C), NaN where undefined in a resample
    recall: np.ndarray | None  # (R,) recall thresholds (detection)
    precision: np.ndarray | None  # (C, R) interpolated precision, -1 where the recall is never reached
    jackknife: np.ndarray = field(default_factory=lambda: np.empty(0))  # leave-one-image-out (segmentation)
    item_statistics: np.ndarray | None = None  # per-image statistics (segmentation: 3C+1 columns)
    # Leave-one-image-out values of every metric and (N, C) of the classes, for BCa (segmentation).
    detail_jackknife: dict[str, np.ndarray] | None = None
    class_jackknife: np.ndarray | None = None


def _vision_details(
    *, task: Task, challenge: Challenge, result: _VisionResult, method: str
) -> dict[str, Any]:
    """The entry's other metrics and per-class values with intervals, and its curves (an SVG)."""
    from leaderboard.scoring.figures import precision_recall_svg
    from stats.intervals import bootstrap_bounds

    def bounds(
        replicates: np.ndarray, point: float, jackknife: np.ndarray | None
    ) -> tuple[float | None, float | None]:
        finite = replicates[np.isfinite(replicates)]
        if not np.isfinite(point) or len(finite) < 2:
            return None, None
        how = method
        if how == "bca" and (jackknife is None or not np.isfinite(jackknife).all()):
            how = "percentile"  # a class missing from some leave-one-out set has no acceleration
        low, high = bootstrap_bounds(
            finite, point=point, method=how, confidence=challenge.confidence, jackknife=jackknife
        )
        return float(low[0]), float(high[0])

    jack = result.detail_jackknife or {}
    metrics = []
    for name, value in result.values.items():
        low, high = bounds(result.replicates[name], value, jack.get(name))
        metrics.append({"name": name, "value": _finite_or_none(value), "low": low, "high": high})
    classes = []
    for c, name in enumerate(result.class_names):
        value = float(result.class_values[c])
        cj = None if result.class_jackknife is None else result.class_jackknife[:, c]
        low, high = bounds(result.class_replicates[:, c], value, cj)
        classes.append({"name": name, "value": _finite_or_none(value), "low": low, "high": high})
    detection = task.kind == "detection"
    details: dict[str, Any] = {
        "headline": task.metric,
        "metrics": metrics,
        "class_metric": "AP" if detection else "IoU",
        "class_note": (
            "A class without ground truth in a resample is left out of that resample, as in pycocotools"
            if detection
            else "A class absent from both the annotations and the predictions is undefined"
        ),
        "classes": classes,
        "method": method,
        "confidence": challenge.confidence,
        "confidence_percent": f"{100 * challenge.confidence:g}",
    }
    if result.precision is not None and result.recall is not None:
        curves = {name: result.precision[c].tolist() for c, name in enumerate(result.class_names)}
        details["curves"] = {"recall": result.recall.tolist(), "precision": curves}
        details["curves_caption"] = "interpolated precision at the 101 recall thresholds, IoU 0.5"
        details["curves_svg"] = precision_recall_svg(
            result.recall.tolist(), curves, title=f"{task.title}: precision-recall at IoU 0.5"
        )
    return details


def _finite_or_none(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def _vision_interval(metric: str, challenge: Challenge) -> str:
    """The interval of a vision metric's numbers (board, per-class values, other metrics).

    An organizer's explicit percentile or basic choice holds. The challenge default ("auto", or BCa on
    challenges made before "auto" existed) gives way to the metric's own method, chosen by measured
    coverage (``Metric.default_interval``: basic for detection AP, whose bias the bootstrap doubles;
    docs/stats.md); detection has no jackknife for BCa anyway, and Wilson is for plain proportions.
    """
    if challenge.interval_method not in ("bca", "auto", "wilson"):
        return challenge.interval_method
    return _vision_default_interval(metric)


def _score_vision_files(
    *, task: Task, truth: HiddenTruth, files: list[tuple[bytes, str, str]], challenge: Challenge
) -> list[SplitScore]:
    """Score a detection or segmentation entry: matching (or mask reading) once per file, replicates from
    the task's fixed resample weights over images; several files are runs (their mean is the entry's)."""
    if truth.data is None:
        raise ApplicationError(f"Task '{task.slug}' has no annotation file; re-create it.")
    results = []
    for data, name, _fmt in files:
        try:
            results.append(
                _vision_score_run(task=task, truth_data=truth.data, data=data, name=name, challenge=challenge)
            )
        except stats_io.InputError as exc:  # validated at upload; only a changed task gets here
            raise input_error(exc) from exc
    return vision_split_scores(task=task, challenge=challenge, results=results)


def vision_split_scores(
    *, task: Task, challenge: Challenge, results: list[_VisionResult]
) -> list[SplitScore]:
    """A vision entry's stored score from its runs' results (their mean; details of the first run)."""
    headline = task.metric
    method = _vision_interval(task.metric, challenge)
    return [
        SplitScore(
            split="public",
            value=float(np.mean([r.values[headline] for r in results])),
            replicates=np.mean([r.replicates[headline] for r in results], axis=0),
            jackknife=np.mean([r.jackknife for r in results], axis=0),
            item_statistics=results[0].item_statistics if len(results) == 1 else None,
            run_values=[float(r.values[headline]) for r in results],
            resamples=challenge.resamples,
            seed=challenge.seed,
            engine_version=stats.__version__,
            details=_vision_details(task=task, challenge=challenge, result=results[0], method=method)
            | ({"runs_note": "per-class results of the first run"} if len(results) > 1 else {}),
        )
    ]


def _head(data: bytes) -> bytes:
    """The first non-blank byte of a file, looking inside gzip (b"" for a corrupt stream)."""
    import gzip
    import zlib

    head = data[:64]
    if head[:2] == b"\x1f\x8b":
        try:
            head = gzip.GzipFile(fileobj=io.BytesIO(data)).read(64)
        except (OSError, EOFError, zlib.error):
            return b""  # the readers name the corrupt stream
    return head.lstrip()[:1]


def _looks_like_json(data: bytes) -> bool:
    return _head(data) in (b"{", b"[", b"")


def _parse_vision_truth(
    data: bytes,
    *,
    name: str,
    metric: str,
    class_names: Sequence[str] | None,
    ignore_index: int,
    reduce_zero_label: bool,
) -> ParsedTruth:
    """Read a detection or segmentation task's annotation file; keep only public facts on the task.

    The item list is the images in the reader's order (ascending image id for detection), recorded once.
    The public settings hold the categories (or classes) and, for segmentation, each image's size (so
    that predictions are checked without the annotations); the file itself is stored as uploaded.
    """
    kind = VISION_METRICS[metric]
    limit = settings.VISION_UPLOAD_MAX_BYTES
    try:
        if kind == "detection":
            from stats.vision.detection_io import parse_coco_truth, parse_voc_truth

            if class_names:
                raise ApplicationError(
                    f"{name}: a detection task takes its categories from the annotation file; leave the "
                    "labels empty.",
                    extra={"file": name, "field": "labels"},
                )
            reader = parse_coco_truth if _looks_like_json(data) else parse_voc_truth
            truth = reader(data, name=name, max_bytes=limit)
            _check_headline_defined(truth, metric=metric, name=name)
            categories = [
                {"id": int(c), "name": str(n)}
                for c, n in zip(truth.category_ids, truth.category_names, strict=True)
            ]
            return ParsedTruth(
                ids=[str(int(i)) for i in truth.image_ids],
                labels=[],
                label_set=[str(n) for n in truth.category_names],
                groups=None,
                private=None,
                kind=kind,
                vision={
                    "categories": categories,
                    "source": truth.source,
                    "conventions": dict(truth.conventions),
                    # VOC: the whole name -> id map (ids 1..N in this order), never cut
                    **({"image_names": list(truth.image_names)} if truth.image_names else {}),
                },
                data=data,
            )
        return _parse_segmentation_truth(
            data,
            name=name,
            class_names=class_names,
            ignore_index=ignore_index,
            reduce_zero_label=reduce_zero_label,
            limit=limit,
        )
    except stats_io.InputError as exc:
        raise input_error(exc) from exc


def _detection_ids(task: Task) -> tuple[np.ndarray, np.ndarray]:
    """The task's PUBLIC image ids (its order) and category ids."""
    return (
        np.array([int(i) for i in task.item_ids], dtype=np.int64),
        np.array([c["id"] for c in task.vision["categories"]], dtype=np.int64),
    )


def _read_vision_predictions(data: bytes, *, name: str, task: Task) -> Any:
    """Check (and read) a vision predictions file against the task's PUBLIC facts only: image ids,
    category ids or classes, image sizes. Never the annotations."""
    limit = settings.VISION_UPLOAD_MAX_BYTES
    try:
        if task.kind == "detection":
            from stats.vision.detection_io import parse_coco_results

            if _head(data) == b"{":
                raise stats_io.InputError(
                    "a results file is a JSON list of detections ([{image_id, category_id, bbox, score}, "
                    "...]), not an object; an annotation file is not a results file",
                    file=name,
                )
            return parse_coco_results(data, _detection_ids(task), name=name, max_bytes=limit)
        return _read_segmentation_predictions(data, name=name, task=task, limit=limit)
    except stats_io.InputError as exc:
        raise input_error(exc) from exc


#: The per-class values and the other metrics of a vision entry get their intervals from the first rows of
#: ``W`` (all of them when the task has fewer resamples): the headline metric uses every row.
DETAIL_RESAMPLES = 1000
#: Registry names of the detection stats shown on an entry's page, in COCOeval.summarize's order.
_DETECTION_DETAIL_NAMES = {
    "AP": "coco_ap",
    "AP50": "coco_ap50",
    "AP75": "coco_ap75",
    "APs": "coco_ap_small",
    "APm": "coco_ap_medium",
    "APl": "coco_ap_large",
    "AR1": "coco_ar1",
    "AR10": "coco_ar10",
    "AR100": "coco_ar100",
    "ARs": "coco_ar_small",
    "ARm": "coco_ar_medium",
    "ARl": "coco_ar_large",
    "VOC07": "voc07_ap50",
    "VOC": "voc_ap50",
}


def _vision_score_run(
    *, task: Task, truth_data: bytes, data: bytes, name: str, challenge: Challenge
) -> _VisionResult:
    if task.kind == "detection":
        return _score_detection_run(
            task=task, truth_data=truth_data, data=data, name=name, challenge=challenge
        )
    return _score_segmentation_run(
        task=task, truth_data=truth_data, data=data, name=name, challenge=challenge
    )


def _detection_truth(task: Task, truth_data: bytes) -> Any:
    from stats.vision.detection_io import parse_coco_truth, parse_voc_truth

    reader = parse_coco_truth if task.vision.get("source", "coco") == "coco" else parse_voc_truth
    truth = reader(truth_data, name="annotations", max_bytes=settings.VISION_UPLOAD_MAX_BYTES)
    if [str(int(i)) for i in truth.image_ids] != task.item_ids:
        raise ApplicationError(f"Task '{task.slug}': its annotation file no longer matches its images.")
    return truth


def _score_detection_run(
    *, task: Task, truth_data: bytes, data: bytes, name: str, challenge: Challenge
) -> _VisionResult:
    from stats.resampling import iter_unit_weight_chunks

    run = detection_prepare(task=task, truth_data=truth_data, data=data, name=name, challenge=challenge)
    parts: list[dict[str, np.ndarray]] = []
    for chunk, w in iter_unit_weight_chunks(run.design, cache_dir=settings.RESAMPLE_CACHE_DIR):
        parts.append(detection_chunk(run, chunk=chunk, weights=w))
    return detection_result(run, parts)


@dataclass(frozen=True)
class DetectionRun:
    """One detection entry after the per-image matching (once per entry, independent of the resample)."""

    truth: Any  # stats.vision.DetectionTruth (hidden)
    prepared: Any  # stats.vision.DetectionTask
    entry: Any  # stats.vision.MatchedEntry
    headline: str  # the stat of the task's metric ("AP", "AP50"...)
    design: Any  # stats.resampling.ResampleDesign
    detail_rows: int

    def __repr__(self) -> str:  # never print hidden annotations
        return f"DetectionRun(headline={self.headline})"


def detection_prepare(
    *, task: Task, truth_data: bytes, data: bytes, name: str, challenge: Challenge
) -> DetectionRun:
    from stats.resampling import resample_design
    from stats.vision.detection import DETECTION_METRICS as STAT_OF
    from stats.vision.detection import DetectionTask, detection_strata
    from stats.vision.detection_io import parse_coco_results

    truth = _detection_truth(task, truth_data)
    detections = parse_coco_results(data, truth, name=name, max_bytes=settings.VISION_UPLOAD_MAX_BYTES)
    prepared = DetectionTask(truth)
    entry = prepared.match(detections)  # once per entry: independent of the resample
    # Strata keep every area range's objects in every resample, so every stat is defined (stats.vision).
    design = resample_design(
        truth.n_images, resamples=challenge.resamples, seed=challenge.seed, strata=detection_strata(truth)
    )
    return DetectionRun(
        truth=truth,
        prepared=prepared,
        entry=entry,
        headline=STAT_OF[task.metric],
        design=design,
        detail_rows=min(DETAIL_RESAMPLES, challenge.resamples),
    )


def detection_runs(
    *, task: Task, truth: HiddenTruth, files: list[tuple[bytes, str, str]], challenge: Challenge
) -> list[DetectionRun]:
    """Match each run's detections once (the per-image step of a fanned-out detection scoring)."""
    if truth.data is None:
        raise ApplicationError(f"Task '{task.slug}' has no annotation file; re-create it.")
    runs = []
    for data, name, _fmt in files:
        try:
            runs.append(
                detection_prepare(task=task, truth_data=truth.data, data=data, name=name, challenge=challenge)
            )
        except stats_io.InputError as exc:  # validated at upload; only a changed task gets here
            raise input_error(exc) from exc
    return runs


def detection_chunks(run: DetectionRun, *, chunks: range) -> Iterator[tuple[int, dict[str, np.ndarray]]]:
    """``(chunk, replicates)`` for each chunk of ``chunks`` (the per-host W cache, rebuilt from the seed)."""
    from stats.resampling import iter_unit_weight_chunks

    for c, w in iter_unit_weight_chunks(run.design, chunks=chunks, cache_dir=settings.RESAMPLE_CACHE_DIR):
        yield c, detection_chunk(run, chunk=c, weights=w)


def detection_chunk(run: DetectionRun, *, chunk: int, weights: np.ndarray) -> dict[str, np.ndarray]:
    """The replicates of one fixed chunk of W: every stat in the chunks that hold the first
    ``detail_rows`` rows (the entry's page), the headline alone after them."""
    done = run.design.chunk_rows(chunk).start
    want = None if done < run.detail_rows else [run.headline]
    return run.prepared.replicates(run.entry, weights, stats=want)


def detection_result(run: DetectionRun, chunks: Sequence[dict[str, np.ndarray]]) -> _VisionResult:
    """Join the chunks' replicates (in chunk order) into the entry's values, replicates and details."""
    parts: dict[str, list[np.ndarray]] = {}
    for reps in chunks:
        for key, value in reps.items():
            parts.setdefault(key, []).append(value)
    replicates = {key: np.concatenate(value) for key, value in parts.items()}
    headline, detail_rows, truth = run.headline, run.detail_rows, run.truth
    point = run.prepared.point(run.entry)
    values = {
        _DETECTION_DETAIL_NAMES[key]: (np.nan if point[key] is None else float(point[key]))
        for key in _DETECTION_DETAIL_NAMES
    }
    reps_by_name = {
        _DETECTION_DETAIL_NAMES[key]: (replicates[key] if key == headline else replicates[key][:detail_rows])
        for key in _DETECTION_DETAIL_NAMES
    }
    class_values = np.array([np.nan if v is None else v for v in point["per_class_AP"]], dtype=np.float64)
    recall, precision = _precision_curves(run.prepared, run.entry)
    return _VisionResult(
        values=values,
        replicates=reps_by_name,
        class_names=list(truth.category_names),
        class_values=class_values,
        class_replicates=replicates["per_class_AP"][:detail_rows],
        recall=recall,
        precision=precision,
    )


#: The bit of ``stats.vision.detection.detection_strata`` an image has when it holds an object that counts
#: for the stat (bits 0-3: area all, small, medium, large; bit 4: VOC's non-difficult objects).
_STRATUM_BIT = {"APs": 1, "APm": 2, "APl": 3, "ARs": 1, "ARm": 2, "ARl": 3, "VOC07": 4, "VOC": 4}
_STAT_WHAT = {
    1: "small (area <= 32^2)",
    2: "medium",
    3: "large (area > 96^2)",
    4: "non-difficult",
    0: "non-crowd",
}


def _check_headline_defined(truth: Any, *, metric: str, name: str) -> None:
    """Refuse a task whose headline metric is undefined on its own test set (no object it counts)."""
    from stats.vision.detection import DETECTION_METRICS as STAT_OF
    from stats.vision.detection import detection_strata

    bit = _STRATUM_BIT.get(STAT_OF[metric], 0)
    if not ((detection_strata(truth) >> bit) & 1).any():
        raise ApplicationError(
            f"{name}: no annotation is a {_STAT_WHAT[bit]} object, so {metric} is undefined on this test "
            "set; choose another metric.",
            extra={"file": name, "field": "metric"},
        )


def _precision_curves(prepared: Any, entry: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per-class precision at the 101 recall thresholds, IoU 0.5 (pycocotools' ``eval["precision"]``)."""
    from stats.pr_curves import precision_at_recall_thresholds

    return precision_at_recall_thresholds(prepared, entry, threshold=0)


def _vision_default_interval(metric: str) -> str:
    """A vision metric's interval method chosen by measured coverage (``Metric.default_interval``); BCa
    where the statistics package names none and a jackknife exists (segmentation), basic otherwise (AP is
    biased upward and the bootstrap adds the bias again: ../shared/VISION.md, "Intervals")."""
    chosen = get_metric(metric).default_interval
    if chosen:
        return chosen
    return "bca" if VISION_METRICS[metric] == "segmentation" else "basic"


# --- segmentation ---------------------------------------------------------------------------------------
def _mask_limits(limit: int) -> Any:
    from stats.vision.segmentation import SegmentationLimits

    return SegmentationLimits(max_bytes=limit)


def _parse_segmentation_truth(
    data: bytes,
    *,
    name: str,
    class_names: Sequence[str] | None,
    ignore_index: int,
    reduce_zero_label: bool,
    limit: int,
) -> ParsedTruth:
    """Read the organizer's archive of label maps: the image ids (sorted: the task's order), each image's
    size (public), and every value checked against the classes (or ``ignore_index``)."""
    from stats.vision.segmentation import read_mask_archive

    if not class_names:
        raise ApplicationError(
            f"{name}: a segmentation task needs its class names (the labels, in pixel-value order).",
            extra={"file": name, "field": "labels"},
        )
    n_classes = len(class_names)
    if ignore_index < n_classes:
        raise ApplicationError(
            f"ignore_index {ignore_index} is one of the classes 0..{n_classes - 1}; choose a value outside.",
            extra={"field": "ignore_index"},
        )
    archive = read_mask_archive(data, name=name, limits=_mask_limits(limit))
    allowed_top = n_classes if reduce_zero_label else n_classes - 1  # reduce_zero_label: 1..C become 0..C-1
    sizes: dict[str, list[int]] = {}
    for image_id in archive.image_ids:
        mask = archive.decode(image_id)
        values = np.unique(mask)
        bad = values[(values > allowed_top) & (values != ignore_index)]
        if bad.size:
            raise stats_io.InputError(
                f"member {archive.members[image_id][0]}: value {int(bad[0])} is neither a class "
                f"(0..{allowed_top}{' before reduce_zero_label' if reduce_zero_label else ''}) nor the "
                f"ignore_index {ignore_index}",
                file=name,
            )
        sizes[image_id] = [int(mask.shape[1]), int(mask.shape[0])]
    return ParsedTruth(
        ids=archive.image_ids,
        labels=[],
        label_set=[str(c) for c in class_names],
        groups=None,
        private=None,
        kind="segmentation",
        vision={
            "ignore_index": int(ignore_index),
            "reduce_zero_label": bool(reduce_zero_label),
            "image_sizes": sizes,
        },
        data=data,
    )


def _read_segmentation_predictions(data: bytes, *, name: str, task: Task, limit: int) -> Any:
    """A participant's archive checked against the task's public facts: one mask per image id, of the
    image's size, with values among the classes. Never the annotations."""
    from stats.vision.segmentation import read_mask_archive

    archive = read_mask_archive(data, name=name, limits=_mask_limits(limit))
    ids = task.item_ids
    extra = sorted(set(archive.members) - set(ids))
    if extra:
        member = archive.members[extra[0]][0]
        raise stats_io.InputError(f"member {member}: image {extra[0]!r} is not in the task", file=name)
    n_classes = len(task.labels)
    for image_id in ids:
        mask = archive.decode(image_id)  # names the missing member
        member = archive.members[image_id][0]
        width, height = task.vision["image_sizes"][image_id]
        if mask.shape != (height, width):
            raise stats_io.InputError(
                f"member {member}: mask is {mask.shape[1]}x{mask.shape[0]} (width x height), the image is "
                f"{width}x{height}",
                file=name,
            )
        top = int(mask.max()) if mask.size else 0
        if top >= n_classes:
            raise stats_io.InputError(
                f"member {member}: value {top} is outside the classes 0..{n_classes - 1}", file=name
            )
    return archive


def _score_segmentation_run(
    *, task: Task, truth_data: bytes, data: bytes, name: str, challenge: Challenge
) -> _VisionResult:
    from stats.engine import score_item_statistics
    from stats.metrics import per_class_iou
    from stats.resampling import iter_unit_weight_chunks, resample_design
    from stats.vision.segmentation import read_mask_archive, segmentation_statistics, segmentation_strata

    limit = settings.VISION_UPLOAD_MAX_BYTES
    truth = read_mask_archive(truth_data, name="annotations", limits=_mask_limits(limit))
    prediction = _read_segmentation_predictions(data, name=name, task=task, limit=limit)
    statistics = segmentation_statistics(
        truth,
        prediction,
        num_classes=len(task.labels),
        image_ids=task.item_ids,
        ignore_index=task.vision["ignore_index"],
        reduce_zero_label=task.vision["reduce_zero_label"],
    )
    strata = segmentation_strata(statistics)  # every resample keeps labelled pixels
    headline = score_item_statistics(
        [statistics],
        metric=task.metric,
        resamples=challenge.resamples,
        seed=challenge.seed,
        strata=strata,
        cache_dir=settings.RESAMPLE_CACHE_DIR,
    )[0]
    design = resample_design(
        len(task.item_ids), resamples=challenge.resamples, seed=challenge.seed, strata=strata
    )
    detail_rows = min(DETAIL_RESAMPLES, challenge.resamples)
    pooled_parts = []
    done = 0
    for _chunk, w in iter_unit_weight_chunks(design, cache_dir=settings.RESAMPLE_CACHE_DIR):
        pooled_parts.append(w.astype(np.float64) @ statistics)
        done += w.shape[0]
        if done >= detail_rows:
            break
    pooled = np.concatenate(pooled_parts)[:detail_rows]
    total = statistics.sum(axis=0)
    names = [m for m, kind in VISION_METRICS.items() if kind == "segmentation"]
    values = {m: float(get_metric(m).finalize(total[None, :])[0]) for m in names}
    replicates = {m: get_metric(m).finalize(pooled) for m in names}
    values[task.metric] = float(headline.value)
    replicates[task.metric] = np.asarray(headline.replicates)
    leave_one_out = total[None, :] - statistics  # pooled totals minus one image: O(N), for BCa
    return _VisionResult(
        values=values,
        replicates=replicates,
        class_names=list(task.labels),
        class_values=per_class_iou(total),
        class_replicates=per_class_iou(pooled),
        recall=None,
        precision=None,
        jackknife=np.asarray(headline.jackknife),
        item_statistics=statistics,
        detail_jackknife={m: get_metric(m).finalize(leave_one_out) for m in names},
        class_jackknife=per_class_iou(leave_one_out),
    )
