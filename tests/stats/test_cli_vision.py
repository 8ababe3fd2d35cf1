"""``python -m stats score`` and ``leaderboard`` with detection and segmentation tasks."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest
from PIL import Image

from stats.cli import main
from stats.metrics import get_metric
from tests.stats.vision_oracles import pycocotools_stats, random_case


@pytest.fixture
def detection_files(tmp_path):
    rng = np.random.default_rng(0)
    gt, dets = random_case(rng, n_img=25, n_cat=2, decimals=2)
    _, dets_b = random_case(np.random.default_rng(1), n_img=25, n_cat=2, decimals=2)
    truth = tmp_path / "truth.json"
    truth.write_text(json.dumps(gt))
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(dets))
    b.write_text(json.dumps(dets_b))
    return gt, dets, truth, a, b


def test_score_detection(detection_files, capsys) -> None:
    gt, dets, truth, a, _ = detection_files
    code = main(
        [
            "score",
            str(a),
            "--truth",
            str(truth),
            "--metric",
            "coco_ap",
            "--resamples",
            "200",
            "--format",
            "json",
        ]
    )
    assert code == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["value"] == pytest.approx(pycocotools_stats(gt, dets)[0], abs=1e-12)
    low, high = rows[0]["interval"]
    assert low <= high
    # no --interval: the metric's own default, shown in the signature
    assert rows[0]["signature"]["method"] == (get_metric("coco_ap").default_interval or "bca")


def test_leaderboard_detection(detection_files, capsys) -> None:
    _, _, truth, a, b = detection_files
    code = main(
        ["leaderboard", str(a), str(b), "--truth", str(truth), "--metric", "voc_ap50", "--resamples", "200"]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "leader" in out and "bootstrap" in out


def test_bad_detection_file_exits_2_with_its_location(detection_files, tmp_path, capsys) -> None:
    _, dets, truth, _, _ = detection_files
    bad = tmp_path / "bad.json"
    dets = [dict(dets[0]), dict(dets[1], score=float("inf"))]
    bad.write_text(json.dumps(dets, indent=1))
    code = main(["score", str(bad), "--truth", str(truth), "--metric", "coco_ap50", "--resamples", "20"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"{bad}:") and "record 1" in err and "`score` must be a finite number" in err


def _zip(masks: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, arr in masks.items():
            png = io.BytesIO()
            Image.fromarray(arr.astype(np.uint8)).save(png, format="PNG")
            zf.writestr(f"{name}.png", png.getvalue())
    return buf.getvalue()


def test_score_and_leaderboard_segmentation(tmp_path, capsys) -> None:
    rng = np.random.default_rng(2)
    truth = {f"im{i}": rng.integers(0, 4, (12, 15)) for i in range(20)}
    good = {k: np.where(rng.random(v.shape) < 0.8, v, 0) for k, v in truth.items()}
    poor = {k: np.where(rng.random(v.shape) < 0.4, v, 0) for k, v in truth.items()}
    (tmp_path / "truth.zip").write_bytes(_zip(truth))
    (tmp_path / "good.zip").write_bytes(_zip(good))
    (tmp_path / "poor.zip").write_bytes(_zip(poor))
    base = [
        "--truth",
        str(tmp_path / "truth.zip"),
        "--metric",
        "miou",
        "--num-classes",
        "4",
        "--resamples",
        "300",
    ]
    assert main(["score", str(tmp_path / "good.zip"), *base, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert 0 < rows[0]["value"] < 1
    assert main(["leaderboard", str(tmp_path / "good.zip"), str(tmp_path / "poor.zip"), *base]) == 0
    out = capsys.readouterr().out
    assert "randomization" in out  # per-image statistics: the paired randomization test applies
    assert main(["score", str(tmp_path / "good.zip"), *base[:4], "--resamples", "10"]) == 2
    assert "needs --num-classes" in capsys.readouterr().err
