"""Helpers shared by the board tests (the incremental board, its pool and step-down, the board's threads):
one definition of "the same board" and of the small boards they build."""

from __future__ import annotations

from typing import Any

import numpy as np

from stats.board import Board


def same_board(a: Board, b: Board) -> None:
    """``a`` and ``b`` are the same board to the bit: rows, standard errors, decisions, rank
    probabilities and the max-t critical value; the two K x K tables both as the boards hold them (in the
    input's order) and in the rows' order (which each board permutes on first read)."""
    assert a.as_dict() == b.as_dict()
    assert np.array_equal(a.input_order, b.input_order)
    assert np.array_equal(a.standard_errors_by_input, b.standard_errors_by_input)
    assert np.array_equal(a.better_by_input, b.better_by_input)
    assert np.array_equal(a.pair_standard_errors, b.pair_standard_errors)
    assert np.array_equal(a.better, b.better)
    assert np.array_equal(a.rank_probabilities, b.rank_probabilities)
    assert a.max_t_critical_value == b.max_t_critical_value


def noisy_board(seed: int, k: int, b: int, *, ties: bool) -> tuple[np.ndarray, np.ndarray]:
    """Replicates (b, k) and point values of k close entries with a shared resample effect; with ``ties``
    rounded at 3 decimals and entries 0 and 1 identical (a zero standard error)."""
    rng = np.random.default_rng(seed)
    base = np.sort(rng.normal(0.7, 0.01, size=k))
    theta = base[None, :] + rng.normal(0, 0.01, size=(b, k)) + rng.normal(0, 0.01, size=(b, 1))
    if ties:
        theta = np.round(theta, 3)
        theta[:, 1] = theta[:, 0]  # identical entries: a zero standard error
    point = theta.mean(axis=0)
    if ties:
        point = np.round(point, 3)
    return theta, point


def family_options() -> dict[str, Any]:
    """``build_board``'s options for the family boards of ``tests/benchmarks/families.py`` at N = 300."""
    return {
        "higher_is_better": True,
        "metric_name": "accuracy",
        "seed": 0,
        "interval": "percentile",
        "test": "bootstrap",
        "n_items": 300,
    }


def rank_column_case(
    seed: int, k: int, b: int, where: int, *, higher: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A new entry's rank column on coarse, tied values: the replicates ``x`` (b, k + 1) of k + 1 close
    entries, the old entries' columns (all but ``where``), and the old board's rank counts and ranks
    (``compare_ranks._rank_counts`` of the old columns, the counts as ``board_update`` keeps them: int16).
    ``seed`` seeds both directions' draws alike when the caller passes the same one."""
    from stats.compare_ranks import _rank_counts

    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(np.linspace(0, 1, k + 1), 0.4, size=(b, k + 1)), 1)
    old = np.array([i for i in range(k + 1) if i != where], dtype=np.intp)
    counts, ranks = _rank_counts(np.ascontiguousarray(x[:, old]), higher_is_better=higher, keep=True)
    assert ranks is not None
    return x, old, counts, ranks
