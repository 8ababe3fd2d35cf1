"""Issue 21: one default interval per metric, chosen on an exact coverage grid, always in the metric's
range, never a zero-width interval without its warning.

Oracles: the coverage is an exact binomial sum (no Monte Carlo error); the Clopper-Pearson and Wilson
bounds are compared with ``scipy.stats.binomtest(...).proportion_ci`` (method "exact" and "wilson");
published numbers from /work/shared/REFERENCE.md (Wilson 845/1000 = [0.821, 0.866]; Wald's exact
coverage 0.332 and Wilson's 0.940 at n = 20, p = 0.98).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from stats.board import build_board
from stats.cli import main
from stats.coverage import GRID_N, GRID_P, coverage_grid, exact_coverage
from stats.engine import score_entries
from stats.intervals import (
    PROPORTION_DEFAULT,
    PROPORTION_METHODS,
    ZERO_WIDTH_WARNING,
    default_interval,
    intervals_for,
    proportion_bounds,
)
from stats.metrics import METRICS
from stats.signature import Signature

# --------------------------------------------------------------------------------------------------
# the exact grid


def test_the_default_covers_at_least_093_in_every_cell_of_the_exact_grid_and_its_mirror() -> None:
    method = default_interval("accuracy")
    assert method == PROPORTION_DEFAULT == "clopper_pearson"
    assert max(GRID_N) >= 1000 and {0.995, 0.999} <= set(GRID_P)
    for n in GRID_N:
        for p in GRID_P:
            assert exact_coverage(method, n, p) >= 0.93, (n, p)
            assert exact_coverage(method, n, 1 - p) >= 0.93, (n, 1 - p)
    # Clopper-Pearson is conservative by construction: at least the nominal level in every cell
    assert coverage_grid(method).coverage.min() >= 0.95


def test_wilson_fails_the_grid_where_the_issue_says() -> None:
    # issue 21: Wilson at x = n - 1
    assert exact_coverage("wilson", 30, 0.995) == pytest.approx(0.860, abs=5e-4)
    assert exact_coverage("wilson", 100, 0.995) == pytest.approx(0.910, abs=5e-4)
    # the old docs' "worst 0.932" at n = 1,000, p = 0.9 was simulation noise: exactly 0.949
    assert exact_coverage("wilson", 1000, 0.9) == pytest.approx(0.949, abs=5e-4)
    # every method but Clopper-Pearson has a cell below 0.93 (the reason for the default)
    for method in PROPORTION_METHODS:
        worst = coverage_grid(method).worst()[0]
        assert (worst >= 0.93) == (method == "clopper_pearson"), (method, worst)


def test_exact_coverage_matches_the_published_table() -> None:
    # REFERENCE.md: exact coverage at true accuracy 0.98, n = 20: Wald 0.332, Wilson 0.940
    assert round(exact_coverage("wald", 20, 0.98), 3) == 0.332
    assert round(exact_coverage("wilson", 20, 0.98), 3) == 0.940


# --------------------------------------------------------------------------------------------------
# bounds against independent oracles


@pytest.mark.parametrize("n", [1, 10, 30, 100, 1000])
def test_clopper_pearson_and_wilson_equal_scipy(n: int) -> None:
    xs = sorted({0, 1, 2, n // 2, n - 2, n - 1, n} & set(range(n + 1)))
    for method, scipy_name in (("clopper_pearson", "exact"), ("wilson", "wilson")):
        low, high = proportion_bounds(xs, n, method=method)
        for x, lo, hi in zip(xs, low, high, strict=True):
            ref = sps.binomtest(x, n).proportion_ci(confidence_level=0.95, method=scipy_name)
            assert (lo, hi) == pytest.approx((ref.low, ref.high), abs=1e-10), (method, x, n)


def test_wilson_matches_the_published_example() -> None:
    low, high = proportion_bounds(845, 1000, method="wilson")
    assert (round(float(low), 3), round(float(high), 3)) == (0.821, 0.866)


def test_modified_wilson_uses_the_one_sided_poisson_bound_at_the_edges() -> None:
    # Brown, Cai & DasGupta (2001), 4.1.1: x = 1..x* (x* = 2 for n <= 50, else 3), and the mirror
    for n, x_star in ((30, 2), (100, 3)):
        xs = np.arange(n + 1)
        low, high = proportion_bounds(xs, n, method="wilson_modified")
        w_low, w_high = proportion_bounds(xs, n, method="wilson")
        for x in range(1, x_star + 1):
            assert low[x] == pytest.approx(sps.chi2.ppf(0.05, 2 * x) / (2 * n))
            assert high[n - x] == pytest.approx(1 - sps.chi2.ppf(0.05, 2 * x) / (2 * n))
        assert low[x_star + 1] == w_low[x_star + 1] and high[0] == w_high[0]


@pytest.mark.parametrize("method", PROPORTION_METHODS)
def test_every_proportion_interval_lies_in_0_1_and_holds_the_estimate(method: str) -> None:
    n = 30
    xs = np.arange(n + 1)
    low, high = proportion_bounds(xs, n, method=method)
    assert (low >= 0).all() and (high <= 1).all()
    if method != "wald":  # Wald collapses to [0, 0] and [1, 1] (shown for comparison only)
        assert (low < high).all()
        assert (low <= xs / n).all() and (xs / n <= high).all()


# --------------------------------------------------------------------------------------------------
# one default for every command, page and API


def _write_task(tmp: Path, n: int, right: list[int]) -> tuple[Path, list[Path]]:
    rng = np.random.default_rng(1)
    truth = rng.integers(0, 2, n)
    (tmp / "truth.csv").write_text("id,label\n" + "".join(f"i{i:03d},{t}\n" for i, t in enumerate(truth)))
    files = []
    for k, r in enumerate(right):
        pred = truth.copy()
        pred[r:] = 1 - pred[r:]  # exactly r right
        path = tmp / f"e{k}.csv"
        path.write_text("id,prediction\n" + "".join(f"i{i:03d},{p}\n" for i, p in enumerate(pred)))
        files.append(path)
    return tmp / "truth.csv", files


def test_score_leaderboard_and_the_board_show_one_interval_for_accuracy(tmp_path: Path, capsys) -> None:
    truth, files = _write_task(tmp_path, 30, [30, 25])
    fast = ["--resamples", "300"]
    assert (
        main(
            [
                "score",
                "--truth",
                str(truth),
                "--metric",
                "accuracy",
                *fast,
                "--format",
                "json",
                *map(str, files),
            ]
        )
        == 0
    )
    scored = json.loads(capsys.readouterr().out)
    argv = ["leaderboard", "--truth", str(truth), "--metric", "accuracy", *fast, "--randomizations", "300"]
    assert main([*argv, "--format", "json", *map(str, files)]) == 0
    board = json.loads(capsys.readouterr().out)
    by_name = {r["name"]: r for r in board["rows"]}
    for row in scored:
        assert row["interval_method"] == "clopper_pearson" == by_name[row["name"]]["interval_method"]
        assert row["interval"] == pytest.approx(by_name[row["name"]]["interval"], abs=1e-12)
        assert row["warning"] is None
    # the all-correct entry of 30 items: [0.884, 1], not [1, 1]
    perfect = next(r for r in scored if r["value"] == 1.0)
    assert perfect["interval"] == pytest.approx([0.8843, 1.0], abs=1e-4)
    assert main(["score", "--truth", str(truth), "--metric", "accuracy", *fast, str(files[0])]) == 0
    out = capsys.readouterr().out
    assert "1.0000  [0.8843, 1.0000]" in out and "95% clopper_pearson" in out


def test_a_zero_width_interval_is_printed_with_its_warning(tmp_path: Path, capsys) -> None:
    truth, files = _write_task(tmp_path, 30, [30])
    argv = ["score", "--truth", str(truth), "--metric", "accuracy", "--resamples", "300", "--interval", "bca"]
    assert main([*argv, "--format", "json", str(files[0])]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["interval"] == [1.0, 1.0] and row["warning"] == ZERO_WIDTH_WARNING
    assert main([*argv, str(files[0])]) == 0
    assert f"warning: {files[0]}: {ZERO_WIDTH_WARNING}" in capsys.readouterr().out


def test_delong_zero_width_interval_is_printed_with_its_warning(tmp_path: Path, capsys) -> None:
    truth = [0, 0, 0, 1, 1, 1] * 5
    (tmp_path / "t.csv").write_text("id,label\n" + "".join(f"i{i},{t}\n" for i, t in enumerate(truth)))
    (tmp_path / "s.csv").write_text(
        "id,score\n" + "".join(f"i{i},{0.9 if t else 0.1}\n" for i, t in enumerate(truth))
    )
    argv = ["delong", "--truth", str(tmp_path / "t.csv"), str(tmp_path / "s.csv")]
    assert main([*argv, "--format", "json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["entries"]
    assert entry["interval"] == [1.0, 1.0] and entry["warning"] == ZERO_WIDTH_WARNING
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "[1.0000, 1.0000]" in out and f"warning: {tmp_path / 's.csv'}: {ZERO_WIDTH_WARNING}" in out


def test_the_leaderboard_table_prints_the_warning_its_json_carries(tmp_path: Path, capsys) -> None:
    _, files = _write_task(tmp_path, 40, [40, 30])
    groups = "".join(
        f"i{i:03d},{t},g{i // 4}\n" for i, t in enumerate(np.random.default_rng(1).integers(0, 2, 40))
    )
    (tmp_path / "g.csv").write_text("id,label,group\n" + groups)
    argv = [
        "leaderboard",
        "--truth",
        str(tmp_path / "g.csv"),
        "--group-column",
        "group",
        "--metric",
        "accuracy",
    ]
    argv += ["--resamples", "300", "--randomizations", "300"]
    assert main([*argv, "--format", "json", *map(str, files)]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    warning = rows[str(files[0])]["interval_warning"]
    assert warning  # grouped: no binomial interval applies, the degenerate bootstrap is flagged
    assert main([*argv, *map(str, files)]) == 0
    assert f"warning: {files[0]}: {warning}" in capsys.readouterr().out


def test_labels_with_commas_point_to_label(tmp_path: Path, capsys) -> None:
    (tmp_path / "t.csv").write_text('id,label\na,"x,1"\nb,"y,2"\nc,"x,1"\n')
    (tmp_path / "p.csv").write_text('id,prediction\na,"x,1"\nb,"y,2"\nc,"y,2"\n')
    argv = ["score", "--truth", str(tmp_path / "t.csv"), "--metric", "accuracy", str(tmp_path / "p.csv")]
    assert main([*argv, "--labels", "x,1,y,2"]) == 2
    err = capsys.readouterr().err
    assert "unknown label 'x,1'" in err and "--label (once per label)" in err and "--labels-file" in err
    assert main([*argv, "--label", "x,1", "--label", "y,2"]) == 0


# --------------------------------------------------------------------------------------------------
# every interval in its metric's range


EXPECTED_RANGES = {
    "accuracy": (0.0, 1.0),
    "roc_auc": (0.0, 1.0),
    "coco_ap": (0.0, 1.0),
    "miou": (0.0, 1.0),
    "cohen_kappa": (-1.0, 1.0),
    "log_loss": (0.0, np.inf),
    "rmse": (0.0, np.inf),
    "r2": (-np.inf, 1.0),
}


def test_metrics_declare_their_range() -> None:
    for name, expected in EXPECTED_RANGES.items():
        assert METRICS[name].value_range == expected
    for metric in METRICS.values():
        low, high = metric.value_range
        assert low < high, metric.name


@dataclass(frozen=True)
class _FakeScore:
    value: float
    replicates: np.ndarray
    jackknife: np.ndarray
    pooled: np.ndarray | None
    signature: Signature


def _near_edge(name: str) -> tuple[float, np.ndarray]:
    """A point at a finite edge of the metric's range and replicates spread away from it, so that the
    basic interval (the replicates reflected around the point) crosses the edge."""
    low, high = METRICS[name].value_range
    rng = np.random.default_rng(3)
    if np.isfinite(high):
        point = high - 0.01
        return point, point - np.abs(rng.normal(0, 0.2, 2000))
    point = low + 0.01
    return point, point + np.abs(rng.normal(0, 0.2, 2000))


@pytest.mark.parametrize("name", sorted(METRICS))
def test_every_interval_of_every_registered_metric_lies_in_its_range(name: str) -> None:
    low, high = METRICS[name].value_range
    point, theta = _near_edge(name)
    score = _FakeScore(
        value=point,
        replicates=theta,
        jackknife=point + np.random.default_rng(4).normal(0, 0.01, 50),
        pooled=None,
        signature=Signature(metric=name, method="bca", resamples=theta.size, seed=0, confidence=0.95),
    )
    for method in ("basic", "percentile", "bca"):
        (iv,) = intervals_for([score], method=method)
        assert low <= iv.low <= iv.high <= high, (method, iv)
    (iv,) = intervals_for([score])  # the metric's default
    assert low <= iv.low <= iv.high <= high
    board = build_board(
        names=["a", "b"],
        values=[point, point],
        replicates=np.column_stack([theta, theta[::-1]]),
        higher_is_better=METRICS[name].higher_is_better,
        metric_name=name,
        seed=0,
        interval="basic",
    )
    for row in board.rows:
        assert low <= row.interval.low <= row.interval.high <= high, row.interval


def test_the_basic_interval_is_clipped_where_it_crossed_the_range() -> None:
    # the detection page's per-class AP [0.7030, 1.1980]: the basic interval can leave [0, 1]
    point, theta = 0.95, 0.95 - np.abs(np.random.default_rng(0).normal(0, 0.12, 4000))
    sig = Signature(metric="coco_ap", method="basic", resamples=theta.size, seed=0, confidence=0.95)
    raw = intervals_for([_FakeScore(point, theta, np.empty(0), None, sig)], method="basic")[0]
    # the replicates lie below the point (AP's upward bias): the basic interval lies above it
    assert raw.high == 1.0 and point < raw.low < 1.0
    from stats.intervals import bootstrap_bounds

    lo, hi = bootstrap_bounds(theta, point=point, method="basic")
    assert hi[0] > 1.0  # unclipped, it crosses
    lo_c, hi_c = bootstrap_bounds(theta, point=point, method="basic", value_range=(0.0, 1.0))
    assert (lo_c[0], hi_c[0]) == (lo[0], 1.0)


def test_engine_scores_default_to_the_metric_interval() -> None:
    truth = np.array([0, 1] * 15)
    (score,) = score_entries(truth, [truth.copy()], metric="accuracy", resamples=200, seed=0)
    iv = score.interval()
    assert iv.method == "clopper_pearson" and iv.low < 1.0 == iv.high and iv.warning is None
    bca = score.interval(method="bca")
    assert (bca.low, bca.high) == (1.0, 1.0) and bca.warning == ZERO_WIDTH_WARNING


def test_a_paired_difference_interval_lies_in_the_range_of_differences() -> None:
    from stats.compare import paired_difference

    rng = np.random.default_rng(2)
    # AP-like: a difference near its edge (+1) with replicates below it, basic reflects them above 1
    a = 0.99 - np.abs(rng.normal(0, 0.3, 3000))
    b = np.zeros(3000)
    d = paired_difference(a, b, value_a=0.99, value_b=0.0, method="basic", metric="coco_ap")
    assert -1.0 <= d.interval.low <= d.interval.high == 1.0
    raw = paired_difference(a, b, value_a=0.99, value_b=0.0, method="basic")  # no metric: no range
    assert raw.interval.high > 1.0
