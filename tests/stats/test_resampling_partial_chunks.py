"""A worker's share of the chunks of W (a fanned-out scoring) is drawn alone when the per-host cache is
absent (not the whole matrix for a few chunks) and read from the cache when present: the same bytes."""

from __future__ import annotations

import numpy as np

from stats.resampling import iter_unit_weight_chunks, resample_design


def test_a_part_of_the_chunks_is_drawn_alone_without_a_cache_and_read_from_it_with_one(tmp_path) -> None:  # type: ignore[no-untyped-def]
    design = resample_design(300, resamples=1000, seed=5, strata=np.arange(300) % 3)
    part = dict(iter_unit_weight_chunks(design, chunks=range(1, 3), cache_dir=tmp_path))
    assert not list(tmp_path.iterdir())  # no cache built for two chunks of four
    whole = dict(iter_unit_weight_chunks(design, cache_dir=tmp_path))  # builds the cache
    assert len(list(tmp_path.glob("weights-*.npy"))) == 1
    assert sorted(part) == [1, 2]
    for c in (1, 2):
        assert part[c].dtype == np.uint8 and part[c].tobytes() == whole[c].tobytes()
    cached = dict(iter_unit_weight_chunks(design, chunks=range(3, 4), cache_dir=tmp_path))
    assert cached[3].tobytes() == whole[3].tobytes() and cached[3].shape == (1000 - 3 * 256, 300)
