"""Real vision data for the demo: scenes of scikit-learn's handwritten digits, and real algorithms on them.

Nothing is downloaded. Each scene is a grey image with a few of the 8x8 digit images of
``sklearn.datasets.load_digits`` pasted at random positions and integer scales (2x to 4x), over a little
sensor noise. The scenes give the hidden annotations: a COCO annotation file (one box per pasted digit,
tight around its ink) and a PNG label map per scene (0 background, 1 + d the pixels of digit d's ink).

The digits are split in two: one half builds the scenes (the test set), the other half trains what the
algorithms know about digits (mean templates, a k-nearest-neighbours classifier). The entries are the
outputs of real detectors and segmenters run on the scenes:

- connected components: threshold the image, label the components (``scipy.ndimage.label``), classify
  each component's crop, resized to 8x8, with k-nearest neighbours;
- template matching: normalised cross-correlation of the mean template of each digit at three scales
  (FFT convolution), non-maximum suppression;
- blob detection: scale-normalised Laplacian of Gaussian (``scipy.ndimage.gaussian_laplace``) at several
  scales, local maxima, a box around each blob, classified like the components;
- a baseline: components found, every one called the most frequent digit of the training half.

The segmenters paint each detected component's ink pixels with its class.
"""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

SCENES = 48
SIZE = 96  # scene width and height, pixels
CLASSES = [str(d) for d in range(10)]
INK = 0.35  # a pixel brighter than this (on 0..1) is ink


@dataclass(frozen=True)
class Scene:
    image: NDArray[np.float64]  # (SIZE, SIZE) in [0, 1]
    boxes: list[tuple[int, list[float]]]  # (digit, [x, y, w, h])
    label_map: NDArray[np.uint8]  # 0 background, 1 + digit


@dataclass(frozen=True)
class DemoVision:
    """Files in the formats of docs/formats.md: organizer truth and each entry's predictions."""

    detection_truth: bytes  # COCO annotation JSON
    segmentation_truth: bytes  # zip of PNG label maps
    class_names: list[str]  # segmentation classes, index = pixel value
    detections: dict[str, bytes]  # entry name -> COCO results JSON (gzipped)
    segmentations: dict[str, bytes]  # entry name -> zip of PNG label maps


# (entry name, is the baseline)
DETECTORS: list[tuple[str, bool]] = [
    ("components-majority", True),
    ("connected-components-knn", False),
    ("template-matching", False),
    ("log-blobs-knn", False),
]
SEGMENTERS: list[tuple[str, bool]] = [
    ("components-majority", True),
    ("connected-components-knn", False),
    ("log-blobs-knn", False),
]


def _digits() -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    from sklearn.datasets import load_digits

    data = load_digits()
    return data.images / 16.0, data.target.astype(np.int64)


def make_scenes(images: NDArray[np.float64], targets: NDArray[np.int64], *, seed: int = 0) -> list[Scene]:
    rng = np.random.default_rng(seed)
    scenes = []
    for _ in range(SCENES):
        canvas = np.zeros((SIZE, SIZE))
        label_map = np.zeros((SIZE, SIZE), dtype=np.uint8)
        taken = np.zeros((SIZE, SIZE), dtype=bool)
        boxes: list[tuple[int, list[float]]] = []
        for _ in range(int(rng.integers(1, 5))):
            k = int(rng.integers(len(images)))
            scale = int(rng.integers(2, 5))
            patch = np.kron(images[k], np.ones((scale, scale)))
            h, w = patch.shape
            for _attempt in range(20):
                y, x = int(rng.integers(0, SIZE - h)), int(rng.integers(0, SIZE - w))
                if not taken[max(0, y - 2) : y + h + 2, max(0, x - 2) : x + w + 2].any():
                    break
            else:
                continue
            taken[y : y + h, x : x + w] = True
            canvas[y : y + h, x : x + w] = patch
            ink = patch > INK
            if not ink.any():
                continue
            label_map[y : y + h, x : x + w][ink] = 1 + int(targets[k])
            rows, cols = np.nonzero(ink)
            boxes.append(
                (
                    int(targets[k]),
                    [
                        float(x + cols.min()),
                        float(y + rows.min()),
                        float(np.ptp(cols) + 1),
                        float(np.ptp(rows) + 1),
                    ],
                )
            )
        noisy = np.clip(canvas + rng.normal(0, 0.05, canvas.shape), 0, 1)
        scenes.append(Scene(image=noisy, boxes=boxes, label_map=label_map))
    return scenes


# --- what the algorithms learn from the training half -----------------------------------------------------
@dataclass(frozen=True)
class Knowledge:
    templates: NDArray[np.float64]  # (10, 8, 8) mean digit of the training half
    train_x: NDArray[np.float64]  # (n, 64)
    train_y: NDArray[np.int64]
    majority: int


def learn(images: NDArray[np.float64], targets: NDArray[np.int64]) -> Knowledge:
    templates = np.stack([images[targets == d].mean(axis=0) for d in range(10)])
    return Knowledge(
        templates=templates,
        train_x=images.reshape(len(images), -1),
        train_y=targets,
        majority=int(np.bincount(targets).argmax()),
    )


def _to_8x8(crop: NDArray[np.float64]) -> NDArray[np.float64]:
    from scipy.ndimage import zoom

    h, w = crop.shape
    side = max(h, w)
    square = np.zeros((side, side))
    square[(side - h) // 2 : (side - h) // 2 + h, (side - w) // 2 : (side - w) // 2 + w] = crop
    return np.clip(zoom(square, 8 / side, order=1)[:8, :8], 0, 1)


def _knn(knowledge: Knowledge, crops: list[NDArray[np.float64]], k: int = 5) -> list[tuple[int, float]]:
    """Class and confidence (share of the k nearest training digits that agree) per crop."""
    if not crops:
        return []
    x = np.stack([_to_8x8(c).ravel() for c in crops])
    d = ((x[:, None, :] - knowledge.train_x[None, :, :]) ** 2).sum(axis=2)
    nearest = np.argsort(d, axis=1, kind="stable")[:, :k]
    out = []
    for row, dist in zip(knowledge.train_y[nearest], np.take_along_axis(d, nearest, axis=1), strict=True):
        votes = np.bincount(row, minlength=10)
        label = int(votes.argmax())
        # Ties in the share are broken by closeness, so scores are continuous.
        out.append((label, float(votes[label] / k - 1e-3 * dist.mean() / 64)))
    return out


def _components(image: NDArray[np.float64]) -> list[tuple[slice, slice]]:
    from scipy.ndimage import binary_closing, find_objects, label

    mask = binary_closing(image > INK, structure=np.ones((3, 3)))
    labelled, _ = label(mask)
    return [s for s in find_objects(labelled) if s is not None]


def _box(sl: tuple[slice, slice]) -> list[float]:
    return [
        float(sl[1].start),
        float(sl[0].start),
        float(sl[1].stop - sl[1].start),
        float(sl[0].stop - sl[0].start),
    ]


Detection = tuple[int, list[float], float]  # digit, [x, y, w, h], score


def detect_components(
    image: NDArray[np.float64], knowledge: Knowledge, *, majority: bool = False
) -> list[Detection]:
    slices = [s for s in _components(image) if (s[0].stop - s[0].start) * (s[1].stop - s[1].start) >= 9]
    crops = [image[s] for s in slices]
    if majority:
        return [(knowledge.majority, _box(s), float(c.mean())) for s, c in zip(slices, crops, strict=True)]
    return [(d, _box(s), score) for s, (d, score) in zip(slices, _knn(knowledge, crops), strict=True)]


def detect_templates(image: NDArray[np.float64], knowledge: Knowledge) -> list[Detection]:
    """Normalised cross-correlation with each digit's mean template at scales 2, 3, 4; greedy NMS."""
    from scipy.ndimage import maximum_filter
    from scipy.signal import fftconvolve

    candidates: list[Detection] = []
    local_energy_cache: dict[int, NDArray[np.float64]] = {}
    for scale in (2, 3, 4):
        side = 8 * scale
        ones = np.ones((side, side))
        if scale not in local_energy_cache:
            local_energy_cache[scale] = np.sqrt(np.maximum(fftconvolve(image**2, ones, mode="valid"), 1e-9))
        energy = local_energy_cache[scale]
        for digit in range(10):
            t = np.kron(knowledge.templates[digit], np.ones((scale, scale)))
            t = t / np.linalg.norm(t)
            ncc = fftconvolve(image, t[::-1, ::-1], mode="valid") / energy
            peaks = (ncc == maximum_filter(ncc, size=side // 2)) & (ncc > 0.6)
            for y, x in zip(*np.nonzero(peaks), strict=True):
                candidates.append((digit, [float(x), float(y), float(side), float(side)], float(ncc[y, x])))
    candidates.sort(key=lambda c: -c[2])
    kept: list[Detection] = []
    for cand in candidates:
        if all(_iou(cand[1], k[1]) < 0.3 for k in kept):
            kept.append(cand)
    return kept[:20]


def detect_blobs(image: NDArray[np.float64], knowledge: Knowledge) -> list[Detection]:
    """Scale-normalised Laplacian of Gaussian blobs (bright on dark), classified by k-NN on their box."""
    from scipy.ndimage import gaussian_laplace, maximum_filter

    sigmas = np.array([4.0, 6.0, 8.0, 11.0])
    stack = np.stack([-(s**2) * gaussian_laplace(image, s) for s in sigmas])
    peaks = (stack == maximum_filter(stack, size=(3, 9, 9))) & (stack > 0.12)
    found = []
    for k, y, x in zip(*np.nonzero(peaks), strict=True):
        half = int(np.rint(1.6 * sigmas[k]))
        y0, y1, x0, x1 = max(0, y - half), min(SIZE, y + half), max(0, x - half), min(SIZE, x + half)
        found.append(([float(x0), float(y0), float(x1 - x0), float(y1 - y0)], float(stack[k, y, x])))
    found.sort(key=lambda f: -f[1])
    kept: list[tuple[list[float], float]] = []
    for f in found:
        if all(_iou(f[0], k[0]) < 0.3 for k in kept):
            kept.append(f)
    crops = [image[int(b[1]) : int(b[1] + b[3]), int(b[0]) : int(b[0] + b[2])] for b, _ in kept]
    classes = _knn(knowledge, crops)
    return [(d, b, round(s * conf, 6)) for (b, s), (d, conf) in zip(kept, classes, strict=True)]


def _iou(a: list[float], b: list[float]) -> float:
    ix = max(0.0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    inter = ix * iy
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


def segment(image: NDArray[np.float64], detections: list[Detection]) -> NDArray[np.uint8]:
    """Paint the ink pixels inside each detection's box with its class (the highest score wins)."""
    out = np.zeros(image.shape, dtype=np.uint8)
    ink = image > INK
    for digit, (x, y, w, h), _ in sorted(detections, key=lambda d: d[2]):
        ys, xs = slice(int(y), int(y + h)), slice(int(x), int(x + w))
        out[ys, xs][ink[ys, xs]] = 1 + digit
    return out


# --- files --------------------------------------------------------------------------------------------
def _png(label_map: NDArray[np.uint8]) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(label_map, mode="L").save(buf, format="PNG")
    return buf.getvalue()


def _label_zip(maps: list[NDArray[np.uint8]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for i, m in enumerate(maps, start=1):
            zf.writestr(f"{i}.png", _png(m))
    return buf.getvalue()


def coco_truth(scenes: list[Scene]) -> bytes:
    images: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    for i, scene in enumerate(scenes, start=1):
        images.append({"id": i, "file_name": f"scene-{i:03d}.png", "width": SIZE, "height": SIZE})
        for digit, box in scene.boxes:
            annotations.append(
                {
                    "id": len(annotations) + 1,
                    "image_id": i,
                    "category_id": digit + 1,
                    "bbox": box,
                    "area": box[2] * box[3],
                    "iscrowd": 0,
                }
            )
    categories = [{"id": d + 1, "name": f"digit {d}"} for d in range(10)]
    return json.dumps({"images": images, "annotations": annotations, "categories": categories}).encode()


def coco_results(per_image: list[list[Detection]]) -> bytes:
    records = [
        {"image_id": i, "category_id": d + 1, "bbox": [round(v, 2) for v in box], "score": round(score, 4)}
        for i, dets in enumerate(per_image, start=1)
        for d, box, score in dets
    ]
    return gzip.compress(json.dumps(records).encode(), mtime=0)


def build(*, seed: int = 0) -> DemoVision:
    images, targets = _digits()
    test = np.arange(len(images)) % 2 == 0
    scenes = make_scenes(images[test], targets[test], seed=seed)
    knowledge = learn(images[~test], targets[~test])
    runs = {
        "components-majority": [detect_components(s.image, knowledge, majority=True) for s in scenes],
        "connected-components-knn": [detect_components(s.image, knowledge) for s in scenes],
        "template-matching": [detect_templates(s.image, knowledge) for s in scenes],
        "log-blobs-knn": [detect_blobs(s.image, knowledge) for s in scenes],
    }
    return DemoVision(
        detection_truth=coco_truth(scenes),
        segmentation_truth=_label_zip([s.label_map for s in scenes]),
        class_names=["background", *(f"digit {d}" for d in range(10))],
        detections={name: coco_results(runs[name]) for name, _ in DETECTORS},
        segmentations={
            name: _label_zip([segment(s.image, d) for s, d in zip(scenes, runs[name], strict=True)])
            for name, _ in SEGMENTERS
        },
    )
