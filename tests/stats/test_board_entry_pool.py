"""A new entry's passes on the board's pool (issue 24, second round): the update's K x K gathers and
elementwise passes by row blocks, the new pairs' exceedances by column chunks and the rank column by
blocks of resamples (``stats._threads.in_blocks``) give the full rebuild's board for one and two threads,
with blocks small enough that every pass has many of them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stats.board_update as bu
from stats.board import build_board
from stats.board_update import BoardCache
from tests.stats.board_helpers import noisy_board as _board
from tests.stats.board_helpers import rank_column_case
from tests.stats.board_helpers import same_board as _same


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize(("seed", "higher", "ties"), [(0, True, False), (1, False, True)])
def test_a_chain_of_new_entries_on_the_pool_equals_the_full_rebuilds(
    monkeypatch: pytest.MonkeyPatch, threads: str, seed: int, higher: bool, ties: bool
) -> None:
    monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", threads)
    monkeypatch.setattr(bu, "_POOL_ROWS", 3)  # many row blocks at K = 30
    monkeypatch.setattr(bu, "_PAIR_CHUNK", 600)  # column chunks of 3 at B = 200
    monkeypatch.setattr(bu, "_COUNT_CHUNK", 400)  # blocks of a few resamples
    blocks: list[int] = []
    in_blocks = bu.in_blocks

    def counted(fn: Any, items: Any) -> Any:
        items = list(items)
        blocks.append(len(items))
        return in_blocks(fn, items)

    monkeypatch.setattr(bu, "in_blocks", counted)
    k, b = 30, 200
    theta, point = _board(seed, k, b, ties=ties)
    names = [f"n{j:03d}" for j in range(k)]
    order = np.random.default_rng(seed).permutation(k)  # entries arrive anywhere: top, bottom, middle
    options = {
        "higher_is_better": higher,
        "metric_name": "m",
        "seed": 0,
        "interval": "percentile",
        "test": "bootstrap",
        "n_items": 500,
    }
    cache = BoardCache()
    for m in range(4, k + 1):
        cols = np.sort(order[:m])
        args = {"names": [names[j] for j in cols], "values": point[cols], "replicates": theta[:, cols]}
        got = cache.build(**args, **options)
        assert cache.last == ("full" if m == 4 else "incremental")
        _same(got, build_board(**args, **options))
    assert blocks and max(blocks) >= 8  # the passes ran in many blocks


@pytest.mark.parametrize("confidence", [0.5, 0.9, 0.99])
@pytest.mark.parametrize("where", [0, 17, 40])
def test_rank_bounds_of_the_entries_the_new_one_passes(confidence: float, where: int) -> None:
    """The bounds of the old entries whose counts changed (the new entry beats them in some resamples but
    not all) come from their previous bounds (each the previous one or one rank lower): the full table's,
    with ties (a coarse grid of values), for either direction."""
    from stats.board_update import _add_rank_column, _rank_table_update
    from stats.compare_ranks import _rank_table

    k, b = 40, 400
    for higher in (True, False):
        x, old, prev_counts, prev_ranks = rank_column_case(where + 100 * higher, k, b, where, higher=higher)
        prev = _rank_table(prev_counts.copy(), b, confidence)
        counts, _, redo, shifted = _add_rank_column(
            x, prev_ranks, prev_counts.astype(np.int16), old, where, higher_is_better=higher
        )
        assert redo[old].sum() > 5  # entries passed in some resamples but not all
        want = _rank_table(np.asarray(counts, dtype=np.int64), b, confidence)
        got = _rank_table_update(
            counts, b, confidence, previous=(prev.low, prev.high), old=old, redo=redo, shifted=shifted
        )
        assert np.array_equal(got.low, want.low) and np.array_equal(got.high, want.high)
        assert np.array_equal(got.probabilities, want.probabilities)
