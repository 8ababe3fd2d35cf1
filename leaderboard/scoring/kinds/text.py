"""Text tasks (issue 20): translation, summarization, speech recognition and entity tagging.

The files and statistics are :mod:`stats.text`'s (docs/text.md): the truth is plain text (one reference
per line), JSONL or CSV with segment ids (one or several references per segment, optionally a document id
per segment: the bootstrap then resamples documents), or CoNLL for span F1. An entry's per-segment
statistics are extracted once (sacreBLEU 2.6.0, jiwer), checked against the library's public corpus
score, stored as the score's item statistics, and resampled on the task's fixed rows of ``W``; every
replicate is an exact corpus score. The metric's options are sacreBLEU's defaults unless the task sets
them (the settings ``tokenize``, ``lowercase``, ``smooth_method``, ``effective_order``; kept in
``Task.vision["options"]``), all named by the signature kept on the task (``Task.vision["signature"]``);
the board finalizes replicates and randomizations with the task's options (``Text.task_metric``).

What is stored: the references (or gold tags) as the hidden labels, one entry per segment; the documents
as the hidden groups; public facts (format, reference count, signature, tokens per sentence) on the task.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from django.conf import settings

import stats
from leaderboard.challenges.settings_spec import TASK, TEXT_METRIC_OPTIONS
from leaderboard.core.exceptions import ApplicationError
from leaderboard.scoring.engine import MetricResult, ParsedTruth, PredictionFormat, SplitScore, input_error
from leaderboard.scoring.kinds.base import ExampleFile, Files, TaskKind, register
from stats.engine import score_item_statistics
from stats.io import InputError
from stats.metrics import Metric, get_metric, truth_kind
from stats.text.extract import TextMetric, text_metric
from stats.text.io import (
    TagTruth,
    TextTruth,
    read_hypotheses,
    read_tag_predictions,
    read_tag_truth,
    read_text_truth,
)
from stats.text.significance import brevity_check

if TYPE_CHECKING:
    from leaderboard.challenges.models import Challenge, Task
    from leaderboard.scoring.selectors import HiddenTruth

#: Segments up to which an extraction is checked against the library's corpus score on the whole corpus;
#: above it, and for TER always, on a fixed sample of segments (``verify="sample"``).
VERIFY_WHOLE_MAX = 2000
#: Entries of a BLEU board checked against the leader for the brevity-penalty kink (the first by value),
#: and the resamples of each check's standard errors.
BREVITY_ENTRIES = 30
BREVITY_RESAMPLES = 1000


def _tags(metric: str) -> bool:
    return truth_kind(metric) == "tags"


def _metric(name: str, options: Mapping[str, Any] | None = None) -> TextMetric:
    """The metric with sacreBLEU's (jiwer's, conlleval's) defaults and a task's options
    (:func:`_options`); the board finalizes with it (``Text.task_metric``)."""
    return text_metric(name, **(options or {}))


def _task_metric(task: Task, name: str | None = None) -> TextMetric:
    """The task's metric (or its secondary metric ``name``) with the task's options that metric has."""
    if name is None or name == task.metric:
        return _metric(task.metric, task.vision.get("options"))
    options = {k: v for k, v in (task.vision.get("options") or {}).items() if name in OPTION_METRICS[k]}
    return _metric(name, options)


#: The task settings that are options of sacreBLEU's metrics, and the metrics that have each.
OPTION_METRICS: dict[str, tuple[str, ...]] = {
    "tokenize": ("bleu",),
    "lowercase": ("bleu", "chrf", "chrf++"),
    "smooth_method": ("bleu",),
    "effective_order": ("bleu",),
}


def _options(metric: str, options: Mapping[str, Any], *, name: str) -> dict[str, Any]:
    """The task's metric options that differ from sacreBLEU's defaults, checked: an option the metric
    does not have, or a tokenizer this machine cannot run, is refused with the setting's name."""
    out: dict[str, Any] = {}
    for key in TEXT_METRIC_OPTIONS:
        value = options.get(key)
        if value is None or value == "" or value == TASK[key].default:
            continue
        if metric not in OPTION_METRICS[key]:
            raise ApplicationError(
                f"`{key}` is an option of {', '.join(OPTION_METRICS[key])}, not of {metric}; leave it at "
                f"its default ({TASK[key].default}).",
                extra={"field": key},
            )
        out[key] = value
    try:
        text_metric(metric, **out)
    except ValueError as exc:
        field = next((k for k in out if k in str(exc)), "tokenize")
        raise ApplicationError(f"{name}: {exc}", extra={"field": field}) from exc
    return out


#: The kind's name (``Task.kind``). Not "text": the settings' own field types include "text", and the seam
#: test (tests/architecture/test_kinds_seam.py) rightly flags any table keyed by a kind's name.
KIND_NAME = "text_corpus"


class Text(TaskKind):
    name = KIND_NAME
    label = "Text (translation, speech recognition, entity tagging): corpus metrics per segment"
    upload_setting = "UPLOAD_MAX_BYTES"
    upload_help = "Plain text (one segment per line), JSONL or CSV with segment ids; CoNLL for tagging"
    upload_accept = ".txt,.jsonl,.json,.csv,.conll,.tsv,text/plain,text/csv"
    format_template = "web/kinds/text_format.html"
    example_note = "a placeholder per segment"

    def claims(self, metric: Metric) -> bool:
        return metric.task_kind == "text"

    # --- the truth --------------------------------------------------------------------------------------
    def parse_truth(
        self,
        data: bytes,
        *,
        name: str,
        metric: str,
        labels: Sequence[str] | None,
        group_column: str | None,
        split_column: str | None,
        positive: str | None,
        options: Mapping[str, Any],
    ) -> ParsedTruth:
        if group_column or split_column or labels:
            field = "group_column" if group_column else "split_column" if split_column else "labels"
            raise ApplicationError(
                f"{name}: a text task takes its segments, references and documents from the file "
                "(JSONL `doc`, CSV `doc` column); leave labels, group and split columns empty.",
                extra={"file": name, "field": field},
            )
        opts = _options(metric, options, name=name)
        try:
            if _tags(metric):
                return _parse_tags(data, name=name, metric=metric)
            return _parse_references(data, name=name, metric=metric, options=opts)
        except InputError as exc:
            raise input_error(exc) from exc

    def replacement_labels(self, task: Task) -> list[str] | None:
        return None  # the entity types come from the file

    def replacement_options(self, task: Task) -> dict[str, Any]:
        return dict(task.vision.get("options") or {})

    def secondary_metrics(self, metric: str, names: Sequence[str], parsed: ParsedTruth) -> list[str]:
        """Text metrics read from the same references (BLEU, chrF, chrF++, TER; WER and CER with one
        reference per segment), each once and not the primary; a tagging task has span F1 only."""
        out: list[str] = []
        for name in names:
            try:
                other = get_metric(name)
            except (KeyError, ValueError):
                other = None
            if other is None or not self.claims(other) or truth_kind(other) != truth_kind(metric):
                raise ApplicationError(
                    f"`secondary_metrics`: {name} is not a metric of this task's references; a text task "
                    "takes bleu, chrf, chrf++, ter, wer, cer.",
                    extra={"field": "secondary_metrics"},
                )
            if name == metric:
                raise ApplicationError(
                    f"`secondary_metrics`: {name} is the task's primary metric.",
                    extra={"field": "secondary_metrics"},
                )
            if name in ("wer", "cer") and parsed.vision.get("n_refs") != 1:
                raise ApplicationError(
                    f"`secondary_metrics`: {name.upper()} takes one reference per segment, the file gives "
                    f"{parsed.vision.get('n_refs')}.",
                    extra={"field": "secondary_metrics"},
                )
            if name not in out:
                out.append(name)
        return out

    def task_metric(self, task: Task) -> Metric:
        """The registry's metric with the task's options' finalizer (BLEU's smoothing, effective order)."""
        metric: Metric = _task_metric(task).registry_metric()
        return metric

    def secondary_metric(self, task: Task, name: str) -> Metric:
        metric: Metric = _task_metric(task, name).registry_metric()
        return metric

    def validate_predictions(self, data: bytes, *, name: str, task: Task) -> None:
        try:
            _read_run(data, name=name, task=task)
        except InputError as exc:
            raise input_error(exc) from exc

    # --- scoring ----------------------------------------------------------------------------------------
    def score_files(
        self, *, task: Task, truth: HiddenTruth, files: Files, challenge: Challenge
    ) -> list[SplitScore]:
        runs = [_statistics(task, truth, data, name) for data, name, _fmt in files]
        secondary = {m: _secondary(task, truth, files, m) for m in self.secondary_names(task)}
        metric = self.task_metric(task)
        scores = score_item_statistics(
            runs,
            metric=metric,
            resamples=challenge.resamples,
            seed=challenge.seed,
            groups=None if truth.groups is None else np.asarray(truth.groups),
            cache_dir=settings.RESAMPLE_CACHE_DIR,
        )
        for s in scores:
            if not np.isfinite(s.value):
                raise ApplicationError(f"{task.metric} is undefined on this entry and test set.")
        return [
            SplitScore(
                split="public",
                value=float(np.mean([s.value for s in scores])),
                replicates=np.mean([s.replicates for s in scores], axis=0),
                jackknife=np.mean([s.jackknife for s in scores], axis=0),
                item_statistics=runs[0] if len(runs) == 1 else None,
                run_values=[float(s.value) for s in scores],
                resamples=challenge.resamples,
                seed=challenge.seed,
                engine_version=stats.__version__,
                metrics=secondary or None,
            )
        ]

    # --- the board: BLEU's brevity-penalty kink ---------------------------------------------------------
    def board_warnings(
        self,
        task: Task,
        *,
        names: Sequence[str],
        values: np.ndarray,
        item_statistics: Sequence[np.ndarray] | None,
        groups: np.ndarray | None,
    ) -> list[str]:
        """For BLEU: each entry compared with the leader whose pooled length ratios hyp/ref lie on both
        sides of 1, or within two standard errors of it (``stats.text.significance.brevity_check``)."""
        if task.metric != "bleu" or item_statistics is None or len(item_statistics) < 2:
            return []
        leader = int(np.nanargmax(values))
        order = [i for i in np.argsort(-np.asarray(values), kind="stable") if i != leader][:BREVITY_ENTRIES]
        out = []
        for i in order:
            check = brevity_check(
                [item_statistics[leader], item_statistics[i]],
                names=(names[leader], names[i]),
                resamples=BREVITY_RESAMPLES,
                groups=groups,
            )
            if check.warning:
                out.append(f"Brevity penalty: {check.warning}.")
        return out

    # --- the entry page: per-segment results ------------------------------------------------------------
    def segment_values(self, task: Task, item_statistics: np.ndarray) -> np.ndarray | None:
        """Each segment's own metric value (sentence BLEU with exp smoothing, segment chrF, TER, WER...)
        from the stored statistics: the finaliser applied row by row."""
        values = self.task_metric(task).finalize(np.asarray(item_statistics, dtype=np.float64))
        return np.asarray(values, dtype=np.float64)

    def segment_texts(self, task: Task, truth: HiddenTruth, data: bytes, name: str) -> list[tuple[str, str]]:
        """Each segment's hypothesis and reference(s) as text (organizers only: references are hidden)."""
        if _tags(task.metric):
            pred = read_tag_predictions(data, _public_tag_truth(task), name=name)
            gold: list[list[str]] = truth.labels  # type: ignore[assignment]
            return [(" ".join(p), " ".join(g)) for p, g in zip(pred, gold, strict=True)]
        hyps = read_hypotheses(data, _public_text_truth(task), name=name)
        segments: list[list[str | None]] = truth.labels  # type: ignore[assignment]
        refs = [" | ".join(r for r in seg if r is not None) for seg in segments]
        return list(zip(hyps, refs, strict=True))

    # --- the public description -------------------------------------------------------------------------
    def prediction_format(self, metric: str) -> PredictionFormat:
        m = get_metric(metric)
        tags = _tags(metric)
        return PredictionFormat(
            metric=m.name,
            description=m.description,
            higher_is_better=m.higher_is_better,
            kind=m.prediction_kind,
            columns=["token", "tag"] if tags else ["id", "text"],
            probabilities=False,
        )

    def format_text(self, fmt: PredictionFormat) -> str:
        if fmt.kind == "tags":
            return (
                "CoNLL: one token per line with its predicted tag in the last column (BIO/IOB/IOBES), a blank "
                "line between sentences, the task's sentences in order with the same token counts"
            )
        return (
            "the system's output: plain text with one segment per line in the task's order (as sacreBLEU "
            'reads it), or JSONL {"id": ..., "text": ...} or CSV id,text naming every segment id once'
        )

    def api_format(self, task: Task, fmt: PredictionFormat) -> dict[str, Any]:
        return {
            "file_types": ["conll"] if fmt.kind == "tags" else ["txt", "jsonl", "csv"],
            "columns": fmt.columns,
            "prediction_kind": fmt.kind,
            "segments": task.n_items,
            "signature": task.vision.get("signature", ""),
            "note": self.format_text(fmt) + ".",
        }

    def example_file(self, task: Task) -> ExampleFile:
        """A placeholder per segment (plain text), or every token tagged ``O`` (CoNLL, tag column only)."""
        if _tags(task.metric):
            body = "\n\n".join("\n".join(["O"] * n) for n in task.vision["tokens"]) + "\n"
            return ExampleFile(f"{task.slug}-example.conll", "text/plain; charset=utf-8", body.encode())
        body = "".join("example\n" for _ in task.item_ids)
        return ExampleFile(f"{task.slug}-example.txt", "text/plain; charset=utf-8", body.encode())


# --- reading ---------------------------------------------------------------------------------------------
def _parse_references(data: bytes, *, name: str, metric: str, options: dict[str, Any]) -> ParsedTruth:
    truth = read_text_truth([data], names=[name])
    tm = _metric(metric, options)
    segments = [[stream[i] for stream in truth.references] for i in range(len(truth.ids))]
    while all(seg and seg[-1] is None for seg in segments):
        segments = [seg[:-1] for seg in segments]
    if tm.name in ("wer", "cer"):
        if truth.n_refs != 1:
            raise InputError(f"{metric.upper()} takes one reference per segment, the file gives {truth.n_refs}",
                             file=name)  # fmt: skip
        if not any((seg[0] or "").strip() for seg in segments):
            raise InputError(f"every reference is empty: {metric.upper()} is undefined", file=name)
    elif not any((r or "").strip() for seg in segments for r in seg):
        raise InputError(f"every reference is empty: {metric} is undefined on this test set", file=name)
    return ParsedTruth(
        ids=truth.ids,
        labels=segments,
        label_set=[],
        groups=truth.documents,
        private=None,
        kind=KIND_NAME,
        vision={
            "truth": "references",
            "n_refs": truth.n_refs,
            "signature": tm.signature(truth.n_refs),
            "options": options,
        },
    )


def _parse_tags(data: bytes, *, name: str, metric: str) -> ParsedTruth:
    truth = read_tag_truth(data, name=name)
    types = truth.types()
    if not types:
        raise InputError("the truth names no entity (every tag is O): span F1 is undefined", file=name)
    documents = truth.documents if len(set(truth.documents)) > 1 else None
    return ParsedTruth(
        ids=truth.ids,
        labels=truth.tags,
        label_set=types,
        groups=documents,
        private=None,
        kind=KIND_NAME,
        vision={
            "truth": "tags",
            "tokens": [len(t) for t in truth.tags],
            "signature": _metric(metric).signature(1),
        },
    )


def _public_text_truth(task: Task) -> TextTruth:
    """The task's segment ids with no reference: what a hypothesis file is read against."""
    return TextTruth(f"of task '{task.slug}'", list(task.item_ids), [[""] * task.n_items], None)


def _public_tag_truth(task: Task) -> TagTruth:
    """The task's sentence lengths with placeholder tags and no tokens."""
    lengths = task.vision["tokens"]
    return TagTruth(
        f"of task '{task.slug}'", [[""] * n for n in lengths], [["O"] * n for n in lengths], [], []
    )


def _read_run(data: bytes, *, name: str, task: Task) -> list[str] | list[list[str]]:
    if _tags(task.metric):
        return read_tag_predictions(data, _public_tag_truth(task), name=name)
    return read_hypotheses(data, _public_text_truth(task), name=name)


def _secondary(task: Task, truth: HiddenTruth, files: Files, metric: str) -> MetricResult:
    """A secondary metric of one entry: the mean over its runs, and the statistics of a single run."""
    tm = _task_metric(task, metric)
    runs = [_statistics(task, truth, data, name, metric=metric) for data, name, _fmt in files]
    values = [float(tm.registry_metric().finalize(np.sum(S, axis=0))) for S in runs]
    if not all(np.isfinite(values)):
        raise ApplicationError(f"{metric} is undefined on this entry and test set.")
    return MetricResult(float(np.mean(values)), runs[0] if len(runs) == 1 else None)


def _statistics(
    task: Task, truth: HiddenTruth, data: bytes, name: str, *, metric: str | None = None
) -> np.ndarray:
    """One run's per-segment statistics of the task's metric (or of its secondary ``metric``), checked
    against the library's corpus score."""
    tm = _task_metric(task, metric)
    try:
        run = _read_run(data, name=name, task=task)
    except InputError as exc:  # validated at upload; only a changed task gets here
        raise input_error(exc) from exc
    if _tags(task.metric):
        return tm.span_statistics(truth.labels, run, types=list(task.labels)).matrix  # type: ignore[arg-type]
    segments: list[list[str | None]] = truth.labels  # type: ignore[assignment]
    n_refs = max(len(seg) for seg in segments)
    refs = [[seg[r] if r < len(seg) else None for seg in segments] for r in range(n_refs)]
    # TER's rows are compiled (stats.text.ter); checking them on the whole corpus would run sacreBLEU's
    # pure-Python TER on it twice, so a fixed sample of segments is checked, rows and value
    whole = len(run) <= VERIFY_WHOLE_MAX and tm.name != "ter"
    verify: bool | str = True if whole else "sample"
    return tm.statistics(run, refs, verify=verify).matrix  # type: ignore[arg-type]


TEXT = register(Text())
