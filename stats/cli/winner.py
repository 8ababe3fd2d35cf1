"""Command line: ``python -m stats winner``, ``robustness`` and ``plan`` (issue 23).

- ``winner``: score prediction files like ``leaderboard`` and print the leader's selection-adjusted
  estimate and intervals (:func:`stats.selection.leader_adjusted`);
- ``robustness``: the rank frequencies, median ranks and rank intervals, Kendall's tau-b of the bootstrap
  rankings, optionally the blob plot as SVG, and for metrics with a per-item score the three ranking
  schemes side by side (:mod:`stats.robustness`);
- ``plan``: the smallest difference a test set resolves, and the test-set size for a gap, at a power
  (:mod:`stats.power`); numbers in, no files.

Registered on :func:`stats.cli.main.build_parser` by :func:`add_winner_parsers`. Bad input exits with
code 2 (see :func:`stats.cli.main.main`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from stats.checks import defined_rows, undefined_warning, value_warnings
from stats.cli.edges import add_edge_arguments, integer, level, sampling_for, warn
from stats.cli.inputs import add_label_arguments, read_inputs
from stats.engine import DEFAULT_RESAMPLES, score_entries
from stats.intervals import DEFAULT_CONFIDENCE
from stats.io import InputError
from stats.metrics import METRICS, get_metric
from stats.power import FAMILIES, items_for_gap, planned_resolution
from stats.resampling import resample_weights
from stats.robustness import blob_plot_svg, rank_robustness, ranking_schemes
from stats.selection import DEFAULT_BETA, leader_adjusted
from stats.selection import WinnerInterval as _Interval

__all__ = ["add_winner_parsers", "run_plan", "run_robustness", "run_winner"]

EXIT_OK = 0


def _add_scoring_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("predictions", nargs="+", metavar="PRED", help="prediction files (CSV or Parquet)")
    p.add_argument("--truth", required=True, help="truth file: id,label[,group] (CSV or Parquet)")
    p.add_argument(
        "--metric",
        required=True,
        choices=sorted(n for n, m in METRICS.items() if m.task_kind == "items"),
        help="metric of the registry (per-item tasks)",
    )
    add_label_arguments(p)
    p.add_argument("--group-column", help="column of the truth file holding each item's group")
    p.add_argument("--resamples", type=integer(2), default=DEFAULT_RESAMPLES)
    p.add_argument("--seed", type=integer(0), default=0)
    p.add_argument("--confidence", type=level, default=DEFAULT_CONFIDENCE)
    p.add_argument("--format", choices=["table", "json"], default="table")
    add_edge_arguments(p)


def add_winner_parsers(subparsers: Any) -> None:
    """Register ``winner``, ``robustness`` and ``plan`` on ``python -m stats``'s subparsers."""
    w = subparsers.add_parser(
        "winner",
        help="the leader's selection-adjusted score: bias correction, conditional and hybrid intervals",
        description=(
            "Score each prediction file and adjust the leader's score for having been picked as the best on "
            "the same test set: bootstrap bias correction from the common resamples, and Andrews, Kitagawa "
            "& McCloskey's (2024) conditional and hybrid estimates and intervals."
        ),
    )
    _add_scoring_arguments(w)
    w.add_argument("--beta", type=float, default=DEFAULT_BETA, help="the hybrid's beta (default 0.005)")
    w.add_argument(
        "--resolution",
        type=float,
        default=None,
        help="the metric's step (default: the smallest step of the leader's replicates, 1/N for accuracy)",
    )
    w.set_defaults(handler=run_winner)

    r = subparsers.add_parser(
        "robustness",
        help="ranking robustness: rank frequencies, Kendall's tau-b, blob plot, three ranking schemes",
        description=(
            "Rank frequencies of each entry over the bootstrap resamples with median and interval, the "
            "distribution of Kendall's tau-b between the full ranking and each bootstrap ranking, and, for "
            "metrics with a per-item score (0/1 metrics, MAE, Brier, log loss, squared error), "
            "aggregate-then-rank, rank-then-aggregate and test-then-rank side by side (BIAS; challengeR)."
        ),
    )
    _add_scoring_arguments(r)
    r.add_argument("--svg", help="write the blob plot (SVG with its text alternative) to this file")
    r.add_argument("--alpha", type=level, default=0.05, help="level of test-then-rank's Wilcoxon tests")
    r.set_defaults(handler=run_robustness)

    p = subparsers.add_parser(
        "plan",
        help="what a test set resolves: the smallest gap at a power, or the items needed for a gap",
        description=(
            "Before entries exist: the smallest difference a test set of --items items resolves at --power "
            "(two-sided --alpha), and/or the items needed for --gap. 0/1 metrics: McNemar with Connor's "
            "formula (give --discordant, or --accuracy and --correlation); means (MAE, Brier, log loss): "
            "give --sd (and --correlation) or --sd-difference; any metric: --pilot-se and --pilot-items."
        ),
    )
    fam = p.add_mutually_exclusive_group(required=True)
    fam.add_argument("--metric", choices=sorted(METRICS), help="metric of the registry")
    fam.add_argument("--family", choices=FAMILIES, help="variance family instead of a metric")
    p.add_argument("--items", type=integer(1), help="test-set size: print the smallest resolved difference")
    p.add_argument("--gap", type=float, help="difference to detect: print the items needed")
    p.add_argument("--accuracy", type=float, help="0/1 metrics: expected accuracy of the entries")
    p.add_argument(
        "--discordant", type=float, help="0/1 metrics: share of items exactly one entry gets right"
    )
    p.add_argument(
        "--correlation", type=float, default=0.0, help="correlation of the two entries (default 0)"
    )
    p.add_argument("--sd", type=float, help="means: per-item standard deviation")
    p.add_argument("--sd-difference", type=float, help="means: sd of the per-item difference")
    p.add_argument("--pilot-se", type=float, help="bootstrap se of a paired difference on a pilot")
    p.add_argument("--pilot-items", type=integer(1), help="the pilot's number of items")
    p.add_argument("--alpha", type=level, default=0.05)
    p.add_argument("--power", type=level, default=0.8)
    p.add_argument("--format", choices=["table", "json"], default="table")
    p.set_defaults(handler=run_plan)


def _score(args: argparse.Namespace) -> tuple[list[str], np.ndarray, np.ndarray, Any, Any, Any]:
    """Names, values, replicates (undefined resamples dropped by the stated rule), inputs, metric, truth."""
    inputs = read_inputs(args)
    names = inputs.names
    if len(set(names)) != len(names):
        raise InputError("the same prediction file is given twice", file=names[0])
    if len(names) < 2:
        raise InputError(
            "give at least two prediction files (a leader is chosen among entries)", file=names[0]
        )
    sampling = sampling_for(args, inputs)
    warn(sampling.warnings)
    scores = score_entries(
        inputs.truth.labels,
        inputs.predictions,
        metric=inputs.metric,
        labels=sampling.labels,
        names=names,
        resamples=args.resamples,
        seed=args.seed,
        groups=inputs.truth.groups,
        strata=sampling.strata,
        jackknife=False,
    )
    values = np.array([s.value for s in scores])
    warn(value_warnings(inputs.metric, values.tolist(), names))
    theta = np.column_stack([s.replicates for s in scores])
    keep, undefined = defined_rows(theta)
    warn(undefined_warning(undefined, theta.shape[0]))
    return names, values, theta[keep], inputs, sampling, scores


def _iv(iv: _Interval) -> str:
    lo = "-inf (unbounded)" if iv.low_unbounded else f"{iv.low:.4f}"
    hi = "+inf (unbounded)" if iv.high_unbounded else f"{iv.high:.4f}"
    return f"[{lo}, {hi}]"


def run_winner(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """Run ``winner``; returns the exit code."""
    out = out or sys.stdout
    names, values, theta, inputs, _, _ = _score(args)
    adj = leader_adjusted(
        values,
        theta,
        higher_is_better=inputs.metric.higher_is_better,
        names=names,
        confidence=args.confidence,
        beta=args.beta,
        resolution=args.resolution,
        metric=inputs.metric.name,
        seed=args.seed,
    )
    if args.format == "json":
        json.dump(adj.as_dict(), out, indent=2, allow_nan=False)
        out.write("\n")
        return EXIT_OK
    pct = f"{adj.confidence * 100:g}%"
    cond = "-" if not np.isfinite(adj.conditional_estimate) else f"{adj.conditional_estimate:.4f}"
    out.write(
        f"leader: {adj.leader}"
        + (f" (tied with {', '.join(t for t in adj.tied if t != adj.leader)})" if adj.tied else "")
        + "\n"
    )
    out.write(f"shown value            {adj.value:.4f}  {pct} naive {_iv(adj.naive_interval)}\n")
    out.write(
        f"bias-corrected         {adj.bias_corrected:.4f}  (bootstrap bias {adj.bootstrap_bias:+.4f})\n"
    )
    out.write(f"conditional (AKM)      {cond}  {pct} {_iv(adj.conditional_interval)}\n")
    out.write(
        f"hybrid (AKM, beta {adj.beta:g})  {adj.hybrid_estimate:.4f}  {pct} {_iv(adj.hybrid_interval)}\n"
    )
    out.write(
        f"hybrid cutoff c = {adj.cutoff:.4f} (bootstrap studentised maximum, {1 - adj.beta:g} quantile)\n"
    )
    out.write(f"selection event: {adj.selection_event}\n")
    out.write(f"signature: {adj.signature}\n")
    return EXIT_OK


def _per_item_scores(inputs: Any, sampling: Any) -> np.ndarray | None:
    """(N, K) per-item scores for metrics that are means of per-item values (0/1 metrics, MAE...)."""
    metric = inputs.metric
    if metric.rank_based or not (metric.zero_one or metric.name in ("mae", "rmse", "brier", "log_loss")):
        return None
    cols = []
    for p in inputs.predictions:
        s = metric.item_statistics(inputs.truth.labels, p, labels=sampling.labels)
        cols.append(s[:, 0] / s[:, -1])
    return np.column_stack(cols)


def run_robustness(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """Run ``robustness``; returns the exit code."""
    out = out or sys.stdout
    names, values, theta, inputs, sampling, _ = _score(args)
    higher = inputs.metric.higher_is_better
    rob = rank_robustness(values, theta, higher_is_better=higher, names=names, confidence=args.confidence)
    schemes = None
    item_scores = _per_item_scores(inputs, sampling)
    if item_scores is not None:
        weights = resample_weights(
            item_scores.shape[0],
            resamples=args.resamples,
            seed=args.seed,
            groups=inputs.truth.groups,
            strata=sampling.strata,
        )
        schemes = ranking_schemes(
            item_scores, higher_is_better=higher, names=names, alpha=args.alpha, weights=weights,
            confidence=args.confidence,
        )  # fmt: skip
    if args.svg:
        try:
            Path(args.svg).write_bytes(blob_plot_svg(rob, title=f"{inputs.metric.name}: rank over resamples"))
        except OSError as exc:
            raise InputError(f"cannot write the SVG file ({type(exc).__name__})", file=args.svg) from None
    if args.format == "json":
        data = {
            "metric": inputs.metric.name,
            "seed": args.seed,
            "robustness": rob.as_dict(),
            "schemes": None if schemes is None else schemes.as_dict(),
        }
        json.dump(data, out, indent=2, allow_nan=False)
        out.write("\n")
        return EXIT_OK
    out.write(rob.text() + "\n")
    if schemes is None:
        out.write("ranking schemes: the metric has no per-item score (only aggregate-then-rank applies)\n")
        return EXIT_OK
    width = max(len("name"), *(len(n) for n in names))
    out.write(
        f"\n{'name':<{width}}  "
        + "  ".join(f"{s:>19}" for s in (*(sc.scheme for sc in schemes.schemes),))
        + "\n"
    )
    for j, n in enumerate(names):
        cells = []
        for sc in schemes.schemes:
            rank = sc.ranks[j]
            rob_j = None if sc.robustness is None else next(e for e in sc.robustness.entries if e.name == n)
            extra = "" if rob_j is None else f" ({rob_j.low}-{rob_j.high})"
            cells.append(f"{str(rank) + extra:>19}")
        mark = "  *" if n in schemes.disagreements else ""
        out.write(f"{n:<{width}}  " + "  ".join(cells) + mark + "\n")
    out.write(
        ("* the schemes disagree on this entry; " if schemes.disagreements else "the schemes agree; ")
        + "(a-b): bootstrap rank interval; "
        + "; ".join(f"tau-b {k} {v:.3f}" for k, v in schemes.tau_between.items())
        + "\n"
    )
    out.write(f"rules: {schemes.rules}\n")
    return EXIT_OK


def run_plan(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """Run ``plan``; returns the exit code."""
    out = out or sys.stdout
    if args.items is None and args.gap is None:
        raise ValueError("give --items (smallest resolved difference) and/or --gap (items needed)")
    if args.metric is not None and get_metric(args.metric).task_kind != "items" and args.pilot_se is None:
        raise ValueError(f"{args.metric} needs a pilot: --pilot-se and --pilot-items")
    common: dict[str, Any] = {
        "metric": args.metric,
        "family": args.family,
        "accuracy": args.accuracy,
        "discordant": args.discordant,
        "correlation": args.correlation,
        "sd": args.sd,
        "sd_difference": args.sd_difference,
        "pilot_standard_error": args.pilot_se,
        "pilot_items": args.pilot_items,
        "alpha": args.alpha,
        "power": args.power,
    }
    data: dict[str, Any] = {}
    if args.items is not None:
        data["resolution"] = planned_resolution(args.items, **common).as_dict()
    if args.gap is not None:
        data["items_for_gap"] = items_for_gap(args.gap, **common).as_dict()
    if args.format == "json":
        json.dump(data, out, indent=2, allow_nan=False)
        out.write("\n")
        return EXIT_OK
    pw = f"{args.power * 100:g}% power, two-sided {args.alpha:g}"
    if "resolution" in data:
        r = data["resolution"]
        d = "no difference" if r["difference"] is None else f"{r['difference']:.4g}"
        out.write(
            f"{r['n_items']:,} items resolve a difference of {d} at {pw} ({r['method']}; {r['basis']})\n"
        )
        if r["reason"]:
            out.write(f"  {r['reason']}\n")
    if "items_for_gap" in data:
        p = data["items_for_gap"]
        n = "no test set (gap 0)" if p["items"] is None else f"{p['items']:,} items"
        simple = "" if p["simple_form_items"] is None else f"; simple form: {p['simple_form_items']:,}"
        out.write(f"a gap of {p['gap']:.4g} needs {n} at {pw} ({p['method']}; {p['basis']}{simple})\n")
    return EXIT_OK
