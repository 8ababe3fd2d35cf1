"""Every metric of the registry builds a board through the service path, on real-valued data.

Upload (REST API) -> scoring task -> rebuild task -> snapshot, with tasks run in-process as the embedded
default runs them (``tests/reliability/test_rebuild_workers.py`` does the same on real workers). Two
single-run entries first (the board checks the stored per-item statistics against the stored values:
before the fix regression boards failed that check, because the statistics were stored as float32), then
a multi-run entry (three files, the mean of the runs).
"""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard.challenges.services import challenge_create, task_create
from leaderboard.rankings.models import BoardSnapshot
from leaderboard.submissions.models import Status, Submission
from stats.metrics import METRICS, get_metric
from tests.service.api_support import FAST_HASHERS, client_for, file
from tests.service.factories import csv_bytes, user

pytestmark = pytest.mark.django_db(transaction=True)

N_ITEMS = 150
CLASSES = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]


def task_data(metric_name: str, seed: int = 3) -> tuple[list[str], bytes, list[str] | None]:
    """Item ids, a hidden-labels file and the label set for a task of ``metric_name``."""
    metric = get_metric(metric_name)
    rng = np.random.default_rng(seed)
    ids = [f"it-{i:04d}" for i in range(N_ITEMS)]
    if metric.prediction_kind == "value":
        y = rng.normal(50.0, 12.0, size=N_ITEMS)  # full-precision reals, as regression targets are
        return ids, csv_bytes("id,label", [(i, repr(float(v))) for i, v in zip(ids, y, strict=True)]), None
    if metric.prediction_kind == "score":
        y = rng.integers(0, 2, size=N_ITEMS)
        return ids, csv_bytes("id,label", [(i, str(v)) for i, v in zip(ids, y, strict=True)]), None
    y_labels = [CLASSES[k] for k in rng.integers(0, len(CLASSES), size=N_ITEMS)]
    return ids, csv_bytes("id,label", list(zip(ids, y_labels, strict=True))), CLASSES


def prediction_file(metric_name: str, truth: bytes, skill: float, seed: int) -> bytes:
    """A predictions file of ``metric_name``'s kind: informative (``skill``) but noisy, real-valued."""
    metric = get_metric(metric_name)
    rng = np.random.default_rng(seed)
    rows = [line.split(",") for line in truth.decode().splitlines()[1:]]
    ids = [r[0] for r in rows]
    if metric.prediction_kind == "value":
        y = np.array([float(r[1]) for r in rows])
        p = y + rng.normal(0.0, 12.0 * (1.0 - skill), size=len(y)) + rng.normal(0.3, 0.05)
        return csv_bytes("id,prediction", [(i, repr(float(v))) for i, v in zip(ids, p, strict=True)])
    if metric.prediction_kind == "score":
        y = np.array([int(r[1]) for r in rows])
        s = np.clip(skill * y + (1 - skill) * rng.random(len(y)), 1e-6, 1 - 1e-6)
        s = np.clip(s + rng.normal(0.0, 0.05, size=len(y)), 1e-6, 1 - 1e-6)
        return csv_bytes("id,score", [(i, repr(float(v))) for i, v in zip(ids, s, strict=True)])
    labels = [r[1] for r in rows]
    guesses = []
    for t in labels:
        order = list(rng.permutation(CLASSES))
        if rng.random() < skill:
            order.remove(t)
            order.insert(0, t)
        guesses.append(order)
    if metric.prediction_kind == "ranked_labels":
        k = metric.ranks or 1
        header = "id," + ",".join(f"prediction_{j}" for j in range(1, k + 1))
        lines = [f"{i}," + ",".join(g[:k]) for i, g in zip(ids, guesses, strict=True)]
        return (header + "\n" + "\n".join(lines) + "\n").encode()
    return csv_bytes("id,prediction", [(i, g[0]) for i, g in zip(ids, guesses, strict=True)])


def _board(task_id: int) -> BoardSnapshot | None:
    return BoardSnapshot.objects.filter(task_id=task_id, split="public").order_by("-sequence").first()


#: Metrics of tasks with one prediction per item; detection and segmentation metrics build their boards
#: end to end in tests/service/test_vision_tasks.py (COCO / label-map uploads, not CSV rows).
TABULAR_METRICS = sorted(name for name, metric in METRICS.items() if metric.task_kind == "items")


@pytest.mark.parametrize("metric_name", TABULAR_METRICS)
def test_every_metric_builds_a_board_from_single_and_multi_run_uploads(settings, metric_name: str) -> None:
    settings.PASSWORD_HASHERS = FAST_HASHERS
    organizer = user("org")
    challenge = challenge_create(organizer=organizer, slug="m", title="Every metric", resamples=200)
    _ids, truth, labels = task_data(metric_name)
    task = task_create(
        challenge=challenge,
        slug="main",
        title="Main",
        metric=metric_name,
        truth=truth,
        truth_name="truth.csv",
        labels=labels,
    )
    uploads = [
        ("one-run-a", [prediction_file(metric_name, truth, 0.8, 1)]),
        ("one-run-b", [prediction_file(metric_name, truth, 0.6, 2)]),
        ("three-runs", [prediction_file(metric_name, truth, 0.7, 10 + r) for r in range(3)]),
    ]
    for count, (name, files) in enumerate(uploads, start=1):
        client = client_for(user(name))
        response = client.post(
            f"/api/challenges/{challenge.slug}/submissions/",
            {"name": name, "file": [file(f"{name}-{r}.csv", data) for r, data in enumerate(files)]},
            format="multipart",
        )
        assert response.status_code == 201, response.content
        submission = Submission.objects.get(pk=response.json()["id"])
        assert submission.status == Status.SCORED, submission.error
        board = _board(task.pk)
        # The board follows every scored submission: no rebuild failed on the way.
        assert board is not None and board.entry_count == count, (metric_name, name, board)
        assert sorted(r["name"] for r in board.rows) == sorted(n for n, _ in uploads[:count])
        for row in board.rows:
            assert np.all(np.isfinite([row["value"], row["low"], row["high"]])), row
    three = next(r for r in _board(task.pk).rows if r["name"] == "three-runs")  # type: ignore[union-attr]
    assert Submission.objects.get(name="three-runs").scores.get().n_runs == 3
    assert three["rank"] >= 1


def test_item_statistics_stored_as_float32_before_are_read_only_where_exact() -> None:
    """Rows written before float64: 0/1 and counts are exact in float32 and still read; real values
    (squared errors) are not, so they read as absent (the board then uses the paired bootstrap)."""
    from leaderboard.scoring.models import Score

    counts = np.array([[1.0, 1.0], [0.0, 1.0], [1.0, 1.0]])
    reals = np.array([[0.123456789, 1.0], [2.5e-3, 1.0], [7.77, 1.0]])
    for values, exact in ((counts, True), (reals, False)):
        legacy = Score(item_statistics=values.astype("<f4").tobytes(), item_statistics_shape=[3, 2])
        read = legacy.item_statistics_array()
        assert (read is not None) == exact
        if exact:
            np.testing.assert_array_equal(read, values)
        current = Score(item_statistics=values.astype("<f8").tobytes(), item_statistics_shape=[3, 2])
        np.testing.assert_array_equal(current.item_statistics_array(), values)  # type: ignore[arg-type]
