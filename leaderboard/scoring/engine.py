"""The service's adapter to ``stats/`` for tabular files: parsing uploads and hidden labels, and scoring.

The rest of the service reaches these functions through the tabular task kind
(:mod:`leaderboard.scoring.kinds.tabular`); the types shared by every kind (:class:`ParsedTruth`,
:class:`PredictionFormat`, :class:`SplitScore`) are defined here. The hidden labels only meet predictions
inside these functions. The board built from the stored scores has its own owner,
:mod:`leaderboard.rankings.board`.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from django.conf import settings

import stats
from leaderboard.core.exceptions import ApplicationError
from leaderboard.scoring.metric_names import display_name
from stats import io as stats_io
from stats.checks import (
    MIN_UNITS,
    class_strata,
    order_positive,
    truth_problem,
    units_problem,
)
from stats.engine import score_entries, score_item_statistics
from stats.metrics import get_metric

if TYPE_CHECKING:
    from leaderboard.challenges.models import Challenge, Task
    from leaderboard.scoring.selectors import HiddenTruth


#: Task.stratify -> the ``stratify`` argument of :func:`stats.checks.class_strata`.
STRATIFY: dict[str, bool | None] = {"auto": None, "class": True, "none": False}


def metric_higher_is_better(name: str) -> bool:
    return get_metric(name).higher_is_better


def metric_choices() -> list[tuple[str, str]]:
    from stats.metrics import METRICS

    return [(name, f"{display_name(name)} ({name})") for name in sorted(METRICS)]


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
    """A tabular task's file (``kinds.get_kind(task.kind).prediction_format`` for any task)."""
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
    kind: str = "tabular"  # the registered kind that read the file (``Task.kind``)
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
) -> ParsedTruth:
    """Parse an organizer's hidden-labels file (``id,label`` [+ group column] [+ split column]).

    The split column, when named, says per item ``public`` or ``private`` (Kaggle-style boards); it is
    read here and the rest of the file by :func:`stats.io.read_truth`, which checks everything else.
    A test set on which the metric is undefined whatever the predictions (one class for ROC AUC, a
    constant truth for R^2), a split with fewer than two items or groups, and a positive class outside
    the label set are refused here, at upload (issue 11).

    Other kinds read their own files (``kinds.kind_for_metric(metric).parse_truth``).
    """
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
            kind=stats_io.truth_kind(metric_obj),
            label_set=list(labels) if labels else None,
            group_column=group_column,
            max_bytes=settings.UPLOAD_MAX_BYTES,  # the tabular kind's limit
            max_rows=settings.TASK_MAX_ITEMS,
        )
    except stats_io.InputError as exc:
        if split_position and exc.column is not None and exc.column >= split_position:
            exc.column += 1  # the column's position in the organizer's file, split column included
        raise input_error(exc) from exc
    ids = [str(i) for i in truth.ids.tolist()]
    if stats_io.truth_kind(metric_obj) == "value":
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
    labels = stats_io.metric_labels(get_metric(task.metric), task.labels)  # the one rule (stats.io)
    if labels is not None and get_metric(task.metric).prediction_kind == "score":
        return order_positive(labels, task.positive_label or None)[0]
    return labels


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
            ordered = order_positive(stats_io.metric_labels(metric, label_set) or [], positive or None)[0]
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
def _read_predictions(data: bytes, *, name: str, task: Task, check_only: bool = False) -> np.ndarray:
    metric = get_metric(task.metric)
    return stats_io.read_predictions(
        io.BytesIO(data),
        item_ids=task.item_ids,
        kind=metric.prediction_kind,
        label_set=task.labels or None,
        probabilities=metric.scores_are_probabilities,
        min_ranks=metric.ranks or 1,
        name=name,
        max_bytes=settings.UPLOAD_MAX_BYTES,  # the tabular kind's limit
        check_only=check_only,
    )


def validate_predictions(data: bytes, *, name: str, task: Task) -> None:
    """Check a predictions file against the task's PUBLIC item list and label set (never the labels)."""
    try:
        _read_predictions(data, name=name, task=task, check_only=True)
    except stats_io.InputError as exc:
        raise input_error(exc) from exc


# --- scoring -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MetricResult:
    """One secondary metric of an entry (the task's ``secondary_metrics``, issue 20): its value (the mean
    over runs) and, for an entry of one run, its per-item statistics, from which the board's paired test
    against the leader is computed. Stored as ``scoring.MetricScore``."""

    value: float
    item_statistics: np.ndarray | None


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
    metrics: dict[str, MetricResult] | None = None  # the task's secondary metrics, by name


def score_files(
    *, task: Task, truth: HiddenTruth, files: list[tuple[bytes, str, str]], challenge: Challenge
) -> list[SplitScore]:
    """Score one tabular task's files (one per run) on each split of the task, with the task's fixed
    resamples (``kinds.get_kind(task.kind).score_files`` for any task)."""
    out = []
    for plan in tabular_plan(task=task, truth=truth, files=files):
        scores = _plan_scores(plan, resamples=challenge.resamples, seed=challenge.seed)
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
    """What one split of a tabular task is scored from (hidden: stays in the scoring code).

    ``per_run`` holds each run's per-item statistics, computed once here (``None`` for rank-based metrics,
    which are scored from the predictions): the single worker and every chunk task of a fanned-out scoring
    (``leaderboard.scoring.fanout``) resample these, never a second computation."""

    split: str
    metric: str
    truth: np.ndarray
    runs: list[np.ndarray]
    labels: list[str] | None
    groups: np.ndarray | None
    strata: Any
    per_run: list[Any] | None

    @property
    def item_statistics(self) -> np.ndarray | None:
        """The statistics stored for the board's item-level tests (one run only)."""
        if self.per_run is None or len(self.per_run) != 1:
            return None
        return np.asarray(self.per_run[0])

    def __repr__(self) -> str:  # never print hidden labels
        return f"TabularPlan(split={self.split}, items={len(self.truth)})"


def tabular_plan(*, task: Task, truth: HiddenTruth, files: list[tuple[bytes, str, str]]) -> list[TabularPlan]:
    """Parse a tabular task's files (one per run, once) and lay out each split's scoring inputs."""
    metric = get_metric(task.metric)
    runs = []
    for data, name, _fmt in files:
        try:
            runs.append(_read_predictions(data, name=name, task=task))
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
        split_runs = [r[mask] for r in runs]
        per_run = (
            None
            if metric.rank_based
            else _item_statistics(metric, truth_values[mask], split_runs, labels=labels)
        )
        out.append(
            TabularPlan(
                split=split,
                metric=metric.name,
                truth=truth_values[mask],
                runs=split_runs,
                labels=labels,
                groups=groups,
                strata=strata,
                per_run=per_run,
            )
        )
    return out


def _plan_scores(
    plan: TabularPlan, *, resamples: int, seed: int, chunks: range | None = None, jackknife: bool = True
) -> list[Any]:
    """The runs' scores on the rows ``chunks`` of W (all of them by default): the per-item statistics
    resampled (:func:`stats.engine.score_item_statistics`), or the predictions for rank-based metrics."""
    common: dict[str, Any] = {
        "resamples": resamples,
        "seed": seed,
        "groups": plan.groups,
        "strata": plan.strata,
        "chunks": chunks,
        "cache_dir": settings.RESAMPLE_CACHE_DIR,
        "jackknife": jackknife,
    }
    if plan.per_run is None:
        return score_entries(plan.truth, plan.runs, metric=plan.metric, labels=plan.labels, **common)
    metric = get_metric(plan.metric)
    return _scores_defined(metric, score_item_statistics(plan.per_run, metric=metric, **common))


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
    scores = _plan_scores(plan, resamples=challenge.resamples, seed=challenge.seed, chunks=range(1))
    return [s.value for s in scores], [s.jackknife for s in scores]


def tabular_chunk_replicates(
    plan: TabularPlan, *, resamples: int, seed: int, chunks: range
) -> list[np.ndarray]:
    """Each run's replicates on the rows of chunks ``chunks`` of W (the same bytes as those rows of the
    whole computation: stats.engine multiplies blocks fixed by N alone)."""
    scores = _plan_scores(plan, resamples=resamples, seed=seed, chunks=chunks, jackknife=False)
    return [s.replicates for s in scores]


def _item_statistics(metric: Any, truth: np.ndarray, runs: list[np.ndarray], *, labels: Any) -> list[Any]:
    """The per-item statistics of each run, computed once: they give the scores (resampled by
    :func:`stats.engine.score_item_statistics`) and are stored for the board. The checks are those of
    :func:`stats.engine.score_entries`, in its order, with its messages."""
    problem = truth_problem(metric, truth, labels=labels)
    if problem is not None:
        raise ValueError(problem)
    if len(truth) < MIN_UNITS:
        raise ValueError(units_problem(len(truth), grouped=False))
    return [metric.item_statistics(truth, run, labels=labels) for run in runs]


def _scores_defined(metric: Any, scores: list[Any]) -> list[Any]:
    """``scores``, refused as :func:`stats.engine.score_entries` refuses a value that is undefined."""
    for score in scores:
        if not np.isfinite(score.value):
            raise ValueError(
                f"{metric.name} is undefined for '{score.name}' on this test set; no interval or rank "
                "can be given"
            )
    return scores


def _register_state_types() -> None:
    """What a fanned-out tabular scoring stores (``leaderboard.scoring.state_codec``): plans and scores."""
    from leaderboard.scoring import state_codec

    state_codec.register(TabularPlan, SplitScore)


_register_state_types()
