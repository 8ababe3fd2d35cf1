"""What a test set resolves (stats.power): Connor's formula, round trips, and power by simulation."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats as sps

from stats.power import (
    board_resolution,
    family_of,
    items_for_gap,
    measured_resolution_zero_one,
    planned_resolution,
    smallest_gap_mcnemar,
)
from tests.benchmarks.simulate_power import planned_power

Z = sps.norm.ppf(0.975) + sps.norm.ppf(0.8)


def test_connor_reference_numbers() -> None:
    # /work/shared/REFERENCE.md: gap 11/1,797, discordant 29/1,797 -> 3,379 (Connor 1987, as in "Significance
    # Testing for NLP", Prop. 4) and 3,381 with the simple form (episode 1, UCI digits)
    plan = items_for_gap(11 / 1797, metric="accuracy", discordant=29 / 1797)
    assert plan.items == 3379 and plan.simple_form_items == 3381
    assert plan.method == "mcnemar-connor"
    json.dumps(plan.as_dict(), allow_nan=False)


def test_smallest_gap_inverts_connor() -> None:
    p_d = 29 / 1797
    gap = smallest_gap_mcnemar(3379, discordant=p_d)
    assert gap is not None and gap == pytest.approx(11 / 1797, rel=2e-3)
    # plugged back into Connor's formula (written out here) it needs exactly 3,379 items
    za, zb = sps.norm.ppf(0.975), sps.norm.ppf(0.8)
    n = (za * np.sqrt(p_d) + zb * np.sqrt(p_d - gap**2)) ** 2 / gap**2
    assert n == pytest.approx(3379, rel=1e-9)
    # too few items for any gap, and no discordance
    assert smallest_gap_mcnemar(3, discordant=0.2) is None
    assert smallest_gap_mcnemar(1000, discordant=0.0) is None


def test_planned_resolution_per_family() -> None:
    acc = planned_resolution(2000, metric="accuracy", accuracy=0.85, correlation=0.5)
    p_d = 2 * 0.85 * 0.15 * 0.5
    assert acc.difference == pytest.approx(smallest_gap_mcnemar(2000, discordant=p_d), rel=1e-12)
    assert acc.difference < Z * np.sqrt(p_d / 2000)  # Connor's form resolves a little less than the simple
    mean = planned_resolution(400, metric="mae", sd=0.5, correlation=0.6)
    assert mean.difference == pytest.approx(Z * 0.5 * np.sqrt(2 * 0.4) / 20, rel=1e-12)
    pilot = planned_resolution(4000, metric="macro_f1", pilot_standard_error=0.02, pilot_items=1000)
    assert pilot.difference == pytest.approx(Z * 0.01, rel=1e-12)
    with pytest.raises(ValueError, match="pilot"):
        planned_resolution(1000, metric="roc_auc")
    assert (family_of("top5_accuracy"), family_of("rmse"), family_of("miou")) == (
        "zero_one",
        "mean",
        "bootstrap",
    )


def test_items_for_gap_per_family() -> None:
    assert items_for_gap(0.05, family="mean", sd_difference=0.5).items == int(np.ceil((Z * 0.5 / 0.05) ** 2))
    assert items_for_gap(0.01, metric="roc_auc", pilot_standard_error=0.01, pilot_items=500).items == int(
        np.ceil(500 * Z**2)
    )


def test_measured_resolution_from_paired_outcomes() -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 800)
    b = np.where(rng.random(800) < 0.1, 1 - a, a)
    r = measured_resolution_zero_one(a, b)
    assert r.basis == f"measured discordance {int(np.sum(a != b))}/800"
    assert r.difference == smallest_gap_mcnemar(800, discordant=float(np.mean(a != b)))
    assert measured_resolution_zero_one(a, a).difference is None


def test_board_resolution_from_bootstrap_standard_errors() -> None:
    rng = np.random.default_rng(1)
    reps = rng.multivariate_normal([0.5, 0.48, 0.4], np.diag([1e-4, 2e-4, 1e-4]), size=3000)
    br = board_resolution([0.5, 0.48, 0.4], reps, higher_is_better=True, names=["a", "b", "c"])
    se_b = np.std(reps[:, 1] - reps[:, 0], ddof=1)
    assert br.differences[1] == pytest.approx(Z * se_b, rel=1e-12)
    assert br.resolved_at_power == (None, False, True)
    low = board_resolution([0.5, 0.48, 0.4], reps, higher_is_better=False, names=["a", "b", "c"])
    assert low.leader == "c"
    json.dumps(br.as_dict(), allow_nan=False)


@pytest.mark.parametrize("higher", [True, False])
def test_board_resolution_from_the_boards_own_standard_deviations_is_the_same_to_the_bit(
    higher: bool,
) -> None:
    # issue 24: the service passes stats.board's standard deviations of the differences to the leader (computed
    # in blocks of columns) instead of computing them again; K > 64 so the board's blocks are several
    from stats.board import build_board

    rng = np.random.default_rng(7)
    k, b = 150, 2000
    values = rng.uniform(0.6, 0.8, k).round(3)
    values[5] = values.max() if higher else values.min()  # a tie for the lead: the name decides
    reps = values + rng.normal(0, 0.01, (b, k))
    names = [f"e{j:03d}" for j in range(k)]
    board = build_board(
        names=names, values=values, replicates=reps, higher_is_better=higher, metric_name="accuracy", seed=1
    )
    sd = dict(zip((r.name for r in board.rows), board.leader_difference_sd.tolist(), strict=True))
    given = board_resolution(
        values, reps, higher_is_better=higher, names=names, leader_difference_sd=[sd[n] for n in names]
    )
    computed = board_resolution(values, reps, higher_is_better=higher, names=names)
    assert given.leader == computed.leader == board.leader
    assert given == computed


@pytest.mark.slow
def test_planned_size_gives_the_stated_power_for_a_bootstrap_metric() -> None:
    # docs/comparisons.md ("What a test set resolves"): python -m tests.benchmarks.simulate_power --runs 400.
    # Planned from a pilot's bootstrap standard error of the macro-F1 difference, the paired z-test with
    # the bootstrap standard error on test sets of the planned size detects the true gap about 80% of the time
    check = planned_power(runs=200)
    assert check.items > 100
    assert 0.70 <= check.power <= 0.90


def test_zero_one_from_the_number_of_items_alone_is_the_worst_case() -> None:
    r = planned_resolution(1000, metric="accuracy")
    assert r.difference == smallest_gap_mcnemar(1000, discordant=0.5)
    assert "worst case" in r.basis
    # any assumed accuracy resolves a smaller gap than the worst case
    assert planned_resolution(1000, metric="accuracy", accuracy=0.7).difference < r.difference
