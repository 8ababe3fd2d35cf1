"""Issue 11, point 5: Friedman's test with few tasks (exact p-values, tie correction, no "p = 0")."""

from __future__ import annotations

import io
import itertools
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats as sps

from stats.cli.compare import cd_table, run_cd
from stats.crosstask import compare_across_tasks, friedman

# Friedman (1937), Table V / Siegel & Castellan (1988), Table M: exact null distribution of the Friedman
# statistic for k = 3 entries on N = 3 tasks, P(chi2_r >= value).
SIEGEL_K3_N3 = {6.000: 0.028, 4.667: 0.194, 2.667: 0.361, 2.000: 0.528, 0.667: 0.944, 0.000: 1.000}


def _table_with_statistic(target: float) -> np.ndarray:
    """A 3 x 3 table of distinct scores whose Friedman statistic is ``target``."""
    for rows in itertools.product(itertools.permutations([1.0, 2.0, 3.0]), repeat=3):
        table = np.array(rows)
        if abs(friedman(table).chi2 - target) < 1e-3:
            return table
    raise AssertionError(target)


@pytest.mark.parametrize(("statistic", "published"), sorted(SIEGEL_K3_N3.items()))
def test_exact_p_matches_the_published_table(statistic: float, published: float) -> None:
    fr = friedman(_table_with_statistic(statistic))
    assert fr.exact_method == "enumeration"
    assert fr.exact_p == pytest.approx(published, abs=0.0006)


def test_three_tasks_identical_rankings_exact_not_asymptotic_and_no_zero_p() -> None:
    table = np.tile([0.9, 0.8, 0.7], (3, 1))
    fr = friedman(table)
    assert fr.chi2 == pytest.approx(6.0)
    assert fr.chi2_p == pytest.approx(0.0498, abs=1e-4)  # the asymptotic value the issue reported
    assert fr.exact_p == pytest.approx(6 / 216)  # 0.0278: the 6 tables ranking alike on every task
    assert fr.f_p is None  # Iman-Davenport's F is infinite; its p is undefined, not 0
    assert any("only 3 tasks" in w for w in fr.warnings)
    text = cd_table(compare_across_tasks(table, names=["a", "b", "c"]))
    assert "p = 0\n" not in text and "p = 0)" not in text and "p = 0;" not in text
    assert "exact p (enumeration) = 0.02778" in text
    assert "warning: only 3 tasks" in text


def test_tie_corrected_statistic_equals_scipy() -> None:
    rng = np.random.default_rng(4)
    table = rng.integers(0, 3, size=(8, 4)).astype(float)  # many ties
    fr = friedman(table)
    oracle = sps.friedmanchisquare(*table.T)
    assert fr.chi2_tie_corrected == pytest.approx(oracle.statistic, rel=1e-12)
    assert fr.chi2_tie_corrected_p == pytest.approx(oracle.pvalue, rel=1e-10)
    assert fr.chi2 < fr.chi2_tie_corrected


def test_exact_p_with_ties_equals_brute_force_enumeration() -> None:
    table = np.array([[1.0, 1.0, 2.0, 3.0], [4.0, 3.0, 2.0, 1.0], [1.0, 2.0, 2.0, 0.0]])
    fr = friedman(table)
    ranks = sps.rankdata(-table, axis=1)
    observed = (ranks.sum(axis=0) ** 2).sum()
    stats = [
        (np.array(rows).sum(axis=0) ** 2).sum()
        for rows in itertools.product(*(list(itertools.permutations(r)) for r in ranks))
    ]
    expected = np.mean(np.array(stats) >= observed - 1e-9)
    assert fr.exact_p == pytest.approx(expected, rel=1e-12)


def test_permutation_fallback_for_large_tables_is_close_to_asymptotic_and_never_zero() -> None:
    rng = np.random.default_rng(1)
    table = rng.normal(size=(40, 7)) + np.linspace(0, 1, 7)
    fr = friedman(table)
    assert fr.exact_method == "permutation"
    assert 0 < fr.exact_p <= 1
    assert fr.exact_p == pytest.approx(fr.chi2_p, abs=0.01) or fr.exact_p < 1e-4
    assert not fr.warnings


def test_cd_json_carries_the_exact_p(tmp_path: pytest.TempPathFactory) -> None:
    path = tmp_path / "scores.csv"  # type: ignore[operator]
    path.write_text("task,a,b,c\nt1,0.9,0.8,0.7\nt2,0.9,0.8,0.7\nt3,0.9,0.8,0.7\n")
    out = io.StringIO()
    args = SimpleNamespace(
        scores=str(path),
        lower_is_better=False,
        alpha=0.05,
        posthoc="nemenyi",
        svg=None,
        title=None,
        format="json",
    )
    assert run_cd(args, out=out) == 0  # type: ignore[arg-type]
    import json

    data = json.loads(out.getvalue())["friedman"]
    assert data["iman_davenport_p"] is None
    assert data["exact_p"] == pytest.approx(6 / 216)
    assert data["warnings"]
