"""Apply the leader adjustment's display rule (ADR 0008, item 6; issue 23) to snapshots built before it, once.

Snapshots rebuilt since the rule store the leader's adjusted numbers under it; older ones keep numbers that
can leave the metric's range (the demo's wine board: an accuracy's adjusted interval up to 1.001) or claim an
upward correction of the selected maximum (a bias-corrected 0.9342 above the shown 0.9333). This migration
rewrites the leader's row of those snapshots under the rule and their signature's ``selection_rule`` with the
rule's text. The rule is frozen here; the metric's range and direction come from ``stats.metrics``. A
snapshot already under the rule comes back equal and is not written.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from django.db import migrations

#: The signature's text of the rule (``rankings.board.SELECTION_RULE`` when this migration was written).
SELECTION_RULE = (
    "the board's leader (first by name among entries tied for first); direction by the metric; ties and "
    "discrete metrics: the selection event relaxed by half the metric's step; an unbounded end of the "
    "conditional interval is left empty (the hybrid interval is always bounded); boards of one entry have "
    "no selection to adjust for; every estimate and end is clipped to the metric's range, and no estimate is "
    "above the leader's value (below, for a lower-is-better metric): selecting the maximum biases it upward "
    "only, so an upward correction is the metric's discreteness, not information; the interval is on the "
    "normal scale, the board's value interval on its own method's, so their ends need not nest"
)

_ESTIMATES = ("adjusted_value", "conditional_value", "bias_corrected")
_ENDS = ("adjusted_low", "adjusted_high", "conditional_low", "conditional_high")


def leader_row_under_rule(
    row: Mapping[str, Any], *, higher_is_better: bool, value_range: tuple[float, float]
) -> dict[str, Any]:
    """The leader's row with its adjusted numbers clipped to the range and no estimate beyond its value."""
    out = dict(row)
    value = row.get("value")
    if not isinstance(value, int | float):
        return out
    low, high = value_range
    for key in (*_ESTIMATES, *_ENDS):
        number = row.get(key)
        if not isinstance(number, int | float) or isinstance(number, bool) or not math.isfinite(number):
            continue
        number = min(max(float(number), low), high)
        if key in _ESTIMATES:
            number = min(number, float(value)) if higher_is_better else max(number, float(value))
        out[key] = number
    return out


def apply_rule(apps: Any, schema_editor: Any) -> None:
    from stats.metrics import get_metric

    BoardSnapshot = apps.get_model("rankings", "BoardSnapshot")
    for snapshot in (
        BoardSnapshot.objects.select_related("task")
        .only("pk", "rows", "signature", "task__metric")
        .iterator(chunk_size=50)
    ):
        if not isinstance(snapshot.signature, dict) or "selection_method" not in snapshot.signature:
            continue
        try:
            metric = get_metric(snapshot.task.metric)
        except (KeyError, ValueError):
            continue
        rows = [
            leader_row_under_rule(r, higher_is_better=metric.higher_is_better, value_range=metric.value_range)
            if isinstance(r, dict) and r.get("is_leader") and "adjusted_value" in r
            else r
            for r in snapshot.rows
        ]
        signature = dict(snapshot.signature)
        if not str(signature.get("selection_rule", "")).startswith("not adjusted"):
            signature["selection_rule"] = SELECTION_RULE
        if rows != snapshot.rows or signature != snapshot.signature:
            BoardSnapshot.objects.filter(pk=snapshot.pk).update(rows=rows, signature=signature)


class Migration(migrations.Migration):
    dependencies = [("rankings", "0007_robustness_report")]

    operations = [migrations.RunPython(apply_rule, migrations.RunPython.noop, elidable=True)]
