"""A/A simulations of the board's verdicts at the edges (issue 21): few clusters, few items, few positives.

K entries of equal true quality; any "worse than the best" (or "best") on a board is a false claim. Each
board is built by ``stats.board.build_board`` as the service builds it (replicates from the task's common
resample weights, the per-item statistics and ``finalize`` where the metric has them; for ROC AUC and
average precision the scores through ``stats.randomization.ranked_scores`` and the number of positives).

``python -m tests.stats.verdict_edges_simulation [clusters] [items] [positives]`` prints the tables of docs/comparisons.md ("Verdicts at
the edges"); the slow tests in ``test_verdict_edges.py`` run the same cells and assert the rates.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np
from scipy import special

from stats.board import build_board
from stats.compare_ranks import simultaneous_ranks
from stats.engine import score_entries
from stats.metrics import get_metric
from stats.randomization import ranked_scores

ALPHA = 0.05
RESAMPLES = 400
#: permutations of the verdicts' randomization max-t in the simulation (the board's default is 2,000)
RANDOMIZATIONS = 400
ITEMS_PER_CLUSTER = 20


@dataclass(frozen=True)
class Cell:
    """One cell of a table: the false-claim rate of the verdicts over ``boards`` A/A boards."""

    design: str
    metric: str
    k: int
    size: int  # clusters, items or positives
    boards: int
    rate: float
    verdict_tests: str
    seconds: float
    bootstrap_rate: float  # what the bootstrap max-t (the board's verdicts before issue 21) claimed

    @property
    def standard_error(self) -> float:
        """Monte Carlo standard error of a rate of ``ALPHA`` over this many boards."""
        return float(np.sqrt(ALPHA * (1 - ALPHA) / self.boards))


def _weights(rng: np.random.Generator, n_units: int, b: int) -> np.ndarray:
    counts = rng.multinomial(n_units, np.full(n_units, 1 / n_units), size=b)
    return counts.astype(np.float64)


def _bootstrap_claims(theta: np.ndarray, values: np.ndarray, higher_is_better: bool) -> bool:
    """Whether the bootstrap max-t (what decided every board's verdicts before) makes any claim."""
    sim = simultaneous_ranks(
        theta, values, higher_is_better=higher_is_better, confidence=1 - ALPHA, stepdown=True
    )
    return bool(np.asarray(sim.better).any())


def _outputs(
    rng: np.random.Generator, metric: str, k: int, n: int, cluster: np.ndarray
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Truth and K equally good entries' predictions; items share a difficulty (correlated entries) and
    items of one cluster share a cluster effect."""
    g = int(cluster.max()) + 1
    shared = rng.normal(0, 0.8, g)[cluster] + 0.5 * rng.standard_normal(n)
    z = shared[:, None] + 0.8 * rng.standard_normal((n, k))
    if metric == "rmse":
        truth = rng.normal(0, 1, n)
        return truth, [truth + z[:, j] for j in range(k)]
    right = special.ndtr(z) < (0.75 if metric == "accuracy" else 0.65)
    classes = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    wrong = (classes[:, None] + rng.integers(1, 3, (n, k))) % 3
    pred = np.where(right, classes[:, None], wrong)
    return classes, [pred[:, j] for j in range(k)]


def decomposable_cell(
    design: str, metric_name: str, k: int, size: int, boards: int, seed: int = 2026
) -> Cell:
    """``design`` "clusters" (``size`` clusters of 20 items, cluster bootstrap) or "items" (``size``
    independent items)."""
    metric = get_metric(metric_name)
    rng = np.random.default_rng([seed, k, size, len(metric_name), design == "clusters"])
    n = size * ITEMS_PER_CLUSTER if design == "clusters" else size
    cluster = np.repeat(np.arange(size), ITEMS_PER_CLUSTER) if design == "clusters" else np.arange(n)
    labels = None if metric_name == "rmse" else [0, 1, 2]
    claims = bootstrap_claims = 0
    tests: set[str] = set()
    start = time.perf_counter()
    for rep in range(boards):
        truth, preds = _outputs(rng, metric_name, k, n, cluster)
        s = [metric.item_statistics(truth, p, labels=labels) for p in preds]
        w = (
            _weights(rng, size, RESAMPLES)[:, cluster]
            if design == "clusters"
            else _weights(rng, n, RESAMPLES)
        )
        theta = np.column_stack([metric.finalize(w @ x) for x in s])
        theta = theta[np.all(np.isfinite(theta), axis=1)]
        values = metric.finalize(np.stack([x.sum(axis=0) for x in s]))
        bootstrap_claims += _bootstrap_claims(theta, values, metric.higher_is_better)
        board = build_board(
            names=[f"e{i:02d}" for i in range(k)],
            values=values,
            replicates=theta,
            higher_is_better=metric.higher_is_better,
            metric_name=metric.name,
            seed=rep,
            alpha=ALPHA,
            item_statistics=s,
            finalize=metric.finalize,
            zero_one=metric.zero_one,
            randomizations=RANDOMIZATIONS,
            interval="percentile",
            grouped=design == "clusters",
            groups=cluster if design == "clusters" else None,
        )
        claims += any(r.verdict != "could be the best" for r in board.rows)
        tests.add(board.verdict_test)
    seconds = time.perf_counter() - start
    tests_used = ", ".join(sorted(tests))
    return Cell(
        design, metric_name, k, size, boards, claims / boards, tests_used, seconds, bootstrap_claims / boards
    )


def positives_cell(
    metric_name: str, k: int, positives: int, boards: int, n: int = 500, seed: int = 2026
) -> Cell:
    """ROC AUC or average precision on ``n`` items of which ``positives`` are positive; K entries whose
    scores are equally informative (a shared item effect makes them correlated)."""
    rng = np.random.default_rng([seed, k, positives, len(metric_name)])
    claims = bootstrap_claims = 0
    tests: set[str] = set()
    start = time.perf_counter()
    for rep in range(boards):
        y = np.zeros(n, dtype=int)
        y[rng.choice(n, positives, replace=False)] = 1
        shared = 1.0 * y + rng.standard_normal(n)
        scores = [shared + rng.standard_normal(n) for _ in range(k)]
        entries = score_entries(y, scores, metric=metric_name, resamples=RESAMPLES, seed=rep, jackknife=False)
        theta = np.column_stack([e.replicates for e in entries])
        theta = theta[np.all(np.isfinite(theta), axis=1)]
        bootstrap_claims += _bootstrap_claims(theta, np.array([e.value for e in entries]), True)
        board = build_board(
            names=[f"e{i:02d}" for i in range(k)],
            values=[e.value for e in entries],
            replicates=theta,
            higher_is_better=True,
            metric_name=metric_name,
            seed=rep,
            alpha=ALPHA,
            interval="percentile",
            randomizations=RANDOMIZATIONS,
            exchangeable=ranked_scores(y == 1, scores, metric=metric_name),
            positives=min(positives, n - positives),
        )
        claims += any(r.verdict != "could be the best" for r in board.rows)
        tests.add(board.verdict_test)
    seconds = time.perf_counter() - start
    tests_used = ", ".join(sorted(tests))
    return Cell(
        "positives",
        metric_name,
        k,
        positives,
        boards,
        claims / boards,
        tests_used,
        seconds,
        bootstrap_claims / boards,
    )


#: The cells of docs/comparisons.md: (design, metrics, K, sizes, boards)
CLUSTER_CELLS = (("clusters", ("accuracy", "macro_f1", "rmse"), (2, 5), (3, 6, 12, 30), 300),)
ITEM_CELLS = (("items", ("accuracy", "macro_f1", "rmse"), (2, 10), (10, 30, 100), 300),)
POSITIVE_CELLS = (("positives", ("roc_auc", "average_precision"), (2, 5), (3, 5, 10, 30), 200),)


def main(argv: list[str] | None = None) -> int:
    """Print the table; ``argv`` may name the designs to run (``clusters``, ``items``, ``positives``)."""
    wanted = set(argv or ()) or {"clusters", "items", "positives"}
    print(
        "| design | metric | K | clusters / items / positives | boards | false claims | MC se | verdict test "
        "| bootstrap max-t alone (before) | s |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---|---:|---:|")
    for design, metrics, ks, sizes, boards in (*CLUSTER_CELLS, *ITEM_CELLS, *POSITIVE_CELLS):
        if design not in wanted:
            continue
        for metric in metrics:
            for k in ks:
                for size in sizes:
                    cell = (
                        positives_cell(metric, k, size, boards)
                        if design == "positives"
                        else decomposable_cell(design, metric, k, size, boards)
                    )
                    print(
                        f"| {design} | {metric} | {k} | {size} | {boards} | {cell.rate:.3f} | "
                        f"{cell.standard_error:.3f} | {cell.verdict_tests} | {cell.bootstrap_rate:.3f} | "
                        f"{cell.seconds:.0f} |",
                        flush=True,
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
