"""Intervals: published values, scipy as oracle, vectorisation and validation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from stats.intervals import (
    binomial_standard_error,
    bootstrap_bounds,
    clopper_pearson_interval,
    proportion_bounds,
    wald_interval,
    wilson_interval,
)


def test_wilson_845_of_1000() -> None:
    # Source: "Statistical Significance in Evaluation" (encyclopedia article), worked example:
    # 845 correct of 1,000, Wilson 95% interval [0.821, 0.866].
    iv = wilson_interval(845, 1000)
    assert (round(iv.low, 3), round(iv.high, 3)) == (0.821, 0.866)


def test_wald_845_of_1000() -> None:
    # Source: same worked example: Wald 95% interval [0.823, 0.867].
    iv = wald_interval(845, 1000)
    assert (round(iv.low, 3), round(iv.high, 3)) == (0.823, 0.867)


def test_binomial_standard_error_349_of_360() -> None:
    # Source: "Test once and study the errors" lesson: 349 correct of 360, standard error 0.0091.
    assert round(binomial_standard_error(349, 360), 4) == 0.0091


def _exact_coverage(method: str, p: float, n: int, confidence: float = 0.95) -> float:
    """Sum of Binomial(n, p) probabilities of the outcomes whose interval covers ``p``."""
    x = np.arange(n + 1)
    low, high = proportion_bounds(x, np.full(n + 1, n), method=method, confidence=confidence)
    covers = (low <= p) & (p <= high)
    return float(sps.binom.pmf(x, n, p)[covers].sum())


def test_exact_coverage_at_098_n20() -> None:
    # Source: encyclopedia article, exact coverage table: true accuracy 0.98, n = 20,
    # Wald 95% covers 0.332 of the time, Wilson 0.940.
    assert round(_exact_coverage("wald", 0.98, 20), 3) == 0.332
    assert round(_exact_coverage("wilson", 0.98, 20), 3) == 0.940


def test_clopper_pearson_is_conservative_at_098_n20() -> None:
    assert _exact_coverage("clopper_pearson", 0.98, 20) >= 0.95


@pytest.mark.parametrize(("x", "n"), [(0, 10), (3, 10), (10, 10), (845, 1000)])
def test_wilson_and_clopper_pearson_equal_scipy(x: int, n: int) -> None:
    ref = sps.binomtest(x, n)
    w = ref.proportion_ci(confidence_level=0.95, method="wilson")
    cp = ref.proportion_ci(confidence_level=0.95, method="exact")
    ours_w = wilson_interval(x, n)
    ours_cp = clopper_pearson_interval(x, n)
    assert (ours_w.low, ours_w.high) == pytest.approx((w.low, w.high), abs=1e-12)
    assert (ours_cp.low, ours_cp.high) == pytest.approx((cp.low, cp.high), abs=1e-12)


@pytest.mark.parametrize("method", ["percentile", "basic"])
def test_percentile_and_basic_equal_scipy_quantile_rule(rng, method: str) -> None:
    theta = rng.normal(size=(999, 3))
    point = np.array([0.1, -0.2, 0.0])
    low, high = bootstrap_bounds(theta, point=point, method=method, confidence=0.9)
    qlo, qhi = np.quantile(theta, [0.05, 0.95], axis=0)
    if method == "basic":
        qlo, qhi = 2 * point - qhi, 2 * point - qlo
    np.testing.assert_allclose(low, qlo, atol=1e-12)
    np.testing.assert_allclose(high, qhi, atol=1e-12)


def test_bootstrap_bounds_are_vectorised_over_entries(rng) -> None:
    theta = rng.normal(size=(500, 4))
    jack = rng.normal(size=(40, 4))
    point = theta.mean(axis=0)
    low, high = bootstrap_bounds(theta, point=point, method="bca", jackknife=jack)
    for k in range(4):
        lk, hk = bootstrap_bounds(theta[:, k], point=point[k], method="bca", jackknife=jack[:, k])
        assert (low[k], high[k]) == (lk[0], hk[0])


def test_bca_of_degenerate_replicates_is_the_point() -> None:
    theta = np.ones(100)
    low, high = bootstrap_bounds(theta, point=1.0, method="bca", jackknife=np.ones(20))
    assert (low[0], high[0]) == (1.0, 1.0)


def test_nan_replicates_give_nan_bounds() -> None:
    theta = np.r_[np.nan, np.arange(99.0)]
    low, high = bootstrap_bounds(theta, point=50.0, method="percentile")
    assert np.isnan(low[0]) and np.isnan(high[0])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: wilson_interval(5, 0), "`n` must be a positive integer."),
        (lambda: wilson_interval(11, 10), "`successes` must be an integer between 0 and `n`."),
        (
            lambda: wilson_interval(1, 10, confidence=1.5),
            "`confidence` must be a number strictly between 0 and 1, got 1.5.",
        ),
        (
            lambda: bootstrap_bounds(np.ones(10), point=1, method="bca"),
            "`jackknife` is required for `method` 'bca'.",
        ),
        (
            lambda: bootstrap_bounds(np.ones(10), point=1, method="student"),
            "`method` must be one of bca, percentile, basic",
        ),
        (
            lambda: bootstrap_bounds(np.ones(1), point=1, method="percentile"),
            r"`replicates` must have shape \(B,\) or \(B, K\) with B >= 2",
        ),
    ],
)
def test_validation(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()
