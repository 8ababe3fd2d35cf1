"""Command line: ``python -m stats score ...``.

Subcommands are registered on the parser built by :func:`build_parser`; each adds its own subparser
and sets ``handler`` (a function of the parsed arguments returning the exit code).

Exit codes: 0 success, 2 bad input or usage (messages ``file:line:column: message`` on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from stats import __version__
from stats.checks import order_positive, truth_problem, value_warnings
from stats.cli.compare import add_comparison_parsers
from stats.cli.edges import add_edge_arguments, integer, level, sampling_for, warn
from stats.cli.inputs import add_label_arguments, read_inputs
from stats.cli.text import TruthAction, add_text_arguments, check_single_truth, score_text
from stats.cli.vision import add_vision_arguments, score_vision
from stats.cli.winner import add_winner_parsers
from stats.delong import delong_covariance, delong_interval, delong_intervals, delong_test
from stats.engine import DEFAULT_RESAMPLES, score_entries
from stats.intervals import DEFAULT_CONFIDENCE, PROPORTION_METHODS, Interval, default_interval, intervals_for
from stats.io import InputError
from stats.metrics import METRICS, get_metric

__all__ = ["build_parser", "main"]

EXIT_OK = 0
EXIT_INPUT = 2


def add_score_parser(subparsers: Any) -> None:
    """Register the ``score`` subcommand."""
    p = subparsers.add_parser(
        "score",
        help="score prediction files against a truth file, with bootstrap confidence intervals",
        description="Score each prediction file against the truth file; one row per file.",
    )
    p.add_argument(
        "predictions",
        nargs="+",
        metavar="PRED",
        help="prediction files (CSV or Parquet; COCO results JSON for detection; PNG archives for segmentation)",
    )
    p.add_argument(
        "--truth",
        required=True,
        action=TruthAction,
        help="truth file: id,label[,group] (CSV or Parquet; COCO JSON for detection; PNG archive for "
        "segmentation; references for text metrics, repeated for several reference streams)",
    )
    p.add_argument("--metric", required=True, choices=sorted(METRICS), help="metric of the registry")
    add_label_arguments(p)
    p.add_argument("--group-column", help="column of the truth file holding each item's group")
    p.add_argument("--resamples", type=integer(1), default=DEFAULT_RESAMPLES)
    p.add_argument("--seed", type=integer(0), default=0)
    p.add_argument("--confidence", type=level, default=DEFAULT_CONFIDENCE)
    p.add_argument(
        "--interval",
        choices=["bca", "percentile", "basic", *PROPORTION_METHODS, "delong"],
        default=None,
        help="interval method (default: the metric's own, chosen by measured coverage, the same as "
        "'leaderboard' and the service's boards: Clopper-Pearson for a 0/1 metric on independent items, "
        "a detection or segmentation metric's own, else BCa; docs/stats.md)",
    )
    p.add_argument("--format", choices=["table", "json"], default="table")
    add_edge_arguments(p)
    add_vision_arguments(p)
    add_text_arguments(p)
    p.set_defaults(handler=run_score)


def add_delong_parser(subparsers: Any) -> None:
    """Register the ``delong`` subcommand (ROC AUC: DeLong's intervals and paired tests)."""
    p = subparsers.add_parser(
        "delong",
        help="ROC AUC with DeLong's intervals and DeLong's paired test of every pair of files",
        description="DeLong, DeLong & Clarke-Pearson (1988): normal intervals of each AUC and paired "
        "two-sided tests of equal AUC, from placement values in O(N log N). Items must be independent.",
    )
    p.add_argument("predictions", nargs="+", metavar="PRED", help="score files (CSV or Parquet)")
    p.add_argument("--truth", required=True, help="truth file: id,label (CSV or Parquet)")
    p.add_argument("--labels", help="comma-separated label set (default: the labels of the truth file)")
    p.add_argument("--positive", metavar="LABEL", help="the positive class (default: second in sorted order)")
    p.add_argument("--confidence", type=level, default=DEFAULT_CONFIDENCE)
    p.add_argument("--format", choices=["table", "json"], default="table")
    p.set_defaults(handler=run_delong, metric="roc_auc", group_column=None)


def run_delong(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """Run ``delong``; returns the exit code."""
    out = out or sys.stdout
    inputs = read_inputs(args)
    labels, note = order_positive(inputs.labels or [], args.positive)
    problem = truth_problem("roc_auc", inputs.truth.labels, labels=labels)
    if problem is not None:
        raise ValueError(problem)
    names = list(args.predictions)
    aucs, cov = delong_covariance(inputs.truth.labels, inputs.predictions, labels=labels)
    warn(value_warnings("roc_auc", aucs.tolist(), names))
    intervals = [
        delong_interval(inputs.truth.labels, p, labels=labels, confidence=args.confidence)
        for p in inputs.predictions
    ]
    pairs = [
        (
            names[i],
            names[j],
            delong_test(inputs.truth.labels, inputs.predictions[i], inputs.predictions[j], labels=labels),
        )
        for i in range(len(names))
        for j in range(i + 1, len(names))
    ]
    if args.format == "json":
        data = {
            "positive": labels[1],
            "confidence": args.confidence,
            "entries": [
                {
                    "name": n,
                    "auc": float(a),
                    "standard_error": float(cov[k, k]) ** 0.5,
                    "interval": [iv.low, iv.high],
                    "warning": iv.warning,
                }
                for k, (n, a, iv) in enumerate(zip(names, aucs, intervals, strict=True))
            ],
            "pairs": [
                {
                    "a": a,
                    "b": b,
                    "difference": t.difference,
                    "standard_error": t.standard_error,
                    "z": t.z,
                    "p_value": t.p_value,
                }
                for a, b, t in pairs
            ],
            "method": "delong",
        }
        json.dump(data, out, indent=2, allow_nan=False)
        out.write("\n")
        return EXIT_OK
    width = max(len("name"), *(len(n) for n in names))
    out.write(f"{'name':<{width}}  {'AUC':>8}  {args.confidence * 100:g}% DeLong\n")
    for n, a, iv in zip(names, aucs, intervals, strict=True):
        out.write(f"{n:<{width}}  {a:>8.4f}  [{iv.low:.4f}, {iv.high:.4f}]\n")
    write_interval_warnings(names, intervals, out)
    for a, b, t in pairs:
        p = f"{t.p_value:.4g}" if t.p_value > 0 else "< 1e-300"
        out.write(
            f"{a} vs {b}: difference {t.difference:+.4f}, se {t.standard_error:.4f}, z {t.z:.3f}, p {p}\n"
        )
    out.write(f"{note}; DeLong's test is two-sided and unadjusted for multiple pairs\n")
    return EXIT_OK


def write_interval_warnings(names: Sequence[str], intervals: Sequence[Interval], out: TextIO) -> None:
    """The warning each interval carries (a zero-width interval, ...), under the table that shows it."""
    for name, iv in zip(names, intervals, strict=True):
        if iv.warning:
            out.write(f"warning: {name}: {iv.warning}\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m stats`` parser with every subcommand registered."""
    parser = argparse.ArgumentParser(prog="python -m stats", description="Honest leaderboard statistics.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_score_parser(subparsers)
    add_comparison_parsers(subparsers)  # leaderboard, cd (issue 4)
    add_delong_parser(subparsers)  # issue 11
    add_winner_parsers(subparsers)  # winner, robustness, plan (issue 23)
    return parser


def run_score(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """Run ``score``; returns the exit code."""
    out = out or sys.stdout
    check_single_truth(args, get_metric(args.metric))
    notes: list[str] = []  # printed under the table (vision: none)
    if get_metric(args.metric).task_kind != "items":
        # the metric's own interval (stats.intervals.default_interval), as 'leaderboard' and the boards
        args.interval = args.interval or default_interval(args.metric)
    if get_metric(args.metric).task_kind == "text":
        if args.interval == "delong":
            raise ValueError("--interval delong applies to ROC AUC, not to text metrics")
        text = score_text(
            args, get_metric(args.metric), list(args.predictions), jackknife=args.interval == "bca"
        )
        scores, notes = text.scores, text.notes
        intervals = intervals_for(scores, method=args.interval, confidence=args.confidence)
    elif get_metric(args.metric).task_kind != "items":
        if args.interval == "delong":
            raise ValueError("--interval delong applies to ROC AUC, not to detection or segmentation metrics")
        scores = score_vision(
            args, get_metric(args.metric), list(args.predictions), jackknife=args.interval == "bca"
        ).scores
        intervals = intervals_for(scores, method=args.interval, confidence=args.confidence)
    else:
        inputs = read_inputs(args)
        metric, truth, preds = inputs.metric, inputs.truth, inputs.predictions
        sampling = sampling_for(args, inputs)
        notes = sampling.notes
        warn(sampling.warnings)
        # the metric's default (one rule for score, leaderboard and the boards: stats.intervals)
        args.interval = args.interval or default_interval(metric, grouped=truth.groups is not None)
        scores = score_entries(
            truth.labels,
            preds,
            metric=metric,
            labels=sampling.labels,
            names=list(args.predictions),
            resamples=args.resamples,
            seed=args.seed,
            groups=truth.groups,
            strata=sampling.strata,
            jackknife=args.interval == "bca",
        )
        warn(value_warnings(metric, [s.value for s in scores], [s.name for s in scores]))
        if args.interval == "delong":
            intervals = delong_intervals(
                truth.labels, preds, scores, labels=sampling.labels, confidence=args.confidence
            )
        else:
            intervals = intervals_for(scores, method=args.interval, confidence=args.confidence)
    if args.format == "json":
        rows = [
            {
                "name": s.name,
                "value": s.value,
                "interval": [iv.low, iv.high],
                "interval_method": iv.method,
                "warning": iv.warning,
                "signature": iv.signature.as_dict() if iv.signature else None,
                "signature_text": str(iv.signature),
            }
            for s, iv in zip(scores, intervals, strict=True)
        ]
        json.dump(rows, out, indent=2, allow_nan=False)
        out.write("\n")
        return EXIT_OK
    width = max(len("name"), *(len(s.name) for s in scores))
    pct = f"{args.confidence * 100:g}% {args.interval}"
    out.write(f"{'name':<{width}}  {'value':>8}  {pct}\n")
    for s, iv in zip(scores, intervals, strict=True):
        out.write(f"{s.name:<{width}}  {s.value:>8.4f}  [{iv.low:.4f}, {iv.high:.4f}]\n")
    write_interval_warnings([s.name for s in scores], intervals, out)
    for note in notes:
        out.write(f"{note}\n")
    out.write(f"signature: {intervals[0].signature}\n")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m stats``; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.handler(args)
    except InputError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_INPUT
    except ValueError as exc:  # a parameter the engine refuses (e.g. wilson for macro_f1)
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    return code
