"""The incremental board's state exported by one process and restored by another (issue 24): the board
built from a restored state is the full rebuild's, and a restored state is used only for the same inputs."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest

from stats.board import build_board
from stats.board_update import BoardCache, _from_lower_triangle, _lower_triangle
from stats.metrics import get_metric
from tests.stats.test_board_update import _options, _replicates, _same


def _through_bytes(data: dict[str, Any]) -> dict[str, Any]:
    """The export as another process reads it: every array copied through ``np.save`` (no pickle)."""

    def copy(x: Any) -> Any:
        if isinstance(x, np.ndarray):
            buffer = io.BytesIO()
            np.save(buffer, x, allow_pickle=False)
            buffer.seek(0)
            return np.load(buffer, allow_pickle=False)
        if isinstance(x, dict):
            return {k: copy(v) for k, v in x.items()}
        if isinstance(x, list):
            return [copy(v) for v in x]
        return x

    return copy(data)


@pytest.mark.parametrize(("seed", "higher", "interval"), [(0, True, "percentile"), (1, False, "bca")])
def test_a_restored_state_gives_the_full_rebuilds_board(seed: int, higher: bool, interval: str) -> None:
    rng = np.random.default_rng(seed)
    n, b, k = 80, 400, 90
    theta, point = _replicates(rng, n, b, k + 3)
    if not higher:
        theta, point = 1 - theta, 1 - point
    jack = rng.random((n, k + 3))
    names = [f"team-{i:03d}" for i in range(k + 3)]
    metric = get_metric("accuracy")

    def options(cols: list[int]) -> dict[str, Any]:
        return {
            **_options(higher, n, jackknife=jack[:, cols], finalize=metric.finalize, zero_one=True),
            "interval": interval,
        }

    current = list(range(k))
    cache = BoardCache()
    cache.build(
        names=[names[i] for i in current],
        values=point[current],
        replicates=theta[:, current],
        **options(current),
    )
    for new in range(k, k + 3):
        exported = cache.export()
        assert exported is not None
        cache = BoardCache.restore(_through_bytes(exported))  # a fresh process: nothing but the export
        where = int(rng.integers(0, len(current) + 1))
        current = [*current[:where], new, *current[where:]]
        args: dict[str, Any] = {
            "names": [names[i] for i in current],
            "values": point[current],
            "replicates": theta[:, current],
        }
        got = cache.build(**args, **options(current))
        assert cache.last == "incremental"
        _same(got, build_board(**args, **options(current)))


def test_a_restored_state_is_used_only_for_the_same_replicates_and_options() -> None:
    rng = np.random.default_rng(5)
    n, b, k = 60, 300, 30
    theta, point = _replicates(rng, n, b, k + 1)
    names = [f"e{i}" for i in range(k + 1)]
    cache = BoardCache()
    cache.build(names=names[:k], values=point[:k], replicates=theta[:, :k], **_options(True, n))
    exported = _through_bytes(cache.export() or {})
    args: dict[str, Any] = {"names": names, "values": point, "replicates": theta}

    changed = theta.copy()
    changed[7, 3] += 1e-12  # one replicate of an old entry differs in its last bits
    restored = BoardCache.restore(exported)
    got = restored.build(names=names, values=point, replicates=changed, **_options(True, n))
    assert restored.last == "full"
    _same(got, build_board(names=names, values=point, replicates=changed, **_options(True, n)))

    restored = BoardCache.restore(exported)
    restored.build(**args, **{**_options(True, n), "seed": 4})  # another option
    assert restored.last == "full"

    restored = BoardCache.restore(exported)
    restored.build(**args, **_options(True, n))
    assert restored.last == "incremental"


def test_options_that_cannot_be_told_apart_by_value_are_not_exported() -> None:
    rng = np.random.default_rng(2)
    theta, point = _replicates(rng, 40, 200, 6)
    cache = BoardCache()
    cache.build(
        names=[str(i) for i in range(6)], values=point, replicates=theta,
        **_options(True, 40, finalize=lambda s: s[..., 0] / s[..., -1]),
    )  # fmt: skip
    assert cache.export() is None  # a lambda: another process's lambda could compute anything


def test_the_gram_matrix_is_stored_as_its_lower_triangle() -> None:
    rng = np.random.default_rng(0)
    a = rng.random((7, 7))
    g = a @ a.T
    g = (g + g.T) / 2
    t = _lower_triangle(g)
    assert t.shape == (28,)
    assert np.array_equal(_from_lower_triangle(t, 7), g)
    with pytest.raises(ValueError, match="lower triangle"):
        _from_lower_triangle(t[:-1], 7)


def test_a_state_exported_with_the_gram_matrix_is_still_updated_exactly() -> None:
    """An export of before issue 24's fifth pass held the Gram matrix, not the standard errors: restored,
    its next board extends the Gram matrix as before and is the full rebuild's; the state it leaves holds
    the standard errors (and the rank counts, recounted from the ranks, which are not exported)."""
    from stats.compare_ranks import _exact_gram

    rng = np.random.default_rng(5)
    n, b, k = 60, 300, 80
    theta, point = _replicates(rng, n, b, k + 2)
    names = [f"e{i}" for i in range(k + 2)]
    cache = BoardCache()
    cache.build(names=names[:k], values=point[:k], replicates=theta[:, :k], **_options(True, n))
    exported = cache.export()
    assert exported is not None and exported["se"] is not None and "counts" not in exported
    gram, _ = _exact_gram(theta[:, :k] - point[:k])
    for key in ("se", "var", "means", "exponents"):
        del exported[key]
    exported["gram"] = _lower_triangle(gram)
    restored = BoardCache.restore(_through_bytes(exported))
    args: dict[str, Any] = {"values": point[: k + 1], "replicates": theta[:, : k + 1]}
    got = restored.build(names=names[: k + 1], **args, **_options(True, n))
    assert restored.last == "incremental"
    _same(got, build_board(names=names[: k + 1], **args, **_options(True, n)))
    state = restored._state
    assert state is not None and state.se is not None and state.gram is None and state.counts is not None
    got = restored.build(names=names, values=point, replicates=theta, **_options(True, n))
    assert restored.last == "incremental"
    _same(got, build_board(names=names, values=point, replicates=theta, **_options(True, n)))
