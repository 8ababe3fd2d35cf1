"""Segmentation metrics (issue 12) against numpy ports of mmsegmentation's and Cityscapes' recipes, and
the bounded mask-archive reader."""

from __future__ import annotations

import io
import tarfile
import zipfile

import numpy as np
import pytest
from PIL import Image

from stats.engine import concatenate_chunks, score_item_statistics
from stats.io import InputError
from stats.metrics import get_metric, per_class_iou
from stats.resampling import resample_weights
from stats.vision.segmentation import (
    SegmentationLimits,
    image_statistics,
    mean_class_accuracy,
    miou,
    pixel_accuracy,
    read_mask_archive,
    segmentation_statistics,
    segmentation_strata,
)
from tests.stats.vision_oracles import cityscapes_iou, mmseg_metrics, mmseg_total_area

C = 6


def random_masks(rng, n=12, shape=(17, 23), out_of_range=True):
    labels, preds = [], []
    for _ in range(n):
        lab = rng.integers(0, C - 1, shape)  # class C-1 never in the truth: predicted but absent
        lab[rng.random(shape) < 0.15] = 255
        pred = np.where(rng.random(shape) < 0.6, lab, rng.integers(0, C, shape))
        pred[lab == 255] = rng.integers(0, C, int((lab == 255).sum()))
        if out_of_range:
            pred[rng.random(shape) < 0.05] = 200  # outside the classes: counts only against the truth
        labels.append(lab)
        preds.append(pred)
    return labels, preds


def stats_of(labels, preds, **kw):
    return np.stack([image_statistics(t, p, num_classes=C, **kw) for t, p in zip(labels, preds, strict=True)])


def test_metrics_equal_mmsegmentation_and_cityscapes() -> None:
    rng = np.random.default_rng(0)
    labels, preds = random_masks(rng)
    s = stats_of(labels, preds)
    ref = mmseg_metrics(*mmseg_total_area(preds, labels, C, 255, False))
    pooled = s.sum(axis=0)
    assert miou(pooled) == pytest.approx(ref["mIoU"], abs=1e-12)
    assert pixel_accuracy(pooled) == pytest.approx(ref["aAcc"], abs=1e-12)
    assert mean_class_accuracy(pooled) == pytest.approx(ref["mAcc"], abs=1e-12)
    np.testing.assert_allclose(per_class_iou(pooled), ref["IoU"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        per_class_iou(pooled), cityscapes_iou(preds, labels, C, 255), rtol=0, atol=1e-12
    )
    # the class predicted but absent from the truth counts with IoU 0 in the mean
    assert per_class_iou(pooled)[C - 1] == 0.0
    assert get_metric("miou").point is not None and get_metric("miou").task_kind == "segmentation"


def test_class_absent_from_truth_and_prediction_is_left_out() -> None:
    lab = np.array([[0, 0], [1, 255]])
    pred = np.array([[0, 1], [1, 0]])
    s = image_statistics(lab, pred, num_classes=4)
    iou = per_class_iou(s)
    assert np.isnan(iou[2]) and np.isnan(iou[3])
    assert miou(s) == pytest.approx((1 / 2 + 1 / 2) / 2)


def test_reduce_zero_label_as_ade20k() -> None:
    rng = np.random.default_rng(1)
    labels = [rng.integers(0, C + 1, (9, 11)) for _ in range(5)]  # raw ADE labels 0..C, 0 = "other"
    preds = [rng.integers(0, C, (9, 11)) for _ in range(5)]
    s = stats_of(labels, preds, reduce_zero_label=True)
    ref = mmseg_metrics(*mmseg_total_area(preds, labels, C, 255, True))
    assert miou(s.sum(axis=0)) == pytest.approx(ref["mIoU"], abs=1e-12)
    assert pixel_accuracy(s.sum(axis=0)) == pytest.approx(ref["aAcc"], abs=1e-12)


def test_replicates_equal_the_recipe_on_duplicated_images() -> None:
    rng = np.random.default_rng(2)
    labels, preds = random_masks(rng, n=8)
    s = stats_of(labels, preds)
    w = rng.integers(0, 4, size=(50, 8)).astype(np.uint8)
    w[w.sum(axis=1) == 0, 0] = 1
    scores = score_item_statistics([s], metric="miou", weights=w, jackknife=False)
    for b in range(w.shape[0]):
        dup_l = [labels[i] for i in range(8) for _ in range(w[b, i])]
        dup_p = [preds[i] for i in range(8) for _ in range(w[b, i])]
        ref = mmseg_metrics(*mmseg_total_area(dup_p, dup_l, C, 255, False))
        assert scores[0].replicates[b] == pytest.approx(ref["mIoU"], abs=1e-12)


def test_chunks_and_strata() -> None:
    rng = np.random.default_rng(3)
    labels, preds = random_masks(rng, n=30)
    labels[4][:] = 255  # an image without labelled pixels
    s = stats_of(labels, preds)
    strata = segmentation_strata(s)
    assert strata[4] == 0 and strata.sum() == 29
    full = score_item_statistics([s], metric="miou", resamples=1024, seed=5, strata=strata)[0]
    parts = [
        score_item_statistics([s], metric="miou", resamples=1024, seed=5, strata=strata, chunks=span)[0]
        for span in (range(2), range(2, 4))
    ]
    assert np.array_equal(concatenate_chunks(parts).replicates, full.replicates)
    w = resample_weights(30, resamples=1024, seed=5, strata=strata)
    assert np.allclose(miou(w.astype(float) @ s), full.replicates, rtol=0, atol=1e-15)


# ----------------------------------------------------------------------------------------------------
# archives


def png(arr) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.asarray(arr, dtype=np.uint8)).save(buf, format="PNG")  # 2-D: L, (h, w, 3): RGB
    return buf.getvalue()


def zip_of(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def tar_of(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture
def archives():
    rng = np.random.default_rng(4)
    labels, preds = random_masks(rng, n=4, out_of_range=False)
    ids = [f"img{i}" for i in range(4)]
    truth = zip_of({f"gt/{i}.png": png(lab) for i, lab in zip(ids, labels, strict=True)})
    pred = {f"{i}.png": png(p) for i, p in zip(ids, preds, strict=True)}
    return labels, preds, ids, truth, pred


@pytest.mark.parametrize("pack", [zip_of, tar_of])
def test_archive_statistics_equal_the_arrays(archives, pack) -> None:
    labels, preds, ids, truth, pred = archives
    t = read_mask_archive(truth, name="truth.zip")
    p = read_mask_archive(pack(pred), name="pred")
    assert t.image_ids == ids
    s = segmentation_statistics(t, p, num_classes=C)
    np.testing.assert_array_equal(s, stats_of(labels, preds))


def test_archive_errors_name_the_member(archives) -> None:
    _labels, preds, _ids, truth, pred = archives
    t = read_mask_archive(truth, name="truth.zip")

    def check(members, message, **kw):
        with pytest.raises(InputError, match=message) as info:
            segmentation_statistics(
                t, read_mask_archive(zip_of(members), name="pred.zip"), num_classes=C, **kw
            )
        assert info.value.file == "pred.zip"

    missing = dict(pred)
    del missing["img2.png"]
    check(missing, "no mask for image 'img2'")
    check({**pred, "img9.png": pred["img0.png"]}, "member img9.png: image 'img9' is not in the task")
    check({**pred, "img1.png": png(np.zeros((5, 5)))}, r"member img1.png: mask is 5x5 \(width x height\)")
    bad_value = preds[3].copy()
    bad_value[0, 0] = 17
    check({**pred, "img3.png": png(bad_value)}, "member img3.png: value 17 is outside the classes 0..5")
    rgb = np.zeros((*preds[0].shape, 3), dtype=np.uint8)
    check({**pred, "img0.png": png(rgb)}, "member img0.png: a label map must be single-channel")
    check({**pred, "img0.png": b"\x89PNG\r\n\x1a\nnot really"}, "member img0.png: corrupt PNG")
    with pytest.raises(InputError, match=r"member notes.txt: not a .png label map"):
        read_mask_archive(zip_of({**pred, "notes.txt": b"hi"}), name="pred.zip")
    with pytest.raises(InputError, match="a second mask for image 'img0'"):
        read_mask_archive(zip_of({**pred, "sub/img0.png": pred["img0.png"]}), name="pred.zip")
    # out-of-range predictions are accepted when the task says so, and counted as mmsegmentation does
    s = segmentation_statistics(
        t,
        read_mask_archive(zip_of({**pred, "img3.png": png(bad_value)}), name="p.zip"),
        num_classes=C,
        allow_out_of_range=True,
    )
    assert s.shape == (4, 3 * C + 1)


def test_bad_truth_is_reported_to_the_organizer_only() -> None:
    from stats.vision.segmentation import validate_truth_archive

    lab = np.zeros((4, 4))
    lab[1, 1] = 9  # not a class of a 6-class task, not the ignore index
    truth = read_mask_archive(zip_of({"a.png": png(lab), "b.png": png(np.zeros((4, 4)))}), name="truth.zip")
    with pytest.raises(InputError, match=r"member a\.png: truth value 9 is neither a class"):
        validate_truth_archive(truth, num_classes=C)
    pred = read_mask_archive(
        zip_of({"a.png": png(np.zeros((4, 4))), "b.png": png(np.zeros((4, 4)))}), name="p.zip"
    )
    with pytest.raises(InputError) as info:
        segmentation_statistics(truth, pred, num_classes=C)
    assert "9" not in str(info.value) and "image 'a'" in str(info.value)
    assert validate_truth_archive(read_mask_archive(zip_of({"b.png": png(lab * 0)})), num_classes=C) == ["b"]


def test_archive_limits_and_corruption() -> None:
    bomb = zip_of({"a.png": b"\0" * (20 * 1024 * 1024)})
    assert len(bomb) < 100_000
    with pytest.raises(InputError, match="a zip bomb"):
        read_mask_archive(bomb, name="bomb.zip")
    many = zip_of({f"{i}.png": png(np.zeros((2, 2))) for i in range(30)})
    with pytest.raises(InputError, match="holds 30 members, more than 10"):
        read_mask_archive(many, name="many.zip", limits=SegmentationLimits(max_members=10))
    with pytest.raises(InputError, match="more than the limit of 100 bytes"):
        read_mask_archive(many, name="many.zip", limits=SegmentationLimits(max_bytes=100))
    tar_bomb = tar_of({"a.png": b"\0" * (20 * 1024 * 1024)})
    with pytest.raises(InputError, match="decompression bomb"):
        read_mask_archive(tar_bomb, name="bomb.tar.gz")
    good = zip_of({"a.png": png(np.zeros((4, 4)))})
    with pytest.raises(InputError, match="corrupt"):
        read_mask_archive(good[:-30], name="cut.zip")
    with pytest.raises(InputError, match="not a readable zip or tar archive"):
        read_mask_archive(b"hello, this is not an archive at all", name="x.zip")
