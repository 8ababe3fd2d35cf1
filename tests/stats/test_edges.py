"""Issue 11, points 5 and 6: the edges that gave a silent wrong answer, and the O(N log N) jackknife."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, f1_score, recall_score, roc_auc_score

from stats.board import build_board
from stats.checks import class_strata, defined_rows
from stats.cli import main
from stats.compare import cluster_sign_flip
from stats.delong import delong_covariance, delong_interval, delong_test
from stats.engine import score_entries
from stats.metrics import get_metric
from stats.resampling import resample_weights


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _write(path: Path, header: str, rows: list[str]) -> str:
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return str(path)


# --- one item, one cluster, few clusters ----------------------------------------------------------------


def test_one_item_is_refused_without_internal_names() -> None:
    with pytest.raises(ValueError) as info:
        score_entries(np.array([1]), [np.array([1])], metric="accuracy", resamples=100)
    message = str(info.value)
    assert "at least 2 items" in message and "jackknife" not in message and "`" not in message


def test_one_cluster_is_refused() -> None:
    truth = np.array([0, 1, 1, 0])
    with pytest.raises(ValueError, match="at least 2 groups"):
        score_entries(truth, [truth], metric="accuracy", resamples=100, groups=np.array(["g"] * 4))


def test_cli_one_item_exits_2_with_a_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    truth = _write(tmp_path / "t.csv", "id,label", ["i0,1"])
    pred = _write(tmp_path / "p.csv", "id,prediction", ["i0,1"])
    for interval in ("bca", "percentile"):
        code, out, err = _run(
            ["score", "--truth", truth, "--metric", "accuracy", "--interval", interval, pred], capsys
        )
        assert code == 2 and out == ""
        assert "at least 2 items" in err and "jackknife=True" not in err


def test_three_clusters_use_the_exact_sign_flip_test(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 60)
    truth = _write(tmp_path / "t.csv", "id,label,g", [f"i{i},{y[i]},g{i % 3}" for i in range(60)])
    a = _write(tmp_path / "a.csv", "id,prediction", [f"i{i},{y[i]}" for i in range(60)])
    b = _write(
        tmp_path / "b.csv", "id,prediction", [f"i{i},{y[i] if i % 4 else 1 - y[i]}" for i in range(60)]
    )
    argv = ["leaderboard", "--truth", truth, "--group-column", "g", "--metric", "accuracy"]
    code, out, err = _run([*argv, "--resamples", "1000", "--format", "json", a, b], capsys)
    assert code == 0
    board = json.loads(out)
    assert board["test"] == "cluster-sign-flip-exact"
    row = next(r for r in board["rows"] if not r["is_leader"])
    assert row["p_value"] == pytest.approx(0.25)  # 2 of the 8 flips: never 0.0005 from 10 resamples
    assert row["items_needed"] is None  # no variability seen across the resamples: no "1 item needed"
    assert "only 3 groups" in err


def test_sign_flip_equals_brute_force_enumeration() -> None:
    metric = get_metric("macro_f1")
    rng = np.random.default_rng(5)
    labels = ["a", "b", "c"]
    truth = rng.choice(labels, 40)
    preds = [np.where(rng.random(40) < acc, truth, rng.choice(labels, 40)) for acc in (0.9, 0.6)]
    groups = np.arange(40) % 5
    stats = [metric.item_statistics(truth, p, labels=labels) for p in preds]
    res = cluster_sign_flip(stats, groups=groups, finalize=metric.finalize, reference=0)
    assert res.exact and res.draws == 32
    observed = abs(
        metric.point(truth, preds[1], labels=labels) - metric.point(truth, preds[0], labels=labels)
    )
    count = 0
    for flips in itertools.product([False, True], repeat=5):
        swap = np.isin(groups, [g for g in range(5) if flips[g]])
        a = np.where(swap, preds[1], preds[0])
        b = np.where(swap, preds[0], preds[1])
        d = abs(metric.point(truth, b, labels=labels) - metric.point(truth, a, labels=labels))
        count += d >= observed - 1e-12
    assert res.p_values[1] == pytest.approx(count / 32)


# --- undefined replicates: stratified by class, and a stated rule -----------------------------------------


def _rare_positive_task(tmp_path: Path) -> tuple[str, str]:
    rng = np.random.default_rng(1)
    n = 1000
    y = np.zeros(n, dtype=int)
    y[rng.choice(n, 10, replace=False)] = 1
    s = np.clip(0.3 * y + rng.random(n) * 0.8, 0, 1)
    truth = _write(tmp_path / "t.csv", "id,label", [f"i{i},{y[i]}" for i in range(n)])
    pred = _write(tmp_path / "p.csv", "id,score", [f"i{i},{s[i]:.6f}" for i in range(n)])
    return truth, pred


@pytest.mark.parametrize("seed", range(10))
def test_rare_positives_never_give_nan_intervals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: int
) -> None:
    truth, pred = _rare_positive_task(tmp_path)
    argv = ["score", "--truth", truth, "--metric", "roc_auc", "--seed", str(seed), "--format", "json", pred]
    code, out, _ = _run([*argv, "--resamples", "2000"], capsys)
    assert code == 0
    (row,) = json.loads(out)  # strict JSON: no NaN
    assert all(np.isfinite(row["interval"]))
    assert row["signature"]["extra"]["stratified"] == "true"


def test_rare_positives_board_builds_for_every_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    truth, pred = _rare_positive_task(tmp_path)
    other = _write(tmp_path / "q.csv", "id,score", [f"i{i},{(i * 37 % 101) / 101:.4f}" for i in range(1000)])
    for seed in range(10):
        for stratify in ("auto", "none"):
            argv = ["leaderboard", "--truth", truth, "--metric", "roc_auc", "--seed", str(seed)]
            argv += ["--resamples", "1000", "--stratify", stratify, "--format", "json", pred, other]
            code, out, err = _run(argv, capsys)
            assert code == 0, err
            data = json.loads(out)
            assert data["sampling"]["undefined_rule"] == "drop-undefined-resamples"
            if stratify == "auto":
                assert data["sampling"]["undefined_resamples"] == 0


def test_undefined_rule_refuses_when_too_many() -> None:
    theta = np.ones((100, 2))
    theta[:3, 0] = np.nan
    keep, dropped = defined_rows(theta)
    assert dropped == 3 and keep.sum() == 97
    theta[:10, 1] = np.nan
    with pytest.raises(ValueError, match="undefined in 10 of 100 resamples"):
        defined_rows(theta)


def test_class_strata_keep_every_class_in_every_resample() -> None:
    truth = np.array([0] * 95 + [1] * 5)
    strata, decision = class_strata("roc_auc", truth)
    assert decision == "class"
    w = resample_weights(100, resamples=500, seed=3, strata=strata)
    assert np.all(w[:, 95:].sum(axis=1) == 5)
    assert class_strata("accuracy", truth) == (None, "none")
    _, mixed = class_strata("roc_auc", truth, groups=np.arange(100) // 10)
    assert mixed == "none (groups mix classes)"


# --- undefined point estimates ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("metric", "truth", "pred", "message"),
    [
        ("roc_auc", ["1", "1", "1"], ["0.2", "0.4", "0.9"], "ROC AUC is undefined"),
        ("r2", ["3", "3", "3"], ["1", "2", "3"], "R^2 is undefined"),
        ("average_precision", ["0", "0", "0"], ["0.2", "0.4", "0.9"], "no positive item"),
    ],
)
def test_undefined_point_values_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    metric: str,
    truth: list[str],
    pred: list[str],
    message: str,
) -> None:
    t = _write(tmp_path / "t.csv", "id,label", [f"i{i},{v}" for i, v in enumerate(truth)])
    column = "prediction" if metric == "r2" else "score"
    p = _write(tmp_path / "p.csv", f"id,{column}", [f"i{i},{v}" for i, v in enumerate(pred)])
    extra = ["--labels", "0,1"] if metric != "r2" else []
    code, out, err = _run(["score", "--truth", t, "--metric", metric, *extra, "--format", "json", p], capsys)
    assert code == 2 and out == ""
    assert message in err


def test_kappa_with_one_class_in_the_truth_is_refused() -> None:
    truth = np.array(["a"] * 6)
    with pytest.raises(ValueError, match="Cohen's kappa is undefined on this test set"):
        score_entries(truth, [truth], metric="cohen_kappa", labels=["a", "b"], names=["x"], resamples=50)


def test_a_point_value_undefined_for_one_entry_names_it() -> None:
    from stats.metrics import Metric

    def finalize(pooled: np.ndarray) -> np.ndarray:  # undefined whenever an entry has no right item
        return np.where(pooled[..., 0] > 0, pooled[..., 0] / pooled[..., -1], np.nan)

    base = get_metric("accuracy")
    odd = Metric(
        name="odd",
        higher_is_better=True,
        zero_one=True,
        rank_based=False,
        prediction_kind="label",
        needs_labels=False,
        description="test",
        _statistics=base._statistics,
        _finalize=finalize,
    )
    truth = np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match="odd is undefined for 'x'"):
        score_entries(truth, [1 - truth], metric=odd, names=["x"], resamples=50)


# --- the positive class ------------------------------------------------------------------------------------


def test_positive_class_is_named_shown_and_a_low_auc_warns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(2)
    y = rng.random(200) < 0.3
    s = np.clip(0.4 * y + 0.6 * rng.random(200), 0, 1)
    t = _write(
        tmp_path / "t.csv", "id,label", [f"i{i},{'cancer' if y[i] else 'healthy'}" for i in range(200)]
    )
    p = _write(tmp_path / "p.csv", "id,score", [f"i{i},{s[i]:.6f}" for i in range(200)])
    base = ["score", "--truth", t, "--metric", "roc_auc", "--resamples", "300", "--format", "json", p]
    code, out, err = _run([*base, "--positive", "cancer"], capsys)
    assert code == 0
    (row,) = json.loads(out)
    assert row["value"] == pytest.approx(roc_auc_score(y, s))
    assert row["signature"]["extra"]["positive"] == "cancer"
    assert "below 0.5" not in err
    code, out, err = _run(base, capsys)  # default: 'healthy' (second in sorted order), AUC 1 - 0.9...
    (row,) = json.loads(out)
    assert row["value"] == pytest.approx(1 - roc_auc_score(y, s))
    assert row["signature"]["extra"]["positive"] == "healthy"
    assert "below 0.5" in err and "positive class" in err
    code, _, err = _run([*base, "--positive", "benign"], capsys)
    assert code == 2 and "'benign' is not in the label set" in err


# --- macro-F1 and balanced accuracy over the task's label set -----------------------------------------


def test_macro_averages_use_the_whole_label_set() -> None:
    labels = ["a", "b", "c", "d"]
    truth = np.array(["a", "a", "b", "b", "b", "a"])
    pred = np.array(["a", "b", "b", "b", "a", "a"])
    f1 = get_metric("macro_f1").point(truth, pred, labels=labels)
    oracle = f1_score(truth, pred, labels=labels, average="macro", zero_division=0)
    assert f1 == pytest.approx(oracle) and f1 == pytest.approx(0.3333333333)  # not 0.667 over {a, b}
    bal = get_metric("balanced_accuracy").point(truth, pred, labels=labels)
    assert bal == pytest.approx(recall_score(truth, pred, labels=labels, average="macro", zero_division=0))


def test_macro_averages_in_resamples_match_sklearn_with_weights() -> None:
    rng = np.random.default_rng(8)
    labels = ["a", "b", "c", "d", "e"]
    truth = rng.choice(labels[:4], 30, p=[0.5, 0.3, 0.15, 0.05])
    pred = np.where(rng.random(30) < 0.7, truth, rng.choice(labels, 30))
    w = resample_weights(30, resamples=50, seed=1)
    f1 = get_metric("macro_f1").replicates(truth, pred, w, labels=labels)
    bal = get_metric("balanced_accuracy").replicates(truth, pred, w, labels=labels)
    for b in range(50):
        sw = w[b].astype(float)
        ref_f1 = f1_score(truth, pred, labels=labels, average="macro", zero_division=0, sample_weight=sw)
        ref_bal = recall_score(truth, pred, labels=labels, average="macro", zero_division=0, sample_weight=sw)
        assert f1[b] == pytest.approx(ref_f1, abs=1e-12)
        assert bal[b] == pytest.approx(ref_bal, abs=1e-12)


# --- point 6: O(N log N) leave-one-out and DeLong -----------------------------------------------------------


@pytest.mark.parametrize("metric", ["roc_auc", "average_precision"])
def test_closed_form_leave_one_out_equals_sklearn_on_deleted_items(metric: str) -> None:
    oracle = roc_auc_score if metric == "roc_auc" else average_precision_score
    rng = np.random.default_rng(11)
    for trial in range(60):
        n = int(rng.integers(3, 25))
        y = rng.integers(0, 2, n)
        if y.sum() < 2 or (metric == "roc_auc" and (n - y.sum()) < 2):
            continue
        s = rng.integers(0, 5, n).astype(float) if trial % 2 else rng.random(n)  # ties and no ties
        (score,) = score_entries(y, [s], metric=metric, resamples=10)
        expected = [oracle(np.delete(y, i), np.delete(s, i)) for i in range(n)]
        np.testing.assert_allclose(score.jackknife, expected, rtol=0, atol=1e-12)


def test_closed_form_leave_one_out_equals_the_weight_rows() -> None:
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 300)
    s = np.round(rng.random(300), 2)
    for name in ("roc_auc", "average_precision"):
        metric = get_metric(name)
        ranked = metric.rank_prepare(y, s)
        w = np.ones((300, 300), dtype=np.uint8)
        np.fill_diagonal(w, 0)
        np.testing.assert_allclose(
            metric.rank_leave_one_out(ranked), metric.rank_replicates(ranked, w), atol=1e-12
        )


def _delong_brute_force(y: np.ndarray, scores: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """DeLong et al. (1988), eq. (2)-(5), with the explicit kernel psi(X, Y) over all pairs."""
    pos, neg = y == 1, y == 0
    v10, v01 = [], []
    for s in scores:
        psi = (s[pos][:, None] > s[neg][None, :]) + 0.5 * (s[pos][:, None] == s[neg][None, :])
        v10.append(psi.mean(axis=1))
        v01.append(psi.mean(axis=0))
    a10, a01 = np.array(v10), np.array(v01)
    aucs = a10.mean(axis=1)
    return aucs, np.cov(a10) / pos.sum() + np.cov(a01) / neg.sum()


def test_delong_hand_computed_example() -> None:
    # positives scored 0.8, 0.6, 0.4; negatives 0.5, 0.3. Placements of the positives: 1, 1, 1/2; of the
    # negatives: 2/3, 1. AUC = 5/6; var = S10/3 + S01/2 = (1/12)/3 + (1/18)/2 = 1/36 + 1/36 = 1/18.
    y = np.array([1, 1, 1, 0, 0])
    s = np.array([0.8, 0.6, 0.4, 0.5, 0.3])
    aucs, cov = delong_covariance(y, [s])
    assert aucs[0] == pytest.approx(5 / 6)
    assert cov[0, 0] == pytest.approx(1 / 18)
    iv = delong_interval(y, s, confidence=0.95)
    assert iv.low == pytest.approx(5 / 6 - 1.959963984540054 * np.sqrt(1 / 18))
    assert iv.high == 1.0  # clipped


def test_delong_covariance_and_test_equal_the_textbook_kernel() -> None:
    rng = np.random.default_rng(6)
    y = rng.integers(0, 2, 150)
    a = y * 0.8 + rng.normal(size=150)
    b = np.round(y * 0.5 + rng.normal(size=150), 1)  # ties
    aucs, cov = delong_covariance(y, [a, b])
    ref_aucs, ref_cov = _delong_brute_force(y, [a, b])
    np.testing.assert_allclose(aucs, ref_aucs, rtol=1e-12)
    np.testing.assert_allclose(aucs, [roc_auc_score(y, a), roc_auc_score(y, b)], rtol=1e-12)
    np.testing.assert_allclose(cov, ref_cov, rtol=1e-10)
    t = delong_test(y, a, b)
    se = np.sqrt(ref_cov[0, 0] + ref_cov[1, 1] - 2 * ref_cov[0, 1])
    assert t.standard_error == pytest.approx(se)
    from scipy.stats import norm

    assert t.p_value == pytest.approx(2 * norm.sf(abs(ref_aucs[0] - ref_aucs[1]) / se))


def test_board_accepts_leave_one_out_values_with_an_undefined_entry() -> None:
    # a single positive: leaving it out leaves the AUC undefined; BCa uses the defined values
    y = np.zeros(50, dtype=int)
    y[7] = 1
    s = np.linspace(0, 1, 50)
    strata, _ = class_strata("roc_auc", y)
    (score,) = score_entries(y, [s], metric="roc_auc", resamples=200, strata=strata)
    assert np.isnan(score.jackknife[7]) and np.isfinite(np.delete(score.jackknife, 7)).all()
    iv = score.interval(method="bca")
    assert np.isfinite(iv.low) and np.isfinite(iv.high)
    board = build_board(
        names=["x", "y"],
        values=[score.value, score.value],
        replicates=np.column_stack([score.replicates, score.replicates]),
        jackknife=np.column_stack([score.jackknife, score.jackknife]),
        higher_is_better=True,
        metric_name="roc_auc",
        seed=0,
    )
    assert all(np.isfinite(r.interval.low) for r in board.rows)


def test_delong_command_prints_intervals_and_paired_tests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(12)
    y = rng.integers(0, 2, 120)
    a = np.round(y * 0.7 + rng.normal(size=120), 3)
    b = np.round(y * 0.2 + rng.normal(size=120), 3)
    t = _write(tmp_path / "t.csv", "id,label", [f"i{i},{'pos' if y[i] else 'neg'}" for i in range(120)])
    pa = _write(tmp_path / "a.csv", "id,score", [f"i{i},{v}" for i, v in enumerate(a)])
    pb = _write(tmp_path / "b.csv", "id,score", [f"i{i},{v}" for i, v in enumerate(b)])
    code, out, _ = _run(["delong", "--truth", t, "--positive", "pos", "--format", "json", pa, pb], capsys)
    assert code == 0
    data = json.loads(out)
    ref_aucs, ref_cov = _delong_brute_force(y, [a, b])
    assert [e["auc"] for e in data["entries"]] == pytest.approx(ref_aucs.tolist())
    (pair,) = data["pairs"]
    assert pair["standard_error"] == pytest.approx(np.sqrt(ref_cov[0, 0] + ref_cov[1, 1] - 2 * ref_cov[0, 1]))
    assert data["positive"] == "pos"


@pytest.mark.slow
def test_cluster_sign_flip_holds_its_level_with_few_clusters_where_the_bootstrap_does_not() -> None:
    """A/A: two equally good entries, items correlated within 6 clusters; 1,000 data sets at alpha 0.05."""
    from stats.compare import bootstrap_p_values

    metric = get_metric("accuracy")
    rng = np.random.default_rng(2024)
    g, per = 6, 30
    groups = np.repeat(np.arange(g), per)
    flip_rejections = boot_rejections = 0
    runs = 1000
    for rep in range(runs):
        difficulty = np.repeat(rng.normal(0, 1.0, g), per) + rng.normal(0, 0.5, g * per)
        truth = np.zeros(g * per, dtype=int)
        shared = rng.normal(0, 1, g * per)  # both entries see the same item effects
        preds = [((difficulty + shared + rng.normal(0, 1, g * per)) < 0.5).astype(int) for _ in range(2)]
        stats = [metric.item_statistics(truth, p) for p in preds]
        res = cluster_sign_flip(stats, groups=groups, finalize=metric.finalize, reference=0)
        flip_rejections += res.p_values[1] <= 0.05
        scores = score_entries(truth, preds, metric="accuracy", resamples=999, seed=rep, groups=groups)
        diff = scores[1].replicates - scores[0].replicates
        p = bootstrap_p_values(diff, scores[1].value - scores[0].value, rule="percentile")
        boot_rejections += p <= 0.05
    flip_rate, boot_rate = flip_rejections / runs, boot_rejections / runs
    print(f"\n[figure] A/A, 6 clusters: sign-flip {flip_rate:.3f}, cluster bootstrap {boot_rate:.3f}")
    assert flip_rate <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / runs)
