"""Independent oracles for the vision tests: pycocotools, faster-coco-eval, a port of VOC's devkit, the
duplicated-image dataset of a count vector, and numpy ports of mmsegmentation's and Cityscapes' recipes."""

from __future__ import annotations

import contextlib
import copy
import io
import json
from typing import Any

import numpy as np

STAT_ORDER = ("AP", "AP50", "AP75", "APs", "APm", "APl", "AR1", "AR10", "AR100", "ARs", "ARm", "ARl")


def pycocotools_eval(gt: dict[str, Any], dets: list[dict[str, Any]]) -> Any:
    """pycocotools' COCOeval (bbox) after evaluate/accumulate/summarize, output silenced."""
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = copy.deepcopy(gt)
        coco.createIndex()
        res = coco.loadRes(copy.deepcopy(dets))
        ev = COCOeval(coco, res, "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return ev


def pycocotools_stats(gt: dict[str, Any], dets: list[dict[str, Any]]) -> np.ndarray:
    return np.asarray(pycocotools_eval(gt, dets).stats)


def pycocotools_per_class_ap(gt: dict[str, Any], dets: list[dict[str, Any]]) -> np.ndarray:
    """AP@[.5:.95] per category (area all, 100 detections); NaN for a category without objects."""
    prec = pycocotools_eval(gt, dets).eval["precision"][:, :, :, 0, -1]
    out = []
    for k in range(prec.shape[2]):
        p = prec[:, :, k]
        out.append(np.mean(p[p > -1]) if (p > -1).any() else np.nan)
    return np.array(out)


def faster_coco_eval_stats(gt: dict[str, Any], dets: list[dict[str, Any]]) -> np.ndarray:
    from faster_coco_eval import COCO, COCOeval_faster

    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO(copy.deepcopy(gt))
        res = coco.loadRes(copy.deepcopy(dets))
        ev = COCOeval_faster(coco, res, "bbox", print_function=lambda *a, **k: None)
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return np.asarray(ev.stats[:12])


def duplicate(
    gt: dict[str, Any], dets: list[dict[str, Any]], counts: np.ndarray
) -> tuple[dict[str, Any], list]:
    """The dataset in which the image of sorted rank i appears counts[i] times; copy c of it gets an id
    ordered as (i, c) (VISION.md's convention)."""
    ids = sorted(im["id"] for im in gt["images"])
    new_ids = {i: [r * 1000 + c + 1 for c in range(int(counts[r]))] for r, i in enumerate(ids)}
    images = [{"id": x} for i in ids for x in new_ids[i]]
    anns, aid = [], 1
    for a in gt["annotations"]:
        for x in new_ids[a["image_id"]]:
            b = dict(a, image_id=x, id=aid)
            aid += 1
            anns.append(b)
    out_dets = [dict(d, image_id=x) for d in dets for x in new_ids[d["image_id"]]]
    return {"images": images, "categories": gt["categories"], "annotations": anns}, out_dets


def voc_eval_port(gt: dict[str, Any], dets: list[dict[str, Any]], *, use_07: bool) -> float:
    """py-faster-rcnn's ``voc_eval`` per class, mean over classes with objects; COCO boxes converted to
    pixel-inclusive corners (x2 = x + w - 1); crowd and ``difficult`` objects are VOC's difficult; the
    detection order is the stable sort by score over (image id, file order)."""
    aps = []
    img_rank = {i: r for r, i in enumerate(sorted(im["id"] for im in gt["images"]))}
    for cat in sorted(c["id"] for c in gt["categories"]):
        recs: dict[int, dict[str, Any]] = {}
        npos = 0
        for a in gt["annotations"]:
            if a["category_id"] != cat:
                continue
            x, y, w, h = a["bbox"]
            r = recs.setdefault(a["image_id"], {"bbox": [], "difficult": [], "det": []})
            r["bbox"].append([x, y, x + w - 1.0, y + h - 1.0])
            diff = bool(a.get("iscrowd", 0) or a.get("difficult", 0))
            r["difficult"].append(diff)
            r["det"].append(False)
            npos += not diff
        if npos == 0:
            continue
        cd = [(i, d) for i, d in enumerate(dets) if d["category_id"] == cat]
        cd.sort(key=lambda t: (-t[1]["score"], img_rank[t[1]["image_id"]], t[0]))
        nd = len(cd)
        tp, fp = np.zeros(nd), np.zeros(nd)
        for k, (_, d) in enumerate(cd):
            r = recs.get(d["image_id"])
            x, y, w, h = d["bbox"]
            bb = np.array([x, y, x + w - 1.0, y + h - 1.0])
            ovmax = -np.inf
            if r is not None and r["bbox"]:
                g = np.array(r["bbox"], dtype=float)
                ixmin = np.maximum(g[:, 0], bb[0])
                iymin = np.maximum(g[:, 1], bb[1])
                ixmax = np.minimum(g[:, 2], bb[2])
                iymax = np.minimum(g[:, 3], bb[3])
                iw = np.maximum(ixmax - ixmin + 1.0, 0.0)
                ih = np.maximum(iymax - iymin + 1.0, 0.0)
                inters = iw * ih
                uni = (
                    (bb[2] - bb[0] + 1.0) * (bb[3] - bb[1] + 1.0)
                    + (g[:, 2] - g[:, 0] + 1.0) * (g[:, 3] - g[:, 1] + 1.0)
                    - inters
                )
                overlaps = inters / uni
                ovmax = np.max(overlaps)
                jmax = int(np.argmax(overlaps))
            if ovmax > 0.5:
                if not r["difficult"][jmax]:
                    if not r["det"][jmax]:
                        tp[k] = 1.0
                        r["det"][jmax] = True
                    else:
                        fp[k] = 1.0
            else:
                fp[k] = 1.0
        fp, tp = np.cumsum(fp), np.cumsum(tp)
        rec = tp / float(npos)
        prec = tp / np.maximum(tp + fp, np.finfo(np.float64).eps)
        if use_07:
            ap = 0.0
            for t in np.arange(0.0, 1.1, 0.1):
                p = 0 if np.sum(rec >= t) == 0 else np.max(prec[rec >= t])
                ap = ap + p / 11.0
        else:
            mrec = np.concatenate(([0.0], rec, [1.0]))
            mpre = np.concatenate(([0.0], prec, [0.0]))
            for i in range(mpre.size - 1, 0, -1):
                mpre[i - 1] = np.maximum(mpre[i - 1], mpre[i])
            i = np.where(mrec[1:] != mrec[:-1])[0]
            ap = np.sum((mrec[i + 1] - mrec[i]) * mpre[i + 1])
        aps.append(ap)
    return float(np.mean(aps)) if aps else float("nan")


def random_case(
    rng: np.random.Generator, *, n_img: int = 6, n_cat: int = 3, decimals: int | None = 1, crowd: float = 0.1
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A random COCO truth and results: jittered copies of objects (true and duplicate detections),
    wrong classes, background boxes, crowd regions, objects of every size; scores rounded to
    ``decimals`` so that ties are common."""
    anns, aid = [], 1
    for i in range(1, n_img + 1):
        for _ in range(int(rng.integers(0, 6))):
            x, y = rng.uniform(0, 200, 2)
            w, h = rng.uniform(2, 150, 2)
            anns.append(
                {
                    "id": aid,
                    "image_id": i,
                    "category_id": int(rng.integers(1, n_cat + 1)),
                    "bbox": [float(x), float(y), float(w), float(h)],
                    "area": float(w * h * rng.uniform(0.5, 1)),
                    "iscrowd": int(rng.random() < crowd),
                }
            )
            aid += 1
    gt = {
        "images": [{"id": i} for i in range(1, n_img + 1)],
        "categories": [{"id": c, "name": f"c{c}"} for c in range(1, n_cat + 1)],
        "annotations": anns,
    }

    def score() -> float:
        s = float(rng.random())
        return round(s, decimals) if decimals is not None else s

    dets = []
    for a in anns:
        for _ in range(int(rng.integers(0, 3))):
            x, y, w, h = a["bbox"]
            j = rng.normal(0, 0.15, 4) * np.array([w, h, w, h])
            cat = a["category_id"] if rng.random() < 0.9 else int(rng.integers(1, n_cat + 1))
            box = [float(x + j[0]), float(y + j[1]), float(max(w + j[2], 1)), float(max(h + j[3], 1))]
            dets.append({"image_id": a["image_id"], "category_id": cat, "bbox": box, "score": score()})
    for _ in range(int(rng.integers(0, 15))):
        x, y = rng.uniform(0, 200, 2)
        w, h = rng.uniform(2, 150, 2)
        dets.append(
            {
                "image_id": int(rng.integers(1, n_img + 1)),
                "category_id": int(rng.integers(1, n_cat + 1)),
                "bbox": [float(x), float(y), float(w), float(h)],
                "score": score(),
            }
        )
    return gt, dets


def as_bytes(obj: Any) -> bytes:
    return json.dumps(obj).encode()


# ----------------------------------------------------------------------------------------------------
# segmentation


def mmseg_total_area(
    results: list[np.ndarray],
    labels: list[np.ndarray],
    num_classes: int,
    ignore_index: int,
    reduce_zero_label: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A numpy port of mmsegmentation's ``intersect_and_union`` summed over images (torch.histc with
    bins=C over [0, C-1] drops values outside that range)."""

    def histc(x: np.ndarray) -> np.ndarray:
        x = x[(x >= 0) & (x <= num_classes - 1)]
        return np.histogram(x.astype(float), bins=num_classes, range=(0, num_classes - 1))[0].astype(float)

    ti, tu, tp, tl = (np.zeros(num_classes) for _ in range(4))
    for pred, label in zip(results, labels, strict=True):
        label = label.astype(np.int64).copy()
        if reduce_zero_label:
            label[label == 0] = 255
            label = label - 1
            label[label == 254] = 255
        mask = label != ignore_index
        pred_m, label_m = pred.astype(np.int64)[mask], label[mask]
        intersect = pred_m[pred_m == label_m]
        ai, ap, al = histc(intersect), histc(pred_m), histc(label_m)
        ti += ai
        tu += ap + al - ai
        tp += ap
        tl += al
    return ti, tu, tp, tl


def mmseg_metrics(ti: np.ndarray, tu: np.ndarray, tp: np.ndarray, tl: np.ndarray) -> dict[str, Any]:
    with np.errstate(invalid="ignore", divide="ignore"):
        iou = ti / tu
        acc = ti / tl
    return {
        "aAcc": ti.sum() / tl.sum(),
        "IoU": iou,
        "mIoU": np.nanmean(iou),
        "mAcc": np.nanmean(acc),
    }


def cityscapes_iou(
    results: list[np.ndarray], labels: list[np.ndarray], num_classes: int, ignore_index: int
) -> np.ndarray:
    """Cityscapes' evalPixelLevelSemanticLabeling: a confusion matrix over non-ignored ground-truth rows
    (predictions outside the classes in an extra column), IoU = tp / (tp + fp + fn), NaN when 0/0."""
    conf = np.zeros((num_classes, num_classes + 1), dtype=np.int64)
    for pred, label in zip(results, labels, strict=True):
        keep = label != ignore_index
        g = label[keep].astype(np.int64)
        p = pred[keep].astype(np.int64)
        p = np.where((p >= 0) & (p < num_classes), p, num_classes)
        np.add.at(conf, (g, p), 1)
    out = np.full(num_classes, np.nan)
    for c in range(num_classes):
        tp = conf[c, c]
        fn = conf[c, :].sum() - tp
        fp = conf[:, c].sum() - tp
        den = tp + fp + fn
        if den > 0:
            out[c] = tp / den
    return out
