"""A new entry's step-down and verdicts from the previous board's (issue 24): the full rebuild's numbers.

``stats.board_update._StepDown`` keeps a table of levels (which of the step-down's bounds separates each
pair) between boards, so a step whose bound is one of the previous board's reads the table, and a bound
between two of them evaluates only the pairs of the level it splits; ``_verdicts_extended`` keeps the
previous entries' verdicts when the old pairs' decisions are the previous ones.
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np
import pytest

import stats.board_update as bu
from stats import board as board_module
from stats.board import build_board
from stats.board_update import BoardCache, _StepDown, _verdicts_extended
from stats.compare_ranks import _separated_by
from tests.stats.board_helpers import noisy_board as _board
from tests.stats.board_helpers import same_board as _same


def _counted(monkeypatch: pytest.MonkeyPatch) -> collections.Counter[str]:
    """Which paths the step-down and the verdicts took."""
    seen: collections.Counter[str] = collections.Counter()
    insert, extended = bu._StepDown._insert, bu._verdicts_extended

    def counted_insert(self: _StepDown, bound: float) -> int:
        at = sum(1 for c in self.bounds if c > bound)
        if at < len(self.bounds) and self.bounds[at] == bound:
            seen["bound kept"] += 1
        elif at < len(self.bounds) and self.bounds:
            seen["bound between"] += 1
        elif self.bounds:
            seen["bound below"] += 1
        return insert(self, bound)

    def counted_extended(*args: Any, **kwargs: Any) -> Any:
        seen["verdicts kept"] += 1
        return extended(*args, **kwargs)

    def counted_table(*args: Any, **kwargs: Any) -> _StepDown:
        seen["table extended"] += 1
        return table(*args, **kwargs)

    table = bu._StepDown.extended
    monkeypatch.setattr(bu._StepDown, "_insert", counted_insert)
    monkeypatch.setattr(bu._StepDown, "extended", counted_table)
    monkeypatch.setattr(bu, "_verdicts_extended", counted_extended)
    return seen


@pytest.mark.parametrize("share", [0.0, 1.0])  # the split level evaluated by one full pass, or pair by pair
@pytest.mark.parametrize(("seed", "higher", "ties"), [(0, True, False), (1, False, True), (2, True, True)])
def test_a_chain_of_new_entries_equals_the_full_rebuilds(
    monkeypatch: pytest.MonkeyPatch, share: float, seed: int, higher: bool, ties: bool
) -> None:
    monkeypatch.setattr(bu, "_SPARSE_SHARE", share)
    seen = _counted(monkeypatch)
    k, b = 40, 300
    theta, point = _board(seed, k, b, ties=ties)
    names = [f"n{j:03d}" for j in range(k)]
    order = np.random.default_rng(seed).permutation(k)  # entries arrive anywhere: top, bottom, middle
    options = {
        "higher_is_better": higher,
        "metric_name": "m",
        "seed": 0,
        "interval": "percentile",
        "test": "bootstrap",
        "n_items": 500,
    }
    cache = BoardCache()
    for m in range(4, k + 1):
        cols = np.sort(order[:m])
        args = {"names": [names[j] for j in cols], "values": point[cols], "replicates": theta[:, cols]}
        got = cache.build(**args, **options)
        assert cache.last == ("full" if m == 4 else "incremental")
        _same(got, build_board(**args, **options))
    # a step's bound the previous board's (kept), between two of its bounds, and the verdicts kept
    assert seen["bound kept"] > 0 and seen["bound between"] > 0 and seen["verdicts kept"] > 0
    assert seen["table extended"] == k - 4


def _zero_pairs(p: np.ndarray, se: np.ndarray) -> np.ndarray:
    zero = (se == 0) & (p[:, None] != p[None, :])
    np.fill_diagonal(zero, False)
    return zero


def _pairs(rng: np.random.Generator, k: int) -> tuple[np.ndarray, np.ndarray]:
    p = np.round(rng.normal(0, 1, k), 1)  # ties
    se = rng.uniform(0.05, 0.5, (k, k))
    se = np.triu(se, 1) + np.triu(se, 1).T
    se[2, 5] = se[5, 2] = 0.0  # a zero standard error (different or equal values)
    se[3, 4] = se[4, 3] = 0.0
    p[4] = p[3]
    return p, se


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_each_step_separates_the_pairs_above_its_bound(monkeypatch: pytest.MonkeyPatch, share: float) -> None:
    """After every call ``separated`` is ``_separated_by`` at the lowest bound so far (with the zero
    standard errors' pairs), whether the bound is new, kept, between two kept ones or below them all."""
    monkeypatch.setattr(bu, "_SPARSE_SHARE", share)
    rng = np.random.default_rng(5)
    k = 60
    p, se = _pairs(rng, k)
    step = _StepDown(p, se, None, [])
    bounds: list[float] = []
    for sequence in ([9.0, 6.0, 6.0, 7.0, 4.0], [12.0, 6.0, 5.0, 3.0, 3.5, 1.0], [8.0, 6.0, 2.0, 0.5]):
        # each sequence a board: its table extended by a new entry (the last one's row and column new)
        separated = _zero_pairs(p, se)
        lowest = np.inf
        for bound in sequence:
            before = int(separated.sum())
            moved = step(separated, bound)
            lowest = min(lowest, bound)
            want = _separated_by(p, se, lowest) | _zero_pairs(p, se)
            assert np.array_equal(separated, want)
            assert moved == (int(want.sum()) > before)
            bounds.append(bound)
        assert step.bounds == sorted(set(step.bounds), reverse=True)
        assert step.levels is not None
        old = np.arange(k)
        k += 1
        p = np.append(p, p[7])  # the new entry ties with an old one
        grown = rng.uniform(0.05, 0.5, k)
        grown[-1] = 0.0
        grown[0] = 0.0  # a zero standard error with the new entry
        se = np.block([[se, grown[:-1, None]], [grown[None, :-1], np.zeros((1, 1))]])
        step = _StepDown.extended(p, se, step.levels, step.bounds, old, k - 1)
        for i, bound in enumerate(step.bounds):  # the new row and column at every kept bound
            assert np.array_equal(step.levels <= i + 1, _separated_by(p, se, bound) | _zero_pairs(p, se))


def test_the_table_is_dropped_for_a_bound_that_is_not_finite() -> None:
    p, se = _pairs(np.random.default_rng(1), 20)
    step = _StepDown(p, se, None, [])
    separated = _zero_pairs(p, se)
    assert step(separated, 3.0) is not None
    assert step(separated, float("nan")) is None
    assert step.levels is None and step(separated, 1.0) is None


def test_verdicts_of_entries_the_new_one_passes() -> None:
    """The previous verdicts' blocks changed where the new entry is better: a new decider when its gap is
    larger, or equal and its name smaller (gaps tie on a grid of values with equal standard errors)."""
    decided_by_new = kept = 0
    for seed in range(8):
        decided = _one_board_of_verdicts(seed)
        decided_by_new += int((decided == -1).sum())
        kept += int((decided >= 0).sum())
    assert decided_by_new > 0 and kept > 0


def _one_board_of_verdicts(seed: int) -> np.ndarray:
    """The deciders of the entries found worse (-1: the new entry), checked against the full blocks."""
    rng = np.random.default_rng(seed)
    k1 = 50
    point = rng.integers(0, 12, k1) / 10.0
    se = np.full((k1, k1), 0.1)
    se[rng.random((k1, k1)) < 0.3] = 0.2
    se = np.triu(se, 1) + np.triu(se, 1).T
    better = (point[:, None] > point[None, :]) & (rng.random((k1, k1)) < 0.7)
    new = int(rng.integers(0, k1))
    point[new] = point.max()  # ties with the leader: equal gaps where the standard errors are equal
    better[:, new] = False
    better[new] = point[new] > point  # the new entry beats every entry below it
    names = [f"e{(7 * j) % k1:03d}" for j in range(k1)]
    sign = 1.0
    leader = int(np.argmax(point))
    old = np.array([j for j in range(k1) if j != new], dtype=np.intp)
    sim = type("Sim", (), {"better": better, "standard_errors": se})()
    prev_sim = type(
        "Sim", (), {"better": better[np.ix_(old, old)], "standard_errors": se[np.ix_(old, old)]}
    )()
    prev_names = [names[j] for j in old]
    prev_leader = int(np.argmax(point[old]))
    worse, compared = board_module._verdict_blocks(
        prev_sim, point[old], board_module._name_ranks(prev_names), sign=sign, leader=prev_leader
    )
    previous = bu._State(
        names=tuple(prev_names),
        point=point[old],
        theta=np.zeros((1, old.size)),
        options={},
        bounds={},
        ranks=None,
        higher_is_better=True,
        maxt=None,
        maxt_key=None,
        jackknife=None,
        gram=None,
        verdict_worse=worse,
        verdict_compared=compared,
    )
    rank = board_module._name_ranks(names)
    got = _verdicts_extended(sim, point, rank, sign=sign, leader=leader, previous=previous, old=old, new=new)
    want = board_module._verdict_blocks(sim, point, rank, sign=sign, leader=leader)
    assert np.array_equal(got[0], want[0])
    assert np.array_equal(got[1][want[0]], want[1][want[0]])
    decided = want[1][want[0]]
    return np.where(decided == new, -1, decided)


def test_a_restored_state_records_the_table_and_the_next_entry_reads_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The table is not exported: the first update after a restore records it afresh, the next reads it."""
    seen = _counted(monkeypatch)
    theta, point = _board(7, 30, 300, ties=False)
    names = [f"n{j:03d}" for j in range(30)]
    options = {
        "higher_is_better": True,
        "metric_name": "m",
        "seed": 0,
        "interval": "percentile",
        "test": "bootstrap",
        "n_items": 500,
    }

    def args(m: int) -> dict[str, Any]:
        return {"names": names[:m], "values": point[:m], "replicates": theta[:, :m]}

    first = BoardCache()
    first.build(**args(28), **options)
    exported = first.export()
    assert exported is not None and "step_levels" not in exported
    cache = BoardCache.restore(exported)
    _same(cache.build(**args(29), **options), build_board(**args(29), **options))
    assert cache.last == "incremental" and seen["table extended"] == 0 and seen["verdicts kept"] == 0
    _same(cache.build(**args(30), **options), build_board(**args(30), **options))
    assert cache.last == "incremental" and seen["table extended"] == 1
