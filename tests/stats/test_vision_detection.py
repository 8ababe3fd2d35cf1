"""Detection metrics (issue 12) against pycocotools 2.0.11, faster-coco-eval 1.8.0 and a port of VOC's
devkit: point values, replicates on the duplicated-image dataset, float traps, chunking, bad input."""

from __future__ import annotations

import gzip
import io
import json

import numpy as np
import pytest

from stats.engine import concatenate_chunks
from stats.intervals import intervals_for
from stats.io import InputError
from stats.metrics import get_metric
from stats.resampling import resample_weights
from stats.vision import (
    DetectionTask,
    detection_point,
    detection_replicates,
    detection_strata,
    parse_coco_results,
    parse_coco_truth,
    parse_voc_truth,
)
from stats.vision.detection import (
    RECALL_THRESHOLDS,
    VOC07_THRESHOLDS,
    _first_reaching,
    detection_scores,
    score_detection_entries,
)
from tests.stats.vision_oracles import (
    STAT_ORDER,
    as_bytes,
    duplicate,
    faster_coco_eval_stats,
    pycocotools_per_class_ap,
    pycocotools_stats,
    random_case,
    voc_eval_port,
)

pytest.importorskip("pycocotools")


def prepare(gt, dets):
    truth = parse_coco_truth(as_bytes(gt), name="truth.json")
    task = DetectionTask(truth)
    return task, task.match(parse_coco_results(as_bytes(dets), truth, name="dets.json"))


def ours(point_or_reps, b=None) -> np.ndarray:
    vals = []
    for k in STAT_ORDER:
        v = point_or_reps[k] if b is None else point_or_reps[k][b]
        vals.append(-1.0 if v is None or np.isnan(v) else v)
    return np.array(vals)


def hand_made():
    """3 images, 2 classes: a TP at high IoU and its duplicate, a small object found at IoU ~0.53, a
    crowd region absorbing detections, false positives in images without the class, objects in every
    area range, tied scores across and within images, a class absent from an image."""
    anns = [
        # image 1: a large cat found well, plus a duplicate; a small dog found at IoU ~0.53
        {"id": 1, "image_id": 1, "category_id": 1, "bbox": [10, 10, 120, 100], "area": 11000.0},
        {"id": 2, "image_id": 1, "category_id": 2, "bbox": [200, 200, 20, 20], "area": 400.0},
        # image 2: a medium cat, a crowd of dogs, a medium dog
        {"id": 3, "image_id": 2, "category_id": 1, "bbox": [50, 50, 60, 40], "area": 2300.0},
        {"id": 4, "image_id": 2, "category_id": 2, "bbox": [0, 0, 300, 200], "area": 50000.0, "iscrowd": 1},
        {"id": 5, "image_id": 2, "category_id": 2, "bbox": [320, 10, 50, 50], "area": 2400.0},
        # image 3: only a large dog (no cat), at the area boundary 96^2 exactly
        {"id": 6, "image_id": 3, "category_id": 2, "bbox": [0, 0, 96, 96], "area": 9216.0},
        {"id": 7, "image_id": 3, "category_id": 2, "bbox": [150, 150, 32, 32], "area": 1024.0},
    ]
    for a in anns:
        a.setdefault("iscrowd", 0)
    gt = {
        "images": [{"id": 1}, {"id": 2}, {"id": 3}],
        "categories": [{"id": 1, "name": "cat"}, {"id": 2, "name": "dog"}],
        "annotations": anns,
    }
    dets = [
        {"image_id": 1, "category_id": 1, "bbox": [12, 11, 118, 100], "score": 0.9},
        {"image_id": 1, "category_id": 1, "bbox": [15, 15, 110, 95], "score": 0.8},  # duplicate
        {"image_id": 1, "category_id": 2, "bbox": [205, 203, 20, 20], "score": 0.7},  # IoU ~0.53
        {"image_id": 2, "category_id": 1, "bbox": [52, 48, 60, 42], "score": 0.8},  # tie with image 1
        {"image_id": 2, "category_id": 2, "bbox": [10, 10, 40, 40], "score": 0.6},  # in the crowd
        {"image_id": 2, "category_id": 2, "bbox": [100, 100, 30, 30], "score": 0.6},  # in the crowd
        {"image_id": 2, "category_id": 2, "bbox": [321, 12, 48, 49], "score": 0.6},  # TP, tied in image
        {"image_id": 3, "category_id": 1, "bbox": [10, 10, 50, 50], "score": 0.95},  # FP: no cat here
        {"image_id": 3, "category_id": 2, "bbox": [1, 1, 95, 94], "score": 0.5},
        {"image_id": 3, "category_id": 2, "bbox": [151, 150, 31, 33], "score": 0.5},
        {"image_id": 3, "category_id": 2, "bbox": [400, 400, 10, 10], "score": 0.5},  # small FP
    ]
    return gt, dets


def many_detections():
    """One image with 150 detections of one class (maxDets 100 drops 50, AR1 / AR10 differ)."""
    rng = np.random.default_rng(3)
    anns = []
    for i in range(40):
        x, y = rng.uniform(0, 500, 2)
        anns.append(
            {
                "id": i + 1,
                "image_id": 7,
                "category_id": 3,
                "bbox": [x, y, 30, 30],
                "area": 900.0,
                "iscrowd": 0,
            }
        )
    gt = {"images": [{"id": 7}, {"id": 8}], "categories": [{"id": 3, "name": "x"}], "annotations": anns}
    dets = []
    for i in range(150):
        a = anns[i % 40]["bbox"]
        dets.append(
            {
                "image_id": 7,
                "category_id": 3,
                "bbox": [a[0] + rng.normal(0, 3), a[1] + rng.normal(0, 3), 30, 30],
                "score": round(float(rng.random()), 2),
            }
        )
    return gt, dets


@pytest.mark.parametrize("case", [hand_made, many_detections])
def test_point_equals_pycocotools_and_faster_coco_eval(case) -> None:
    gt, dets = case()
    task, entry = prepare(gt, dets)
    point = detection_point(task, entry)
    ref = pycocotools_stats(gt, dets)
    np.testing.assert_allclose(ours(point), ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours(point), faster_coco_eval_stats(gt, dets), rtol=0, atol=1e-12)
    per_class = np.array([np.nan if v is None else v for v in point["per_class_AP"]])
    np.testing.assert_allclose(per_class, pycocotools_per_class_ap(gt, dets), rtol=0, atol=1e-12)


def test_hand_made_fixture_exercises_every_rule() -> None:
    gt, dets = hand_made()
    ref = pycocotools_stats(gt, dets)
    assert np.all(ref[:6] > 0)  # every area range has objects and some precision
    assert ref[6] < ref[7] <= ref[8]  # AR1 < AR10: images hold several objects
    gt2, dets2 = many_detections()
    ref2 = pycocotools_stats(gt2, dets2)
    assert ref2[6] < ref2[7] < ref2[8]


@pytest.mark.parametrize("seed", range(12))
def test_random_point_values(seed: int) -> None:
    rng = np.random.default_rng(seed)
    gt, dets = random_case(rng, n_img=8, n_cat=3, decimals=2 if seed % 2 else None)
    if not dets:
        pytest.skip("no detection drawn")
    task, entry = prepare(gt, dets)
    point = detection_point(task, entry)
    np.testing.assert_allclose(ours(point), pycocotools_stats(gt, dets), rtol=0, atol=1e-12)
    for key, use_07 in (("VOC07", True), ("VOC", False)):
        assert point[key] == pytest.approx(voc_eval_port(gt, dets, use_07=use_07), abs=1e-12)


def test_replicates_equal_pycocotools_on_the_duplicated_dataset() -> None:
    """60 count vectors (with zeros and counts up to 3) over 12 random tasks with tied scores."""
    checked = 0
    for seed in range(12):
        rng = np.random.default_rng(1000 + seed)
        gt, dets = random_case(rng, n_img=5, n_cat=3, decimals=1)
        task, entry = prepare(gt, dets)
        counts = rng.integers(0, 4, size=(5, 5)).astype(np.uint8)
        counts[0, 0] = 0
        reps = detection_replicates(task, entry, counts)
        for b in range(counts.shape[0]):
            gd, dd = duplicate(gt, dets, counts[b])
            if not dd:
                continue
            np.testing.assert_allclose(ours(reps, b), pycocotools_stats(gd, dd), rtol=0, atol=1e-12)
            assert reps["VOC07"][b] == pytest.approx(
                voc_eval_port(gd, dd, use_07=True), abs=1e-12, nan_ok=True
            )
            assert reps["VOC"][b] == pytest.approx(
                voc_eval_port(gd, dd, use_07=False), abs=1e-12, nan_ok=True
            )
            checked += 1
    assert checked >= 50


def test_tie_interleaving_matters_and_is_followed() -> None:
    """A tied TP and FP in one image: pycocotools interleaves copies (d1 d2 d1 d2), which changes AP
    against running the copies together; the replicate follows pycocotools."""
    gt = {
        "images": [{"id": 1}, {"id": 2}],
        "categories": [{"id": 1, "name": "a"}],
        "annotations": [
            {"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100.0, "iscrowd": 0},
            {"id": 2, "image_id": 2, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100.0, "iscrowd": 0},
        ],
    }
    dets = [
        {"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.5},  # TP
        {"image_id": 1, "category_id": 1, "bbox": [50, 50, 10, 10], "score": 0.5},  # FP, same score
        {"image_id": 2, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.4},
    ]
    task, entry = prepare(gt, dets)
    counts = np.array([[3, 1]], dtype=np.uint8)
    reps = detection_replicates(task, entry, counts)
    gd, dd = duplicate(gt, dets, counts[0])
    ref = pycocotools_stats(gd, dd)
    np.testing.assert_allclose(ours(reps, 0), ref, rtol=0, atol=1e-12)
    # copies run together (T T T F F F, then image 2) would keep precision 1 up to recall 0.75
    together = 76 / 101 * 1.0 + 25 / 101 * (4 / 7)
    assert abs(ref[1] - together) > 0.15


def test_float_traps() -> None:
    # searchsorted side left in floating point: 7/10 does not reach recThrs[70] = 0.7000000000000001
    assert RECALL_THRESHOLDS[70] > 0.7 and RECALL_THRESHOLDS[70] > 7 / 10
    idx = _first_reaching(np.array([[7.0, 8.0]]), np.array([10.0]), RECALL_THRESHOLDS)
    assert idx[0, 70] == 1 and idx[0, 69] == 0
    # VOC2007's thresholds: np.arange's "0.3" is 0.30000000000000004, so 3/10 does not reach it
    assert VOC07_THRESHOLDS[3] == 0.30000000000000004
    idx07 = _first_reaching(np.array([[3.0, 4.0]]), np.array([10.0]), VOC07_THRESHOLDS)
    assert idx07[0, 3] == 1
    # against the oracle: 10 objects, the 7th found is followed by an FP that lowers precision
    anns = [
        {
            "id": i + 1,
            "image_id": 1,
            "category_id": 1,
            "bbox": [i * 20.0, 0, 10, 10],
            "area": 100.0,
            "iscrowd": 0,
        }
        for i in range(10)
    ]
    gt = {"images": [{"id": 1}], "categories": [{"id": 1, "name": "a"}], "annotations": anns}
    dets = [
        {"image_id": 1, "category_id": 1, "bbox": [i * 20.0, 0, 10, 10], "score": 1 - i / 100}
        for i in range(7)
    ]
    dets += [{"image_id": 1, "category_id": 1, "bbox": [500, 500, 10, 10], "score": 0.5}]
    dets += [{"image_id": 1, "category_id": 1, "bbox": [140, 0, 10, 10], "score": 0.4}]
    task, entry = prepare(gt, dets)
    point = detection_point(task, entry)
    np.testing.assert_allclose(ours(point), pycocotools_stats(gt, dets), rtol=0, atol=1e-12)
    for key, use_07 in (("VOC07", True), ("VOC", False)):
        assert point[key] == pytest.approx(voc_eval_port(gt, dets, use_07=use_07), abs=1e-12)


def test_annotation_id_zero_is_refused() -> None:
    gt, _ = hand_made()
    gt["annotations"][0]["id"] = 0
    with pytest.raises(InputError, match=r"annotations\[0\]: `id` must be an integer >= 1"):
        parse_coco_truth(as_bytes(gt), name="truth.json")


def test_chunks_are_independent() -> None:
    rng = np.random.default_rng(7)
    gt, dets = random_case(rng, n_img=40, n_cat=3, decimals=2)
    task, entry = prepare(gt, dets)
    full = detection_scores(task, [entry], metrics=["coco_ap", "voc_ap50"], resamples=1024, seed=3)
    parts = [
        detection_scores(task, [entry], metrics=["coco_ap", "voc_ap50"], resamples=1024, seed=3, chunks=span)
        for span in (range(2), range(2, 4))
    ]
    for m in ("coco_ap", "voc_ap50"):
        joined = concatenate_chunks([p[m][0] for p in parts])
        assert np.array_equal(joined.replicates, full[m][0].replicates)
        assert joined.value == full[m][0].value
    # the replicates are detection_replicates of the task's stratified W, row by row
    w = resample_weights(task.n_images, resamples=1024, seed=3, strata=detection_strata(task.truth))
    direct = detection_replicates(task, entry, w[:300], stats=["AP"])["AP"]
    assert np.array_equal(direct, full["coco_ap"][0].replicates[:300])


def test_scores_feed_the_interval_machinery() -> None:
    rng = np.random.default_rng(11)
    gt, dets = random_case(rng, n_img=30, n_cat=2, decimals=2)
    task, entry = prepare(gt, dets)
    _, dets_b = random_case(np.random.default_rng(12), n_img=30, n_cat=2, decimals=2)
    dets_b = [d for d in dets_b if d["image_id"] <= 30]
    entry_b = task.match(parse_coco_results(as_bytes(dets_b), task.truth, name="b.json"))
    scores = score_detection_entries(
        task, [entry, entry_b], metric="coco_ap50", names=["a", "b"], resamples=300, seed=0, jackknife=True
    )
    assert [s.name for s in scores] == ["a", "b"]
    for iv in intervals_for(scores, method="bca") + intervals_for(scores, method="basic"):
        assert np.isfinite(iv.low) and iv.low <= iv.high
    assert scores[0].jackknife.shape == (30,)
    assert get_metric("coco_ap50").task_kind == "detection"


def test_undefined_stat_is_refused_not_nan() -> None:
    gt, dets = hand_made()
    gt["annotations"] = [a for a in gt["annotations"] if a["area"] > 32**2]  # no small object left
    task, entry = prepare(gt, dets)
    assert detection_point(task, entry)["APs"] is None
    with pytest.raises(ValueError, match="coco_ap_small` is undefined on this test set"):
        score_detection_entries(task, [entry], metric="coco_ap_small", resamples=10)
    # explicit weights that drop every image with objects: refused
    with pytest.raises(ValueError, match="AP is undefined in a resample"):
        score_detection_entries(task, [entry], metric="coco_ap", weights=np.array([[0, 0, 0], [1, 1, 1]]))


def test_stratified_resamples_keep_every_area_range() -> None:
    rng = np.random.default_rng(5)
    gt, dets = random_case(rng, n_img=12, n_cat=2, decimals=2, crowd=0.0)
    task, entry = prepare(gt, dets)
    scores = detection_scores(
        task, [entry], metrics=["coco_ap_small", "coco_ap_large"], resamples=512, seed=1
    )
    for m in ("coco_ap_small", "coco_ap_large"):
        assert np.all(np.isfinite(scores[m][0].replicates))


# ----------------------------------------------------------------------------------------------------
# formats and errors


def test_results_formats_agree() -> None:
    gt, dets = hand_made()
    truth = parse_coco_truth(as_bytes(gt), name="truth.json")
    from_json = parse_coco_results(as_bytes(dets), truth, name="d.json")
    from_gzip = parse_coco_results(gzip.compress(as_bytes(dets)), truth, name="d.json.gz")
    csv = "image_id,category_id,x,y,w,h,score\n" + "".join(
        f"{d['image_id']},{d['category_id']},{d['bbox'][0]},{d['bbox'][1]},{d['bbox'][2]},{d['bbox'][3]},{d['score']}\n"
        for d in dets
    )
    from_csv = parse_coco_results(csv.encode(), truth, name="d.csv")
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "image_id": [d["image_id"] for d in dets],
            "category_id": [d["category_id"] for d in dets],
            **{k: [float(d["bbox"][i]) for d in dets] for i, k in enumerate("xywh")},
            "score": [d["score"] for d in dets],
        }
    )
    buf = io.BytesIO()
    pq.write_table(table, buf)
    from_parquet = parse_coco_results(buf.getvalue(), truth, name="d.parquet")
    for other in (from_gzip, from_csv, from_parquet):
        for field in ("image", "category", "bbox", "score"):
            assert np.array_equal(getattr(other, field), getattr(from_json, field))
    empty = parse_coco_results(b"[]", truth, name="empty.json")
    assert empty.n_detections == 0
    task = DetectionTask(truth)
    assert detection_point(task, task.match(empty))["AP"] == 0.0  # stated rule: no detection scores 0


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (
            {"image_id": 99, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5},
            "record 1: unknown image_id 99",
        ),
        ({"image_id": 1, "category_id": 9, "bbox": [0, 0, 1, 1], "score": 0.5}, "unknown category_id 9"),
        ({"image_id": 1, "category_id": 1, "bbox": [0, 0, 0, 1], "score": 0.5}, "finite and positive"),
        ({"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, -2], "score": 0.5}, "finite and positive"),
        ({"image_id": 1, "category_id": 1, "bbox": [0, 0, 1], "score": 0.5}, "four numbers"),
        (
            {"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1], "score": float("nan")},
            "`score` must be a finite",
        ),
        (
            {"image_id": 1, "category_id": 1, "bbox": [0, 0, float("inf"), 1], "score": 0.5},
            "finite and positive",
        ),
    ],
)
def test_bad_results_name_the_record(record, message) -> None:
    gt, dets = hand_made()
    truth = parse_coco_truth(as_bytes(gt), name="truth.json")
    text = json.dumps([dets[0], record], indent=1)
    with pytest.raises(InputError, match=message) as info:
        parse_coco_results(text.encode(), truth, name="dets.json")
    assert info.value.file == "dets.json"
    assert "record 1" in str(info.value)
    assert info.value.line is not None and info.value.line > 5  # the second record's line


def test_bad_csv_results_name_the_line() -> None:
    gt, _ = hand_made()
    truth = parse_coco_truth(as_bytes(gt), name="truth.json")
    csv = "image_id,category_id,x,y,w,h,score\n1,1,0,0,5,5,0.5\n1,1,0,0,5,5,nan\n"
    with pytest.raises(InputError, match=r"record 1:.*`score` must be a finite") as info:
        parse_coco_results(csv.encode(), truth, name="d.csv")
    assert info.value.line == 3
    with pytest.raises(InputError, match="record 0: `w` must be a number, got 'abc'"):
        parse_coco_results(b"image_id,category_id,x,y,w,h,score\n1,1,0,0,abc,5,0.5\n", truth, name="d.csv")
    with pytest.raises(InputError, match="missing column"):
        parse_coco_results(b"image_id,category_id,x,y,w,score\n1,1,0,0,5,0.5\n", truth, name="d.csv")


def test_bad_truth_is_located() -> None:
    gt, _ = hand_made()
    bad = json.loads(json.dumps(gt))
    bad["annotations"][2]["image_id"] = 42
    with pytest.raises(InputError, match=r"annotations\[2\] \(id 3\): unknown image_id 42"):
        parse_coco_truth(as_bytes(bad), name="truth.json")
    bad = json.loads(json.dumps(gt))
    del bad["annotations"][1]["area"]
    with pytest.raises(InputError, match=r"annotations\[1\].*`area`"):
        parse_coco_truth(as_bytes(bad), name="truth.json")
    with pytest.raises(InputError, match="invalid JSON"):
        parse_coco_truth(b'{"images": [', name="truth.json")


def test_voc_truth_is_converted_with_its_conventions() -> None:
    table = (
        "image,category,xmin,ymin,xmax,ymax,difficult\n"
        "000001,dog,48,240,195,371,0\n"
        "000001,person,8,12,352,498,0\n"
        "000002,dog,10,10,50,60,1\n"
        "000003,,,,,,\n"
    )
    truth = parse_voc_truth(table.encode(), name="voc.csv")
    assert truth.n_images == 3 and truth.category_names == ("dog", "person")
    assert truth.bbox[0].tolist() == [48.0, 240.0, 148.0, 132.0]  # pixel-inclusive: +1
    assert truth.difficult.tolist() == [False, False, True]
    assert "pixel-inclusive" in truth.conventions["bbox"]
    coco = truth.to_coco()
    dets = [
        {"image_id": 1, "category_id": 1, "bbox": [48, 240, 148, 132], "score": 0.9},
        {"image_id": 2, "category_id": 1, "bbox": [10, 10, 41, 51], "score": 0.8},  # on the difficult dog
        {"image_id": 3, "category_id": 2, "bbox": [0, 0, 10, 10], "score": 0.7},
    ]
    task = DetectionTask(truth)
    point = detection_point(task, task.match(parse_coco_results(as_bytes(dets), truth, name="d.json")))
    np.testing.assert_allclose(ours(point), pycocotools_stats(coco, dets), rtol=0, atol=1e-12)
    assert point["VOC"] == pytest.approx(voc_eval_port(coco, dets, use_07=False), abs=1e-12)
    with pytest.raises(InputError, match="xmax must be >= xmin"):
        parse_voc_truth(b"image,category,xmin,ymin,xmax,ymax\na,dog,10,0,5,5\n", name="voc.csv")


def test_per_class_replicates_are_paired_with_the_headline() -> None:
    from stats.vision import detection_per_class

    rng = np.random.default_rng(21)
    gt, dets = random_case(rng, n_img=20, n_cat=3, decimals=2)
    task, entry = prepare(gt, dets)
    point, reps = detection_per_class(task, entry, resamples=300, seed=4)
    np.testing.assert_allclose(point, pycocotools_per_class_ap(gt, dets), rtol=0, atol=1e-12)
    assert reps.shape == (300, 3)
    w = resample_weights(task.n_images, resamples=300, seed=4, strata=detection_strata(task.truth))
    for b in (0, 7):
        gd, dd = duplicate(gt, dets, w[b])
        np.testing.assert_allclose(reps[b], pycocotools_per_class_ap(gd, dd), rtol=0, atol=1e-12)


def test_voc07_threshold_trap_against_the_devkit() -> None:
    """3 of 10 objects found first (recall 0.3 at precision 1), then 5 false positives, then a 4th: VOC2007's
    "0.3" threshold is 0.30000000000000004, which recall 3/10 = 0.3 does not reach."""
    anns = [
        {
            "id": i + 1,
            "image_id": 1,
            "category_id": 1,
            "bbox": [i * 20.0, 0, 10, 10],
            "area": 100.0,
            "iscrowd": 0,
        }
        for i in range(10)
    ]
    gt = {"images": [{"id": 1}], "categories": [{"id": 1, "name": "a"}], "annotations": anns}
    dets = [
        {"image_id": 1, "category_id": 1, "bbox": [i * 20.0, 0, 10, 10], "score": 0.9 - i / 100}
        for i in range(3)
    ]
    dets += [
        {"image_id": 1, "category_id": 1, "bbox": [500 + i * 20.0, 300, 10, 10], "score": 0.5}
        for i in range(5)
    ]
    dets += [{"image_id": 1, "category_id": 1, "bbox": [60.0, 0, 10, 10], "score": 0.1}]
    task, entry = prepare(gt, dets)
    point = detection_point(task, entry)
    ref = voc_eval_port(gt, dets, use_07=True)
    assert point["VOC07"] == pytest.approx(ref, abs=1e-12)
    naive = (4 * 1.0 + 4 / 9) / 11  # thresholds 0, .1, .2, .3 at precision 1, .4 at 4/9, the rest 0
    trap = (3 * 1.0 + 2 * 4 / 9) / 11  # "0.3" is not reached by recall 0.3: it reads precision 4/9
    assert ref == pytest.approx(trap, abs=1e-12) and abs(ref - naive) > 0.04


def test_gzip_is_bounded_after_decompression() -> None:
    gt, _ = hand_made()
    truth = parse_coco_truth(gzip.compress(as_bytes(gt)), name="truth.json.gz")
    assert truth.n_images == 3
    bomb = gzip.compress(b"[" + b" " * 5_000_000 + b"]")
    assert len(bomb) < 10_000
    with pytest.raises(InputError, match="larger than 1,000,000 bytes once decompressed"):
        parse_coco_results(bomb, truth, name="dets.json.gz", max_bytes=1_000_000)
    with pytest.raises(InputError, match="gzip stream is corrupt"):
        parse_coco_results(bomb[:-12], truth, name="dets.json.gz")


def test_matched_entry_round_trips_without_pickle(tmp_path) -> None:
    from stats.vision import load_matched, save_matched

    rng = np.random.default_rng(31)
    gt, dets = random_case(rng, n_img=15, n_cat=3, decimals=1)
    task, entry = prepare(gt, dets)
    path = tmp_path / "entry.npz"
    save_matched(entry, path)
    loaded = load_matched(path)
    w = resample_weights(task.n_images, resamples=64, seed=2)
    a, b = detection_replicates(task, entry, w), detection_replicates(task, loaded, w)
    for key in a:
        assert np.array_equal(a[key], b[key], equal_nan=True)
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(ValueError, match="not a stored matched entry"):
        load_matched(tmp_path / "other.npz")
