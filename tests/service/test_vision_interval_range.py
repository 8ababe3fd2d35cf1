"""Issue 21: the detection per-class page showed AP [0.7030, 1.1980]. Every interval of an entry's
vision details (its other metrics and per-class values) lies in the metric's range."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from leaderboard.scoring.vision import _vision_details, _VisionResult


def test_per_class_basic_intervals_stay_in_the_metric_range() -> None:
    rng = np.random.default_rng(0)
    b = 2000
    # AP is biased upward: the replicates sit below the point, and the basic interval (reflected
    # around the point) would reach above 1
    class_values = np.array([0.95, 0.40])
    class_reps = np.column_stack([0.95 - np.abs(rng.normal(0, 0.12, b)), 0.40 + rng.normal(0, 0.05, b)])
    result = _VisionResult(
        values={"coco_ap": 0.97},
        replicates={"coco_ap": 0.97 - np.abs(rng.normal(0, 0.1, b))},
        class_names=["cat", "dog"],
        class_values=class_values,
        class_replicates=class_reps,
        recall=None,
        precision=None,
    )
    task = SimpleNamespace(metric="coco_ap", kind="detection", title="t")
    challenge = SimpleNamespace(confidence=0.95)
    details = _vision_details(task=task, challenge=challenge, result=result, method="basic")  # type: ignore[arg-type]
    rows = details["metrics"] + details["classes"]
    for row in rows:
        assert 0.0 <= row["low"] <= row["high"] <= 1.0, row
    cat = next(c for c in details["classes"] if c["name"] == "cat")
    assert cat["high"] == 1.0 and cat["low"] > 0.9  # clipped at the range's edge, not 1.2
