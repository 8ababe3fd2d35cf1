"""The Ladder (Blum & Hardt 2015) by hand, and the boosting attack against each mode (slow)."""

from __future__ import annotations

import numpy as np
import pytest

from stats.ladder import LadderBoard, boosting_attack, round_to


def test_round_to_is_the_papers_rounding() -> None:
    assert round_to(0.8349, 0.01) == pytest.approx(0.83)
    assert round_to(0.8351, 0.01) == pytest.approx(0.84)
    assert round_to(0.512, 0.03) == pytest.approx(0.51)
    with pytest.raises(ValueError):
        round_to(0.5, 0.0)


def test_fixed_ladder_moves_only_beyond_the_step() -> None:
    board = LadderBoard(mode="ladder", higher_is_better=True, eta=0.01)
    shown = [board.submit(v).shown for v in (0.800, 0.805, 0.8111, 0.8195, 0.8301)]
    # 0.800 shown; 0.805 is not 0.01 better; 0.8111 is (> 0.81) -> [0.8111]_0.01 = 0.81;
    # 0.8195 is not > 0.82; 0.8301 is -> 0.83
    assert shown == pytest.approx([0.80, 0.80, 0.81, 0.81, 0.83])
    worse = board.submit(0.70)
    assert not worse.moved and worse.shown == pytest.approx(0.83)
    assert "did not beat the score on the board by more than 0.01" in worse.reason


def test_fixed_ladder_for_a_loss() -> None:
    board = LadderBoard(mode="ladder", higher_is_better=False, eta=0.1)
    assert [board.submit(v).shown for v in (1.0, 0.95, 0.86, 0.5)] == pytest.approx([1.0, 1.0, 0.9, 0.5])


def test_parameter_free_ladder_uses_the_paired_standard_error() -> None:
    # Ladder.jl's rule: move when loss < shown - sd(l_new - l_best) / sqrt(n)
    best = np.array([0, 1, 0, 0, 1, 0, 0, 0, 1, 0], dtype=float)  # loss 0.3
    better = np.array([0, 1, 0, 0, 0, 0, 0, 0, 1, 0], dtype=float)  # loss 0.2
    board = LadderBoard(mode="ladder-free", higher_is_better=False)
    assert board.submit(best.mean(), item_losses=best).moved
    step = np.std(better - best, ddof=1) / np.sqrt(10)
    assert step == pytest.approx(0.1)  # one item differs: sd = sqrt(1/10), / sqrt(10)
    release = board.submit(better.mean(), item_losses=better)
    assert release.threshold == pytest.approx(0.1)
    assert not release.moved  # 0.2 is not below 0.3 - 0.1 (strictly)
    much_better = np.zeros(10)
    assert board.submit(0.0, item_losses=much_better).moved


def test_parameter_free_ladder_from_common_resamples() -> None:
    rng = np.random.default_rng(0)
    base = rng.normal(0.8, 0.01, 500)
    board = LadderBoard(mode="ladder-free", higher_is_better=True)
    board.submit(0.80, replicates=base)
    noise = base + rng.normal(0, 0.002, 500)  # nearly the same entry: the paired SE is small
    release = board.submit(0.805, replicates=noise)
    assert release.threshold == pytest.approx(np.std(noise - base, ddof=1))
    assert release.moved


def test_plain_shows_every_score_rounded() -> None:
    board = LadderBoard(mode="plain", precision=3)
    assert [board.submit(v).shown for v in (0.81234, 0.7)] == [0.812, 0.7]


def test_parameter_free_needs_evidence() -> None:
    with pytest.raises(ValueError, match="per-item losses or bootstrap replicates"):
        LadderBoard(mode="ladder-free").submit(0.5)


def test_boosting_attack_small() -> None:
    rng = np.random.default_rng(1)
    plain = boosting_attack(1000, 100, mode="plain", rng=rng)
    assert plain.public_accuracy > 0.52 and abs(plain.fresh_accuracy - 0.5) < 0.06
    assert plain.shown == pytest.approx(plain.public_accuracy, abs=1e-5)


@pytest.mark.slow
def test_boosting_attack_rises_on_a_plain_board_and_not_under_a_strict_ladder() -> None:
    # docs/comparisons.md: python -m tests.benchmarks.simulate_boosting --repeats 100
    n, k, runs = 4000, 400, 40
    se = np.sqrt(0.25 / n)

    def shown(mode: str, **kw: float) -> float:
        rng = np.random.default_rng(7)
        return float(
            np.mean([boosting_attack(n, k, mode=mode, rng=rng, **kw).shown - 0.5 for _ in range(runs)])
        )  # type: ignore[arg-type]

    assert shown("plain") > 6 * se
    assert shown("ladder-free", z=1.0) < 4 * se
    assert shown("ladder-free", z=3.0) < 1 * se
