"""The resample-weight matrix W: determinism, fixed chunking, designs, and the on-disk cache."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stats import resampling
from stats.resampling import (
    CHUNK_RESAMPLES,
    resample_design,
    resample_weights,
    unit_weights,
)


def test_shape_dtype_and_row_sums() -> None:
    w = resample_weights(50, resamples=600, seed=3)
    assert w.shape == (600, 50)
    assert w.dtype == np.uint8
    np.testing.assert_array_equal(w.sum(axis=1), 50)


def test_deterministic_and_seed_dependent() -> None:
    a = resample_weights(40, resamples=300, seed=1)
    np.testing.assert_array_equal(a, resample_weights(40, resamples=300, seed=1))
    assert not np.array_equal(a, resample_weights(40, resamples=300, seed=2))


def test_counts_are_multinomial() -> None:
    # each count is Binomial(N, 1/N): mean 1, variance 1 - 1/N
    w = resample_weights(200, resamples=5000, seed=0).astype(float)
    assert w.mean() == pytest.approx(1.0)
    assert w.var() == pytest.approx(1 - 1 / 200, abs=0.01)


def test_fewer_resamples_are_a_prefix() -> None:
    big = resample_weights(30, resamples=1000, seed=5)
    np.testing.assert_array_equal(resample_weights(30, resamples=300, seed=5), big[:300])


@settings(max_examples=25, deadline=None)
@given(
    resamples=st.integers(1, 3 * CHUNK_RESAMPLES + 7),
    data=st.data(),
)
def test_any_chunk_range_equals_the_slice_of_the_whole(resamples: int, data: st.DataObject) -> None:
    whole = resample_weights(17, resamples=resamples, seed=11)
    n_chunks = resampling.chunk_count(resamples)
    start = data.draw(st.integers(0, n_chunks - 1))
    stop = data.draw(st.integers(start + 1, n_chunks))
    part = resample_weights(17, resamples=resamples, seed=11, chunks=range(start, stop))
    rows = slice(start * CHUNK_RESAMPLES, min(stop * CHUNK_RESAMPLES, resamples))
    np.testing.assert_array_equal(part, whole[rows])


def test_chunk_seed_is_the_spawned_child() -> None:
    # chunk c is drawn from SeedSequence(seed).spawn(...)[c]: the documented, portable derivation
    child = np.random.SeedSequence(9).spawn(3)[2]
    direct = np.random.SeedSequence(9, spawn_key=(2,))
    assert child.generate_state(4).tolist() == direct.generate_state(4).tolist()


def test_known_first_values_pin_the_algorithm() -> None:
    # Changing the drawing algorithm silently would unpair stored replicates from new ones.
    w = resample_weights(8, resamples=2, seed=0)
    assert w.tolist() == PINNED_SEED0_N8_B2


# Recorded from the first implementation (ALGORITHM "pcg64-seedsequence-lemire64-chunk256-v1").
PINNED_SEED0_N8_B2 = [[1, 1, 1, 1, 0, 2, 1, 1], [2, 0, 1, 0, 1, 1, 1, 2]]


def test_grouped_items_share_their_group_count() -> None:
    groups = np.array(["b", "a", "b", "c", "a", "a"])
    w = resample_weights(6, resamples=400, seed=2, groups=groups)
    for g in "abc":
        cols = w[:, groups == g]
        assert (cols == cols[:, :1]).all()
    design = resample_design(6, resamples=400, seed=2, groups=groups)
    np.testing.assert_array_equal(unit_weights(design).sum(axis=1), 3)


def test_stratified_keeps_stratum_sizes() -> None:
    strata = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 2])
    w = resample_weights(10, resamples=500, seed=4, strata=strata)
    for s, size in [(0, 3), (1, 2), (2, 5)]:
        np.testing.assert_array_equal(w[:, strata == s].sum(axis=1), size)


def test_strata_must_be_constant_within_groups() -> None:
    with pytest.raises(
        ValueError, match=re.escape("`strata` must be constant within each group of `groups`.")
    ):
        resample_design(3, resamples=10, seed=0, groups=[1, 1, 2], strata=[0, 1, 1])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_items": 0}, "`n_items` must be an integer >= 1, got 0."),
        ({"resamples": 0}, "`resamples` must be an integer >= 1"),
        ({"resamples": 2.5}, "`resamples` must be an integer >= 1"),
        ({"seed": -1}, "`seed` must be an integer >= 0, got -1."),
        ({"groups": [1, 2]}, r"`groups` must hold one value per item \(5\), got shape \(2,\)."),
    ],
)
def test_validation_names_the_parameter(kwargs: dict, message: str) -> None:
    args = {"n_items": 5, "resamples": 10, "seed": 0} | kwargs
    n = args.pop("n_items")
    with pytest.raises(ValueError, match=message):
        resample_weights(n, **args)


def test_chunks_must_be_in_range() -> None:
    with pytest.raises(ValueError, match=r"`chunks` must be a non-empty range within range\(0, 2\)."):
        resample_weights(5, resamples=300, seed=0, chunks=range(1, 3))


def test_overflow_of_uint8_is_detected(monkeypatch: pytest.MonkeyPatch) -> None:
    # force every draw onto unit 0: 300 draws of one unit cannot be stored as uint8
    monkeypatch.setattr(resampling, "_bounded", lambda raw, bound: np.zeros_like(raw))
    with pytest.raises(OverflowError, match="drawn more than 255 times"):
        resample_weights(300, resamples=1, seed=0)


def test_cache_roundtrip_and_bit_identical_rebuild(tmp_path) -> None:
    kwargs = {"resamples": 700, "seed": 8, "groups": np.arange(40) // 3}
    fresh = resample_weights(40, **kwargs)
    cached = resample_weights(40, cache_dir=tmp_path, **kwargs)
    files = list(tmp_path.glob("weights-*.npy"))
    assert len(files) == 1
    np.testing.assert_array_equal(cached, fresh)
    # the file is a plain .npy of uint8 counts per unit, loadable without pickle
    stored = np.load(files[0], allow_pickle=False)
    assert stored.dtype == np.uint8 and stored.shape == (700, 14)
    # absent -> rebuilt bit-identically
    files[0].unlink()
    np.testing.assert_array_equal(resample_weights(40, cache_dir=tmp_path, **kwargs), fresh)
    # corrupted -> rebuilt
    files[0].write_bytes(b"not a numpy file")
    np.testing.assert_array_equal(resample_weights(40, cache_dir=tmp_path, **kwargs), fresh)
    # a chunk range read from the cache is the same slice
    part = resample_weights(40, cache_dir=tmp_path, chunks=range(1, 3), **kwargs)
    np.testing.assert_array_equal(part, fresh[256:700])


def test_cache_key_depends_on_every_parameter() -> None:
    base = resample_design(10, resamples=10, seed=0)
    keys = {
        base.key(),
        resample_design(10, resamples=11, seed=0).key(),
        resample_design(10, resamples=10, seed=1).key(),
        resample_design(11, resamples=10, seed=0).key(),
        resample_design(10, resamples=10, seed=0, groups=np.arange(10) // 2).key(),
        resample_design(10, resamples=10, seed=0, strata=np.arange(10) % 2).key(),
    }
    assert len(keys) == 6


# --- issue 14: W drawn in bounded sub-blocks, the same bytes -------------------------------------------


@pytest.mark.parametrize(
    ("n_items", "strata"),
    [(1, None), (7, None), (5_000, None), (70_001, None), (300, "three"), (2_000, "many")],
)
@pytest.mark.parametrize("block", [1, 64, 1 << 17])
def test_weights_drawn_in_sub_blocks_have_the_bytes_of_the_single_draw(
    n_items: int, strata: str | None, block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The draw of a chunk is split into row blocks of at most `_DRAW_BLOCK` draws (bounded memory at
    # N = 1,000,000); the bytes must equal the drawing before issue 14, which drew the chunk at once.
    import stats.resampling as rs
    from tests.benchmarks._baseline import draw_chunk_v0

    monkeypatch.setattr(rs, "_DRAW_BLOCK", block)
    labels = None
    if strata == "three":
        labels = np.arange(n_items) % 3
    elif strata == "many":
        labels = np.random.default_rng(0).integers(0, 40, n_items)
    design = rs.resample_design(n_items, resamples=300, seed=12345, strata=labels)
    for chunk in range(design.n_chunks):
        np.testing.assert_array_equal(rs._draw_chunk(design, chunk), draw_chunk_v0(design, chunk))


def test_the_low_word_carry_of_the_bounded_draw_is_exact() -> None:
    # floor(raw * bound / 2**64) against Python's integers, on raws chosen to hit the carry of the low word
    from stats.resampling import _bounded

    rng = np.random.default_rng(4)
    for bound in (1, 2, 3, 10_000, 999_983, 2**31 + 11, 2**32 - 1):
        hi = rng.integers(0, 2**32, 2000, dtype=np.uint64)
        # hi * bound mod 2**32 close to 2**32: the low word decides
        lo = rng.integers(0, 2**32, 2000, dtype=np.uint64)
        raw = (hi << np.uint64(32)) | lo
        raw = np.concatenate([raw, np.array([2**64 - 1, 0, 2**63, 2**32 - 1], dtype=np.uint64)])
        expected = [int(r) * bound >> 64 for r in raw.tolist()]
        assert _bounded(raw.copy(), bound).tolist() == expected
