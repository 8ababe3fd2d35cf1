"""The incremental board with the caller's column digests (issue 24, ``BoardCache.build(column_digests=...)``):
the previous entries' columns are checked by their digests, not the arrays; the board is the full rebuild's,
in one process and from a restored state, and any digest that is not its column's gives the full rebuild."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stats.board import build_board
from stats.board_update import BoardCache
from stats.metrics import get_metric
from tests.stats.test_board_state_shared import _through_bytes
from tests.stats.test_board_update import _options, _replicates, _same


def _board(seed: int, k: int = 40) -> tuple[Any, ...]:
    rng = np.random.default_rng(seed)
    n, b = 60, 300
    theta, point = _replicates(rng, n, b, k + 3)
    jack = rng.random((n, k + 3))
    names = [f"team-{i:03d}" for i in range(k + 3)]
    metric = get_metric("accuracy")
    digests = [BoardCache.column_digest(theta[:, j], jack[:, j]) for j in range(k + 3)]

    def args(cols: list[int]) -> dict[str, Any]:
        return {
            "names": [names[i] for i in cols],
            "values": point[cols],
            "replicates": theta[:, cols],
            **_options(True, n, jackknife=jack[:, cols], finalize=metric.finalize, zero_one=True),
            "interval": "bca",
        }

    return rng, args, digests


@pytest.mark.parametrize("restored", [False, True])
def test_digests_give_the_full_rebuilds_board(restored: bool) -> None:
    rng, args, digests = _board(0)
    k = 40
    current = list(range(k))
    cache = BoardCache()
    cache.build(**args(current), column_digests=[digests[i] for i in current])
    assert cache.last == "full"
    for new in range(k, k + 3):
        if restored:
            exported = cache.export()
            assert exported is not None
            assert exported["column_digests"] is not None and exported["theta_digest"] == ""
            cache = BoardCache.restore(_through_bytes(exported))
        where = int(rng.integers(0, len(current) + 1))
        current = [*current[:where], new, *current[where:]]
        got = cache.build(**args(current), column_digests=[digests[i] for i in current])
        assert cache.last == "incremental"
        _same(got, build_board(**args(current)))
        assert cache._state is not None and cache._state.theta is None  # the digests, not the arrays, kept


def test_a_digest_that_is_not_its_columns_gives_the_full_rebuild() -> None:
    _, args, digests = _board(1)
    cols = list(range(40))
    for wrong in ("new", "old"):
        cache = BoardCache()
        cache.build(**args(cols), column_digests=[digests[i] for i in cols])
        given = [digests[i] for i in [*cols, 40]]
        if wrong == "new":  # checked against its column here
            given[-1] = BoardCache.column_digest(np.zeros(300), None)
        else:  # the caller says an old column changed
            given[3] = digests[41]
        got = cache.build(**args([*cols, 40]), column_digests=given)
        assert cache.last == "full", wrong
        _same(got, build_board(**args([*cols, 40])))
    # a full build whose digests are not its columns keeps none: the next build with digests is full too
    cache = BoardCache()
    cache.build(**args(cols), column_digests=[digests[i] for i in [*cols[1:], 41]])
    assert cache._state is not None and cache._state.column_digests is None
    cache.build(**args([*cols, 40]), column_digests=[digests[i] for i in [*cols, 40]])
    assert cache.last == "full"


def test_digests_on_one_build_and_not_the_next_give_the_full_rebuild() -> None:
    _, args, digests = _board(2)
    cols = list(range(40))
    cache = BoardCache()
    cache.build(**args(cols), column_digests=[digests[i] for i in cols])
    cache.build(**args([*cols, 40]))
    assert cache.last == "full"
    cache.build(**args([*cols, 40, 41]), column_digests=[digests[i] for i in [*cols, 40, 41]])
    assert cache.last == "full"
    got = cache.build(**args([*cols, 40, 41, 42]), column_digests=[digests[i] for i in [*cols, 40, 41, 42]])
    assert cache.last == "incremental"
    _same(got, build_board(**args([*cols, 40, 41, 42])))
    with pytest.raises(ValueError, match="one digest per entry"):
        cache.build(**args(cols), column_digests=digests[:3])


def test_the_jackknife_is_part_of_the_digest() -> None:
    x = np.arange(5.0)
    assert BoardCache.column_digest(x, None) != BoardCache.column_digest(x, np.zeros(3))
    assert BoardCache.column_digest(x, np.zeros(3)) != BoardCache.column_digest(x, np.zeros(3) + 1e-300)
    assert BoardCache.column_digest(x, None) == BoardCache.column_digest(x.copy(), None)


@pytest.mark.parametrize("with_digests", [True, False])
def test_the_deviations_buffer_is_kept_and_written_again(with_digests: bool) -> None:
    """Issue 24, eighth pass: the cache keeps the buffer of a board's deviations (with room for more
    entries) and the next board writes its deviations into it, with or without column digests (without,
    it holds the kept copy of the replicates in between); every board is still the full rebuild's."""
    rng, args, digests = _board(3)
    k = 40
    current = list(range(k))
    cache = BoardCache()

    def build(cols: list[int]) -> Any:
        extra = {"column_digests": [digests[i] for i in cols]} if with_digests else {}
        return cache.build(**args(cols), **extra)

    build(current)
    assert cache._state is not None and cache._state.theta_buffer is not None
    buffer = cache._state.theta_buffer
    assert buffer.shape[0] == 300 and buffer.shape[1] > k  # room for more entries
    if not with_digests:  # the copy of the replicates, in the deviations' buffer
        assert cache._state.theta is not None and np.shares_memory(cache._state.theta, buffer)
        assert np.array_equal(cache._state.theta, args(current)["replicates"])
    for new in range(k, k + 3):
        where = int(rng.integers(0, len(current) + 1))
        current = [*current[:where], new, *current[where:]]
        got = build(current)
        assert cache.last == "incremental"
        _same(got, build_board(**args(current)))
        assert cache._state is not None and cache._state.theta_buffer is buffer  # the same memory
    # a board of a different number of resamples: a fresh buffer, of its own height
    cache.clear()
    theta = args(current)["replicates"][:200]
    options = {key: value for key, value in args(current).items() if key != "replicates"}
    cache.build(**options, replicates=theta)
    assert cache._state is not None and cache._state.theta_buffer is not None
    assert cache._state.theta_buffer.shape[0] == 200


def test_an_appended_entry_computes_only_its_own_deviations(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 24, tenth pass: with column digests the kept buffer holds the previous board's deviations, so
    an entry appended after the previous ones subtracts its own column only (no pass over the B x K
    buffer); an entry inserted inside, or a build without digests, computes them all. Every board is the
    full rebuild's, so a stale column of deviations would show."""
    import stats.board_update as bu

    rng, args, digests = _board(5)
    k = 40
    passes: list[int] = []
    row_blocks = bu._row_blocks

    def counted(fn: Any, n: int, rows: int | None = None) -> None:
        if getattr(fn, "__name__", "") == "subtract":
            passes.append(n)
        row_blocks(fn, n, rows)

    monkeypatch.setattr(bu, "_row_blocks", counted)
    cache = BoardCache()
    current = list(range(k))
    cache.build(**args(current), column_digests=[digests[i] for i in current])
    assert len(passes) == 1  # the full build's
    for step, new in enumerate(range(k, k + 3)):
        where = len(current) if step != 1 else int(rng.integers(0, len(current)))  # the second inside
        current = [*current[:where], new, *current[where:]]
        got = cache.build(**args(current), column_digests=[digests[i] for i in current])
        assert cache.last == "incremental"
        _same(got, build_board(**args(current)))
        assert len(passes) == (1, 2, 2)[step]
    # without digests the buffer holds the kept replicates between builds: every column computed
    cache = BoardCache()
    current = list(range(k))
    cache.build(**args(current))
    cache.build(**args([*current, k]))
    assert cache.last == "incremental" and len(passes) == 4
