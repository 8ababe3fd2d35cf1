"""The service's one adapter to ``stats/``: parsing uploads, scoring, building boards and summaries.

Everything the service asks of the statistics package goes through here, so the package's API is used in
one place and the hidden labels only meet predictions inside these functions.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from django.conf import settings
from django.utils import timezone

import stats
from leaderboard.core.exceptions import ApplicationError
from stats import io as stats_io
from stats.engine import score_entries
from stats.metrics import get_metric

if TYPE_CHECKING:
    from leaderboard.challenges.models import Challenge, Task
    from leaderboard.rankings.models import BoardSnapshot
    from leaderboard.rankings.services import Entry
    from leaderboard.scoring.selectors import HiddenTruth


def metric_higher_is_better(name: str) -> bool:
    return get_metric(name).higher_is_better


def metric_choices() -> list[tuple[str, str]]:
    from stats.metrics import METRICS

    return [(name, name.replace("_", " ")) for name in sorted(METRICS)]


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
) -> ParsedTruth:
    """Parse an organizer's hidden-labels file (``id,label`` [+ group column] [+ split column]).

    The split column, when named, says per item ``public`` or ``private`` (Kaggle-style boards); it is
    read here and the rest of the file by :func:`stats.io.read_truth`, which checks everything else.
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
    return ParsedTruth(
        ids=ids,
        labels=truth.labels.tolist(),
        label_set=label_set,
        groups=None if truth.groups is None else [str(g) for g in truth.groups.tolist()],
        private=private,
    )


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


def score_files(
    *, task: Task, truth: HiddenTruth, files: list[tuple[bytes, str, str]], challenge: Challenge
) -> list[SplitScore]:
    """Score one task's files (one per run) on each split of the task, with the task's fixed resamples."""
    metric = get_metric(task.metric)
    runs = []
    for data, name, fmt in files:
        try:
            runs.append(_read_predictions(data, name=name, task=task, file_format=fmt))
        except stats_io.InputError as exc:  # validated at upload; only a changed task gets here
            raise input_error(exc) from exc
    truth_values = np.asarray(truth.labels)
    n = len(truth_values)
    private = np.zeros(n, dtype=bool) if truth.private is None else np.asarray(truth.private, dtype=bool)
    splits = [("public", ~private)] + ([("private", private)] if truth.private is not None else [])
    out = []
    for split, mask in splits:
        if not mask.any():
            continue
        groups = None if truth.groups is None else np.asarray(truth.groups)[mask]
        scores = score_entries(
            truth_values[mask],
            [r[mask] for r in runs],
            metric=metric,
            labels=task.labels or None,
            resamples=challenge.resamples,
            seed=challenge.seed,
            groups=groups,
            cache_dir=settings.RESAMPLE_CACHE_DIR,
        )
        item_stats = None
        if len(runs) == 1 and not metric.rank_based:
            item_stats = metric.item_statistics(truth_values[mask], runs[0][mask], labels=task.labels or None)
        out.append(
            SplitScore(
                split=split,
                value=float(np.mean([s.value for s in scores])),
                replicates=np.mean([s.replicates for s in scores], axis=0),
                jackknife=np.mean([s.jackknife for s in scores], axis=0),
                item_statistics=item_stats,
                run_values=[float(s.value) for s in scores],
                resamples=challenge.resamples,
                seed=challenge.seed,
                engine_version=stats.__version__,
            )
        )
    return out


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
    jack_list = [e.score.jackknife_array() for e in entries]
    jackknife = np.column_stack(jack_list) if all(j is not None and len(j) for j in jack_list) else None  # type: ignore[arg-type]
    item_stats = [e.score.item_statistics_array() for e in entries]
    have_items = all(s is not None for s in item_stats) and not metric.rank_based
    runs = [e.score.run_values if len(e.score.run_values) > 1 else None for e in entries]
    board = stats_build_board(
        names=keys,
        values=values,
        replicates=theta,
        higher_is_better=metric.higher_is_better,
        metric_name=metric.name,
        seed=challenge.seed,
        confidence=challenge.confidence,
        interval=challenge.interval_method
        if (jackknife is not None or challenge.interval_method != "bca")
        else "percentile",
        jackknife=jackknife,
        correction=challenge.correction,
        item_statistics=[np.asarray(s, dtype=np.float64) for s in item_stats] if have_items else None,
        finalize=metric.finalize if have_items else None,
        zero_one=metric.zero_one,
        n_items=_n_items(entries),
        runs=runs if any(r is not None for r in runs) else None,
        grouped=task.grouped,
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
        "best_set_method": data["best_set_method"],
        "alpha": data["alpha"],
        "power": data["power"],
        "higher_is_better": data["higher_is_better"],
        "split": split,
        "created": now,
    }
    # stats.board gives the rank probabilities in the board's row order (best first), like the rows.
    index = {k: i for i, k in enumerate(keys)}
    rank_distribution = np.asarray(data["rank_probabilities"]).tolist()

    pairwise: dict[str, Any] = {}
    if len(entries) <= PAIRWISE_MAX_ENTRIES:
        idx = [index[k] for k in order]
        t = theta[:, idx]
        lo_q, hi_q = (1 - challenge.confidence) / 2, 1 - (1 - challenge.confidence) / 2
        diff = values[idx][:, None] - values[idx][None, :]
        low = np.empty_like(diff)
        high = np.empty_like(diff)
        for i in range(len(idx)):
            d = t[:, [i]] - t
            low[i], high[i] = np.quantile(d, [lo_q, hi_q], axis=0)
        pairwise = {
            "names": [by_key[k].name for k in order],
            "method": "percentile bootstrap of the paired difference (row minus column)",
            "difference": diff.round(10).tolist(),
            "low": low.round(10).tolist(),
            "high": high.round(10).tolist(),
        }
        if have_items and metric.zero_one:
            right = np.column_stack([np.asarray(item_stats[index[k]])[:, 0] > 0.5 for k in order])
            only_row = (right[:, :, None] & ~right[:, None, :]).sum(axis=0)
            only_col = only_row.T
            pairwise["only_row_right"] = only_row.tolist()
            pairwise["only_column_right"] = only_col.tolist()
            pairwise["mcnemar_p"] = np.asarray(mcnemar_exact(only_row, only_col)).round(12).tolist()
    return BuiltBoard(rows=rows, signature=signature, rank_distribution=rank_distribution, pairwise=pairwise)


def _n_items(entries: list[Entry]) -> int:
    """The number of test items behind the entries' scores (for the items-needed calculation)."""
    shapes = [e.score.item_statistics_shape for e in entries if e.score.item_statistics_shape]
    if shapes:
        return int(shapes[0][0])
    jack = entries[0].score.jackknife_array()
    return len(jack) if jack is not None else 0


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
    directions = {get_metric(t.metric).higher_is_better for t, _ in snapshots}
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
