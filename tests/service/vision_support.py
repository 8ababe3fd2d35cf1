"""Small detection and segmentation files for the service tests, and independent oracles for their values.

Oracles: pycocotools (COCO AP and AR) run in the test itself, and a numpy port of mmsegmentation's
mIoU / aAcc recipe. Neither is the scorer (that is ``stats.vision``).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import tarfile
import zipfile
from typing import Any

import numpy as np

CATEGORIES = [{"id": 3, "name": "cat"}, {"id": 7, "name": "dog"}, {"id": 11, "name": "zebra"}]
CLASS_NAMES = ["background", "road", "car", "tree"]
SEG_SIZE = (12, 16)  # height, width


def coco_truth(n_images: int = 12, *, seed: int = 0) -> dict[str, Any]:
    """Images listed out of id order (the task must sort them), 0-3 objects each, one crowd region."""
    rng = np.random.default_rng(seed)
    ids = [int(i) for i in rng.permutation(np.arange(1, n_images + 1) * 5)]
    images = [{"id": i, "width": 200, "height": 150} for i in ids]
    annotations = []
    for i in ids:
        for _ in range(int(rng.integers(0, 4))):
            w, h = float(rng.uniform(6, 150)), float(rng.uniform(6, 140))
            x, y = float(rng.uniform(0, 200 - w)), float(rng.uniform(0, 150 - h))
            annotations.append(
                {
                    "id": len(annotations) + 1,
                    "image_id": i,
                    "category_id": int(rng.choice([c["id"] for c in CATEGORIES])),
                    "bbox": [round(x, 2), round(y, 2), round(w, 2), round(h, 2)],
                    "area": round(w * h, 2),
                    "iscrowd": 0,
                }
            )
    annotations[0]["iscrowd"] = 1
    return {"images": images, "annotations": annotations, "categories": CATEGORIES}


def coco_results(truth: dict[str, Any], *, seed: int, quality: float) -> list[dict[str, Any]]:
    """Jittered true boxes (found with probability ``quality``), some wrong classes, false positives."""
    rng = np.random.default_rng(seed)
    out = []
    for ann in truth["annotations"]:
        if rng.random() > quality:
            continue
        x, y, w, h = ann["bbox"]
        jitter = rng.normal(0, (1 - quality) * 6 + 0.5, 4)
        category = ann["category_id"] if rng.random() < 0.85 else CATEGORIES[0]["id"]
        out.append(
            {
                "image_id": ann["image_id"],
                "category_id": category,
                "bbox": [round(x + jitter[0], 2), round(y + jitter[1], 2), round(max(w + jitter[2], 1), 2),
                         round(max(h + jitter[3], 1), 2)],
                "score": round(float(rng.uniform(0.3, 1.0) * quality), 3),
            }
        )  # fmt: skip
    for image in truth["images"]:
        for _ in range(int(rng.integers(0, 3))):
            out.append(
                {
                    "image_id": image["id"],
                    "category_id": int(rng.choice([c["id"] for c in CATEGORIES])),
                    "bbox": [round(float(v), 2) for v in (*rng.uniform(0, 120, 2), *rng.uniform(5, 60, 2))],
                    "score": round(float(rng.uniform(0, 0.6)), 3),
                }
            )
    return out


def results_csv(records: list[dict[str, Any]]) -> bytes:
    lines = ["image_id,category_id,x,y,w,h,score"]
    lines += [
        f"{r['image_id']},{r['category_id']},{','.join(repr(float(v)) for v in r['bbox'])},{float(r['score'])!r}"
        for r in records
    ]
    return ("\n".join(lines) + "\n").encode()


def coco_stats(truth: dict[str, Any], records: list[dict[str, Any]]) -> np.ndarray:
    """pycocotools' 12 numbers (AP, AP50, AP75, APs, APm, APl, AR1, AR10, AR100, ARs, ARm, ARl)."""
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO()
        gt.dataset = json.loads(json.dumps(truth))
        gt.createIndex()
        dt = gt.loadRes(json.loads(json.dumps(records)))
        ev = COCOeval(gt, dt, "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return np.asarray(ev.stats)


COCO_STAT_INDEX = {
    "coco_ap": 0,
    "coco_ap50": 1,
    "coco_ap75": 2,
    "coco_ap_small": 3,
    "coco_ap_medium": 4,
    "coco_ap_large": 5,
    "coco_ar100": 8,
}


def json_bytes(value: Any, *, gz: bool = False) -> bytes:
    data = json.dumps(value).encode()
    return gzip.compress(data, mtime=0) if gz else data


# --- segmentation -----------------------------------------------------------------------------------------
def png(label_map: np.ndarray) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(label_map.astype(np.uint8), mode="L").save(buf, format="PNG")
    return buf.getvalue()


def label_maps(n_images: int = 10, *, seed: int = 0) -> dict[str, np.ndarray]:
    """Blocky label maps over the classes, with some ignored (255) pixels; ids 'img-00'..."""
    rng = np.random.default_rng(seed)
    h, w = SEG_SIZE
    out = {}
    for k in range(n_images):
        coarse = rng.integers(0, len(CLASS_NAMES), (h // 4, w // 4))
        m = np.kron(coarse, np.ones((4, 4), dtype=np.int64)).astype(np.uint8)
        m[rng.random((h, w)) < 0.03] = 255
        out[f"img-{k:02d}"] = m
    return out


def noisy(maps: dict[str, np.ndarray], *, seed: int, error: float) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for key, m in maps.items():
        p = np.where(m == 255, 0, m).astype(np.uint8)
        flip = rng.random(m.shape) < error
        p[flip] = rng.integers(0, len(CLASS_NAMES), int(flip.sum()))
        out[key] = p
    return out


def zip_of(maps: dict[str, np.ndarray], *, extra: dict[str, bytes] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key, m in maps.items():
            zf.writestr(f"{key}.png", png(m))
        for name, data in (extra or {}).items():
            zf.writestr(name, data)
    return buf.getvalue()


def tar_of(maps: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for key, m in maps.items():
            data = png(m)
            info = tarfile.TarInfo(f"masks/{key}.png")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def miou_oracle(
    truth: dict[str, np.ndarray], pred: dict[str, np.ndarray], *, n_classes: int, ignore_index: int = 255
) -> tuple[float, float]:
    """mmsegmentation's recipe: per-class intersection and union over all pixels not ignored; classes
    absent from both are left out (nanmean); aAcc = sum(I) / sum(L)."""
    inter = np.zeros(n_classes)
    area_p = np.zeros(n_classes)
    area_l = np.zeros(n_classes)
    for key, t in truth.items():
        keep = t != ignore_index
        tl, pl = t[keep].astype(np.int64), pred[key][keep].astype(np.int64)
        hit = tl[tl == pl]
        inter += np.bincount(hit, minlength=n_classes)[:n_classes]
        area_p += np.bincount(pl[(pl >= 0) & (pl < n_classes)], minlength=n_classes)[:n_classes]
        area_l += np.bincount(tl, minlength=n_classes)[:n_classes]
    union = area_p + area_l - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        iou = inter / union
    return float(np.nanmean(iou)), float(inter.sum() / area_l.sum())
