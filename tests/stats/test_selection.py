"""The leader's selection-adjusted estimate and intervals (stats.selection), against exact values."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats as sps

from stats.selection import (
    bootstrap_max_cutoff,
    column_sd,
    inference_on_winners,
    leader_adjusted,
    normal_max_cutoff,
    truncated_normal_cdf,
)
from tests.benchmarks.simulate_selection import selection_coverage

# Issue 23: two independent entries x = (1.0, 0.5), sd 0.25 each, Andrews, Kitagawa & McCloskey (2024)
# normal model: conditional estimate 0.992336, interval [0.407470, 1.489834]; hybrid with beta 0.005 and
# the exact cutoff 3.022962: 0.992758, [0.413227, 1.495195].
X = [1.0, 0.5]
COV = np.diag([0.0625, 0.0625])


def test_conditional_matches_exact_values() -> None:
    r = inference_on_winners(X, COV, cutoff=3.022962)
    assert r.leader == 0
    assert r.conditional_estimate == pytest.approx(0.992336, abs=1e-6)
    assert r.conditional_interval.low == pytest.approx(0.407470, abs=1e-6)
    assert r.conditional_interval.high == pytest.approx(1.489834, abs=1e-6)
    assert not (r.conditional_interval.low_unbounded or r.conditional_interval.high_unbounded)


def test_hybrid_matches_exact_values() -> None:
    r = inference_on_winners(X, COV, beta=0.005, cutoff=3.022962)
    assert r.hybrid_estimate == pytest.approx(0.992758, abs=1e-6)
    assert r.hybrid_interval.low == pytest.approx(0.413227, abs=1e-6)
    assert r.hybrid_interval.high == pytest.approx(1.495195, abs=1e-6)


def test_exact_cutoff_of_two_independent_entries() -> None:
    # P(max(|Z1|, |Z2|) <= c) = (2 Phi(c) - 1)^2 = 0.995
    assert normal_max_cutoff(COV, 0.005) == pytest.approx(3.022962, abs=1e-6)
    c = normal_max_cutoff(COV, 0.005)
    assert (2 * sps.norm.cdf(c) - 1) ** 2 == pytest.approx(0.995, abs=1e-12)


def test_exact_cutoff_with_correlation_against_a_direct_integral() -> None:
    corr = np.array([[1.0, 0.6], [0.6, 1.0]])
    c = normal_max_cutoff(corr, 0.01)
    mvn = sps.multivariate_normal(mean=[0, 0], cov=corr)
    # box probability by inclusion-exclusion of the bivariate CDF (an independent route)
    box = mvn.cdf([c, c]) - mvn.cdf([-c, c]) - mvn.cdf([c, -c]) + mvn.cdf([-c, -c])
    assert box == pytest.approx(0.99, abs=2e-4)
    assert c < normal_max_cutoff(np.eye(2), 0.01)  # correlation lowers the maximum's quantile


def test_bootstrap_cutoff_from_an_exact_normal_max_distribution() -> None:
    # replicates drawn from the exact normal law of the two entries: the bootstrap's studentised maximum
    # then has the exact law of max(|Z1|, |Z2|), and its 0.995 quantile converges to 3.022962 (the sampling
    # error of that quantile with 2 million draws is about 0.003)
    rng = np.random.default_rng(2026)
    reps = rng.normal(X, 0.25, size=(2_000_000, 2))
    c = bootstrap_max_cutoff(reps, X, 0.005)
    assert c == pytest.approx(3.022962, abs=0.012)
    # deterministic: the same replicates (the same seed) give the same cutoff
    assert bootstrap_max_cutoff(reps, X, 0.005) == c


def test_truncated_cdf_against_scipy_and_in_the_far_tail() -> None:
    for t, below, above in [(0.3, 1.2, 0.7), (2.5, 0.5, np.inf), (-3.0, np.inf, 0.4), (0.0, 2.0, 2.0)]:
        a, b = t - below, t + above
        expected = (sps.norm.cdf(t) - sps.norm.cdf(a)) / (sps.norm.cdf(b) - sps.norm.cdf(a))
        assert truncated_normal_cdf(t, below, above) == pytest.approx(expected, rel=1e-10)
    # far tail: X | X >= a is about a + Exp(a); P(X <= a + d) = 1 - exp(-a d) for large a
    assert truncated_normal_cdf(1e8, 1e-8, np.inf) == pytest.approx(1 - np.exp(-1.0), rel=1e-6)
    assert truncated_normal_cdf(-1e8, np.inf, 1e-8) == pytest.approx(np.exp(-1.0), rel=1e-6)


def test_close_race_gives_finite_numbers_never_nan() -> None:
    for gap in [1e-3, 1e-6, 1e-9]:
        r = inference_on_winners([1.0, 1.0 - gap], COV)
        for v in (r.conditional_estimate, r.conditional_interval.low, r.conditional_interval.high):
            assert np.isfinite(v)
        assert r.conditional_interval.low < r.conditional_estimate < r.conditional_interval.high
        lo, hi = r.hybrid_interval.low, r.hybrid_interval.high
        assert 1.0 - r.cutoff * 0.25 - 1e-12 <= lo < r.hybrid_estimate < hi <= 1.0 + r.cutoff * 0.25
    # the closer the race, the further the conditional lower end (the winner's curse is strongest)
    lows = [inference_on_winners([1.0, 1.0 - g], COV).conditional_interval.low for g in (0.1, 0.01, 0.001)]
    assert lows[0] > lows[1] > lows[2]


def test_an_unreachable_end_is_flagged_and_the_estimates_still_given() -> None:
    # a margin of 1e-20 sd is still resolved: a far but finite interval
    far = inference_on_winners([1e-20, 0.0], np.eye(2))
    assert np.isfinite(far.conditional_interval.low) and far.conditional_interval.low < -1e19
    # a margin of the smallest subnormal is not: both ends flagged, the estimates still given
    r = inference_on_winners([5e-324, 0.0], np.eye(2))
    assert r.conditional_interval.low_unbounded and r.conditional_interval.low == -np.inf
    assert np.isfinite(r.hybrid_estimate) and np.isfinite(r.hybrid_interval.low)
    assert r.conditional_interval.as_dict()["low"] is None


def test_exact_tie_without_resolution_is_refused() -> None:
    with pytest.raises(ValueError, match="resolution"):
        inference_on_winners([1.0, 1.0], COV)
    r = inference_on_winners([1.0, 1.0], COV, resolution=0.01)
    assert np.isfinite(r.conditional_estimate) and r.hybrid_interval.high > r.hybrid_interval.low


def test_single_entry_is_the_plain_normal_interval() -> None:
    r = inference_on_winners([0.7], [[0.01]])
    assert r.conditional_estimate == pytest.approx(0.7, abs=1e-12)
    assert r.conditional_interval.low == pytest.approx(0.7 - 1.959964 * 0.1, abs=1e-6)


def _replicates(seed: int = 3, b: int = 4000) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    values = np.array([0.81, 0.80, 0.76, 0.70])
    cov = 1e-4 * np.array([[1.0, 0.3, 0.2, 0.0], [0.3, 1.2, 0.1, 0.0], [0.2, 0.1, 0.9, 0.0], [0, 0, 0, 1.0]])
    return values, rng.multivariate_normal(values, cov, size=b)


def test_leader_adjusted_equals_the_normal_model_with_bootstrap_moments() -> None:
    values, theta = _replicates()
    adj = leader_adjusted(values, theta, higher_is_better=True, resolution=0.0, metric="accuracy", seed=7)
    cov = np.cov(theta, rowvar=False)
    r = inference_on_winners(values, cov, cutoff=bootstrap_max_cutoff(theta, values), resolution=0.0)
    assert adj.conditional_estimate == pytest.approx(r.conditional_estimate, rel=1e-9)
    assert adj.hybrid_interval.low == pytest.approx(r.hybrid_interval.low, rel=1e-9)
    assert adj.hybrid_interval.high == pytest.approx(r.hybrid_interval.high, rel=1e-9)
    # bootstrap bias correction, computed directly
    boot_max = np.mean([row.max() for row in theta])
    assert adj.bias_corrected == pytest.approx(2 * values.max() - boot_max, rel=1e-12)
    assert adj.bootstrap_bias > 0 and adj.bias_corrected < adj.value
    assert adj.signature.method == "akm-hybrid" and dict(adj.signature.extra)["selection_beta"] == "0.005"
    json.dumps(adj.as_dict(), allow_nan=False)


def test_lower_is_better_mirrors_higher_is_better() -> None:
    values, theta = _replicates()
    up = leader_adjusted(values, theta, higher_is_better=True)
    down = leader_adjusted(-values, -theta, higher_is_better=False)
    assert down.leader == up.leader
    assert down.hybrid_estimate == pytest.approx(-up.hybrid_estimate, rel=1e-12)
    assert down.hybrid_interval.low == pytest.approx(-up.hybrid_interval.high, rel=1e-12)
    assert down.conditional_interval.high == pytest.approx(-up.conditional_interval.low, rel=1e-12)
    assert down.bias_corrected == pytest.approx(-up.bias_corrected, rel=1e-12)
    assert down.naive_interval.low < down.value < down.naive_interval.high


def test_tie_for_first_is_named_broken_by_name_and_order_free() -> None:
    rng = np.random.default_rng(5)
    n, b = 400, 2000
    correct = (rng.random((n, 3)) < [0.8, 0.8, 0.7]).astype(float)
    correct[:, 1] = np.roll(correct[:, 0], 7)  # same accuracy as entry 0, different items
    weights = rng.multinomial(n, np.full(n, 1 / n), size=b)
    theta = weights @ correct / n
    values = correct.mean(axis=0)
    assert values[0] == values[1]
    names = ["zeta", "alpha", "gamma"]
    adj = leader_adjusted(values, theta, higher_is_better=True, names=names)
    assert adj.leader == "alpha" and adj.tied == ("alpha", "zeta")
    assert adj.resolution == pytest.approx(1 / n, rel=1e-9)  # a proportion's step
    for v in (
        adj.conditional_estimate,
        adj.hybrid_estimate,
        adj.hybrid_interval.low,
        adj.hybrid_interval.high,
    ):
        assert np.isfinite(v)
    perm = [2, 0, 1]
    again = leader_adjusted(
        values[perm], theta[:, perm], higher_is_better=True, names=[names[i] for i in perm]
    )
    assert again.leader == "alpha" and again.hybrid_estimate == pytest.approx(adj.hybrid_estimate, rel=1e-12)


def test_refusals() -> None:
    values, theta = _replicates()
    with pytest.raises(ValueError, match="beta"):
        leader_adjusted(values, theta, higher_is_better=True, beta=0.06)
    theta[:, 0] = values[0]
    with pytest.raises(ValueError, match="equal"):
        leader_adjusted(values, theta, higher_is_better=True)


@pytest.mark.slow
def test_adjusted_intervals_cover_the_leader_where_the_naive_one_does_not() -> None:
    # docs/comparisons.md: python -m tests.benchmarks.simulate_selection --repeats 400
    close = selection_coverage(50, "close", repeats=150, seed=11)
    assert close.naive < 0.5  # the winner's curse: the naive interval misses the leader's true value
    assert close.hybrid >= 0.9 and close.conditional >= 0.9
    assert close.error_naive > close.error_bias_corrected > 0  # the correction removes part of the bias
    clear = selection_coverage(10, "clear", repeats=150, seed=11)
    assert clear.hybrid >= 0.9 and abs(clear.error_hybrid) < 0.005


def test_a_board_of_one_entry_is_the_plain_normal_interval() -> None:
    theta = np.random.default_rng(0).normal(0.8, 0.01, size=(2000, 1))
    adj = leader_adjusted([0.8], theta, higher_is_better=True)
    assert adj.conditional_estimate == pytest.approx(0.8, abs=1e-12)
    assert adj.conditional_interval.low == pytest.approx(adj.naive_interval.low, rel=1e-12)
    assert adj.hybrid_interval.low <= adj.conditional_interval.low  # the hybrid spends beta on its tails


def test_truncated_cdf_of_a_vanishing_interval_is_linear_not_nan() -> None:
    assert truncated_normal_cdf(2.0, 1e-320, 3e-320) == pytest.approx(0.25, rel=1e-3)
    assert truncated_normal_cdf(0.0, 1e-320, 1e-320) == pytest.approx(0.5, rel=1e-3)


@pytest.mark.slow
def test_conditional_interval_is_exact_in_the_normal_model() -> None:
    # AKM (2024), Prop. 3: given the selection, the conditional interval covers the winner's mean with
    # probability 1 - alpha; the hybrid's coverage is at least 1 - alpha. Three correlated entries, a
    # close race, 3,000 draws (Monte Carlo SE 0.004).
    rng = np.random.default_rng(9)
    mu = np.array([0.0, 0.1, 0.2])
    cov = np.array([[1.0, 0.3, 0.1], [0.3, 1.0, 0.3], [0.1, 0.3, 1.0]])
    cutoff = normal_max_cutoff(cov, 0.005)
    hits = np.zeros(2)
    draws = 3000
    for x in rng.multivariate_normal(mu, cov, size=draws):
        r = inference_on_winners(x, cov, cutoff=cutoff)
        target = mu[r.leader]
        hits[0] += r.conditional_interval.low <= target <= r.conditional_interval.high
        hits[1] += r.hybrid_interval.low <= target <= r.hybrid_interval.high
    assert abs(hits[0] / draws - 0.95) < 0.013
    assert hits[1] / draws > 0.94


@pytest.mark.parametrize(("b", "k"), [(2, 2), (1000, 3), (10_000, 64), (4001, 257)])
def test_column_sd_is_the_bits_of_the_vectorised_std(b: int, k: int) -> None:
    # issue 24: an entry's standard deviation kept with its score must be its column of the board's std
    rng = np.random.default_rng(b + k)
    columns = [rng.normal(0.7, 0.01, b).round(4) for _ in range(k)]
    theta = np.column_stack(columns)
    full = theta.std(axis=0, ddof=1)
    kept = np.array([column_sd(c) for c in columns])
    assert kept.tobytes() == full.tobytes()


def test_kept_standard_deviations_give_the_same_adjustment() -> None:
    rng = np.random.default_rng(3)
    columns = [rng.normal(m, 0.01, 5000).round(4) for m in (0.80, 0.795, 0.79, 0.70)]
    columns.append(np.full(5000, 0.75))  # constant: left out of the studentised maximum
    theta = np.column_stack(columns)
    values = theta.mean(axis=0)
    sd = [column_sd(c) for c in columns]
    assert bootstrap_max_cutoff(theta, values, sd=sd) == bootstrap_max_cutoff(theta, values)
    assert bootstrap_max_cutoff(theta[:, :4], values[:4], sd=sd[:4]) == bootstrap_max_cutoff(
        theta[:, :4], values[:4]
    )
    for hib in (True, False):
        a = leader_adjusted(values, theta, higher_is_better=hib, sd=sd).as_dict()
        b = leader_adjusted(values, theta, higher_is_better=hib).as_dict()
        assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_stack_columns_is_column_stack() -> None:
    from leaderboard.rankings.board import stack_columns

    rng = np.random.default_rng(5)
    columns = [rng.normal(size=1000) for _ in range(7)]
    for cols in (columns, columns[:1]):
        a, b = stack_columns(cols), np.column_stack(cols)
        assert a.flags.c_contiguous and a.shape == b.shape and a.tobytes() == b.tobytes()
    with pytest.raises(ValueError):
        stack_columns([np.zeros(3), np.zeros(4)])
