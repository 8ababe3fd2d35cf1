"""The forest plot's axis and marks (leaderboard/web/forest.py): pure arithmetic on stored rows."""

from __future__ import annotations

from typing import Any

from leaderboard.rankings.board import snapshot_row
from leaderboard.web import boards, forest


def _row(
    name: str, rank: int, verdict: str, diff: float, low: float, high: float, **kw: Any
) -> dict[str, Any]:
    return {
        "name": name,
        "rank": rank,
        "verdict": verdict,
        "is_leader": False,
        "compared_with": "lead",
        "diff": diff,
        "diff_low": low,
        "diff_high": high,
        "value": 0.9 + diff,
        "submission_id": rank,
        **kw,
    }


ROWS = [
    {"name": "lead", "rank": 1, "verdict": "could be the best", "is_leader": True, "diff": 0.01, "diff_low": -0.01,
     "diff_high": 0.03, "value": 0.9, "submission_id": 1, "compared_with": "two"},
    _row("two", 2, "could be the best", -0.01, -0.03, 0.01),
    _row("three", 3, "worse than the best", -0.03, -0.05, -0.01),
    _row("four", 4, "worse than the best", -0.08, -0.10, -0.06),
    _row("baseline", 5, "worse than the best", -0.80, -0.85, -0.75),
]  # fmt: skip


def test_axis_is_zoomed_to_the_contenders_and_the_far_baseline_is_an_arrow() -> None:
    axis = forest.forest_axis(ROWS, decimals=2)
    assert axis is not None
    # core: zero and the contender [-0.03, 0.01]; widened to "three" (it ends within one more core
    # width), not to "four" nor the baseline
    assert -0.07 < axis.low < -0.05 and 0.01 < axis.high < 0.03  # (8 steps of 0.01 at least)
    assert 0 < axis.zero < 100
    marks = {r["name"]: forest.forest_mark(r, axis, decimals=2, confidence="95%") for r in ROWS}
    assert marks["lead"].kind == "reference"  # type: ignore[union-attr]
    assert marks["two"].kind == "interval" and marks["two"].low < axis.zero < marks["two"].high  # type: ignore[union-attr]
    assert marks["three"].high < axis.zero  # type: ignore[union-attr]  # decided: left of zero
    base = marks["baseline"]
    assert base is not None and base.kind == "off" and base.side == "left" and base.value_text == "\u22120.80"
    assert "off the zoomed axis" in base.label and "baseline: difference to lead \u22120.80" in base.label
    assert marks["four"].kind == "off"  # type: ignore[union-attr]
    assert axis.clipped == 2
    assert any(label == "0.00" for _, label in axis.ticks)


def test_a_tiny_spread_still_gets_a_minimum_axis_width_with_zero_on_it() -> None:
    rows = [ROWS[0], _row("two", 2, "could be the best", 0.0, 0.0, 0.0)]
    axis = forest.forest_axis(rows, decimals=2)
    assert axis is not None and axis.high - axis.low >= forest.MIN_STEPS * 0.01
    assert axis.low <= 0 <= axis.high


def test_collapsed_bounds_are_not_printed_as_a_zero_width_interval() -> None:
    assert forest.interval_text(0.0, 0.0, decimals=1, verdict="could be the best") == "within 0.0 \u00b1 0.05"
    assert forest.interval_text(0.0, 0.3, decimals=1, verdict="best") == "[>0, +0.3]"
    assert forest.interval_text(-0.2, 0.0, decimals=1, verdict="worse than the best") == "[\u22120.2, <0]"
    assert forest.interval_text(-0.2, 0.1, decimals=1, verdict="could be the best") == "[\u22120.2, +0.1]"
    mark = forest.forest_mark(
        _row("x", 2, "could be the best", 0.0, 0.0, 0.0), forest.forest_axis(ROWS, decimals=1), decimals=1,
        confidence="95%",
    )  # fmt: skip
    assert (
        mark is not None and mark.rounded and mark.high > mark.low and "within 0.0 \u00b1 0.05" in mark.label
    )


def test_every_page_of_a_paged_board_uses_the_same_forest_axis(monkeypatch: Any) -> None:
    monkeypatch.setattr(boards, "ROWS_PER_PAGE", 2)
    signature = {"decimals": 2, "alpha": 0.05, "confidence": 0.95}
    pages = [boards.board_view(rows=ROWS, signature=signature, page=p) for p in (1, 2, 3)]
    axes = {(v.forest_axis.low, v.forest_axis.high) for v in pages if v.forest_axis}  # type: ignore[union-attr]
    assert len(axes) == 1 and [len(v.rows) for v in pages] == [2, 2, 1]
    assert pages[2].rows[0].forest.kind == "off"  # type: ignore[union-attr]
    assert [r.verdict_short for r in pages[0].rows] == ["leader", "tie"]
    assert pages[1].rows[0].diff_interval_text == "[\u22120.05, \u22120.01]"


def test_when_only_the_leader_could_be_the_best_the_nearest_decided_gap_is_on_the_axis() -> None:
    rows = [ROWS[0], *(_row(r["name"], r["rank"], "worse than the best", r["diff"] - 0.05, r["diff_low"] - 0.05,
            r["diff_high"] - 0.05) for r in ROWS[1:])]  # fmt: skip
    axis = forest.forest_axis(rows, decimals=2)
    assert axis is not None and axis.low < -0.08 and axis.high >= 0
    mark = forest.forest_mark(rows[1], axis, decimals=2, confidence="95%")
    assert mark is not None and mark.kind == "interval" and mark.high < axis.zero


def test_a_difference_to_another_entry_than_the_leader_is_named_on_the_plot() -> None:
    row = _row("five", 5, "worse than the best", -0.04, -0.06, -0.02, compared_with="two")
    axis = forest.forest_axis([*ROWS, row], decimals=2)
    mark = forest.forest_mark(row, axis, decimals=2, confidence="95%", leader="lead")
    assert mark is not None and mark.versus == "two" and "difference to two" in mark.label
    plain = forest.forest_mark(ROWS[2], axis, decimals=2, confidence="95%", leader="lead")
    assert plain is not None and plain.versus == ""


def test_the_plot_reads_stats_board_row_shape_too() -> None:
    stored = [
        {"name": r["name"], "rank": r["rank"], "verdict": r["verdict"], "is_leader": r["is_leader"],
         "difference": r["diff"], "difference_interval": [r["diff_low"], r["diff_high"]],
         "compared_with": r["compared_with"]}
        for r in ROWS
    ]  # fmt: skip
    stored = [snapshot_row(r) for r in stored]  # stats.board's shape flattened, as build_board stores it
    flat, raw = forest.forest_axis(ROWS, decimals=2), forest.forest_axis(stored, decimals=2)
    assert flat is not None and raw is not None and (flat.low, flat.high) == (raw.low, raw.high)
    a = forest.forest_mark(ROWS[1], flat, decimals=2, confidence="95%")
    b = forest.forest_mark(stored[1], raw, decimals=2, confidence="95%")
    assert a == b
