"""Tests of stats.compare_ranks: min ranks, the marginal rank distribution, max-t simultaneous sets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stats.compare_ranks import min_ranks, rank_distribution, simultaneous_ranks


def test_min_ranks_competition_ranking() -> None:
    assert min_ranks([0.9, 0.8, 0.9, 0.7], higher_is_better=True).tolist() == [1, 3, 1, 4]
    assert min_ranks([0.9, 0.8, 0.9, 0.7], higher_is_better=False).tolist() == [3, 2, 3, 1]


def test_min_ranks_rowwise_matches_definition() -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(0, 5, size=(50, 7)).astype(float)
    ranks = min_ranks(x, higher_is_better=True)
    expected = 1 + (x[:, None, :] > x[:, :, None]).sum(axis=2)  # 1 + #strictly better
    np.testing.assert_array_equal(ranks, expected)


def test_rank_distribution_of_a_clear_order() -> None:
    theta = np.tile([0.9, 0.5, 0.7], (20, 1)) + np.random.default_rng(1).normal(0, 1e-3, (20, 3))
    rd = rank_distribution(theta, higher_is_better=True)
    np.testing.assert_array_equal(rd.low, [1, 3, 2])
    np.testing.assert_array_equal(rd.high, [1, 3, 2])
    np.testing.assert_allclose(rd.probabilities.sum(axis=1), 1.0)
    assert rd.probabilities[1, 2] == 1.0


def test_rank_distribution_percentiles_of_a_coin_flip() -> None:
    # entry 0 beats entry 1 in 60 of 100 resamples: its rank is 1 with probability 0.6, so the 2.5%
    # quantile is 1 and the 97.5% quantile is 2.
    theta = np.zeros((100, 2))
    theta[:60, 0] = 1.0
    theta[60:, 1] = 1.0
    rd = rank_distribution(theta, higher_is_better=True)
    np.testing.assert_allclose(rd.probabilities, [[0.6, 0.4], [0.4, 0.6]])
    np.testing.assert_array_equal(rd.low, [1, 1])
    np.testing.assert_array_equal(rd.high, [2, 2])


@pytest.mark.parametrize("chunk", [1, 7, 30, 1 << 20])
def test_rank_distribution_in_chunks_of_resamples_counts_the_same(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The resamples are ranked in row chunks (memory O(chunk x K)); chunking must not change a count.
    import stats.compare_ranks as cr

    rng = np.random.default_rng(3)
    theta = rng.integers(0, 4, size=(53, 6)).astype(float)  # many ties across entries
    ranks = min_ranks(theta, higher_is_better=False)
    expected = np.stack([np.bincount(ranks[:, j] - 1, minlength=6) for j in range(6)]) / 53
    monkeypatch.setattr(cr, "_RANK_CHUNK_ELEMENTS", chunk)
    rd = rank_distribution(theta, higher_is_better=False)
    np.testing.assert_array_equal(rd.probabilities, expected)


def _brute_force_critical_value(theta: np.ndarray, point: np.ndarray, confidence: float) -> float:
    """Straightforward per-pair loop of the max-t statistic (an independent implementation)."""
    b, k = theta.shape
    maxima = np.zeros(b)
    for j in range(k):
        for i in range(j + 1, k):
            d = theta[:, j] - theta[:, i]
            se = d.std(ddof=1)
            if se > 0:
                maxima = np.maximum(maxima, np.abs(d - (point[j] - point[i])) / se)
    return float(np.quantile(maxima, confidence, method="higher"))


def test_single_step_critical_value_matches_a_per_pair_loop() -> None:
    rng = np.random.default_rng(3)
    point = np.array([0.80, 0.81, 0.83, 0.90, 0.60])
    theta = point + rng.normal(0, 0.01, (2000, 5)) + rng.normal(0, 0.01, (2000, 1))
    result = simultaneous_ranks(theta, point, higher_is_better=True, stepdown=False)
    assert result.critical_value == pytest.approx(_brute_force_critical_value(theta, point, 0.95), rel=1e-5)
    # the max over 10 pairs of |N(0,1)| lies between the single (1.96) and Bonferroni (2.81) values
    assert 1.96 < result.critical_value < 2.81


def test_rank_bounds_follow_the_separated_pairs() -> None:
    rng = np.random.default_rng(4)
    point = np.array([0.50, 0.70, 0.71, 0.90])
    theta = point + rng.normal(0, 0.01, (3000, 4))
    result = simultaneous_ranks(theta, point, higher_is_better=True)
    # 0.90 is alone at the top, 0.70/0.71 cannot be told apart, 0.50 is last
    np.testing.assert_array_equal(result.lower, [4, 2, 2, 1])
    np.testing.assert_array_equal(result.upper, [4, 3, 3, 1])
    np.testing.assert_array_equal(result.best, [False, False, False, True])
    lower_is_better = simultaneous_ranks(-theta, -point, higher_is_better=False)
    np.testing.assert_array_equal(lower_is_better.lower, result.lower)


def test_stepdown_separates_at_least_as_much_as_single_step() -> None:
    rng = np.random.default_rng(5)
    point = np.linspace(0.7, 0.8, 12)
    theta = point + rng.normal(0, 0.01, (2000, 12))
    single = simultaneous_ranks(theta, point, higher_is_better=True, stepdown=False)
    step = simultaneous_ranks(theta, point, higher_is_better=True, stepdown=True)
    assert np.all(step.better >= single.better)
    assert np.all(step.upper - step.lower <= single.upper - single.lower)
    assert step.critical_value <= single.critical_value


def test_identical_entries_get_identical_sets() -> None:
    rng = np.random.default_rng(6)
    base = 0.8 + rng.normal(0, 0.01, (1000, 3))
    theta = np.column_stack([base, base[:, 1]])
    point = np.array([0.8, 0.81, 0.79, 0.81])
    result = simultaneous_ranks(theta, point, higher_is_better=True)
    assert result.standard_errors[1, 3] == 0.0
    assert not result.better[1, 3] and not result.better[3, 1]
    assert result.lower[1] == result.lower[3] and result.upper[1] == result.upper[3]


@given(st.integers(0, 2**31), st.permutations(list(range(6))))
@settings(max_examples=25, deadline=None)
def test_order_of_entries_never_changes_a_number(seed: int, perm: list[int]) -> None:
    rng = np.random.default_rng(seed)
    point = rng.normal(0.8, 0.01, 6)
    theta = point + rng.normal(0, 0.01, (400, 6)) + rng.normal(0, 0.01, (400, 1))
    base = simultaneous_ranks(theta, point, higher_is_better=True)
    moved = simultaneous_ranks(theta[:, perm], point[perm], higher_is_better=True)
    np.testing.assert_array_equal(moved.lower, base.lower[perm])
    np.testing.assert_array_equal(moved.upper, base.upper[perm])
    assert moved.critical_value == pytest.approx(base.critical_value, rel=1e-6)
    rd_base = rank_distribution(theta, higher_is_better=True)
    rd_moved = rank_distribution(theta[:, perm], higher_is_better=True)
    np.testing.assert_array_equal(rd_moved.probabilities, rd_base.probabilities[perm])


def test_validation_names_the_parameter() -> None:
    with pytest.raises(ValueError, match="`theta` must have shape"):
        rank_distribution(np.ones(5), higher_is_better=True)
    with pytest.raises(ValueError, match="`point` must be a finite array of shape"):
        simultaneous_ranks(np.ones((5, 2)), [1.0], higher_is_better=True)
    with pytest.raises(ValueError, match="`confidence` must be a number strictly between 0 and 1"):
        simultaneous_ranks(np.ones((5, 2)), [1.0, 1.0], higher_is_better=True, confidence=95)
