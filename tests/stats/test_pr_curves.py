"""stats.pr_curves (the curves on an entry's page) against pycocotools' ``eval["precision"]``."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from stats.pr_curves import precision_at_recall_thresholds
from stats.vision.detection import DetectionTask
from stats.vision.detection_io import parse_coco_results, parse_coco_truth
from tests.service.vision_support import coco_results, coco_truth


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("threshold", [0, 5])
def test_precision_at_the_recall_thresholds_equals_pycocotools(seed: int, threshold: int) -> None:
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    truth = coco_truth(20, seed=seed)
    records = coco_results(truth, seed=seed + 10, quality=0.7)
    for r in records[::4]:
        r["score"] = round(r["score"], 1)  # ties across images
    parsed = parse_coco_truth(json.dumps(truth).encode(), name="t.json")
    task = DetectionTask(parsed)
    entry = task.match(parse_coco_results(json.dumps(records).encode(), parsed, name="r.json"))
    recall, precision = precision_at_recall_thresholds(task, entry, threshold=threshold)

    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO()
        gt.dataset = json.loads(json.dumps(truth))
        gt.createIndex()
        ev = COCOeval(gt, gt.loadRes(json.loads(json.dumps(records))), "bbox")
        ev.evaluate()
        ev.accumulate()
    expected = ev.eval["precision"][threshold, :, :, 0, 2].T  # (K, R): area all, 100 detections
    np.testing.assert_array_equal(recall, ev.params.recThrs)
    np.testing.assert_allclose(precision, expected, rtol=0, atol=1e-12)
    assert (precision[expected < 0] == -1).all()
