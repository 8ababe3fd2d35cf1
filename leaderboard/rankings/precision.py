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
#: A secondary metric's p-values (``SnapshotRow.secondary``); its value is on the value's scale.
SECONDARY_P_FIELDS = ("p_value", "p_adjusted")
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
    secondary = out.get("secondary")
    if secondary:
        out["secondary"] = public_secondary(secondary, decimals)
    return out


def public_secondary(secondary: Sequence[Mapping[str, Any]], decimals: int) -> list[dict[str, Any]]:
    """A row's secondary metrics (issue 20) at the board's precision: values like the value, p-values like
    p-values (the same rule as the primary metric's numbers), in the stored order."""
    return [
        {
            "metric": figures.get("metric"),
            "value": round_to(figures.get("value"), decimals),
            **{key: round_to(figures.get(key), p_decimals(decimals)) for key in SECONDARY_P_FIELDS},
        }
        for figures in secondary
    ]


def public_rows(
    rows: Sequence[Mapping[str, Any]], decimals: int, start: int = 0, stop: int | None = None
) -> list[SnapshotRow]:
    """The rows ``start:stop`` of a stored board as every exact reader reads them (:func:`public_row`), each
    difference the difference of the shown values (:func:`shown_differences`; ``rows``: the whole board,
    where each row's reference is found)."""
    shown = {r.get("key"): round_to(r.get("value"), decimals) for r in rows if r.get("key") is not None}
    return [public_row(shown_differences(r, shown), decimals) for r in rows[start:stop]]


_DECIDED = ("best", "worse than the best")


def shown_differences(row: Mapping[str, Any], shown: Mapping[Any, Any]) -> Mapping[str, Any]:
    """One rule for every difference a reader reads (issue 22, P1): the shown difference is the shown value
    minus the shown value of the entry it is compared with, so it adds up from the numbers on the page
    (0.973 - 0.988 = -0.015, never the rounded exact -0.01447 = -0.014); the difference interval is widened
    to cover it (by at most one step of the last digit), except across zero on a decided row (the verdict's
    interval excludes zero; a bound that rounds to zero is written "<0" or ">0"). Participants before the
    reveal read the same rule over tie groups (:func:`participant_rows`). ``shown``: the board's shown
    values by entry key. The stored row is untouched."""
    if "diff" not in row:
        return row
    mine, theirs = round_to(row.get("value"), 12), shown.get(row.get("compared_with_key"))
    mine = shown.get(row.get("key"), mine)
    diff = _shown_diff(mine, theirs)
    if diff is None:
        return row
    out = dict(row)
    out["diff"] = diff
    if not (diff == 0 and row.get("verdict") in _DECIDED):
        out.update(_covering(row, diff))
    return out


def shown_pairwise(
    pairwise: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], decimals: int
) -> dict[str, Any]:
    """The pairwise table with :func:`shown_differences`' rule (issue 22, P1, the pairwise page): the
    difference of entries ``i`` and ``j`` is the shown value of ``i`` minus the shown value of ``j`` (the
    two values printed above it on the page), its interval widened to cover it, except across zero on a
    significant pair. ``rows``: the stored board, in the table's order. Nothing else changes (an organizer's
    table keeps its counts and exact p-values); a table that does not match the rows is returned as it is.
    """
    names = pairwise.get("names")
    if not isinstance(names, list) or len(names) != len(rows):
        return dict(pairwise)
    shown = [round_to(r.get("value"), decimals) for r in rows]
    return _cover_table(pairwise, shown)


def _cover_table(pairwise: Mapping[str, Any], shown: Sequence[Any]) -> dict[str, Any]:
    out = dict(pairwise)
    if not isinstance(pairwise.get("difference"), list):
        return out
    tables = {
        k: [list(line) for line in pairwise[k]]
        for k in ("difference", "low", "high")
        if isinstance(pairwise.get(k), list)
    }
    significant = pairwise.get("significant")
    for i, j in ((i, j) for i in range(len(shown)) for j in range(len(shown)) if i != j):
        diff = _shown_diff(shown[i], shown[j])
        if diff is None:
            continue
        tables["difference"][i][j] = diff
        if diff == 0 and isinstance(significant, list) and bool(significant[i][j]):
            continue  # a decided pair: its bounds are not pulled across zero
        cell = {f"diff_{k}": tables[k][i][j] for k in ("low", "high") if k in tables}
        for key, bound in _covering(cell, diff).items():
            tables[key.removeprefix("diff_")][i][j] = bound
    out.update(tables)
    return out


def public_pairwise(pairwise: Mapping[str, Any], decimals: int) -> dict[str, Any]:
    """The stored pairwise table as a participant sees it (its differences those of the shown values once
    :func:`shown_pairwise` has been applied)."""
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


# --- ties at the board's precision (issue 21, item 8) ---------------------------------------------------
#: Row fields that a tie group shows as the envelope of its members: the lowest lower bound, the highest
#: upper bound, the largest spread and p-value (each member's own figure lies inside what the group shows).
_GROUP_MIN = ("low", "diff_low", "rank_low", "rank_sim_low")
_GROUP_MAX = (
    "high",
    "diff_high",
    "rank_high",
    "rank_sim_high",
    "diff_se",
    "seed_sd",
    "test_set_sd",
    "p_value",
    "p_adjusted",
    "items_needed",
)
_GROUP_ANY = ("in_best_set", "in_best_set_max_t", "in_best_set_holm")


def _tie_groups(rows: Sequence[Mapping[str, Any]], decimals: int) -> list[list[Mapping[str, Any]]]:
    """The rows (in the board's order) in groups of equal shown value, each group by name (the neutral
    order: a name says nothing about the labels), then submission id."""
    groups: list[list[Mapping[str, Any]]] = []
    shown_before: object = object()
    for r in rows:
        shown = round_to(r.get("value"), decimals)
        if not groups or shown != shown_before:
            groups.append([])
            shown_before = shown
        groups[-1].append(r)
    return [sorted(g, key=_neutral) for g in groups]


def _neutral(row: Mapping[str, Any]) -> tuple[str, int]:
    return str(row.get("name", "")).casefold(), int(row.get("submission_id") or 0)


def tie_order(rows: Sequence[Mapping[str, Any]], decimals: int) -> list[list[int]]:
    """The positions (in the stored board's order) of each tie group's rows, in the order
    :func:`participant_rows` lists them."""
    position = {id(r): i for i, r in enumerate(rows)}
    return [[position[id(r)] for r in group] for group in _tie_groups(rows, decimals)]


def _envelope(group: list[Mapping[str, Any]], key: str, pick: Any) -> Any:
    values = [
        r[key] for r in group if isinstance(r.get(key), int | float) and not isinstance(r.get(key), bool)
    ]
    return pick(values) if values else group[0].get(key)


def _group_verdict(group: list[Mapping[str, Any]]) -> Any:
    """A group's one verdict: a member's own when alone; else the least decisive of its members' ("could be
    the best" unless every member is "worse than the best"; "best" is one entry's)."""
    verdicts = {r.get("verdict") for r in group}
    if len(group) == 1 or (len(verdicts) == 1 and "best" not in verdicts):
        return group[0].get("verdict")
    return "worse than the best" if verdicts == {"worse than the best"} else "could be the best"


def _group_figures(group: list[Mapping[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {k: _envelope(group, k, min) for k in _GROUP_MIN if any(k in r for r in group)}
    out.update({k: _envelope(group, k, max) for k in _GROUP_MAX if any(k in r for r in group)})
    out.update({k: any(bool(r.get(k)) for r in group) for k in _GROUP_ANY if any(k in r for r in group)})
    if any("verdict" in r for r in group):
        out["verdict"] = _group_verdict(group)
    if any(r.get("secondary") for r in group):
        out["secondary"] = _group_secondary(group)
    warnings = sorted({str(r["interval_warning"]) for r in group if r.get("interval_warning")})
    if any("interval_warning" in r for r in group):
        out["interval_warning"] = "; ".join(warnings) or None
    return out


def _group_secondary(group: list[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """A tie group's secondary p-values by metric: the group's largest, like the primary's, so that no
    member's p-value (none for the leader itself) tells which of the tied entries leads at full precision.
    Each member keeps its own value (rounded later)."""
    out: dict[str, dict[str, Any]] = {}
    for r in group:
        for figures in r.get("secondary") or []:
            mine = out.setdefault(str(figures.get("metric")), dict.fromkeys(SECONDARY_P_FIELDS))
            for key in SECONDARY_P_FIELDS:
                v = figures.get(key)
                if isinstance(v, int | float) and (mine[key] is None or v > mine[key]):
                    mine[key] = v
    return out


def participant_rows(rows: Sequence[Mapping[str, Any]], decimals: int) -> list[SnapshotRow]:
    """The board as a participant reads it before the reveal: no more than its rounded values (issue 21).

    Rows (stored, in the board's exact order) whose values are equal at the board's precision form one tie
    group: they share one rank (one plus the number of entries shown better, "1, 2, 2, 4"), are listed by
    name, and show the same figures: the group's interval, difference interval and rank interval are the
    envelopes of its members', its spreads, p-values and items needed the largest, its best-set flags true
    when any member's is, its verdict the least decisive (:func:`_group_verdict`). The difference is the
    shown value minus the leading group's shown value (for a leading group of one: minus the next group's),
    compared with the first entry of the leading group; its interval covers it. Then every number is
    rounded like every reader's (:func:`public_row`). The stored rows are untouched.

    What is left: a group's figures are those of its extreme members at the board's precision, so a group
    of one entry shows its own interval, p-value and difference interval rounded (docs/reliability.md)."""
    groups = _tie_groups(rows, decimals)
    if not groups:
        return []
    top = groups[0]
    reference = top[0]
    runner = groups[1][0] if len(groups) > 1 else None
    out: list[SnapshotRow] = []
    rank = 1
    for g_index, group in enumerate(groups):
        figures = _group_figures(group)
        shown = round_to(group[0].get("value"), decimals)
        versus = runner if g_index == 0 and len(top) == 1 else reference
        versus_value = round_to(versus.get("value"), decimals) if versus is not None else None
        diff = _shown_diff(shown, versus_value)
        for member in group:
            row = dict(member)
            row.update({k: v for k, v in figures.items() if k != "secondary"})
            if "secondary" in figures:  # the member's own values, the group's p-values
                row["secondary"] = [
                    {**f, **figures["secondary"].get(str(f.get("metric")), {})}
                    for f in member.get("secondary") or []
                ]
            row["rank"] = rank
            row["is_leader"] = member is reference
            if "diff" in member and versus is not None:
                row["diff"] = diff
                row.update(_covering(figures, diff))
            if "compared_with" in member:
                other = versus if versus is not None and member is not versus else None
                row["compared_with"] = None if other is None else other.get("name")
                row["compared_with_key"] = None if other is None else other.get("key")
                row["compared_with_submission_id"] = None if other is None else other.get("submission_id")
            out.append(public_row(row, decimals))
        rank += len(group)
    return out


def _shown_diff(shown: Any, versus: Any) -> float | None:
    if not isinstance(shown, int | float) or not isinstance(versus, int | float):
        return None
    return float(shown) - float(versus)


def _covering(figures: Mapping[str, Any], diff: float | None) -> dict[str, Any]:
    """The group's difference interval, widened to cover the shown difference."""
    out: dict[str, Any] = {}
    low, high = figures.get("diff_low"), figures.get("diff_high")
    if diff is not None and isinstance(low, int | float):
        out["diff_low"] = min(float(low), diff)
    if diff is not None and isinstance(high, int | float):
        out["diff_high"] = max(float(high), diff)
    return out


def participant_pairwise(
    pairwise: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], decimals: int
) -> dict[str, Any]:
    """The pairwise table as a participant reads it before the reveal, in :func:`participant_rows`'s order:
    every pair of two tie groups shows the same figures (the difference of the shown values, the envelope of
    the pairs' intervals, significant only when every pair is, the largest McNemar p), then rounded like
    :func:`public_pairwise`. A stored table that does not match the rows is not shown."""
    groups = tie_order(rows, decimals)
    order = [i for g in groups for i in g]
    names = pairwise.get("names")
    if not isinstance(names, list) or len(names) != len(rows):
        return {}
    shown = [round_to(r.get("value"), decimals) for r in rows]
    out: dict[str, Any] = {k: v for k, v in pairwise.items() if k not in PAIRWISE_HIDDEN}
    out["names"] = [names[i] for i in order]
    tables = {k: pairwise.get(k) for k in ("difference", "low", "high", "significant", "mcnemar_p")}
    blocks = {(gi, gj): _pairs(g, h) for gi, g in enumerate(groups) for gj, h in enumerate(groups)}
    group_of = {i: gi for gi, g in enumerate(groups) for i in g}
    for key, table in tables.items():
        if not isinstance(table, list):
            continue
        out[key] = [
            [_block_cell(key, table, blocks[(group_of[i], group_of[j])], i, j, shown) for j in order]
            for i in order
        ]
    return public_pairwise(_cover_table(out, [shown[i] for i in order]), decimals)


def _pairs(g: list[int], h: list[int]) -> list[tuple[int, int]]:
    pairs = [(i, j) for i in g for j in h if i != j]
    return pairs or [(g[0], h[0])]


def _block_cell(
    key: str, table: list[Any], pairs: list[tuple[int, int]], i: int, j: int, shown: list[Any]
) -> Any:
    if i == j:
        return table[i][j]
    cells = [table[a][b] for a, b in pairs]
    numbers = [c for c in cells if isinstance(c, int | float) and not isinstance(c, bool)]
    if key == "difference":
        a, b = shown[i], shown[j]
        return float(a) - float(b) if isinstance(a, int | float) and isinstance(b, int | float) else None
    if key == "significant":
        return all(bool(c) for c in cells)
    if not numbers:
        return None
    return min(numbers) if key == "low" else max(numbers)


def participant_distribution(
    distribution: Any, rows: Sequence[Mapping[str, Any]], decimals: int
) -> list[list[float]]:
    """The rank distribution as a participant reads it before the reveal: rows in :func:`participant_rows`'s
    order, each tie group's rows replaced by their mean (one line per group), rounded like p-values."""
    matrix = [list(map(float, line)) for line in distribution]
    if len(matrix) != len(rows):
        return []
    out: list[list[float]] = []
    for group in tie_order(rows, decimals):
        mean = [sum(matrix[i][c] for i in group) / len(group) for c in range(len(matrix[0]) if matrix else 0)]
        out.extend([mean] * len(group))
    return public_distribution(out, decimals)


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
