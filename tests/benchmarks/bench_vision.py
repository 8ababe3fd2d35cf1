"""Benchmarks of the vision metrics (issue 12): ``python -m tests.benchmarks.bench_vision [--quick]``.

Detection, COCO-val shape: 5,000 images, 80 classes, ~36,000 objects (1% crowd, every area range),
500,000 detections with scores rounded to 3 decimals. Measured: parsing the results JSON, the per-image
matching (once per entry), and B = 1,000 replicates of the six AP stats (AP, AP50, AP75, APs, APm, APl)
in one pass, with peak memory; against pycocotools run once on the same data (evaluate + accumulate +
summarize), whose per-resample cost is extrapolated to B = 1,000 (it is not re-run 1,000 times: that
would take about a day).

Segmentation, ADE20K-val shape: 500 images of 512 x 683, 150 classes (12 per image): writing and reading a zip of PNG
label maps (the entry's masks; mask reading dominates), the per-image statistics, then B = 10,000
replicates of mIoU through the engine.

Figures are recorded in docs/benchmarks.md with this command.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import resource
import sys
import time
import zipfile
from typing import Any

import numpy as np

from stats.engine import score_item_statistics
from stats.vision.detection import DetectionTask, detection_scores
from stats.vision.detection_io import parse_coco_results, parse_coco_truth
from stats.vision.segmentation import read_mask_archive, segmentation_statistics, segmentation_strata

SIX_AP = ["coco_ap", "coco_ap50", "coco_ap75", "coco_ap_small", "coco_ap_medium", "coco_ap_large"]


def synthetic_coco(
    n_images: int, n_classes: int, n_detections: int, seed: int = 0
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A COCO-like truth and results file: objects ~ Poisson(7.3) per image with skewed classes and
    log-uniform sizes; detections are jittered objects (some duplicated, some with the wrong class) and
    background boxes up to ``n_detections``; scores rounded to 3 decimals."""
    rng = np.random.default_rng(seed)
    class_p = rng.dirichlet(np.full(n_classes, 0.3))
    anns: list[dict[str, Any]] = []
    aid = 1
    for img in range(1, n_images + 1):
        for _ in range(rng.poisson(7.3)):
            side = float(np.exp(rng.uniform(np.log(6), np.log(400))))
            w, h = side * rng.uniform(0.6, 1.4), side * rng.uniform(0.6, 1.4)
            x, y = float(rng.uniform(0, 640 - min(w, 600))), float(rng.uniform(0, 480 - min(h, 450)))
            anns.append(
                {
                    "id": aid,
                    "image_id": img,
                    "category_id": int(rng.choice(n_classes, p=class_p)) + 1,
                    "bbox": [round(x, 2), round(y, 2), round(w, 2), round(h, 2)],
                    "area": round(w * h * 0.8, 2),
                    "iscrowd": int(rng.random() < 0.01),
                }
            )
            aid += 1
    gt = {
        "images": [{"id": i, "width": 640, "height": 480} for i in range(1, n_images + 1)],
        "categories": [{"id": c, "name": f"class{c}"} for c in range(1, n_classes + 1)],
        "annotations": anns,
    }
    dets: list[dict[str, Any]] = []
    for a in anns:
        for _ in range(int(rng.integers(1, 4))):
            x, y, w, h = a["bbox"]
            j = rng.normal(0, 0.12, 4) * np.array([w, h, w, h])
            cat = a["category_id"] if rng.random() < 0.85 else int(rng.integers(1, n_classes + 1))
            dets.append(
                {
                    "image_id": a["image_id"],
                    "category_id": cat,
                    "bbox": [
                        round(x + j[0], 2),
                        round(y + j[1], 2),
                        round(max(w + j[2], 1), 2),
                        round(max(h + j[3], 1), 2),
                    ],
                    "score": round(float(rng.beta(4, 2)), 3),
                }
            )
    rest = max(n_detections - len(dets), 0)
    imgs = rng.integers(1, n_images + 1, rest)
    cats = rng.choice(n_classes, size=rest, p=class_p) + 1
    xy = rng.uniform(0, 600, (rest, 2))
    wh = np.exp(rng.uniform(np.log(4), np.log(300), (rest, 2)))
    scores = np.round(rng.beta(1.5, 5, rest), 3)
    for i in range(rest):
        dets.append(
            {
                "image_id": int(imgs[i]),
                "category_id": int(cats[i]),
                "bbox": [
                    round(float(xy[i, 0]), 2),
                    round(float(xy[i, 1]), 2),
                    round(float(wh[i, 0]), 2),
                    round(float(wh[i, 1]), 2),
                ],
                "score": float(scores[i]),
            }
        )
    return gt, dets[:n_detections]


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_detection(
    n_images: int, n_classes: int, n_detections: int, resamples: int, *, pycoco: bool
) -> dict[str, float]:
    gt, dets = synthetic_coco(n_images, n_classes, n_detections)
    gt_bytes, det_bytes = json.dumps(gt).encode(), json.dumps(dets).encode()
    del dets
    gc.collect()
    out: dict[str, float] = {"objects": len(gt["annotations"]), "results_mb": len(det_bytes) / 1e6}
    t0 = time.perf_counter()
    truth = parse_coco_truth(gt_bytes, name="truth.json")
    task = DetectionTask(truth)
    out["truth_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    detections = parse_coco_results(det_bytes, truth, name="results.json")
    out["parse_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    entry = task.match(detections)
    out["match_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    scores = detection_scores(task, [entry], metrics=SIX_AP, resamples=resamples, seed=0)
    out["replicates_s"] = time.perf_counter() - t0
    out["total_s"] = out["parse_s"] + out["match_s"] + out["replicates_s"]
    out["ap"] = scores["coco_ap"][0].value
    out["peak_mb_ours"] = _peak_mb()
    if pycoco:
        from pycocotools.coco import COCO
        from pycocotools.cocoeval import COCOeval

        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            coco = COCO()
            coco.dataset = json.loads(gt_bytes)
            coco.createIndex()
            res = coco.loadRes(json.loads(det_bytes))
            ev = COCOeval(coco, res, "bbox")
            ev.evaluate()
            ev.accumulate()
            ev.summarize()
        out["pycocotools_once_s"] = time.perf_counter() - t0
        out["pycocotools_ap"] = float(ev.stats[0])
        out["peak_mb_with_pycocotools"] = _peak_mb()
    return out


def bench_segmentation(
    n_images: int, height: int, width: int, n_classes: int, resamples: int
) -> dict[str, float]:
    from PIL import Image

    rng = np.random.default_rng(0)
    truth_zip, pred_zip = io.BytesIO(), io.BytesIO()
    t0 = time.perf_counter()
    with zipfile.ZipFile(truth_zip, "w") as zt, zipfile.ZipFile(pred_zip, "w") as zp:
        for i in range(n_images):
            # blocky label maps: 16 x 16 tiles of 12 classes of the image (ADE20K images hold about a
            # dozen classes each), 5% ignored
            present = rng.choice(n_classes, size=12, replace=False)
            tiles = rng.choice(present, size=(height // 16 + 1, width // 16 + 1))
            label = np.kron(tiles, np.ones((16, 16), dtype=np.int64))[:height, :width].astype(np.uint8)
            label[rng.random((height, width)) < 0.05] = 255
            # predictions: 70% of pixels right, the rest confused with the image's classes or 3 others
            pred = label.copy()
            noise = rng.random((height, width)) < 0.3
            confusable = np.concatenate([present, rng.choice(n_classes, size=3, replace=False)])
            pred[noise] = rng.choice(confusable, int(noise.sum()))
            pred[pred == 255] = 0
            for zf, arr in ((zt, label), (zp, pred)):
                buf = io.BytesIO()
                Image.fromarray(arr).save(buf, format="PNG")
                zf.writestr(f"img{i:05d}.png", buf.getvalue())
    out: dict[str, float] = {
        "write_s": time.perf_counter() - t0,
        "pred_zip_mb": len(pred_zip.getvalue()) / 1e6,
    }
    t0 = time.perf_counter()
    truth_masks = read_mask_archive(truth_zip.getvalue(), name="truth.zip")
    pred_masks = read_mask_archive(pred_zip.getvalue(), name="pred.zip")
    stats = segmentation_statistics(truth_masks, pred_masks, num_classes=n_classes)
    out["read_and_statistics_s"] = time.perf_counter() - t0
    out["per_image_ms"] = 1000 * out["read_and_statistics_s"] / n_images
    t0 = time.perf_counter()
    scores = score_item_statistics(
        [stats],
        metric="miou",
        resamples=resamples,
        seed=0,
        strata=segmentation_strata(stats),
        jackknife=False,
    )
    out["bootstrap_s"] = time.perf_counter() - t0
    out["miou"] = scores[0].value
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.benchmarks.bench_vision", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--quick", action="store_true", help="a tenth of the sizes (a smoke run)")
    parser.add_argument("--no-pycocotools", action="store_true", help="skip the pycocotools baseline")
    parser.add_argument("--only", choices=["detection", "segmentation"])
    parser.add_argument("--detection-resamples", type=int, help="B of the detection run (default 1,000)")
    args = parser.parse_args(argv)
    scale = 10 if args.quick else 1
    if args.only in (None, "detection"):
        n_img, n_det, b = 5000 // scale, 500_000 // scale, args.detection_resamples or 1000 // scale
        d = bench_detection(n_img, 80, n_det, b, pycoco=not args.no_pycocotools)
        print(
            f"detection: {n_img} images, 80 classes, {int(d['objects'])} objects, {n_det} detections "
            f"({d['results_mb']:.0f} MB JSON), B = {b}, six AP stats"
        )
        print(
            f"  parse results {d['parse_s']:.1f} s, match {d['match_s']:.1f} s, replicates {d['replicates_s']:.1f} s, "
            f"total {d['total_s']:.1f} s; peak RSS {d['peak_mb_ours']:.0f} MB; AP {d['ap']:.4f}"
        )
        if "pycocotools_once_s" in d:
            extrapolated = d["pycocotools_once_s"] * b
            print(
                f"  pycocotools once: {d['pycocotools_once_s']:.1f} s (AP {d['pycocotools_ap']:.4f}); "
                f"re-run per resample, extrapolated: {extrapolated:,.0f} s for B = {b} "
                f"= {extrapolated / d['total_s']:,.0f}x ours; peak RSS with it {d['peak_mb_with_pycocotools']:.0f} MB"
            )
        sys.stdout.flush()
    if args.only in (None, "segmentation"):
        n_img, b = 500 // scale, 10_000 // scale
        s = bench_segmentation(n_img, 512, 683, 150, b)
        print(f"segmentation: {n_img} images of 512x683, 150 classes, B = {b}")
        print(
            f"  masks: zip of {s['pred_zip_mb']:.1f} MB read + statistics {s['read_and_statistics_s']:.1f} s "
            f"({s['per_image_ms']:.1f} ms per image pair); bootstrap {s['bootstrap_s']:.2f} s; mIoU {s['miou']:.4f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
