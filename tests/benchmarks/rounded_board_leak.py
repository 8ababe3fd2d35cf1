"""How many exact counts do the shown rows of a board tell apart? (issue 21, item 8: the audit's board)

A 1,000-item binary task has about 500 public items; 200 entries get 150, 151, ..., 349 of them right. The
board is built by ``stats.board.build_board`` (the service's statistics) and its rows are read as a
participant reads them before the reveal (``rankings.precision.participant_rows``, what the read policy
applies) or as an organizer reads them (``public_rows``: every number at the board's precision, exact
order). Two rows that show the same numbers in every column a participant reads (ranks included; the
entry's own name, team and ids excepted) cannot be told apart; the figure is the number of distinct rows.

Run: ``PYTHONPATH=$PWD /work/main/.venv/bin/python -m tests.benchmarks.rounded_board_leak``
(about 20 s on one core).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from stats.board import build_board
from stats.metrics import get_metric

N_PUBLIC = 500
COUNTS = range(150, 350)
DECIMALS = 2  # default_decimals(1,000)
RESAMPLES = 1_000
#: What identifies an entry, not what the labels teach: never counted.
IDENTITY = {
    "name",
    "team",
    "key",
    "submission_id",
    "submitted_at",
    "description",
    "link",
    "is_baseline",
    "n_runs",
    "compared_with",
    "compared_with_key",
    "compared_with_submission_id",
    "is_leader",
}
RANK_COLUMNS = ("rank", "rank_low", "rank_high", "rank_sim_low", "rank_sim_high")


def audit_rows(seed: int = 21) -> list[dict[str, Any]]:
    """The stored rows of the audit's board (full precision, exact order), as ``rankings.board`` stores them."""
    rng = np.random.default_rng(seed)
    metric = get_metric("accuracy")
    truth = rng.integers(0, 2, N_PUBLIC)
    stats, names = [], []
    for i, count in enumerate(COUNTS):
        right = np.zeros(N_PUBLIC, dtype=bool)
        right[rng.choice(N_PUBLIC, size=count, replace=False)] = True
        prediction = np.where(right, truth, 1 - truth)
        stats.append(metric.item_statistics(truth, prediction))
        names.append(f"entry{i:03d}")
    weights = rng.multinomial(N_PUBLIC, np.full(N_PUBLIC, 1 / N_PUBLIC), size=RESAMPLES).astype(np.float64)
    values = np.array([float(metric.finalize(s.sum(axis=0))) for s in stats])
    replicates = np.column_stack([metric.finalize(weights @ s) for s in stats])
    board = build_board(
        names=names,
        values=values,
        replicates=replicates,
        higher_is_better=True,
        metric_name="accuracy",
        seed=seed,
        item_statistics=stats,
        finalize=metric.finalize,
        zero_one=True,
        n_items=N_PUBLIC,
        randomizations=1_000,
    ).as_dict()
    from leaderboard.rankings.board import snapshot_row  # needs Django set up

    rows = []
    for r in board["rows"]:
        entry = {"key": r["name"], "team": r["name"], "submission_id": int(r["name"][5:]) + 1}
        rows.append(dict(snapshot_row({**r, **entry, "compared_with_key": r["compared_with"]})))
    return rows


def distinct(rows: list[dict[str, Any]], *, ranks: bool) -> int:
    """Distinct shown rows (every column a participant reads but the entry's identity)."""
    skip = IDENTITY | (set() if ranks else set(RANK_COLUMNS))
    return len({tuple(sorted((k, repr(v)) for k, v in r.items() if k not in skip)) for r in rows})


def figures(rows: list[dict[str, Any]] | None = None) -> dict[str, int]:
    from leaderboard.rankings.precision import participant_rows, public_rows  # needs Django set up

    rows = rows if rows is not None else audit_rows()
    exact = [dict(r) for r in public_rows(rows, DECIMALS)]
    shown = [dict(r) for r in participant_rows(rows, DECIMALS)]
    value_only = len({r["value"] for r in exact})
    return {
        "value alone": value_only,
        "organizer rows without ranks": distinct(exact, ranks=False),
        "organizer rows with ranks": distinct(exact, ranks=True),
        "participant rows without ranks": distinct(shown, ranks=False),
        "participant rows with ranks": distinct(shown, ranks=True),
    }


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard.config.settings")
    import django

    django.setup()
    rows = audit_rows()
    print(f"columns read: {', '.join(k for k in rows[0] if k not in IDENTITY)}")
    for name, n in figures(rows).items():
        print(f"{name:34s} {n:4d} of {len(COUNTS)} exact counts told apart")
    return 0


if __name__ == "__main__":
    sys.exit(main())
