"""The board's forest plot: each entry's difference to the leader with its interval, on one shared axis.

Pure drawing arithmetic on the numbers of the stored rows (already rounded to the board's precision); no
statistic is computed here. The differences and their intervals are the max-t simultaneous ones each row
carries (``diff``, ``diff_low``, ``diff_high`` of the flat ``rankings.board.SnapshotRow``; snapshots of an
older shape were upgraded once, by the migration ``rankings/0005_snapshot_rows_upgraded``), so a bar crosses the
zero line exactly when the row's verdict is "could be the best".

The axis is zoomed to the contenders, so a far-off entry (a majority-class baseline, say) does not squeeze
every real entry into the same sliver:

1. the core span holds zero and the intervals of the entries that could be the best; when no entry but the
   leader could be the best, the interval of the best-ranked decided entry (so a resolved gap is drawn);
2. it is widened to every other interval that ends within one more core width on either side;
3. it is at least ``MIN_STEPS`` steps of the board's last digit wide (a zero-width axis shows nothing);
4. anything outside is drawn as an arrow at the axis edge, labelled with its value.

The axis is computed from every row of the board, before sorting, searching and paging, so bars on
different pages of a paged board are on the same scale.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: The axis is at least this many steps of the board's last digit wide.
MIN_STEPS = 8
#: Margin around the drawn span, as a share of it.
PAD = 0.06

VERDICT_SHORT = {
    "best": "best",
    "could be the best": "tie",
    "worse than the best": "worse",
}


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


@dataclass
class ForestAxis:
    low: float
    high: float
    ticks: list[tuple[float, str]] = field(default_factory=list)  # (percent, label)
    zero: float = 50.0  # percent position of the zero line
    clipped: int = 0  # rows drawn as an arrow (their interval leaves the axis)

    def pos(self, x: float) -> float:
        span = self.high - self.low
        return 50.0 if span <= 0 else (x - self.low) / span * 100.0

    def clamp(self, x: float) -> float:
        return max(0.0, min(100.0, self.pos(x)))


@dataclass
class ForestMark:
    """One row's drawing, in percent of the axis width."""

    kind: str  # "reference" (the leader, at zero), "interval", or "off" (an arrow at an edge)
    label: str  # the text alternative
    zero: float
    low: float = 0.0
    high: float = 0.0
    point: float = 0.0
    open_low: bool = False  # the interval runs past the axis's left edge
    open_high: bool = False
    side: str = ""  # "left" or "right" for an arrow
    value_text: str = ""  # the difference printed next to an arrow
    rounded: bool = False  # both bounds round to the same value: drawn as +-half a step
    versus: str = ""  # the entry the difference is to, when it is not the leader (named on the plot)

    @property
    def width(self) -> float:
        return max(0.6, self.high - self.low)


def _step(decimals: int) -> float:
    return 10.0 ** (-decimals)


def signed(value: float, decimals: int) -> str:
    text = f"{value:+.{decimals}f}"
    if float(text) == 0:
        return f"{0:.{decimals}f}"
    return text.replace("-", "\u2212")


def _bounds(row: Mapping[str, Any]) -> tuple[float, float, float] | None:
    d = _num(row.get("diff"))
    if d is None:
        return None
    lo, hi = _num(row.get("diff_low")), _num(row.get("diff_high"))
    return d, d if lo is None else lo, d if hi is None else hi


def _versus(row: Mapping[str, Any]) -> Any:
    return row.get("compared_with")


def is_reference(row: Mapping[str, Any]) -> bool:
    """The leader's row: drawn as the reference at zero (its own difference is to the runner-up)."""
    if "is_leader" in row:
        return bool(row.get("is_leader"))
    return row.get("rank") == 1 and not _versus(row)


def forest_axis(rows: Sequence[Mapping[str, Any]], *, decimals: int) -> ForestAxis | None:
    """The shared axis of the difference bars of every row of a board (see the module's rule)."""
    others = [(r, b) for r in rows if not is_reference(r) and (b := _bounds(r)) is not None]
    if not others:
        return None
    contenders = [b for r, b in others if r.get("verdict") != "worse than the best"]
    decided = sorted(
        ((r.get("rank") or 0, b) for r, b in others if r.get("verdict") == "worse than the best"),
        key=lambda t: t[0],
    )
    core = [0.0]
    for _, lo, hi in contenders:
        core += [lo, hi]
    if not contenders and decided:
        core += [decided[0][1][1], decided[0][1][2]]
    lo, hi = min(core), max(core)
    width = hi - lo
    for _, b_lo, b_hi in (b for _, b in others):
        if b_lo >= lo - width and b_hi <= hi + width:
            lo, hi = min(lo, b_lo), max(hi, b_hi)
    minimum = MIN_STEPS * _step(decimals)
    if hi - lo < minimum:
        centre = (hi + lo) / 2
        lo, hi = centre - minimum / 2, centre + minimum / 2
        if lo > 0 or hi < 0:  # keep zero on the axis
            shift = lo if lo > 0 else hi
            lo, hi = lo - shift, hi - shift
    pad = (hi - lo) * PAD
    axis = ForestAxis(low=lo - pad, high=hi + pad)
    axis.zero = axis.pos(0.0)
    axis.ticks = [(axis.pos(v), signed(v, decimals)) for v in _ticks(lo, hi, decimals)]
    axis.clipped = sum(1 for _, (_, b_lo, b_hi) in others if b_lo < axis.low or b_hi > axis.high)
    return axis


def _ticks(lo: float, hi: float, decimals: int, count: int = 5) -> list[float]:
    """Round ticks inside [lo, hi] with zero among them, at steps no finer than the board's last digit."""
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    step = min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw), default=mag * 10)
    step = max(step, _step(decimals))
    first = math.ceil(lo / step - 1e-9) * step
    ticks: list[float] = []
    x = first
    while x <= hi + step * 1e-9 and len(ticks) < 12:
        ticks.append(round(x, 12) + 0.0)
        x += step
    return ticks


def forest_mark(
    row: Mapping[str, Any], axis: ForestAxis | None, *, decimals: int, confidence: str, leader: str = ""
) -> ForestMark | None:
    """How one row is drawn on ``axis``, with a sentence for screen readers.

    A row whose verdict is decided by another entry than the leader (an entry significantly better than it
    with a larger studentized gap) carries its difference to that entry, as the Difference column does:
    ``versus`` names it, and the plot prints the name, so the bar is never read as a gap to the leader."""
    if axis is None:
        return None
    name = str(row.get("name", ""))
    if is_reference(row):
        return ForestMark(
            kind="reference",
            label=f"{name}: the leader, the reference at zero",
            zero=axis.zero,
            point=axis.zero,
        )
    bounds = _bounds(row)
    if bounds is None:
        return None
    d, lo, hi = bounds
    versus = _versus(row) or "the leader"
    other = str(versus) if leader and versus not in (leader, "the leader") else ""
    rounded = signed(lo, decimals) == signed(hi, decimals)
    if rounded:  # both bounds round to one value: the interval lies within half a step of it
        half = _step(decimals) / 2
        lo, hi = d - half, d + half
        interval = f"within {signed(d, decimals)} \u00b1 {half:.{decimals + 1}f}"
    else:
        interval = f"{confidence} simultaneous interval {signed(lo, decimals)} to {signed(hi, decimals)}"
    label = f"{name}: difference to {versus} {signed(d, decimals)}, {interval}"
    if d < axis.low or d > axis.high:
        side = "left" if d < axis.low else "right"
        return ForestMark(
            kind="off",
            label=label + " (off the zoomed axis)",
            zero=axis.zero,
            side=side,
            value_text=signed(d, decimals),
            point=0.0 if side == "left" else 100.0,
            versus=other,
        )
    return ForestMark(
        kind="interval",
        label=label,
        zero=axis.zero,
        low=axis.clamp(lo),
        high=axis.clamp(hi),
        point=axis.clamp(d),
        open_low=lo < axis.low,
        open_high=hi > axis.high,
        rounded=rounded,
        versus=other,
    )


def interval_text(low: Any, high: Any, *, decimals: int, verdict: str | None) -> str:
    """The difference interval as printed in the table, at the board's precision.

    A bound that rounds to zero on the side the verdict decided is written ">0" / "<0"; an interval whose
    two bounds round to the same number is written "within x \u00b1 half a step" instead of the
    zero-width-looking "[0.0, 0.0]"."""
    lo, hi = _num(low), _num(high)
    if lo is None or hi is None:
        return "\u2013"
    lo_text, hi_text = signed(lo, decimals), signed(hi, decimals)
    if lo_text == hi_text:
        half = _step(decimals) / 2
        return f"within {lo_text} \u00b1 {half:.{decimals + 1}f}"
    zero = f"{0:.{decimals}f}"
    if verdict in ("best", "worse than the best"):  # decided: the unrounded interval excludes zero
        if lo_text == zero and hi > 0:
            lo_text = ">0"
        if hi_text == zero and lo < 0:
            hi_text = "<0"
    return f"[{lo_text}, {hi_text}]"
