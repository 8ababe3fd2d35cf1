"""Coverage simulations of the vision metrics (issue 12): AP on test sets of images drawn from a fixed
population of scenes, mIoU on test sets of per-image statistics. Used by the slow tests in
test_vision_coverage.py; ``python -m tests.stats.vision_simulation`` prints the table for docs/stats.md.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from stats.engine import score_item_statistics
from stats.intervals import bootstrap_bounds
from stats.vision.detection import DetectionTask, detection_replicates, detection_scores
from stats.vision.detection_io import Detections, DetectionTruth

METHODS = ("percentile", "basic", "bca")
N_CLASSES = 4


def detection_sample(rng: np.random.Generator, n_images: int) -> tuple[DetectionTruth, Detections]:
    """``n_images`` independent scenes: objects ~ Poisson(3) of 4 classes and every size; each found
    with probability 0.75 (box jitter puts IoU around the thresholds, 15% duplicates), plus ~4 false
    positives per image with lower scores."""
    n_obj = rng.poisson(3.0, n_images)
    g = int(n_obj.sum())
    img = np.repeat(np.arange(n_images), n_obj)
    side = np.exp(rng.uniform(np.log(8), np.log(300), g))
    wh = side[:, None] * rng.uniform(0.7, 1.3, (g, 2))
    xy = rng.uniform(0, 500, (g, 2))
    cat = rng.choice(N_CLASSES, g, p=[0.4, 0.3, 0.2, 0.1])
    gbox = np.column_stack([xy, wh])
    found = rng.random(g) < 0.75
    dup = found & (rng.random(g) < 0.15)
    src = np.concatenate([np.flatnonzero(found), np.flatnonzero(dup)])
    jit = rng.normal(0, 0.1, (src.shape[0], 4)) * np.column_stack([wh[src], wh[src]])
    tbox = gbox[src] + jit
    tbox[:, 2:] = np.maximum(tbox[:, 2:], 1.0)
    tscore = rng.beta(5, 2, src.shape[0])
    n_fp = rng.poisson(4.0, n_images)
    f = int(n_fp.sum())
    fimg = np.repeat(np.arange(n_images), n_fp)
    fside = np.exp(rng.uniform(np.log(8), np.log(300), f))
    fbox = np.column_stack([rng.uniform(0, 500, (f, 2)), fside[:, None] * rng.uniform(0.7, 1.3, (f, 2))])
    fscore = rng.beta(2, 4, f)
    truth = DetectionTruth(
        image_ids=np.arange(1, n_images + 1),
        category_ids=np.arange(1, N_CLASSES + 1),
        category_names=tuple(f"c{c}" for c in range(N_CLASSES)),
        ann_ids=np.arange(1, g + 1),
        image=img,
        category=cat,
        bbox=gbox,
        area=wh[:, 0] * wh[:, 1],
        iscrowd=np.zeros(g, bool),
        difficult=np.zeros(g, bool),
    )
    dets = Detections(
        image=np.concatenate([img[src], fimg]),
        category=np.concatenate([cat[src], rng.choice(N_CLASSES, f)]),
        bbox=np.vstack([tbox, fbox]),
        score=np.concatenate([tscore, fscore]),
    )
    return truth, dets


def detection_population_ap(n_images: int = 40_000, seed: int = 12345) -> dict[str, float]:
    """AP and AP50 of the population: the value on one very large sample."""
    truth, dets = detection_sample(np.random.default_rng(seed), n_images)
    task = DetectionTask(truth)
    reps = detection_replicates(
        task, task.match(dets), np.ones((1, n_images), dtype=np.uint8), stats=["AP", "AP50"]
    )
    return {"coco_ap": float(reps["AP"][0]), "coco_ap50": float(reps["AP50"][0])}


def detection_coverage(
    *, test_sets: int, n_images: int, resamples: int, truth_values: dict[str, float]
) -> dict[str, dict[str, float]]:
    """Fraction of 95% intervals (per method) holding the population value, per metric."""
    hits = {m: dict.fromkeys(METHODS, 0) for m in truth_values}
    for rep in range(test_sets):
        truth, dets = detection_sample(np.random.default_rng(rep), n_images)
        task = DetectionTask(truth)
        scores = detection_scores(
            task,
            [task.match(dets)],
            metrics=list(truth_values),
            resamples=resamples,
            seed=rep,
            jackknife=True,
        )
        for m, (score,) in scores.items():
            for method in METHODS:
                low, high = bootstrap_bounds(
                    score.replicates[:, None],
                    point=np.array([score.value]),
                    method=method,
                    jackknife=score.jackknife[:, None],
                )
                hits[m][method] += bool(low[0] <= truth_values[m] <= high[0])
    return {m: {k: v / test_sets for k, v in h.items()} for m, h in hits.items()}


# ----------------------------------------------------------------------------------------------------
# segmentation: per-image statistics of C classes, rare classes in few images


SEG_CLASSES = 20
_CLASS_P = np.linspace(1.0, 0.05, SEG_CLASSES)


def segmentation_sample(rng: np.random.Generator, n_images: int) -> np.ndarray:
    """Per-image statistics (N, 3C+1): each image holds each class with probability decreasing from 1.0
    to 0.05, with a random area; the model labels 80% of a class's pixels right, spreads the rest over
    the next class when the image holds it, and hallucinates a class absent from the image in 20% of images."""
    c = SEG_CLASSES
    s = np.zeros((n_images, 3 * c + 1))
    s[:, -1] = 1.0
    present = rng.random((n_images, c)) < _CLASS_P
    area = present * rng.gamma(2.0, 2000.0, (n_images, c)).round()
    recall = np.clip(rng.normal(0.8, 0.1, (n_images, c)), 0, 1)
    inter = np.floor(area * recall)
    s[:, :c] = inter
    s[:, 2 * c : 3 * c] = area
    missed = area - inter
    # missed pixels of class c go to class c + 1 when the image holds it, else to no class
    moved = missed * np.roll(present, -1, axis=1)
    pred = inter + np.roll(moved, 1, axis=1)
    halluc = rng.random(n_images) < 0.2
    rows = np.flatnonzero(halluc)
    np.add.at(
        pred, (rows, rng.integers(c, size=rows.shape[0])), np.round(rng.gamma(2.0, 500.0, rows.shape[0]))
    )
    s[:, c : 2 * c] = pred
    return s


def segmentation_population(n_images: int = 200_000, seed: int = 54321) -> float:
    from stats.vision.segmentation import miou

    return float(miou(segmentation_sample(np.random.default_rng(seed), n_images).sum(axis=0)))


def segmentation_coverage(
    *, test_sets: int, n_images: int, resamples: int, truth_value: float
) -> dict[str, float]:
    hits = dict.fromkeys(METHODS, 0)
    for rep in range(test_sets):
        s = segmentation_sample(np.random.default_rng(10_000 + rep), n_images)
        (score,) = score_item_statistics([s], metric="miou", resamples=resamples, seed=rep)
        for method in METHODS:
            low, high = bootstrap_bounds(
                score.replicates[:, None],
                point=np.array([score.value]),
                method=method,
                jackknife=score.jackknife[:, None],
            )
            hits[method] += bool(low[0] <= truth_value <= high[0])
    return {k: v / test_sets for k, v in hits.items()}


def main() -> int:
    test_sets = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    t0 = time.perf_counter()
    pop = detection_population_ap()
    print(f"detection population (40,000 images): {pop}")
    for n in (100, 500):
        cov = detection_coverage(test_sets=test_sets, n_images=n, resamples=500, truth_values=pop)
        print(
            f"detection n={n}, {test_sets} test sets, B=500: {cov} ({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
    pop_miou = segmentation_population()
    print(f"segmentation population mIoU (200,000 images): {pop_miou:.4f}")
    for n in (100, 500):
        cov_s = segmentation_coverage(
            test_sets=2 * test_sets, n_images=n, resamples=1000, truth_value=pop_miou
        )
        print(
            f"segmentation n={n}, {2 * test_sets} test sets, B=1000: {cov_s} ({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
