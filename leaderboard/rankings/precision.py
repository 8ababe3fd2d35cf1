"""The board's precision: every number a participant sees is rounded to the task's decimals.

Why: each number computed from the hidden labels teaches whoever can submit something about them. At full
precision one accuracy on N items tells exactly how many items a file got right, so changing one item and
submitting again tells that item's label (docs/reliability.md, "Label extraction"). Rounded to a step that
covers several items, a value moves only when a change crosses a rounding boundary, and a submission
teaches its sender about one rounded value per task.

The rule, in one place for the API, the site, the CSV and JSON downloads:

- ``task.decimals`` when the organizer set it, else :func:`default_decimals` of the task's item count: the
  decimals at which one step of the last digit is 0.4 to 4 standard errors of a proportion near 0.5
  (``0.5 / sqrt(N)``), i.e. ``0.2 sqrt(N)`` to ``2 sqrt(N)`` items of an accuracy, never fewer than 1
  decimal. Digits below that are noise anyway on a board that shows intervals: N = 40 -> 1 decimal,
  N = 1,000 -> 2, N = 40,000 -> 3.
- values, intervals, differences and their intervals and standard errors: ``decimals``;
  p-values and rank probabilities: ``max(decimals, 2)`` decimals.
- the runs of an entry: their count and mean only; each run's value, their min, max and spread are not
  shown (each would be a further probe of the labels that no quota charges).
- the pairwise table: differences and p-values rounded; the exact counts of discordant items are not shown.

Stored snapshots keep full precision (the statistics, the cross-task summary and verdicts use it); only
what leaves for a reader is rounded.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, cast

from leaderboard.challenges.models import Task
from leaderboard.challenges.models import default_decimals as default_decimals  # beside the setting
from leaderboard.rankings.board import ROW_FIELDS, SnapshotRow

#: Row fields on the value's scale (``rankings.board.SnapshotRow``).
VALUE_FIELDS = (
    "value",
    "diff",
    "diff_se",
    "low",
    "high",
    "diff_low",
    "diff_high",
    # the spreads of an entry with runs (issue 11): a spread at more digits than the value would tell
    # whether two runs differ by one item, i.e. that item's label (docs/reliability.md, "Label extraction")
    "seed_sd",
    "test_set_sd",
    # the leader's selection-adjusted estimates (on the value's scale)
    "adjusted_value",
    "adjusted_low",
    "adjusted_high",
    "conditional_value",
    "conditional_low",
    "conditional_high",
    "bias_corrected",
    "resolvable_gap",
)
P_FIELDS = ("p_value", "p_adjusted")
#: Pairwise-table entries that a participant does not see: exact counts of items one entry got right.
PAIRWISE_HIDDEN = ("only_row_right", "only_column_right")


def task_decimals(task: Task) -> int:
    """The board's precision of ``task``: the organizer's setting, else :func:`default_decimals`."""
    return int(task.decimals) if task.decimals else default_decimals(task.n_items)


def round_to(value: Any, decimals: int) -> Any:
    """``value`` rounded to ``decimals``; ``None`` and non-numbers unchanged; non-finite numbers -> None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    number = float(value)
    if not math.isfinite(number):
        return None
    rounded = round(number, decimals)
    return 0.0 if rounded == 0 else rounded  # no "-0.0"


def p_decimals(decimals: int) -> int:
    return max(decimals, 2)


def public_row(row: Mapping[str, Any], decimals: int) -> SnapshotRow:
    """One stored board row as everyone reads it (API, site, downloads): its fields in the row's order
    (PostgreSQL's jsonb keeps no key order), rounded to the board's precision. The stored row is
    untouched. A run's own values are never in it."""
    out = cast(SnapshotRow, {k: row[k] for k in ROW_FIELDS if k in row})
    for key in VALUE_FIELDS:
        if key in out:
            out[key] = round_to(out[key], decimals)  # type: ignore[literal-required]
    for key in P_FIELDS:
        if key in out:
            out[key] = round_to(out[key], p_decimals(decimals))  # type: ignore[literal-required]
    return out


def public_rows(rows: Sequence[Mapping[str, Any]], decimals: int) -> list[SnapshotRow]:
    return [public_row(r, decimals) for r in rows]


def public_pairwise(pairwise: Mapping[str, Any], decimals: int) -> dict[str, Any]:
    """The stored pairwise table as a participant sees it."""
    out = {k: v for k, v in pairwise.items() if k not in PAIRWISE_HIDDEN}
    for key, places in (
        ("difference", decimals),
        ("low", decimals),
        ("high", decimals),
        ("mcnemar_p", p_decimals(decimals)),
    ):
        table = out.get(key)
        if isinstance(table, list):
            out[key] = [[round_to(v, places) for v in line] for line in table]
    return out


def public_distribution(distribution: Sequence[Sequence[float]], decimals: int) -> list[list[float]]:
    """Rank probabilities (shares of resamples) rounded like p-values."""
    places = p_decimals(decimals)
    return [[round_to(v, places) for v in line] for line in distribution]


def public_signature(signature: Mapping[str, Any], decimals: int) -> dict[str, Any]:
    """The board's signature as everyone reads it (as stored: flat, one key per meaning), with the
    precision of its numbers."""
    return {**signature, "decimals": decimals}


def public_summary(data: Mapping[str, Any], decimals_by_task: Mapping[str, int]) -> dict[str, Any]:
    """The cross-task summary as a participant sees it: each task's row of entry values (``scores``,
    one row per task in ``tasks`` order) rounded to that task's precision. The rest is rank-based."""
    out = dict(data)
    scores = out.get("scores")
    tasks = out.get("tasks") or []
    if isinstance(scores, list) and len(scores) == len(tasks):
        out["scores"] = [
            [round_to(v, decimals_by_task.get(slug, 1)) for v in line]
            for slug, line in zip(tasks, scores, strict=True)
        ]
    return out


def challenge_decimals(tasks: Sequence[Task]) -> dict[str, int]:
    return {t.slug: task_decimals(t) for t in tasks}


def public_shakeup(data: Mapping[str, Any], decimals: int) -> dict[str, Any]:
    """The shake-up report as a reader sees it: values and gaps at the board's precision, p-values like
    p-values. Correlations and ranks are rank-based and stay as they are."""
    out = dict(data)
    teams = []
    for team in data.get("teams", []):
        t = dict(team)
        for key in ("public_value", "private_value", "gap"):
            t[key] = round_to(t.get(key), decimals)
        for key in ("gap_p", "gap_p_holm"):
            t[key] = round_to(t.get(key), p_decimals(decimals))
        teams.append(t)
    out["teams"] = teams
    if "p_reference_le_observed" in out:
        out["p_reference_le_observed"] = round_to(out["p_reference_le_observed"], p_decimals(decimals))
    return out


def public_robustness(data: Mapping[str, Any], decimals: int) -> dict[str, Any]:
    """A board's rank robustness as a reader sees it: each entry's rank shares rounded like p-values, the
    aggregate-then-rank scheme's scores (the entries' values) at the board's precision. Ranks, mean ranks,
    counts of tests won and tau-b are rank-based and stay as they are."""
    out = dict(data)
    places = p_decimals(decimals)
    out["entries"] = [
        {**e, "frequencies": [round_to(f, places) for f in e.get("frequencies", [])]}
        for e in data.get("entries", [])
    ]
    resolution = data.get("resolution")
    if isinstance(resolution, Mapping):
        out["resolution"] = {
            k: {**v, "difference": round_to(v.get("difference"), decimals)} if isinstance(v, Mapping) else v
            for k, v in resolution.items()
        }
    schemes = data.get("schemes")
    if isinstance(schemes, Mapping):
        out["schemes"] = {
            **schemes,
            "schemes": [
                {**s, "scores": [round_to(v, decimals) for v in s.get("scores", [])]}
                if s.get("scheme") == "aggregate-then-rank"
                else dict(s)
                for s in schemes.get("schemes", [])
            ],
        }
    return out
