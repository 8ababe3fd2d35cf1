"""The text side of ``python -m stats score`` and ``leaderboard``: BLEU, chrF, chrF++, TER, WER, CER and
span F1 files (formats in :mod:`stats.text.io`).

``--truth`` names the references; repeat it for several reference streams of plain-text files (as
sacreBLEU's ``-r REF1 REF2``). When the truth names a document per segment (JSONL/CSV ``doc``, CoNLL
``-DOCSTART-``), the bootstrap resamples documents (the design effect is reported) unless
``--by-segment`` is given. ``--convention sacrebleu`` adds sacreBLEU's own paired test of every file
against the first (``--paired-test bs`` or ``ar``), reproducing its p-values exactly.
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from stats.engine import EntryScore, score_item_statistics
from stats.io import InputError
from stats.metrics import Metric
from stats.text.extract import TAGGING_MODES, TAGGING_SCHEMES, TOKENIZERS, TextMetric, text_metric
from stats.text.io import read_hypotheses, read_tag_predictions, read_tag_truth, read_text_truth

__all__ = [
    "TextScores",
    "TruthAction",
    "add_text_arguments",
    "check_single_truth",
    "score_text",
    "text_report",
]


class TruthAction(argparse.Action):
    """``--truth FILE``, repeatable: the first value is ``args.truth`` (a string, as every other metric
    reads it), further ones go to ``args.more_truth`` (text metrics: further reference streams)."""

    def __call__(
        self, parser: Any, namespace: argparse.Namespace, values: Any, option_string: Any = None
    ) -> None:
        if getattr(namespace, "_truth_seen", False):
            namespace.more_truth = [*getattr(namespace, "more_truth", []), values]
        else:
            namespace.truth = values
            namespace._truth_seen = True


def check_single_truth(args: argparse.Namespace, metric: Metric) -> None:
    """Refuse a repeated ``--truth`` for a metric that reads one truth file."""
    if metric.task_kind != "text" and getattr(args, "more_truth", None):
        raise ValueError("--truth is repeated only for text metrics (one file per reference stream)")


def add_text_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of the text metrics (ignored by the other metrics)."""
    parser.set_defaults(more_truth=[])
    g = parser.add_argument_group("text tasks (bleu, chrf, chrf++, ter, wer, cer, span_f1)")
    g.add_argument("--tokenize", choices=TOKENIZERS, help="BLEU tokenizer (sacreBLEU's; default 13a)")
    g.add_argument("--lowercase", action="store_true", help="BLEU/chrF: lowercase before scoring")
    g.add_argument(
        "--smooth-method", choices=["exp", "floor", "add-k", "none"], help="BLEU smoothing (default exp)"
    )
    g.add_argument("--smooth-value", type=float, help="BLEU: value of floor / add-k smoothing")
    g.add_argument("--max-ngram-order", type=int, help="BLEU: largest n-gram order (default 4)")
    g.add_argument("--effective-order", action="store_true", help="BLEU: stop at the last order with n-grams")
    g.add_argument("--chrf-eps-smoothing", action="store_true", help="chrF: mean of per-order F (chrF++.py)")
    g.add_argument("--ter-case-sensitive", action="store_true", help="TER: keep case (sacreBLEU: lowercases)")
    g.add_argument("--ter-no-punct", action="store_true", help="TER: remove punctuation")
    g.add_argument("--ter-normalized", action="store_true", help="TER: tercom's normalization")
    g.add_argument(
        "--tag-mode", choices=TAGGING_MODES, help="span F1: chunking convention (default conlleval)"
    )
    g.add_argument(
        "--tag-scheme", choices=TAGGING_SCHEMES, help="span F1 strict mode: the scheme (default IOB2)"
    )
    g.add_argument(
        "--text-format", choices=["plain", "jsonl", "csv"], help="file format (default: from the extension)"
    )
    g.add_argument(
        "--by-segment", action="store_true", help="resample segments even when the truth names documents"
    )
    g.add_argument(
        "--convention",
        choices=["board", "sacrebleu"],
        default="board",
        help="sacrebleu: also run sacreBLEU's paired test of every file against the first, its p-values exactly",
    )
    g.add_argument("--paired-test", choices=["ar", "bs"], default="ar", help="sacreBLEU's test (default ar)")
    g.add_argument("--paired-samples", type=int, help="sacreBLEU's samples (default: 10000 ar, 1000 bs)")
    g.add_argument(
        "--sacrebleu-seed", type=int, default=12345, help="sacreBLEU's SACREBLEU_SEED (default 12345)"
    )


def _options(args: argparse.Namespace, name: str) -> dict[str, Any]:
    o: dict[str, Any] = {}
    if name == "bleu":
        for key in ("tokenize", "smooth_method", "smooth_value", "max_ngram_order"):
            if getattr(args, key, None) is not None:
                o[key] = getattr(args, key)
        if getattr(args, "lowercase", False):
            o["lowercase"] = True
        if getattr(args, "effective_order", False):
            o["effective_order"] = True
    elif name in ("chrf", "chrf++"):
        if getattr(args, "lowercase", False):
            o["lowercase"] = True
        if getattr(args, "chrf_eps_smoothing", False):
            o["eps_smoothing"] = True
    elif name == "ter":
        for flag, key in (
            ("ter_case_sensitive", "case_sensitive"),
            ("ter_no_punct", "no_punct"),
            ("ter_normalized", "normalized"),
        ):
            if getattr(args, flag, False):
                o[key] = True
    elif name == "span_f1":
        if getattr(args, "tag_mode", None):
            o["mode"] = args.tag_mode
        if getattr(args, "tag_scheme", None):
            o["scheme"] = args.tag_scheme
    return o


@dataclass(frozen=True, eq=False)
class TextScores:
    """Scores of the files and what the board and the report need.

    Attributes
    ----------
    scores : list of EntryScore
    metric : Metric
        The registry metric with the options' finalizer (so boards and tests finalize as scored).
    text_metric : TextMetric
    item_statistics : list of ndarray (N, m)
    n_items : int
    groups : list of str or None
        Document of each segment when resampling by document.
    documents : list of str or None
        Documents named by the truth (even with ``--by-segment``).
    signature : str
        The field's signature of the metric (sacreBLEU's for BLEU/chrF/TER).
    notes : list of str
    """

    scores: list[EntryScore]
    metric: Metric
    text_metric: TextMetric
    item_statistics: list[NDArray[np.float64]]
    n_items: int
    groups: list[str] | None
    documents: list[str] | None
    signature: str
    notes: list[str]
    n_refs: int = 1


def score_text(args: argparse.Namespace, metric: Metric, names: list[str], *, jackknife: bool) -> TextScores:
    """Read ``--truth`` (repeated for several references) and the files of a text metric and score them."""
    try:
        tm = text_metric(metric.name, **_options(args, metric.name))
    except ValueError as exc:
        raise InputError(str(exc), file=args.truth) from None
    paths = [args.truth, *getattr(args, "more_truth", [])]
    fmt = getattr(args, "text_format", None)
    if metric.name == "span_f1":
        if len(paths) != 1:
            raise InputError("span F1 reads one CoNLL truth file", file=paths[1])
        tags = read_tag_truth(paths[0])
        types = tags.types()
        stats = [
            tm.span_statistics(tags.tags, read_tag_predictions(p, tags), types=types).matrix for p in names
        ]
        documents: list[str] | None = tags.documents if len(set(tags.documents)) > 1 else None
        n_refs, n_items = 1, len(tags.tags)
    else:
        truth = read_text_truth(paths, fmt=fmt)
        if metric.name in ("wer", "cer") and truth.n_refs != 1:
            raise InputError(f"{metric.name.upper()} takes one reference per segment", file=truth.name)
        stats = []
        for path in names:
            hyps = read_hypotheses(path, truth, fmt=fmt)
            stats.append(tm.statistics(hyps, truth.references).matrix)
        documents = truth.documents
        n_refs, n_items = truth.n_refs, len(truth.ids)
    configured = tm.registry_metric()
    groups = None if documents is None or getattr(args, "by_segment", False) else documents
    scores = score_item_statistics(
        stats,
        metric=configured,
        names=names,
        resamples=args.resamples,
        seed=args.seed,
        groups=groups,
        jackknife=jackknife,
    )
    signature = tm.signature(n_refs)
    scores = [dataclasses.replace(s, signature=s.signature.with_extra(text=signature)) for s in scores]
    notes = [f"{metric.name}: {signature}"]
    if groups is not None:
        notes.append(f"resampled by document ({len(set(groups))} documents; --by-segment resamples segments)")
    return TextScores(scores, configured, tm, stats, n_items, groups, documents, signature, notes, n_refs)


def text_report(
    args: argparse.Namespace, text: TextScores, names: list[str], leader: str | None
) -> dict[str, Any]:
    """Text-specific findings for the leaderboard: the brevity-penalty warnings (BLEU, each entry against
    the leader), the design effects (when the truth names documents) and sacreBLEU's paired test
    (``--convention sacrebleu``)."""
    from stats.text.significance import (
        brevity_check,
        design_effects,
        sacrebleu_paired_ar,
        sacrebleu_paired_bs,
    )

    report: dict[str, Any] = {"signature": text.signature, "warnings": []}
    lead = names.index(leader) if leader in names else 0
    if text.text_metric.name == "bleu" and len(names) > 1:
        for j, name in enumerate(names):
            if j == lead:
                continue
            check = brevity_check(
                [text.item_statistics[lead], text.item_statistics[j]],
                names=(names[lead], name),
                seed=args.seed,
                groups=text.groups,
            )
            if check.warning:
                report["warnings"].append(check.warning)
    if text.documents is not None and len(set(text.documents)) >= 2:
        de = design_effects(
            text.item_statistics,
            finalize=text.metric.finalize,
            documents=text.documents,
            reference=lead,
            seed=args.seed,
        )
        report["design_effect"] = {
            "documents": de.documents,
            "value": dict(zip(names, np.round(de.values, 3).tolist(), strict=True)),
            "difference_to_leader": dict(zip(names, np.round(de.differences, 3).tolist(), strict=True)),
        }
    if getattr(args, "convention", "board") == "sacrebleu":
        if text.text_metric.name not in ("bleu", "chrf", "chrf++", "ter"):
            raise ValueError("--convention sacrebleu applies to bleu, chrf, chrf++ and ter")
        bs = args.paired_test == "bs"
        n = args.paired_samples or (1000 if bs else 10_000)
        fn = sacrebleu_paired_bs if bs else sacrebleu_paired_ar
        res = fn(
            text.item_statistics, text.text_metric, n_samples=n, seed=args.sacrebleu_seed, n_refs=text.n_refs
        )
        report["sacrebleu"] = {
            "test": res.test,
            "baseline": names[0],
            "signature": res.signature,
            "systems": [
                {
                    "name": name,
                    "score": float(res.scores[j]),
                    "p_value": None if j == 0 else float(res.p_values[j]),
                    **(
                        {"mean": float(res.means[j]), "ci": float(res.cis[j])}
                        if res.means is not None and res.cis is not None and j > 0
                        else {}
                    ),
                }
                for j, name in enumerate(names)
            ],
            "note": "sacreBLEU counts strictly '>': a system identical to the baseline gets p = 1/(n + 1)",
        }
    return report
