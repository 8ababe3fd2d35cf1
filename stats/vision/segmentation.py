"""Semantic segmentation: mIoU, pixel accuracy and mean class accuracy from per-image statistics.

Per image, the sufficient statistics are ``3C + 1`` float64 columns: the intersection (pixels predicted
as class c where the truth is c), the predicted pixels and the true pixels of every class, then the
image count 1.0. Every metric is a function of their sums, so a bootstrap replicate is ``finalize(W @ S)``
exactly (float64: pixel counts times N exceed 2**24). The layout is the one of
:func:`stats.metrics._class_stats`, so the registry's ``miou``, ``pixel_accuracy`` and
``mean_class_accuracy`` go through :func:`stats.engine.score_item_statistics` unchanged.

The formulas are mmsegmentation's (``intersect_and_union`` / ``total_area_to_metrics``):

- pixels whose truth is ``ignore_index`` (default 255) are dropped;
- ``reduce_zero_label`` (ADE20K) maps truth 0 to ``ignore_index`` and shifts the other labels by -1;
- a prediction outside ``[0, C-1]`` counts only against the true class (its pixel is in no class's
  predicted area, as ``torch.histc`` drops it), when the reader lets it through (``allow_out_of_range``);
- IoU of class c = I / (P + L - I); mIoU is the mean over classes with ``P + L > 0`` (a class predicted
  but absent from the truth counts with IoU 0; a class absent from both is left out);
- aAcc (``pixel_accuracy``) = sum(I) / sum(L); mean class accuracy = mean over classes with ``L > 0`` of
  I / L.

Cityscapes' confusion-matrix recipe (rows: non-ignored true labels) gives the same IoU.

Masks are read from an archive (zip or tar, optionally gzipped) of single-channel PNG label maps, one per
image id (the member's file name without ``.png``), with limits on the archive size, the number of
members, the total uncompressed size and the decompression ratio; every error names the member.

Undefined values: a resample whose images hold no labelled pixel at all leaves every metric undefined;
:func:`segmentation_strata` gives strata under which no resample does (each keeps the number of images
with labelled pixels).
"""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from stats.checks import check_count
from stats.io import InputError
from stats.metrics import (
    _mean_class_accuracy_finalize,
    _miou_finalize,
    _pixel_accuracy_finalize,
    per_class_iou,
)

__all__ = [
    "DEFAULT_MAX_ARCHIVE_BYTES",
    "MaskArchive",
    "SegmentationLimits",
    "image_statistics",
    "mean_class_accuracy",
    "miou",
    "per_class_iou",
    "pixel_accuracy",
    "read_mask_archive",
    "segmentation_statistics",
    "segmentation_strata",
    "validate_truth_archive",
]

FloatArray = NDArray[np.float64]
DEFAULT_MAX_ARCHIVE_BYTES = 1024 * 1024 * 1024


@dataclass(frozen=True)
class SegmentationLimits:
    """Bounds on a mask archive (a zip bomb is refused with a clear error before it is expanded).

    Attributes
    ----------
    max_bytes : int
        Size of the archive file itself.
    max_members : int
        Number of members (files) in it.
    max_total_uncompressed : int
        Sum of the members' uncompressed sizes.
    max_ratio : float
        Largest uncompressed / compressed size ratio, per zip member and for the whole archive. PNG
        label maps already hold compressed data; a ratio of 100 is generous.
    max_pixels : int
        Pixels of one mask (width x height), checked before the PNG is decoded.
    """

    max_bytes: int = DEFAULT_MAX_ARCHIVE_BYTES
    max_members: int = 100_000
    max_total_uncompressed: int = 4 * 1024 * 1024 * 1024
    max_ratio: float = 100.0
    max_pixels: int = 64 * 1024 * 1024


def miou(pooled: ArrayLike) -> FloatArray:
    """Mean IoU over classes present in the truth or the prediction (mmsegmentation's nanmean)."""
    return _miou_finalize(np.asarray(pooled, dtype=np.float64))


def pixel_accuracy(pooled: ArrayLike) -> FloatArray:
    """aAcc: correctly labelled pixels over labelled (non-ignored) pixels."""
    return _pixel_accuracy_finalize(np.asarray(pooled, dtype=np.float64))


def mean_class_accuracy(pooled: ArrayLike) -> FloatArray:
    """mAcc: mean over classes present in the truth of the class's pixel recall I / L."""
    return _mean_class_accuracy_finalize(np.asarray(pooled, dtype=np.float64))


def _reduce_zero(label: NDArray[Any], ignore_index: int) -> NDArray[np.int64]:
    out = label.astype(np.int64)
    out[out == 0] = 255
    out = out - 1
    out[out == 254] = 255
    if ignore_index != 255:
        out[out == 255] = ignore_index
    return out


def image_statistics(
    truth: ArrayLike,
    prediction: ArrayLike,
    *,
    num_classes: int,
    ignore_index: int = 255,
    reduce_zero_label: bool = False,
) -> FloatArray:
    """The ``3C + 1`` sufficient statistics of one image (intersection, predicted, true per class; 1.0).

    Parameters
    ----------
    truth, prediction : array_like of int, shape (H, W)
        Label maps of one image.
    num_classes : int
        ``C``.
    ignore_index : int, default 255
        Truth value of pixels left out.
    reduce_zero_label : bool, default False
        ADE20K's convention: truth 0 becomes ``ignore_index`` and every other label decreases by one.

    Raises
    ------
    ValueError
        If the shapes differ, or a truth value (after the reduction) is neither a class nor the ignore
        index.
    """
    label = np.asarray(truth)
    pred = np.asarray(prediction)
    if label.shape != pred.shape or label.ndim != 2:
        raise ValueError(f"prediction of shape {pred.shape} does not match the truth's {label.shape}.")
    lab = _reduce_zero(label, ignore_index) if reduce_zero_label else label.astype(np.int64)
    keep = lab != ignore_index
    lab_k = lab[keep]
    if lab_k.size and (lab_k.min() < 0 or lab_k.max() >= num_classes):
        bad = int(lab_k[(lab_k < 0) | (lab_k >= num_classes)][0])
        raise ValueError(
            f"truth value {bad} is neither a class in [0, {num_classes - 1}] nor the ignore index."
        )
    pred_k = pred[keep].astype(np.int64)
    in_range = (pred_k >= 0) & (pred_k < num_classes)
    c = num_classes
    out = np.empty(3 * c + 1)
    out[:c] = np.bincount(lab_k[pred_k == lab_k], minlength=c)[:c]
    out[c : 2 * c] = np.bincount(pred_k[in_range], minlength=c)[:c]
    out[2 * c : 3 * c] = np.bincount(lab_k, minlength=c)[:c]
    out[-1] = 1.0
    return out


# ----------------------------------------------------------------------------------------------------
# archives of PNG label maps


@dataclass(frozen=True, eq=False)
class MaskArchive:
    """The PNG members of a mask archive, still compressed, keyed by image id; decoded one at a time.

    Attributes
    ----------
    name : str
        Display name of the archive.
    members : dict of str -> (member name, PNG bytes)
    """

    name: str
    members: dict[str, tuple[str, bytes]] = field(repr=False)
    limits: SegmentationLimits = SegmentationLimits()

    @property
    def image_ids(self) -> list[str]:
        """Image ids in sorted order (a segmentation task's image order)."""
        return sorted(self.members)

    def decode(self, image_id: str) -> NDArray[Any]:
        """The label map of ``image_id`` (2-D integer array); raises :class:`InputError` naming the member."""
        try:
            member, data = self.members[image_id]
        except KeyError:
            raise InputError(
                f"no mask for image {image_id!r} (expected a member {image_id}.png)", file=self.name
            ) from None
        return _decode_png(data, member, self.name, self.limits.max_pixels)


def _decode_png(data: bytes, member: str, disp: str, max_pixels: int) -> NDArray[Any]:
    from PIL import Image, UnidentifiedImageError

    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        raise InputError(f"member {member}: not a PNG file", file=disp)
    try:
        with Image.open(io.BytesIO(data), formats=["PNG"]) as img:
            width, height = img.size
            if width * height > max_pixels:
                raise InputError(
                    f"member {member}: {width}x{height} pixels, more than {max_pixels:,}", file=disp
                )
            if img.mode not in ("L", "P", "I", "I;16", "I;16B", "1"):
                raise InputError(
                    f"member {member}: a label map must be single-channel (PNG mode L, P or I;16), got {img.mode}",
                    file=disp,
                )
            arr = np.asarray(img)
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise InputError(f"member {member}: corrupt PNG ({exc})", file=disp) from None
    if arr.ndim != 2:
        raise InputError(f"member {member}: a label map must be single-channel", file=disp)
    return arr


def _image_id(member: str) -> str | None:
    base = member.rsplit("/", 1)[-1]
    if not base or base.startswith(".") or "__MACOSX" in member:
        return None
    if not base.lower().endswith(".png"):
        return ""
    return base[:-4]


def read_mask_archive(
    source: str | os.PathLike[str] | bytes | IO[bytes],
    *,
    name: str | None = None,
    limits: SegmentationLimits | None = None,
) -> MaskArchive:
    """Read a zip or tar(.gz) archive of PNG label maps, keeping each member's compressed bytes.

    Members are ``<image id>.png`` (directories in the path are ignored; hidden files and ``__MACOSX``
    are skipped). Nothing is decoded yet: :meth:`MaskArchive.decode` decodes one mask at a time.

    Raises
    ------
    InputError
        Naming the archive and the member: not a zip or tar, a corrupt archive, over a limit (size,
        members, uncompressed total, decompression ratio), a member that is not ``.png``, two members for
        one image id, a link or device member.
    """
    lim = limits or SegmentationLimits()
    disp = name or (
        os.fspath(source) if isinstance(source, str | os.PathLike) else getattr(source, "name", "<archive>")
    )
    if isinstance(source, bytes):
        data = source
    elif isinstance(source, str | os.PathLike):
        try:
            size = os.stat(source).st_size
        except OSError as exc:
            raise InputError(f"cannot read the archive: {exc.strerror}", file=disp) from None
        if size > lim.max_bytes:
            raise InputError(
                f"the archive is {size:,} bytes, more than the limit of {lim.max_bytes:,}", file=disp
            )
        with open(source, "rb") as fh:
            data = fh.read()
    else:
        data = source.read(lim.max_bytes + 1)
    if len(data) > lim.max_bytes:
        raise InputError(f"the archive is more than the limit of {lim.max_bytes:,} bytes", file=disp)
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        members = _read_zip(data, disp, lim)
    else:
        members = _read_tar(data, disp, lim)
    if not members:
        raise InputError("the archive holds no PNG mask", file=disp)
    return MaskArchive(name=disp, members=members, limits=lim)


def _add_member(members: dict[str, tuple[str, bytes]], member: str, payload: bytes, disp: str) -> None:
    image_id = _image_id(member)
    if image_id is None:
        return
    if image_id == "":
        raise InputError(f"member {member}: not a .png label map", file=disp)
    if image_id in members:
        raise InputError(
            f"member {member}: a second mask for image {image_id!r} (first: {members[image_id][0]})",
            file=disp,
        )
    members[image_id] = (member, payload)


def _read_zip(data: bytes, disp: str, lim: SegmentationLimits) -> dict[str, tuple[str, bytes]]:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise InputError(f"corrupt zip archive ({exc})", file=disp) from None
    infos = [i for i in zf.infolist() if not i.is_dir()]
    if len(infos) > lim.max_members:
        raise InputError(
            f"the archive holds {len(infos):,} members, more than {lim.max_members:,}", file=disp
        )
    total = sum(i.file_size for i in infos)
    if total > lim.max_total_uncompressed:
        raise InputError(
            f"the archive expands to {total:,} bytes, more than {lim.max_total_uncompressed:,}", file=disp
        )
    if total > lim.max_ratio * max(len(data), 1):
        raise InputError(
            f"the archive expands {total / max(len(data), 1):.0f}-fold, more than the limit of {lim.max_ratio:g} "
            "(a zip bomb?)",
            file=disp,
        )
    members: dict[str, tuple[str, bytes]] = {}
    for info in infos:
        if info.file_size > lim.max_ratio * max(info.compress_size, 1) and info.file_size > 1024 * 1024:
            raise InputError(
                f"member {info.filename}: expands {info.file_size / max(info.compress_size, 1):.0f}-fold, more "
                f"than the limit of {lim.max_ratio:g} (a zip bomb?)",
                file=disp,
            )
        try:
            payload = zf.read(info)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
            raise InputError(f"member {info.filename}: corrupt ({exc})", file=disp) from None
        if len(payload) != info.file_size:
            raise InputError(f"member {info.filename}: size differs from the archive's directory", file=disp)
        _add_member(members, info.filename, payload, disp)
    return members


def _read_tar(data: bytes, disp: str, lim: SegmentationLimits) -> dict[str, tuple[str, bytes]]:
    members: dict[str, tuple[str, bytes]] = {}
    count = 0
    total = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tf:
            for info in tf:
                if info.isdir():
                    continue
                count += 1
                if count > lim.max_members:
                    raise InputError(f"the archive holds more than {lim.max_members:,} members", file=disp)
                if not info.isreg():
                    raise InputError(f"member {info.name}: links and devices are not accepted", file=disp)
                total += info.size
                if total > lim.max_total_uncompressed or total > lim.max_ratio * max(len(data), 1):
                    raise InputError(
                        f"member {info.name}: the archive expands beyond its limits ({lim.max_total_uncompressed:,} "
                        f"bytes, {lim.max_ratio:g}-fold; a decompression bomb?)",
                        file=disp,
                    )
                fh = tf.extractfile(info)
                if fh is None:
                    raise InputError(f"member {info.name}: unreadable", file=disp)
                payload = fh.read()
                if len(payload) != info.size:
                    raise InputError(f"member {info.name}: truncated", file=disp)
                _add_member(members, info.name, payload, disp)
    except tarfile.TarError as exc:
        raise InputError(f"not a readable zip or tar archive ({exc})", file=disp) from None
    except (OSError, EOFError) as exc:
        raise InputError(f"corrupt archive ({exc})", file=disp) from None
    return members


def iter_mask_pairs(
    truth: MaskArchive, prediction: MaskArchive, image_ids: Sequence[str]
) -> Iterator[tuple[str, NDArray[Any], NDArray[Any]]]:
    """Yield ``(image_id, truth_mask, predicted_mask)`` in task order, one pair in memory at a time."""
    for image_id in image_ids:
        yield image_id, truth.decode(image_id), prediction.decode(image_id)


def segmentation_statistics(
    truth: MaskArchive,
    prediction: MaskArchive,
    *,
    num_classes: int,
    image_ids: Sequence[str] | None = None,
    ignore_index: int = 255,
    reduce_zero_label: bool = False,
    allow_out_of_range: bool = False,
) -> FloatArray:
    """Per-image statistics ``S`` of shape (N, 3C+1) of one entry, masks decoded one pair at a time.

    Parameters
    ----------
    truth, prediction : MaskArchive
        From :func:`read_mask_archive` (the organizer's and the participant's).
    num_classes : int
    image_ids : sequence of str, optional
        The task's image order (default: the truth's sorted ids).
    ignore_index, reduce_zero_label
        As in :func:`image_statistics`.
    allow_out_of_range : bool, default False
        Accept predicted values outside ``[0, C-1]`` (counted as mmsegmentation counts them: a miss).
        By default such a value is an error naming the member.

    Raises
    ------
    InputError
        Naming the prediction archive and member: a missing mask, a mask for an image outside the task,
        the wrong size, a value outside the classes; truth errors name the truth archive.
    """
    ids = list(image_ids) if image_ids is not None else truth.image_ids
    extra = sorted(set(prediction.members) - set(ids))
    if extra:
        member = prediction.members[extra[0]][0]
        raise InputError(f"member {member}: image {extra[0]!r} is not in the task", file=prediction.name)
    for image_id in ids:
        if image_id not in prediction.members:
            raise InputError(
                f"no mask for image {image_id!r} (expected a member {image_id}.png)", file=prediction.name
            )
    out = np.empty((len(ids), 3 * num_classes + 1))
    for r, (image_id, t_mask, p_mask) in enumerate(iter_mask_pairs(truth, prediction, ids)):
        member = prediction.members[image_id][0]
        if t_mask.shape != p_mask.shape:
            raise InputError(
                f"member {member}: mask is {p_mask.shape[1]}x{p_mask.shape[0]} (width x height), the image is "
                f"{t_mask.shape[1]}x{t_mask.shape[0]}",
                file=prediction.name,
            )
        if not allow_out_of_range and p_mask.size:
            top = int(p_mask.max())
            if top >= num_classes:
                raise InputError(
                    f"member {member}: value {top} is outside the classes 0..{num_classes - 1}",
                    file=prediction.name,
                )
        try:
            out[r] = image_statistics(
                t_mask,
                p_mask,
                num_classes=num_classes,
                ignore_index=ignore_index,
                reduce_zero_label=reduce_zero_label,
            )
        except ValueError:
            # scoring a participant's file: never quote the hidden label (validate_truth_archive does,
            # for the organizer, when the task is created)
            raise InputError(
                f"the task's truth mask of image {image_id!r} is invalid; check the truth archive",
                file=truth.name,
            ) from None
    return out


def validate_truth_archive(
    truth: MaskArchive, *, num_classes: int, ignore_index: int = 255, reduce_zero_label: bool = False
) -> list[str]:
    """Check every truth mask once (for the organizer, when the task is created); returns the image ids.

    Raises
    ------
    InputError
        Naming the truth archive and member: a corrupt PNG, or a value (after ``reduce_zero_label``)
        that is neither a class in ``[0, C-1]`` nor ``ignore_index`` (the value is quoted: this message
        is for the organizer only).
    """
    check_count(num_classes, name="num_classes", minimum=1)
    for image_id in truth.image_ids:
        mask = truth.decode(image_id)
        try:
            image_statistics(
                mask,
                mask,
                num_classes=num_classes,
                ignore_index=ignore_index,
                reduce_zero_label=reduce_zero_label,
            )
        except ValueError as exc:
            raise InputError(f"member {truth.members[image_id][0]}: {exc}", file=truth.name) from None
    return truth.image_ids


def segmentation_strata(statistics: ArrayLike) -> NDArray[np.int64]:
    """Stratum per image: 1 if it holds a labelled (non-ignored) pixel, else 0 (from any entry's ``S``)."""
    s = np.asarray(statistics, dtype=np.float64)
    c = (s.shape[1] - 1) // 3
    return (s[:, 2 * c : 3 * c].sum(axis=1) > 0).astype(np.int64)
