"""Slow simulations of the comparison layer; the measured figures are reported in docs/comparisons.md.

Run with ``pytest -m slow tests/stats/test_compare_simulation.py -s`` (each prints its figures).

1. Type I error at alpha = 0.05 of each test on an A/A null (two entries with the same distribution).
2. How often each best set contains the truly best entry.
3. Joint coverage of the simultaneous rank sets (and, for contrast, of the marginal rank intervals).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

from stats.compare import bootstrap_p_values, mcnemar_exact, paired_randomization
from stats.compare_ranks import rank_distribution, simultaneous_ranks
from stats.metrics import get_metric

pytestmark = pytest.mark.slow

ACCURACY = get_metric("accuracy")
MACRO_F1 = get_metric("macro_f1")


def _weights(rng: np.random.Generator, n: int, b: int) -> np.ndarray:
    idx = rng.integers(0, n, (b, n))
    w = np.zeros((b, n))
    np.add.at(w, (np.repeat(np.arange(b), n), idx.ravel()), 1.0)
    return w


def _correct(rng: np.random.Generator, n: int, accuracies: np.ndarray, rho: float = 0.5) -> np.ndarray:
    """(N, K) 0/1 correctness with the given marginal accuracies and shared item difficulty."""
    z = rho * rng.standard_normal((n, 1)) + np.sqrt(1 - rho**2) * rng.standard_normal((n, accuracies.size))
    return (special.ndtr(z) < accuracies).astype(float)


def _binomial_band(rate: float, reps: int) -> float:
    return 3.5 * np.sqrt(rate * (1 - rate) / reps)


def test_type_one_error_on_an_a_a_null() -> None:
    rng = np.random.default_rng(2024)
    reps, n, b, r = 1000, 500, 999, 999
    w = _weights(rng, n, b)
    rejections = {"mcnemar": 0, "randomization": 0, "bootstrap-percentile": 0, "bootstrap-basic": 0}
    for rep in range(reps):
        c = _correct(rng, n, np.array([0.8, 0.8]))
        ones = np.ones((n, 1))
        sa, sb = np.hstack([c[:, :1], ones]), np.hstack([c[:, 1:], ones])  # accuracy: (right, count)
        only_a = int((sa[:, 0] > sb[:, 0]).sum())
        only_b = int((sb[:, 0] > sa[:, 0]).sum())
        rejections["mcnemar"] += float(mcnemar_exact(only_a, only_b)) <= 0.05
        ar = paired_randomization(
            [sa, sb], finalize=ACCURACY.finalize, reference=0, randomizations=r, seed=rep
        )
        rejections["randomization"] += ar.p_values[1] <= 0.05
        theta = w @ c / n
        d = theta[:, 1] - theta[:, 0]
        point = c[:, 1].mean() - c[:, 0].mean()
        rejections["bootstrap-percentile"] += float(bootstrap_p_values(d, point, rule="percentile")) <= 0.05
        rejections["bootstrap-basic"] += float(bootstrap_p_values(d, point, rule="basic")) <= 0.05
    rates = {k: v / reps for k, v in rejections.items()}
    print("\nA/A type I error at 0.05, accuracy 0.8, N=500, rho=0.5, reps=1000:", rates)
    for name, rate in rates.items():
        assert rate <= 0.05 + _binomial_band(0.05, reps), name
    assert rates["mcnemar"] >= 0.02  # exact but discrete: conservative, not degenerate


def test_type_one_error_of_randomization_for_macro_f1() -> None:
    rng = np.random.default_rng(7)
    reps, n = 600, 300
    rejected = 0
    for rep in range(reps):
        truth = rng.integers(0, 4, n)
        shared = rng.random(n)
        preds = []
        for _ in range(2):  # two draws from one classifier: 70% right, errors uniform
            right = (0.5 * shared + 0.5 * rng.random(n)) < 0.7
            preds.append(np.where(right, truth, (truth + rng.integers(1, 4, n)) % 4))
        stats = [MACRO_F1.item_statistics(truth, p, labels=[0, 1, 2, 3]) for p in preds]
        res = paired_randomization(
            stats, finalize=MACRO_F1.finalize, reference=0, randomizations=499, seed=rep
        )
        rejected += res.p_values[1] <= 0.05
    rate = rejected / reps
    print(f"\nA/A type I error at 0.05, macro-F1 randomization, N=300, reps={reps}: {rate:.3f}")
    assert rate <= 0.05 + _binomial_band(0.05, reps)


def test_best_sets_and_simultaneous_rank_coverage() -> None:
    rng = np.random.default_rng(99)
    truth = np.array([0.80, 0.795, 0.79, 0.785, 0.78, 0.77, 0.76, 0.75, 0.73, 0.70])
    k, n, b, reps = truth.size, 2000, 1000, 400
    true_rank = np.arange(1, k + 1)
    w = _weights(rng, n, b)
    best_max_t = best_holm = joint = leader_right = 0
    marginal_hits = np.zeros(k)
    sizes_max_t, sizes_holm = [], []
    from stats.compare import holm

    for _ in range(reps):
        c = _correct(rng, n, truth)
        theta = w @ c / n
        point = c.mean(axis=0)
        sim = simultaneous_ranks(theta, point, higher_is_better=True)
        best_max_t += bool(sim.best[0])
        sizes_max_t.append(int(sim.best.sum()))
        joint += bool(np.all((sim.lower <= true_rank) & (true_rank <= sim.upper)))
        rd = rank_distribution(theta, higher_is_better=True)
        marginal_hits += (rd.low <= true_rank) & (true_rank <= rd.high)
        lead = int(np.argmax(point))
        leader_right += lead == 0
        only_e = ((c > 0.5) & (c[:, [lead]] < 0.5)).sum(axis=0)
        only_l = ((c < 0.5) & (c[:, [lead]] > 0.5)).sum(axis=0)
        p = mcnemar_exact(only_e, only_l)
        others = [j for j in range(k) if j != lead]
        adjusted = np.ones(k)
        adjusted[others] = holm(p[others])
        in_holm = adjusted > 0.05
        in_holm[lead] = True
        best_holm += bool(in_holm[0])
        sizes_holm.append(int(in_holm.sum()))
    figures = {
        "P(true best in max-t set)": best_max_t / reps,
        "P(true best in Holm set)": best_holm / reps,
        "mean size max-t set": float(np.mean(sizes_max_t)),
        "mean size Holm set": float(np.mean(sizes_holm)),
        "joint coverage simultaneous ranks": joint / reps,
        "marginal rank interval coverage (min..max over entries)": (
            float(marginal_hits.min() / reps),
            float(marginal_hits.max() / reps),
        ),
        "P(observed leader is the true best)": leader_right / reps,
    }
    print(f"\nK=10, N=2000, B=1000, reps={reps}, accuracies {truth.tolist()}:", figures)
    assert best_max_t / reps >= 0.95 - _binomial_band(0.95, reps)
    assert joint / reps >= 0.95 - _binomial_band(0.95, reps)
