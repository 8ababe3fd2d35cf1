"""Real data for the demo: per-item predictions of several classifiers on scikit-learn's bundled datasets.

Each classifier predicts every item of a dataset by 5-fold stratified cross-validation
(``cross_val_predict``), so every item gets one out-of-fold prediction, as in "Machine Learning, Taught
Through What Breaks", episode 1 (UCI digits, n = 1,797). scikit-learn is a demo and test dependency only.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

import numpy as np

# (entry name, is the baseline)
CLASSIFIERS: list[tuple[str, bool]] = [
    ("majority-class", True),
    ("gaussian-nb", False),
    ("decision-tree", False),
    ("knn-3", False),
    ("logistic-regression", False),
    ("random-forest", False),
    ("svm-rbf", False),
]

DATASETS = {
    "digits": "UCI handwritten digits (8x8 images, 10 classes)",
    "iris": "Iris flowers (3 classes)",
    "wine": "Wine cultivars (3 classes)",
    "breast-cancer": "Breast cancer Wisconsin diagnostic (2 classes)",
}


@dataclass(frozen=True)
class DemoTask:
    slug: str
    title: str
    truth_csv: bytes
    predictions: dict[str, bytes]  # entry name -> predictions CSV
    labels: list[str]


def _make(name: str):
    from sklearn.dummy import DummyClassifier
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier

    return {
        "majority-class": lambda: DummyClassifier(strategy="most_frequent"),
        "gaussian-nb": GaussianNB,
        "decision-tree": lambda: DecisionTreeClassifier(random_state=0),
        "knn-3": lambda: KNeighborsClassifier(n_neighbors=3),
        "logistic-regression": lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
        "random-forest": lambda: RandomForestClassifier(n_estimators=100, random_state=0),
        "svm-rbf": lambda: make_pipeline(StandardScaler(), SVC(kernel="rbf")),
    }[name]()


def _load(slug: str) -> tuple[np.ndarray, np.ndarray]:
    from sklearn import datasets

    loader = {
        "digits": datasets.load_digits,
        "iris": datasets.load_iris,
        "wine": datasets.load_wine,
        "breast-cancer": datasets.load_breast_cancer,
    }[slug]
    bunch = loader()
    return bunch.data, bunch.target


def _csv(header: list[str], rows: list[list[object]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode()


def demo_task(slug: str) -> DemoTask:
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    x, y = _load(slug)
    ids = [f"{slug}-{i:05d}" for i in range(len(y))]
    labels = [str(v) for v in sorted(set(y.tolist()))]
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
    predictions = {}
    for name, _ in CLASSIFIERS:
        pred = cross_val_predict(_make(name), x, y, cv=folds)
        predictions[name] = _csv(["id", "prediction"], [[i, str(p)] for i, p in zip(ids, pred, strict=True)])
    truth = _csv(["id", "label"], [[i, str(v)] for i, v in zip(ids, y, strict=True)])
    return DemoTask(slug=slug, title=DATASETS[slug], truth_csv=truth, predictions=predictions, labels=labels)


def with_split(task: DemoTask, *, seed: int = 0) -> bytes:
    """``task``'s truth with a ``split`` column: half of the items of each class (drawn with ``seed``) are
    ``private``, the rest ``public``."""
    rows = list(csv.reader(io.StringIO(task.truth_csv.decode())))
    header, body = rows[0], rows[1:]
    rng = np.random.default_rng(seed)
    private: set[int] = set()
    for label in sorted({r[1] for r in body}):
        members = [i for i, r in enumerate(body) if r[1] == label]
        private.update(rng.permutation(members)[: len(members) // 2].tolist())
    return _csv(
        [*header, "split"], [[*r, "private" if i in private else "public"] for i, r in enumerate(body)]
    )
