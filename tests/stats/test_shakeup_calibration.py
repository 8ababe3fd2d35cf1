"""The shake-up report calibrated by simulation (slow: ``pytest -m slow``; figures in docs/comparisons.md
from ``python -m tests.benchmarks.calibrate_shakeup``)."""

from __future__ import annotations

import math

import pytest

from tests.benchmarks.calibrate_shakeup import correlation_coverage, gap_level


@pytest.mark.slow
def test_resplit_gap_p_values_hold_their_level_when_the_split_is_random() -> None:
    runs = 300
    level = gap_level(runs=runs)
    per_team_se = math.sqrt(0.05 * 0.95 / (runs * level.teams))
    familywise_se = math.sqrt(0.05 * 0.95 / runs)
    # a valid test: at most alpha, up to Monte Carlo error (3 SE) ...
    assert level.per_team_rate <= 0.05 + 3 * per_team_se, level
    assert level.familywise_rate <= 0.05 + 3 * familywise_se, level
    # ... and not a test that never rejects (it must have some size to have power)
    assert level.per_team_rate >= 0.02, level


@pytest.mark.slow
def test_correlation_intervals_cover_the_expected_correlation() -> None:
    runs = 100
    cov = correlation_coverage(runs=runs, reference_draws=1500)
    se = math.sqrt(0.95 * 0.05 / runs)
    for name, value in (("spearman", cov.spearman), ("kendall", cov.kendall)):
        assert value >= 0.95 - 3 * se, (name, cov)
