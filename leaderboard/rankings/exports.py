"""The board's downloads: one flat row and one CSV schema for the site's ``board.csv`` and the API's
``?format=csv``, which are the same bytes for the same snapshot (issue 13).

Rows are rounded to the board's precision first (``rankings.precision``); text cells that a spreadsheet
would run as formulas are neutralised (``core.exports.neutralise``); numbers and ids are written as they are.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import Any

from leaderboard.core.exports import neutralise
from leaderboard.rankings.precision import public_rows

#: The verdict (max-t comparisons with the best) comes first; p_value and p_adjusted are the pair test
#: against the observed leader (not the verdict); any further scalar keys of the rows follow, sorted.
CSV_COLUMNS = [
    "rank", "rank_low", "rank_high", "rank_sim_low", "rank_sim_high", "name", "team", "is_baseline",
    "verdict", "compared_with", "value", "low", "high", "interval_method", "diff", "diff_low", "diff_high",
    "in_best_set", "items_needed", "n_runs", "seed_sd", "test_set_sd", "p_value", "p_adjusted",
    "submission_id",
]  # fmt: skip


def normalise_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """Flat keys for a stored row, whether the snapshot holds the flat names or ``stats.board``'s shape."""
    d = dict(row)
    pairs = {
        "interval": ("low", "high"),
        "rank_interval": ("rank_low", "rank_high"),
        "simultaneous_rank_interval": ("rank_sim_low", "rank_sim_high"),
        "difference_interval": ("diff_low", "diff_high"),
    }
    for key, (lo, hi) in pairs.items():
        value = row.get(key)
        if lo not in d and isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
            d[lo], d[hi] = value[0], value[1]
    for old, new in (("difference", "diff"), ("adjusted_p_value", "p_adjusted")):
        if new not in d and old in row:
            d[new] = row[old]
    if "verdict" in row:
        d.setdefault("compared_with_name", row.get("compared_with"))
    elif not d.get("is_leader"):
        d.setdefault("compared_with_name", "the leader")  # a snapshot written before verdicts existed
    runs = row.get("runs")
    if isinstance(runs, Mapping):
        for key in ("mean", "sd", "min", "max"):
            d.setdefault(f"run_{key}", runs.get(key))
    return d


def board_csv(rows: Sequence[Mapping[str, Any]], decimals: int) -> str:
    """Every row of a stored board as CSV at the board's precision (the one schema of both downloads)."""
    flat = [normalise_row(r) for r in public_rows(rows, decimals)]
    extra = sorted(
        {k for r in flat for k, v in r.items() if k not in CSV_COLUMNS and not isinstance(v, dict | list)}
    )
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS + extra)
    for r in flat:
        writer.writerow([neutralise("" if r.get(c) is None else r.get(c)) for c in CSV_COLUMNS + extra])
    return buffer.getvalue()
