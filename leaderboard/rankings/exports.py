"""The board's downloads: the typed row (``rankings.board.SnapshotRow``) and one CSV schema for the site's ``board.csv`` and the API's
``?format=csv``, which are the same bytes for the same snapshot (issue 13).

Rows are rounded to the board's precision first (``rankings.precision``); text cells that a spreadsheet
would run as formulas are neutralised (``core.exports.neutralise``); numbers and ids are written as they are.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import Any

from leaderboard.core.exports import neutralise, rows_to_csv
from leaderboard.rankings.board import ROW_FIELDS
from leaderboard.rankings.precision import public_rows

#: The verdict (max-t comparisons with the best) comes first; the pair test against the observed leader
#: follows under names that say it is not the verdict; the row's other fields follow in their order, except
#: the internal keys (``key``, ``compared_with_key``) and the duplicate of ``in_best_set``.
_FIRST_COLUMNS = [
    "rank", "rank_sim_low", "rank_sim_high", "rank_low", "rank_high", "name", "team", "is_baseline",
    "verdict", "compared_with", "value", "low", "high", "interval_method", "diff", "diff_low", "diff_high",
    "in_best_set", "items_needed", "n_runs", "seed_sd", "test_set_sd", "p_value", "p_adjusted",
    "submission_id",
]  # fmt: skip
#: Row fields that are the service's internal keys or repeat another column (``in_best_set_max_t`` is the
#: verdict's ``in_best_set``), and a Ladder release's ``shown_from`` (its own CSV has it): not in the download.
_NOT_IN_CSV = frozenset({"key", "compared_with_key", "in_best_set_max_t", "shown_from", "secondary"})
#: A row field's column name where the field's own name would read as the board's verdict (issue 22, M3):
#: the pair test against the observed leader, Holm-adjusted over the K - 1 comparisons with it, answers
#: "is this entry worse than the leader if the leader had been chosen before the data?", not the board's
#: question (docs/api.md, "The board's CSV").
_CSV_NAMES = {
    "rank_low": "rank_marginal_low",
    "rank_high": "rank_marginal_high",
    "p_value": "pair_test_p_vs_leader",
    "p_adjusted": "pair_test_p_vs_leader_holm",
    "in_best_set_holm": "pair_test_not_worse_holm",
}
_FIELDS = _FIRST_COLUMNS + [f for f in ROW_FIELDS if f not in _FIRST_COLUMNS and f not in _NOT_IN_CSV]
#: The one CSV schema: the fields of :class:`~leaderboard.rankings.board.SnapshotRow`, whatever the snapshot.
CSV_COLUMNS = [_CSV_NAMES.get(f, f) for f in _FIELDS]


def csv_cell(value: Any) -> Any:
    """A CSV cell: empty for no value, ``true``/``false`` for a flag (not Python's ``True``), text neutralised."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return neutralise(value)


#: A secondary metric's columns (``<metric>``, ``<metric>_p_vs_leader``, ``<metric>_p_adjusted_across_metrics``),
#: after the row's own; only on boards of tasks that name secondary metrics (issue 20).
SECONDARY_COLUMNS = (("value", ""), ("p_value", "_p_vs_leader"), ("p_adjusted", "_p_adjusted_across_metrics"))


def secondary_names(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The secondary metrics the rows carry, in their order (none for most tasks)."""
    return list(dict.fromkeys(str(f.get("metric")) for r in rows for f in (r.get("secondary") or [])))


def board_csv(rows: Sequence[Mapping[str, Any]], decimals: int) -> str:
    """Every row of a stored board as CSV at the board's precision (the one schema of both downloads).

    A board whose task names secondary metrics has three more columns per secondary metric at the end
    (:data:`SECONDARY_COLUMNS`); the label saying how they were adjusted is in the board's signature."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    extra = secondary_names(rows)
    writer.writerow(CSV_COLUMNS + [f"{name}{suffix}" for name in extra for _, suffix in SECONDARY_COLUMNS])
    for r in public_rows(rows, decimals):
        secondary = {f.get("metric"): f for f in r.get("secondary") or []}
        cells = [(secondary.get(name) or {}).get(key) for name in extra for key, _ in SECONDARY_COLUMNS]
        writer.writerow([csv_cell(r.get(f)) for f in _FIELDS] + [csv_cell(c) for c in cells])
    return buffer.getvalue()


#: The shake-up report's CSV columns, one row per team (the site's ``shakeup.csv`` and the API's
#: ``?format=csv``, written by :func:`~leaderboard.core.exports.rows_to_csv`).
SHAKEUP_COLUMNS = (
    "name",
    "public_value",
    "private_value",
    "public_rank",
    "private_rank",
    "rank_change",
    "public_rank_set_low",
    "public_rank_set_high",
    "inside_rank_set",
    "gap",
    "gap_p",
    "gap_p_holm",
    "in_private_best_set",
)


def shakeup_team_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The report's teams as flat rows in ``SHAKEUP_COLUMNS`` order (empty cells for undefined values)."""
    rows = []
    for t in data.get("teams", []):
        rank_set = t.get("public_rank_set") or [None, None]
        flat = {**t, "public_rank_set_low": rank_set[0], "public_rank_set_high": rank_set[1]}
        rows.append({c: "" if flat.get(c) is None else flat.get(c) for c in SHAKEUP_COLUMNS})
    return rows


def shakeup_csv(data: dict[str, Any]) -> str:
    """The report's teams as CSV (``data`` already at the board's precision): the API's bytes too."""
    return rows_to_csv(shakeup_team_rows(data))


#: LaTeX's special characters in text cells (entry and team names come from participants).
_LATEX = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}  # fmt: skip
#: The verdict marks of the LaTeX table (as on the board: max-t comparisons with the best).
LATEX_MARKS = {"best": r"$\star$", "could be the best": r"$\circ$", "worse than the best": ""}


def latex_escape(text: object) -> str:
    return "".join(_LATEX.get(c, c) for c in str(text))


def _latex_number(value: object, decimals: int) -> str:
    return "--" if not isinstance(value, int | float) or isinstance(value, bool) else f"{value:.{decimals}f}"


def board_latex(rows: Sequence[Mapping[str, Any]], decimals: int, *, caption: str, confidence: float) -> str:
    """One board as a LaTeX table (``booktabs``): rank, rank set, entry, value with its interval, verdict mark.

    ``rows`` as the reader reads them (already at the board's precision)."""
    pct = f"{confidence * 100:g}\\%"
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        f"\\caption{{{latex_escape(caption)}}}",
        r"\begin{tabular}{rrllc}",
        r"\toprule",
        f"Rank & Rank set & Entry & Value [{pct} CI] & \\\\",
        r"\midrule",
    ]
    for r in rows:
        rank_set = (
            f"{r.get('rank_sim_low')}--{r.get('rank_sim_high')}"
            if r.get("rank_sim_low") is not None
            else "--"
        )
        value = (
            f"{_latex_number(r.get('value'), decimals)} "
            f"[{_latex_number(r.get('low'), decimals)}, {_latex_number(r.get('high'), decimals)}]"
        )
        mark = LATEX_MARKS.get(str(r.get("verdict")), "")
        lines.append(
            f"{r.get('rank')} & {rank_set} & {latex_escape(r.get('name', ''))} & {value} & {mark} \\\\"
        )
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        f"\\par\\smallskip{{\\footnotesize $\\star$: significantly better than every other entry; $\\circ$: "
        f"could be the best (not resolved from the leader); rank set: simultaneous {pct} (max-t).}}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"
