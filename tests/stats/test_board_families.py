"""No data-dependent cliff (issue 24): on every family of boards (tests/benchmarks/families.py: spread
accuracies, nested errors, near-duplicate entries, many exact ties, a run of nested entries among spread
ones, ten such runs interleaved in value, a mix) the max-t search, whichever way it splits the pairs
between the pruned and the dense computation, gives the dense computation's numbers to the last bit, and
so do the board and the incremental board."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import stats.compare_ranks as cr
from stats.board import build_board
from stats.board_update import BoardCache
from stats.compare_ranks import simultaneous_ranks
from tests.benchmarks import families


def _board(family: str, k: int, n: int = 300, b: int = 400, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    return families.replicates(families.correctness(family, n, k, seed=seed), b, seed=seed)


def _dense(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cr, "_DENSE_MAX_PAIRS", 10**9)


def _pruned(monkeypatch: pytest.MonkeyPatch, candidate_cost: float) -> None:
    monkeypatch.setattr(cr, "_DENSE_MAX_PAIRS", 0)
    monkeypatch.setattr(cr, "_DENSE_PER_ENTRY", 0)
    monkeypatch.setattr(cr, "_CANDIDATE_COST", candidate_cost)


def _sampled(monkeypatch: pytest.MonkeyPatch, sampled: bool, blocks: int = 3) -> None:
    """Plans count their ratios on a sample of ``blocks`` of their row blocks, as at K = 10,000 (blocks of
    2 rows; at K = 64, 32 blocks, and with ``blocks=4`` blocks 4, 12, 20 and 28 are counted)."""
    if sampled:
        monkeypatch.setattr(cr, "_PREPARE_ROWS", 2)
        monkeypatch.setattr(cr, "_PLAN_BLOCKS", blocks)
        monkeypatch.setattr(cr, "_PLAN_MIN_PAIRS", 0)


def _referenced_sizes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of entries of every referenced plan planned from now on (a list filled as they are)."""
    sizes: list[int] = []
    referenced = cr._Exceedances._referenced

    def counted(self: cr._Exceedances, *args: Any) -> Any:
        sizes.append(args[1].size)
        return referenced(self, *args)

    monkeypatch.setattr(cr._Exceedances, "_referenced", counted)
    return sizes


def test_the_families_have_their_shape() -> None:
    for family in families.FAMILIES:
        c = families.correctness(family, 500, 40, seed=1)
        assert c.shape == (500, 40) and c.dtype == bool
        assert np.array_equal(c, families.correctness(family, 500, 40, seed=1))
    ties = families.correctness("ties", 500, 60, seed=1)
    columns = {col.tobytes() for col in ties.T}
    assert len(columns) <= 40  # a third are exact copies
    nested = families.correctness("nested", 2000, 30, seed=1)
    # harder items are missed first: a better entry misses few items a worse one gets right
    acc = nested.mean(axis=0)
    lo, hi = int(np.argmin(acc)), int(np.argmax(acc))
    assert (~nested[:, hi] & nested[:, lo]).sum() < 0.03 * 2000
    with pytest.raises(ValueError, match="unknown family"):
        families.correctness("other", 10, 3)


@pytest.mark.parametrize("family", families.FAMILIES)
@pytest.mark.parametrize("candidate_cost", [0.0, 40.0, 1e12, np.inf])
@pytest.mark.parametrize("reference_when", [0.0, 1e9])
@pytest.mark.parametrize("sampled", [False, True])
def test_the_max_t_sets_equal_the_dense_computation(
    family: str, candidate_cost: float, reference_when: float, sampled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Candidate cost 0: every pair searched by the bound; 8: the chosen split; 1e12: the dense computation
    wherever anything is crossed; infinite: every pair dense (nan costs never win). Sampled: the plans
    count their ratios on a sample of their blocks."""
    theta, point = _board(family, 70)
    with monkeypatch.context() as m:
        _dense(m)
        want = simultaneous_ranks(theta, point, higher_is_better=True)
    _pruned(monkeypatch, candidate_cost)
    _sampled(monkeypatch, sampled)
    monkeypatch.setattr(cr, "_REFERENCE_WHEN", reference_when)  # 0: the referenced parts are tried
    monkeypatch.setattr(cr, "_THIRD_WHEN", reference_when)  # and so is the third plan (1e9: neither)
    got = simultaneous_ranks(theta, point, higher_is_better=True)
    assert got.critical_value == want.critical_value  # bit for bit
    assert got.steps == want.steps
    np.testing.assert_array_equal(got.better, want.better)
    np.testing.assert_array_equal(got.lower, want.lower)
    np.testing.assert_array_equal(got.upper, want.upper)


@pytest.mark.parametrize("family", families.FAMILIES)
@pytest.mark.parametrize("reference_when", [0.0, 1e9])
@pytest.mark.parametrize("sampled", [False, True])
def test_the_split_keeps_the_bound_true(
    family: str, reference_when: float, sampled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every pair is in exactly one part or in the dense list; every pair a part searches has
    se_jk >= gamma (s_j + s_k), s the standard deviations of the part's shifted entries."""
    theta, point = _board(family, 90)
    y = theta - point
    se, sd = cr._pair_standard_errors(y)
    monkeypatch.setattr(cr, "_REFERENCE_WHEN", reference_when)  # 0: the referenced parts are tried
    monkeypatch.setattr(cr, "_THIRD_WHEN", reference_when)  # and so is the third plan (1e9: neither)
    _sampled(monkeypatch, sampled)
    for cost in (0.0, 40.0, 1e12, np.inf):
        monkeypatch.setattr(cr, "_CANDIDATE_COST", cost)
        search = _split_checked(y, se, sd, point)
        if cost == np.inf:
            assert search.dense_all


def _split_checked(y: np.ndarray, se: np.ndarray, sd: np.ndarray, point: np.ndarray) -> cr._Exceedances:
    """The search's plan, checked: every pair in exactly one part or the dense list, every part's bound true."""
    search = cr._Exceedances(y, se, sd, order=np.argsort(point, kind="stable"))
    search._prepare(4.0)
    upper = np.triu(se > 0, 1)
    covered = np.zeros(se.shape, dtype=np.int64)
    np.add.at(covered, (search.special_j, search.special_k), 1)
    assert np.all(search.special_j < search.special_k)
    for part in search.parts:
        local = np.triu(part.mask, 1) if np.all(np.diff(part.cols) > 0) else part.mask
        li, lj = np.nonzero(local)
        gj, gk = part.cols[li], part.cols[lj]
        np.add.at(covered, (np.minimum(gj, gk), np.maximum(gj, gk)), 1)
        ratio = se[gj, gk] / np.maximum(part.sdv[li] + part.sdv[lj], np.finfo(float).tiny)
        assert np.all(ratio >= part.gamma)
        assert part.gamma == ratio.min() * (1 - 1e-9)  # the part's smallest ratio (every block: exact)
        s_expected = sd[part.cols] if part.ref < 0 else se[part.cols, part.ref]
        assert np.array_equal(part.sdv, s_expected)
    assert np.array_equal(covered, upper.astype(np.int64))  # every pair exactly once
    return search


@pytest.mark.parametrize(("k", "group_min"), [(70, 8), (90, 32)])
@pytest.mark.parametrize("sampled", [False, True])
def test_the_mixed_plan_keeps_the_bound_true_and_the_dense_numbers(
    k: int, group_min: int, sampled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan without a reference except for the pairs it would compute densely, which are searched with
    references among the entries they involve (the mix family at K = 5,000 computed every nested pair
    densely before it): every pair once, the bounds true, the dense computation's numbers to the bit."""
    theta, point = _board("mix", k)
    with monkeypatch.context() as m:
        _dense(m)
        want = simultaneous_ranks(theta, point, higher_is_better=True)
    _pruned(monkeypatch, 40.0)
    monkeypatch.setattr(cr, "_REFERENCE_WHEN", 0.0)
    monkeypatch.setattr(cr, "_THIRD_WHEN", 0.0)  # tried (at B = 400 its dense pairs weigh too little)
    monkeypatch.setattr(cr, "_TAIL_COST", 0.0)  # tails free: on so small a board the mixed plan wins
    monkeypatch.setattr(cr, "_GROUP_MIN", group_min)
    _sampled(monkeypatch, sampled)
    y = theta - point
    se, sd = cr._pair_standard_errors(y)
    search = _split_checked(y, se, sd, point)
    refs = [part.ref for part in search.parts]
    assert min(refs) < 0 <= max(refs)  # a part without a reference beside referenced ones
    got = simultaneous_ranks(theta, point, higher_is_better=True)
    assert got.critical_value == want.critical_value
    assert got.steps == want.steps
    np.testing.assert_array_equal(got.better, want.better)


@pytest.mark.parametrize("family", families.FAMILIES)
@pytest.mark.parametrize("sampled", [False, True])
def test_a_plans_dense_entries_are_those_of_its_dense_pairs(
    family: str, sampled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plan's dense entries, counted without listing its dense pairs (what the third plan needs to know
    whether to be tried), are the entries of the pairs it lists, and their number is theirs; with and
    without a reference and a cover."""
    theta, point = _board(family, 90)
    y = theta - point
    se, sd = cr._pair_standard_errors(y)
    _sampled(monkeypatch, sampled)
    cols = np.arange(1, 90, 2)
    rng = np.random.default_rng(5)
    cover = np.triu(rng.random((cols.size, cols.size)) < 0.7, 1)
    cover |= cover.T
    for cost in (0.0, 40.0, 1e12):
        monkeypatch.setattr(cr, "_CANDIDATE_COST", cost)
        search = cr._Exceedances(y, se, sd)
        for plan_cols, ref, plan_cover in ((np.arange(90), -1, None), (cols, 44, cover)):
            _, split = search._plan(4.0, plan_cols, ref, plan_cover)
            _, sj, sk = split.pairs()
            involved, n = split.entries()
            want = np.zeros(90, dtype=bool)
            want[sj] = want[sk] = True
            assert n == sj.size
            np.testing.assert_array_equal(involved, want)
            if cost == 1e12:
                assert n > 0  # the dense computation wherever anything is crossed


@pytest.mark.parametrize("sampled", [False, True])
def test_a_run_of_nested_entries_is_planned_with_references_whatever_the_first_plans_cost(
    sampled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run of consecutive nested entries among spread ones (the ``nested_run`` family): the plan over all
    pairs computes the run's pairs densely, and its cost stays below the second plan's share (at K =
    10,000 the run's pairs are 0.7% of all). The third plan (references among the entries of the first
    plan's dense pairs) is tried all the same once those pairs' dense statistics outweigh planning it, and
    taken: part of the run is searched with a reference inside the run. Below that weight it is not tried.
    The numbers are the dense computation's."""
    k = 600
    theta, point = _board("nested_run", k)
    with monkeypatch.context() as m:
        _dense(m)
        want = simultaneous_ranks(theta, point, higher_is_better=True)
    _pruned(monkeypatch, 40.0)
    _sampled(monkeypatch, sampled, blocks=30)  # a tenth of the blocks, as at K = 10,000
    monkeypatch.setattr(cr, "_REFERENCE_WHEN", 1e9)  # the second plan is never tried
    tried = _referenced_sizes(monkeypatch)
    y = theta - point
    se, sd = cr._pair_standard_errors(y)
    run = np.arange(k // 3, k // 3 + (3 * k) // 25)

    def dense_in_run(search: cr._Exceedances) -> int:
        return int(np.sum(np.isin(search.special_j, run) & np.isin(search.special_k, run)))

    first = _split_checked(y, se, sd, point)  # B = 400: the dense pairs weigh too little (_THIRD_WHEN)
    assert not tried and [part.ref for part in first.parts] == [-1]
    assert dense_in_run(first) > 0.9 * run.size * (run.size - 1) / 2  # nearly all the run's pairs
    monkeypatch.setattr(cr, "_THIRD_WHEN", 0.0)
    search = _split_checked(y, se, sd, point)
    assert len(tried) == 1 and 0 < tried[0] < k  # the entries of the first plan's dense pairs
    refs = [part.ref for part in search.parts if part.ref >= 0]
    assert refs and set(refs) <= set(run.tolist())
    assert dense_in_run(search) < 0.6 * dense_in_run(first)  # the referenced parts search the rest
    got = simultaneous_ranks(theta, point, higher_is_better=True)
    assert got.critical_value == want.critical_value
    assert got.steps == want.steps
    np.testing.assert_array_equal(got.better, want.better)
    np.testing.assert_array_equal(got.lower, want.lower)
    np.testing.assert_array_equal(got.upper, want.upper)


def _interleaved_runs() -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """The ``nested_runs`` family's shape at a size where a run's pairs outweigh its parts: three runs of
    100 nested entries (each over the board's range of values) between blocks of 100 spread ones, K = 600
    (the family's own runs are K / 20 entries: 30 here, whose 435 pairs are cheaper dense)."""
    rng = np.random.default_rng(0)
    base = families.spread(rng, 300, 300)
    columns: list[np.ndarray] = []
    for i in range(3):
        columns += [base[:, 100 * i : 100 * (i + 1)], families.nested(rng, 300, 100)]
    theta, point = families.replicates(np.concatenate(columns, axis=1), 400)
    return theta, point, [np.arange(200 * i + 100, 200 * i + 200) for i in range(3)]


@pytest.mark.parametrize("sampled", [False, True])
def test_runs_of_nested_entries_interleaved_in_value_are_planned_run_by_run(
    sampled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs of nested entries whose values interleave (the ``nested_runs`` family's shape; three runs of
    100 here): the third plan's groups, consecutive in value over all the runs, would take their references
    from one run for the pairs of another. Planned run by run (the components of the dense pairs' graph), each referenced part lies in
    one run with its reference in that run, and fewer of the runs' pairs are dense than without it, also
    when the third plan is not tried. Where a run's parts would cost more than its dense pairs
    (:data:`_PART_COST`), nothing is planned by runs. The numbers are the dense computation's."""
    theta, point, runs = _interleaved_runs()
    k = theta.shape[1]
    with monkeypatch.context() as m:
        _dense(m)
        want = simultaneous_ranks(theta, point, higher_is_better=True)
    _pruned(monkeypatch, 10.0)  # the spread pairs searched, the runs' pairs dense, in the first plan
    _sampled(monkeypatch, sampled, blocks=30)
    monkeypatch.setattr(cr, "_REFERENCE_WHEN", 1e9)  # the second plan is never tried
    monkeypatch.setattr(cr, "_THIRD_WHEN", 0.0)  # the third is (B = 400: too few otherwise)
    monkeypatch.setattr(cr, "_GROUP_MIN", 8)
    y = theta - point
    se, sd = cr._pair_standard_errors(y)
    run_of = np.full(k, -1)
    for i, run in enumerate(runs):
        run_of[run] = i

    def dense_in_runs(search: cr._Exceedances) -> int:
        same = run_of[search.special_j] == run_of[search.special_k]
        return int(np.sum(same & (run_of[search.special_j] >= 0)))

    def run_parts(search: cr._Exceedances) -> set[int]:
        """The runs holding a referenced part whole, with its reference."""
        held = set()
        for part in search.parts:
            if part.ref >= 0 and np.unique(run_of[part.cols]).size == 1:
                assert run_of[part.ref] == run_of[part.cols[0]] >= 0
                held.add(int(run_of[part.ref]))
        return held

    monkeypatch.setattr(cr, "_PART_COST", 1e9)  # every run's parts cost more than its pairs
    costly = _split_checked(y, se, sd, point)
    assert not run_parts(costly)
    monkeypatch.setattr(cr, "_PART_COST", 0.0)
    with monkeypatch.context() as m:
        m.setattr(cr._Exceedances, "_by_components", lambda *args, **kwargs: None)
        without = _split_checked(y, se, sd, point)
    assert dense_in_runs(without) > 0.5 * sum(r.size * (r.size - 1) / 2 for r in runs)
    search = _split_checked(y, se, sd, point)
    assert run_parts(search) == {0, 1, 2}
    assert dense_in_runs(search) < 0.5 * dense_in_runs(without)
    # the third plan not tried (planning all its entries' pairs would outweigh their dense pairs; so it
    # is when every entry is in a dense pair): the runs are planned all the same, and only they
    monkeypatch.setattr(cr, "_THIRD_WHEN", 50.0)
    planned = _referenced_sizes(monkeypatch)
    alone = _split_checked(y, se, sd, point)
    assert planned == [100, 100, 100]
    assert run_parts(alone) == {0, 1, 2}
    got = simultaneous_ranks(theta, point, higher_is_better=True)
    assert got.critical_value == want.critical_value
    assert got.steps == want.steps
    np.testing.assert_array_equal(got.better, want.better)
    np.testing.assert_array_equal(got.lower, want.lower)
    np.testing.assert_array_equal(got.upper, want.upper)


def test_a_plan_whose_sample_holds_no_pair_counts_every_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sparse cover (the third plan's) whose pairs all lie in blocks the sample skips: the plan counts
    every block and splits every pair, instead of finding none."""
    theta, point = _board("spread", 64)
    y = theta - point
    se, sd = cr._pair_standard_errors(y)
    _sampled(monkeypatch, True, blocks=4)  # 32 blocks of 2 rows: blocks 4, 12, 20 and 28 counted
    cover = np.zeros((64, 64), dtype=bool)
    cover[0, 1:] = True  # entry 0 with every other: row block 0 only
    cover |= cover.T
    _, split = cr._Exceedances(y, se, sd)._plan(4.0, np.arange(64), -1, cover)
    part, sj, sk = split.pairs()
    held = set(zip(sj.tolist(), sk.tolist(), strict=True))
    if part is not None:
        held |= set(zip(*(a.tolist() for a in np.nonzero(np.triu(part.mask, 1))), strict=True))
    assert held == {(0, j) for j in range(1, 64)}


def test_a_pair_the_sample_misses_is_dense_and_leaves_the_others_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Plans count their ratios on a sample of their row blocks. Two near-duplicates among entries that vary
    independently, in rows the sample skips: their pair is computed densely and the other pairs keep a bound
    near the one the sample saw. Searched with the smallest ratio of all, every pair would have a bound of
    about 0 and the search would cross them all. The numbers are the dense computation's."""
    rng = np.random.default_rng(3)
    b, k = 400, 64
    theta = 0.55 + 0.01 * rng.standard_normal((b, k))
    theta[:, 1] = theta[:, 0] + 1e-6 * rng.standard_normal(b)  # entries 0 and 1: row block 0
    point = theta.mean(axis=0)
    with monkeypatch.context() as m:
        _dense(m)
        want = simultaneous_ranks(theta, point, higher_is_better=True)
    _pruned(monkeypatch, 40.0)
    _sampled(monkeypatch, True, blocks=4)  # 32 blocks of 2 rows: blocks 4, 12, 20 and 28 counted
    y = theta - point
    se, sd = cr._pair_standard_errors(y)
    duplicates = se[0, 1] / (sd[0] + sd[1])
    assert duplicates < 1e-3
    search = cr._Exceedances(y, se, sd)
    search._prepare(4.0)
    assert (0, 1) in set(zip(search.special_j.tolist(), search.special_k.tolist(), strict=True))
    (part,) = search.parts
    assert part.gamma > 100 * duplicates
    assert not part.mask[0, 1]
    got = simultaneous_ranks(theta, point, higher_is_better=True)
    assert got.critical_value == want.critical_value
    np.testing.assert_array_equal(got.better, want.better)


def test_the_tail_pairs_are_every_pair_the_bound_lets_through() -> None:
    """The candidates of a part's resample are every (j, k) with up_j >= low_k (a prefix of the lower
    candidates sorted by row and value), also with ties and a row of one value, and hardly any more."""
    rng = np.random.default_rng(5)
    up = np.round(rng.normal(size=(40, 30)), 1)
    low = up + np.round(rng.uniform(0, 2, size=30), 1)
    up[3] = low[3] = 0.5  # one value in the row
    j_rows, j_cols, k_cols, start, reps = cr._tail_pairs(up, low)
    got = set()
    for row, j, start_r, n in zip(j_rows, j_cols, start[j_rows], reps, strict=True):
        for kk in k_cols[start_r : start_r + n]:
            got.add((int(row), int(j), int(kk)))
    want = {(b, j, kk) for b in range(40) for j in range(30) for kk in range(30) if up[b, j] >= low[b, kk]}
    assert want <= got
    # a key rounds: an extra candidate only where low_k exceeds up_j in the last bits (checked exactly later)
    assert all(low[b, kk] - up[b, j] <= 1e-12 for b, j, kk in got)
    assert len(got) < 1.05 * len(want)


def _options(n: int) -> dict[str, Any]:
    return {
        "higher_is_better": True,
        "metric_name": "accuracy",
        "seed": 0,
        "interval": "percentile",
        "test": "bootstrap",
        "n_items": n,
    }


@pytest.mark.parametrize("family", families.FAMILIES)
def test_the_board_and_the_incremental_board_on_every_family(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    k = 80
    theta, point = _board(family, k + 1, seed=3)
    names = [f"e{i:03d}" for i in range(k + 1)]
    with monkeypatch.context() as m:
        _dense(m)
        want_k = build_board(names=names[:k], values=point[:k], replicates=theta[:, :k], **_options(300))
        want = build_board(names=names, values=point, replicates=theta, **_options(300))
    _pruned(monkeypatch, 40.0)
    got_k = build_board(names=names[:k], values=point[:k], replicates=theta[:, :k], **_options(300))
    assert got_k.as_dict() == want_k.as_dict()
    cache = BoardCache()
    cache.build(names=names[:k], values=point[:k], replicates=theta[:, :k], **_options(300))
    got = cache.build(names=names, values=point, replicates=theta, **_options(300))
    assert cache.last == "incremental"
    assert got.as_dict() == want.as_dict()
    assert np.array_equal(got.pair_standard_errors, want.pair_standard_errors)
    assert got.max_t_critical_value == want.max_t_critical_value


@pytest.mark.parametrize("family", ["nested", "mix"])
def test_the_kept_list_covers_every_pair(family: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The state a board leaves for the next one holds every pair's statistics at or above its level (the
    lowest level searched over every pair), checked against the brute force."""
    theta, point = _board(family, 60)
    _pruned(monkeypatch, 40.0)
    _, state = cr._simultaneous(
        theta, point, higher_is_better=True, confidence=0.95, stepdown=True, keep=True
    )
    assert state is not None and np.isfinite(state.level)
    y = theta - point
    se, _ = cr._pair_standard_errors(y)
    found = set(zip(state.pair_j.tolist(), state.pair_k.tolist(), state.rows.tolist(), strict=True))
    expected = set()
    for j in range(60):
        for m in range(j + 1, 60):
            if se[j, m] > 0:
                z = np.abs(y[:, j] - y[:, m]) / se[j, m]
                expected |= {(j, m, int(r)) for r in np.flatnonzero(z >= state.level)}
    assert found == expected
