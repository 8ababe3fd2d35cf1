"""Detection and segmentation tasks: their files' description, annotation files, predictions and scoring.

The implementation of the detection and segmentation task kinds (``leaderboard/scoring/kinds/detection.py``
and ``segmentation.py`` are their registrations, and the only callers):
``stats.vision`` reads the organizer's annotation file and the participants' detections or mask archives,
and the hidden annotations meet predictions only inside these functions.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from django.conf import settings

import stats
from leaderboard.core.exceptions import ApplicationError
from stats import io as stats_io
from stats.engine import score_item_statistics
from stats.intervals import default_interval
from stats.metrics import get_metric

if TYPE_CHECKING:
    from leaderboard.challenges.models import Challenge, Task
    from leaderboard.scoring.selectors import HiddenTruth


from leaderboard.scoring.engine import (
    ParsedTruth,
    PredictionFormat,
    SplitScore,
    input_error,
)

_Run = TypeVar("_Run")


def _vision_metrics() -> dict[str, str]:
    """The metrics of vision tasks (the organizer's headline choice) -> their task kind, from the registry."""
    from stats.metrics import METRICS

    return {name: m.task_kind for name, m in METRICS.items() if m.task_kind in ("detection", "segmentation")}


#: Metric name -> ``detection`` or ``segmentation``.
VISION_METRICS: dict[str, str] = _vision_metrics()


def _upload_max_bytes() -> int:
    """The vision kinds' file limit (``kinds.detection.VisionKind.upload_setting``)."""
    return int(settings.VISION_UPLOAD_MAX_BYTES)


def prediction_format(metric_name: str) -> PredictionFormat:
    metric = get_metric(metric_name)
    detection = metric.task_kind == "detection"
    return PredictionFormat(
        metric=metric.name,
        description=metric.description,
        higher_is_better=metric.higher_is_better,
        kind=metric.task_kind,
        columns=["image_id", "category_id", "bbox", "score"] if detection else [],
        probabilities=False,
    )


# What the vision scorers of ``stats`` return, as the adapter uses it: point values and replicates of
# every metric of the task's kind, per-class values and replicates, and (detection) precision per class at
# the recall thresholds.
@dataclass(frozen=True)
class _VisionResult:
    values: dict[str, float]  # metric name -> point value
    replicates: dict[str, np.ndarray]  # metric name -> (B,)
    class_names: list[str]
    class_values: np.ndarray  # (C,), NaN where undefined
    class_replicates: np.ndarray  # (B, C), NaN where undefined in a resample
    recall: np.ndarray | None  # (R,) recall thresholds (detection)
    precision: np.ndarray | None  # (C, R) interpolated precision, -1 where the recall is never reached
    jackknife: np.ndarray = field(default_factory=lambda: np.empty(0))  # leave-one-image-out (segmentation)
    item_statistics: np.ndarray | None = None  # per-image statistics (segmentation: 3C+1 columns)
    # Leave-one-image-out values of every metric and (N, C) of the classes, for BCa (segmentation).
    detail_jackknife: dict[str, np.ndarray] | None = None
    class_jackknife: np.ndarray | None = None


def _vision_details(
    *, task: Task, challenge: Challenge, result: _VisionResult, method: str
) -> dict[str, Any]:
    """The entry's other metrics and per-class values with intervals, and its curves (an SVG)."""
    from leaderboard.scoring.figures import precision_recall_svg
    from stats.intervals import bootstrap_bounds

    def bounds(
        replicates: np.ndarray, point: float, jackknife: np.ndarray | None
    ) -> tuple[float | None, float | None]:
        finite = replicates[np.isfinite(replicates)]
        if not np.isfinite(point) or len(finite) < 2:
            return None, None
        how = method
        if how == "bca" and (jackknife is None or not np.isfinite(jackknife).all()):
            how = "percentile"  # a class missing from some leave-one-out set has no acceleration
        # within the metric's range (AP and IoU: [0, 1]; a basic interval can cross it: stats.intervals)
        low, high = bootstrap_bounds(
            finite,
            point=point,
            method=how,
            confidence=challenge.confidence,
            jackknife=jackknife,
            value_range=get_metric(task.metric).value_range,
        )
        return float(low[0]), float(high[0])

    jack = result.detail_jackknife or {}
    metrics = []
    for name, value in result.values.items():
        low, high = bounds(result.replicates[name], value, jack.get(name))
        metrics.append({"name": name, "value": _finite_or_none(value), "low": low, "high": high})
    classes = []
    for c, name in enumerate(result.class_names):
        value = float(result.class_values[c])
        cj = None if result.class_jackknife is None else result.class_jackknife[:, c]
        low, high = bounds(result.class_replicates[:, c], value, cj)
        classes.append({"name": name, "value": _finite_or_none(value), "low": low, "high": high})
    detection = task.kind == "detection"
    details: dict[str, Any] = {
        "headline": task.metric,
        "metrics": metrics,
        "class_metric": "AP" if detection else "IoU",
        "class_note": (
            "A class without ground truth in a resample is left out of that resample, as in pycocotools"
            if detection
            else "A class absent from both the annotations and the predictions is undefined"
        ),
        "classes": classes,
        "method": method,
        "confidence": challenge.confidence,
        "confidence_percent": f"{100 * challenge.confidence:g}",
    }
    if result.precision is not None and result.recall is not None:
        curves = {name: result.precision[c].tolist() for c, name in enumerate(result.class_names)}
        details["curves"] = {"recall": result.recall.tolist(), "precision": curves}
        details["curves_caption"] = "interpolated precision at the 101 recall thresholds, IoU 0.5"
        details["curves_svg"] = precision_recall_svg(
            result.recall.tolist(), curves, title=f"{task.title}: precision-recall at IoU 0.5"
        )
    return details


def _finite_or_none(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def vision_interval(metric: str, challenge: Challenge) -> str:
    """The interval of a vision metric's numbers (board, per-class values, other metrics).

    An organizer's explicit percentile or basic choice holds. The challenge default ("auto", or BCa on
    challenges made before "auto" existed) gives way to the metric's own method, chosen by measured
    coverage (``Metric.default_interval``: basic for detection AP, whose bias the bootstrap doubles;
    docs/stats.md); detection has no jackknife for BCa anyway, and Wilson is for plain proportions.
    """
    if challenge.interval_method not in ("bca", "auto", "wilson"):
        return challenge.interval_method
    return _vision_default_interval(metric)


def score_files(
    *, task: Task, truth: HiddenTruth, files: list[tuple[bytes, str, str]], challenge: Challenge
) -> list[SplitScore]:
    """Score a detection or segmentation entry: matching (or mask reading) once per file, replicates from
    the task's fixed resample weights over images; several files are runs (their mean is the entry's)."""
    results = _each_file(_vision_score_run, task=task, truth=truth, files=files, challenge=challenge)
    return vision_split_scores(task=task, challenge=challenge, results=results)


def _each_file(
    run: Callable[..., _Run],
    *,
    task: Task,
    truth: HiddenTruth,
    files: list[tuple[bytes, str, str]],
    challenge: Challenge,
) -> list[_Run]:
    """``run`` on each file (one per run of the entry) against the task's annotation file."""
    if truth.data is None:
        raise ApplicationError(f"Task '{task.slug}' has no annotation file; re-create it.")
    out = []
    for data, name, _fmt in files:
        try:
            out.append(run(task=task, truth_data=truth.data, data=data, name=name, challenge=challenge))
        except stats_io.InputError as exc:  # validated at upload; only a changed task gets here
            raise input_error(exc) from exc
    return out


def vision_split_scores(
    *, task: Task, challenge: Challenge, results: list[_VisionResult]
) -> list[SplitScore]:
    """A vision entry's stored score from its runs' results (their mean; details of the first run)."""
    headline = task.metric
    method = vision_interval(task.metric, challenge)
    return [
        SplitScore(
            split="public",
            value=float(np.mean([r.values[headline] for r in results])),
            replicates=np.mean([r.replicates[headline] for r in results], axis=0),
            jackknife=np.mean([r.jackknife for r in results], axis=0),
            item_statistics=results[0].item_statistics if len(results) == 1 else None,
            run_values=[float(r.values[headline]) for r in results],
            resamples=challenge.resamples,
            seed=challenge.seed,
            engine_version=stats.__version__,
            details=_vision_details(task=task, challenge=challenge, result=results[0], method=method)
            | ({"runs_note": "per-class results of the first run"} if len(results) > 1 else {}),
        )
    ]


def _head(data: bytes) -> bytes:
    """The first non-blank byte of a file, looking inside gzip (b"" for a corrupt stream)."""
    import gzip
    import zlib

    head = data[:64]
    if head[:2] == b"\x1f\x8b":
        try:
            head = gzip.GzipFile(fileobj=io.BytesIO(data)).read(64)
        except (OSError, EOFError, zlib.error):
            return b""  # the readers name the corrupt stream
    return head.lstrip()[:1]


def _looks_like_json(data: bytes) -> bool:
    return _head(data) in (b"{", b"[", b"")


def parse_truth(
    data: bytes,
    *,
    name: str,
    metric: str,
    class_names: Sequence[str] | None,
    ignore_index: int,
    reduce_zero_label: bool,
) -> ParsedTruth:
    """Read a detection or segmentation task's annotation file; keep only public facts on the task.

    The item list is the images in the reader's order (ascending image id for detection), recorded once.
    The public settings hold the categories (or classes) and, for segmentation, each image's size (so
    that predictions are checked without the annotations); the file itself is stored as uploaded.
    """
    kind = VISION_METRICS[metric]
    limit = _upload_max_bytes()
    try:
        if kind == "detection":
            from stats.vision.detection_io import parse_coco_truth, parse_voc_truth

            if class_names:
                raise ApplicationError(
                    f"{name}: a detection task takes its categories from the annotation file; leave the "
                    "labels empty.",
                    extra={"file": name, "field": "labels"},
                )
            reader = parse_coco_truth if _looks_like_json(data) else parse_voc_truth
            truth = reader(data, name=name, max_bytes=limit)
            _check_headline_defined(truth, metric=metric, name=name)
            categories = [
                {"id": int(c), "name": str(n)}
                for c, n in zip(truth.category_ids, truth.category_names, strict=True)
            ]
            return ParsedTruth(
                ids=[str(int(i)) for i in truth.image_ids],
                labels=[],
                label_set=[str(n) for n in truth.category_names],
                groups=None,
                private=None,
                kind=kind,
                vision={
                    "categories": categories,
                    "source": truth.source,
                    "conventions": dict(truth.conventions),
                    # VOC: the whole name -> id map (ids 1..N in this order), never cut
                    **({"image_names": list(truth.image_names)} if truth.image_names else {}),
                },
                data=data,
            )
        return _parse_segmentation_truth(
            data,
            name=name,
            class_names=class_names,
            ignore_index=ignore_index,
            reduce_zero_label=reduce_zero_label,
            limit=limit,
        )
    except stats_io.InputError as exc:
        raise input_error(exc) from exc


def _detection_ids(task: Task) -> tuple[np.ndarray, np.ndarray]:
    """The task's PUBLIC image ids (its order) and category ids."""
    return (
        np.array([int(i) for i in task.item_ids], dtype=np.int64),
        np.array([c["id"] for c in task.vision["categories"]], dtype=np.int64),
    )


def read_predictions(data: bytes, *, name: str, task: Task) -> Any:
    """Check (and read) a vision predictions file against the task's PUBLIC facts only: image ids,
    category ids or classes, image sizes. Never the annotations."""
    limit = _upload_max_bytes()
    try:
        if task.kind == "detection":
            from stats.vision.detection_io import parse_coco_results

            if _head(data) == b"{":
                raise stats_io.InputError(
                    "a results file is a JSON list of detections ([{image_id, category_id, bbox, score}, "
                    "...]), not an object; an annotation file is not a results file",
                    file=name,
                )
            return parse_coco_results(data, _detection_ids(task), name=name, max_bytes=limit)
        return _read_segmentation_predictions(data, name=name, task=task, limit=limit)
    except stats_io.InputError as exc:
        raise input_error(exc) from exc


#: The per-class values and the other metrics of a vision entry get their intervals from the first rows of
#: ``W`` (all of them when the task has fewer resamples): the headline metric uses every row.
DETAIL_RESAMPLES = 1000
#: Registry names of the detection stats shown on an entry's page, in COCOeval.summarize's order.
_DETECTION_DETAIL_NAMES = {
    "AP": "coco_ap",
    "AP50": "coco_ap50",
    "AP75": "coco_ap75",
    "APs": "coco_ap_small",
    "APm": "coco_ap_medium",
    "APl": "coco_ap_large",
    "AR1": "coco_ar1",
    "AR10": "coco_ar10",
    "AR100": "coco_ar100",
    "ARs": "coco_ar_small",
    "ARm": "coco_ar_medium",
    "ARl": "coco_ar_large",
    "VOC07": "voc07_ap50",
    "VOC": "voc_ap50",
}


def _vision_score_run(
    *, task: Task, truth_data: bytes, data: bytes, name: str, challenge: Challenge
) -> _VisionResult:
    if task.kind == "detection":
        return _score_detection_run(
            task=task, truth_data=truth_data, data=data, name=name, challenge=challenge
        )
    return _score_segmentation_run(
        task=task, truth_data=truth_data, data=data, name=name, challenge=challenge
    )


def _detection_truth(task: Task, truth_data: bytes) -> Any:
    from stats.vision.detection_io import parse_coco_truth, parse_voc_truth

    reader = parse_coco_truth if task.vision.get("source", "coco") == "coco" else parse_voc_truth
    truth = reader(truth_data, name="annotations", max_bytes=_upload_max_bytes())
    if [str(int(i)) for i in truth.image_ids] != task.item_ids:
        raise ApplicationError(f"Task '{task.slug}': its annotation file no longer matches its images.")
    return truth


def _score_detection_run(
    *, task: Task, truth_data: bytes, data: bytes, name: str, challenge: Challenge
) -> _VisionResult:
    from stats.resampling import iter_unit_weight_chunks

    run = detection_prepare(task=task, truth_data=truth_data, data=data, name=name, challenge=challenge)
    parts: list[dict[str, np.ndarray]] = []
    for chunk, w in iter_unit_weight_chunks(run.design, cache_dir=settings.RESAMPLE_CACHE_DIR):
        parts.append(detection_chunk(run, chunk=chunk, weights=w))
    return detection_result(run, parts)


@dataclass(frozen=True)
class DetectionRun:
    """One detection entry after the per-image matching (once per entry, independent of the resample)."""

    truth: Any  # stats.vision.DetectionTruth (hidden)
    prepared: Any  # stats.vision.DetectionTask
    entry: Any  # stats.vision.MatchedEntry
    headline: str  # the stat of the task's metric ("AP", "AP50"...)
    design: Any  # stats.resampling.ResampleDesign
    detail_rows: int

    def __repr__(self) -> str:  # never print hidden annotations
        return f"DetectionRun(headline={self.headline})"


def detection_prepare(
    *, task: Task, truth_data: bytes, data: bytes, name: str, challenge: Challenge
) -> DetectionRun:
    from stats.resampling import resample_design
    from stats.vision.detection import DETECTION_METRICS as STAT_OF
    from stats.vision.detection import DetectionTask, detection_strata
    from stats.vision.detection_io import parse_coco_results

    truth = _detection_truth(task, truth_data)
    detections = parse_coco_results(data, truth, name=name, max_bytes=_upload_max_bytes())
    prepared = DetectionTask(truth)
    entry = prepared.match(detections)  # once per entry: independent of the resample
    # Strata keep every area range's objects in every resample, so every stat is defined (stats.vision).
    design = resample_design(
        truth.n_images, resamples=challenge.resamples, seed=challenge.seed, strata=detection_strata(truth)
    )
    return DetectionRun(
        truth=truth,
        prepared=prepared,
        entry=entry,
        headline=STAT_OF[task.metric],
        design=design,
        detail_rows=min(DETAIL_RESAMPLES, challenge.resamples),
    )


def detection_run_state(run: DetectionRun) -> dict[str, Any]:
    """What a fanned-out detection scoring stores of a run (``leaderboard.scoring.state_codec``): the
    ground truth, the matched entry and the resample design, as arrays; the truth's index is rebuilt."""
    return {
        "truth": run.truth,
        "entry": run.entry,
        "headline": run.headline,
        "design": run.design,
        "detail_rows": run.detail_rows,
    }


def detection_run_from_state(state: dict[str, Any]) -> DetectionRun:
    """A run back from :func:`detection_run_state` (``DetectionTask(truth)`` is vectorised and cheap)."""
    from stats.vision.detection import DetectionTask

    return DetectionRun(
        truth=state["truth"],
        prepared=DetectionTask(state["truth"]),
        entry=state["entry"],
        headline=state["headline"],
        design=state["design"],
        detail_rows=int(state["detail_rows"]),
    )


def _register_state_types() -> None:
    """The stats dataclasses a fanned-out detection state holds (``leaderboard.scoring.state_codec``)."""
    from leaderboard.scoring import state_codec
    from stats.resampling import ResampleDesign
    from stats.vision.detection import MatchedEntry, _Curves
    from stats.vision.detection_io import DetectionTruth

    state_codec.register(DetectionTruth, MatchedEntry, _Curves, ResampleDesign)


_register_state_types()


def detection_runs(
    *, task: Task, truth: HiddenTruth, files: list[tuple[bytes, str, str]], challenge: Challenge
) -> list[DetectionRun]:
    """Match each run's detections once (the per-image step of a fanned-out detection scoring)."""
    return _each_file(detection_prepare, task=task, truth=truth, files=files, challenge=challenge)


def detection_chunks(run: DetectionRun, *, chunks: range) -> Iterator[tuple[int, dict[str, np.ndarray]]]:
    """``(chunk, replicates)`` for each chunk of ``chunks`` (the per-host W cache, rebuilt from the seed)."""
    from stats.resampling import iter_unit_weight_chunks

    for c, w in iter_unit_weight_chunks(run.design, chunks=chunks, cache_dir=settings.RESAMPLE_CACHE_DIR):
        yield c, detection_chunk(run, chunk=c, weights=w)


def detection_chunk(run: DetectionRun, *, chunk: int, weights: np.ndarray) -> dict[str, np.ndarray]:
    """The replicates of one fixed chunk of W: every stat in the chunks that hold the first
    ``detail_rows`` rows (the entry's page), the headline alone after them."""
    done = run.design.chunk_rows(chunk).start
    want = None if done < run.detail_rows else [run.headline]
    return run.prepared.replicates(run.entry, weights, stats=want)


def detection_result(run: DetectionRun, chunks: Sequence[dict[str, np.ndarray]]) -> _VisionResult:
    """Join the chunks' replicates (in chunk order) into the entry's values, replicates and details."""
    parts: dict[str, list[np.ndarray]] = {}
    for reps in chunks:
        for key, value in reps.items():
            parts.setdefault(key, []).append(value)
    replicates = {key: np.concatenate(value) for key, value in parts.items()}
    headline, detail_rows, truth = run.headline, run.detail_rows, run.truth
    prepared, entry = run.prepared, run.entry
    point = prepared.point(entry)
    values = {
        _DETECTION_DETAIL_NAMES[key]: (np.nan if point[key] is None else float(point[key]))
        for key in _DETECTION_DETAIL_NAMES
    }
    reps_by_name = {
        _DETECTION_DETAIL_NAMES[key]: (replicates[key] if key == headline else replicates[key][:detail_rows])
        for key in _DETECTION_DETAIL_NAMES
    }
    class_values = np.array([np.nan if v is None else v for v in point["per_class_AP"]], dtype=np.float64)
    recall, precision = _precision_curves(prepared, entry)
    return _VisionResult(
        values=values,
        replicates=reps_by_name,
        class_names=list(truth.category_names),
        class_values=class_values,
        class_replicates=replicates["per_class_AP"][:detail_rows],
        recall=recall,
        precision=precision,
    )


#: The bit of ``stats.vision.detection.detection_strata`` an image has when it holds an object that counts
#: for the stat (bits 0-3: area all, small, medium, large; bit 4: VOC's non-difficult objects).
_STRATUM_BIT = {"APs": 1, "APm": 2, "APl": 3, "ARs": 1, "ARm": 2, "ARl": 3, "VOC07": 4, "VOC": 4}
_STAT_WHAT = {
    1: "small (area <= 32^2)",
    2: "medium",
    3: "large (area > 96^2)",
    4: "non-difficult",
    0: "non-crowd",
}


def _check_headline_defined(truth: Any, *, metric: str, name: str) -> None:
    """Refuse a task whose headline metric is undefined on its own test set (no object it counts)."""
    from stats.vision.detection import DETECTION_METRICS as STAT_OF
    from stats.vision.detection import detection_strata

    bit = _STRATUM_BIT.get(STAT_OF[metric], 0)
    if not ((detection_strata(truth) >> bit) & 1).any():
        raise ApplicationError(
            f"{name}: no annotation is a {_STAT_WHAT[bit]} object, so {metric} is undefined on this test "
            "set; choose another metric.",
            extra={"file": name, "field": "metric"},
        )


def _precision_curves(prepared: Any, entry: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per-class precision at the 101 recall thresholds, IoU 0.5 (pycocotools' ``eval["precision"]``)."""
    from stats.pr_curves import precision_at_recall_thresholds

    return precision_at_recall_thresholds(prepared, entry, threshold=0)


def _vision_default_interval(metric: str) -> str:
    """A vision metric's interval method: the one rule of every command and board
    (``stats.intervals.default_interval``: the metric's own, chosen by measured coverage, basic for
    detection AP; BCa where it names none and a jackknife exists (segmentation), else percentile)."""
    return default_interval(metric, has_jackknife=VISION_METRICS[metric] == "segmentation")


# --- segmentation ---------------------------------------------------------------------------------------
def _mask_limits(limit: int) -> Any:
    from stats.vision.segmentation import SegmentationLimits

    return SegmentationLimits(max_bytes=limit)


def _parse_segmentation_truth(
    data: bytes,
    *,
    name: str,
    class_names: Sequence[str] | None,
    ignore_index: int,
    reduce_zero_label: bool,
    limit: int,
) -> ParsedTruth:
    """Read the organizer's archive of label maps: the image ids (sorted: the task's order), each image's
    size (public), and every value checked against the classes (or ``ignore_index``)."""
    from stats.vision.segmentation import read_mask_archive

    if not class_names:
        raise ApplicationError(
            f"{name}: a segmentation task needs its class names (the labels, in pixel-value order).",
            extra={"file": name, "field": "labels"},
        )
    n_classes = len(class_names)
    if ignore_index < n_classes:
        raise ApplicationError(
            f"ignore_index {ignore_index} is one of the classes 0..{n_classes - 1}; choose a value outside.",
            extra={"field": "ignore_index"},
        )
    archive = read_mask_archive(data, name=name, limits=_mask_limits(limit))
    allowed_top = n_classes if reduce_zero_label else n_classes - 1  # reduce_zero_label: 1..C become 0..C-1
    sizes: dict[str, list[int]] = {}
    for image_id in archive.image_ids:
        mask = archive.decode(image_id)
        values = np.unique(mask)
        bad = values[(values > allowed_top) & (values != ignore_index)]
        if bad.size:
            raise stats_io.InputError(
                f"member {archive.members[image_id][0]}: value {int(bad[0])} is neither a class "
                f"(0..{allowed_top}{' before reduce_zero_label' if reduce_zero_label else ''}) nor the "
                f"ignore_index {ignore_index}",
                file=name,
            )
        sizes[image_id] = [int(mask.shape[1]), int(mask.shape[0])]
    return ParsedTruth(
        ids=archive.image_ids,
        labels=[],
        label_set=[str(c) for c in class_names],
        groups=None,
        private=None,
        kind="segmentation",
        vision={
            "ignore_index": int(ignore_index),
            "reduce_zero_label": bool(reduce_zero_label),
            "image_sizes": sizes,
        },
        data=data,
    )


def _read_segmentation_predictions(data: bytes, *, name: str, task: Task, limit: int) -> Any:
    """A participant's archive checked against the task's public facts: one mask per image id, of the
    image's size, with values among the classes. Never the annotations."""
    from stats.vision.segmentation import read_mask_archive

    archive = read_mask_archive(data, name=name, limits=_mask_limits(limit))
    ids = task.item_ids
    extra = sorted(set(archive.members) - set(ids))
    if extra:
        member = archive.members[extra[0]][0]
        raise stats_io.InputError(f"member {member}: image {extra[0]!r} is not in the task", file=name)
    n_classes = len(task.labels)
    for image_id in ids:
        mask = archive.decode(image_id)  # names the missing member
        member = archive.members[image_id][0]
        width, height = task.vision["image_sizes"][image_id]
        if mask.shape != (height, width):
            raise stats_io.InputError(
                f"member {member}: mask is {mask.shape[1]}x{mask.shape[0]} (width x height), the image is "
                f"{width}x{height}",
                file=name,
            )
        top = int(mask.max()) if mask.size else 0
        if top >= n_classes:
            raise stats_io.InputError(
                f"member {member}: value {top} is outside the classes 0..{n_classes - 1}", file=name
            )
    return archive


def _score_segmentation_run(
    *, task: Task, truth_data: bytes, data: bytes, name: str, challenge: Challenge
) -> _VisionResult:
    from stats.metrics import per_class_iou
    from stats.resampling import iter_unit_weight_chunks, resample_design
    from stats.vision.segmentation import read_mask_archive, segmentation_statistics, segmentation_strata

    limit = _upload_max_bytes()
    truth = read_mask_archive(truth_data, name="annotations", limits=_mask_limits(limit))
    prediction = _read_segmentation_predictions(data, name=name, task=task, limit=limit)
    statistics = segmentation_statistics(
        truth,
        prediction,
        num_classes=len(task.labels),
        image_ids=task.item_ids,
        ignore_index=task.vision["ignore_index"],
        reduce_zero_label=task.vision["reduce_zero_label"],
    )
    strata = segmentation_strata(statistics)  # every resample keeps labelled pixels
    headline = score_item_statistics(
        [statistics],
        metric=task.metric,
        resamples=challenge.resamples,
        seed=challenge.seed,
        strata=strata,
        cache_dir=settings.RESAMPLE_CACHE_DIR,
    )[0]
    design = resample_design(
        len(task.item_ids), resamples=challenge.resamples, seed=challenge.seed, strata=strata
    )
    detail_rows = min(DETAIL_RESAMPLES, challenge.resamples)
    pooled_parts = []
    done = 0
    for _chunk, w in iter_unit_weight_chunks(design, cache_dir=settings.RESAMPLE_CACHE_DIR):
        pooled_parts.append(w.astype(np.float64) @ statistics)
        done += w.shape[0]
        if done >= detail_rows:
            break
    pooled = np.concatenate(pooled_parts)[:detail_rows]
    total = statistics.sum(axis=0)
    names = [m for m, kind in VISION_METRICS.items() if kind == "segmentation"]
    values = {m: float(get_metric(m).finalize(total[None, :])[0]) for m in names}
    replicates = {m: get_metric(m).finalize(pooled) for m in names}
    values[task.metric] = float(headline.value)
    replicates[task.metric] = np.asarray(headline.replicates)
    leave_one_out = total[None, :] - statistics  # pooled totals minus one image: O(N), for BCa
    return _VisionResult(
        values=values,
        replicates=replicates,
        class_names=list(task.labels),
        class_values=per_class_iou(total),
        class_replicates=per_class_iou(pooled),
        recall=None,
        precision=None,
        jackknife=np.asarray(headline.jackknife),
        item_statistics=statistics,
        detail_jackknife={m: get_metric(m).finalize(leave_one_out) for m in names},
        class_jackknife=per_class_iou(leave_one_out),
    )
