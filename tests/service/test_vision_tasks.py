"""Detection and segmentation tasks through the service: the API, the web forms, the worker and the board.

Values are checked against independent oracles computed in the test (pycocotools for COCO; a numpy port
of mmsegmentation's recipe for mIoU); the statistics themselves are tested in tests/stats.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from leaderboard.challenges.models import Challenge, Task, TaskTruth
from leaderboard.rankings.models import BoardSnapshot, ChallengeSummary
from leaderboard.scoring.models import Score
from leaderboard.submissions.models import Status, Submission
from stats.metrics import get_metric
from tests.service.api_support import client_for
from tests.service.factories import user
from tests.service.vision_support import (
    CLASS_NAMES,
    COCO_STAT_INDEX,
    coco_results,
    coco_stats,
    coco_truth,
    json_bytes,
    label_maps,
    miou_oracle,
    noisy,
    results_csv,
    tar_of,
    zip_of,
)

DETECTION_METRICS = [*COCO_STAT_INDEX, "voc07_ap50", "voc_ap50"]
SEGMENTATION_METRICS = ["miou", "pixel_accuracy"]


pytestmark = pytest.mark.usefixtures("fresh_throttles")


def make_challenge(client: Any, slug: str, **fields: Any) -> None:
    r = client.post(
        "/api/challenges/", {"slug": slug, "title": slug, "resamples": 200, **fields}, format="json"
    )
    assert r.status_code == 201, r.content


def add_detection_task(
    client: Any, slug: str, truth: dict[str, Any], metric: str = "coco_ap", task: str = "det"
):  # type: ignore[no-untyped-def]
    return client.post(
        f"/api/challenges/{slug}/tasks/",
        {"slug": task, "title": f"Boxes ({metric})", "metric": metric,
         "truth": SimpleUploadedFile("instances.json", json_bytes(truth))},
        format="multipart",
    )  # fmt: skip


def add_segmentation_task(
    client: Any, slug: str, archive: bytes, metric: str = "miou", task: str = "seg", **extra: Any
):  # type: ignore[no-untyped-def]
    return client.post(
        f"/api/challenges/{slug}/tasks/",
        {"slug": task, "title": f"Masks ({metric})", "metric": metric, "labels": ",".join(CLASS_NAMES),
         "truth": SimpleUploadedFile("labels.zip", archive), **extra},
        format="multipart",
    )  # fmt: skip


def submit(client: Any, slug: str, name: str, files: dict[str, tuple[str, bytes]]):  # type: ignore[no-untyped-def]
    parts = {field: SimpleUploadedFile(fname, data) for field, (fname, data) in files.items()}
    return client.post(f"/api/challenges/{slug}/submissions/", {"name": name, **parts}, format="multipart")


def board_of(slug: str, task: str) -> BoardSnapshot:
    snap = (
        BoardSnapshot.objects.filter(task__challenge__slug=slug, task__slug=task)
        .order_by("-sequence")
        .first()
    )
    assert snap is not None
    return snap


# --- creation ---------------------------------------------------------------------------------------------
def test_a_detection_task_records_its_image_order_and_public_facts_only(transactional_db) -> None:
    org = client_for(user("org"))
    make_challenge(org, "det")
    truth = coco_truth(12, seed=1)
    r = add_detection_task(org, "det", truth)
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["kind"] == "detection" and body["metric"] == "coco_ap"
    # The images in ascending id order (pycocotools' order), whatever the file's order; never re-ided.
    file_order = [i["id"] for i in truth["images"]]
    assert file_order != sorted(file_order)
    assert Task.objects.get(slug="det").item_ids == [str(i) for i in sorted(file_order)]
    assert body["vision"]["categories"] == [{"id": c["id"], "name": c["name"]} for c in truth["categories"]]
    assert body["labels"] == ["cat", "dog", "zebra"]
    assert body["prediction_format"]["columns"] == ["image_id", "category_id", "bbox", "score"]
    # No annotation in the answer: no box coordinate of the truth appears.
    text = r.content.decode()
    for ann in truth["annotations"]:
        assert repr(ann["bbox"][2]) not in text
    # The file is kept (hidden) for scoring.
    assert bytes(TaskTruth.objects.get(task__slug="det").data) == json_bytes(truth)


def test_a_segmentation_task_takes_class_names_and_its_settings(transactional_db) -> None:
    org = client_for(user("org"))
    make_challenge(org, "seg")
    maps = label_maps(6, seed=2)
    r = add_segmentation_task(org, "seg", zip_of(maps), ignore_index=255, reduce_zero_label=False)
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["kind"] == "segmentation"
    assert body["labels"] == CLASS_NAMES
    assert body["vision"]["ignore_index"] == 255 and body["vision"]["reduce_zero_label"] is False
    assert sorted(Task.objects.get(slug="seg").item_ids) == sorted(maps)
    assert body["prediction_format"]["file_types"] == ["zip", "tar"]


# --- scoring through the service, every metric --------------------------------------------------------------
@pytest.mark.parametrize("metric", DETECTION_METRICS)
def test_every_detection_metric_is_scored_by_the_worker_and_ranked(transactional_db, metric: str) -> None:
    org = client_for(user("org"))
    make_challenge(org, "d")
    truth = coco_truth(14, seed=3)
    assert add_detection_task(org, "d", truth, metric=metric).status_code == 201
    entries = {
        "good": coco_results(truth, seed=4, quality=0.9),
        "weak": coco_results(truth, seed=5, quality=0.5),
    }
    forms = {"good": ("good.json", json_bytes(entries["good"])),
             "weak": ("weak.json.gz", json_bytes(entries["weak"], gz=True))}  # fmt: skip
    for name, (fname, data) in forms.items():
        r = submit(client_for(user(name)), "d", name, {"file": (fname, data)})
        assert r.status_code == 201, r.content
        assert r.json()["status"] == Status.SCORED, r.json()
    snap = board_of("d", "det")
    rows = {r["name"]: r for r in snap.rows}
    assert set(rows) == {"good", "weak"}
    for name, records in entries.items():
        row = rows[name]
        assert row["low"] <= row["value"] <= row["high"]
        if metric in COCO_STAT_INDEX:
            assert row["value"] == pytest.approx(
                coco_stats(truth, records)[COCO_STAT_INDEX[metric]], abs=1e-12
            )
        else:
            assert 0.0 <= row["value"] <= 1.0
    assert rows["good"]["value"] > rows["weak"]["value"]
    assert snap.signature["metric"] == metric
    # The challenge left BCa (the default): the metric's own method, chosen by coverage, is in the signature.
    assert snap.signature["interval_method"] == get_metric(metric).default_interval == "basic"
    # The other metrics are computed for the entry's page.
    details = Score.objects.get(submission__name="good").details
    names = [m["name"] for m in details["metrics"]]
    assert metric in names and "coco_ap50" in names and "voc_ap50" in names
    assert [c["name"] for c in details["classes"]] == ["cat", "dog", "zebra"]
    assert details["curves_svg"].lstrip().startswith("<?xml") and "<svg" in details["curves_svg"]


@pytest.mark.parametrize("metric", SEGMENTATION_METRICS)
def test_every_segmentation_metric_is_scored_by_the_worker_and_ranked(transactional_db, metric: str) -> None:
    org = client_for(user("org"))
    make_challenge(org, "s")
    truth = label_maps(10, seed=6)
    assert add_segmentation_task(org, "s", zip_of(truth), metric=metric).status_code == 201
    preds = {"good": noisy(truth, seed=7, error=0.1), "weak": noisy(truth, seed=8, error=0.5)}
    files = {"good": ("good.zip", zip_of(preds["good"])), "weak": ("weak.tar.gz", tar_of(preds["weak"]))}
    for name, (fname, data) in files.items():
        r = submit(client_for(user(name)), "s", name, {"file": (fname, data)})
        assert r.status_code == 201, r.content
        assert r.json()["status"] == Status.SCORED, r.json()
    snap = board_of("s", "seg")
    assert snap.signature["interval_method"] == (get_metric(metric).default_interval or "bca")
    rows = {r["name"]: r for r in snap.rows}
    for name, pred in preds.items():
        miou, aacc = miou_oracle(truth, pred, n_classes=len(CLASS_NAMES))
        expected = miou if metric == "miou" else aacc
        assert rows[name]["value"] == pytest.approx(expected, abs=1e-12)
        assert rows[name]["low"] <= rows[name]["value"] <= rows[name]["high"]
    assert rows["good"]["value"] > rows["weak"]["value"]
    details = Score.objects.get(submission__name="good").details
    assert details["class_metric"] == "IoU" and [c["name"] for c in details["classes"]] == CLASS_NAMES


def _results_parquet(records: list[dict[str, Any]]) -> bytes:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = {
        "image_id": [r["image_id"] for r in records],
        "category_id": [r["category_id"] for r in records],
        **{key: [float(r["bbox"][k]) for r in records] for k, key in enumerate("xywh")},
        "score": [float(r["score"]) for r in records],
    }
    out = io.BytesIO()
    pq.write_table(pa.table(columns), out)
    return out.getvalue()


def test_detection_csv_and_parquet_predictions_score_as_the_json_ones(transactional_db) -> None:
    org = client_for(user("org"))
    make_challenge(org, "csv")
    truth = coco_truth(10, seed=9)
    assert add_detection_task(org, "csv", truth).status_code == 201
    records = coco_results(truth, seed=10, quality=0.8)
    for name, (fname, data) in {"as-json": ("a.json", json_bytes(records)),
                                "as-csv": ("a.csv", results_csv(records)),
                                "as-parquet": ("a.parquet", _results_parquet(records))}.items():  # fmt: skip
        r = submit(client_for(user(name)), "csv", name, {"file": (fname, data)})
        assert r.status_code == 201 and r.json()["status"] == Status.SCORED, r.content
    rows = {r["name"]: r for r in board_of("csv", "det").rows}
    assert rows["as-json"]["value"] == rows["as-csv"]["value"] == rows["as-parquet"]["value"]


def test_detection_and_segmentation_tasks_feed_the_cross_task_summary(transactional_db) -> None:
    org = client_for(user("org"))
    make_challenge(org, "both")
    truth = coco_truth(12, seed=11)
    maps = label_maps(8, seed=12)
    assert add_detection_task(org, "both", truth).status_code == 201
    assert add_segmentation_task(org, "both", zip_of(maps)).status_code == 201
    for k, (name, quality) in enumerate((("a", 0.95), ("b", 0.7), ("c", 0.4))):
        r = submit(client_for(user(name)), "both", name, {
            "file:det": ("d.json", json_bytes(coco_results(truth, seed=20 + k, quality=quality))),
            "file:seg": ("s.zip", zip_of(noisy(maps, seed=30 + k, error=1 - quality))),
        })  # fmt: skip
        assert r.status_code == 201 and r.json()["status"] == Status.SCORED, r.content
    summary = ChallengeSummary.objects.filter(challenge__slug="both").order_by("-sequence").first()
    assert summary is not None and summary.data["available"], summary and summary.data
    assert summary.data["tasks"] == ["det", "seg"] and "<svg" in summary.svg


# --- who sees the per-class figures -----------------------------------------------------------------------
def test_per_class_results_to_organizers_during_the_challenge_and_to_everyone_once_revealed(
    transactional_db,
) -> None:
    organizer, participant = user("org"), user("pat")
    org = client_for(organizer)
    make_challenge(org, "vis")
    truth = coco_truth(10, seed=13)
    assert add_detection_task(org, "vis", truth).status_code == 201
    r = submit(
        client_for(participant),
        "vis",
        "mine",
        {"file": ("m.json", json_bytes(coco_results(truth, seed=14, quality=0.8)))},
    )
    assert r.status_code == 201, r.content
    sid = r.json()["id"]

    # API: the participant's own submission shows the board's value and no details before the reveal.
    own = client_for(participant).get(f"/api/submissions/{sid}/").json()
    assert own["scores"][0]["details"] is None
    as_org = org.get(f"/api/submissions/{sid}/").json()
    assert {m["name"] for m in as_org["scores"][0]["details"]["metrics"]} >= {"coco_ap", "coco_ap50"}
    # Pages.
    web_pat, web_org = Client(), Client()
    web_pat.force_login(participant)
    web_org.force_login(organizer)
    page = web_pat.get("/c/vis/t/det/classes/")
    assert page.status_code == 403 and "reveal" in page.content.decode()
    assert "AP per class" not in web_pat.get(f"/submissions/{sid}/").content.decode()
    page = web_org.get("/c/vis/t/det/classes/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "AP per class" in html and "<svg" in html and "zebra" in html
    assert "AP per class" in web_org.get(f"/submissions/{sid}/").content.decode()

    Challenge.objects.filter(slug="vis").update(private_revealed=True)
    assert client_for(participant).get(f"/api/submissions/{sid}/").json()["scores"][0]["details"] is not None
    assert web_pat.get("/c/vis/t/det/classes/").status_code == 200
    assert Client().get("/c/vis/t/det/classes/").status_code == 200  # anyone who sees the challenge
    assert "AP per class" in web_pat.get(f"/submissions/{sid}/").content.decode()


# --- bad input: 400 naming file and record, nothing stored, not charged -------------------------------------
def _bad_detection_files(truth: dict[str, Any]) -> dict[str, tuple[bytes, str]]:
    good = coco_results(truth, seed=15, quality=0.8)
    image = truth["images"][0]["id"]

    def with_record(k: int, **change: Any) -> bytes:
        records = [dict(r) for r in good]
        records[k] = {**records[k], **change}
        return json_bytes(records)

    return {
        "unknown image id": (with_record(2, image_id=999_999), r"999999"),
        "unknown category id": (with_record(3, category_id=42), r"42"),
        "non-positive width": (with_record(1, bbox=[1.0, 2.0, 0.0, 5.0]), r"width|positive"),
        "negative height": (with_record(1, bbox=[1.0, 2.0, 4.0, -5.0]), r"height|positive"),
        "non-finite box": (json_bytes(good).replace(b'"bbox": [', b'"bbox": [NaN, ', 1), r"finite|number"),
        "non-finite score": (with_record(0, score=float("inf")), r"score"),
        "missing key": (
            json_bytes([{"image_id": image, "bbox": [1, 2, 3, 4], "score": 0.5}]),
            r"category_id",
        ),
        "not a list": (b'{"image_id": 1}', r"list"),
        "broken json": (
            b'[{"image_id": 1, "category_id": 3, "bbox": [1, 2, 3, 4], "score": 0.5}',
            r"JSON|json",
        ),
        "corrupt gzip": (b"\x1f\x8b\x08\x00" + b"garbage" * 20, r"gzip"),
    }


@pytest.mark.parametrize(
    "case",
    ["unknown image id", "unknown category id", "non-positive width", "negative height", "non-finite box",
     "non-finite score", "missing key", "not a list", "broken json", "corrupt gzip"],
)  # fmt: skip
def test_a_bad_detection_file_is_a_400_naming_file_and_record_and_is_not_charged(
    transactional_db, case: str
) -> None:
    org = client_for(user("org"))
    make_challenge(org, "bad", total_limit=1)
    truth = coco_truth(10, seed=16)
    assert add_detection_task(org, "bad", truth).status_code == 201
    data, pattern = _bad_detection_files(truth)[case]
    pat = client_for(user("pat"))
    r = submit(pat, "bad", "x", {"file": ("preds.json", data)})
    assert r.status_code == 400, r.content
    message = r.json()["message"]
    assert message.startswith("preds.json"), message
    assert re.search(pattern, message), message
    if case not in ("not a list", "broken json", "corrupt gzip", "missing key"):
        assert re.search(r"\[\d+\]|record \d+|index \d+", message), message  # the record's index
    assert Submission.objects.count() == 0
    # Not charged: the only submission allowed (total_limit=1) is still there.
    r = submit(pat, "bad", "ok", {"file": ("ok.json", json_bytes(coco_results(truth, seed=17, quality=0.7)))})
    assert r.status_code == 201, r.content


def _zip_bomb() -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("img-00.png", b"\0" * (300 * 1024 * 1024))
    return buf.getvalue()


@pytest.fixture(scope="module")
def zip_bomb() -> bytes:
    return _zip_bomb()


@pytest.mark.parametrize(
    "case",
    ["wrong size", "value outside the classes", "missing mask", "unknown image", "corrupt archive",
     "not a png", "zip bomb", "two channels"],
)  # fmt: skip
def test_a_bad_segmentation_archive_is_a_400_naming_file_and_image_and_is_not_charged(
    transactional_db, case: str, request: pytest.FixtureRequest
) -> None:
    org = client_for(user("org"))
    make_challenge(org, "badseg", total_limit=1)
    truth = label_maps(6, seed=18)
    assert add_segmentation_task(org, "badseg", zip_of(truth)).status_code == 201
    pred = noisy(truth, seed=19, error=0.2)
    first = "img-01"
    if case == "wrong size":
        data, pattern = (
            zip_of({**pred, first: np.zeros((5, 5), dtype=np.uint8)}),
            rf"{first}.png: mask is 5x5 \(width x height\), the image is 16x12",
        )
    elif case == "value outside the classes":
        bad = pred[first].copy()
        bad[0, 0] = 9
        data, pattern = zip_of({**pred, first: bad}), rf"{first}.png: value 9 is outside the classes 0..3"
    elif case == "missing mask":
        data, pattern = (
            zip_of({k: v for k, v in pred.items() if k != first}),
            rf"no mask for image '{first}'",
        )
    elif case == "unknown image":
        data, pattern = zip_of({**pred, "img-99": pred[first]}), r"img-99"
    elif case == "corrupt archive":
        data, pattern = zip_of(pred)[:300], r"corrupt|archive|zip"
    elif case == "not a png":
        others = {k: v for k, v in pred.items() if k != first}
        data, pattern = zip_of(others, extra={f"{first}.png": b"not an image"}), rf"{first}.png: not a PNG"
    elif case == "zip bomb":
        data, pattern = request.getfixturevalue("zip_bomb"), r"limit|ratio|large|bomb"
    else:
        import io

        from PIL import Image

        buf = io.BytesIO()
        Image.fromarray(np.zeros((*truth[first].shape, 3), dtype=np.uint8)).save(buf, format="PNG")
        data, pattern = (
            zip_of({k: v for k, v in pred.items() if k != first}, extra={f"{first}.png": buf.getvalue()}),
            rf"{first}.png: a label map must be single-channel",
        )
    pat = client_for(user("pat"))
    r = submit(pat, "badseg", "x", {"file": ("masks.zip", data)})
    assert r.status_code == 400, r.content
    message = r.json()["message"]
    assert message.startswith("masks.zip"), message
    assert re.search(pattern, message, re.IGNORECASE), message
    assert Submission.objects.count() == 0
    r = submit(pat, "badseg", "ok", {"file": ("ok.zip", zip_of(pred))})
    assert r.status_code == 201, r.content


def test_a_bad_annotation_file_is_a_400_and_creates_no_task(transactional_db) -> None:
    org = client_for(user("org"))
    make_challenge(org, "badtruth")
    truth = coco_truth(6, seed=20)
    truth["annotations"][1]["id"] = 0  # pycocotools can never match id 0
    r = add_detection_task(org, "badtruth", truth)
    assert r.status_code == 400, r.content
    assert r.json()["message"].startswith("instances.json"), r.json()
    assert Task.objects.count() == 0 and TaskTruth.objects.count() == 0


# --- the size limit, one rule per kind ------------------------------------------------------------------------
def test_a_vision_file_above_the_tabular_limit_is_accepted_up_to_the_vision_limit(
    transactional_db, settings
) -> None:  # type: ignore[no-untyped-def]
    org = client_for(user("org"))
    make_challenge(org, "big")
    truth = coco_truth(10, seed=21)
    assert add_detection_task(org, "big", truth).status_code == 201
    data = json_bytes(coco_results(truth, seed=22, quality=0.8))
    settings.UPLOAD_MAX_BYTES = len(data) // 2  # CSV tasks would refuse it
    settings.VISION_UPLOAD_MAX_BYTES = len(data) + 10
    r = submit(client_for(user("pat")), "big", "ok", {"file": ("ok.json", data)})
    assert r.status_code == 201, r.content
    settings.VISION_UPLOAD_MAX_BYTES = len(data) - 1
    r = submit(client_for(user("pat2")), "big", "over", {"file": ("over.json", data)})
    assert r.status_code == 400, r.content
    assert r.json()["message"] == f"over.json: the file is larger than the limit of {len(data) - 1:,} bytes."
    assert Submission.objects.count() == 1


# --- the web forms -------------------------------------------------------------------------------------------
def test_the_organizer_form_and_the_participant_form_take_vision_files(transactional_db) -> None:
    organizer, participant = user("org"), user("pat")
    make_challenge(client_for(organizer), "web")
    web_org, web_pat = Client(), Client()
    web_org.force_login(organizer)
    web_pat.force_login(participant)
    assert "reduce_zero_label" in web_org.get("/c/web/tasks/new/").content.decode()
    truth = coco_truth(10, seed=23)
    r = web_org.post("/c/web/tasks/new/", {
        "title": "Boxes", "slug": "boxes", "metric": "coco_ap50", "ignore_index": "255",
        "truth": SimpleUploadedFile("instances.json", json_bytes(truth)),
    })  # fmt: skip
    assert r.status_code == 302, r.content.decode()[:2000]
    maps = label_maps(5, seed=24)
    r = web_org.post("/c/web/tasks/new/", {
        "title": "Masks", "slug": "masks", "metric": "miou", "labels": ",".join(CLASS_NAMES),
        "ignore_index": "255", "truth": SimpleUploadedFile("labels.tar.gz", tar_of(maps)),
    })  # fmt: skip
    assert r.status_code == 302, r.content.decode()[:2000]
    assert Task.objects.get(slug="masks").kind == "segmentation"

    page = web_pat.get("/c/web/submit/").content.decode()
    assert ".json" in page and ".zip" in page
    # The example files are valid files of each kind, built from public facts only.
    for slug, suffix in (("boxes", ".json"), ("masks", ".zip")):
        example = web_pat.get(f"/c/web/t/{slug}/example.csv")
        assert example.status_code == 200 and suffix in example["Content-Disposition"]
        r = web_pat.post("/c/web/submit/", {"name": f"example {slug}",
                                            f"file_{slug}": SimpleUploadedFile(f"e{suffix}", example.content)})  # fmt: skip
        assert r.status_code == 302, r.content.decode()[:2000]
    Submission.objects.all().delete()
    # A bad file: the page names the file and the record, nothing is stored.
    records = coco_results(truth, seed=25, quality=0.8)
    records[4] = {**records[4], "category_id": 4242}
    r = web_pat.post(
        "/c/web/submit/", {"name": "bad", "file_boxes": SimpleUploadedFile("p.json", json_bytes(records))}
    )
    assert r.status_code == 400
    assert "p.json" in r.content.decode() and "4242" in r.content.decode()
    assert Submission.objects.count() == 0
    r = web_pat.post("/c/web/submit/", {
        "name": "good",
        "file_boxes": SimpleUploadedFile("p.json", json_bytes(coco_results(truth, seed=26, quality=0.8))),
        "file_masks": SimpleUploadedFile("m.zip", zip_of(noisy(maps, seed=27, error=0.2))),
    })  # fmt: skip
    assert r.status_code == 302, r.content.decode()[:2000]
    assert Submission.objects.get().status == Status.SCORED
    assert {s.task.slug for s in Score.objects.all()} == {"boxes", "masks"}


# --- a real worker process (PostgreSQL, Redis, Celery) ------------------------------------------------------
@pytest.mark.services
@pytest.mark.timeout(300)
def test_a_real_worker_scores_detection_and_segmentation_entries_into_the_boards(
    transactional_db, worker_factory
) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import wait_for

    worker = worker_factory()
    org = client_for(user("org"))
    make_challenge(org, "real")
    truth = coco_truth(12, seed=40)
    maps = label_maps(8, seed=41)
    assert add_detection_task(org, "real", truth, metric="coco_ap50").status_code == 201
    assert add_segmentation_task(org, "real", zip_of(maps), metric="miou").status_code == 201
    records = {}
    for k, (name, quality) in enumerate((("a", 0.9), ("b", 0.6))):
        records[name] = coco_results(truth, seed=42 + k, quality=quality)
        r = submit(client_for(user(name)), "real", name, {
            "file:det": ("d.json.gz", json_bytes(records[name], gz=True)),
            "file:seg": ("s.zip", zip_of(noisy(maps, seed=44 + k, error=1 - quality))),
        })  # fmt: skip
        assert r.status_code == 201, r.content
    wait_for(
        lambda: Submission.objects.filter(status=Status.SCORED).count() == 2, timeout=180, what="scoring"
    )

    def boards_full() -> bool:
        snaps = [
            BoardSnapshot.objects.filter(task__slug=t).order_by("-sequence").first() for t in ("det", "seg")
        ]
        return all(snap is not None and len(snap.rows) == 2 for snap in snaps)

    wait_for(boards_full, timeout=120, what="both boards")
    rows = {r["name"]: r for r in board_of("real", "det").rows}
    for name, recs in records.items():
        assert rows[name]["value"] == pytest.approx(coco_stats(truth, recs)[1], abs=1e-12)
    assert "score_submission" in worker.log_text()


def test_voc_style_truth_is_converted_and_scored_with_its_conventions_recorded(transactional_db) -> None:
    org = client_for(user("org"))
    make_challenge(org, "voc")
    rows = ["image,category,xmin,ymin,xmax,ymax,difficult"]
    rng = np.random.default_rng(60)
    for k in range(8):
        for _ in range(2):
            x, y = int(rng.integers(1, 100)), int(rng.integers(1, 100))
            rows.append(
                f"scene{k},{'car' if rng.random() < 0.5 else 'person'},{x},{y},{x + 40},{y + 30},{int(rng.random() < 0.2)}"
            )
    r = org.post("/api/challenges/voc/tasks/", {
        "slug": "det", "title": "VOC", "metric": "voc07_ap50",
        "truth": SimpleUploadedFile("truth.csv", ("\n".join(rows) + "\n").encode()),
    }, format="multipart")  # fmt: skip
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["vision"]["source"] == "voc" and body["vision"]["conventions"]["format"] == "voc"
    assert body["labels"] == ["car", "person"] and body["n_items"] == 8
    # Detections in the converted ids: VOC box [x, y, x + 40, y + 30] is COCO [x, y, 41, 31].
    dets = []
    for line in rows[1:]:
        image, category, x, y, *_ = line.split(",")
        dets.append({"image_id": int(image[5:]) + 1, "category_id": 1 if category == "car" else 2,
                     "bbox": [float(x), float(y), 41.0, 31.0], "score": 0.9})  # fmt: skip
    r = submit(client_for(user("pat")), "voc", "exact", {"file": ("d.json", json_bytes(dets))})
    assert r.status_code == 201 and r.json()["status"] == Status.SCORED, r.content
    assert board_of("voc", "det").rows[0]["value"] == pytest.approx(1.0)


def test_reduce_zero_label_is_a_task_setting_the_scorer_applies(transactional_db) -> None:
    org = client_for(user("org"))
    make_challenge(org, "ade")
    raw = label_maps(6, seed=61)  # values 0..3 and 255; as ADE20K truth: 0 is "other", classes are 1..3
    names = CLASS_NAMES[1:]  # three classes after the shift
    r = add_segmentation_task(org, "ade", zip_of(raw), reduce_zero_label=True, labels=",".join(names))
    assert r.status_code == 201, r.content
    assert r.json()["vision"]["reduce_zero_label"] is True
    pred = {k: np.clip(noisy(raw, seed=62, error=0.2)[k], 1, 3) - 1 for k in raw}
    r = submit(client_for(user("pat")), "ade", "p", {"file": ("p.zip", zip_of(pred))})
    assert r.status_code == 201 and r.json()["status"] == Status.SCORED, r.content
    shifted = {k: np.where((m == 0) | (m == 255), 255, m.astype(np.int64) - 1) for k, m in raw.items()}
    expected, _ = miou_oracle(shifted, pred, n_classes=3)
    assert board_of("ade", "seg").rows[0]["value"] == pytest.approx(expected, abs=1e-12)


def test_replacing_the_annotations_keeps_the_images_and_a_rescore_applies_them(transactional_db) -> None:
    org = client_for(user("org"))
    make_challenge(org, "fix")
    truth = coco_truth(10, seed=63)
    assert add_detection_task(org, "fix", truth).status_code == 201
    records = coco_results(truth, seed=64, quality=0.8)
    assert (
        submit(client_for(user("pat")), "fix", "p", {"file": ("p.json", json_bytes(records))}).status_code
        == 201
    )
    before = board_of("fix", "det").rows[0]["value"]
    fixed = {**truth, "annotations": [a for i, a in enumerate(truth["annotations"]) if i != 1]}  # one removed
    r = org.put("/api/challenges/fix/tasks/det/truth/",
                {"truth": SimpleUploadedFile("fixed.json", json_bytes(fixed))}, format="multipart")  # fmt: skip
    assert r.status_code == 200, r.content
    other = {**truth, "images": truth["images"][1:], "annotations": [
        a for a in truth["annotations"] if a["image_id"] != truth["images"][0]["id"]]}  # fmt: skip
    r = org.put("/api/challenges/fix/tasks/det/truth/",
                {"truth": SimpleUploadedFile("other.json", json_bytes(other))}, format="multipart")  # fmt: skip
    assert r.status_code == 400 and "same items" in r.json()["message"], r.content
    assert org.post("/api/challenges/fix/tasks/det/rescore/").status_code == 202
    after = board_of("fix", "det").rows[0]["value"]
    assert after == pytest.approx(coco_stats(fixed, records)[0], abs=1e-12) and after != before


@pytest.mark.parametrize("case", ["zip bomb", "mask of the wrong size", "unknown category"])
def test_a_bad_vision_file_in_the_web_form_is_shown_with_its_file_and_record_and_not_charged(
    transactional_db, case: str, request: pytest.FixtureRequest
) -> None:
    organizer, participant = user("org"), user("pat")
    make_challenge(client_for(organizer), "webbad", total_limit=1)
    truth, maps = coco_truth(8, seed=70), label_maps(5, seed=71)
    org = client_for(organizer)
    assert add_detection_task(org, "webbad", truth).status_code == 201
    assert add_segmentation_task(org, "webbad", zip_of(maps)).status_code == 201
    web = Client()
    web.force_login(participant)
    if case == "zip bomb":
        field, fname, data, expected = "file_seg", "m.zip", request.getfixturevalue("zip_bomb"), "a zip bomb?"
    elif case == "mask of the wrong size":
        bad = {**noisy(maps, seed=75, error=0.1), "img-02": np.zeros((3, 3), dtype=np.uint8)}
        field, fname, data, expected = "file_seg", "m.zip", zip_of(bad), "img-02.png: mask is 3x3"
    else:
        records = coco_results(truth, seed=72, quality=0.8)
        records[2] = {**records[2], "category_id": 77}
        field, fname, data, expected = "file_det", "d.json", json_bytes(records), "record 2"
    r = web.post("/c/webbad/submit/", {"name": "bad", field: SimpleUploadedFile(fname, data)})
    assert r.status_code == 400
    import html as html_lib

    text = html_lib.unescape(r.content.decode())
    assert fname in text and expected in text, text[:3000]
    assert Submission.objects.count() == 0
    good = zip_of(noisy(maps, seed=74, error=0.1))
    r = web.post("/c/webbad/submit/", {"name": "good", "file_seg": SimpleUploadedFile("g.zip", good)})
    assert r.status_code == 302  # the one allowed submission was not used up


def test_the_organizer_form_refuses_a_segmentation_task_without_class_names(transactional_db) -> None:
    organizer = user("org")
    make_challenge(client_for(organizer), "noclass")
    web = Client()
    web.force_login(organizer)
    r = web.post("/c/noclass/tasks/new/", {
        "title": "Masks", "slug": "masks", "metric": "miou", "ignore_index": "255",
        "truth": SimpleUploadedFile("labels.zip", zip_of(label_maps(3, seed=73))),
    })  # fmt: skip
    assert r.status_code == 400
    assert "needs its class names" in r.content.decode()
    assert Task.objects.count() == 0
