"""Tests of stats.compare: McNemar, paired gap, power, multiplicity, bootstrap p-values, randomization.

Expected numbers come from published worked examples (sources in comments)
or from independent oracles (scipy, brute-force enumeration), never from the code under test.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from stats.compare import (
    adjust_p_values,
    benjamini_hochberg,
    bootstrap_p_values,
    holm,
    items_needed,
    items_needed_mcnemar,
    mcnemar_exact,
    paired_difference,
    paired_gap,
    paired_randomization,
    randomization_weights,
)
from stats.metrics import get_metric

# --------------------------------------------------------------------------------------------------
# McNemar


def test_mcnemar_encyclopedia_example() -> None:
    # "Statistical Significance in Evaluation" (encyclopedia article), worked example on 1,000 images:
    # only A right 44, only B right 28 -> exact two-sided p = 0.0764.
    assert float(mcnemar_exact(44, 28)) == pytest.approx(0.0764, abs=5e-5)


def test_mcnemar_digits_example() -> None:
    # "Machine Learning, Taught Through What Breaks", episode 1 (UCI digits, n = 1,797, 3-NN vs RBF
    # SVM): only A right 20, only B right 9 -> p = 0.061.
    assert float(mcnemar_exact(20, 9)) == pytest.approx(0.061, abs=5e-4)


@pytest.mark.parametrize(("b", "c"), [(0, 0), (0, 5), (3, 3), (7, 2), (30, 45), (1, 100)])
def test_mcnemar_equals_scipy_binomtest(b: int, c: int) -> None:
    expected = 1.0 if b + c == 0 else sps.binomtest(b, b + c, 0.5).pvalue
    assert float(mcnemar_exact(b, c)) == pytest.approx(expected, rel=1e-12)


def test_mcnemar_is_vectorised_and_symmetric() -> None:
    p = mcnemar_exact([44, 28, 20], [28, 44, 9])
    assert p[0] == p[1]
    assert p.shape == (3,)


def test_mcnemar_rejects_negative_counts() -> None:
    with pytest.raises(ValueError, match="`only_a` must contain non-negative integer counts"):
        mcnemar_exact(-1, 3)


# --------------------------------------------------------------------------------------------------
# paired standard error of a gap


def test_paired_gap_lesson_example() -> None:
    # "Test once and study the errors" lesson: both right 345, only A 4, only B 2, both wrong 9
    # (n = 360): gap 0.0056, paired SE 0.0068, unpaired SE 0.0134.
    g = paired_gap(both=345, only_a=4, only_b=2, neither=9)
    assert g.n == 360
    assert g.gap == pytest.approx(0.0056, abs=5e-5)
    assert g.standard_error == pytest.approx(0.0068, abs=5e-5)
    assert g.unpaired_standard_error == pytest.approx(0.0134, abs=5e-5)


def test_paired_gap_rejects_empty_table() -> None:
    with pytest.raises(ValueError, match="must not be empty"):
        paired_gap(both=0, only_a=0, only_b=0, neither=0)
    with pytest.raises(ValueError, match="`only_b` must be an integer >= 0"):
        paired_gap(both=1, only_a=0, only_b=-2, neither=0)


# --------------------------------------------------------------------------------------------------
# power


def test_items_needed_connor_digits_example() -> None:
    # Episode 1 of "Machine Learning, Taught Through What Breaks"; Connor (1987) as given in
    # "Significance Testing for NLP", Proposition 4: gap 11/1797, discordant 29/1797 -> 3,379.
    assert items_needed_mcnemar(gap=11 / 1797, discordant=29 / 1797) == 3379


def test_items_needed_simple_form_digits_example() -> None:
    # Same source: (z_a/2 + z_b)^2 p_d / gap^2 -> about 3,381.
    assert items_needed_mcnemar(gap=11 / 1797, discordant=29 / 1797, form="simple") == 3381


def test_items_needed_from_standard_error_matches_the_simple_form() -> None:
    # For a 0/1 metric the bootstrap SE of the paired gap is about sqrt(p_d / N): the SE route must
    # reproduce the published 3,381 of the simple form.
    se = np.sqrt((29 / 1797) / 1797)
    assert items_needed(gap=[11 / 1797], standard_error=[se], n_items=1797) == [3381]


def test_items_needed_zero_gap_is_none() -> None:
    assert items_needed_mcnemar(gap=0.0, discordant=0.01) is None
    assert items_needed(gap=[0.0, 0.01], standard_error=[0.01, np.nan], n_items=100) == [None, None]


def test_items_needed_validation() -> None:
    with pytest.raises(ValueError, match="`alpha` must be a number strictly between 0 and 1"):
        items_needed_mcnemar(gap=0.1, discordant=0.2, alpha=1.5)
    with pytest.raises(ValueError, match="`discordant` must be at least"):
        items_needed_mcnemar(gap=0.5, discordant=0.1)
    with pytest.raises(ValueError, match="`n_items` must be an integer >= 1"):
        items_needed(gap=[0.1], standard_error=[0.1], n_items=0)


# --------------------------------------------------------------------------------------------------
# multiplicity

# Benjamini & Hochberg (1995), Section 4.2: the 15 p-values of Neuhaus et al.'s thrombolysis study.
# At level 0.05 the BH procedure rejects the four smallest; Bonferroni-type procedures (Holm) only
# the three smallest.
BH1995 = [
    0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344,
    0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.0000,
]  # fmt: skip


def test_bh_paper_example_rejects_four() -> None:
    assert int((benjamini_hochberg(BH1995) <= 0.05).sum()) == 4


def test_holm_paper_example_rejects_three() -> None:
    assert int((holm(BH1995) <= 0.05).sum()) == 3


def test_hand_computed_small_family() -> None:
    # Sorted 0.005, 0.01, 0.03, 0.04 (m = 4). Holm: 4*0.005 = 0.02, 3*0.01 = 0.03, 2*0.03 = 0.06,
    # max(0.06, 1*0.04) = 0.06. BH: 0.04*4/4 = 0.04, min(0.04, 0.03*4/3) = 0.04, 0.01*4/2 = 0.02,
    # min(0.02, 0.005*4) = 0.02.
    p = [0.01, 0.04, 0.03, 0.005]
    np.testing.assert_allclose(holm(p), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(benjamini_hochberg(p), [0.02, 0.04, 0.04, 0.02])
    np.testing.assert_allclose(adjust_p_values(p, correction="none"), p)


def test_bh_equals_scipy_false_discovery_control() -> None:
    rng = np.random.default_rng(3)
    p = rng.random(40) ** 3
    np.testing.assert_allclose(benjamini_hochberg(p), sps.false_discovery_control(p), rtol=1e-12)


probabilities = st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30)


@given(probabilities)
@settings(max_examples=200, deadline=None)
def test_adjusted_p_values_properties(p: list[float]) -> None:
    raw = np.asarray(p)
    order = np.argsort(raw, kind="stable")
    for adjusted in (holm(raw), benjamini_hochberg(raw)):
        assert np.all(adjusted >= raw - 1e-15)
        assert np.all(adjusted <= 1.0)
        assert np.all(np.diff(adjusted[order]) >= -1e-15)  # monotone in the raw p-values
    assert np.all(holm(raw) >= benjamini_hochberg(raw) - 1e-15)


def test_adjust_rejects_unknown_correction_and_bad_p() -> None:
    with pytest.raises(ValueError, match="`correction` must be one of"):
        adjust_p_values([0.1], correction="bonferroni")
    with pytest.raises(ValueError, match=r"`p_values` must contain only probabilities in \[0, 1\]"):
        holm([0.1, 1.2])


# --------------------------------------------------------------------------------------------------
# bootstrap p-values


def test_percentile_rule_counts_resamples_on_each_side() -> None:
    # 19 replicates: 2 at or below 0, 17 above -> p = 2 (1 + 2) / (1 + 19) = 0.3.
    d = np.array([-0.2, 0.0] + [0.1 * i for i in range(1, 18)])
    assert float(bootstrap_p_values(d, 0.5, rule="percentile")) == pytest.approx(0.3)


def test_basic_rule_is_twice_the_observed_gap() -> None:
    # d = 1; centred replicates D* - 1 >= 1 means D* >= 2 ("twice the gap", Berg-Kirkpatrick et al.
    # 2012): 3 of 9 replicates (2.0, 2.5, 3.0); the other tail, D* <= 2, holds 7. p = 2 (1 + 3) / 10.
    # The percentile rule counts D* <= 0 instead: 1 replicate, p = 2 (1 + 1) / 10.
    d = np.array([0.0, 0.5, 1.0, 1.2, 1.4, 1.6, 2.0, 2.5, 3.0])
    assert float(bootstrap_p_values(d, 1.0, rule="basic")) == pytest.approx(2 * (1 + 3) / 10)
    assert float(bootstrap_p_values(d, 1.0, rule="percentile")) == pytest.approx(2 * (1 + 1) / 10)
    assert float(bootstrap_p_values(-d, -1.0, rule="basic")) == pytest.approx(2 * (1 + 3) / 10)


def test_rules_differ_when_the_distribution_is_skewed() -> None:
    rng = np.random.default_rng(5)
    d = rng.exponential(1.0, 4000) - 0.3
    p_pct = float(bootstrap_p_values(d, 0.7, rule="percentile"))
    p_basic = float(bootstrap_p_values(d, 0.7, rule="basic"))
    assert p_pct != pytest.approx(p_basic, abs=0.01)


def test_bca_rule_reduces_to_percentile_without_bias_or_skew() -> None:
    # symmetric replicates around the point (z0 = 0) and a symmetric jackknife (a = 0): the BCa
    # interval is the percentile interval, so both p-values agree up to the +1 of Phipson-Smyth.
    rng = np.random.default_rng(6)
    half = rng.normal(0.0, 1.0, 5000)
    d = 0.4 + np.concatenate([half, -half])
    jack = np.concatenate([np.linspace(-1, 1, 51)])
    p_bca = float(bootstrap_p_values(d, 0.4, rule="bca", jackknife=jack))
    p_pct = float(bootstrap_p_values(d, 0.4, rule="percentile"))
    assert p_bca == pytest.approx(p_pct, abs=2e-3)


def test_identical_entries_get_p_one() -> None:
    zeros = np.zeros((100, 2))
    for rule in ("percentile", "basic"):
        np.testing.assert_array_equal(bootstrap_p_values(zeros, [0.0, 0.0], rule=rule), [1.0, 1.0])


def test_bootstrap_p_validation() -> None:
    with pytest.raises(ValueError, match="`jackknife` is required"):
        bootstrap_p_values(np.ones(5), 1.0, rule="bca")
    with pytest.raises(ValueError, match="`rule` must be one of"):
        bootstrap_p_values(np.ones(5), 1.0, rule="studentized")


# --------------------------------------------------------------------------------------------------
# paired approximate randomization

ACCURACY = get_metric("accuracy")
MACRO_F1 = get_metric("macro_f1")


def _brute_force_p(sa: np.ndarray, sb: np.ndarray, finalize) -> float:  # type: ignore[no-untyped-def]
    """Exact randomization p-value by enumerating all 2^N swaps (an independent oracle)."""
    n = sa.shape[0]
    observed = abs(float(finalize(sa.sum(0))) - float(finalize(sb.sum(0))))
    hits = 0
    for z in itertools.product((0, 1), repeat=n):
        zc = np.asarray(z, dtype=float)[:, None]
        a = (sa * (1 - zc) + sb * zc).sum(0)
        b = (sb * (1 - zc) + sa * zc).sum(0)
        hits += abs(float(finalize(a)) - float(finalize(b))) >= observed - 1e-12
    return hits / 2**n


def test_randomization_agrees_with_exact_enumeration_macro_f1() -> None:
    truth = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2, 1])
    pred_a = np.array([0, 1, 2, 0, 1, 1, 0, 1, 2, 1])
    pred_b = np.array([0, 2, 2, 1, 1, 1, 2, 0, 2, 1])
    sa = MACRO_F1.item_statistics(truth, pred_a, labels=[0, 1, 2])
    sb = MACRO_F1.item_statistics(truth, pred_b, labels=[0, 1, 2])
    exact = _brute_force_p(sa, sb, MACRO_F1.finalize)
    r = 20_000
    result = paired_randomization([sa, sb], finalize=MACRO_F1.finalize, reference=0, randomizations=r)
    mc_se = np.sqrt(exact * (1 - exact) / r)
    assert float(result.p_values[1]) == pytest.approx(exact, abs=4 * mc_se + 1 / r)
    assert result.p_values[0] == 1.0


def test_randomization_agrees_with_scipy_permutation_test() -> None:
    # scipy's paired ("samples") permutation test swaps x_i and y_i: the same null. The items are
    # passed as indices so the same finalize of pooled statistics is the statistic.
    rng = np.random.default_rng(11)
    n = 60
    truth = rng.integers(0, 3, n)
    pred_a = np.where(rng.random(n) < 0.7, truth, rng.integers(0, 3, n))
    pred_b = np.where(rng.random(n) < 0.55, truth, rng.integers(0, 3, n))
    sa = MACRO_F1.item_statistics(truth, pred_a, labels=[0, 1, 2])
    sb = MACRO_F1.item_statistics(truth, pred_b, labels=[0, 1, 2])
    stacked = np.concatenate([sa, sb])

    def statistic(ia: np.ndarray, ib: np.ndarray) -> float:
        return abs(
            float(MACRO_F1.finalize(stacked[ia].sum(0))) - float(MACRO_F1.finalize(stacked[ib].sum(0)))
        )

    r = 4000
    oracle = sps.permutation_test(
        (np.arange(n), np.arange(n) + n),
        statistic,
        permutation_type="samples",
        n_resamples=r,
        alternative="greater",
        vectorized=False,
        rng=np.random.default_rng(1),
    ).pvalue
    ours = float(
        paired_randomization([sb, sa], finalize=MACRO_F1.finalize, reference=1, randomizations=r).p_values[0]
    )
    # two independent Monte Carlo estimates of the same p: within 4 combined standard errors
    se = np.sqrt(2 * oracle * (1 - oracle) / r)
    assert ours == pytest.approx(oracle, abs=4 * se + 2 / r)


def test_randomization_p_is_never_zero() -> None:
    truth = np.ones(400)
    sa = ACCURACY.item_statistics(truth, np.ones(400))
    sb = ACCURACY.item_statistics(truth, np.zeros(400))
    result = paired_randomization([sa, sb], finalize=ACCURACY.finalize, reference=0, randomizations=99)
    assert result.p_values[1] == pytest.approx(1 / 100)  # (1 + 0) / (1 + 99), Phipson & Smyth 2010


def test_randomization_does_not_depend_on_entry_order_or_precision() -> None:
    rng = np.random.default_rng(2)
    truth = rng.integers(0, 2, 300)
    preds = [np.where(rng.random(300) < q, truth, 1 - truth) for q in (0.7, 0.72, 0.75, 0.8)]
    stats = [ACCURACY.item_statistics(truth, p, labels=[0, 1]) for p in preds]
    base = paired_randomization(stats, finalize=ACCURACY.finalize, reference=3, randomizations=700, seed=4)
    perm = [2, 3, 0, 1]
    moved = paired_randomization(
        [stats[i] for i in perm], finalize=ACCURACY.finalize, reference=1, randomizations=700, seed=4
    )
    np.testing.assert_array_equal(moved.p_values, base.p_values[perm])
    assert len(set(base.p_values.tolist())) == 4  # distinct, informative p-values
    wide = paired_randomization(
        stats, finalize=ACCURACY.finalize, reference=3, randomizations=700, seed=4, dtype=np.float64
    )
    np.testing.assert_array_equal(wide.counts, base.counts)


def test_randomization_weights_do_not_depend_on_batching() -> None:
    full = randomization_weights(37, randomizations=1300, seed=9)
    prefix = randomization_weights(37, randomizations=600, seed=9)
    np.testing.assert_array_equal(full[:600], prefix)
    assert set(np.unique(full).tolist()) == {0, 1}
    assert abs(full.mean() - 0.5) < 0.01


def test_randomization_validation() -> None:
    s = np.zeros((5, 1))
    with pytest.raises(ValueError, match="`reference` must be an index below 2"):
        paired_randomization([s, s], finalize=ACCURACY.finalize, reference=2)
    with pytest.raises(ValueError, match="one common shape"):
        paired_randomization([s, np.zeros((4, 1))], finalize=ACCURACY.finalize, reference=0)


# --------------------------------------------------------------------------------------------------
# one paired difference


def test_paired_difference_percentile_interval_is_the_quantiles_of_the_differences() -> None:
    rng = np.random.default_rng(12)
    shared = rng.normal(0, 0.02, 2000)
    a = 0.80 + shared + rng.normal(0, 0.002, 2000)
    b = 0.78 + shared + rng.normal(0, 0.002, 2000)
    res = paired_difference(a, b, value_a=0.80, value_b=0.78, metric="accuracy", seed=3)
    low, high = np.percentile(a - b, [2.5, 97.5])
    assert res.difference == pytest.approx(0.02)
    assert (res.interval.low, res.interval.high) == pytest.approx((low, high))
    assert res.standard_error == pytest.approx((a - b).std(ddof=1))
    assert res.p_value == pytest.approx(2 / 2001)  # no replicate at or below 0
    assert res.signature.seed == 3 and res.interval.method == "percentile"


def test_paired_difference_of_twins_and_validation() -> None:
    a = np.random.default_rng(1).normal(size=100)
    twin = paired_difference(a, a.copy(), value_a=0.5, value_b=0.5)
    assert (twin.difference, twin.interval.low, twin.interval.high, twin.p_value) == (0.0, 0.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="`jackknife_a` and `jackknife_b` are required"):
        paired_difference(a, a, value_a=0.0, value_b=0.0, method="bca")


@pytest.mark.parametrize("rule", ["percentile", "basic", "bca"])
def test_p_value_agrees_with_the_engine_interval_it_inverts(rule: str) -> None:
    # stats.intervals.bootstrap_bounds is an independent implementation of the intervals: away from the
    # boundary (p within 0.01 of 0.05), p <= 0.05 exactly when the 95% interval excludes 0.
    from stats.intervals import bootstrap_bounds

    rng = np.random.default_rng(21)
    checked = 0
    for _ in range(300):
        d = rng.gamma(rng.uniform(0.5, 3), 1.0, 2000) * rng.choice([-1, 1]) + rng.normal(0, 1.5)
        # a point inside the replicates (stats.intervals' BCa fails when every replicate lies on one side)
        point = float(np.quantile(d, rng.uniform(0.05, 0.95)))
        jack = rng.gamma(2.0, 1.0, 50) if rule == "bca" else None
        p = float(bootstrap_p_values(d, point, rule=rule, jackknife=jack))
        low, high = bootstrap_bounds(d, point=point, method=rule, confidence=0.95, jackknife=jack)
        if abs(p - 0.05) > 0.01:
            checked += 1
            assert (p <= 0.05) == bool(low[0] > 0 or high[0] < 0)
    assert checked > 200
