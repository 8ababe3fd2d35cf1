"""Issue 11, points 1-4: the board's verdict, its interval, the default intervals and several runs.

- the verdict is selection-aware (max-t comparisons with the best) and the difference interval shown next
  to it excludes zero exactly when the verdict decides something; the pairwise table uses the same
  method and sign (demo boards and random boards);
- BCa counts replicates equal to the estimate as one half;
- the default interval of a plain proportion is Wilson's; a degenerate bootstrap is replaced or flagged;
- an entry with several runs gets an interval and comparisons that include the run-to-run variance.
"""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from scipy import special

from stats.board import DEGENERATE_WARNING, VERDICTS, Board, build_board
from stats.engine import score_entries
from stats.intervals import bca_constants, bootstrap_bounds, clopper_pearson_interval
from stats.metrics import get_metric


def _build(truth, preds, names, metric="accuracy", *, labels=None, groups=None, resamples=1000, **options):  # type: ignore[no-untyped-def]
    m = get_metric(metric)
    scores = score_entries(
        truth, preds, metric=m, labels=labels, names=names, resamples=resamples, seed=3, groups=groups
    )
    kwargs = {
        "names": names,
        "values": [s.value for s in scores],
        "replicates": np.column_stack([s.replicates for s in scores]),
        "jackknife": np.column_stack([s.jackknife for s in scores]),
        "higher_is_better": m.higher_is_better,
        "metric_name": m.name,
        "seed": 3,
        "randomizations": 999,
        "grouped": groups is not None,
        "n_items": len(truth),
    }
    if not m.rank_based:
        kwargs["item_statistics"] = [m.item_statistics(truth, p, labels=labels) for p in preds]
        kwargs["finalize"] = m.finalize
        kwargs["zero_one"] = m.zero_one
    kwargs.update(options)
    return build_board(**kwargs)


def _check_consistent(board: Board) -> None:
    pairs = board.pairwise()
    index = {n: i for i, n in enumerate(pairs["names"])}
    for r in board.rows:
        assert r.verdict in VERDICTS
        iv = r.difference_interval
        excludes = iv.low > 0 or iv.high < 0
        assert excludes == (r.verdict != "could be the best"), (r.name, r.verdict, iv)
        assert r.in_best_set_max_t == (r.verdict != "worse than the best")
        assert r.in_best_set_max_t == (r.simultaneous_rank_interval[0] == 1)
        assert iv.method == "max-t" and iv.confidence == pytest.approx(1 - board.alpha)
        if r.compared_with is None:
            continue
        i, j = index[r.name], index[r.compared_with]
        # the pairwise table holds the row's own interval, same method and sign (row minus column)
        assert pairs["difference"][i][j] == pytest.approx(r.difference, abs=1e-12)
        assert pairs["low"][i][j] == iv.low and pairs["high"][i][j] == iv.high
        assert pairs["significant"][i][j] == excludes
    for i in range(len(board.rows)):
        for j in range(len(board.rows)):
            lo, hi = pairs["low"][i][j], pairs["high"][i][j]
            assert (lo > 0 or hi < 0) == pairs["significant"][i][j]
            assert pairs["low"][j][i] == pytest.approx(-hi) and pairs["high"][j][i] == pytest.approx(-lo)


@pytest.mark.parametrize("seed", range(12))
def test_random_boards_show_intervals_that_agree_with_their_verdicts(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 9))
    n = int(rng.integers(30, 400))
    metric = ["accuracy", "macro_f1", "rmse"][seed % 3]
    if metric == "rmse":
        truth = rng.normal(size=n)
        preds = [truth + rng.normal(scale=rng.uniform(0.3, 1.0), size=n) for _ in range(k)]
        labels = None
    else:
        truth = rng.integers(0, 3, n)
        quality = rng.uniform(0.4, 0.9, k)
        preds = [np.where(rng.random(n) < q, truth, rng.integers(0, 3, n)) for q in quality]
        if seed % 4 == 0:
            preds.append(preds[0].copy())  # an exact twin
            k += 1
        labels = [0, 1, 2]
    names = [f"e{i}" for i in range(k)]
    groups = np.arange(n) // 5 if seed % 5 == 1 else None
    board = _build(truth, preds, names, metric, labels=labels, groups=groups, stepdown=bool(seed % 2))
    _check_consistent(board)
    assert len({r.verdict for r in board.rows}) >= 1


@pytest.mark.parametrize("slug", ["iris", "digits"])
def test_demo_boards_show_intervals_that_agree_with_their_verdicts(slug: str) -> None:
    pytest.importorskip("sklearn")
    from leaderboard.demo.data import demo_task

    task = demo_task(slug)
    truth_rows = list(csv.reader(io.StringIO(task.truth_csv.decode())))[1:]
    truth = np.array([r[1] for r in truth_rows])
    names = sorted(task.predictions)
    preds = [
        np.array([r[1] for r in csv.reader(io.StringIO(task.predictions[n].decode()))][1:]) for n in names
    ]
    board = _build(truth, preds, names, labels=task.labels, resamples=2000)
    _check_consistent(board)
    # issue 11: on these boards a BCa interval excluding zero stood next to p = 0.251 and "Not resolved"
    for r in board.rows:
        iv = r.difference_interval
        assert (iv.low > 0 or iv.high < 0) == (r.verdict != "could be the best")


def test_the_verdict_allows_for_the_selection_of_the_leader() -> None:
    """Ten truly equal entries: Holm against the observed leader makes a false claim here; the verdict not."""
    rng = np.random.default_rng(39)
    n = 300
    truth = np.zeros(n, dtype=int)
    z = 0.5 * rng.standard_normal((n, 1)) + np.sqrt(0.75) * rng.standard_normal((n, 10))
    preds = [(special.ndtr(z[:, i]) >= 0.8).astype(int) for i in range(10)]  # all right 80% of the time
    names = [f"e{i}" for i in range(10)]
    board = _build(truth, preds, names, labels=[0, 1])
    row = board.row("e2")
    assert not row.in_best_set_holm and row.adjusted_p_value <= 0.05  # "worse than the leader" (false)
    assert row.verdict == "could be the best" and row.in_best_set
    assert all(r.verdict != "worse than the best" for r in board.rows)
    _check_consistent(board)


def test_bca_counts_replicates_equal_to_the_estimate_as_one_half() -> None:
    # 3 below, 4 equal, 3 above: the share is (3 + 4 / 2) / 10 = 0.5, so z0 = 0 (symmetric lump)
    theta = np.array([[0.1], [0.2], [0.3], [0.5], [0.5], [0.5], [0.5], [0.7], [0.8], [0.9]])
    z0, a = bca_constants(theta, np.array([0.5]), np.array([[0.4], [0.5], [0.6]]))
    assert z0[0] == 0.0 and a[0] == 0.0
    # 2 below, 6 equal, 2 above, estimate shifted: counting ties half gives (2 + 3) / 10 exactly
    theta2 = np.array([[0.0], [0.1], [0.3], [0.3], [0.3], [0.3], [0.3], [0.3], [0.6], [0.7]])
    z0, _ = bca_constants(theta2, np.array([0.3]), np.array([[0.2], [0.3], [0.4]]))
    assert z0[0] == pytest.approx(special.ndtri(0.5))


def test_accuracy_defaults_to_clopper_pearson_and_an_all_correct_entry_is_not_a_point() -> None:
    rng = np.random.default_rng(5)
    n = 100
    truth = rng.integers(0, 2, n)
    perfect = truth.copy()
    good = np.where(rng.random(n) < 0.95, truth, 1 - truth)
    board = _build(truth, [perfect, good], ["perfect", "good"], labels=[0, 1])
    assert board.interval_method == "clopper_pearson" and board.signature.method == "clopper_pearson"
    row = board.row("perfect")
    assert row.interval.method == "clopper_pearson" and row.interval_warning is None
    expected = clopper_pearson_interval(100, 100)
    assert (row.interval.low, row.interval.high) == pytest.approx((expected.low, expected.high))
    assert row.interval.low < 0.97 and row.interval.high == pytest.approx(1.0)
    # other metrics keep the bootstrap (BCa with the jackknife)
    f1 = _build(truth, [perfect, good], ["perfect", "good"], "macro_f1", labels=[0, 1])
    assert f1.interval_method == "bca"


def test_a_degenerate_bootstrap_is_replaced_or_flagged() -> None:
    rng = np.random.default_rng(6)
    n = 100
    truth = rng.integers(0, 2, n)
    good = np.where(rng.random(n) < 0.9, truth, 1 - truth)
    # asked for BCa on a proportion: the all-correct entry is switched to the binomial default, not [1, 1]
    board = _build(truth, [truth.copy(), good], ["perfect", "good"], labels=[0, 1], interval="bca")
    row = board.row("perfect")
    assert row.interval.method == "clopper_pearson" and row.interval.low < 1.0
    assert board.row("good").interval.method == "bca"
    # grouped items: no binomial interval applies, so the degenerate interval is flagged
    groups = np.arange(n) // 4
    grouped = _build(truth, [truth.copy(), good], ["perfect", "good"], labels=[0, 1], groups=groups)
    assert grouped.interval_method == "bca"
    row = grouped.row("perfect")
    assert row.interval_warning == DEGENERATE_WARNING and row.as_dict()["interval_warning"]
    assert grouped.row("good").interval_warning is None


def _runs_board(seed_sd: float) -> Board:
    rng = np.random.default_rng(8)
    b, n = 2000, 1000
    item = rng.normal(0.0, 0.004, size=(b, 1))  # shared item noise (paired)
    theta = np.hstack(
        [0.800 + item + rng.normal(0, 0.002, (b, 1)), 0.790 + item + rng.normal(0, 0.002, (b, 1))]
    )
    runs = [0.800 + seed_sd * np.array([-1.0, 0.0, 1.0]), None]
    return build_board(
        names=["seeded", "single"],
        values=[0.800, 0.790],
        replicates=theta,
        higher_is_better=True,
        metric_name="accuracy",
        seed=1,
        runs=runs,
        n_items=n,
    )


def test_runs_widen_the_interval_and_the_comparison_and_show_both_spreads() -> None:
    calm = _runs_board(0.0005)
    noisy = _runs_board(0.02)
    # the paired test set alone separates the two entries; a seed sd of 0.02 does not let it
    assert calm.row("single").verdict == "worse than the best"
    assert noisy.row("single").verdict == "could be the best"
    row = noisy.row("seeded")
    assert row.interval.method == "two-level-t"
    width = row.interval.high - row.interval.low
    assert width > 2 * 1.96 * 0.02 / np.sqrt(3) * 0.9  # includes sd(runs) / sqrt(R)
    assert noisy.row("single").interval.method == calm.row("single").interval.method
    assert "two-level" in dict(noisy.signature.extra)["runs"]
    shown = row.as_dict()
    assert shown["seed_sd"] == 0.02 and shown["test_set_sd"] == pytest.approx(0.0045, abs=0.0006)
    assert shown["n_runs"] == 3
    # a rounded aggregate only: no per-run score leaves the board
    assert "runs" not in shown and 0.78 not in shown.values() and 0.82 not in shown.values()


def test_two_level_replicates_match_the_variance_of_a_mean_of_runs() -> None:
    from stats.compare_runs import two_level_replicates

    runs = np.array([0.70, 0.74, 0.78, 0.72])
    reps = two_level_replicates(np.zeros(20_000), runs, seed=0, key="x")
    assert reps.var() == pytest.approx(runs.var(ddof=1) / runs.size, rel=0.05)
    again = two_level_replicates(np.zeros(20_000), runs, seed=0, key="x")
    np.testing.assert_array_equal(reps, again)
    with pytest.raises(ValueError, match="run_values"):
        two_level_replicates(np.zeros(10), [0.7], seed=0, key="x")


def test_the_verdict_and_best_set_are_at_alpha_and_labelled_so() -> None:
    rng = np.random.default_rng(9)
    n = 200
    truth = rng.integers(0, 2, n)
    preds = [np.where(rng.random(n) < q, truth, 1 - truth) for q in (0.9, 0.85, 0.8)]
    board = _build(truth, preds, ["a", "b", "c"], labels=[0, 1], confidence=0.9, alpha=0.01)
    extra = dict(board.signature.extra)
    assert "level 0.01" in extra["verdict"] and extra["difference_interval"].endswith("0.99")
    assert all(r.difference_interval.confidence == pytest.approx(0.99) for r in board.rows)
    assert board.as_dict()["verdict_level"] == pytest.approx(0.99)
    _ = bootstrap_bounds  # the value intervals stay at `confidence`
    assert all(r.interval.confidence == 0.9 for r in board.rows)
