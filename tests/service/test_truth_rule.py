"""The service reads a truth file by the statistics package's one rule (``stats.io.truth_kind`` and
``stats.io.metric_labels``, also used by the CLI: tests/stats/test_truth_kind.py)."""

from __future__ import annotations

import pytest

from leaderboard.core.exceptions import ApplicationError
from leaderboard.scoring.engine import parse_truth


def test_the_service_refuses_the_same_truth_with_the_same_rule() -> None:
    data = ("id,label\n" + "".join(f"{i},{'abc'[i % 3]}\n" for i in range(30))).encode()
    with pytest.raises(
        ApplicationError, match="a binary metric needs exactly two labels, the label set has 3"
    ):
        parse_truth(data, name="t.csv", metric="roc_auc", labels=None, group_column=None, split_column=None)


def test_a_regression_task_keeps_no_label_set_and_a_classification_task_its_sorted_labels() -> None:
    values = ("id,label\n" + "".join(f"{i},{i % 5}.5\n" for i in range(30))).encode()
    assert (
        parse_truth(
            values, name="t.csv", metric="mae", labels=None, group_column=None, split_column=None
        ).label_set
        == []
    )
    labels = ("id,label\n" + "".join(f"{i},{'ba'[i % 2]}\n" for i in range(30))).encode()
    parsed = parse_truth(
        labels, name="t.csv", metric="accuracy", labels=None, group_column=None, split_column=None
    )
    assert parsed.label_set == ["a", "b"]
