"""The incremental board (stats.board_update) gives the full rebuild's board, number for number."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stats.board import build_board
from stats.board_update import BoardCache
from tests.stats.board_helpers import same_board as _same


def _replicates(rng: np.random.Generator, n: int, b: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy-like replicates on few items (many exact ties), entries of close skill."""
    skill = rng.uniform(0.55, 0.8, k)
    hard = rng.random(n)
    correct = ((0.5 * hard[:, None] + 0.5 * rng.random((n, k))) < skill).astype(float)
    counts = rng.multinomial(n, np.full(n, 1.0 / n), size=b).astype(float)
    theta = counts @ correct / n
    return theta, correct.mean(axis=0)


def _options(higher: bool, n: int, **extra: Any) -> dict[str, Any]:
    return dict(
        higher_is_better=higher,
        metric_name="accuracy",
        seed=3,
        interval="percentile",
        test="bootstrap",
        n_items=n,
        **extra,
    )


@pytest.mark.parametrize(("seed", "higher"), [(0, True), (1, False), (2, True), (3, False)])
def test_one_new_entry_gives_the_full_rebuilds_board(seed: int, higher: bool) -> None:
    rng = np.random.default_rng(seed)
    n, b, k = 80, 400, 110  # 5,995 pairs: the pruned max-t search, not the dense one
    theta, point = _replicates(rng, n, b, k + 4)
    if not higher:
        theta, point = 1 - theta, 1 - point
    names = [f"team-{i:03d}" for i in range(k + 4)]
    cache = BoardCache()
    first = list(rng.permutation(k))
    _same(
        cache.build(
            names=[names[i] for i in first],
            values=point[first],
            replicates=theta[:, first],
            **_options(higher, n),
        ),
        build_board(
            names=[names[i] for i in first],
            values=point[first],
            replicates=theta[:, first],
            **_options(higher, n),
        ),
    )
    assert cache.last == "full"
    current = first
    for new in range(k, k + 4):
        # the new entry anywhere in the input order; the best one as the last (a new leader)
        where = int(rng.integers(0, len(current) + 1))
        current = [*current[:where], new, *current[where:]]
        args: dict[str, Any] = {
            "names": [names[i] for i in current],
            "values": point[current],
            "replicates": theta[:, current],
        }
        got = cache.build(**args, **_options(higher, n))
        assert cache.last == "incremental"
        assert cache._state is not None and cache._state.se is not None  # the standard errors were extended
        # on any BLAS kernel (issue 24: under OpenBLAS's SkylakeX kernels the reuse was off)
        _same(got, build_board(**args, **_options(higher, n)))


def test_a_new_leader_and_bca_with_jackknife() -> None:
    rng = np.random.default_rng(7)
    n, b, k = 60, 300, 90
    theta, point = _replicates(rng, n, b, k + 1)
    lift = point.max() - point[k] + 0.05  # the new entry leads
    theta[:, k] += lift
    point[k] += lift
    jack = rng.normal(0.7, 0.01, (n, k + 1))
    names = [f"m{i}" for i in range(k + 1)]
    options: dict[str, Any] = {
        "higher_is_better": True,
        "metric_name": "accuracy",
        "seed": 0,
        "interval": "bca",
        "test": "bootstrap",
    }
    cache = BoardCache()
    cache.build(names=names[:k], values=point[:k], replicates=theta[:, :k], jackknife=jack[:, :k], **options)
    got = cache.build(names=names, values=point, replicates=theta, jackknife=jack, **options)
    assert cache.last == "incremental"
    want = build_board(names=names, values=point, replicates=theta, jackknife=jack, **options)
    _same(got, want)
    assert want.leader == "m90"


def test_anything_but_one_appended_entry_is_a_full_rebuild() -> None:
    rng = np.random.default_rng(11)
    n, b, k = 50, 200, 70
    theta, point = _replicates(rng, n, b, k + 2)
    names = [f"e{i}" for i in range(k + 2)]
    cache = BoardCache()
    cache.build(names=names[:k], values=point[:k], replicates=theta[:, :k], **_options(True, n))
    changed = theta[:, : k + 1].copy()
    changed[0, 3] += 0.01  # an old entry re-scored
    got = cache.build(names=names[: k + 1], values=point[: k + 1], replicates=changed, **_options(True, n))
    assert cache.last == "full"
    _same(
        got, build_board(names=names[: k + 1], values=point[: k + 1], replicates=changed, **_options(True, n))
    )
    got = cache.build(names=names, values=point, replicates=theta, **_options(True, n, alpha=0.1))
    assert cache.last == "full"  # two new entries (against the last board) and another alpha
    got = cache.build(names=names[:-1], values=point[:-1], replicates=theta[:, :-1], **_options(True, n))
    assert cache.last == "full"  # an entry removed
    _same(
        got, build_board(names=names[:-1], values=point[:-1], replicates=theta[:, :-1], **_options(True, n))
    )


def test_the_board_does_not_depend_on_the_memory_layout_of_the_replicates() -> None:
    rng = np.random.default_rng(4)
    n, b, k = 60, 300, 80
    theta, point = _replicates(rng, n, b, k + 5)
    args = dict(names=[f"x{i}" for i in range(k)], values=point[:k], **_options(True, n))
    row_major = np.ascontiguousarray(theta[:, :k])
    want = build_board(replicates=row_major, **args)
    _same(build_board(replicates=np.asfortranarray(row_major), **args), want)
    _same(build_board(replicates=theta[:, :k], **args), want)  # a view of the first columns


def test_the_gram_matrix_is_exact_in_any_product_shape() -> None:
    """The rounded deviations make every element of z^T z exact: a product of any columns, in any order and
    shape (matrix, matrix-vector, transposed copy), gives the full product's bits, and the rounding moves
    no deviation by more than 2^-(s+1) of its column's largest."""
    from stats.compare_ranks import _gram_bits, _gram_operand

    rng = np.random.default_rng(5)
    for b, k in [(400, 110), (1000, 200), (3000, 65)]:
        y = rng.normal(size=(b, k)) * rng.uniform(1e-4, 10, k) + rng.normal(size=k) * 1e-3
        y[:, 3] = y[:, 2]  # identical entries
        y[:, 4] = 0.0
        z = _gram_operand(y)
        full = z.T @ z
        s = _gram_bits(b)
        top = np.abs(y).max(axis=0)
        assert np.all(np.abs(z - y) <= top * 2.0 ** -(s + 1) * 2)
        assert np.array_equal(full, full.T)
        # the same elements from products of other shapes: a subset in shuffled order, one column, Fortran order
        cols = rng.permutation(k)[:33]
        sub = np.ascontiguousarray(z[:, cols])
        assert np.array_equal(sub.T @ sub, full[np.ix_(cols, cols)])
        assert np.array_equal(z.T @ np.ascontiguousarray(z[:, 7]), full[:, 7])
        zf = np.asfortranarray(z)
        assert np.array_equal(zf.T @ zf, full)
        # and the exact integer sums: an independent computation in Python integers
        scale = np.ldexp(1.0, s - np.frexp(np.abs(y).max(axis=0))[1])
        m = (z * scale).astype(np.int64)
        for i, j in [(0, 1), (2, 3), (5, 9), (4, 6)]:
            exact = int(m[:, i] @ m[:, j])
            assert full[i, j] == float(exact) / (scale[i] * scale[j])


@pytest.mark.parametrize("elements", [1, 997, 1 << 23])
def test_the_gram_matrix_in_row_blocks_is_the_one_product(
    monkeypatch: pytest.MonkeyPatch, elements: int
) -> None:
    """The Gram matrix summed over row blocks of the operand with syrk (issue 24: no second B x K array at
    K = 10,000), and its extension by one column summed the same way, are the one product's bits; so are
    the means."""
    from stats import compare_ranks as cr
    from stats.board_update import _extend_gram

    monkeypatch.setattr(cr, "_GRAM_BLOCK", elements)
    rng = np.random.default_rng(11)
    for b, k in [(400, 110), (1000, 65), (7, 3)]:
        y = rng.normal(size=(b, k)) * rng.uniform(1e-4, 10, k) + rng.normal(size=k) * 1e-3
        y[:, 3 % k] = y[:, 2 % k]
        y[:, 1] = 0.0
        z = cr._gram_operand(y)
        gram, means = cr._exact_gram(y)
        assert gram.flags.c_contiguous
        assert np.array_equal(gram, z.T @ z)
        assert np.array_equal(means, z.mean(axis=0))
        se, sd = cr._pair_standard_errors(y)
        want_se, want_sd = cr._standard_errors_from_gram(z.T @ z, z.mean(axis=0), b)
        assert np.array_equal(se, want_se) and np.array_equal(sd, want_sd)
        for new in (0, k // 2, k - 1):
            old = np.array([j for j in range(k) if j != new])
            previous = cr._gram_operand(y[:, old])
            extended, ext_means = _extend_gram(previous.T @ previous, y, old, new)
            assert np.array_equal(extended, z.T @ z)
            assert np.array_equal(ext_means, z.mean(axis=0))


def test_the_incremental_board_with_the_blas_kernel_of_the_machine() -> None:
    """States the BLAS kernel the suite ran under (CI runs tests/stats under two OpenBLAS kernels)."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    kernels = {i.get("architecture") for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"}
    rng = np.random.default_rng(9)
    theta, point = _replicates(rng, 50, 300, 91)
    names = [f"k{i}" for i in range(91)]
    cache = BoardCache()
    cache.build(names=names[:90], values=point[:90], replicates=theta[:, :90], **_options(True, 50))
    got = cache.build(names=names, values=point, replicates=theta, **_options(True, 50))
    assert cache.last == "incremental", kernels
    _same(got, build_board(names=names, values=point, replicates=theta, **_options(True, 50)))


@pytest.mark.parametrize("higher", [True, False])
def test_the_rank_counts_updated_for_a_new_entry_are_a_full_count(higher: bool) -> None:
    """The kept rank counts updated for one new entry (only the resamples where an old entry moves, or
    where a mostly moved one does not) are the integers of a full count, and the rank table's bounds,
    computed again only for the rows that changed, are the full table's: a new entry at the top, the
    bottom and in the middle, with exact ties, in both directions."""
    from stats.board_update import _add_rank_column, _rank_table_update
    from stats.compare_ranks import _rank_counts, _rank_table

    rng = np.random.default_rng(21)
    b, k = 500, 60
    theta = np.round(rng.normal(np.linspace(0, 1, k + 1), 0.3, size=(b, k + 1)), 1)  # many exact ties
    theta[:, 5] = theta[:, 6]  # identical entries
    for new_value, where in [(5.0, 0), (-5.0, k), (None, 17), (None, k // 2), (None, 0)]:
        x = theta.copy()
        if new_value is not None:
            x[:, -1] = new_value + 0.01 * rng.normal(size=b)
        if new_value is None and where == 0:
            x[:, -1] = x[:, 9]  # tied with an old entry in every resample
        order = list(range(k))
        order.insert(where, k)
        x = np.ascontiguousarray(x[:, order])
        old = np.array([i for i in range(k + 1) if i != where], dtype=np.intp)
        prev_counts, prev_ranks = _rank_counts(x[:, old], higher_is_better=higher, keep=True)
        assert prev_ranks is not None
        prev_table = _rank_table(prev_counts.copy(), b, 0.9)
        counts, ranks, redo, shifted = _add_rank_column(
            x, prev_ranks, prev_counts.astype(np.int16), old, where, higher_is_better=higher
        )
        want_counts, want_ranks = _rank_counts(x, higher_is_better=higher, keep=True)
        assert want_ranks is not None
        assert np.array_equal(ranks, want_ranks)
        assert np.array_equal(counts, want_counts)
        want = _rank_table(want_counts.copy(), b, 0.9, in_place=True)
        got = _rank_table_update(
            counts, b, 0.9, previous=(prev_table.low, prev_table.high), old=old, redo=redo, shifted=shifted
        )
        assert np.array_equal(got.probabilities, want.probabilities)
        assert np.array_equal(got.low, want.low) and np.array_equal(got.high, want.high)
        recounted, *_ = _add_rank_column(x, prev_ranks, None, old, where, higher_is_better=higher)
        assert np.array_equal(recounted, want_counts)  # a restored state recounts


@pytest.mark.parametrize(("k", "interval"), [(64, "percentile"), (65, "bca"), (129, "percentile")])
def test_the_kept_column_summaries_across_block_edges(k: int, interval: str) -> None:
    """The replicates' standard deviations and the differences to the leader are computed in blocks of 64
    columns, and numpy sums a block of one column pairwise: the kept ones are the full rebuild's when the
    new entry makes or ends such a block (K = 64 -> 65, 65 -> 66), at the start, in the middle and at the
    end, with the leader kept, with a constant (degenerate) column old and new, and with BCa intervals and
    p-values (the jackknife's columns)."""
    rng = np.random.default_rng(k)
    n, b = 40, 150
    theta, point = _replicates(rng, n, b, k + 1)
    theta[:, 3] = point[3]  # an old entry whose replicates are all equal
    jack = rng.normal(0.7, 0.01, (n, k + 1))
    for where in (0, k // 2, k):
        order = list(range(k))
        order.insert(where, k)
        x, v, jk = theta[:, order].copy(), point[order].copy(), jack[:, order].copy()
        if where == 0:
            x[:, 0] = v[0]  # the new entry degenerate too
        names = [f"c{i:03d}" for i in order]
        old = [i for i in range(k + 1) if i != where]

        def options(cols: list[int] | None, jk: np.ndarray = jk) -> dict[str, Any]:
            extra = {} if interval != "bca" else {"jackknife": jk if cols is None else jk[:, cols]}
            return {**_options(True, n, **extra), "interval": interval}

        cache = BoardCache()
        before = cache.build(
            names=[names[i] for i in old], values=v[old], replicates=x[:, old], **options(old)
        )
        got = cache.build(names=names, values=v, replicates=x, **options(None))
        assert cache.last == "incremental"
        want = build_board(names=names, values=v, replicates=x, **options(None))
        _same(got, want)
        assert want.leader == before.leader  # the kept differences to the leader were used
        assert [r.test_set_sd for r in got.rows] == [r.test_set_sd for r in want.rows]
        assert [r.p_value for r in got.rows] == [r.p_value for r in want.rows]


def test_the_kept_standard_errors_are_the_boards_own_read_only_table() -> None:
    """The cache keeps the board's table of standard errors (no second K x K table): it is read-only, and a
    board the caller still holds keeps its numbers after the next build."""
    rng = np.random.default_rng(12)
    n, b, k = 50, 200, 40
    theta, point = _replicates(rng, n, b, k + 2)
    names = [f"r{i}" for i in range(k + 2)]
    cache = BoardCache()
    first = cache.build(names=names[:k], values=point[:k], replicates=theta[:, :k], **_options(True, n))
    kept = first.pair_standard_errors.copy()
    assert not first.pair_standard_errors.flags.writeable
    with pytest.raises(ValueError):
        first.pair_standard_errors[0, 1] = 1.0
    for end in (k + 1, k + 2):
        cache.build(names=names[:end], values=point[:end], replicates=theta[:, :end], **_options(True, n))
        assert cache.last == "incremental"
    assert np.array_equal(first.pair_standard_errors, kept)


def test_the_board_does_not_depend_on_the_memory_layout_of_the_jackknife() -> None:
    """BCa's acceleration sums the jackknife's columns: a column-major jackknife (what ``a[:, cols]`` gives)
    is summed as a row-major one, so the board, and a kept board's intervals, do not depend on it."""
    rng = np.random.default_rng(6)
    n, b, k = 40, 200, 30
    theta, point = _replicates(rng, n, b, k)
    jack = rng.normal(0.7, 0.01, (n, k))
    args: dict[str, Any] = {"names": [f"j{i}" for i in range(k)], "values": point, "replicates": theta}
    options = {**_options(True, n), "interval": "bca"}
    want = build_board(jackknife=np.ascontiguousarray(jack), **args, **options)
    _same(build_board(jackknife=np.asfortranarray(jack), **args, **options), want)
