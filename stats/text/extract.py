"""Per-segment sufficient statistics of the text metrics, from the field's own libraries.

BLEU, chrF, chrF++ and TER come from sacreBLEU 2.6.0 (pinned in pyproject.toml): its tokenizers and
its segment statistics, so the numbers and the signatures are the field's. TER's segment statistics
are sacreBLEU's algorithm compiled with numba (:mod:`stats.text.ter`, 40 times less CPU than its pure
Python), equal to sacreBLEU's on every segment tested and checked against them on a sample of
segments at every extraction. The statistics come from a
private method, ``Metric._extract_corpus_statistics``; ``tests/stats/test_text.py`` pins its column
layout, and every extraction here (unless ``verify=False``) checks the finalized point value against
sacreBLEU's public ``corpus_score`` of the same corpus, so a change of that method fails loudly instead
of scoring wrongly.

WER and CER come from jiwer 4.0.0 at run time (pinned): its alignment (``process_words`` /
``process_characters``, RapidFuzz underneath) gives each segment's substitutions, deletions and
insertions, and jiwer's default transforms define words and characters, so a corpus WER here is
``jiwer.wer`` of the same corpus. Nothing is normalised beyond jiwer's defaults (case and punctuation
count); say so when reporting.

Span F1 for entity tagging: entity chunks from :mod:`stats.text.tagging` under a named convention:
``conlleval`` mode reads chunks as the CoNLL-2000 ``conlleval`` script does (``I-X`` after ``O`` opens a
chunk; seqeval's default), ``strict`` mode only accepts chunks well formed in the named scheme (seqeval's
``mode="strict"``). seqeval 1.2.2 is the test oracle of both.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from stats.text import finalize as fin
from stats.text.tagging import STRICT_SCHEMES, chunks

__all__ = [
    "TAGGING_MODES",
    "TAGGING_SCHEMES",
    "TOKENIZERS",
    "TextMetric",
    "TextStatistics",
    "available_tokenizers",
    "text_metric",
]

FloatArray = NDArray[np.float64]

#: sacreBLEU's tokenizers that work offline; ``ja-mecab`` and ``ko-mecab`` need extra packages
#: (``sacrebleu[ja]``, ``sacrebleu[ko]``) and are refused with a clear message when those are missing.
TOKENIZERS = ("13a", "intl", "char", "zh", "none", "ja-mecab", "ko-mecab")
TAGGING_SCHEMES = STRICT_SCHEMES
TAGGING_MODES = ("conlleval", "strict")
#: Relative tolerance of the check against sacreBLEU's ``corpus_score`` (the arithmetic is the same;
#: numpy's vectorised exp and log may differ from the C library's in the last bit).
VERIFY_RTOL = 1e-9
#: Segments checked by ``verify="sample"``.
VERIFY_SAMPLE = 256
#: Segments checked by ``verify="sample"`` for TER: sacreBLEU's pure-Python TER costs about 10 ms a
#: segment, and each checked segment is scored by it twice (its rows, its ``corpus_score``).
VERIFY_SAMPLE_TER = 64

_BLEU_NAMES = ("bleu",)
_CHRF_NAMES = ("chrf", "chrf++")
_SACREBLEU_NAMES = ("bleu", "chrf", "chrf++", "ter")
_RATE_NAMES = ("wer", "cer")
NAMES = (*_SACREBLEU_NAMES, *_RATE_NAMES, "span_f1")


@dataclass(frozen=True)
class TextMetric:
    """A text metric with its options: what extracts the statistics and what finalizes them.

    Build one with :func:`text_metric`; the registry's ``bleu``, ``chrf``, ``chrf++``, ``ter``, ``wer``,
    ``cer`` and ``span_f1`` are these with sacreBLEU's (jiwer's, seqeval's) defaults.

    Attributes
    ----------
    name : str
        Registry name.
    options : tuple of (str, object)
        The options that differ from the defaults, sorted (see :func:`text_metric`).
    """

    name: str
    options: tuple[tuple[str, Any], ...] = ()
    _opts: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # -- options ------------------------------------------------------------------------------------
    def option(self, key: str) -> Any:
        return self._opts[key]

    @property
    def higher_is_better(self) -> bool:
        return self.name not in ("ter", "wer", "cer")

    @property
    def scale(self) -> str:
        """``"0-100"`` (sacreBLEU's metrics) or ``"fraction"`` (WER, CER, span F1)."""
        return "0-100" if self.name in _SACREBLEU_NAMES else "fraction"

    def finalize(self, pooled: Any, *, libm: bool = False, float32: bool = False) -> FloatArray:
        """Corpus values from pooled statistics ``(..., m)`` (see :mod:`stats.text.finalize`)."""
        o = self._opts
        if self.name == "bleu":
            return fin.bleu_finalize(
                pooled,
                max_order=o["max_ngram_order"],
                smooth_method=o["smooth_method"],
                smooth_value=o["smooth_value"],
                effective_order=o["effective_order"],
                libm=libm,
                float32=float32,
            )
        if self.name in _CHRF_NAMES:
            return fin.chrf_finalize(
                pooled,
                char_order=o["char_order"],
                word_order=o["word_order"],
                beta=o["beta"],
                eps_smoothing=o["eps_smoothing"],
                float32=float32,
            )
        if self.name == "ter":
            return fin.ter_finalize(pooled, float32=float32)
        if self.name in _RATE_NAMES:
            return fin.rate_finalize(pooled)
        return fin.span_f1_finalize(pooled)

    def registry_metric(self) -> Any:
        """The registry's :class:`stats.metrics.Metric` of this name with this metric's finalizer (its
        options), for :func:`stats.engine.score_item_statistics` and :func:`stats.board.build_board`."""
        import dataclasses

        from stats.metrics import get_metric

        return dataclasses.replace(get_metric(self.name), _finalize=self.finalize)

    # -- sacreBLEU ----------------------------------------------------------------------------------
    def sacrebleu(self) -> Any:
        """A fresh sacreBLEU metric object with these options (BLEU, chrF, chrF++, TER)."""
        import sacrebleu

        o = self._opts
        if self.name == "bleu":
            return sacrebleu.BLEU(
                lowercase=o["lowercase"],
                tokenize=o["tokenize"],
                smooth_method=o["smooth_method"],
                smooth_value=o["smooth_value"],
                max_ngram_order=o["max_ngram_order"],
                effective_order=o["effective_order"],
                force=True,
            )
        if self.name in _CHRF_NAMES:
            return sacrebleu.CHRF(
                char_order=o["char_order"],
                word_order=o["word_order"],
                beta=o["beta"],
                lowercase=o["lowercase"],
                whitespace=o["whitespace"],
                eps_smoothing=o["eps_smoothing"],
            )
        if self.name == "ter":
            return sacrebleu.TER(
                normalized=o["normalized"],
                no_punct=o["no_punct"],
                asian_support=o["asian_support"],
                case_sensitive=o["case_sensitive"],
            )
        raise TypeError(f"`{self.name}` is not a sacreBLEU metric.")

    def signature(self, n_refs: int) -> str:
        """The field's signature of the metric (sacreBLEU's for BLEU/chrF/TER), e.g.
        ``nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0``."""
        if self.name in _SACREBLEU_NAMES:
            m = self.sacrebleu()
            m.num_refs = n_refs
            return str(m.get_signature())
        if self.name in _RATE_NAMES:
            from importlib.metadata import version

            unit = "word" if self.name == "wer" else "char"
            return f"nrefs:1|unit:{unit}|norm:jiwer-default|version:jiwer-{version('jiwer')}"
        mode = self._opts["mode"]
        return f"mode:{mode}" + (f"|scheme:{self._opts['scheme']}" if mode == "strict" else "")

    # -- statistics ---------------------------------------------------------------------------------
    def statistics(
        self,
        hypotheses: Sequence[str],
        references: Sequence[Sequence[str | None]],
        *,
        verify: bool | str = True,
        workers: int = 1,
    ) -> TextStatistics:
        """Per-segment statistics ``S`` (N x m, last column the segment count) of one system.

        Parameters
        ----------
        hypotheses : sequence of str, length N
            One segment per item.
        references : sequence of reference streams
            ``references[r][i]`` is reference ``r`` of segment ``i`` (sacreBLEU's layout); ``None`` where a
            segment has fewer references. WER and CER take exactly one stream.
        verify : bool or "sample", default True
            ``True``: compare the finalized point value with sacreBLEU's (jiwer's) public corpus score of
            the whole corpus and raise ``RuntimeError`` if they differ (this scores the corpus twice).
            ``"sample"``: the same check on a fixed sample of :data:`VERIFY_SAMPLE` segments
            (:data:`VERIFY_SAMPLE_TER` for TER; checks the layout and the finalizer at a fraction of the
            cost). ``False``: no check. TER's rows come from the compiled :mod:`stats.text.ter`; every
            check of TER also compares the checked segments' rows with sacreBLEU's own, exactly.
        workers : int, default 1
            Processes extracting the statistics in contiguous blocks of segments (segment statistics are
            independent of each other, so the rows are the same).

        Returns
        -------
        TextStatistics
        """
        hyps = [str(h) for h in hypotheses]
        refs = [list(stream) for stream in references]
        if not refs or any(len(stream) != len(hyps) for stream in refs):
            raise ValueError("every reference stream must hold one segment per hypothesis.")
        if not hyps:
            raise ValueError("`hypotheses` must not be empty.")
        if verify not in (True, False, "sample"):
            raise ValueError("`verify` must be True, False or 'sample'.")
        if self.name in _SACREBLEU_NAMES:
            s = _parallel(self, hyps, refs, workers)
        elif self.name in _RATE_NAMES:
            if len(refs) != 1:
                raise ValueError(f"{self.name.upper()} takes one reference per segment, got {len(refs)}.")
            refs = [[r if r is not None else "" for r in refs[0]]]
            s = _rate_statistics(hyps, [str(r) for r in refs[0]], chars=self.name == "cer")
        else:
            raise TypeError("span F1 reads tag sequences: use `span_statistics`.")
        if verify:
            self._check(s, hyps, refs, whole=verify is True)
        return TextStatistics(self, s)

    def _check(self, s: FloatArray, hyps: list[str], refs: list[list[str | None]], *, whole: bool) -> None:
        """The library's corpus score of the checked segments (all, or a fixed sample) against the value
        finalized from their rows; for TER, also the rows against sacreBLEU's own, exactly."""
        rows = np.arange(len(hyps))
        sample = VERIFY_SAMPLE_TER if self.name == "ter" else VERIFY_SAMPLE
        if not whole and len(hyps) > sample:
            rows = np.unique(np.linspace(0, len(hyps) - 1, sample).round().astype(int))
        sub_h = [hyps[i] for i in rows]
        sub_r = [[stream[i] for i in rows] for stream in refs]
        if self.name == "ter":
            _verify_ter_rows(self, s[rows], sub_h, sub_r)
        expected = self.library_score(sub_h, sub_r)
        if expected is not None:
            _verify(self, s[rows], expected)

    def library_score(
        self, hypotheses: Sequence[str], references: Sequence[Sequence[str | None]]
    ) -> float | None:
        """The corpus score by the library's public API: sacreBLEU's ``corpus_score``, ``jiwer.wer`` or
        ``jiwer.cer``; None where it is undefined (WER of empty references)."""
        hyps, refs = list(hypotheses), [list(r) for r in references]
        if self.name in _SACREBLEU_NAMES:
            return float(self.sacrebleu().corpus_score(hyps, refs).score)
        import jiwer

        ref0 = [str(r) if r is not None else "" for r in refs[0]]
        if not any(r.strip() for r in ref0):
            return None
        return float((jiwer.cer if self.name == "cer" else jiwer.wer)(ref0, hyps))

    def span_statistics(
        self, truth: Sequence[Sequence[str]], prediction: Sequence[Sequence[str]], *, types: Sequence[str]
    ) -> TextStatistics:
        """Per-sentence ``[tp, n_pred, n_gold]`` per entity type (``types`` plus one column for predicted
        types absent from ``types``) and the count, from tag sequences aligned token by token."""
        if self.name != "span_f1":
            raise TypeError(f"`{self.name}` does not read tag sequences.")
        if len(truth) != len(prediction):
            raise ValueError(f"truth has {len(truth)} sentences, prediction {len(prediction)}.")
        index = {t: k for k, t in enumerate(types)}
        t = len(types) + 1
        s = np.zeros((len(truth), 3 * t + 1))
        s[:, -1] = 1.0
        for i, (gold_tags, pred_tags) in enumerate(zip(truth, prediction, strict=True)):
            if len(gold_tags) != len(pred_tags):
                raise ValueError(f"sentence {i + 1}: {len(gold_tags)} gold tags, {len(pred_tags)} predicted.")
            gold = self._chunks(gold_tags)
            pred = self._chunks(pred_tags)
            for typ, _, _ in gold:
                s[i, 3 * index.get(typ, t - 1) + 2] += 1
            for typ, _, _ in pred:
                s[i, 3 * index.get(typ, t - 1) + 1] += 1
            for typ, _, _ in gold & pred:
                s[i, 3 * index.get(typ, t - 1)] += 1
        return TextStatistics(self, s, types=(*types, "(not in truth)"))

    def _chunks(self, tags: Sequence[str]) -> set[tuple[str, int, int]]:
        return chunks(tags, mode=self._opts["mode"], scheme=self._opts["scheme"])


@dataclass(frozen=True, eq=False)
class TextStatistics:
    """One system's per-segment statistics and the metric that reads them.

    Attributes
    ----------
    metric : TextMetric
    matrix : ndarray, shape (N, m)
        Rows in segment order; the last column is 1.0 (the segment count).
    types : tuple of str or None
        For span F1: the entity type of each ``[tp, n_pred, n_gold]`` triple.
    """

    metric: TextMetric
    matrix: FloatArray
    types: tuple[str, ...] | None = None

    @property
    def value(self) -> float:
        """The corpus value (every segment weight 1)."""
        return float(self.metric.finalize(self.matrix.sum(axis=0)))


def _verify(metric: TextMetric, s: FloatArray, expected: float) -> None:
    got = float(metric.finalize(s.sum(axis=0)))
    if not math.isclose(got, expected, rel_tol=VERIFY_RTOL, abs_tol=1e-12):
        raise RuntimeError(
            f"{metric.name}: the value finalized from the segment statistics ({got!r}) differs from the "
            f"library's corpus score ({expected!r}); the pinned statistics layout no longer holds"
        )


def _extract_block(metric: TextMetric, hyps: list[str], refs: list[list[str | None]]) -> FloatArray:
    if metric.name == "ter":  # sacreBLEU's algorithm compiled (stats.text.ter), its rows exactly
        from stats.text.ter import ter_statistics  # numba loads on the first TER only

        return ter_statistics(metric.sacrebleu(), hyps, refs)
    return _sacrebleu_block(metric, hyps, refs)


def _sacrebleu_block(metric: TextMetric, hyps: list[str], refs: list[list[str | None]]) -> FloatArray:
    rows = metric.sacrebleu()._extract_corpus_statistics(hyps, refs)  # private: layout pinned by a test
    return np.asarray(rows, dtype=np.float64).reshape(len(hyps), -1)


def _verify_ter_rows(
    metric: TextMetric, s: FloatArray, hyps: list[str], refs: list[list[str | None]]
) -> None:
    """The compiled TER's rows against sacreBLEU's own statistics of the same segments, exactly."""
    expected = _sacrebleu_block(metric, hyps, refs)
    bad = np.flatnonzero((s[:, :2] != expected).any(axis=1))
    if bad.size:
        raise RuntimeError(
            f"ter: the compiled statistics of {bad.size} checked segment(s) differ from sacreBLEU's "
            f"(first: {s[bad[0], :2].tolist()} against {expected[bad[0]].tolist()})"
        )


def _parallel(metric: TextMetric, hyps: list[str], refs: list[list[str | None]], workers: int) -> FloatArray:
    n = len(hyps)
    workers = max(1, min(int(workers), n))
    if workers == 1:
        s = _extract_block(metric, hyps, refs)
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        bounds = np.linspace(0, n, workers + 1).round().astype(int)
        jobs = [(int(a), int(b)) for a, b in itertools.pairwise(bounds.tolist()) if b > a]
        with ProcessPoolExecutor(len(jobs), mp_context=multiprocessing.get_context("fork")) as pool:
            parts = pool.map(
                _extract_block,
                [metric] * len(jobs),
                [hyps[a:b] for a, b in jobs],
                [[stream[a:b] for stream in refs] for a, b in jobs],
            )
            s = np.concatenate(list(parts))
    return np.column_stack([s, np.ones(n)])


def _rate_statistics(hyps: list[str], refs: list[str], *, chars: bool) -> FloatArray:
    """``[edits, ref_len, 1]`` per segment from jiwer's alignment (S + D + I, reference length)."""
    import jiwer

    s = np.zeros((len(hyps), 3))
    s[:, 2] = 1.0
    idx = [i for i, r in enumerate(refs) if r.strip()]
    # an empty reference: every hypothesis unit is an insertion (jiwer's alignment of an empty reference)
    for i, (r, h) in enumerate(zip(refs, hyps, strict=True)):
        if not r.strip():
            s[i, 0] = float(len(list(h.strip()) if chars else h.split()))
    if idx:
        process = jiwer.process_characters if chars else jiwer.process_words
        out = process([refs[i] for i in idx], [hyps[i] for i in idx])
        for row, chunks, ref_units in zip(idx, out.alignments, out.references, strict=True):
            edits = 0
            for c in chunks:
                if c.type == "substitute" or c.type == "delete":
                    edits += c.ref_end_idx - c.ref_start_idx
                elif c.type == "insert":
                    edits += c.hyp_end_idx - c.hyp_start_idx
            s[row, 0] = float(edits)
            s[row, 1] = float(len(ref_units))
    return s


_DEFAULTS: dict[str, dict[str, Any]] = {
    "bleu": {
        "tokenize": "13a",
        "lowercase": False,
        "smooth_method": "exp",
        "smooth_value": None,
        "max_ngram_order": 4,
        "effective_order": False,
    },
    "chrf": {
        "char_order": 6,
        "word_order": 0,
        "beta": 2,
        "lowercase": False,
        "whitespace": False,
        "eps_smoothing": False,
    },
    "ter": {"normalized": False, "no_punct": False, "asian_support": False, "case_sensitive": False},
    "wer": {},
    "cer": {},
    "span_f1": {"scheme": "IOB2", "mode": "conlleval"},
}
_DEFAULTS["chrf++"] = {**_DEFAULTS["chrf"], "word_order": 2}


def available_tokenizers() -> list[str]:
    """The BLEU tokenizers that work on this machine (``ja-mecab`` and ``ko-mecab`` need extras)."""
    import sacrebleu

    out = []
    for tok in TOKENIZERS:
        try:
            sacrebleu.BLEU(tokenize=tok)
        except Exception:  # sacreBLEU raises RuntimeError or ImportError for a missing extra
            continue
        out.append(tok)
    return out


def text_metric(name: str, **options: Any) -> TextMetric:
    """A text metric with sacreBLEU's (jiwer's, seqeval's) defaults overridden by ``options``.

    Parameters
    ----------
    name : {"bleu", "chrf", "chrf++", "ter", "wer", "cer", "span_f1"}
    **options
        BLEU: ``tokenize`` (``13a``, ``intl``, ``char``, ``zh``, ``none``, ``ja-mecab``/``ko-mecab`` where
        installed), ``lowercase``, ``smooth_method`` (``exp``, ``floor``, ``add-k``, ``none``),
        ``smooth_value``, ``max_ngram_order``, ``effective_order``. chrF/chrF++: ``char_order``,
        ``word_order``, ``beta``, ``lowercase``, ``whitespace``, ``eps_smoothing``. TER: ``normalized``,
        ``no_punct``, ``asian_support``, ``case_sensitive``. span F1: ``scheme`` (IOB2, IOBES, BILOU;
        strict mode only) and ``mode`` (``conlleval`` or ``strict``).

    Raises
    ------
    ValueError
        For an unknown metric, option or value, or a tokenizer this machine cannot run.

    Examples
    --------
    >>> m = text_metric("bleu", tokenize="intl")
    >>> m.signature(1)
    'nrefs:1|case:mixed|eff:no|tok:intl|smooth:exp|version:2.6.0'
    """
    if name not in _DEFAULTS:
        raise ValueError(f"`name` must be one of {sorted(_DEFAULTS)}, got {name!r}.")
    opts = dict(_DEFAULTS[name])
    unknown = set(options) - set(opts)
    if unknown:
        raise ValueError(f"unknown option(s) for {name}: {sorted(unknown)}; known: {sorted(opts)}.")
    opts.update(options)
    if name == "bleu":
        if opts["tokenize"] not in TOKENIZERS:
            raise ValueError(f"`tokenize` must be one of {list(TOKENIZERS)}, got {opts['tokenize']!r}.")
        if opts["smooth_method"] not in fin.SMOOTH_DEFAULTS:
            raise ValueError(f"`smooth_method` must be one of {sorted(fin.SMOOTH_DEFAULTS)}.")
        if opts["tokenize"] in ("ja-mecab", "ko-mecab") and opts["tokenize"] not in available_tokenizers():
            raise ValueError(
                f"the {opts['tokenize']} tokenizer needs sacreBLEU's extra packages (sacrebleu[ja] or "
                "sacrebleu[ko]), which are not installed here"
            )
    if name == "span_f1":
        if opts["scheme"] not in TAGGING_SCHEMES:
            raise ValueError(f"`scheme` must be one of {list(TAGGING_SCHEMES)}, got {opts['scheme']!r}.")
        if opts["mode"] not in TAGGING_MODES:
            raise ValueError(f"`mode` must be one of {list(TAGGING_MODES)}, got {opts['mode']!r}.")
    changed = tuple(sorted((k, v) for k, v in opts.items() if _DEFAULTS[name][k] != v))
    return TextMetric(name=name, options=changed, _opts=opts)
