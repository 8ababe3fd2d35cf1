"""The one rule for what truth a metric reads and the label set it takes (``stats.io.truth_kind``,
``stats.io.metric_labels``), shared by the CLI (``stats.cli.inputs``) and the service's engine."""

from __future__ import annotations

import argparse

import pytest

from stats.cli.inputs import read_inputs
from stats.io import InputError, metric_labels, truth_kind
from stats.metrics import METRICS, get_metric


@pytest.mark.parametrize("name", sorted(n for n, m in METRICS.items() if m.task_kind == "items"))
def test_regression_metrics_read_numbers_and_every_other_metric_labels(name: str) -> None:
    metric = get_metric(name)
    assert truth_kind(metric) == ("value" if metric.prediction_kind == "value" else "label")
    labels = metric_labels(metric, ["b", "a"])
    if metric.prediction_kind == "value":
        assert labels is None  # a regression metric takes no label set
    else:
        assert labels == ["b", "a"]  # the order is kept: the positive class is the caller's rule


def test_a_binary_metric_needs_exactly_two_labels() -> None:
    with pytest.raises(ValueError, match="a binary metric needs exactly two labels, the label set has 3"):
        metric_labels(get_metric("roc_auc"), ["a", "b", "c"])
    assert metric_labels(get_metric("accuracy"), ["a", "b", "c"]) == ["a", "b", "c"]
    assert (
        metric_labels(get_metric("roc_auc"), None) is None
        and metric_labels(get_metric("roc_auc"), []) is None
    )


def test_the_cli_refuses_a_three_label_truth_for_a_binary_metric_with_the_shared_message(tmp_path) -> None:  # type: ignore[no-untyped-def]
    truth = tmp_path / "truth.csv"
    truth.write_text("id,label\n" + "".join(f"{i},{'abc'[i % 3]}\n" for i in range(30)))
    preds = tmp_path / "p.csv"
    preds.write_text("id,score\n" + "".join(f"{i},0.5\n" for i in range(30)))
    args = argparse.Namespace(
        metric="roc_auc", truth=str(truth), predictions=[str(preds)], group_column=None, labels=None
    )
    with pytest.raises(InputError) as info:
        read_inputs(args)
    assert info.value.file == str(truth)
    assert info.value.message == "a binary metric needs exactly two labels, the label set has 3"
