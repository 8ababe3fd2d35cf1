"""Every metric against a straightforward reference (scikit-learn as a test-only oracle)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics as skm

from stats.metrics import METRICS, get_metric

N = 400
C = 5


def noisy_labels(rng: np.random.Generator, truth: np.ndarray, accuracy: float, n_classes: int) -> np.ndarray:
    """Predictions equal to ``truth`` with probability ``accuracy``, else another class."""
    wrong = rng.random(truth.shape[0]) >= accuracy
    return np.where(wrong, (truth + rng.integers(1, n_classes, truth.shape[0])) % n_classes, truth)


@pytest.fixture
def labels_task(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, list[str]]:
    names = [f"c{i}" for i in range(C)]
    t = rng.integers(0, C, N)
    p = noisy_labels(rng, t, 0.6, C)
    return np.array(names)[t], np.array(names)[p], names


@pytest.fixture
def binary_task(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    y = rng.integers(0, 2, N)
    # rounded scores so that ties occur, as they do with real classifiers
    s = np.clip(np.round(0.3 * y + rng.normal(0.35, 0.25, N), 2), 0, 1)
    return y, s


@pytest.fixture
def regression_task(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    y = 1000.0 + rng.normal(0, 3, N)  # large mean, small spread: tests the centring of R^2
    return y, y + rng.normal(0, 1, N)


def test_registry_attributes() -> None:
    for name, metric in METRICS.items():
        assert metric.name == name
        kinds = {
            "items": {"label", "ranked_labels", "score", "value"},
            "detection": {"boxes"},
            "text": {"text", "tags"},
        }
        assert metric.prediction_kind in kinds.get(metric.task_kind, {"masks"})
        assert metric.rank_based == (name in {"roc_auc", "average_precision"})
    assert get_metric("accuracy").zero_one
    assert not get_metric("macro_f1").zero_one
    assert not get_metric("rmse").higher_is_better


def test_unknown_metric_lists_known_names() -> None:
    with pytest.raises(ValueError, match=r"`metric` must be one of: .*accuracy.*\(got 'nope'\)"):
        get_metric("nope")


@pytest.mark.parametrize(
    ("name", "oracle"),
    [
        ("accuracy", skm.accuracy_score),
        ("micro_f1", lambda t, p: skm.f1_score(t, p, average="micro")),
        ("macro_f1", lambda t, p: skm.f1_score(t, p, average="macro")),
        ("balanced_accuracy", skm.balanced_accuracy_score),
        ("cohen_kappa", skm.cohen_kappa_score),
    ],
)
def test_label_metrics_equal_sklearn(name, oracle, labels_task) -> None:
    truth, pred, names = labels_task
    metric = get_metric(name)
    assert metric.point(truth, pred, labels=names) == pytest.approx(oracle(truth, pred), abs=1e-12)


def test_zero_one_statistics_column_zero_is_correctness(labels_task) -> None:
    truth, pred, names = labels_task
    s = get_metric("accuracy").item_statistics(truth, pred, labels=names)
    assert s.dtype == np.float64
    np.testing.assert_array_equal(s[:, 0], (truth == pred).astype(float))
    np.testing.assert_array_equal(s[:, -1], 1.0)


@pytest.mark.parametrize(
    ("name", "oracle"),
    [
        ("macro_f1", lambda t, p, w: skm.f1_score(t, p, average="macro", sample_weight=w)),
        ("balanced_accuracy", lambda t, p, w: skm.balanced_accuracy_score(t, p, sample_weight=w)),
        ("cohen_kappa", lambda t, p, w: skm.cohen_kappa_score(t, p, sample_weight=w)),
        ("accuracy", lambda t, p, w: skm.accuracy_score(t, p, sample_weight=w)),
    ],
)
def test_label_replicates_equal_weighted_sklearn(name, oracle, labels_task, rng) -> None:
    truth, pred, names = labels_task
    weights = rng.multinomial(N, np.full(N, 1 / N), size=4).astype(np.uint8)
    reps = get_metric(name).replicates(truth, pred, weights, labels=names)
    for b in range(4):
        keep = weights[b] > 0  # sklearn counts classes of zero-weight items as present
        expected = oracle(truth[keep], pred[keep], weights[b][keep])
        assert reps[b] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("k", [3, 5])
def test_top_k_equals_sklearn(k, rng) -> None:
    n_classes = 8
    truth = rng.integers(0, n_classes, N)
    scores = rng.random((N, n_classes)) + 0.8 * np.eye(n_classes)[truth]
    ranked = np.argsort(-scores, axis=1)[:, :5]
    expected = skm.top_k_accuracy_score(truth, scores, k=k, labels=np.arange(n_classes))
    assert get_metric(f"top{k}_accuracy").point(truth, ranked) == pytest.approx(expected, abs=1e-12)


def test_top_k_needs_enough_columns(rng) -> None:
    with pytest.raises(ValueError, match="at least 5 ranked labels"):
        get_metric("top5_accuracy").point(np.zeros(3), np.zeros((3, 2)))


@pytest.mark.parametrize(
    ("name", "oracle"),
    [
        ("roc_auc", skm.roc_auc_score),
        ("average_precision", skm.average_precision_score),
        ("log_loss", skm.log_loss),
        ("brier", skm.brier_score_loss),
    ],
)
def test_binary_metrics_equal_sklearn(name, oracle, binary_task) -> None:
    y, s = binary_task
    assert get_metric(name).point(y, s) == pytest.approx(oracle(y, s), abs=1e-12)


@pytest.mark.parametrize(
    ("name", "oracle"),
    [
        ("roc_auc", skm.roc_auc_score),
        ("average_precision", skm.average_precision_score),
        ("log_loss", skm.log_loss),
        ("brier", skm.brier_score_loss),
    ],
)
def test_binary_replicates_equal_weighted_sklearn(name, oracle, binary_task, rng) -> None:
    y, s = binary_task
    weights = rng.multinomial(N, np.full(N, 1 / N), size=5).astype(np.uint8)
    reps = get_metric(name).replicates(y, s, weights)
    for b in range(5):
        assert reps[b] == pytest.approx(oracle(y, s, sample_weight=weights[b]), abs=1e-12)


def test_binary_metrics_with_label_names(binary_task) -> None:
    y, s = binary_task
    names = np.array(["neg", "pos"])[y]
    metric = get_metric("roc_auc")
    assert metric.point(names, s, labels=["neg", "pos"]) == pytest.approx(skm.roc_auc_score(y, s))


def test_auc_undefined_without_positives() -> None:
    assert np.isnan(get_metric("roc_auc").point(np.zeros(4), np.arange(4.0)))


@pytest.mark.parametrize(
    ("name", "oracle"),
    [
        ("mae", skm.mean_absolute_error),
        ("rmse", skm.root_mean_squared_error),
        ("r2", skm.r2_score),
    ],
)
def test_regression_metrics_equal_sklearn(name, oracle, regression_task, rng) -> None:
    y, p = regression_task
    metric = get_metric(name)
    assert metric.point(y, p) == pytest.approx(oracle(y, p), rel=1e-10)
    weights = rng.multinomial(N, np.full(N, 1 / N), size=3).astype(np.uint8)
    reps = metric.replicates(y, p, weights)
    for b in range(3):
        assert reps[b] == pytest.approx(oracle(y, p, sample_weight=weights[b]), rel=1e-9)


def test_labels_required_and_checked(labels_task) -> None:
    truth, pred, names = labels_task
    with pytest.raises(ValueError, match="`labels` is required for the metric `macro_f1`"):
        get_metric("macro_f1").item_statistics(truth, pred)
    with pytest.raises(ValueError, match="`prediction` holds 'zz', which is not in the label set"):
        get_metric("macro_f1").item_statistics(truth, np.where(pred == pred[0], "zz", pred), labels=names)


def test_probabilities_checked() -> None:
    with pytest.raises(ValueError, match=r"probabilities in \[0, 1\]"):
        get_metric("log_loss").point(np.array([0, 1]), np.array([0.5, 1.5]))


def test_finalize_is_vectorised(labels_task) -> None:
    truth, pred, names = labels_task
    metric = get_metric("macro_f1")
    s = metric.item_statistics(truth, pred, labels=names)
    pooled = np.stack([s.sum(axis=0), s[:100].sum(axis=0)])[None, :, :]
    out = metric.finalize(pooled)
    assert out.shape == (1, 2)
    assert out[0, 1] == pytest.approx(skm.f1_score(truth[:100], pred[:100], average="macro"))
