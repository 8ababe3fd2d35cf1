"""The shake-up report against hand-computed small cases, scipy, and exact enumeration of re-splits."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from scipy import stats as sps

from stats.compare import holm
from stats.compare_ranks import min_ranks as competition_ranks
from stats.metrics import get_metric
from stats.shakeup import shakeup

ACC = get_metric("accuracy")


def _acc_stats(correct: list[int]) -> np.ndarray:
    """Per-item statistics of accuracy: the engine's columns (correct, count)."""
    truth = np.array(["a"] * len(correct))
    pred = np.array(["a" if c else "b" for c in correct])
    return ACC.item_statistics(truth, pred)


def test_competition_ranks_share_the_smallest_rank() -> None:
    assert competition_ranks([0.9, 0.8, 0.8, 0.7], higher_is_better=True).tolist() == [1, 2, 2, 4]
    assert competition_ranks([0.1, 0.3, 0.3, 0.2], higher_is_better=False).tolist() == [1, 3, 3, 2]


def test_holm_by_hand() -> None:
    # sorted 0.01, 0.03, 0.04 -> 3*0.01 = 0.03, 2*0.03 = 0.06, max(0.06, 1*0.04) = 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_a_small_board_by_hand() -> None:
    names = ["a", "b", "c", "d"]
    public = [0.90, 0.85, 0.80, 0.70]
    private = [0.82, 0.86, 0.79, 0.60]  # a and b swap at the reveal
    report = shakeup(
        public,
        private,
        names=names,
        higher_is_better=True,
        metric="accuracy",
        public_rank_sets=[(1, 2), (1, 2), (2, 2), (4, 4)],
        private_best_set=[True, True, False, False],
    )
    assert report.spearman == pytest.approx(sps.spearmanr(public, private).statistic) == pytest.approx(0.8)
    assert report.kendall == pytest.approx(sps.kendalltau(public, private).statistic) == pytest.approx(4 / 6)
    by_name = {t.name: t for t in report.teams}
    assert (by_name["a"].public_rank, by_name["a"].private_rank, by_name["a"].rank_change) == (1, 2, -1)
    assert (by_name["b"].public_rank, by_name["b"].private_rank, by_name["b"].rank_change) == (2, 1, 1)
    assert by_name["a"].gap == pytest.approx(0.08) and by_name["b"].gap == pytest.approx(-0.01)
    assert [t.inside_rank_set for t in report.teams] == [
        True,
        True,
        False,
        True,
    ]  # c: private rank 3 in (2, 3)?
    assert report.inside_rank_sets == 3 and report.rank_sets_known == 4
    assert report.top10_retained == 4 and report.top10_size == 4
    assert report.public_winner == "a" and report.public_winner_in_private_best_set is True
    assert [t.name for t in report.teams] == ["a", "b", "c", "d"]  # public order
    assert report.p_reference_le_observed is None and report.notes  # no per-item statistics given
    json.dumps(report.as_dict(), allow_nan=False)


def test_lower_is_better_orients_the_gap() -> None:
    report = shakeup([0.1, 0.2], [0.3, 0.25], names=["x", "y"], higher_is_better=False, metric="rmse")
    # x looked better in public (0.1) than in private (0.3): the public board flattered it, gap +0.2
    assert {t.name: round(t.gap, 6) for t in report.teams} == {"x": 0.2, "y": 0.05}


def test_correlation_interval_from_paired_replicates() -> None:
    rng = np.random.default_rng(3)
    k, b = 6, 400
    public = np.linspace(0.9, 0.6, k)
    private = public + rng.normal(0, 0.01, k)
    pub_rep = public + rng.normal(0, 0.02, (b, k))
    priv_rep = private + rng.normal(0, 0.02, (b, k))
    report = shakeup(
        public,
        private,
        names=[f"e{i}" for i in range(k)],
        higher_is_better=True,
        metric="accuracy",
        public_replicates=pub_rep,
        private_replicates=priv_rep,
    )
    expected = [sps.spearmanr(pub_rep[i], priv_rep[i]).statistic for i in range(b)]
    lo, hi = np.quantile(expected, [0.025, 0.975])
    assert report.spearman_interval == pytest.approx((lo, hi))
    assert report.kendall_interval is not None and report.kendall_interval[0] <= report.kendall


def _exact_resplit(items: list[list[int]], n_pub: int, sign: float = 1.0) -> tuple[float, list[float]]:
    """Every split of the items into n_pub public and the rest private, each equally likely."""
    n = len(items[0])
    splits = list(itertools.combinations(range(n), n_pub))
    observed_pub = list(range(n_pub))
    obs = [(np.mean(c[:n_pub]), np.mean(c[n_pub:])) for c in items]
    obs_rho = sps.spearmanr([o[0] for o in obs], [o[1] for o in obs]).statistic
    rho_le = rho_defined = 0
    gap_ge = [0] * len(items)
    for public in splits:
        private = [i for i in range(n) if i not in public]
        pv = [np.mean([c[i] for i in public]) for c in items]
        qv = [np.mean([c[i] for i in private]) for c in items]
        if len(set(pv)) > 1 and len(set(qv)) > 1:  # re-splits with an undefined rho are left out
            rho = sps.spearmanr(pv, qv).statistic
            rho_defined += 1
            rho_le += rho <= obs_rho + 1e-12
        for j in range(len(items)):
            gap_obs = sign * (obs[j][0] - obs[j][1])
            gap_ge[j] += sign * (pv[j] - qv[j]) >= gap_obs - 1e-12
    assert observed_pub == list(range(n_pub))
    return rho_le / rho_defined, [g / len(splits) for g in gap_ge]


def test_resplit_reference_matches_exact_enumeration() -> None:
    # 3 entries, 6 items (2 public, 4 private): 15 possible re-splits, enumerated by hand.
    items = [
        [1, 1, 0, 0, 1, 0],  # "a" is right on both public items: flattered by the split
        [1, 0, 1, 1, 0, 1],
        [0, 1, 1, 0, 1, 1],
    ]
    n_pub = 2
    pairs = [(_acc_stats(c[:n_pub]), _acc_stats(c[n_pub:])) for c in items]
    values = [(np.mean(c[:n_pub]), np.mean(c[n_pub:])) for c in items]
    report = shakeup(
        [v[0] for v in values],
        [v[1] for v in values],
        names=["a", "b", "c"],
        higher_is_better=True,
        metric="accuracy",
        item_statistics=pairs,
        finalize=ACC.finalize,
        resplits=20_000,
        seed=11,
    )
    p_rho, p_gap = _exact_resplit(items, n_pub)
    draws = 20_000
    by_name = {t.name: t for t in report.teams}
    tolerance = 4 * np.sqrt(0.25 / draws) + 2 / draws  # Monte Carlo error, and the +1 of Phipson-Smyth
    assert report.p_reference_le_observed == pytest.approx(p_rho, abs=tolerance)
    for name, exact in zip("abc", p_gap, strict=True):
        assert by_name[name].gap_p == pytest.approx(exact, abs=tolerance), name
    assert by_name["a"].gap_p < 0.2  # right on both public items: 3 of 15 re-splits do as well
    assert by_name["a"].gap_p_holm == pytest.approx(min(1.0, 3 * by_name["a"].gap_p), abs=1e-12) or (
        by_name["a"].gap_p_holm >= by_name["a"].gap_p
    )
    assert report.resplits == draws and report.signature.seed == 11


def test_an_overfit_public_board_is_unusual_against_the_reference() -> None:
    # Ten entries; on the public items the order is the reverse of the private order (fitted to the
    # public board), which the re-split reference almost never produces.
    rng = np.random.default_rng(0)
    n_pub, n_priv, k = 200, 800, 10
    pairs, pub_v, priv_v = [], [], []
    for j in range(k):
        p_priv = 0.60 + 0.02 * j
        p_pub = 0.78 - 0.02 * j
        pub_items = (rng.random(n_pub) < p_pub).astype(int)
        priv_items = (rng.random(n_priv) < p_priv).astype(int)
        pairs.append((_acc_stats(pub_items.tolist()), _acc_stats(priv_items.tolist())))
        pub_v.append(pub_items.mean())
        priv_v.append(priv_items.mean())
    report = shakeup(
        pub_v,
        priv_v,
        names=[f"e{j}" for j in range(k)],
        higher_is_better=True,
        metric="accuracy",
        item_statistics=pairs,
        finalize=ACC.finalize,
        resplits=999,
        seed=1,
    )
    assert report.spearman < -0.5
    assert report.p_reference_le_observed == pytest.approx(1 / 1000)
    assert report.reference_spearman is not None and report.reference_spearman[0] > 0
    # the entry most flattered by the public items is flagged after Holm
    flattered = max(report.teams, key=lambda t: t.gap)
    assert flattered.gap_p_holm is not None and flattered.gap_p_holm < 0.05


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"public_values": [0.5], "private_values": [0.5], "names": ["x"]}, "at least 2 entries"),
        ({"public_values": [0.5, np.nan], "private_values": [0.5, 0.4], "names": ["x", "y"]}, "finite"),
        ({"public_values": [0.5, 0.4], "private_values": [0.5], "names": ["x", "y"]}, "one entry each"),
    ],
)
def test_refusals(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        shakeup(**kwargs, higher_is_better=True, metric="accuracy")
