"""Tests of stats.compare_runs: summaries across seeds, Welch's test, P(run of A beats run of B)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from stats.compare_runs import compare_runs, runs_summaries, runs_summary

A = np.array([0.812, 0.805, 0.821, 0.809, 0.815])
B = np.array([0.801, 0.806, 0.799, 0.810, 0.798, 0.803])


def test_summary() -> None:
    s = runs_summary([1.0, 2.0, 3.0, 4.0])
    assert (s.n, s.mean, s.minimum, s.maximum) == (4, 2.5, 1.0, 4.0)
    assert s.sd == pytest.approx(np.sqrt(5 / 3))  # sum of squares 5, ddof = 1
    assert np.isnan(runs_summary([0.3]).sd)
    assert runs_summaries([None, [0.1, 0.2]])[0] is None


def test_welch_matches_the_textbook_formula_and_scipy() -> None:
    c = compare_runs(A, B, resamples=500)
    va, vb = A.var(ddof=1) / A.size, B.var(ddof=1) / B.size
    t = (A.mean() - B.mean()) / np.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (A.size - 1) + vb**2 / (B.size - 1))  # Welch-Satterthwaite
    assert c.welch_t == pytest.approx(t)
    assert c.welch_df == pytest.approx(df)
    assert c.welch_p == pytest.approx(2 * sps.t.sf(abs(t), df))
    assert c.welch_p == pytest.approx(sps.ttest_ind(A, B, equal_var=False).pvalue)


def test_probability_of_outperforming_is_the_mann_whitney_u_share() -> None:
    # U / (n m) counts pairs with A > B and ties one half: the same quantity, an independent oracle.
    c = compare_runs(A, B, resamples=500)
    u = sps.mannwhitneyu(A, B).statistic
    assert c.prob_a_beats_b == pytest.approx(u / (A.size * B.size))
    low, high = c.prob_interval
    assert low <= c.prob_a_beats_b <= high


def test_direction_flips_the_probability_with_ties() -> None:
    a = [1.0, 2.0, 3.0]
    b = [2.0, 2.0, 4.0]
    up = compare_runs(a, b, higher_is_better=True, resamples=100)
    down = compare_runs(a, b, higher_is_better=False, resamples=100)
    assert up.prob_a_beats_b + down.prob_a_beats_b == pytest.approx(1.0)
    # pairs: 1<2,1<2,1<4; 2=2,2=2,2<4; 3>2,3>2,3<4 -> (2 + 0.5 * 2) / 9
    assert up.prob_a_beats_b == pytest.approx(3 / 9)


def test_seeded_and_validated() -> None:
    assert compare_runs(A, B, seed=3).prob_interval == compare_runs(A, B, seed=3).prob_interval
    with pytest.raises(ValueError, match="`runs_b` must be a one-dimensional array of at least 2"):
        compare_runs(A, [0.5])
