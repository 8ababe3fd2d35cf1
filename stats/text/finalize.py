"""Vectorised finalizers of the text metrics: pooled per-segment statistics -> corpus values.

Every function takes ``pooled`` of shape ``(..., m)``: the sum (``S.sum(axis=0)``) or weighted sums
(``W @ S``) of per-segment statistics whose last column is the segment count, and returns the corpus
value for every leading index. The columns before the count follow sacreBLEU 2.6.0's segment statistics
(``sacrebleu.metrics.*._extract_corpus_statistics``):

========  ============================================================================================
BLEU      ``hyp_len, ref_len, correct_1..n, total_1..n`` (``ref_len``: the closest reference's length)
chrF      ``[hyp, ref, match]`` per order: ``char_order`` character orders, then ``word_order`` word orders
TER       ``num_edits, avg_ref_len`` (fewest edits over the references, mean reference length)
WER/CER   ``edits, ref_len`` (jiwer's substitutions + deletions + insertions, reference words/characters)
span F1   ``[tp, n_pred, n_gold]`` per entity type (the last type collects predicted types the truth lacks)
========  ============================================================================================

The arithmetic follows sacreBLEU's own order of operations (``BLEU.compute_bleu``,
``CHRF._compute_f_score``, ``TER._compute_score_from_stats``), so a finalized value equals sacreBLEU's
``corpus_score`` of the same corpus; a resample is a corpus in which segments appear as many times as
their weight, so every replicate is a corpus score exactly. With ``libm=True`` the logarithms and
exponentials go through Python's :mod:`math` (the C library) as sacreBLEU's do, instead of numpy's
vectorised ones, which may differ in the last bit; :mod:`stats.text.significance` uses it to reproduce
sacreBLEU's p-values bit for bit. This module imports numpy only (no sacreBLEU), so the metric registry
can import it cheaply.

References
----------
.. [1] Papineni, K., Roukos, S., Ward, T. and Zhu, W.-J. (2002). BLEU: a method for automatic evaluation
       of machine translation. ACL.
.. [2] Chen, B. and Cherry, C. (2014). A systematic comparison of smoothing techniques for sentence-level
       BLEU. WMT (the ``floor``, ``add-k`` and ``exp`` smoothing methods).
.. [3] Popovic, M. (2015, 2017). chrF: character n-gram F-score; chrF++: words helping character n-grams.
.. [4] Snover, M. et al. (2006). A study of translation edit rate with targeted human annotation. AMTA.
.. [5] Post, M. (2018). A call for clarity in reporting BLEU scores. WMT.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "SMOOTH_DEFAULTS",
    "bleu_finalize",
    "brevity_ratio",
    "chrf_finalize",
    "per_type_f1",
    "rate_finalize",
    "span_f1_finalize",
    "ter_finalize",
]

FloatArray = NDArray[np.float64]

#: sacreBLEU's default smoothing values (``BLEU.SMOOTH_DEFAULTS``).
SMOOTH_DEFAULTS: dict[str, float | None] = {"none": None, "floor": 0.1, "add-k": 1, "exp": None}
#: sacreBLEU's ``my_log(0)``: a zero precision makes BLEU exactly 0.
_LOG_ZERO = -9999999999.0
_MATH_LOG = np.frompyfunc(math.log, 1, 1)
_MATH_EXP = np.frompyfunc(math.exp, 1, 1)


def _exp(x: FloatArray, libm: bool) -> FloatArray:
    if not libm:
        return np.exp(x)
    return np.asarray(_MATH_EXP(np.asarray(x, dtype=np.float64)), dtype=np.float64)


def _log(x: FloatArray, libm: bool) -> FloatArray:
    if not libm:
        return np.log(x)
    return np.asarray(_MATH_LOG(np.asarray(x, dtype=np.float64)), dtype=np.float64)


def _ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def bleu_finalize(
    pooled: ArrayLike,
    *,
    max_order: int = 4,
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = False,
    libm: bool = False,
    float32: bool = False,
) -> FloatArray:
    """Corpus BLEU (0-100) from pooled ``[hyp_len, ref_len, correct_1..n, total_1..n, count]``.

    ``BP * exp(mean_n log p_n)`` with ``BP = exp(1 - R/H)`` when ``H < R`` (0 when ``H = 0``); no match at
    any order gives exactly 0; an order with no hypothesis n-gram ends the orders (its precision, and
    those after it, count as 0 unless ``effective_order``). Smoothing as sacreBLEU: ``exp`` (the k-th
    order without a match gets ``100 / (2^k total)``), ``floor`` (``100 * value / total``), ``add-k``
    (``value`` added to matches and totals of orders above 1), ``none``.

    ``float32=True`` computes the precisions in float32 from float32 sums, as sacreBLEU's paired
    bootstrap does (its statistics are a float32 array there).

    Examples
    --------
    >>> import numpy as np
    >>> # 6 words against 6; matches 5/6, 3/5, 2/4, 1/3
    >>> float(bleu_finalize(np.array([6, 6, 5, 3, 2, 1, 6, 5, 4, 3, 1.0])).round(4))
    53.7285
    """
    p = np.asarray(pooled, dtype=np.float64)
    n = max_order
    if p.shape[-1] != 2 * n + 3:
        raise ValueError(f"BLEU statistics of order {n} have {2 * n + 3} columns, got {p.shape[-1]}.")
    if smooth_method not in SMOOTH_DEFAULTS:
        raise ValueError(f"`smooth_method` must be one of {sorted(SMOOTH_DEFAULTS)}, got {smooth_method!r}.")
    value = SMOOTH_DEFAULTS[smooth_method] if smooth_value is None else smooth_value
    hyp, ref = p[..., 0], p[..., 1]
    ftype: Any = np.float32 if float32 else np.float64
    correct = p[..., 2 : 2 + n].astype(ftype)
    total = p[..., 2 + n : 2 + 2 * n].astype(ftype)
    any_match = np.any(correct != 0, axis=-1)
    if smooth_method == "add-k":
        correct = correct.copy()
        total = total.copy()
        correct[..., 1:] += ftype(value)
        total[..., 1:] += ftype(value)
    alive = np.cumprod(total != 0, axis=-1).astype(bool)  # orders reached before `total == 0` breaks
    zero = (correct == 0) & alive
    hundred = ftype(100.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = (hundred * correct) / total
        if smooth_method == "exp":
            k = np.cumsum(zero, axis=-1).astype(ftype)
            prec = np.where(zero, hundred / (ftype(2.0) ** k * total), prec)
        elif smooth_method == "floor":
            prec = np.where(zero, ftype(100.0 * float(value or 0.0)) / total, prec)
        else:
            prec = np.where(zero, ftype(0.0), prec)
    prec = np.where(alive, prec, ftype(0.0)).astype(np.float64)
    if effective_order:
        reached = alive.sum(axis=-1)
        eff = np.where(reached > 0, reached, n).astype(np.float64)
    else:
        eff = np.full(hyp.shape, float(n))
    positive = prec > 0
    logs = np.full(prec.shape, _LOG_ZERO)
    logs[positive] = _log(prec[positive], libm)
    total_log = np.zeros(hyp.shape)
    for i in range(n):  # Python's sum over the orders, in order
        total_log = total_log + np.where(i < eff, logs[..., i], 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        shorter = (hyp < ref) & (hyp > 0)
        bp = np.ones(hyp.shape)
        bp[shorter] = _exp(1.0 - ref[shorter] / hyp[shorter], libm)
        bp = np.where((hyp < ref) & (hyp <= 0), 0.0, bp)
    score = bp * _exp(total_log / eff, libm)
    return np.where(any_match, score, 0.0)


def brevity_ratio(pooled: ArrayLike) -> FloatArray:
    """Pooled hypothesis length over pooled closest-reference length (BLEU statistics); NaN when the
    references are empty. Below 1 the brevity penalty applies."""
    p = np.asarray(pooled, dtype=np.float64)
    return _ratio(p[..., 0], p[..., 1])


def chrf_finalize(
    pooled: ArrayLike,
    *,
    char_order: int = 6,
    word_order: int = 0,
    beta: int = 2,
    eps_smoothing: bool = False,
    float32: bool = False,
) -> FloatArray:
    """Corpus chrF / chrF++ (0-100) from pooled ``[hyp, ref, match]`` triples per order (+ count).

    Default (sacreBLEU >= 2.0): precision and recall averaged over the orders where both the hypothesis
    and the reference have n-grams, then one F-beta; 0 when no order qualifies or both averages are 0.
    ``eps_smoothing=True`` (chrF++.py, Moses, NLTK): the mean over all orders of per-order F-beta, with
    ``1e-16`` for an empty side.

    Examples
    --------
    >>> import numpy as np
    >>> # one order: 4 hypothesis n-grams, 5 reference n-grams, 3 matches
    >>> float(chrf_finalize(np.array([4, 5, 3, 1.0]), char_order=1).round(4))
    62.5
    """
    p = np.asarray(pooled, dtype=np.float64)
    order = char_order + word_order
    if p.shape[-1] != 3 * order + 1:
        raise ValueError(
            f"chrF statistics of {order} orders have {3 * order + 1} columns, got {p.shape[-1]}."
        )
    ftype: Any = np.float32 if float32 else np.float64
    stats = p[..., :-1].astype(ftype)
    factor = ftype(beta**2)
    shape = p.shape[:-1]
    eps = 1e-16
    if eps_smoothing:
        score = np.zeros(shape)
        for i in range(order):
            n_hyp, n_ref, n_match = (stats[..., 3 * i + j].astype(np.float64) for j in range(3))
            with np.errstate(divide="ignore", invalid="ignore"):
                prec = np.where(n_hyp > 0, n_match / n_hyp, eps)
                rec = np.where(n_ref > 0, n_match / n_ref, eps)
                denom = float(factor) * prec + rec
                score = score + np.where(denom > 0, (1 + float(factor)) * prec * rec / denom, eps)
        return 100 * score / order
    avg_prec = np.zeros(shape, dtype=ftype)
    avg_rec = np.zeros(shape, dtype=ftype)
    effective = np.zeros(shape, dtype=np.int64)
    for i in range(order):
        n_hyp, n_ref, n_match = stats[..., 3 * i], stats[..., 3 * i + 1], stats[..., 3 * i + 2]
        both = (n_hyp > 0) & (n_ref > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            avg_prec = np.where(both, avg_prec + n_match / n_hyp, avg_prec)
            avg_rec = np.where(both, avg_rec + n_match / n_ref, avg_rec)
        effective += both
    with np.errstate(divide="ignore", invalid="ignore"):
        avg_prec = np.where(effective > 0, avg_prec / effective.astype(ftype), ftype(0.0))
        avg_rec = np.where(effective > 0, avg_rec / effective.astype(ftype), ftype(0.0))
        score = (ftype(1) + factor) * avg_prec * avg_rec
        score = score / ((factor * avg_prec) + avg_rec)
        score = ftype(100) * score
    return np.where(avg_prec + avg_rec != 0, score, ftype(0.0)).astype(np.float64)


def ter_finalize(pooled: ArrayLike, *, float32: bool = False) -> FloatArray:
    """Corpus TER (0-100, lower is better) from pooled ``[num_edits, avg_ref_len, count]``.

    ``100 * edits / ref_len``; with empty references, 100 if the hypotheses have words, else 0
    (sacreBLEU's rule).

    Examples
    --------
    >>> float(ter_finalize([1.0, 8.0, 1.0]))
    12.5
    """
    p = np.asarray(pooled, dtype=np.float64)
    if p.shape[-1] != 3:
        raise ValueError(f"TER statistics have 3 columns, got {p.shape[-1]}.")
    ftype: Any = np.float32 if float32 else np.float64
    edits, ref = p[..., 0].astype(ftype), p[..., 1].astype(ftype)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = edits / ref
    score = ftype(100) * rate
    empty = np.where(edits > 0, 100.0, 0.0)
    return np.where(ref > 0, score.astype(np.float64), empty)


def rate_finalize(pooled: ArrayLike) -> FloatArray:
    """WER or CER (a fraction, as jiwer reports it; lower is better) from ``[edits, ref_len, count]``:
    pooled edits over pooled reference words (characters); NaN when every reference is empty."""
    p = np.asarray(pooled, dtype=np.float64)
    if p.shape[-1] != 3:
        raise ValueError(f"WER/CER statistics have 3 columns, got {p.shape[-1]}.")
    return _ratio(p[..., 0], p[..., 1])


def per_type_f1(pooled: ArrayLike) -> FloatArray:
    """F1 of every entity type from pooled ``[tp, n_pred, n_gold] x T + count`` -> ``(..., T)``;
    ``2 tp / (n_pred + n_gold)``, NaN for a type neither predicted nor in the truth."""
    p = np.asarray(pooled, dtype=np.float64)[..., :-1]
    if p.shape[-1] % 3:
        raise ValueError("span statistics have 3 columns per type and a count column.")
    tp, pred, gold = p[..., 0::3], p[..., 1::3], p[..., 2::3]
    return _ratio(2.0 * tp, pred + gold)


def span_f1_finalize(pooled: ArrayLike) -> FloatArray:
    """Micro span F1 (a fraction) from ``[tp, n_pred, n_gold] x T + count``: ``2 TP / (P + G)`` over all
    types (CoNLL's FB1 / 100, seqeval's ``f1_score``); NaN when there is no entity on either side.

    Examples
    --------
    >>> float(span_f1_finalize([3, 4, 5, 1, 1, 1, 1.0]))  # TP 4, P 5, G 6
    0.7272727272727273
    """
    p = np.asarray(pooled, dtype=np.float64)[..., :-1]
    if p.shape[-1] % 3:
        raise ValueError("span statistics have 3 columns per type and a count column.")
    return _ratio(2.0 * p[..., 0::3].sum(axis=-1), p[..., 1::3].sum(axis=-1) + p[..., 2::3].sum(axis=-1))
