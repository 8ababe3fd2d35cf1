"""The demo's digit-scenes challenge: real detectors and segmenters on composed scenes, through the service."""

from __future__ import annotations

from leaderboard.demo.load import VISION, _user, _vision_challenge
from leaderboard.rankings.models import BoardSnapshot
from leaderboard.submissions.models import Status, Submission
from tests.service.vision_support import coco_stats


def test_the_demo_builds_a_detection_and_a_segmentation_board_from_real_algorithms(transactional_db) -> None:
    import gzip
    import json

    from leaderboard.demo.vision import DETECTORS, build

    data = build(seed=0)
    truth = json.loads(data.detection_truth)
    assert len(truth["images"]) == 48 and len(truth["annotations"]) > 48
    # Each detector's output is its own (different detections), and pycocotools ranks them as the board will.
    outputs = {name: json.loads(gzip.decompress(data.detections[name])) for name, _ in DETECTORS}
    assert len({json.dumps(o) for o in outputs.values()}) == len(outputs)
    oracle = {name: coco_stats(truth, recs)[0] for name, recs in outputs.items()}

    challenge = _vision_challenge(organizer=_user("organizer", staff=True), say=lambda _: None)
    assert challenge.slug == VISION
    assert Submission.objects.filter(challenge=challenge).exclude(status=Status.SCORED).count() == 0
    boxes = BoardSnapshot.objects.filter(task__slug="boxes").order_by("-sequence").first()
    ink = BoardSnapshot.objects.filter(task__slug="ink").order_by("-sequence").first()
    assert boxes is not None and ink is not None
    assert len(boxes.rows) == 4 and len(ink.rows) == 3
    for row in boxes.rows:
        assert abs(row["value"] - oracle[row["name"]]) < 1e-12
    assert boxes.rows[0]["name"] == "connected-components-knn"
    assert boxes.rows[-1]["name"] == "components-majority"  # the baseline: every digit called the same
    assert ink.rows[0]["name"] == "connected-components-knn"
