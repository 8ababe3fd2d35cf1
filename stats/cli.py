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
from stats.cli_compare import add_comparison_parsers
from stats.cli_inputs import add_label_arguments, read_inputs
from stats.engine import DEFAULT_RESAMPLES, score_entries
from stats.intervals import DEFAULT_CONFIDENCE, DEFAULT_METHOD, intervals_for
from stats.io import InputError
from stats.metrics import METRICS

__all__ = ["build_parser", "main"]

EXIT_OK = 0
EXIT_INPUT = 2


def _confidence(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("must be a number strictly between 0 and 1") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError("must be a number strictly between 0 and 1")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("must be a positive integer") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return value


def _nonnegative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("must be a non-negative integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be a non-negative integer")
    return value


def add_score_parser(subparsers: Any) -> None:
    """Register the ``score`` subcommand."""
    p = subparsers.add_parser(
        "score",
        help="score prediction files against a truth file, with bootstrap confidence intervals",
        description="Score each prediction file against the truth file; one row per file.",
    )
    p.add_argument("predictions", nargs="+", metavar="PRED", help="prediction files (CSV or Parquet)")
    p.add_argument("--truth", required=True, help="truth file: id,label[,group] (CSV or Parquet)")
    p.add_argument("--metric", required=True, choices=sorted(METRICS), help="metric of the registry")
    add_label_arguments(p)
    p.add_argument("--group-column", help="column of the truth file holding each item's group")
    p.add_argument("--resamples", type=_positive_int, default=DEFAULT_RESAMPLES)
    p.add_argument("--seed", type=_nonnegative_int, default=0)
    p.add_argument("--confidence", type=_confidence, default=DEFAULT_CONFIDENCE)
    p.add_argument(
        "--interval",
        choices=["bca", "percentile", "basic", "wilson", "clopper_pearson", "wald"],
        default=DEFAULT_METHOD,
    )
    p.add_argument("--format", choices=["table", "json"], default="table")
    p.set_defaults(handler=run_score)


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m stats`` parser with every subcommand registered."""
    parser = argparse.ArgumentParser(prog="python -m stats", description="Honest leaderboard statistics.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_score_parser(subparsers)
    add_comparison_parsers(subparsers)  # leaderboard, cd (issue 4)
    return parser


def run_score(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """Run ``score``; returns the exit code."""
    out = out or sys.stdout
    inputs = read_inputs(args)
    metric, truth, preds, metric_labels = inputs.metric, inputs.truth, inputs.predictions, inputs.labels
    scores = score_entries(
        truth.labels,
        preds,
        metric=metric,
        labels=metric_labels,
        names=list(args.predictions),
        resamples=args.resamples,
        seed=args.seed,
        groups=truth.groups,
        jackknife=args.interval == "bca",
    )
    intervals = intervals_for(scores, method=args.interval, confidence=args.confidence)
    if args.format == "json":
        rows = [
            {
                "name": s.name,
                "value": s.value,
                "interval": [iv.low, iv.high],
                "signature": iv.signature.as_dict() if iv.signature else None,
                "signature_text": str(iv.signature),
            }
            for s, iv in zip(scores, intervals, strict=True)
        ]
        json.dump(rows, out, indent=2)
        out.write("\n")
        return EXIT_OK
    width = max(len("name"), *(len(s.name) for s in scores))
    pct = f"{args.confidence * 100:g}% {args.interval}"
    out.write(f"{'name':<{width}}  {'value':>8}  {pct}\n")
    for s, iv in zip(scores, intervals, strict=True):
        out.write(f"{s.name:<{width}}  {s.value:>8.4f}  [{iv.low:.4f}, {iv.high:.4f}]\n")
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
