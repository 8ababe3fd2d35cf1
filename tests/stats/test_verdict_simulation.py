"""Slow A/A simulation: how often does each verdict of the board make a false claim? (docs/comparisons.md)

Run with ``pytest -m slow tests/stats/test_verdict_simulation.py -s`` (prints the table).

K truly equal entries (same accuracy, or same macro-F1 behaviour; items share a latent difficulty, so
entries are correlated as real models are). Any claim that one entry is worse than another, or that
one is the best, is false. For each board ``stats.board.build_board`` runs as the service runs it and
we count:

- **verdict (max-t)**: the board's verdict says "worse than the best" or "best" for at least one row;
- **Holm vs the observed leader**: at least one adjusted p-value <= alpha (the former Resolution column);
- **raw p vs the observed leader**: share of the K - 1 comparisons with p <= alpha (the p column).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

from stats.board import build_board
from stats.metrics import get_metric

pytestmark = pytest.mark.slow

ALPHA = 0.05
N_ITEMS = 300
RESAMPLES = 1000
#: 1,000 draws: the smallest p, 1 / 1001, can pass Holm's first step at K = 50 (0.05 / 49)
RANDOMIZATIONS = 1000
#: boards per K; randomization (macro-F1) costs more, so fewer boards
BOARDS = {"accuracy": {2: 1000, 10: 1000, 50: 400}, "macro_f1": {2: 400, 10: 300, 50: 200}}


def _weights(rng: np.random.Generator, n: int, b: int) -> np.ndarray:
    idx = rng.integers(0, n, (b, n))
    w = np.zeros((b, n))
    np.add.at(w, (np.repeat(np.arange(b), n), idx.ravel()), 1.0)
    return w


def _predictions(rng: np.random.Generator, k: int, metric: str) -> tuple[np.ndarray, list[np.ndarray]]:
    z = 0.5 * rng.standard_normal((N_ITEMS, 1)) + np.sqrt(0.75) * rng.standard_normal((N_ITEMS, k))
    right = special.ndtr(z) < (0.8 if metric == "accuracy" else 0.7)
    truth = rng.choice(3, size=N_ITEMS, p=[0.5, 0.3, 0.2])
    wrong = (truth[:, None] + rng.integers(1, 3, (N_ITEMS, k))) % 3
    pred = np.where(right, truth[:, None], wrong)
    return truth, [pred[:, j] for j in range(k)]


def _false_claims(k: int, metric_name: str, seed: int) -> dict[str, float]:
    metric = get_metric(metric_name)
    rng = np.random.default_rng([seed, k])
    w = _weights(rng, N_ITEMS, RESAMPLES)
    counts = {"verdict": 0.0, "holm": 0.0, "raw": 0.0}
    boards = BOARDS[metric_name][k]
    for rep in range(boards):
        truth, preds = _predictions(rng, k, metric_name)
        s = [metric.item_statistics(truth, p, labels=[0, 1, 2]) for p in preds]
        values = metric.finalize(np.stack([x.sum(axis=0) for x in s]))
        theta = np.column_stack([metric.finalize(w @ x) for x in s])
        board = build_board(
            names=[f"e{i:02d}" for i in range(k)],
            values=values,
            replicates=theta,
            higher_is_better=True,
            metric_name=metric.name,
            seed=rep,
            alpha=ALPHA,
            item_statistics=s,
            finalize=metric.finalize,
            zero_one=metric.zero_one,
            randomizations=RANDOMIZATIONS,
            interval="percentile",
        )
        others = [r for r in board.rows if not r.is_leader]
        counts["verdict"] += any(r.verdict != "could be the best" for r in board.rows)
        counts["holm"] += any(not r.in_best_set_holm for r in others)
        counts["raw"] += sum(r.p_value <= ALPHA for r in others) / len(others)
        if rep == 0:
            assert board.test == ("mcnemar" if metric_name == "accuracy" else "randomization")
    return {key: value / boards for key, value in counts.items()}


@pytest.mark.parametrize("metric_name", ["accuracy", "macro_f1"])
@pytest.mark.parametrize("k", [2, 10, 50])
def test_false_claim_rates_on_an_a_a_null(k: int, metric_name: str) -> None:
    rates = _false_claims(k, metric_name, seed=2026)
    reps = BOARDS[metric_name][k]
    print(
        f"\nA/A {metric_name} K={k} ({reps} boards): verdict (max-t) {rates['verdict']:.3f}, "
        f"Holm vs observed leader {rates['holm']:.3f}, raw p per comparison {rates['raw']:.3f}"
    )
    band = 3.0 * np.sqrt(ALPHA * (1 - ALPHA) / reps)
    assert rates["verdict"] <= ALPHA + band
