"""Ranking robustness (stats.robustness) against direct computation and scipy.stats.kendalltau."""

from __future__ import annotations

import itertools
import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from scipy import stats as sps

from stats.robustness import (
    blob_plot_svg,
    challenge_ranking,
    consensus_ranking,
    kendall_tau_b,
    per_item_ranks,
    rank_robustness,
    ranking_schemes,
)


def test_kendall_tau_b_matches_scipy_with_ties() -> None:
    rng = np.random.default_rng(0)
    ref = rng.integers(0, 5, size=9).astype(float)  # ties in the reference
    samples = rng.integers(0, 4, size=(300, 9)).astype(float)  # ties in the samples
    ours = kendall_tau_b(ref, samples)
    for row, t in zip(samples, ours, strict=True):
        expected = sps.kendalltau(ref, row).statistic  # tau-b is scipy's default variant
        if np.isnan(expected):
            assert np.isnan(t)
        else:
            assert t == pytest.approx(expected, abs=1e-12)


def test_kendall_tau_b_all_tied_is_nan() -> None:
    assert np.isnan(kendall_tau_b([1, 2, 3], [[5, 5, 5]])[0])


def _direct_min_ranks(x: np.ndarray, higher_is_better: bool) -> np.ndarray:
    return sps.rankdata(-x if higher_is_better else x, method="min")


def test_rank_frequencies_median_and_interval_match_direct_counts() -> None:
    rng = np.random.default_rng(1)
    values = np.array([0.80, 0.79, 0.78, 0.70, 0.79])
    theta = np.round(rng.normal(values, 0.01, size=(1500, 5)), 2)  # rounding makes ties
    rr = rank_robustness(values, theta, higher_is_better=True, names=list("abcde"))
    counts = np.zeros((5, 5))
    for row in theta:
        for j, r in enumerate(_direct_min_ranks(row, True)):
            counts[j, r - 1] += 1
    freq = counts / len(theta)
    by_name = {e.name: e for e in rr.entries}
    for j, name in enumerate("abcde"):
        e = by_name[name]
        assert e.frequencies == pytest.approx(tuple(freq[j]), abs=1e-12)
        ranks = np.repeat(np.arange(1, 6), counts[j].astype(int))
        assert e.median == int(np.quantile(ranks, 0.5, method="inverted_cdf"))
        assert e.low == int(np.quantile(ranks, 0.025, method="inverted_cdf"))
        assert e.high == int(np.quantile(ranks, 0.975, method="inverted_cdf"))
    assert [e.name for e in rr.entries] == ["a", "b", "e", "c", "d"]  # board order: rank, then name
    assert [e.rank for e in rr.entries] == [1, 2, 2, 4, 5]
    # tau-b distribution: direct per resample with scipy
    direct = [
        sps.kendalltau(_direct_min_ranks(values, True), _direct_min_ranks(r, True)).statistic for r in theta
    ]
    assert rr.tau.median == pytest.approx(float(np.median(direct)), abs=1e-12)
    assert rr.tau.mean == pytest.approx(float(np.mean(direct)), abs=1e-12)
    json.dumps(rr.as_dict(), allow_nan=False)
    assert "a: rank 1, median 1" in rr.text()


def test_lower_is_better_ranks_the_smallest_first() -> None:
    theta = np.random.default_rng(2).normal([0.1, 0.3, 0.5], 0.01, size=(500, 3))
    rr = rank_robustness([0.1, 0.3, 0.5], theta, higher_is_better=False, names=["a", "b", "c"])
    assert [(e.name, e.low, e.high) for e in rr.entries] == [("a", 1, 1), ("b", 2, 2), ("c", 3, 3)]
    assert rr.tau.low == 1.0


def test_blob_plot_is_valid_reproducible_svg_with_a_text_alternative() -> None:
    theta = np.random.default_rng(3).normal([0.8, 0.79, 0.7], 0.01, size=(400, 3))
    rr = rank_robustness([0.8, 0.79, 0.7], theta, higher_is_better=True, names=["a<1>", "b", "c"])
    svg = blob_plot_svg(rr)
    root = ET.fromstring(svg)
    desc = root.find("{http://www.w3.org/2000/svg}desc")
    assert desc is not None and desc.text is not None and "a<1>: rank 1" in desc.text
    assert svg == blob_plot_svg(rr)


def test_per_item_ranks_missing_ranked_worst() -> None:
    s = np.array([[0.9, np.nan, 0.5, np.nan], [0.1, 0.2, 0.2, 0.3]])
    r = per_item_ranks(s, higher_is_better=True)
    assert r.tolist() == [[1, 3, 2, 3], [4, 2, 2, 1]]
    assert per_item_ranks(s, higher_is_better=False)[1].tolist() == [1, 2, 2, 4]


def test_ranking_schemes_against_direct_computation() -> None:
    rng = np.random.default_rng(4)
    n, k = 40, 4
    s = np.clip(rng.normal([0.70, 0.72, 0.60, 0.71], 0.15, size=(n, k)), 0, 1)
    s[3, 2] = np.nan
    s[7, 0] = np.nan
    rs = ranking_schemes(s, higher_is_better=True, names=list("abcd"), alpha=0.05)
    worst = np.nanmin(s)
    filled = np.where(np.isnan(s), worst, s)
    # aggregate-then-rank
    assert rs.scheme("aggregate-then-rank").ranks == tuple(_direct_min_ranks(filled.mean(0), True))
    # rank-then-aggregate: per item with scipy, missing last
    per_item = np.array([sps.rankdata(np.where(np.isnan(row), np.inf, -row), method="min") for row in s])
    assert rs.scheme("rank-then-aggregate").scores == pytest.approx(tuple(per_item.mean(0)))
    assert rs.scheme("rank-then-aggregate").ranks == tuple(_direct_min_ranks(per_item.mean(0), False))
    # test-then-rank: one-sided Wilcoxon of every ordered pair
    wins = [
        sum(
            sps.wilcoxon(filled[:, a], filled[:, b], alternative="greater").pvalue < 0.05
            for b in range(k)
            if b != a
        )
        for a in range(k)
    ]
    assert rs.scheme("test-then-rank").scores == tuple(map(float, wins))
    ranks = np.array([sc.ranks for sc in rs.schemes])
    assert set(rs.disagreements) == {"abcd"[j] for j in range(k) if len(set(ranks[:, j])) > 1}
    assert rs.missing == 2 and rs.missing_value == worst
    json.dumps(rs.as_dict(), allow_nan=False)


def test_schemes_disagree_on_a_known_example() -> None:
    # a wins most items by a little, b never collapses: the mean prefers b, the per-item ranks prefer a
    s = np.array([[0.9, 0.8]] * 6 + [[0.0, 0.8]] * 4)
    rs = ranking_schemes(s, higher_is_better=True, names=["a", "b"])
    assert rs.scheme("aggregate-then-rank").ranks == (2, 1)
    assert rs.scheme("rank-then-aggregate").ranks == (1, 2)
    assert rs.disagreements == ("a", "b")
    assert rs.tau_between["aggregate-then-rank vs rank-then-aggregate"] == -1.0


def test_bootstrap_rank_then_aggregate_is_a_weighted_sum_of_per_item_ranks() -> None:
    rng = np.random.default_rng(5)
    n, k, b = 30, 3, 300
    s = rng.normal([0.5, 0.55, 0.45], 0.2, size=(n, k))
    s[0, 1] = np.nan
    w = rng.multinomial(n, np.full(n, 1 / n), size=b)
    rs = ranking_schemes(s, higher_is_better=True, names=list("abc"), weights=w)
    rob = rs.scheme("rank-then-aggregate").robustness
    assert rob is not None
    # direct: expand each resample's items, re-rank per item, average, rank the averages
    counts = np.zeros((k, k))
    for row in w:
        items = np.repeat(np.arange(n), row)
        per_item = np.array([sps.rankdata(np.where(np.isnan(r), np.inf, -r), method="min") for r in s[items]])
        for j, r in enumerate(_direct_min_ranks(per_item.mean(0), False)):
            counts[j, r - 1] += 1
    by_name = {e.name: e for e in rob.entries}
    for j, name in enumerate("abc"):
        assert by_name[name].frequencies == pytest.approx(tuple(counts[j] / b), abs=1e-12)


def test_consensus_is_the_euclidean_consensus() -> None:
    ranks = {"t1": [1, 2, 3, 4], "t2": [1, 2, 4, 3], "t3": [1, 3, 2, 4]}
    c = consensus_ranking(ranks, names=list("abcd"))
    table = np.array(list(ranks.values()))
    best = min(itertools.permutations(range(1, 5)), key=lambda p: ((table - np.array(p)) ** 2).sum())
    assert c.ranks == best
    assert c.mean_ranks == pytest.approx(tuple(table.mean(0)))
    assert set(c.disagreements) == {"b", "c", "d"}  # "a" is first on every task


def test_refusals() -> None:
    with pytest.raises(ValueError, match="no result"):
        ranking_schemes(np.array([[np.nan, 1.0], [np.nan, 2.0]]), higher_is_better=True)
    with pytest.raises(ValueError, match="ties"):
        rank_robustness([0.5, 0.5], np.ones((10, 2)), higher_is_better=True)


def test_kendall_tau_b_routes_agree_on_a_large_board(monkeypatch: pytest.MonkeyPatch) -> None:
    import stats.robustness as robustness

    rng = np.random.default_rng(6)
    ref = rng.normal(size=400)
    samples = np.round(ref + rng.normal(0, 0.5, size=(5, 400)), 1)  # ties
    per_resample = kendall_tau_b(ref, samples)  # K = 400: scipy per resample
    monkeypatch.setattr(robustness, "_TAU_PAIRWISE_MAX_K", 1000)
    vectorised = kendall_tau_b(ref, samples)
    assert per_resample == pytest.approx(vectorised, abs=1e-12)


def test_challenge_ranking_combines_each_scheme_across_tasks() -> None:
    rng = np.random.default_rng(7)
    names = ["a", "b", "c", "d"]
    per_task = {}
    direct: dict[str, list[list[int]]] = {}
    for t in range(3):
        s = np.clip(rng.normal([0.7, 0.72, 0.65, 0.7], 0.2, size=(25, 4)), 0, 1)
        order = rng.permutation(4)  # each task lists the entries in its own order
        rs = ranking_schemes(s[:, order], higher_is_better=True, names=[names[i] for i in order])
        per_task[f"t{t}"] = rs
        for sc in rs.schemes:
            by_name = dict(zip(rs.names, sc.ranks, strict=True))
            direct.setdefault(sc.scheme, []).append([by_name[n] for n in names])
    c = challenge_ranking(per_task)
    assert c.names == tuple(names)
    for scheme, table in direct.items():
        mean = np.mean(table, axis=0)
        assert c.consensus[scheme].mean_ranks == pytest.approx(tuple(mean))
        assert c.consensus[scheme].ranks == tuple(sps.rankdata(mean, method="min").astype(int))
    ranks = np.array([c.consensus[s].ranks for s in c.consensus])
    assert set(c.disagreements) == {names[j] for j in range(4) if len(set(ranks[:, j])) > 1}
    json.dumps(c.as_dict(), allow_nan=False)
    with pytest.raises(ValueError, match="other entries"):
        challenge_ranking(
            {"x": per_task["t0"], "y": ranking_schemes(np.ones((3, 2)) * [1, 2], higher_is_better=True)}
        )
