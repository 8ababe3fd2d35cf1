"""Reading a command's truth and prediction files, shared by ``score`` and ``leaderboard``."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from typing import Any

from numpy.typing import NDArray

from stats.io import InputError, Truth, metric_labels, read_predictions, read_truth, truth_kind
from stats.metrics import Metric, get_metric


@dataclass(frozen=True, eq=False)
class Inputs:
    """The metric, the truth, each file's predictions (in the truth's item order) and the label set the
    metric takes (``None`` for regression)."""

    metric: Metric
    truth: Truth
    predictions: list[NDArray[Any]]
    names: list[str]
    labels: list[str] | None


def add_label_arguments(parser: argparse.ArgumentParser) -> None:
    """``--labels a,b,c``, or, for labels that hold commas, ``--label`` (repeated) or ``--labels-file``."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--labels", help="comma-separated label set (default: the labels of the truth file)")
    group.add_argument(
        "--label",
        action="append",
        metavar="LABEL",
        help="one label of the label set, taken as written (commas included); repeat for each label",
    )
    group.add_argument("--labels-file", metavar="FILE", help="the label set, one label per line (UTF-8)")


def _label_set(args: argparse.Namespace) -> list[str] | None:
    if getattr(args, "label", None):
        return list(args.label)
    path = getattr(args, "labels_file", None)
    if path:
        try:
            with open(path, encoding="utf-8") as f:
                labels = [line.rstrip("\r\n") for line in f]
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the labels file ({type(exc).__name__})", file=path) from None
        labels = [label for label in labels if label.strip()]
        if not labels:
            raise InputError("the labels file lists no label", file=path)
        return labels
    return args.labels.split(",") if args.labels else None


#: Added to "unknown label 'a,b'" when the label set came from ``--labels``, which splits at commas.
COMMA_HINT = (
    "--labels splits at commas: give a label that holds a comma with --label (once per label) or "
    "--labels-file (one label per line)"
)


def read_inputs(args: argparse.Namespace) -> Inputs:
    """Read ``--truth`` and the prediction files named by ``args``; raises :class:`InputError`.

    A label of a file that holds a comma and is unknown because ``--labels`` split the set at commas
    gets :data:`COMMA_HINT` (it points to ``--label`` and ``--labels-file``)."""
    try:
        return _read_inputs(args)
    except InputError as exc:
        unknown = re.match(r"unknown label '(.*)' \(labels: ", exc.message)
        if getattr(args, "labels", None) and unknown and "," in unknown.group(1):
            raise InputError(
                f"{exc.message}; {COMMA_HINT}", file=exc.file, line=exc.line, column=exc.column
            ) from None
        raise


def _read_inputs(args: argparse.Namespace) -> Inputs:
    metric = get_metric(args.metric)
    label_set = _label_set(args)
    truth = read_truth(
        args.truth,
        kind=truth_kind(metric),
        label_set=label_set,
        group_column=args.group_column,
    )
    if label_set is None and truth_kind(metric) == "label":
        label_set = truth.label_set()
    predictions = [
        read_predictions(
            path,
            item_ids=truth.ids,
            kind=metric.prediction_kind,
            label_set=label_set,
            probabilities=metric.scores_are_probabilities,
            min_ranks=metric.ranks,
        )
        for path in args.predictions
    ]
    try:
        labels = metric_labels(metric, label_set)
    except ValueError as exc:
        raise InputError(str(exc), file=args.truth) from None
    return Inputs(metric, truth, predictions, list(args.predictions), labels)
