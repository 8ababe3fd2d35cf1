"""sacreBLEU's TER segment statistics, compiled: the same algorithm as ``sacrebleu.metrics.lib_ter``.

sacreBLEU 2.6.0's TER (tercom's shifts over a beam edit distance) is pure Python, about 10 ms a segment:
31.8 s for a 3,000-segment system on this project's machine (docs/benchmarks.md), beyond the 10 s that
one submission's BLEU + chrF + TER extraction may take (issue 20). This module runs the same steps on
word ids with numba (pinned in pyproject.toml):

- the tokenization and the reference handling are sacreBLEU's own (``TER._cache_references`` and
  ``TER._preprocess_segment``, so case, punctuation and Asian support options apply unchanged);
- :func:`_edit_distance` is ``BeamEditDistance._edit_distance`` (the beam around the length-scaled
  diagonal, the same preference among no-op/substitution, deletion and insertion, the same trace); the
  prefix cache of ``BeamEditDistance`` only saves work (every hypothesis it sees has the same length,
  so a cached row equals a recomputed one) and is left out;
- :func:`_shift` is ``lib_ter._shift`` with ``_find_shifted_pairs`` inlined in its order (hypothesis
  start, reference start, growing length), the same filters, the same ranking of candidates (gain,
  length, earliest start, earliest target; the word lists sacreBLEU compares last are equal whenever the
  first four tie) and the same cap of 1,000 candidates per segment, counted across shifts and checked
  where sacreBLEU checks it;
- :func:`_translation_edit_rate` is ``lib_ter.translation_edit_rate`` (empty reference: every hypothesis
  word an edit, length 0), and the segment's statistics are ``TER._compute_segment_statistics``'s
  (fewest edits over the references, their average length).

Exactness is tested, not assumed: ``tests/stats/test_text_ter.py`` compares every segment of real and
synthetic corpora with sacreBLEU's statistics, and :meth:`stats.text.extract.TextMetric.statistics`
checks the rows of a fixed sample of segments against sacreBLEU's on every extraction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

__all__ = ["ter_statistics"]

# lib_ter's constants (sacreBLEU 2.6.0)
_MAX_SHIFT_SIZE = 10
_MAX_SHIFT_DIST = 50
_BEAM_WIDTH = 25
_MAX_SHIFT_CANDIDATES = 1000
_INF = np.int64(10**16)

# edit operations as lib_ter names them: ' ' (no-op), 's', 'i', 'd', 'x' (undefined)
_NOP = 0
_SUB = 1
_INS = 2
_DEL = 3
_UNDEF = 4


@njit(cache=True, nogil=True)
def _beam(n_h: int, n_r: int) -> Any:
    """The length ratio and the beam's half width (lib_ter widens it for very unequal lengths)."""
    length_ratio = n_r / n_h if n_h > 0 else 1.0
    if length_ratio / 2 > _BEAM_WIDTH:
        return length_ratio, int(np.ceil(length_ratio / 2 + _BEAM_WIDTH))
    return length_ratio, _BEAM_WIDTH


@njit(cache=True, nogil=True)
def _cell(h: Any, r: Any, dist: Any, ops: Any, i: int, j: int) -> None:
    """One cell: no-op/substitution, then deletion, then insertion, each kept only if strictly cheaper."""
    if j == 0:
        dist[i, 0] = dist[i - 1, 0] + 1
        ops[i, 0] = _DEL
        return
    same = h[i - 1] == r[j - 1]
    best = dist[i, j]
    op = ops[i, j]
    c = dist[i - 1, j - 1] + (0 if same else 1)
    if best > c:
        best = c
        op = _NOP if same else _SUB
    c = dist[i - 1, j] + 1
    if best > c:
        best = c
        op = _DEL
    c = dist[i, j - 1] + 1
    if best > c:
        best = c
        op = _INS
    dist[i, j] = best
    ops[i, j] = op


@njit(cache=True, nogil=True)
def _backtrace(ops: Any, n_h: int, n_r: int) -> Any:
    trace = np.empty(n_h + n_r, dtype=np.int8)
    k = n_h + n_r
    i = n_h
    j = n_r
    while i > 0 or j > 0:
        op = ops[i, j]
        k -= 1
        trace[k] = op
        if op in (_SUB, _NOP):
            i -= 1
            j -= 1
        elif op == _INS:
            j -= 1
        elif op == _DEL:
            i -= 1
        else:
            raise ValueError("TER: undefined operation in the edit-distance trace")
    return trace[k:]


@njit(cache=True, nogil=True)
def _edit_distance(h: Any, r: Any) -> Any:
    """``BeamEditDistance._edit_distance`` from scratch: the distance and the trace (ops, forward order)."""
    n_h = h.shape[0]
    n_r = r.shape[0]
    dist = np.full((n_h + 1, n_r + 1), _INF, dtype=np.int64)
    ops = np.full((n_h + 1, n_r + 1), _UNDEF, dtype=np.int8)
    for j in range(n_r + 1):
        dist[0, j] = j
        ops[0, j] = _INS
    length_ratio, beam_width = _beam(n_h, n_r)
    for i in range(1, n_h + 1):
        pseudo_diag = int(np.floor(i * length_ratio))
        min_j = max(0, pseudo_diag - beam_width)
        max_j = n_r + 1 if i == n_h else min(n_r + 1, pseudo_diag + beam_width)
        for j in range(min_j, max_j):
            _cell(h, r, dist, ops, i, j)
    return dist[n_h, n_r], _backtrace(ops, n_h, n_r)


@njit(cache=True, nogil=True)
def _distance(h: Any, r: Any) -> Any:
    d, _ = _edit_distance(h, r)
    return d


@njit(cache=True, nogil=True)
def _perform_shift(words: Any, start: int, length: int, target: int) -> Any:
    """``lib_ter._perform_shift`` (Python's clamped slices)."""
    n = words.shape[0]
    out = np.empty(n, dtype=words.dtype)
    k = 0
    if target < start:
        parts = ((0, target), (start, start + length), (target, start), (start + length, n))
    elif target > start + length:
        parts = ((0, start), (start + length, target), (start, start + length), (target, n))
    else:
        parts = ((0, start), (start + length, length + target), (start, start + length), (length + target, n))
    for a, b in parts:
        for t in range(min(max(a, 0), n), min(max(b, 0), n)):
            out[k] = words[t]
            k += 1
    if k != n:
        raise ValueError("TER: a shift changed the hypothesis length")
    return out


@njit(cache=True, nogil=True)
def _alignment(inv_trace: Any, n_h: int, n_r: int) -> Any:
    """``lib_ter._flip_trace`` then ``trace_to_alignment``: the hypothesis position aligned with each
    reference position (-1 before the first), and the error flags of both sides."""
    align = np.full(n_r, -1, dtype=np.int64)
    ref_err = np.zeros(n_r, dtype=np.int64)
    hyp_err = np.zeros(n_h, dtype=np.int64)
    pos_h = -1
    pos_r = -1
    for t in range(inv_trace.shape[0]):
        op = inv_trace[t]
        if op in (_NOP, _SUB):
            pos_h += 1
            pos_r += 1
            align[pos_r] = pos_h
            hyp_err[pos_h] = ref_err[pos_r] = 1 if op == _SUB else 0
        elif op == _DEL:  # flipped: an insertion (a hypothesis word)
            pos_h += 1
            hyp_err[pos_h] = 1
        else:  # _INS, flipped: a deletion (a reference word)
            pos_r += 1
            align[pos_r] = pos_h
            ref_err[pos_r] = 1
    return align, ref_err, hyp_err


@njit(cache=True, nogil=True)
def _better(found: bool, cand: Any, best: Any) -> bool:
    """Tercom's ranking as lib_ter's tuples compare: gain, length, earliest start, earliest target."""
    if not found:
        return True
    for k in range(4):
        if cand[k] != best[k]:
            return cand[k] > best[k]
    return False


@njit(cache=True, nogil=True)
def _shift(h: Any, r: Any, checked: int) -> Any:
    """``lib_ter._shift``: the best shift's gain, the shifted words and the candidates counted so far."""
    n_h = h.shape[0]
    n_r = r.shape[0]
    pre_score, inv_trace = _edit_distance(h, r)
    align, ref_err, hyp_err = _alignment(inv_trace, n_h, n_r)
    found = False
    best = np.zeros(4, dtype=np.int64)  # (gain, length, -start, -target)
    cand = np.zeros(4, dtype=np.int64)
    best_words = h
    for start_h in range(n_h):
        for start_r in range(max(0, start_h - _MAX_SHIFT_DIST), min(n_r, start_h + _MAX_SHIFT_DIST + 1)):
            length = 0
            while h[start_h + length] == r[start_r + length] and length < _MAX_SHIFT_SIZE:
                length += 1
                # the consumer of lib_ter._find_shifted_pairs' (start_h, start_r, length): its filters
                if (
                    hyp_err[start_h : start_h + length].sum() > 0
                    and ref_err[start_r : start_r + length].sum() > 0
                    and not (start_h <= align[start_r] < start_h + length)
                ):
                    prev_idx = -1
                    for offset in range(-1, length):  # start_r + offset < n_r: always in the alignment
                        idx = 0 if start_r + offset == -1 else align[start_r + offset] + 1
                        if idx == prev_idx:
                            continue
                        prev_idx = idx
                        shifted = _perform_shift(h, start_h, length, idx)
                        cand[0] = pre_score - _distance(shifted, r)
                        cand[1] = length
                        cand[2] = -start_h
                        cand[3] = -idx
                        checked += 1
                        if _better(found, cand, best):
                            found = True
                            best[:] = cand
                            best_words = shifted
                    if checked >= _MAX_SHIFT_CANDIDATES:
                        return (best[0] if found else 0), best_words, checked
                # back in the generator: stop when either side is consumed
                if n_h == start_h + length or n_r == start_r + length:
                    break
    return (best[0] if found else 0), best_words, checked


@njit(cache=True, nogil=True)
def _translation_edit_rate(h: Any, r: Any) -> Any:
    """``lib_ter.translation_edit_rate``: (edits, reference length)."""
    n_r = r.shape[0]
    if n_r == 0:
        return h.shape[0], 0
    shifts = 0
    words = h
    checked = 0
    while True:
        delta, new_words, checked = _shift(words, r, checked)
        if checked >= _MAX_SHIFT_CANDIDATES:
            break
        if delta <= 0:
            break
        shifts += 1
        words = new_words
    return shifts + _distance(words, r), n_r


def _ids(words: list[str], vocab: dict[str, int]) -> NDArray[np.int64]:
    return np.fromiter((vocab.setdefault(w, len(vocab)) for w in words), dtype=np.int64, count=len(words))


def ter_statistics(
    metric: Any, hypotheses: Sequence[str], references: Sequence[Sequence[str | None]]
) -> NDArray[np.float64]:
    """Per-segment ``[edits, average reference length]`` equal to sacreBLEU's
    ``TER._extract_corpus_statistics`` (N x 2).

    Parameters
    ----------
    metric : sacrebleu.TER
        The metric object with its options (tokenization, case, punctuation, Asian support).
    hypotheses : sequence of str
    references : sequence of reference streams (sacreBLEU's layout; ``None`` where a segment has fewer).
    """
    ref_cache = metric._cache_references(references)  # private: sacreBLEU's own reference handling
    out = np.empty((len(hypotheses), 2), dtype=np.float64)
    for i, (hyp, ref_kwargs) in enumerate(zip(hypotheses, ref_cache, strict=True)):
        words_hyp = metric._preprocess_segment(hyp).split()
        vocab: dict[str, int] = {}
        h = _ids(words_hyp, vocab)
        best = 10**16
        lengths = 0
        ref_words = ref_kwargs["ref_words"]
        for words_ref in ref_words:
            edits, ref_len = _translation_edit_rate(h, _ids(words_ref, vocab))
            lengths += ref_len
            best = min(best, int(edits))
        out[i, 0] = best
        out[i, 1] = lengths / len(ref_words)
    return out
