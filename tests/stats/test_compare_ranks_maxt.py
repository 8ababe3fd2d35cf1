"""The max-t simultaneous sets at scale (issue 14) and their float64 decision (issue 11, point 5).

- Small boards against an exact rational reference: every statistic of the max-t step-down procedure is
  a ratio of rationals, so comparing squares decides every pair exactly. The float32 computation flipped
  decisions in a few percent of such boards, mostly anti-conservatively (a tie of |t| with the critical
  value read as "separated").
- The pruned search (only the (pair, resample) statistics that can reach the critical value) against the
  dense float64 computation of every pair and resample: the same critical value to the last bit and the
  same sets, also with nearly identical and identical entries.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import stats.compare_ranks as cr
from stats.compare_ranks import simultaneous_ranks
from stats.resampling import resample_weights


def _small_board(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Accuracy of K entries on N items, replicates from the task's W: (counts, correct, point, N)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 7))
    k = int(rng.integers(2, 6))
    b = int(rng.integers(20, 120))
    correct = (rng.random((n, k)) < rng.uniform(0.2, 0.9, k)).astype(np.int64)
    w = resample_weights(n, resamples=b, seed=seed).astype(np.int64)
    counts = w @ correct  # (B, K) number right per resample
    return counts, correct, correct.sum(axis=0), n


def _exact_reference(counts: np.ndarray, right: np.ndarray, n: int, confidence: float) -> np.ndarray:
    """The step-down max-t procedure in exact rational arithmetic (squares of all statistics)."""
    b, k = counts.shape
    x = [[Fraction(int(counts[i, j]), n) for j in range(k)] for i in range(b)]
    p = [Fraction(int(right[j]), n) for j in range(k)]
    mean = [sum(x[i][j] for i in range(b)) / b for j in range(k)]
    se2 = {}
    for j in range(k):
        for m in range(j + 1, k):
            se2[j, m] = sum(((x[i][j] - x[i][m]) - (mean[j] - mean[m])) ** 2 for i in range(b)) / (b - 1)
    separated = {pair for pair, v in se2.items() if v == 0 and p[pair[0]] != p[pair[1]]}
    h = math.ceil((b - 1) * Fraction(confidence).limit_denominator(10**6))
    while True:
        active = [pair for pair, v in se2.items() if v > 0 and pair not in separated]
        if not active:
            break
        maxima = []
        for i in range(b):
            maxima.append(max(((x[i][j] - p[j]) - (x[i][m] - p[m])) ** 2 / se2[j, m] for j, m in active))
        c2 = sorted(maxima)[h]
        newly = {(j, m) for j, m in active if (p[j] - p[m]) ** 2 / se2[j, m] > c2}
        if not newly:
            break
        separated |= newly
    better = np.zeros((k, k), dtype=bool)
    for j, m in separated:
        if p[j] > p[m]:
            better[j, m] = True
        else:
            better[m, j] = True
    return better


def test_small_boards_decide_exactly_like_rational_arithmetic() -> None:
    # In float32 (the code before issue 11) about 2.5% of such boards got a different best set; in
    # float64 with the tie rule every one of them matches the exact computation.
    mismatches = []
    for seed in range(160):
        counts, _, right, n = _small_board(seed)
        point = right / n
        result = simultaneous_ranks(counts / n, point, higher_is_better=True)
        expected = _exact_reference(counts, right, n, 0.95)
        if not np.array_equal(result.better, expected):
            mismatches.append(seed)
    assert mismatches == []


def _correlated_board(seed: int, k: int, b: int, duplicates: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    point = np.sort(rng.uniform(0.78, 0.82, k))
    common = rng.normal(0, 0.006, (b, 1))
    theta = point + common + rng.normal(0, 0.004, (b, k))
    if duplicates:
        theta[:, 1] = theta[:, 0] + rng.normal(0, 1e-5, b)  # nearly identical entries: a special pair
        theta[:, 3] = theta[:, 2]  # identical entries: se = 0
        point[3] = point[2]
    return theta, point


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("duplicates", [False, True])
@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_pruned_search_equals_the_dense_computation(
    seed: int, duplicates: bool, confidence: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    theta, point = _correlated_board(seed, 45, 1500, duplicates)
    dense = simultaneous_ranks(theta, point, higher_is_better=True, confidence=confidence)  # 990 pairs
    monkeypatch.setattr(cr, "_DENSE_MAX_PAIRS", 0)
    monkeypatch.setattr(cr, "_DENSE_PER_ENTRY", 0)
    pruned = simultaneous_ranks(theta, point, higher_is_better=True, confidence=confidence)
    assert pruned.critical_value == dense.critical_value  # bit for bit
    assert pruned.steps == dense.steps
    np.testing.assert_array_equal(pruned.better, dense.better)
    np.testing.assert_array_equal(pruned.lower, dense.lower)
    np.testing.assert_array_equal(pruned.upper, dense.upper)


def test_the_exceedance_list_holds_exactly_the_statistics_above_its_level() -> None:
    theta, point = _correlated_board(7, 30, 800, True)
    y = theta - point
    se, sd = cr._pair_standard_errors(y)
    search = cr._Exceedances(y, se, sd)
    level = 2.5
    search.search(level, np.triu(se > 0, 1))
    found = {
        (int(j), int(m), int(r)) for j, m, r in zip(search.pair_j, search.pair_k, search.rows, strict=True)
    }
    expected = set()
    for j in range(30):
        for m in range(j + 1, 30):
            if se[j, m] > 0:
                z = np.abs(y[:, j] - y[:, m]) / se[j, m]
                expected |= {(j, m, int(r)) for r in np.flatnonzero(z >= level)}
    assert found == expected
    assert len(found) == search.z.size  # no (pair, resample) twice


def test_lowering_the_level_when_the_first_guess_is_too_high(monkeypatch: pytest.MonkeyPatch) -> None:
    # Nearly all pairs separated after the first step: the second step's critical value falls far below
    # the first search level, which must be lowered (and the result stay exact).
    rng = np.random.default_rng(11)
    point = np.linspace(0.5, 0.9, 60)
    theta = point + rng.normal(0, 0.01, (600, 60))
    dense = simultaneous_ranks(theta, point, higher_is_better=True)
    monkeypatch.setattr(cr, "_DENSE_MAX_PAIRS", 0)
    monkeypatch.setattr(cr, "_DENSE_PER_ENTRY", 0)
    levels: list[float] = []
    original = cr._Exceedances.search

    def spy(self: cr._Exceedances, level: float, active: np.ndarray, *, covers_all: bool = False) -> None:
        levels.append(level)
        original(self, level, active, covers_all=covers_all)

    monkeypatch.setattr(cr._Exceedances, "search", spy)
    pruned = simultaneous_ranks(theta, point, higher_is_better=True)
    assert len(levels) >= 2 and levels == sorted(levels, reverse=True)
    assert pruned.critical_value == dense.critical_value
    np.testing.assert_array_equal(pruned.better, dense.better)


def test_too_many_exceedances_fall_back_to_the_dense_computation(monkeypatch: pytest.MonkeyPatch) -> None:
    theta, point = _correlated_board(3, 45, 1500, True)
    dense = simultaneous_ranks(theta, point, higher_is_better=True)
    monkeypatch.setattr(cr, "_DENSE_MAX_PAIRS", 0)
    monkeypatch.setattr(cr, "_DENSE_PER_ENTRY", 0)
    monkeypatch.setattr(cr, "_MAX_EXCEEDANCES", 5)
    capped = simultaneous_ranks(theta, point, higher_is_better=True)
    assert capped.critical_value == dense.critical_value
    np.testing.assert_array_equal(capped.better, dense.better)


def test_later_steps_search_only_the_pairs_still_active(monkeypatch: pytest.MonkeyPatch) -> None:
    # Entries far apart: after the first step few pairs remain, with a low critical value. The search of
    # a later step must hold only those pairs' exceedances, not every pair's at the low level.
    rng = np.random.default_rng(12)
    point = np.linspace(0.5, 0.9, 70)
    theta = point + rng.normal(0, 0.01, (800, 70))
    dense = simultaneous_ranks(theta, point, higher_is_better=True)
    monkeypatch.setattr(cr, "_DENSE_MAX_PAIRS", 0)
    monkeypatch.setattr(cr, "_DENSE_PER_ENTRY", 0)
    # (searches down to _COVER_FRACTION of the first level list every pair for the next board; below it
    # only the active pairs: that is what is checked here)
    monkeypatch.setattr(cr, "_COVER_FRACTION", 1.0)
    sizes: list[tuple[int, int]] = []
    original = cr._Exceedances.search

    def spy(self: cr._Exceedances, level: float, active: np.ndarray, *, covers_all: bool = False) -> None:
        # a search near the first level lists every pair (issue 24: the next board's start); far below
        # it, only the active ones
        original(self, level, active, covers_all=covers_all)
        assert np.all(active[self.pair_j, self.pair_k])
        sizes.append((int(active.sum()), self.z.size))

    monkeypatch.setattr(cr._Exceedances, "search", spy)
    pruned = simultaneous_ranks(theta, point, higher_is_better=True)
    assert len(sizes) >= 2 and sizes[-1][0] < sizes[0][0]
    assert pruned.critical_value == dense.critical_value
    np.testing.assert_array_equal(pruned.better, dense.better)


def test_the_plans_mask_is_mirrored_by_blocks_as_the_one_transposed_or() -> None:
    """``_mirror_upper`` (issue 24: by blocks of rows, no K x K temporary) gives ``mask | mask.T`` for a
    mask above its diagonal, across several blocks and a short last one."""
    rng = np.random.default_rng(8)
    for c in (1, 255, 256, 600):
        mask = np.triu(rng.random((c, c)) < 0.3, 1)
        want = mask | mask.T
        cr._mirror_upper(mask)
        assert np.array_equal(mask, want)


def test_the_separated_pairs_are_made_symmetric_by_blocks() -> None:
    """``_or_symmetric`` (issue 24: no K x K temporary) is ``target |= upper | upper.T``."""
    rng = np.random.default_rng(9)
    for c in (1, 3, 256, 601):
        upper = np.triu(rng.random((c, c)) < 0.2, 1)
        target = rng.random((c, c)) < 0.1
        target |= target.T
        want = target | upper | upper.T
        cr._or_symmetric(target, upper)
        assert np.array_equal(target, want)
