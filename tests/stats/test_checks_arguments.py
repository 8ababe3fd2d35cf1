"""The argument checks of stats.checks, shared by every public function (issue 13, point 4)."""

from __future__ import annotations

import numpy as np
import pytest

from stats.checks import (
    check_choice,
    check_count,
    check_jackknife,
    check_level,
    check_probabilities,
    check_replicates,
    check_statistics,
    check_vector,
    check_weights,
)
from stats.compare import bootstrap_p_values, paired_difference
from stats.compare_ranks import rank_distribution
from stats.intervals import bootstrap_bounds


@pytest.mark.parametrize("bad", [0, 1, 1.5, -0.1, float("nan"), True, "0.5", None])
def test_a_level_is_a_number_strictly_between_0_and_1(bad: object) -> None:
    with pytest.raises(ValueError, match="`alpha` must be a number strictly between 0 and 1"):
        check_level(bad, name="alpha")


def test_a_level_accepts_numpy_numbers() -> None:
    assert check_level(np.float32(0.25), name="alpha") == 0.25
    assert type(check_level(np.float64(0.95), name="confidence")) is float


@pytest.mark.parametrize("bad", [-1, 2.0, True, "3", None])
def test_a_count_is_an_integer_not_a_bool_or_float(bad: object) -> None:
    with pytest.raises(ValueError, match="`seed` must be an integer >= 0"):
        check_count(bad, name="seed")


def test_a_count_accepts_numpy_integers() -> None:
    assert check_count(np.int64(7), name="seed") == 7
    assert type(check_count(np.uint8(7), name="seed")) is int


def test_choice_names_the_allowed_values() -> None:
    assert check_choice("holm", ("holm", "bh"), name="correction") == "holm"
    with pytest.raises(ValueError, match="`correction` must be one of holm, bh, got 'bonferroni'"):
        check_choice("bonferroni", ("holm", "bh"), name="correction")


def test_probabilities_refuse_nan_and_values_outside_0_1() -> None:
    for bad in ([0.1, np.nan], [0.1, 1.2], [[0.1]]):
        with pytest.raises(ValueError, match="`p_values` must"):
            check_probabilities(bad)


def test_vectors_of_a_given_length_or_at_least_a_minimum() -> None:
    assert check_vector([1, 2, 3], name="point", length=3).dtype == np.float64
    with pytest.raises(ValueError, match=r"`point` must be a finite array of shape \(2,\)"):
        check_vector([1, 2, 3], name="point", length=2)
    with pytest.raises(ValueError, match="at least 2 finite run scores"):
        check_vector([1.0], name="runs", minimum=2, what="run scores")


def test_replicates_shape_and_finiteness() -> None:
    theta = np.zeros((5, 2))
    assert check_replicates(theta, k=2) is not None
    assert check_replicates(np.zeros(5), one_dimensional=True).shape == (5, 1)
    with pytest.raises(ValueError, match=r"must have shape \(B, 3\)"):
        check_replicates(theta, k=3)
    with pytest.raises(ValueError, match="B >= 2"):
        check_replicates(np.zeros((1, 2)))
    theta[0, 0] = np.nan
    with pytest.raises(ValueError, match="must be finite"):
        check_replicates(theta)
    assert np.isnan(check_replicates(theta, finite=False)[0, 0])  # an interval whose bounds become NaN


def test_jackknife_allows_undefined_values_but_not_infinite_ones() -> None:
    jack = np.array([[0.5, 0.4], [np.nan, 0.6], [0.7, 0.5]])
    assert np.isnan(check_jackknife(jack, k=2)[1, 0])
    assert check_jackknife([0.1, 0.2, 0.3], k=1).shape == (3, 1)
    with pytest.raises(ValueError, match=r"`jackknife` must have shape \(n_units, 3\)"):
        check_jackknife(jack, k=3)
    jack[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinite"):
        check_jackknife(jack, k=2)


def test_statistics_of_one_common_shape() -> None:
    out = check_statistics([np.ones(4), np.zeros(4)], one_dimensional=True)
    assert [a.shape for a in out] == [(4, 1), (4, 1)]
    with pytest.raises(ValueError, match="one common shape"):
        check_statistics([np.ones((4, 2)), np.ones((3, 2))])
    with pytest.raises(ValueError, match="must hold 3 arrays"):
        check_statistics([np.ones((4, 2))], k=3)
    with pytest.raises(ValueError, match="at least one entry"):
        check_statistics([])


def test_weights_are_counts_of_the_right_width() -> None:
    w = np.ones((3, 4), dtype=np.uint8)
    assert check_weights(w, n_items=4) is not None
    with pytest.raises(ValueError, match="N = 5 items"):
        check_weights(w, n_items=5)
    with pytest.raises(ValueError, match="non-negative integer counts"):
        check_weights(w.astype(float), n_items=4)
    assert check_weights(w.astype(float), n_items=4, counts=False).dtype == np.float64


def test_the_public_functions_give_the_same_message_for_the_same_mistake() -> None:
    theta = np.random.default_rng(0).normal(size=(50, 2))
    calls = [
        lambda: bootstrap_bounds(theta, point=[0, 0], method="percentile", confidence=1.5),
        lambda: rank_distribution(theta, higher_is_better=True, confidence=1.5),
        lambda: paired_difference(theta[:, 0], theta[:, 1], value_a=0, value_b=0, confidence=1.5),
    ]
    for call in calls:
        with pytest.raises(
            ValueError, match=r"^`confidence` must be a number strictly between 0 and 1, got 1\.5\.$"
        ):
            call()
    with pytest.raises(ValueError, match="`rule` must be one of percentile, basic, bca, got 'wilson'"):
        bootstrap_p_values(theta, [0, 0], rule="wilson")


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("where", [(0, 0), (700, 3), (1199, 1023)])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_large_replicates_are_checked_block_by_block(
    monkeypatch: pytest.MonkeyPatch, threads: str, where: tuple[int, int], bad: float
) -> None:
    """Above a million elements the finiteness check runs by blocks of rows on the board's threads (issue
    24, eighth pass): one bad element in the first, a middle or the last block is still refused, and a
    finite array still passes."""
    monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", threads)
    theta = np.random.default_rng(0).random((1200, 1024))
    assert check_replicates(theta) is not None
    theta[where] = bad
    with pytest.raises(ValueError, match="must be finite"):
        check_replicates(theta)
