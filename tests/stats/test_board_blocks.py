"""The blocked computations of the board (K = 5,000 in under 10 s, issue 14) give the bits of the
whole-array forms they replaced, on boards that span several blocks, with ties and both directions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stats import board as board_module
from stats import compare_ranks as cr
from stats.board import build_board
from stats.compare import bootstrap_p_values
from stats.compare_ranks import simultaneous_ranks
from stats.intervals import _quantiles


def _replicates(seed: int, k: int, b: int = 240) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy-like replicates on a coarse grid (many exact ties), two identical entries."""
    rng = np.random.default_rng(seed)
    n = 60
    correct = (rng.random((n, k)) < rng.uniform(0.55, 0.8, k)).astype(float)
    correct[:, 1] = correct[:, 0]
    weights = rng.multinomial(n, np.full(n, 1 / n), size=b) / n
    return weights @ correct, correct.mean(axis=0)


def _quantiles_whole(theta: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """The former ``_quantiles``: a transposed copy of every column, partitioned at once."""
    b = theta.shape[0]
    pos = np.nan_to_num(np.clip(probs, 0.0, 1.0), nan=0.0) * (b - 1)
    lo = np.floor(pos).astype(np.intp)
    hi = np.minimum(lo + 1, b - 1)
    frac = pos - lo
    needed = np.concatenate([lo, hi])
    rows = np.ascontiguousarray(theta.T)
    picked = np.empty(needed.shape)
    if np.all(needed == needed[:, :1]):
        rows.partition(np.unique(needed[:, 0]), axis=1)
        picked[:] = rows[:, needed[:, 0]].T
    else:
        for j in range(rows.shape[0]):
            rows[j].partition(np.unique(needed[:, j]))
            picked[:, j] = rows[j, needed[:, j]]
    low_v, high_v = picked[: lo.shape[0]], picked[lo.shape[0] :]
    out = low_v + frac * (high_v - low_v)
    out = np.where(np.isnan(probs), np.nan, out)
    return np.where(np.isnan(theta).any(axis=0), np.nan, out)


def _verdicts_whole(sim: Any, point: np.ndarray, names: list[str], *, sign: float, leader: int) -> Any:
    """The former ``_verdicts``, on whole K x K arrays."""
    k = point.size
    se = sim.standard_errors
    advantage = sign * (point[:, None] - point[None, :])
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, advantage / np.where(se > 0, se, 1.0), np.sign(advantage) * np.inf)
    t = np.round(t, 9)
    better = np.asarray(sim.better, dtype=bool)
    name_rank = np.empty(k, dtype=np.int64)
    name_rank[np.argsort(np.array(names, dtype=object), kind="stable")] = np.arange(k)
    not_self = ~np.eye(k, dtype=bool)

    def pick(candidates: np.ndarray, key: np.ndarray) -> np.ndarray:
        keyed = np.where(candidates, key, np.inf)
        best = keyed.min(axis=1, keepdims=True)
        tied = candidates & (keyed == best)
        return np.asarray(np.where(tied, name_rank[None, :], k).argmin(axis=1), dtype=np.intp)

    beaten_by = better.T & not_self
    worse = beaten_by.any(axis=1)
    compared = np.where(worse, pick(beaten_by, -t.T), leader).astype(np.intp)
    verdicts = ["worse than the best" if bool(w) else "could be the best" for w in worse]
    open_ = not_self[leader] & ~better[leader]
    pool = open_ if open_.any() else not_self[leader]
    compared[leader] = pick(pool[None, :], t[leader][None, :])[0]
    verdicts[leader] = "could be the best" if open_.any() else "best"
    return verdicts, compared


@pytest.mark.parametrize(("seed", "k", "higher"), [(0, 300, True), (1, 300, False), (2, 530, True)])
def test_blocked_parts_equal_the_whole_array_forms(seed: int, k: int, higher: bool) -> None:
    theta, point = _replicates(seed, k)
    sign = 1.0 if higher else -1.0
    assert np.array_equal(board_module._column_sd(theta), theta.std(axis=0, ddof=1))
    order = np.random.default_rng(seed).permutation(k)
    se_like = np.random.default_rng(seed).random((k, k))
    assert np.array_equal(cr._gathered(se_like, order), se_like[np.ix_(order, order)])
    probs = np.stack([np.full(k, 0.025), np.full(k, 0.975)])
    assert np.array_equal(_quantiles(theta, probs), _quantiles_whole(theta, probs))
    varied = probs + np.random.default_rng(seed).uniform(-0.02, 0.02, probs.shape)
    assert np.array_equal(_quantiles(theta, varied), _quantiles_whole(theta, varied))

    sim = simultaneous_ranks(theta, point, higher_is_better=higher)
    names = [f"e{(7 * j) % k:04d}" for j in range(k)]
    leader = min(range(k), key=lambda i: (-sign * point[i], names[i]))
    got = board_module._verdicts(sim, point, names, sign=sign, leader=leader)
    want = _verdicts_whole(sim, point, names, sign=sign, leader=leader)
    assert got[0] == want[0]
    assert np.array_equal(got[1], want[1])

    # the pruned search's preparation (its split of the pairs) is tested on every family of boards in
    # tests/stats/test_board_families.py (issue 24 replaced the flat form it was compared with here)
    y = theta - point
    se, sd = cr._pair_standard_errors(y)
    search = cr._Exceedances(y, se, sd)
    search._prepare(4.0)
    for part in search.parts:
        local = se[np.ix_(part.cols, part.cols)]
        ratio = local / np.maximum(part.sdv[:, None] + part.sdv[None, :], np.finfo(float).tiny)
        assert np.all(ratio[part.mask] >= part.gamma)


@pytest.mark.parametrize("higher", [True, False])
def test_board_p_values_and_sd_of_the_differences_by_blocks(higher: bool) -> None:
    theta, point = _replicates(5, 200)
    names = [f"t{j}" for j in range(200)]
    board = build_board(
        names=names,
        values=point,
        replicates=theta,
        higher_is_better=higher,
        metric_name="accuracy",
        seed=0,
        test="bootstrap",
        interval="percentile",
        n_items=60,
    )
    sign = 1.0 if higher else -1.0
    leader = min(range(200), key=lambda i: (-sign * point[i], names[i]))
    diff = theta - theta[:, [leader]]
    p = bootstrap_p_values(diff, point - point[leader], rule="percentile")
    p[leader] = 1.0
    sd = theta.std(axis=0, ddof=1)
    for row in board.rows:
        i = int(row.name[1:])
        assert row.p_value == p[i]
        assert row.test_set_sd == sd[i]
