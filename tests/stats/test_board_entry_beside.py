"""A new entry's rank table beside its max-t sets and written in the board's order (issue 24, seventh pass):
the rank distribution of the update path counted on a thread of its own while the max-t sets are
computed (two threads), the counts' update by groups of the entries the new one passes in some resamples
(``_MIXED_GROUP``) on the pool, and the rank probabilities divided straight into the board's row order.
Every board equals the full rebuild, with 1 and 2 threads; a failing build leaves no thread behind."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import stats.board_update as bu
from stats.board import build_board
from stats.board_update import BoardCache, _add_rank_column, _probabilities
from stats.compare_ranks import _rank_counts
from tests.stats.board_helpers import noisy_board as _board
from tests.stats.board_helpers import same_board as _same

OPTIONS: dict[str, Any] = {
    "metric_name": "m",
    "seed": 0,
    "interval": "percentile",
    "test": "bootstrap",
    "n_items": 500,
}


def _chain(seed: int, higher: bool, ties: bool, k: int = 24, b: int = 200) -> list[dict[str, Any]]:
    """The arguments of boards of 4..k entries, each adding one entry anywhere (top, bottom, middle)."""
    theta, point = _board(seed, k, b, ties=ties)
    names = [f"n{j:03d}" for j in range(k)]
    order = np.random.default_rng(seed).permutation(k)
    chain = []
    for m in range(4, k + 1):
        cols = np.sort(order[:m])
        chain.append(
            {
                "names": [names[j] for j in cols],
                "values": point[cols],
                "replicates": np.ascontiguousarray(theta[:, cols]),
                "higher_is_better": higher,
                **OPTIONS,
            }
        )
    return chain


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("group", [1, 2, 64])
@pytest.mark.parametrize(("seed", "higher", "ties"), [(0, True, False), (3, False, True)])
def test_a_chain_with_the_ranks_beside_equals_the_full_rebuilds(
    monkeypatch: pytest.MonkeyPatch, threads: str, group: int, seed: int, higher: bool, ties: bool
) -> None:
    """Each board of a chain is the full rebuild's, whatever the groups of the counts' update; with two
    threads the rank distribution ran beside the max-t sets on every update, with one it did not. The
    boards returned earlier are kept intact by the later updates (nothing of theirs is written again)."""
    monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", threads)
    monkeypatch.setattr(bu, "_MIXED_GROUP", group)
    monkeypatch.setattr(bu, "_POOL_ROWS", 5)
    monkeypatch.setattr(bu, "_COUNT_CHUNK", 300)  # several blocks of resamples per group
    started: list[int] = []
    ahead = bu._Ahead

    def counted(fn: Any) -> Any:
        started.append(1)
        return ahead(fn)

    monkeypatch.setattr(bu, "_Ahead", counted)
    chain = _chain(seed, higher, ties)
    cache = BoardCache()
    kept = []
    for i, args in enumerate(chain):
        got = cache.build(**args)
        assert cache.last == ("full" if i == 0 else "incremental")
        _same(got, build_board(**args))
        kept.append(got)
    assert len(started) == (len(chain) - 1 if threads == "2" else 0)
    for args, got in zip(chain, kept, strict=True):  # the earlier boards, after every later update
        _same(got, build_board(**args))


@pytest.mark.parametrize("group", [1, 3, 64])
@pytest.mark.parametrize("where", [0, 11, 30])
def test_the_counts_update_by_groups_equals_a_full_count(
    monkeypatch: pytest.MonkeyPatch, group: int, where: int
) -> None:
    """The counts of the new ranks (many entries passed in some resamples but not all, shifted rows,
    ties) are a full count's, for any group of the mixed entries and either direction."""
    monkeypatch.setattr(bu, "_MIXED_GROUP", group)
    monkeypatch.setattr(bu, "_COUNT_CHUNK", 500)
    rng = np.random.default_rng(where)
    k, b = 30, 300
    for higher in (True, False):
        x = np.round(rng.normal(np.linspace(0, 1, k + 1), 0.4, size=(b, k + 1)), 1)
        old = np.array([i for i in range(k + 1) if i != where], dtype=np.intp)
        prev_counts, prev_ranks = _rank_counts(
            np.ascontiguousarray(x[:, old]), higher_is_better=higher, keep=True
        )
        assert prev_ranks is not None
        counts, ranks, redo, shifted = _add_rank_column(
            x, prev_ranks, prev_counts.astype(np.int16), old, where, higher_is_better=higher
        )
        assert redo[old].sum() > 5 and shifted.sum() + redo.sum() > 10
        want_counts, want_ranks = _rank_counts(x, higher_is_better=higher, keep=True)
        assert np.array_equal(counts, want_counts)
        assert np.array_equal(ranks, want_ranks)


def test_the_probabilities_in_the_boards_order() -> None:
    """Rows gathered into an order and divided: the division of the whole table, then permuted."""
    rng = np.random.default_rng(5)
    counts = rng.integers(0, 700, size=(13, 13)).astype(np.int16)
    order = rng.permutation(13)
    assert np.array_equal(_probabilities(counts, 700, order), (counts / 700)[order])
    assert np.array_equal(_probabilities(counts, 700), counts / 700)


@pytest.mark.parametrize("failing", ["_simultaneous", "_add_rank_column"])
def test_a_failing_update_leaves_no_thread_and_no_state(
    monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    """A build that fails in the max-t sets (after the ranks' thread started) or in the ranks' thread
    raises, waits for the thread, and leaves no state: the next build is the full rebuild's board."""
    monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", "2")
    chain = _chain(1, True, False, k=8)
    cache = BoardCache()
    cache.build(**chain[0])
    original = getattr(bu, failing)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("broken on purpose")

    monkeypatch.setattr(bu, failing, broken)
    threads: list[threading.Thread] = []
    ahead = bu._Ahead

    def kept(fn: Any) -> Any:
        a = ahead(fn)
        threads.append(a._thread)
        return a

    monkeypatch.setattr(bu, "_Ahead", kept)
    with pytest.raises(RuntimeError, match="broken on purpose"):
        cache.build(**chain[1])
    assert len(threads) == 1 and not threads[0].is_alive()
    monkeypatch.setattr(bu, failing, original)
    got = cache.build(**chain[2])
    assert cache.last == "full"
    _same(got, build_board(**chain[2]))
