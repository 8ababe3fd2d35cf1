"""Command line: ``python -m stats leaderboard ...`` and ``python -m stats cd ...``.

``leaderboard`` scores prediction files like ``score`` and prints the whole board of the task (see
:func:`stats.board.build_board`); ``cd`` compares entries across tasks from a score table and can write
the critical-difference diagram (see :mod:`stats.crosstask`, :mod:`stats.cddiagram`).

Both are registered on :func:`stats.cli.main.build_parser` by :func:`add_comparison_parsers`. Bad input
exits with code 2 and ``file:line:column: message`` on stderr (raised as :class:`stats.io.InputError`).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import json
import math
import sys
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from stats.board import BEST_SET_METHODS, FEW_POSITIVES, TESTS, Board, build_board
from stats.checks import UNDEFINED_RULE, defined_rows, value_warnings
from stats.cli.edges import Sampling, add_edge_arguments, integer, level, sampling_for, warn
from stats.cli.inputs import add_label_arguments, read_inputs
from stats.cli.text import TruthAction, add_text_arguments, check_single_truth, score_text, text_report
from stats.cli.vision import add_vision_arguments, score_vision
from stats.compare import CORRECTIONS
from stats.crosstask import POSTHOCS, CrossTaskResult, compare_across_tasks
from stats.engine import DEFAULT_RESAMPLES, score_entries
from stats.intervals import DEFAULT_CONFIDENCE, PROPORTION_METHODS
from stats.io import InputError
from stats.metrics import METRICS, Metric, get_metric
from stats.randomization import Exchangeable, ranked_scores

__all__ = ["add_comparison_parsers", "read_score_table", "run_cd", "run_leaderboard"]

EXIT_OK = 0


def add_comparison_parsers(subparsers: Any) -> None:
    """Register the ``leaderboard`` and ``cd`` subcommands on ``python -m stats``'s subparsers."""
    lb = subparsers.add_parser(
        "leaderboard",
        help="rank prediction files with intervals, rank intervals, paired tests and the best set",
        description=(
            "Score each prediction file against the truth file and print the ranked board: value and "
            "interval, rank and rank intervals, paired difference to the leader with its interval, "
            "p-value, adjusted p-value, membership of the best set, and items needed to resolve the gap."
        ),
    )
    lb.add_argument("predictions", nargs="+", metavar="PRED", help="prediction files (CSV or Parquet)")
    lb.add_argument(
        "--truth",
        required=True,
        action=TruthAction,
        help="truth file: id,label[,group] (CSV or Parquet); text metrics: references, repeated per stream",
    )
    lb.add_argument("--metric", required=True, choices=sorted(METRICS), help="metric of the registry")
    add_label_arguments(lb)
    lb.add_argument("--group-column", help="column of the truth file holding each item's group")
    lb.add_argument("--resamples", type=integer(2), default=DEFAULT_RESAMPLES)
    lb.add_argument("--seed", type=integer(0), default=0)
    lb.add_argument("--confidence", type=level, default=DEFAULT_CONFIDENCE)
    lb.add_argument(
        "--interval",
        choices=["auto", "bca", "percentile", "basic", *PROPORTION_METHODS],
        default=None,
        help="interval of the values (default auto: the metric's own, chosen by measured coverage, the same "
        "as 'score' and the service's boards: Clopper-Pearson for a 0/1 metric on independent items, a "
        "detection or segmentation metric's own, else BCa; docs/stats.md)",
    )
    lb.add_argument("--alpha", type=level, default=0.05, help="level of the tests (default 0.05)")
    lb.add_argument("--correction", choices=CORRECTIONS, default="holm")
    lb.add_argument("--test", choices=TESTS, default="auto", help="test behind the p-values")
    lb.add_argument("--best-set", choices=BEST_SET_METHODS, default="max-t", dest="best_set")
    lb.add_argument("--randomizations", type=integer(1), default=10_000)
    lb.add_argument("--power", type=level, default=0.8)
    lb.add_argument("--format", choices=["table", "json"], default="table")
    add_edge_arguments(lb)
    add_vision_arguments(lb)
    add_text_arguments(lb)
    lb.set_defaults(handler=run_leaderboard)

    cd = subparsers.add_parser(
        "cd",
        help="compare entries across tasks: Friedman, Nemenyi or Wilcoxon-Holm, critical-difference diagram",
        description=(
            "SCORES has one row per task and one column per entry; the first column holds the task names."
        ),
    )
    cd.add_argument("--scores", required=True, help="CSV: task,<entry>,<entry>,...")
    cd.add_argument("--alpha", type=level, default=0.05)
    cd.add_argument("--posthoc", choices=POSTHOCS, default="nemenyi")
    cd.add_argument(
        "--lower-is-better", action="store_true", help="smaller scores are better (errors, losses)"
    )
    cd.add_argument("--svg", help="write the critical-difference diagram to this SVG file")
    cd.add_argument("--title", help="title of the diagram")
    cd.add_argument("--format", choices=["table", "json"], default="table")
    cd.set_defaults(handler=run_cd)


# --------------------------------------------------------------------------------------------------
# leaderboard


def _fmt(x: float | None, digits: int = 4) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    return f"{x:.{digits}f}"


def _fmt_p(p: float) -> str:
    return f"{p:.2e}" if p < 1e-3 else f"{p:.4f}"


def board_table(board: Board) -> str:
    """The board as a fixed-width text table."""
    pct = f"{board.confidence * 100:g}%"
    level = f"{(1 - board.alpha) * 100:g}%"
    header = [
        "rank",
        "name",
        "value",
        f"{pct} {board.interval_method}",
        "ranks",
        "sim. ranks",
        "verdict",
        "diff",
        f"{level} max-t diff",
        "vs",
        "p vs leader",
        f"p {board.correction}",
        "items needed",
    ]
    lines = []
    for r in board.rows:
        lines.append(
            [
                str(r.rank),
                r.name,
                _fmt(r.value),
                f"[{_fmt(r.interval.low)}, {_fmt(r.interval.high)}]",
                f"{r.rank_interval[0]}-{r.rank_interval[1]}",
                f"{r.simultaneous_rank_interval[0]}-{r.simultaneous_rank_interval[1]}",
                r.verdict,
                "" if r.compared_with is None else f"{r.difference:+.4f}",
                ""
                if r.compared_with is None
                else f"[{r.difference_interval.low:+.4f}, {r.difference_interval.high:+.4f}]",
                r.compared_with or "",
                "" if r.is_leader else _fmt_p(r.p_value),
                "" if r.is_leader else _fmt_p(r.adjusted_p_value),
                "" if r.items_needed is None else f"{r.items_needed:,}",
            ]
        )
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
    left = {1}
    out = io.StringIO()
    for row in [header, *lines]:
        cells = [
            c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        out.write("  ".join(cells).rstrip() + "\n")
    out.write(
        f"verdict: max-t comparisons with the best at alpha {board.alpha:g}, by {board.verdict_test} "
        f"(diff and its interval: to the "
        f"entry named in 'vs'; excludes 0 exactly when the verdict decides); best set: "
        f"{board.best_set_method} (alpha {board.alpha:g}); p vs leader: {board.test}, this pair alone, and "
        f"{board.correction}-corrected over the comparisons with the observed leader (not the verdict); "
        f"ranks: {pct} marginal, sim. ranks: {level} simultaneous (max-t)\n"
    )
    for r in board.rows:  # the warning the JSON carries (a zero-width or degenerate interval)
        if r.interval_warning:
            out.write(f"warning: {r.name}: {r.interval_warning}\n")
    out.write(f"signature: {board.signature}\n")
    return out.getvalue()


def _rank_verdict_inputs(
    metric: Metric, labels: Any, preds: list[Any], metric_labels: Any, grouped: bool
) -> tuple[Exchangeable | None, int | None]:
    """For ROC AUC and average precision on independent items: the smaller class's count and, below
    :data:`stats.board.FEW_POSITIVES`, the scores for the verdicts' randomization max-t (the bootstrap does
    not hold their level there)."""
    if not metric.rank_based or grouped:
        return None, None
    truth = np.asarray(labels)
    y = truth == metric_labels[1] if metric_labels else truth.astype(bool)
    positives = int(min(y.sum(), y.size - y.sum()))
    if positives >= FEW_POSITIVES or positives == 0:
        return None, positives
    return ranked_scores(y, [np.asarray(p, dtype=np.float64) for p in preds], metric=metric.name), positives


def run_leaderboard(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """Run ``leaderboard``; returns the exit code."""
    out = out or sys.stdout
    metric = get_metric(args.metric)
    # "auto": the metric's own interval (stats.intervals.default_interval, through stats.board)
    args.interval = args.interval or "auto"
    check_single_truth(args, metric)
    text = None
    item_statistics: list[Any] | None
    if metric.task_kind == "text":
        names = list(args.predictions)
        if len(set(names)) != len(names):
            raise InputError("the same prediction file is given twice", file=names[0])
        text = score_text(args, metric, names, jackknife=args.interval in ("bca", "auto"))
        metric, scores, item_statistics, n_items = (
            text.metric,
            text.scores,
            text.item_statistics,
            text.n_items,
        )
        truth_groups = None if text.groups is None else np.asarray(text.groups)
        grouped, metric_labels = text.groups is not None, None
        # corpus metrics: the verdict's randomization max-t permutes the systems' per-segment statistics
        # (stats.board builds it from item_statistics and finalize); no rank-metric inputs
        exchangeable, positives = None, None
        sampling = Sampling(strata=None, stratified="none (text)", labels=None, notes=text.notes, warnings=[])
    elif metric.task_kind != "items":
        names = list(args.predictions)
        if len(set(names)) != len(names):
            raise InputError("the same prediction file is given twice", file=names[0])
        vision = score_vision(args, metric, names, jackknife=args.interval == "bca")
        scores, item_statistics, n_items, grouped = (
            vision.scores,
            vision.item_statistics,
            vision.n_items,
            False,
        )
        truth_groups = None
        metric_labels = None
        exchangeable, positives = None, None
        # a detection task is resampled within its image strata (stats.vision); no class strata here
        sampling = Sampling(strata=None, stratified="image strata", labels=None, notes=[], warnings=[])
    else:
        inputs = read_inputs(args)
        metric, truth, preds, names, metric_labels = (
            inputs.metric,
            inputs.truth,
            inputs.predictions,
            inputs.names,
            inputs.labels,
        )
        if len(set(names)) != len(names):
            raise InputError("the same prediction file is given twice", file=names[0])
        sampling = sampling_for(args, inputs)
        metric_labels = sampling.labels
        warn(sampling.warnings)
        scores = score_entries(
            truth.labels,
            preds,
            metric=metric,
            labels=metric_labels,
            names=names,
            resamples=args.resamples,
            seed=args.seed,
            groups=truth.groups,
            strata=sampling.strata,
            jackknife=args.interval in ("bca", "auto"),
        )
        warn(value_warnings(metric, [s.value for s in scores], names))
        item_statistics = None
        if not metric.rank_based:
            item_statistics = [metric.item_statistics(truth.labels, p, labels=metric_labels) for p in preds]
        n_items, grouped = len(truth.ids), truth.groups is not None
        truth_groups = truth.groups
        exchangeable, positives = _rank_verdict_inputs(metric, truth.labels, preds, metric_labels, grouped)
    theta = np.column_stack([s.replicates for s in scores])
    keep, undefined = defined_rows(theta)  # the stated rule of stats.checks for undefined resamples
    board = build_board(
        names=names,
        values=[s.value for s in scores],
        replicates=theta[keep],
        groups=truth_groups,
        jackknife=np.column_stack([s.jackknife for s in scores])
        if all(len(s.jackknife) for s in scores)
        else None,
        higher_is_better=metric.higher_is_better,
        metric_name=metric.name,
        seed=args.seed,
        confidence=args.confidence,
        alpha=args.alpha,
        interval=args.interval,
        correction=args.correction,
        test=args.test,
        item_statistics=item_statistics,
        finalize=None if item_statistics is None else metric.finalize,
        zero_one=metric.zero_one,
        randomizations=args.randomizations,
        n_items=n_items,
        best_set_method=args.best_set,
        power=args.power,
        grouped=grouped,
        exchangeable=exchangeable,
        positives=positives,
    )
    warn([board.verdict_warning] if board.verdict_warning else [])
    extra: dict[str, object] = {"stratified": sampling.stratified}
    if metric.prediction_kind == "score" and metric_labels:
        extra["positive"] = metric_labels[1]
    if undefined:
        extra.update(undefined_resamples=undefined, undefined_rule=UNDEFINED_RULE)
    board = dataclasses.replace(board, signature=board.signature.with_extra(**extra))
    sampling_info = {
        "stratified": sampling.stratified,
        "undefined_resamples": undefined,
        "undefined_rule": UNDEFINED_RULE,
        "warnings": sampling.warnings,
        **({"positive": metric_labels[1]} if metric.prediction_kind == "score" and metric_labels else {}),
    }
    report = None if text is None else text_report(args, text, names, board.leader)
    if report is not None:
        warn(report["warnings"])
    if args.format == "json":
        extra_text = {} if report is None else {"text": report}
        json.dump(
            {**board.as_dict(), "sampling": sampling_info, **extra_text}, out, indent=2, allow_nan=False
        )
        out.write("\n")
    else:
        out.write(board_table(board))
        for note in sampling.notes:
            out.write(f"{note}\n")
        if report is not None:
            out.write(text_table(report))
        if undefined:
            out.write(f"undefined resamples dropped: {undefined} ({UNDEFINED_RULE})\n")
    return EXIT_OK


def text_table(report: dict[str, object]) -> str:
    """The text report (design effects, sacreBLEU's paired test) as lines under the board."""
    out = io.StringIO()
    de = report.get("design_effect")
    if isinstance(de, dict):
        out.write(f"design effect ({de['documents']} documents; variance by document / by segment):\n")
        for name, v in de["value"].items():
            out.write(
                f"  {name}: value {v:g}, difference to the leader {de['difference_to_leader'][name]:g}\n"
            )
    sb = report.get("sacrebleu")
    if isinstance(sb, dict):
        out.write(f"sacreBLEU paired {sb['test']} against {sb['baseline']} ({sb['signature']}):\n")
        for row in sb["systems"]:
            p = "baseline" if row["p_value"] is None else f"p = {row['p_value']:.4f}"
            out.write(f"  {row['name']}: {row['score']:.4f} {p}\n")
        out.write(f"  {sb['note']}\n")
    return out.getvalue()


# --------------------------------------------------------------------------------------------------
# cd


def read_score_table(path: str) -> tuple[list[str], list[str], np.ndarray]:
    """Read ``task,<entry>,...`` rows: returns task names, entry names and the (N, k) scores.

    Raises :class:`stats.io.InputError` located at ``file:line:column`` for an unreadable or empty file,
    a duplicate or empty entry name, a row of the wrong width, a duplicate task, or a score that is
    not a finite number.
    """
    reader = csv.reader(io.StringIO(_score_table_text(path), newline=""), strict=True)
    header: list[str] | None = None
    tasks: list[str] = []
    rows: list[list[float]] = []
    try:
        for record in reader:
            line = reader.line_num
            if not record or all(not cell.strip() for cell in record):
                continue
            if header is None:
                header = _score_table_header(record, path, line)
                continue
            task, values = _score_table_row(record, header, tasks, path, line)
            tasks.append(task)
            rows.append(values)
    except csv.Error as exc:
        raise InputError(f"malformed CSV: {exc}", file=path, line=reader.line_num) from None
    if header is None:
        raise InputError("the file is empty", file=path)
    if len(rows) < 2:
        raise InputError("at least two tasks (rows) are needed", file=path)
    return tasks, header[1:], np.asarray(rows, dtype=np.float64)


def _score_table_text(path: str) -> str:
    """The file's text (UTF-8, a BOM dropped)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc.strerror}", file=path) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError("the file is not UTF-8 encoded", file=path, line=line) from None


def _score_table_header(record: list[str], path: str, line: int) -> list[str]:
    """The header: a task column and at least two unique, non-empty entry names."""
    header = [cell.strip() for cell in record]
    if len(header) < 3:
        raise InputError(
            "the header needs a task column and at least two entry columns", file=path, line=line
        )
    for col, name in enumerate(header[1:], start=2):
        if not name:
            raise InputError("empty entry name", file=path, line=line, column=col)
        if name in header[1 : col - 1]:
            raise InputError(f"duplicate entry name '{name}'", file=path, line=line, column=col)
    return header


def _score_table_row(
    record: list[str], header: list[str], tasks: list[str], path: str, line: int
) -> tuple[str, list[float]]:
    """One task's name (new, non-empty) and its finite scores, one per entry column."""
    if len(record) != len(header):
        raise InputError(f"expected {len(header)} fields, found {len(record)}", file=path, line=line)
    task = record[0].strip()
    if not task:
        raise InputError("empty task name", file=path, line=line, column=1)
    if task in tasks:
        raise InputError(f"duplicate task '{task}'", file=path, line=line, column=1)
    values = []
    for col, cell in enumerate(record[1:], start=2):
        try:
            value = float(cell)
        except ValueError:
            raise InputError(f"'{cell.strip()}' is not a number", file=path, line=line, column=col) from None
        if not math.isfinite(value):
            raise InputError(f"'{cell.strip()}' is not a finite number", file=path, line=line, column=col)
        values.append(value)
    return task, values


def _p_eq(p: float) -> str:
    """``= 0.0278`` or ``< 1e-300``: a p-value is never printed as 0."""
    if p <= 0.0:
        return "< 1e-300"
    return f"= {p:.4g}"


def cd_table(result: CrossTaskResult) -> str:
    """The cross-task comparison as text."""
    fr = result.friedman
    out = io.StringIO()
    order = result.order()
    width = max(len("entry"), *(len(result.names[i]) for i in order))
    out.write(f"{'entry':<{width}}  average rank\n")
    for i in order:
        out.write(f"{result.names[i]:<{width}}  {result.average_ranks[i]:12.3f}\n")
    f_p = "undefined" if fr.f_p is None else _p_eq(fr.f_p)
    out.write(
        f"Friedman chi2 = {fr.chi2:.3f} (df {fr.df1}, asymptotic p {_p_eq(fr.chi2_p)}); "
        f"tie-corrected chi2 = {fr.chi2_tie_corrected:.3f} (p {_p_eq(fr.chi2_tie_corrected_p)}); "
        f"Iman-Davenport F = {fr.f:.3f} (df {fr.df1}, {fr.df2}, p {f_p})\n"
    )
    out.write(f"exact p ({fr.exact_method}) {_p_eq(fr.exact_p)}\n")
    for warning in fr.warnings:
        out.write(f"warning: {warning}\n")
    out.write(
        f"Nemenyi CD = {result.critical_difference:.3f} (q = {result.q_alpha:.3f}, alpha {result.alpha:g}, "
        f"k = {fr.n_entries}, N = {fr.n_tasks}); post-hoc: {result.posthoc}\n"
    )
    pairs = [
        (result.names[i], result.names[j], result.p_values[i, j])
        for x, i in enumerate(order)
        for j in order[x + 1 :]
        if result.significant[i, j]
    ]
    if pairs:
        out.write("significantly different pairs:\n")
        for a, b, p in pairs:
            out.write(f"  {a} vs {b}  (p = {p:.4g})\n")
    else:
        out.write("no pair is significantly different\n")
    for clique in result.cliques:
        out.write(f"not separated: {', '.join(clique)}\n")
    out.write(f"signature: {result.signature}\n")
    return out.getvalue()


def run_cd(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """Run ``cd``; returns the exit code."""
    out = out or sys.stdout
    _, entries, scores = read_score_table(args.scores)
    result = compare_across_tasks(
        scores,
        names=entries,
        higher_is_better=not args.lower_is_better,
        alpha=args.alpha,
        posthoc=args.posthoc,
    )
    if args.svg:
        from stats.cddiagram import cd_diagram_svg  # matplotlib only when a diagram is asked for

        try:
            Path(args.svg).write_bytes(cd_diagram_svg(result, title=args.title))
        except OSError as exc:
            raise InputError(f"cannot write the SVG: {exc.strerror}", file=args.svg) from None
    if args.format == "json":
        json.dump(result.as_dict(), out, indent=2, allow_nan=False)
        out.write("\n")
    else:
        out.write(cd_table(result))
    return EXIT_OK
