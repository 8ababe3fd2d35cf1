"""The engine: replicates equal scipy's on the same resamples, and do not depend on how work is split."""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from sklearn import metrics as skm

from stats.engine import concatenate_chunks, score_entries
from stats.intervals import bootstrap_bounds
from stats.metrics import get_metric
from stats.resampling import CHUNK_RESAMPLES, resample_weights


def _scipy_indices_as_counts(seed: int, resamples: int, n: int) -> np.ndarray:
    """The counts of the indices scipy.stats.bootstrap draws with ``rng=default_rng(seed)``.

    scipy 1.17 `_bootstrap_resample` draws ``rng.integers(0, n, (n_resamples, n))`` once when
    ``batch=None``; counting each row's indices gives the same resamples as weights.
    """
    idx = np.random.default_rng(seed).integers(0, n, (resamples, n))
    offsets = np.arange(resamples)[:, None] * n
    return (
        np.bincount((idx + offsets).ravel(), minlength=resamples * n).reshape(resamples, n).astype(np.uint8)
    )


@pytest.fixture
def accuracy_task(rng):
    n = 300
    truth = rng.integers(0, 3, n)
    pred = np.where(rng.random(n) < 0.8, truth, (truth + 1) % 3)
    return truth, pred


@pytest.mark.parametrize("method", ["percentile", "basic", "BCa"])
def test_accuracy_equals_scipy_bootstrap_on_same_indices(accuracy_task, method) -> None:
    truth, pred = accuracy_task
    n, b, seed = truth.shape[0], 2000, 123
    correct = (truth == pred).astype(float)
    ref = sps.bootstrap(
        (correct,),
        np.mean,
        n_resamples=b,
        rng=np.random.default_rng(seed),
        method=method,
        confidence_level=0.95,
    )
    (score,) = score_entries(truth, [pred], metric="accuracy", weights=_scipy_indices_as_counts(seed, b, n))
    np.testing.assert_allclose(score.replicates, ref.bootstrap_distribution, rtol=0, atol=1e-12)
    low, high = bootstrap_bounds(
        score.replicates,
        point=score.value,
        method=method.lower(),
        confidence=0.95,
        jackknife=score.jackknife,
    )
    assert low[0] == pytest.approx(ref.confidence_interval.low, abs=1e-12)
    assert high[0] == pytest.approx(ref.confidence_interval.high, abs=1e-12)


def test_macro_f1_bca_equals_scipy_paired_bootstrap(rng) -> None:
    # a non-linear statistic: scipy resamples (truth, pred) pairs and jackknifes items one by one
    n, b, seed = 80, 300, 7
    truth = rng.integers(0, 4, n)
    pred = np.where(rng.random(n) < 0.6, truth, rng.integers(0, 4, n))

    def f1(t: np.ndarray, p: np.ndarray) -> float:
        return skm.f1_score(t, p, average="macro")

    ref = sps.bootstrap(
        (truth, pred),
        f1,
        paired=True,
        vectorized=False,
        n_resamples=b,
        rng=np.random.default_rng(seed),
        method="BCa",
    )
    (score,) = score_entries(
        truth, [pred], metric="macro_f1", labels=[0, 1, 2, 3], weights=_scipy_indices_as_counts(seed, b, n)
    )
    np.testing.assert_allclose(score.replicates, ref.bootstrap_distribution, atol=1e-12)
    iv = score.interval(method="bca")
    assert iv.low == pytest.approx(ref.confidence_interval.low, abs=1e-12)
    assert iv.high == pytest.approx(ref.confidence_interval.high, abs=1e-12)


def test_entries_share_weights_and_are_paired(accuracy_task) -> None:
    truth, pred = accuracy_task
    other = pred.copy()
    other[:10] = truth[:10]
    a, b, a2 = score_entries(truth, [pred, other, pred], metric="accuracy", resamples=500, seed=1)
    np.testing.assert_array_equal(a.replicates, a2.replicates)
    w = resample_weights(truth.shape[0], resamples=500, seed=1).astype(float)
    diff = w @ ((truth == other).astype(float) - (truth == pred)) / truth.shape[0]
    np.testing.assert_allclose(b.replicates - a.replicates, diff, atol=1e-12)


def test_float32_path_is_exact(accuracy_task) -> None:
    truth, pred = accuracy_task
    (score,) = score_entries(truth, [pred], metric="macro_f1", labels=[0, 1, 2], resamples=600, seed=2)
    w = resample_weights(truth.shape[0], resamples=600, seed=2)
    expected = get_metric("macro_f1").replicates(truth, pred, w, labels=[0, 1, 2])  # float64 product
    np.testing.assert_array_equal(score.replicates, expected)


def test_float64_path_for_real_valued_statistics(rng) -> None:
    y = 1e4 + rng.normal(0, 1, 500)
    p = y + rng.normal(0, 0.1, 500)
    (score,) = score_entries(y, [p], metric="rmse", resamples=300, seed=3)
    w = resample_weights(500, resamples=300, seed=3)
    for b in range(0, 300, 37):
        expected = np.sqrt(np.sum(w[b] * (p - y) ** 2) / 500)
        assert score.replicates[b] == pytest.approx(expected, rel=1e-13)


def test_jackknife_is_leave_one_out(accuracy_task) -> None:
    truth, pred = accuracy_task
    (score,) = score_entries(truth, [pred], metric="cohen_kappa", labels=[0, 1, 2], resamples=10, seed=0)
    for i in (0, 17, 299):
        keep = np.arange(truth.shape[0]) != i
        assert score.jackknife[i] == pytest.approx(skm.cohen_kappa_score(truth[keep], pred[keep]), abs=1e-12)


def test_grouped_bootstrap_pools_groups_and_leaves_out_groups(rng) -> None:
    n = 120
    groups = rng.integers(0, 15, n)
    truth = rng.integers(0, 2, n)
    pred = np.where(rng.random(n) < 0.7, truth, 1 - truth)
    (score,) = score_entries(truth, [pred], metric="accuracy", resamples=400, seed=5, groups=groups)
    w_items = resample_weights(n, resamples=400, seed=5, groups=groups)
    expected = get_metric("accuracy").replicates(truth, pred, w_items)
    np.testing.assert_allclose(score.replicates, expected, atol=1e-12)
    assert score.jackknife.shape == (15,)
    keep = groups != 3
    assert score.jackknife[3] == pytest.approx(np.mean(truth[keep] == pred[keep]))
    assert dict(score.signature.extra)["resampling"] == "grouped"


@pytest.mark.parametrize("name", ["roc_auc", "average_precision"])
def test_rank_based_replicates_and_jackknife(rng, name) -> None:
    n = 60
    y = rng.integers(0, 2, n)
    s = np.round(rng.random(n) + 0.4 * y, 1)
    (score,) = score_entries(y, [s], metric=name, resamples=300, seed=6)
    oracle = skm.roc_auc_score if name == "roc_auc" else skm.average_precision_score
    assert score.value == pytest.approx(oracle(y, s), abs=1e-12)
    w = resample_weights(n, resamples=300, seed=6)
    for b in (0, 150, 299):
        assert score.replicates[b] == pytest.approx(oracle(y, s, sample_weight=w[b]), abs=1e-12)
    keep = np.arange(n) != 4
    assert score.jackknife[4] == pytest.approx(oracle(y[keep], s[keep]), abs=1e-12)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_invariant_to_chunk_split(data: st.DataObject) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    n = data.draw(st.integers(5, 60))
    resamples = data.draw(st.integers(1, 3 * CHUNK_RESAMPLES + 5))
    truth = rng.integers(0, 3, n)
    preds = [rng.integers(0, 3, n) for _ in range(2)]
    metric = data.draw(st.sampled_from(["accuracy", "macro_f1", "rmse"]))
    kwargs = {"metric": metric, "labels": [0, 1, 2], "resamples": resamples, "seed": 4}
    whole = score_entries(truth, preds, **kwargs)
    n_chunks = -(-resamples // CHUNK_RESAMPLES)
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(n_chunks - 1, 1)), max_size=3))) - {n_chunks})
    bounds = [0, *cuts, n_chunks]
    parts = [score_entries(truth, preds, chunks=range(a, b), **kwargs) for a, b in itertools.pairwise(bounds)]
    for k in range(2):
        joined = concatenate_chunks([p[k] for p in parts])
        np.testing.assert_array_equal(joined.replicates, whole[k].replicates)
        assert joined.signature == whole[k].signature


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_invariant_to_worker_count(accuracy_task, workers: int) -> None:
    truth, pred = accuracy_task
    kwargs = {"metric": "rmse", "resamples": 5 * CHUNK_RESAMPLES, "seed": 9}
    whole = score_entries(truth, [pred], **kwargs)[0]
    splits = np.array_split(np.arange(5), workers)
    with ThreadPoolExecutor(workers) as pool:
        parts = list(
            pool.map(
                lambda c: score_entries(truth, [pred], chunks=range(c[0], c[-1] + 1), **kwargs)[0], splits
            )
        )
    np.testing.assert_array_equal(concatenate_chunks(parts).replicates, whole.replicates)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_invariant_to_item_order_with_groups(seed: int) -> None:
    # groups are numbered by their sorted ids, so permuting items permutes nothing that matters
    rng = np.random.default_rng(seed)
    n = 40
    groups = rng.integers(0, 9, n)
    truth = rng.integers(0, 2, n)
    pred = rng.integers(0, 2, n)
    perm = rng.permutation(n)
    kwargs = {"metric": "macro_f1", "labels": [0, 1], "resamples": 300, "seed": 1, "groups": groups}
    a = score_entries(truth, [pred], **kwargs)[0]
    kwargs["groups"] = groups[perm]
    b = score_entries(truth[perm], [pred[perm]], **kwargs)[0]
    np.testing.assert_allclose(b.replicates, a.replicates, atol=1e-12)
    np.testing.assert_allclose(b.jackknife, a.jackknife, atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_invariant_to_item_order_with_weights_following_items(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 30
    y = rng.normal(size=n)
    p = y + rng.normal(size=n)
    w = resample_weights(n, resamples=100, seed=2)
    perm = rng.permutation(n)
    a = score_entries(y, [p], metric="r2", weights=w)[0]
    b = score_entries(y[perm], [p[perm]], metric="r2", weights=w[:, perm])[0]
    assert b.value == pytest.approx(a.value, abs=1e-12)
    np.testing.assert_allclose(b.replicates, a.replicates, atol=1e-12)
    np.testing.assert_allclose(np.sort(b.jackknife), np.sort(a.jackknife), atol=1e-12)


def test_cache_gives_the_same_scores(accuracy_task, tmp_path) -> None:
    truth, pred = accuracy_task
    a = score_entries(truth, [pred], metric="accuracy", resamples=700, seed=3)[0]
    b = score_entries(truth, [pred], metric="accuracy", resamples=700, seed=3, cache_dir=tmp_path)[0]
    c = score_entries(truth, [pred], metric="accuracy", resamples=700, seed=3, cache_dir=tmp_path)[0]
    np.testing.assert_array_equal(a.replicates, b.replicates)
    np.testing.assert_array_equal(a.replicates, c.replicates)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"names": ["a", "b"]}, "`names` must have one name per entry of `predictions`."),
        ({"weights": np.ones((3, 2), dtype=np.uint8)}, r"`weights` must have shape \(B, N\)"),
        ({"weights": np.ones((3, 300)), "groups": np.zeros(300)}, "`weights` excludes"),
        ({"metric": "nope"}, "`metric` must be one of"),
        ({"resamples": -3}, "`resamples` must be an integer >= 1"),
    ],
)
def test_validation(accuracy_task, kwargs, message) -> None:
    truth, pred = accuracy_task
    args = {"metric": "accuracy", "resamples": 10} | kwargs
    with pytest.raises(ValueError, match=message):
        score_entries(truth, [pred], **args)


def test_no_django_import() -> None:
    import subprocess
    import sys

    code = (
        "import sys, stats, stats.metrics, stats.resampling, stats.engine, stats.intervals, stats.io, "
        "stats.cli, stats.signature; assert 'django' not in sys.modules, 'django imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- issue 14: bounded memory at large N --------------------------------------------------------------


@pytest.mark.parametrize("metric", ["accuracy", "macro_f1", "rmse"])
def test_product_in_row_blocks_gives_the_same_replicates(
    metric: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # At large N the rows of a chunk of W are multiplied a few at a time (the float copy of W stays
    # bounded). The block is fixed by N alone, so a split of the chunks over workers still joins to the
    # same bits; integer statistics (exact in float32) give the unblocked bits too.
    import stats.engine as eng

    rng = np.random.default_rng(2)
    n = 90
    truth = rng.integers(0, 3, n)
    preds = [rng.integers(0, 3, n) for _ in range(3)]
    kwargs = {"metric": metric, "labels": [0, 1, 2], "resamples": 600, "seed": 5}
    unblocked = score_entries(truth, preds, **kwargs)
    monkeypatch.setattr(eng, "_PRODUCT_BLOCK_ELEMENTS", 7 * n)  # 7 rows at a time
    blocked = score_entries(truth, preds, **kwargs)
    parts = [score_entries(truth, preds, chunks=range(a, a + 1), **kwargs) for a in range(3)]
    for k in range(3):
        joined = concatenate_chunks([p[k] for p in parts])
        np.testing.assert_array_equal(joined.replicates, blocked[k].replicates)
        if metric == "rmse":
            np.testing.assert_allclose(blocked[k].replicates, unblocked[k].replicates, rtol=1e-12)
        else:
            np.testing.assert_array_equal(blocked[k].replicates, unblocked[k].replicates)


def test_a_weight_matrix_too_large_for_the_cache_is_drawn_per_chunk(tmp_path, monkeypatch) -> None:
    import stats.resampling as rs

    rng = np.random.default_rng(3)
    truth = rng.integers(0, 2, 50)
    pred = rng.integers(0, 2, 50)
    fresh = score_entries(truth, [pred], metric="accuracy", resamples=400, seed=1)[0]
    monkeypatch.setattr(rs, "CACHE_MAX_BYTES", 50 * 400 - 1)
    big = score_entries(truth, [pred], metric="accuracy", resamples=400, seed=1, cache_dir=tmp_path)[0]
    assert list(tmp_path.iterdir()) == []  # nothing written
    np.testing.assert_array_equal(big.replicates, fresh.replicates)
    monkeypatch.setattr(rs, "CACHE_MAX_BYTES", 50 * 400)
    cached = score_entries(truth, [pred], metric="accuracy", resamples=400, seed=1, cache_dir=tmp_path)[0]
    assert len(list(tmp_path.glob("weights-*.npy"))) == 1  # written chunk by chunk into a memory map
    np.testing.assert_array_equal(cached.replicates, fresh.replicates)
