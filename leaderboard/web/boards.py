"""Presentation of a stored board snapshot: sorting, a shared axis for the interval bars, the legend.

Pure drawing arithmetic on the numbers the snapshot holds (positions on an axis, percentages of a stored
rank distribution); no statistic is computed at request time.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from leaderboard.rankings.board import SnapshotRow
from leaderboard.scoring.metric_names import display_name
from leaderboard.web import forest

# Sortable columns: ?sort=<key> ascending, ?sort=-<key> descending. Values are row keys.
SORT_KEYS: dict[str, str] = {
    "rank": "rank",
    "name": "name",
    "team": "team",
    "value": "value",
    "diff": "diff",
    "p": "p_value",
    "padj": "p_adjusted",
    "runs": "n_runs",
}
DEFAULT_SORT = "rank"

#: Labels of the signature's keys (``rankings.board.BoardSignature``), in the order they are listed.
SIGNATURE_LABELS: list[tuple[str, str]] = [
    ("metric", "Metric"),
    ("interval_method", "Interval method"),
    ("confidence", "Confidence level"),
    ("resamples", "Bootstrap resamples"),
    ("seed", "Seed"),
    ("test", "Test against the leader"),
    ("correction", "Multiplicity correction"),
    ("best_set_method", "Best set"),
    ("split", "Board"),
    ("engine_version", "Engine version"),
    ("created", "Computed at"),
    ("higher_is_better", "Higher is better"),
    ("alpha", "Test level (alpha)"),
    ("power", "Power for items needed"),
    ("signature_text", "Signature"),
    ("positive", "Positive class"),
    ("stratify", "Stratified resampling"),
    ("undefined_resamples", "Resamples dropped (metric undefined)"),
    ("selection_method", "Leader adjusted for selection (method)"),
    ("selection_beta", "Selection adjustment: beta of the hybrid"),
    ("selection_cutoff", "Selection adjustment: cutoff (bootstrap studentised maximum)"),
    ("selection_event", "Selection event"),
    ("selection_resolution", "Selection adjustment: the metric's step"),
    ("selection_bias", "Selection adjustment: bias correction"),
    ("selection_rule", "Selection adjustment: rules"),
]
_HIDDEN_SIGNATURE_KEYS = {"inputs", "pairwise", "warnings"}
TEST_NAMES = {
    "mcnemar": "McNemar's exact test",
    "randomization": "paired approximate randomization test",
    "bootstrap": "paired bootstrap test",
    "cluster-sign-flip-exact": "exact cluster sign-flip test (all flips of the groups)",
    "cluster-sign-flip": "cluster sign-flip test (random flips of the groups)",
}
CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "no"}


def test_name(test: Any) -> str:
    """A readable name of the stored test: ``mcnemar``, ``randomization`` or ``bootstrap-<rule>``."""
    text = str(test or "")
    if text in TEST_NAMES:
        return TEST_NAMES[text]
    if text.startswith("bootstrap"):
        rule = text.partition("-")[2]
        return "paired bootstrap test" + (f" ({rule})" if rule else "")
    return text or "paired test"


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


@dataclass
class Bar:
    """An interval bar on the table's shared axis, in percent of the axis width."""

    low: float
    high: float
    point: float
    label: str

    @property
    def width(self) -> float:
        return max(0.4, self.high - self.low)  # a zero-width interval stays visible as a sliver


@dataclass
class RowView:
    """One snapshot row as the site draws it: the stored row (rounded) and what is drawn of it."""

    data: Mapping[str, Any]
    bar: Bar | None
    diff_bar: Bar | None
    is_leader: bool
    decimals: int = 4  # the board's precision (the numbers are rounded to it already)
    forest: forest.ForestMark | None = None  # the difference to the leader on the board's forest axis

    @property
    def diff_interval_text(self) -> str:
        """The difference interval as printed, at the board's precision (``forest.interval_text``)."""
        return forest.interval_text(
            self.data.get("diff_low"),
            self.data.get("diff_high"),
            decimals=self.decimals,
            verdict=self.verdict,
        )

    @property
    def secondary_cells(self) -> list[dict[str, str]]:
        """The row's secondary metrics (issue 20) as drawn, in the board's order of them: the value, and
        the paired test against the leader adjusted across the secondary metrics (none for the leader)."""
        p_places = max(self.decimals, 2)
        out = []
        for figures in self.data.get("secondary") or []:
            p, adjusted = figures.get("p_value"), figures.get("p_adjusted")
            out.append(
                {
                    "metric": str(figures.get("metric")),
                    "value": fmt(figures.get("value"), self.decimals),
                    "p": "" if p is None else fmt(p, p_places),
                    "p_adjusted": "" if adjusted is None else fmt(adjusted, p_places),
                }
            )
        return out

    @property
    def verdict_short(self) -> str:
        """The verdict in one word for the table ("best", "tie", "worse"; "leader" for an unresolved
        leader); the long explanation is in the row's tooltip and in the legend."""
        if self.verdict == "could be the best" and self.is_leader:
            return "leader"
        return forest.VERDICT_SHORT.get(str(self.verdict), "")

    @property
    def diff_low_shown(self) -> str:
        """The difference interval's lower bound as drawn. At the board's precision a bound just above zero
        rounds to 0; when the verdict decided the difference is positive (this row is "the best"), it is
        drawn ">0", so the interval shown and the verdict never seem to disagree."""
        return _bound_text(self.data.get("diff_low"), self.decimals, ">0" if self.verdict == "best" else "")

    @property
    def diff_high_shown(self) -> str:
        """The upper bound as drawn: "<0" where the verdict decided the difference is negative."""
        decided = self.verdict == "worse than the best"
        return _bound_text(self.data.get("diff_high"), self.decimals, "<0" if decided else "")

    @property
    def verdict(self) -> str | None:
        """The board's answer for this row: ``best``, ``could be the best`` or ``worse than the best``.

        It comes from the max-t comparisons with the best (``stats.board``), which allow for the leader
        having been picked on this test set (snapshots written before verdicts existed were given theirs
        once, by the migration ``rankings/0005_snapshot_rows_upgraded``)."""
        stored = self.data.get("verdict")
        return None if stored is None else str(stored)

    def __getattr__(self, name: str) -> Any:  # templates read row.value, row.rank_low...
        try:
            return self.data[name]
        except KeyError:
            raise AttributeError(name) from None


@dataclass
class Axis:
    low: float
    high: float
    ticks: list[tuple[float, float]] = field(default_factory=list)  # (percent, value)

    def pos(self, x: float) -> float:
        span = self.high - self.low
        return 50.0 if span <= 0 else max(0.0, min(100.0, (x - self.low) / span * 100.0))


@dataclass
class SortLink:
    key: str
    query: str  # the ?sort= value a click on the header sets
    aria: str  # aria-sort of the header: ascending, descending or none


@dataclass
class BoardView:
    rows: list[RowView]
    total: int  # rows on the whole board
    page: int | None  # the page drawn (None: every row)
    pages: int
    first_row: int  # 1-based positions of the drawn rows in the sorted board
    last_row: int
    axis: Axis | None
    diff_axis: Axis | None
    sort: str
    sort_links: dict[str, SortLink]
    signature: list[tuple[str, str]]
    signature_raw: Mapping[str, Any]
    confidence_percent: str
    test: str
    correction: str
    best_set_method: str
    alpha: str
    any_runs: bool
    any_items_needed: bool
    any_baseline: bool
    # The leader and the next entry by rank, whatever the sort and page: the "compare" links' anchors.
    leader_id: Any = None
    runner_up_id: Any = None
    board_total: int = 0  # rows on the whole board, before a search filtered them
    headline: str = ""  # the board's answer in one sentence (who leads, and who cannot be told apart)
    #: Decimals of the numbers drawn: the board's precision when its signature states one.
    decimals: int = 4
    #: The forest plot's axis (differences to the leader, zoomed to the contenders; ``web.forest``).
    forest_axis: forest.ForestAxis | None = None
    verdict_level: str = ""  # "95%": the level of the simultaneous difference intervals
    leader_name: str = ""  # the entry the forest plot's differences are to (unless a row names another)
    leaders_tied: int = 0  # other entries sharing rank 1 with the leader (the leader is the first by name)
    adjusted: str = ""  # the leader's selection-adjusted estimate and interval, in one sentence
    resolution: str = ""  # the smallest difference the test set resolves, before and after entries
    secondary: list[str] = field(default_factory=list)  # the task's secondary metrics (issue 20)
    secondary_label: str = ""  # how their comparisons were adjusted, and the primary named before when


def _axis(values: Sequence[float | None], *, include_zero: bool = False) -> Axis | None:
    finite = [v for v in values if v is not None]
    if include_zero:
        finite.append(0.0)
    if not finite:
        return None
    lo, hi = min(finite), max(finite)
    if hi == lo:
        lo, hi = lo - 0.5 * (abs(lo) or 1.0) * 0.1, hi + 0.5 * (abs(hi) or 1.0) * 0.1
    pad = (hi - lo) * 0.04
    axis = Axis(lo - pad, hi + pad)
    axis.ticks = [(axis.pos(v), v) for v in _nice_ticks(lo, hi)]
    return axis


def _nice_ticks(lo: float, hi: float, count: int = 4) -> list[float]:
    span = hi - lo
    raw = span / max(1, count)
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    step = min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw), default=mag * 10)
    first = math.ceil(lo / step) * step
    ticks: list[float] = []
    x = first
    while x <= hi + step * 1e-9 and len(ticks) < 12:
        ticks.append(round(x, 12))
        x += step
    return ticks


def _bar(axis: Axis | None, low: Any, high: Any, point: Any, label: str) -> Bar | None:
    lo, hi, pt = _num(low), _num(high), _num(point)
    if axis is None or pt is None:
        return None
    lo = pt if lo is None else lo
    hi = pt if hi is None else hi
    return Bar(low=axis.pos(lo), high=axis.pos(hi), point=axis.pos(pt), label=label)


def fmt(value: Any, digits: int = 4) -> str:
    """A number for a table cell: fixed decimals, or 3 significant digits when very large or small."""
    v = _num(value)
    if v is None:
        return "\u2013"
    if v != 0 and (abs(v) >= 1e5 or abs(v) < 10 ** -(digits - 1)):
        return f"{v:.3g}"
    return f"{v:.{digits}f}"


def fmt_p(value: Any) -> str:
    v = _num(value)
    if v is None:
        return "\u2013"
    if v < 0.001:
        return "<0.001"
    return f"{v:.3f}"


def _sort_rows(rows: list[Mapping[str, Any]], sort: str) -> tuple[list[Mapping[str, Any]], str]:
    descending = sort.startswith("-")
    key = sort.lstrip("-")
    if key not in SORT_KEYS:
        return rows, DEFAULT_SORT
    field_name = SORT_KEYS[key]

    def sort_key(row: Mapping[str, Any]) -> tuple[int, Any]:
        value = row.get(field_name)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return (1, 0)  # missing values last, whatever the direction
        if isinstance(value, str):
            return (0, value.casefold())
        return (0, value)

    present = [r for r in rows if sort_key(r)[0] == 0]
    missing = [r for r in rows if sort_key(r)[0] == 1]
    present.sort(key=sort_key, reverse=descending)
    # Ties keep the board's order (rank), which sort() preserves as it is stable.
    return present + missing, sort


def _sort_links(current: str) -> dict[str, SortLink]:
    links = {}
    for key in SORT_KEYS:
        if current == key:
            links[key] = SortLink(key, f"-{key}", "ascending")
        elif current == f"-{key}":
            links[key] = SortLink(key, key, "descending")
        else:
            links[key] = SortLink(key, key, "none")
    return links


def signature_items(signature: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The flat signature (``rankings.precision.public_signature``) as (label, value) pairs to list."""
    items: list[tuple[str, str]] = []
    labels = dict(SIGNATURE_LABELS)
    for key, label in SIGNATURE_LABELS:
        if key in signature:
            items.append((label, _signature_value(key, signature[key])))
    for key, value in signature.items():
        if key in _HIDDEN_SIGNATURE_KEYS or key in labels:
            continue
        if isinstance(value, Mapping):
            for k, v in value.items():
                items.append((f"{key.replace('_', ' ').capitalize()}: {k}", readable_value(v)))
        else:
            items.append((key.replace("_", " ").capitalize(), readable_value(value)))
    return items


def _signature_value(key: str, value: Any) -> str:
    if key == "confidence" and _num(value) is not None:
        return f"{float(value):g} ({float(value) * 100:g}%)"
    if key == "test":
        return f"{test_name(value)} ({value})"
    if key == "metric":
        return f"{display_name(str(value))} ({value})"
    return readable_value(value)


_ISO_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(\.\d+)?(\+00:00|Z)?$")


def readable_value(value: Any) -> str:
    """A signature value as a reader reads it (issue 22, P2): flags as yes/no, not Python's True/False
    (stored as booleans or as their text); a timestamp to the second in UTC, not ISO with microseconds."""
    if value is True or value == "True":
        return "yes"
    if value is False or value == "False":
        return "no"
    text = str(value)
    match = _ISO_TIME.match(text)
    if match:
        return f"{match.group(1)} {match.group(2)}{' UTC' if match.group(4) else ''}"
    return text


def pair_view(*, pairwise: Mapping[str, Any], a: int, b: int) -> dict[str, Any] | None:
    """Entry ``a`` against entry ``b`` (positions in the snapshot's rows) from the stored pairwise table."""

    def cell(key: str) -> Any:
        table = pairwise.get(key)
        try:
            return table[a][b] if table is not None else None
        except (IndexError, TypeError):
            return None

    if not pairwise or cell("difference") is None:
        return None
    mcnemar = cell("mcnemar_p")
    method = str(pairwise.get("method", ""))
    level = _num(pairwise.get("level"))
    if method == "max-t":
        method = "max-t simultaneous interval of every pair (the board's verdict)" + (
            f", level {level * 100:g}%" if level is not None else ""
        )
    significant = cell("significant")
    low, high = _num(cell("low")), _num(cell("high"))
    if significant is None and low is not None and high is not None:
        significant = low > 0 or high < 0  # a snapshot written before the verdicts
    return {
        "diff": cell("difference"),
        "diff_low": cell("low"),
        "diff_high": cell("high"),
        "method": method,
        "significant": bool(significant),
        "n10": cell("only_row_right"),
        "n01": cell("only_column_right"),
        "p_value": mcnemar,
        "test": "McNemar's exact test on the discordant items, this pair alone, unadjusted"
        if mcnemar is not None
        else "",
    }


def cd_list(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The critical-difference diagram as a list, its phone form (issue 22, A6): each entry with its
    average rank, where it sits on the diagram's axis (percent from the best rank 1), and the entries it
    is not told apart from (its groups, the diagram's bars)."""
    entries = data.get("entries") or []
    k = len(entries)
    cliques = [set(c) for c in data.get("cliques") or []]
    out = []
    for e in entries:
        name, rank = str(e.get("name", "")), _num(e.get("average_rank"))
        ties = sorted({n for c in cliques if name in c for n in c} - {name})
        position = (rank - 1) / (k - 1) * 100 if rank is not None and k > 1 else 0.0
        out.append({"name": name, "average_rank": rank, "position": position, "ties": ties})
    return out


def alone_real(pair: Mapping[str, Any], alpha: Any) -> bool | None:
    """Would the single pair test, on its own, call the gap real at the board's alpha? ``None`` without a
    p-value or an alpha (the page then says nothing about it)."""
    p, level = _num(pair.get("p_value")), _num(alpha)
    if p is None or level is None:
        return None
    return p < level


#: Rows per page of a drawn board; ``page=None`` draws every row.
ROWS_PER_PAGE = 100


def board_view(
    *,
    rows: Sequence[SnapshotRow],
    signature: Mapping[str, Any],
    sort: str = "",
    page: int | None = None,
    query: str = "",
    resolution: Mapping[str, Any] | None = None,
) -> BoardView:
    """Everything a template needs to draw one stored board (one page of it when ``page`` is given).

    The axes of the interval bars span every row, so bars on different pages are on the same scale.
    ``query`` keeps the rows whose entry or team name contains it (case-insensitive); ranks, intervals and
    axes stay those of the whole board.
    """
    rows = list(rows)
    scales = _scales(rows, signature)
    leader_ids, by_rank = _leaders(rows)
    ordered, sort = _sort_rows(list(rows), sort or DEFAULT_SORT)
    ordered = _matching(ordered, query)
    total = len(ordered)
    pages = max(1, -(-total // ROWS_PER_PAGE))
    if page is not None:
        page = min(max(page, 1), pages)
        ordered = ordered[(page - 1) * ROWS_PER_PAGE : page * ROWS_PER_PAGE]
    out = [_view_row(r, scales, leader_ids) for r in ordered]
    first = 0 if page is None else (page - 1) * ROWS_PER_PAGE
    return BoardView(
        rows=out,
        total=total,
        page=page,
        pages=pages,
        first_row=first + 1 if out else 0,
        last_row=first + len(out),
        axis=scales.axis,
        diff_axis=scales.diff_axis,
        sort=sort,
        sort_links=_sort_links(sort),
        signature=signature_items(signature),
        signature_raw=signature,
        confidence_percent=scales.conf_pct,
        **_method_words(signature),
        any_runs=any((_num(r.get("n_runs")) or 1) > 1 for r in rows),
        any_items_needed=any(r.get("items_needed") is not None for r in rows),
        any_baseline=any(r.get("is_baseline") for r in rows),
        board_total=len(rows),
        headline=board_headline(rows, alpha=signature.get("alpha")),
        leader_id=by_rank[0] if by_rank else None,
        runner_up_id=by_rank[1] if len(by_rank) > 1 else None,
        decimals=scales.digits,
        forest_axis=scales.forest_axis,
        verdict_level=scales.level,
        leader_name=scales.leader_name,
        leaders_tied=max(0, sum(1 for r in rows if r.get("rank") == 1) - 1),
        adjusted=leader_adjustment_text(rows, signature, scales.conf_pct, scales.digits),
        resolution=resolution_text(resolution, scales.digits),
        secondary=list((signature.get("secondary_metrics") or {}).get("metrics") or []),
        secondary_label=str((signature.get("secondary_metrics") or {}).get("label") or ""),
    )


@dataclass(frozen=True)
class _Scales:
    """What every row of one board is drawn against (the whole board's, whatever the page)."""

    conf_pct: str
    axis: Axis | None
    diff_axis: Axis | None
    digits: int
    level: str
    forest_axis: forest.ForestAxis | None
    leader_name: str


def _scales(rows: list[SnapshotRow], signature: Mapping[str, Any]) -> _Scales:
    confidence = _num(signature.get("confidence"))
    conf_pct = f"{confidence * 100:g}%" if confidence is not None else "confidence"
    alpha_value = _num(signature.get("alpha"))
    digits = int(signature.get("decimals") or 4)
    return _Scales(
        conf_pct=conf_pct,
        axis=_axis([_num(r.get(k)) for r in rows for k in ("value", "low", "high")]),
        diff_axis=_axis(
            [_num(r.get(k)) for r in rows for k in ("diff", "diff_low", "diff_high")], include_zero=True
        ),
        digits=digits,
        level=f"{(1 - alpha_value) * 100:g}%" if alpha_value is not None else conf_pct,
        forest_axis=forest.forest_axis(rows, decimals=digits),
        leader_name=next((str(r.get("name", "")) for r in rows if forest.is_reference(r)), ""),
    )


def _leaders(rows: list[SnapshotRow]) -> tuple[set[Any], list[Any]]:
    """The leaders' submission ids, and every id with the leaders first (for the headline's pair)."""
    if any("is_leader" in r for r in rows):
        leader_ids = {r.get("submission_id") for r in rows if r.get("is_leader")}
    else:
        leader_ids = {r.get("submission_id") for r in rows if r.get("rank") == 1}
    by_rank = [r.get("submission_id") for r in rows if r.get("submission_id") in leader_ids]
    by_rank += [r.get("submission_id") for r in rows if r.get("submission_id") not in leader_ids]
    return leader_ids, by_rank


def _matching(rows: list[Mapping[str, Any]], query: str) -> list[Mapping[str, Any]]:
    if not query:
        return rows
    needle = query.casefold()
    return [r for r in rows if needle in f"{r.get('name', '')}\n{r.get('team', '')}".casefold()]


def _view_row(r: Mapping[str, Any], scales: _Scales, leader_ids: set[Any]) -> RowView:
    name, digits, conf_pct = str(r.get("name", "")), scales.digits, scales.conf_pct
    bar = _bar(
        scales.axis,
        r.get("low"),
        r.get("high"),
        r.get("value"),
        f"{name}: {fmt(r.get('value'), digits)}, {conf_pct} interval {fmt(r.get('low'), digits)} to "
        f"{fmt(r.get('high'), digits)}",
    )
    diff_bar = _bar(
        scales.diff_axis,
        r.get("diff_low"),
        r.get("diff_high"),
        r.get("diff"),
        f"{name}: difference to the leader {fmt(r.get('diff'), digits)}, {conf_pct} interval "
        f"{fmt(r.get('diff_low'), digits)} to {fmt(r.get('diff_high'), digits)}",
    )
    mark = forest.forest_mark(
        r, scales.forest_axis, decimals=digits, confidence=scales.level, leader=scales.leader_name
    )
    return RowView(
        data=r,
        bar=bar,
        diff_bar=diff_bar,
        is_leader=r.get("submission_id") in leader_ids,
        decimals=digits,
        forest=mark,
    )


def _method_words(signature: Mapping[str, Any]) -> dict[str, str]:
    """The pair test, the correction, the best-set method and alpha, in words for the page."""
    confidence = _num(signature.get("confidence"))
    alpha = signature.get("alpha")
    return {
        "test": test_name(signature.get("test")),
        "correction": CORRECTION_NAMES.get(
            str(signature.get("correction", "")), str(signature.get("correction") or "no")
        ),
        "best_set_method": str(signature.get("best_set_method") or ""),
        "alpha": fmt(alpha if alpha is not None else (1 - confidence if confidence else None), 3),
    }


# --- rank distribution ---------------------------------------------------------------------------------
@dataclass
class RankCell:
    rank: int
    share: float  # 0..1 of the resamples
    percent: str
    x: int
    y: int
    size: int

    @property
    def text_x(self) -> int:
        return self.x + self.size // 2

    @property
    def text_y(self) -> int:
        return self.y + self.size // 2 + 4

    @property
    def dark(self) -> bool:
        return self.share > 0.5


@dataclass
class RankPlotRow:
    name: str
    is_baseline: bool
    cells: list[RankCell]
    text_y: int
    modal_rank: int
    rank_low: Any = None
    rank_high: Any = None
    rank_sim_low: Any = None  # the board's simultaneous rank set, beside the marginal interval
    rank_sim_high: Any = None
    verdict: str = ""  # the board's verdict in one word ("leader", "tie", "worse", "best")
    above: str = ""  # share of resamples at a better rank than the drawn window ("" when none)
    below: str = ""  # ... at a worse rank


@dataclass
class RankPlot:
    rows: list[RankPlotRow]
    ranks: list[int]
    columns: list[tuple[int, int]]  # (rank, x of the column's centre)
    label_x: int
    width: int
    height: int
    cell: int
    label_width: int
    entries: int = 0
    page: int = 1
    pages: int = 1
    first_row: int = 1
    last_row: int = 1
    any_above: bool = False
    any_below: bool = False

    @property
    def previous_page(self) -> int | None:
        return self.page - 1 if self.page > 1 else None

    @property
    def next_page(self) -> int | None:
        return self.page + 1 if self.page < self.pages else None


#: The rank distribution page draws this many entries a page, and of the ranks only those the page's
#: entries hold on the board plus ``RANK_WINDOW`` on either side (the shares of the others are summed into
#: "better" and "worse"): at most 25 x 35 cells, whatever the board's size (the K x K distribution is
#: drawn whole only as the cached image ``ranks.png``).
RANK_PAGE_ROWS = 25
RANK_WINDOW = 5


def rank_pages(entries: int) -> int:
    return max(1, -(-entries // RANK_PAGE_ROWS))


def rank_plot(
    *, rows: Sequence[Mapping[str, Any]], distribution: Any, page: int = 1, decimals: int = 2
) -> RankPlot | None:
    """A heat-map of one page of the stored K x K rank distribution (row i = the snapshot's i-th row, column
    r = rank r+1): the page's entries and the ranks around theirs. Each cell's share (its text and its
    shade) at ``decimals``, the reader's precision of rank probabilities (issue 21, item 9).

    Counts or shares are both accepted: each row is drawn as shares of its own total.
    """
    import numpy as np

    counts = np.asarray(distribution, dtype=np.float64)
    k = len(counts)
    if k == 0 or k != len(rows) or counts.ndim != 2 or counts.shape[1] != k:
        return None
    pages = rank_pages(k)
    page = min(max(page, 1), pages)
    start, stop = (page - 1) * RANK_PAGE_ROWS, min(k, page * RANK_PAGE_ROWS)
    lo, hi = max(0, start - RANK_WINDOW), min(k, stop + RANK_WINDOW)  # 0-based ranks [lo, hi)
    part = counts[start:stop]
    totals = part.sum(axis=1)
    shares = part / np.where(totals > 0, totals, 1.0)[:, None]
    cell, label_width, top = 36, 200, 28
    plot_rows = []
    for i, row in enumerate(rows[start:stop]):
        line = shares[i]
        cells = [
            RankCell(
                rank=j + 1,
                share=round(float(line[j]), decimals),
                percent=_percent(round(float(line[j]), decimals)),
                x=label_width + (j - lo) * cell,
                y=top + i * cell,
                size=cell - 2,
            )
            for j in range(lo, hi)
        ]
        above, below = float(line[:lo].sum()), float(line[hi:].sum())
        plot_rows.append(
            RankPlotRow(
                name=str(row.get("name", "")),
                is_baseline=bool(row.get("is_baseline")),
                cells=cells,
                text_y=top + i * cell + cell // 2 + 4,
                modal_rank=int(np.argmax(line)) + 1,
                rank_low=row.get("rank_low"),
                rank_high=row.get("rank_high"),
                rank_sim_low=row.get("rank_sim_low"),
                rank_sim_high=row.get("rank_sim_high"),
                verdict=short_verdict(row),
                above=_percent(above) if lo > 0 else "",
                below=_percent(below) if hi < k else "",
            )
        )
    n = stop - start
    return RankPlot(
        rows=plot_rows,
        ranks=list(range(lo + 1, hi + 1)),
        columns=[(j + 1, label_width + (j - lo) * cell + (cell - 2) // 2) for j in range(lo, hi)],
        label_x=label_width - 8,
        width=label_width + (hi - lo) * cell + 8,
        height=top + n * cell + 8,
        cell=cell,
        label_width=label_width,
        entries=k,
        page=page,
        pages=pages,
        first_row=start + 1,
        last_row=stop,
        any_above=lo > 0,
        any_below=hi < k,
    )


#: The whole K x K distribution as an image: ranks and entries binned to at most this many columns and
#: rows, so the PNG's size is bounded whatever K is.
RANK_IMAGE_BINS = 200


def rank_image(distribution: Any, *, title: str) -> bytes:
    """A PNG heat-map of the whole rank distribution (rows: entries in board order; columns: ranks), drawn
    with matplotlib; boards larger than ``RANK_IMAGE_BINS`` are binned (mean share per block)."""
    import io

    import numpy as np
    from matplotlib.figure import Figure  # the object API: no pyplot state shared between threads

    counts = np.asarray(distribution, dtype=np.float64)
    k = len(counts)
    totals = counts.sum(axis=1, keepdims=True)
    shares = counts / np.where(totals > 0, totals, 1.0)
    step = max(1, -(-k // RANK_IMAGE_BINS))
    if step > 1:
        padded = np.zeros((-(-k // step) * step,) * 2)
        padded[:k, :k] = shares
        m = len(padded) // step
        shares = padded.reshape(m, step, m, step).mean(axis=(1, 3))
    fig = Figure(figsize=(7, 6), dpi=100)
    ax = fig.subplots()
    extent = (0.5, k + 0.5, k + 0.5, 0.5)
    shown = ax.imshow(shares, cmap="Blues", vmin=0, vmax=shares.max() or 1, extent=extent, aspect="auto")
    ax.set_xlabel("rank")
    ax.set_ylabel("entry (board order)")
    ax.set_title(title[:80], fontsize=10)
    fig.colorbar(shown, ax=ax, label="share of resamples" + (f" (blocks of {step})" if step > 1 else ""))
    out = io.BytesIO()
    fig.savefig(out, format="png", metadata={"Software": None})
    return out.getvalue()


def _percent(share: float) -> str:
    if share == 0:
        return "0%"
    if share < 0.005:
        return "<1%"
    return f"{share * 100:.0f}%"


def signed_text(value: Any, digits: int = 4) -> str:
    """A difference with its sign: ``+0.0123``, ``\u22120.0123``, ``0`` for zero."""
    text = fmt(value, digits)
    if text != "\u2013" and not text.startswith("-") and text.strip("0.") != "":
        return "+" + text
    return text.replace("-", "\u2212")


def _bound_text(value: Any, digits: int, decided: str) -> str:
    """An interval bound at the board's precision; ``decided`` (">0" or "<0") replaces a bound that rounds
    to zero on the side the verdict decided (the unrounded bound is strictly on that side)."""
    text = signed_text(value, digits)
    if decided and value is not None and text.strip("0.\u2212+") == "":
        return decided
    return text


def short_verdict(row: Mapping[str, Any]) -> str:
    """A row's verdict in the board's one word ("leader" for an unresolved leader)."""
    if row.get("verdict") == "could be the best" and row.get("is_leader"):
        return "leader"
    return forest.VERDICT_SHORT.get(str(row.get("verdict", "")), "")


def board_headline(rows: Sequence[Mapping[str, Any]], *, alpha: Any = None) -> str:
    """The board in one sentence, from the rows' verdicts (max-t comparisons with the best):
    "knn-3 leads; 2 entries cannot be told apart from it on this test set."

    Entries sharing rank 1 share the lead. Empty for a board without verdicts (older snapshots)."""
    if not rows or not any("verdict" in r for r in rows):
        return ""
    leaders = [str(r.get("name", "")) for r in rows if r.get("rank") == 1]
    if not leaders:
        return ""
    if len(rows) == 1:  # not "every other entry is significantly worse": there is no other entry
        return f"{leaders[0]} is the only entry on this board: there is nothing to compare it with yet."
    if any(r.get("verdict") == "best" for r in rows):
        return f"{leaders[0]} is the best: significantly better than every other entry on this test set."
    tied = [
        str(r.get("name", "")) for r in rows if r.get("verdict") == "could be the best" and r.get("rank") != 1
    ]
    others = len(tied)
    level = f" (at \u03b1 = {float(alpha):g})" if isinstance(alpha, int | float) else ""
    if len(leaders) == 1:
        lead = f"{leaders[0]} leads"
    elif len(leaders) == 2:
        lead = f"{leaders[0]} and {leaders[1]} share the lead"
    else:
        lead = f"{', '.join(leaders[:-1])} and {leaders[-1]} share the lead"
    if len(leaders) > 1 and others == 0:
        return f"{lead}; no other entry can be told apart from them on this test set{level}."
    if others == 0:
        return f"{lead}; every other entry is significantly worse on this test set{level}."
    told = "it" if len(leaders) == 1 else "them"
    noun = "entry" if others == 1 else "entries"
    return f"{lead}; {others} other {noun} ({_names(tied)}) cannot be told apart from {told} on this test set{level}."


_INF, _MINUS_INF = "\u221e", "\u2212\u221e"


def _end(value: Any, digits: int, unbounded: str) -> str:
    return unbounded if _num(value) is None else fmt(value, digits)


def leader_adjustment_text(
    rows: Sequence[Mapping[str, Any]], signature: Mapping[str, Any], confidence: str, digits: int = 4
) -> str:
    """The leader's selection-adjusted estimate and interval in one sentence (the winner's curse), from the
    leader's row as the reader reads it; empty when the row holds none (one entry, a Ladder release)."""
    leader = next((r for r in rows if r.get("is_leader")), None)
    if leader is None or _num(leader.get("adjusted_value")) is None:
        return ""
    text = (
        f"Adjusted for being selected as the best of {len(rows)} entries (the winner's curse), "
        f"{leader.get('name', 'the leader')}'s {fmt(leader.get('value'), digits)} is estimated at "
        f"{fmt(leader.get('adjusted_value'), digits)}, {confidence} interval "
        f"[{fmt(leader.get('adjusted_low'), digits)}, {fmt(leader.get('adjusted_high'), digits)}] "
        f"(hybrid of Andrews, Kitagawa and McCloskey, \u03b2 = {signature.get('selection_beta', '')})"
    )
    if _num(leader.get("bias_corrected")) is not None:
        text += f"; bootstrap bias-corrected {fmt(leader.get('bias_corrected'), digits)}"
    if _num(leader.get("conditional_value")) is not None:
        text += (
            f"; conditional {fmt(leader.get('conditional_value'), digits)} "
            f"[{_end(leader.get('conditional_low'), digits, _MINUS_INF)}, "
            f"{_end(leader.get('conditional_high'), digits, _INF)}]"
        )
    method = str(signature.get("interval_method") or "").replace("_", "-") or "value"
    return (
        text + ". The adjusted interval is on the normal scale and the board's value interval is "
        f"{method}, so their ends need not nest; an adjusted estimate is never above the shown value (below "
        "it for a lower-is-better metric: selecting the best only flatters it) and never outside the metric's "
        "range."
    )


def _names(names: Sequence[str], most: int = 3) -> str:
    """'b', 'b and c', 'b, c and d', 'b, c, d and 2 more': the entries a headline names."""
    if len(names) > most:
        return f"{', '.join(names[:most])} and {len(names) - most} more"
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


#: Readable names of ``stats.robustness.SCHEMES``.
SCHEME_NAMES = {
    "aggregate-then-rank": "Aggregate, then rank",
    "rank-then-aggregate": "Rank per item, then aggregate",
    "test-then-rank": "Test, then rank",
}


def robustness_view(data: Mapping[str, Any]) -> dict[str, Any]:
    """The stored rank robustness for the page: the tau-b histogram as bar heights, the schemes as rows of
    (entry, rank per scheme, disagrees)."""
    if not data or not data.get("available"):
        return {"available": False, "reason": str((data or {}).get("reason") or "")}
    tau = data.get("kendall_tau_b") or {}
    hist = tau.get("histogram") or {}
    counts = list(hist.get("counts") or [])
    edges = list(hist.get("edges") or [])
    top = max(counts) if counts else 0
    bars = [
        {"low": edges[i], "high": edges[i + 1], "count": c, "height": round(100 * c / top, 1) if top else 0}
        for i, c in enumerate(counts)
    ]
    schemes = data.get("schemes") or {}
    table = []
    if schemes:
        names = schemes.get("names") or []
        disagree = set(schemes.get("disagreements") or [])
        for i, name in enumerate(names):
            table.append(
                {
                    "name": name,
                    "cells": [(s["ranks"][i], s["scores"][i]) for s in schemes.get("schemes", [])],
                    "disagrees": name in disagree,
                }
            )
    svg = str(data.get("svg") or "")
    return {
        "available": True,
        "data": data,
        # an <img> (no script in it runs, whatever an entry is called), the text alternative beside it
        "svg_uri": "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode() if svg else "",
        "tau": tau,
        "bars": bars,
        "scheme_titles": [SCHEME_NAMES.get(s["scheme"], s["scheme"]) for s in schemes.get("schemes", [])],
        "scheme_rows": table,
        "schemes": schemes,
    }


def resolution_text(resolution: Mapping[str, Any] | None, digits: int = 4) -> str:
    """What the test set resolves at the stated power, before entries (from its items) and after (measured),
    in one sentence; empty when the snapshot holds none."""
    if not resolution:
        return ""
    power = _num(resolution.get("power")) or 0.8
    parts = []
    before = resolution.get("before") or {}
    if _num(before.get("difference")) is not None:
        parts.append(
            f"before any entry, {before.get('n_items')} items resolve a difference of "
            f"{fmt(before['difference'], digits)} ({before.get('basis', '')})"
        )
    after = resolution.get("after") or {}
    if _num(after.get("difference")) is not None:
        parts.append(
            f"measured on the entries, {fmt(after['difference'], digits)} (bootstrap, median over entries)"
        )
    measured = resolution.get("after_measured") or {}
    if _num(measured.get("difference")) is not None:
        between = " and ".join(str(n) for n in measured.get("between") or [])
        parts.append(
            f"{fmt(measured['difference'], digits)} from the discordance of {between} (McNemar, Connor)"
        )
    if not parts:
        return ""
    return f"Smallest difference this test set resolves at {power:.0%} power: " + "; ".join(parts) + "."
