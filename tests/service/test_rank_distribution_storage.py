"""The snapshot's rank distribution stored by bands (issue 24): the same numbers as the K x K matrix."""

from __future__ import annotations

import json

import numpy as np

from leaderboard.rankings.distribution import RANK_BANDS, pack_rank_distribution, unpack_rank_distribution


def _shares(k: int, seed: int) -> np.ndarray:
    """A rank distribution like a board's: each row's mass in a band around its place, rounded as stored."""
    rng = np.random.default_rng(seed)
    m = np.zeros((k, k))
    for i in range(k):
        lo, hi = max(0, i - int(rng.integers(0, 4))), min(k, i + 1 + int(rng.integers(0, 4)))
        counts = rng.integers(1, 500, hi - lo).astype(float)
        counts[rng.random(hi - lo) < 0.2] = 0.0  # zeros inside the band stay where they are
        counts[i - lo] += 1.0
        m[i, lo:hi] = counts / counts.sum()
    return m.round(6)


def test_bands_give_back_the_matrix_to_the_bit_through_json() -> None:
    m = _shares(40, seed=3)
    stored = json.loads(json.dumps(pack_rank_distribution(m)))  # as the JSON field stores and reads it
    assert stored["format"] == RANK_BANDS and stored["size"] == [40, 40]
    back = unpack_rank_distribution(stored)
    assert back.shape == m.shape and back.dtype == np.float64
    assert np.array_equal(back, m)
    assert sum(len(s) for s in stored["shares"]) < m.size / 3  # the zeros outside each band are not stored


def test_rows_at_the_edges_and_a_single_entry() -> None:
    m = np.zeros((3, 3))
    m[0, 0] = 1.0
    m[1, [0, 2]] = [0.25, 0.75]  # a zero between two shares is kept inside the band
    m[2, 2] = 1.0
    stored = pack_rank_distribution(m)
    assert stored["first"] == [0, 0, 2]  # type: ignore[call-overload]
    assert stored["shares"] == [[1.0], [0.25, 0.0, 0.75], [1.0]]  # type: ignore[call-overload]
    assert np.array_equal(unpack_rank_distribution(stored), m)
    assert np.array_equal(unpack_rank_distribution(pack_rank_distribution([[1.0]])), [[1.0]])


def test_the_older_list_of_lists_and_an_empty_board_are_read() -> None:
    m = _shares(7, seed=5)
    assert np.array_equal(unpack_rank_distribution(m.tolist()), m)  # snapshots written before issue 24
    assert pack_rank_distribution(np.zeros((0, 0))) == []
    assert unpack_rank_distribution([]).size == 0
    assert unpack_rank_distribution(None).size == 0
