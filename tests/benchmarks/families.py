"""Families of boards (issue 24): the board's cost must not depend on the data, so every benchmark of the
comparison layer runs on several shapes of boards, and the tests compare the fast paths with the full
computation on the same shapes at small sizes.

Each family gives the 0/1 correctness of K entries on N items (an (N, K) bool array); :func:`replicates`
turns it into the board's paired bootstrap replicates (accuracy, the task's W from ``stats.resampling``).

- ``spread``: accuracies spread over 0.80-0.86, errors partly shared through an item difficulty
  (``bench_compare``'s board before issue 24);
- ``nested``: harder items are missed first (an entry misses the items whose difficulty is above its
  accuracy, with a narrow band of noise), as fine-tunes of one model are: ``deploy/loadtest.py``'s board,
  which took ``build_board`` 175 s at K = 1,000 before issue 24;
- ``near_duplicates``: groups of entries that are one base model with 0.1-1% of its items flipped (open
  boards are full of them);
- ``ties``: many exact ties: entries repeated exactly (a zero standard error), and entries of the same
  accuracy with different errors;
- ``nested_run``: spread entries with a run of consecutive nested ones (12% of the entries, a third of the
  way in): one team's fine-tunes uploaded one after the other. Their pairs are too few for the plan over
  all pairs to look for references among all entries (0.7% of the pairs), too many to compute densely
  (issue 24, thirteenth pass: 9 s of a 44 s board of 10,000 until the references among the dense pairs'
  entries were tried whatever the first plan's cost);
- ``nested_runs``: half the entries in ten runs of nested ones (ten teams' fine-tunes, each run over the
  board's range of values, so the runs interleave in value) between blocks of spread ones. The runs'
  pairs are too many to compute densely (1.25 million at K = 10,000) and references taken from another
  run do not help them (issue 24, fourteenth pass: the references are now each run's own);
- ``mix``: a quarter of the entries from each of the first four.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from stats.resampling import resample_weights

BoolArray = npt.NDArray[np.bool_]

FAMILIES = ("spread", "nested", "near_duplicates", "ties", "nested_run", "nested_runs", "mix")


def _accuracies(k: int) -> npt.NDArray[np.float64]:
    return 0.80 + 0.06 * np.arange(k) / max(k - 1, 1)


def spread(rng: np.random.Generator, n: int, k: int) -> BoolArray:
    hard = rng.random(n)
    out = np.empty((n, k), dtype=bool)
    for j, skill in enumerate(_accuracies(k)):
        out[:, j] = (0.6 * hard + 0.4 * rng.random(n)) < skill
    return out


def nested(rng: np.random.Generator, n: int, k: int) -> BoolArray:
    """``deploy/loadtest.py``'s ``predictions_csv``: right when the difficulty is below the accuracy plus a
    noise of +-0.01."""
    difficulty = rng.random(n)
    out = np.empty((n, k), dtype=bool)
    for j, accuracy in enumerate(_accuracies(k)):
        out[:, j] = difficulty < accuracy + 0.02 * (rng.random(n) - 0.5)
    return out


def near_duplicates(rng: np.random.Generator, n: int, k: int) -> BoolArray:
    bases = spread(rng, n, max(1, k // 20))
    out = np.empty((n, k), dtype=bool)
    for j in range(k):
        col = bases[:, j % bases.shape[1]].copy()
        flips = rng.choice(n, size=max(1, int(n * rng.uniform(0.001, 0.01))), replace=False)
        col[flips] = ~col[flips]
        out[:, j] = col
    return out


def ties(rng: np.random.Generator, n: int, k: int) -> BoolArray:
    """A third of the entries exact copies of others, the rest in groups of equal accuracy."""
    distinct = max(1, (2 * k) // 3)
    out = np.empty((n, k), dtype=bool)
    levels = np.round(np.linspace(0.80, 0.86, max(1, distinct // 8)) * n).astype(int)
    for j in range(distinct):
        col = np.zeros(n, dtype=bool)
        col[rng.choice(n, size=int(levels[j % levels.size]), replace=False)] = True
        out[:, j] = col
    for j in range(distinct, k):
        out[:, j] = out[:, int(rng.integers(0, distinct))]
    return out[:, rng.permutation(k)]


def nested_run(rng: np.random.Generator, n: int, k: int) -> BoolArray:
    run = (3 * k) // 25
    start = k // 3
    base = spread(rng, n, k - run)
    return np.concatenate([base[:, :start], nested(rng, n, run), base[:, start:]], axis=1)


def nested_runs(rng: np.random.Generator, n: int, k: int) -> BoolArray:
    runs, size = 10, k // 20
    base = spread(rng, n, k - runs * size)
    step = base.shape[1] // runs
    parts: list[BoolArray] = []
    for i in range(runs):
        parts += [base[:, i * step : (i + 1) * step], nested(rng, n, size)]
    parts.append(base[:, runs * step :])
    return np.concatenate(parts, axis=1)


def mix(rng: np.random.Generator, n: int, k: int) -> BoolArray:
    sizes = [k // 4 + (1 if i < k % 4 else 0) for i in range(4)]
    parts = [fn(rng, n, m) for fn, m in zip((spread, nested, near_duplicates, ties), sizes, strict=True) if m]
    return np.concatenate(parts, axis=1)[:, rng.permutation(k)]


def correctness(family: str, n: int, k: int, seed: int = 0) -> BoolArray:
    """The (N, K) 0/1 correctness of a board of the family."""
    makers = {
        "spread": spread,
        "nested": nested,
        "near_duplicates": near_duplicates,
        "ties": ties,
        "nested_run": nested_run,
        "nested_runs": nested_runs,
        "mix": mix,
    }
    if family not in makers:
        raise ValueError(f"unknown family {family!r}; one of {', '.join(FAMILIES)}")
    return makers[family](np.random.default_rng(seed), n, k)


def replicates(
    correct: BoolArray, resamples: int, seed: int = 0
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Bootstrap replicates (B, K) and point values (K,) of the accuracies, every entry resampled with the
    task's W (``stats.resampling.resample_weights``), in row blocks (float32 products of counts: exact)."""
    n, k = correct.shape
    w = resample_weights(n, resamples=resamples, seed=seed)
    c = correct.astype(np.float32)
    theta = np.empty((resamples, k))
    for r0 in range(0, resamples, 1024):
        theta[r0 : r0 + 1024] = w[r0 : r0 + 1024].astype(np.float32) @ c
    theta /= n
    return theta, correct.sum(axis=0) / n
