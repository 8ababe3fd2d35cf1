"""What ``score`` and ``leaderboard`` share about the edges: stratification, the positive class and
warnings (issue 11; the rules are in :mod:`stats.checks`), and the argument types of every subcommand
(:func:`level`, :func:`integer`: the checks of :mod:`stats.checks` as argparse types)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any, TextIO

from numpy.typing import NDArray

from stats.checks import check_count, check_level, class_strata, design_warnings, order_positive
from stats.cli.inputs import Inputs

__all__ = ["Sampling", "add_edge_arguments", "integer", "level", "sampling_for", "warn"]


def level(text: str) -> float:
    """An argparse type: a number strictly between 0 and 1 (``--confidence``, ``--alpha``, ``--power``)."""
    try:
        return check_level(float(text), name="level")
    except ValueError:
        raise argparse.ArgumentTypeError("must be a number strictly between 0 and 1") from None


def integer(minimum: int) -> Any:
    """An argparse type: an integer of at least ``minimum`` (``--resamples``, ``--seed``)."""

    def parse(text: str) -> int:
        try:
            return check_count(int(text), name="value", minimum=minimum)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}") from None

    return parse


def add_edge_arguments(parser: argparse.ArgumentParser) -> None:
    """``--stratify`` and ``--positive``."""
    parser.add_argument(
        "--stratify",
        choices=["auto", "class", "none"],
        default="auto",
        help="resample within each true class: 'auto' (default) does for class-based metrics (ROC AUC, "
        "average precision, kappa, macro-F1, balanced accuracy) where it applies",
    )
    parser.add_argument(
        "--positive",
        metavar="LABEL",
        help="the positive class of a binary-score metric (default: the second label in sorted order)",
    )


@dataclass(frozen=True)
class Sampling:
    """The resampling decided for a command: strata, labels in (negative, positive) order, notes."""

    strata: NDArray[Any] | None
    stratified: str
    labels: list[Any] | None
    notes: list[str]
    warnings: list[str]


def sampling_for(args: argparse.Namespace, inputs: Inputs) -> Sampling:
    """Stratification, the positive class and the design warnings of the command's inputs."""
    metric, truth = inputs.metric, inputs.truth
    labels = inputs.labels
    notes: list[str] = []
    if metric.prediction_kind == "score" and labels is not None:
        labels, note = order_positive(labels, args.positive)
        notes.append(note)
    elif args.positive:
        raise ValueError(f"--positive applies to binary-score metrics, not {metric.name}")
    want = {"auto": None, "class": True, "none": False}[args.stratify]
    strata, decision = class_strata(metric, truth.labels, groups=truth.groups, stratify=want)
    warnings = []
    if decision.startswith("none (") and want is not False:
        warnings.append(
            "the resampling is not stratified by class: some groups hold items of several classes; "
            "resamples in which the metric is undefined are dropped (stated in the signature)"
        )
    n_units = len(set(truth.groups.tolist())) if truth.groups is not None else len(truth.ids)
    warnings.extend(design_warnings(n_units, grouped=truth.groups is not None))
    notes.append(f"stratified: {decision}")
    return Sampling(strata=strata, stratified=decision, labels=labels, notes=notes, warnings=warnings)


def warn(messages: list[str], *, err: TextIO | None = None) -> None:
    """Print warnings on stderr (the numbers stay on stdout)."""
    err = err or sys.stderr
    for message in messages:
        err.write(f"warning: {message}\n")
