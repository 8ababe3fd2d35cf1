"""Reading detection files: COCO annotation JSON (truth), COCO results (predictions), VOC-style truth.

Every problem raises :class:`stats.io.InputError` naming the file and the record (its 0-based index in
the JSON list, or the CSV line) and what is wrong. Prediction files are validated only against public
information (the task's image ids and category ids), so no message can carry a hidden annotation.

Formats
-------
Truth, COCO (organizer): ``{"images": [{"id": int, ...}], "categories": [{"id": int, "name": str}],
"annotations": [{"id": int >= 1, "image_id": int, "category_id": int, "bbox": [x, y, w, h],
"area": float, "iscrowd": 0 or 1}]}``. ``area`` is required (pycocotools reads it for the area ranges;
for box-only annotations it is ``w * h``); ``iscrowd`` defaults to 0; an ``ignore`` field is read and
dropped, because pycocotools overwrites it with ``iscrowd``. Annotation ids must be >= 1 (pycocotools can
never match an annotation with id 0).

Truth, VOC-style (organizer): CSV or Parquet with columns ``image,category,xmin,ymin,xmax,ymax,difficult``
in VOC's pixel-inclusive coordinates (a box from 1 to 10 is 10 pixels wide). A row with an empty
``category`` lists an image without objects. It is converted to the COCO form: images get ids 1..N in
order of first appearance, categories ids 1..C in sorted order of their names, each box becomes
``[xmin, ymin, xmax - xmin + 1, ymax - ymin + 1]`` with ``area = w * h`` and ``iscrowd = 0``, and
``difficult`` is kept beside it. The COCO metrics then see what pycocotools sees on the converted file
(difficult objects count as ordinary ones, since pycocotools overwrites ``ignore`` with ``iscrowd``); the
VOC metrics skip difficult objects as VOC's devkit does.

Predictions (participant): the COCO results format, a JSON list of ``{"image_id", "category_id",
"bbox": [x, y, w, h], "score"}`` (other keys are ignored), plain or gzipped; or the same columns as CSV
or Parquet: ``image_id,category_id,x,y,w,h,score``. Images without any detection are legitimate. The
JSON list is decoded one record at a time into typed columns, so memory is the file's text plus 56 bytes
per detection, not Python objects per detection.
"""

from __future__ import annotations

import array
import gzip
import io
import json
import math
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from stats.io import InputError, Source, _display_name, _read_bytes

__all__ = [
    "DEFAULT_MAX_DETECTION_BYTES",
    "DetectionTruth",
    "Detections",
    "parse_coco_results",
    "parse_coco_truth",
    "parse_voc_truth",
]

#: Largest detection file (after gunzip) read by default: a COCO-val-sized results file is ~50 MB.
DEFAULT_MAX_DETECTION_BYTES = 512 * 1024 * 1024

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class DetectionTruth:
    """The ground truth of a detection task, in the task's fixed image order.

    Attributes
    ----------
    image_ids : ndarray of int64, shape (N,)
        Image ids in ascending order: the task's image order (pycocotools evaluates images in sorted id
        order, and COCO AP depends on it when scores tie across images). Never re-id a task's images.
    category_ids : ndarray of int64, shape (K,)
        Category ids in ascending order (pycocotools' order).
    category_names : tuple of str
        Names, aligned with ``category_ids``.
    ann_ids : ndarray of int64, shape (G,)
        Annotation ids (>= 1), in file order.
    image : ndarray of intp, shape (G,)
        Index of each annotation's image in ``image_ids``.
    category : ndarray of intp, shape (G,)
        Index of each annotation's category in ``category_ids``.
    bbox : ndarray of float64, shape (G, 4)
        ``[x, y, w, h]``.
    area : ndarray of float64, shape (G,)
        The annotation's ``area`` (used for the small / medium / large ranges).
    iscrowd : ndarray of bool, shape (G,)
    difficult : ndarray of bool, shape (G,)
        VOC's flag (all false for COCO truth).
    source : str
        ``"coco"`` or ``"voc"``.
    conventions : dict
        How the file was read (recorded with the task).
    image_names : tuple of str
        VOC: the image names of the file, aligned with ``image_ids`` (the whole map from the names to
        the ids 1..N that results files use); empty for COCO truth, whose ids are its own.
    """

    image_ids: IntArray
    category_ids: IntArray
    category_names: tuple[str, ...]
    ann_ids: IntArray
    image: NDArray[np.intp]
    category: NDArray[np.intp]
    bbox: FloatArray
    area: FloatArray
    iscrowd: NDArray[np.bool_]
    difficult: NDArray[np.bool_]
    source: str = "coco"
    conventions: Mapping[str, str] = field(default_factory=dict)
    image_names: tuple[str, ...] = ()

    @property
    def n_images(self) -> int:
        """Number of images ``N`` (the resampled units)."""
        return int(self.image_ids.shape[0])

    @property
    def n_categories(self) -> int:
        """Number of categories ``K``."""
        return int(self.category_ids.shape[0])

    def to_coco(self) -> dict[str, Any]:
        """The truth as a COCO annotation dict (for pycocotools, or to store a converted VOC file)."""
        return {
            "images": [{"id": int(i)} for i in self.image_ids],
            "categories": [
                {"id": int(c), "name": n} for c, n in zip(self.category_ids, self.category_names, strict=True)
            ],
            "annotations": [
                {
                    "id": int(self.ann_ids[g]),
                    "image_id": int(self.image_ids[self.image[g]]),
                    "category_id": int(self.category_ids[self.category[g]]),
                    "bbox": [float(v) for v in self.bbox[g]],
                    "area": float(self.area[g]),
                    "iscrowd": int(self.iscrowd[g]),
                    **({"difficult": 1} if self.difficult[g] else {}),
                }
                for g in range(self.ann_ids.shape[0])
            ],
        }


@dataclass(frozen=True, eq=False)
class Detections:
    """One entry's detections, in file order (the order matters for ties within an image).

    Attributes
    ----------
    image : ndarray of intp, shape (D,)
        Index of each detection's image in the truth's ``image_ids``.
    category : ndarray of intp, shape (D,)
        Index of each detection's category in the truth's ``category_ids``.
    bbox : ndarray of float64, shape (D, 4)
        ``[x, y, w, h]``, finite, ``w > 0`` and ``h > 0``.
    score : ndarray of float64, shape (D,)
        Finite scores.
    """

    image: NDArray[np.intp]
    category: NDArray[np.intp]
    bbox: FloatArray
    score: FloatArray

    @property
    def n_detections(self) -> int:
        """Number of detections ``D``."""
        return int(self.score.shape[0])


# ----------------------------------------------------------------------------------------------------
# helpers


def _is_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value) and value.is_integer()


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _maybe_gunzip(data: bytes, name: str, max_bytes: int) -> bytes:
    if data[:2] != b"\x1f\x8b":
        return data
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
            out = fh.read(max_bytes + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"the gzip stream is corrupt ({exc})", file=name) from None
    if len(out) > max_bytes:
        raise InputError(f"the file is larger than {max_bytes:,} bytes once decompressed", file=name)
    return out


def _decode_utf8(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"the file is not UTF-8 text (byte {exc.start})", file=name) from None


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


def _json_error(exc: json.JSONDecodeError, name: str) -> InputError:
    return InputError(f"invalid JSON: {exc.msg}", file=name, line=exc.lineno, column=exc.colno)


def _index(ids: IntArray) -> dict[int, int]:
    return {int(v): i for i, v in enumerate(ids)}


# ----------------------------------------------------------------------------------------------------
# truth


def parse_coco_truth(
    source: Source, *, name: str | None = None, max_bytes: int = DEFAULT_MAX_DETECTION_BYTES
) -> DetectionTruth:
    """Read a COCO annotation JSON (boxes) into a :class:`DetectionTruth`.

    Parameters
    ----------
    source : path, bytes or binary file
        The annotation file (plain or gzipped JSON).
    name : str, optional
        Display name for messages (default: the path's name).
    max_bytes : int
        Largest accepted size, before and after gunzip.

    Raises
    ------
    InputError
        Naming the file and the record: a missing section, a duplicate or unknown id, an annotation id
        below 1, a box that is not four finite numbers with positive width and height, a missing or
        non-finite ``area``, an ``iscrowd`` other than 0/1.

    Examples
    --------
    >>> truth = parse_coco_truth(b'{"images": [{"id": 1}, {"id": 2}], "categories": [{"id": 1, "name": "cat"}], '
    ...     b'"annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100}]}',
    ...     name="instances.json")
    >>> truth.image_ids.tolist(), truth.category_names
    ([1, 2], ('cat',))
    """
    disp = _display_name(source, name)
    doc = _coco_document(source, disp, max_bytes)
    image_ids = _coco_image_ids(doc["images"], disp)
    cats = _coco_categories(doc["categories"], disp)
    category_ids = np.array([c for c, _ in cats], dtype=np.int64)
    anns = _coco_annotations(doc["annotations"], _index(image_ids), _index(category_ids), disp)
    return DetectionTruth(
        image_ids=image_ids,
        category_ids=category_ids,
        category_names=tuple(n for _, n in cats),
        ann_ids=anns.ann_ids,
        image=anns.image,
        category=anns.category,
        bbox=anns.bbox,
        area=anns.area,
        iscrowd=anns.iscrowd,
        difficult=np.zeros(anns.ann_ids.size, dtype=bool),
        source="coco",
        conventions={
            "format": "coco",
            "image_order": "ascending image id",
            "ignore": "iscrowd (as pycocotools)",
        },
    )


def _coco_document(source: Source, disp: str, max_bytes: int) -> dict[str, Any]:
    """The annotation file's JSON object, with its three lists checked."""
    data = _maybe_gunzip(_read_bytes(source, disp, max_bytes), disp, max_bytes)
    text = _decode_utf8(data, disp)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _json_error(exc, disp) from None
    if not isinstance(doc, dict):
        raise InputError(
            "the annotation file must be a JSON object with images, categories, annotations", file=disp
        )
    for key in ("images", "categories", "annotations"):
        if not isinstance(doc.get(key), list):
            raise InputError(f"`{key}` must be a list", file=disp)
    return doc


def _coco_image_ids(images: list[Any], disp: str) -> NDArray[np.int64]:
    """The image ids in ascending order (each an integer, at least one, none twice)."""
    image_list = []
    for i, img in enumerate(images):
        if not isinstance(img, dict) or not _is_int(img.get("id")):
            raise InputError(f"images[{i}]: `id` must be an integer", file=disp)
        image_list.append(int(img["id"]))
    if not image_list:
        raise InputError("`images` must list at least one image", file=disp)
    image_ids = np.array(sorted(image_list), dtype=np.int64)
    dup = image_ids[1:][image_ids[1:] == image_ids[:-1]]
    if dup.size:
        raise InputError(f"images: image id {int(dup[0])} appears twice", file=disp)
    return image_ids


def _coco_categories(categories: list[Any], disp: str) -> list[tuple[int, str]]:
    """(id, name) of every category in ascending id order (at least one, no id twice)."""
    cats: list[tuple[int, str]] = []
    for i, cat in enumerate(categories):
        if not isinstance(cat, dict) or not _is_int(cat.get("id")):
            raise InputError(f"categories[{i}]: `id` must be an integer", file=disp)
        cats.append((int(cat["id"]), str(cat.get("name", cat["id"]))))
    if not cats:
        raise InputError("`categories` must list at least one category", file=disp)
    cats.sort()
    category_ids = np.array([c for c, _ in cats], dtype=np.int64)
    if np.any(category_ids[1:] == category_ids[:-1]):
        bad = int(category_ids[1:][category_ids[1:] == category_ids[:-1]][0])
        raise InputError(f"categories: category id {bad} appears twice", file=disp)
    return cats


@dataclass(frozen=True)
class _CocoAnnotations:
    ann_ids: NDArray[np.int64]
    image: NDArray[np.intp]
    category: NDArray[np.intp]
    bbox: NDArray[np.float64]
    area: NDArray[np.float64]
    iscrowd: NDArray[np.bool_]


def _coco_annotations(
    anns: list[Any], img_pos: dict[int, int], cat_pos: dict[int, int], disp: str
) -> _CocoAnnotations:
    """Every annotation checked and converted (positions of its image and category, box, area, crowd)."""
    g = len(anns)
    out = _CocoAnnotations(
        ann_ids=np.empty(g, dtype=np.int64),
        image=np.empty(g, dtype=np.intp),
        category=np.empty(g, dtype=np.intp),
        bbox=np.empty((g, 4)),
        area=np.empty(g),
        iscrowd=np.zeros(g, dtype=bool),
    )
    for i, ann in enumerate(anns):
        _coco_annotation(out, i, ann, img_pos, cat_pos, disp)
    dup_ann = np.unique(out.ann_ids, return_counts=True)
    if np.any(dup_ann[1] > 1):
        raise InputError(
            f"annotations: annotation id {int(dup_ann[0][dup_ann[1] > 1][0])} appears twice", file=disp
        )
    return out


def _coco_annotation(
    out: _CocoAnnotations, i: int, ann: Any, img_pos: dict[int, int], cat_pos: dict[int, int], disp: str
) -> None:
    """Annotation ``i`` checked, into row ``i`` of ``out``."""
    where = f"annotations[{i}]"
    if not isinstance(ann, dict):
        raise InputError(f"{where}: must be an object", file=disp)
    aid: Any = ann.get("id")
    if not _is_int(aid) or int(aid) < 1:
        raise InputError(
            f"{where}: `id` must be an integer >= 1 (pycocotools never matches id 0), got {aid!r}",
            file=disp,
        )
    out.ann_ids[i] = int(aid)
    img_id: Any = ann.get("image_id")
    cat_id: Any = ann.get("category_id")
    if not _is_int(img_id) or int(img_id) not in img_pos:
        raise InputError(f"{where} (id {aid}): unknown image_id {img_id!r}", file=disp)
    if not _is_int(cat_id) or int(cat_id) not in cat_pos:
        raise InputError(f"{where} (id {aid}): unknown category_id {cat_id!r}", file=disp)
    out.image[i], out.category[i] = img_pos[int(img_id)], cat_pos[int(cat_id)]
    out.bbox[i] = _box(ann.get("bbox"), f"{where} (id {aid})", disp)
    a: Any = ann.get("area")
    if not _is_number(a) or not math.isfinite(a) or a < 0:
        raise InputError(f"{where} (id {aid}): `area` must be a finite number >= 0, got {a!r}", file=disp)
    out.area[i] = float(a)
    crowd = ann.get("iscrowd", 0)
    if crowd not in (0, 1) or isinstance(crowd, float):
        raise InputError(f"{where} (id {aid}): `iscrowd` must be 0 or 1, got {crowd!r}", file=disp)
    out.iscrowd[i] = bool(crowd)


def _box(
    value: Any, where: str, disp: str, *, line: int | None = None, column: int | None = None
) -> list[float]:
    if not isinstance(value, list) or len(value) != 4 or not all(_is_number(v) for v in value):
        raise InputError(
            f"{where}: `bbox` must be a list of four numbers [x, y, w, h]",
            file=disp,
            line=line,
            column=column,
        )
    x, y, w, h = (float(v) for v in value)
    if not (math.isfinite(x) and math.isfinite(y)):
        raise InputError(f"{where}: `bbox` x and y must be finite", file=disp, line=line, column=column)
    if not (math.isfinite(w) and math.isfinite(h) and w > 0 and h > 0):
        raise InputError(
            f"{where}: `bbox` width and height must be finite and positive, got w={w!r}, h={h!r}",
            file=disp,
            line=line,
            column=column,
        )
    return [x, y, w, h]


def parse_voc_truth(
    source: Source, *, name: str | None = None, max_bytes: int = DEFAULT_MAX_DETECTION_BYTES
) -> DetectionTruth:
    """Read a VOC-style table (``image,category,xmin,ymin,xmax,ymax,difficult``) and convert it.

    See the module docstring for the conversion; it is recorded in ``conventions``.

    Raises
    ------
    InputError
        Naming the file, the line and the column: a missing column, a coordinate that is not a finite
        number, ``xmax < xmin`` or ``ymax < ymin``, ``difficult`` other than 0/1, the same image and no
        category mixed with objects is fine (the empty row only lists the image).
    """
    from stats.io import _load, _table  # the shared CSV/Parquet reader, with line and column positions

    disp, data = _load(source, _display_name(source, name), max_bytes)
    table = _table(data, disp)
    header = [h.strip() for h in table.header]
    need = ["image", "category", "xmin", "ymin", "xmax", "ymax"]
    missing = [c for c in need if c not in header]
    if missing:
        raise InputError(
            f"missing column(s): {', '.join(missing)} (need {','.join(need)}[,difficult])", file=disp, line=1
        )
    col = {c: header.index(c) for c in need}
    dcol = header.index("difficult") if "difficult" in header else None
    images: dict[str, int] = {}
    rows: list[tuple[int, str, list[float], bool]] = []
    for r, row in enumerate(table.rows):
        img = row[col["image"]].strip()
        if not img:
            raise table.error("empty image name", r, col["image"])
        images.setdefault(img, len(images))
        cat = row[col["category"]].strip()
        if not cat:
            continue
        rows.append((images[img], cat, _voc_box(table, row, r, col), _voc_difficult(table, row, r, dcol)))
    if not images:
        raise InputError("the file lists no image", file=disp)
    names = sorted({r[1] for r in rows})
    cat_pos = {n: i for i, n in enumerate(names)}
    g = len(rows)
    bbox = np.empty((g, 4))
    for i, (_, _, (x1, y1, x2, y2), _) in enumerate(rows):
        bbox[i] = [x1, y1, x2 - x1 + 1.0, y2 - y1 + 1.0]
    return DetectionTruth(
        image_ids=np.arange(1, len(images) + 1, dtype=np.int64),
        category_ids=np.arange(1, len(names) + 1, dtype=np.int64),
        category_names=tuple(names),
        ann_ids=np.arange(1, g + 1, dtype=np.int64),
        image=np.array([r[0] for r in rows], dtype=np.intp),
        category=np.array([cat_pos[r[1]] for r in rows], dtype=np.intp),
        bbox=bbox,
        area=bbox[:, 2] * bbox[:, 3],
        iscrowd=np.zeros(g, dtype=bool),
        difficult=np.array([r[3] for r in rows], dtype=bool),
        source="voc",
        image_names=tuple(images),
        conventions={
            "format": "voc",
            "image_ids": "1..N in order of first appearance; the names in that order are `image_names`",
            "category_ids": "1..C in sorted order of names",
            "bbox": "[xmin, ymin, xmax - xmin + 1, ymax - ymin + 1] (VOC boxes are pixel-inclusive)",
            "area": "w * h",
            "difficult": "kept; COCO metrics count difficult objects (iscrowd 0), VOC metrics skip them",
        },
    )


def _voc_box(table: Any, row: list[str], r: int, col: dict[str, int]) -> list[float]:
    """Row ``r``'s pixel-inclusive box ``[xmin, ymin, xmax, ymax]``, checked (finite, not inverted)."""
    vals = []
    for c in ("xmin", "ymin", "xmax", "ymax"):
        text = row[col[c]].strip()
        try:
            v = float(text)
        except ValueError:
            raise table.error(f"`{c}` must be a number, got {text!r}", r, col[c]) from None
        if not math.isfinite(v):
            raise table.error(f"`{c}` must be finite, got {text!r}", r, col[c])
        vals.append(v)
    if vals[2] < vals[0] or vals[3] < vals[1]:
        raise table.error("xmax must be >= xmin and ymax >= ymin (pixel-inclusive VOC boxes)", r, col["xmax"])
    return vals


def _voc_difficult(table: Any, row: list[str], r: int, dcol: int | None) -> bool:
    """Row ``r``'s ``difficult`` flag (empty or absent: 0)."""
    if dcol is None:
        return False
    text = row[dcol].strip()
    if text not in ("", "0", "1"):
        raise table.error(f"`difficult` must be 0 or 1, got {text!r}", r, dcol)
    return text == "1"


# ----------------------------------------------------------------------------------------------------
# predictions


class _Columns:
    def __init__(self) -> None:
        self.image = array.array("q")
        self.category = array.array("q")
        self.box = array.array("d")
        self.score = array.array("d")


def parse_coco_results(
    source: Source,
    truth: DetectionTruth | tuple[IntArray, IntArray],
    *,
    name: str | None = None,
    max_bytes: int = DEFAULT_MAX_DETECTION_BYTES,
) -> Detections:
    """Read one entry's detections (COCO results JSON, gzipped JSON, CSV or Parquet).

    Parameters
    ----------
    source : path, bytes or binary file
    truth : DetectionTruth or (image_ids, category_ids)
        Only the public ids are read: the task's image ids and category ids.
    name : str, optional
        Display name for messages.
    max_bytes : int
        Largest accepted size, before and after gunzip.

    Returns
    -------
    Detections
        In file order.

    Raises
    ------
    InputError
        Naming the file, the record (0-based index in the list; for JSON also its line and column, for
        CSV its line) and what is wrong: unknown image or category id, a box that is not four finite
        numbers with positive width and height, a non-finite score, a missing key.

    Examples
    --------
    >>> truth = parse_coco_truth(b'{"images": [{"id": 1}], "categories": [{"id": 1, "name": "cat"}], '
    ...     b'"annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100}]}')
    >>> dets = parse_coco_results(b'[{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.9}]',
    ...                           truth, name="results.json")
    >>> dets.n_detections, dets.score.tolist()
    (1, [0.9])
    """
    image_ids, category_ids = (
        (truth.image_ids, truth.category_ids) if isinstance(truth, DetectionTruth) else truth
    )
    disp = _display_name(source, name)
    data = _maybe_gunzip(_read_bytes(source, disp, max_bytes), disp, max_bytes)
    img_pos, cat_pos = _index(np.asarray(image_ids)), _index(np.asarray(category_ids))
    head = data.lstrip()[:1]
    if data[:4] == b"PAR1":
        cols = _results_from_table(_parquet_table(data, disp), disp, img_pos, cat_pos, csv_lines=False)
    elif head in (b"[", b"") and not disp.lower().endswith(".csv"):
        cols = _results_from_json(_decode_utf8(data, disp), disp, img_pos, cat_pos)
    else:
        cols = _results_from_table(_csv_table(data, disp), disp, img_pos, cat_pos, csv_lines=True)
    d = len(cols.score)
    return Detections(
        image=np.frombuffer(cols.image, dtype=np.int64).astype(np.intp),
        category=np.frombuffer(cols.category, dtype=np.int64).astype(np.intp),
        bbox=np.frombuffer(cols.box, dtype=np.float64).reshape(d, 4).copy(),
        score=np.frombuffer(cols.score, dtype=np.float64).copy(),
    )


_WS_RE = re.compile(r"[ \t\n\r]*")


def _results_from_json(text: str, disp: str, img_pos: dict[int, int], cat_pos: dict[int, int]) -> _Columns:
    """Decode the list one record at a time; well-formed records take a fast path (type checks only)
    and are validated together at the end; the first bad record is decoded again for its message."""
    decoder = json.JSONDecoder()
    raw = _Columns()  # ids, not yet indices
    starts = array.array("q")
    skip = _WS_RE.match
    n = len(text)
    pos = skip(text, 0).end()  # type: ignore[union-attr]
    if pos >= n or text[pos] != "[":
        raise InputError("the results file must be a JSON list of detections", file=disp)
    pos = skip(text, pos + 1).end()  # type: ignore[union-attr]
    index = 0
    img_a, cat_a, box_a, score_a = raw.image, raw.category, raw.box, raw.score
    while True:
        if pos < n and text[pos] == "]":
            pos += 1
            break
        if index > 0:
            if pos >= n or text[pos] != ",":
                line, col = _line_col(text, min(pos, n))
                raise InputError(
                    "invalid JSON: expected ',' or ']' between records", file=disp, line=line, column=col
                )
            pos = skip(text, pos + 1).end()  # type: ignore[union-attr]
        start = pos
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"invalid JSON: {exc.msg}", file=disp, line=exc.lineno, column=exc.colno
            ) from None
        pos = skip(text, pos).end()  # type: ignore[union-attr]
        starts.append(start)
        if type(obj) is dict:
            img, cat, box, sc = obj.get("image_id"), obj.get("category_id"), obj.get("bbox"), obj.get("score")
            if (
                type(img) is int
                and type(cat) is int
                and type(box) is list
                and len(box) == 4
                and (type(sc) is float or type(sc) is int)
                and all(type(v) is float or type(v) is int for v in box)
                and -(2**62) < img < 2**62
                and -(2**62) < cat < 2**62
            ):
                img_a.append(img)
                cat_a.append(cat)
                box_a.extend(box)
                score_a.append(sc)
                index += 1
                continue
        _add_record(raw, obj, index, disp, img_pos, cat_pos, text, start)  # raises, or appends the ids
        index += 1
    if pos != n:
        line, col = _line_col(text, pos)
        raise InputError("invalid JSON: extra data after the list", file=disp, line=line, column=col)
    d = len(raw.score)
    ids = np.frombuffer(raw.image, dtype=np.int64) if d else np.zeros(0, dtype=np.int64)
    cats = np.frombuffer(raw.category, dtype=np.int64) if d else np.zeros(0, dtype=np.int64)
    box = np.frombuffer(raw.box, dtype=np.float64).reshape(d, 4) if d else np.zeros((0, 4))
    score = np.frombuffer(raw.score, dtype=np.float64) if d else np.zeros(0)
    img_idx = _lookup(ids.astype(np.float64), img_pos)
    cat_idx = _lookup(cats.astype(np.float64), cat_pos)
    ok = (
        (img_idx >= 0)
        & (cat_idx >= 0)
        & np.isfinite(box).all(axis=1)
        & (box[:, 2] > 0)
        & (box[:, 3] > 0)
        & np.isfinite(score)
    )
    if not ok.all():
        r = int(np.flatnonzero(~ok)[0])
        obj, _ = decoder.raw_decode(text, starts[r])
        _add_record(_Columns(), obj, r, disp, img_pos, cat_pos, text, starts[r])  # raises with the message
    cols = _Columns()
    cols.image = array.array("q", img_idx.astype(np.int64).tobytes())
    cols.category = array.array("q", cat_idx.astype(np.int64).tobytes())
    cols.box = raw.box
    cols.score = raw.score
    return cols


def _add_record(
    cols: _Columns,
    obj: Any,
    index: int,
    disp: str,
    img_pos: dict[int, int],
    cat_pos: dict[int, int],
    text: str,
    start: int,
) -> None:
    def fail(message: str) -> InputError:
        line, col = _line_col(text, start)
        return InputError(f"record {index}: {message}", file=disp, line=line, column=col)

    if not isinstance(obj, dict):
        raise fail("must be an object with image_id, category_id, bbox, score")
    img: Any = obj.get("image_id")
    cat: Any = obj.get("category_id")
    box: Any = obj.get("bbox")
    score: Any = obj.get("score")
    if not _is_int(img) or int(img) not in img_pos:
        raise fail(f"unknown image_id {img!r}")
    if not _is_int(cat) or int(cat) not in cat_pos:
        raise fail(f"(image_id {img}) unknown category_id {cat!r}")
    if not isinstance(box, list) or len(box) != 4 or not all(_is_number(v) for v in box):
        raise fail(f"(image_id {img}) `bbox` must be a list of four numbers [x, y, w, h]")
    x, y, w, h = (float(v) for v in box)
    if not (math.isfinite(x) and math.isfinite(y)):
        raise fail(f"(image_id {img}) `bbox` x and y must be finite")
    if not (math.isfinite(w) and math.isfinite(h) and w > 0 and h > 0):
        raise fail(
            f"(image_id {img}) `bbox` width and height must be finite and positive, got w={w!r}, h={h!r}"
        )
    if not _is_number(score) or not math.isfinite(score):
        raise fail(f"(image_id {img}) `score` must be a finite number, got {score!r}")
    cols.image.append(int(img))  # the id: the caller turns ids into indices
    cols.category.append(int(cat))
    cols.box.extend((x, y, w, h))
    cols.score.append(float(score))


_RESULT_COLUMNS = ("image_id", "category_id", "x", "y", "w", "h", "score")


def _csv_table(data: bytes, disp: str) -> Any:
    import pyarrow as pa
    from pyarrow import csv as pacsv

    try:
        return pacsv.read_csv(
            io.BytesIO(data),
            convert_options=pacsv.ConvertOptions(column_types={c: pa.string() for c in _RESULT_COLUMNS}),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise InputError(f"unreadable CSV ({str(exc).splitlines()[0]})", file=disp) from None


def _parquet_table(data: bytes, disp: str) -> Any:
    import pyarrow as pa
    from pyarrow import parquet as pq

    try:
        return pq.read_table(io.BytesIO(data))
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"unreadable Parquet file ({exc})", file=disp) from None


def _results_from_table(
    table: Any, disp: str, img_pos: dict[int, int], cat_pos: dict[int, int], *, csv_lines: bool
) -> _Columns:
    import pyarrow as pa
    import pyarrow.compute as pc

    names = [n.strip() for n in table.column_names]
    missing = [c for c in _RESULT_COLUMNS if c not in names]
    if missing:
        raise InputError(
            f"missing column(s): {', '.join(missing)} (need {','.join(_RESULT_COLUMNS)})",
            file=disp,
            line=1 if csv_lines else None,
        )

    def where(r: int) -> dict[str, Any]:
        return {"file": disp, "line": r + 2} if csv_lines else {"file": disp}

    arrays: dict[str, NDArray[np.float64]] = {}
    for c in _RESULT_COLUMNS:
        column = table.column(names.index(c))
        if column.null_count:
            r = int(np.flatnonzero(np.asarray(column.is_null()))[0])
            raise InputError(f"record {r}: `{c}` is empty", **where(r))
        try:
            arrays[c] = np.asarray(pc.cast(column, pa.float64()), dtype=np.float64)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            values = column.to_pylist()
            for r, v in enumerate(values):
                try:
                    float(v)
                except (TypeError, ValueError):
                    raise InputError(f"record {r}: `{c}` must be a number, got {v!r}", **where(r)) from None
            raise InputError(f"`{c}` must hold numbers", file=disp) from None
    cols = _Columns()
    img_f, cat_f = arrays["image_id"], arrays["category_id"]
    img_idx = _lookup(img_f, img_pos)
    cat_idx = _lookup(cat_f, cat_pos)
    x, y, w, h, s = (arrays[c] for c in ("x", "y", "w", "h", "score"))
    checks = [
        (img_idx < 0, lambda r: f"unknown image_id {_num(img_f[r])}"),
        (cat_idx < 0, lambda r: f"(image_id {_num(img_f[r])}) unknown category_id {_num(cat_f[r])}"),
        (~(np.isfinite(x) & np.isfinite(y)), lambda r: f"(image_id {_num(img_f[r])}) x and y must be finite"),
        (
            ~(np.isfinite(w) & np.isfinite(h) & (w > 0) & (h > 0)),
            lambda r: (
                f"(image_id {_num(img_f[r])}) width and height must be finite and positive, got w={float(w[r])!r}, h={float(h[r])!r}"
            ),
        ),
        (
            ~np.isfinite(s),
            lambda r: f"(image_id {_num(img_f[r])}) `score` must be a finite number, got {float(s[r])!r}",
        ),
    ]
    bad_rows = [(int(np.flatnonzero(mask)[0]), msg) for mask, msg in checks if mask.any()]
    if bad_rows:
        r, msg = min(bad_rows, key=lambda t: t[0])
        raise InputError(f"record {r}: {msg(r)}", **where(r))
    cols.image = array.array("q", img_idx.astype(np.int64).tobytes())
    cols.category = array.array("q", cat_idx.astype(np.int64).tobytes())
    cols.box = array.array("d", np.column_stack([x, y, w, h]).tobytes())
    cols.score = array.array("d", s.tobytes())
    return cols


def _num(v: Any) -> str:
    return str(int(v)) if math.isfinite(v) and float(v).is_integer() else repr(float(v))


def _lookup(values: NDArray[np.float64], pos: dict[int, int]) -> NDArray[np.int64]:
    keys = np.array(sorted(pos), dtype=np.int64)
    idx = np.array([pos[int(k)] for k in keys], dtype=np.int64)
    out = np.full(values.shape[0], -1, dtype=np.int64)
    integral = np.isfinite(values) & (values == np.round(values))
    v = np.where(integral, values, 0).astype(np.int64)
    j = np.clip(np.searchsorted(keys, v), 0, keys.shape[0] - 1)
    found = integral & (keys[j] == v)
    out[found] = idx[j[found]]
    return out
