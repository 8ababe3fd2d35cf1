"""The max-t search's split of the pairs before issue 24 (the benchmarks' baseline for the families of
boards): ``gamma`` from the ``2 K`` smallest ratios ``se_jk / (sd_j + sd_k)``, whatever the tails then
cross. On nested or near-duplicate entries almost every entry lies in both tails and the crossing visits
a large share of all (pair, resample) statistics one by one: ``build_board`` took 175 s on the load
test's board of 1,000 entries. Used by ``tests.benchmarks.bench_compare --families`` through
:func:`before_issue_24`, which swaps it into ``stats.compare_ranks._Exceedances``; the numbers are the same
(the list holds exactly the statistics above the level either way), only the time differs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

import stats.compare_ranks as cr

_PREPARE_ROWS = 128


def prepare_v2(self: cr._Exceedances, level: float) -> None:
    """``_Exceedances._prepare`` before issue 24 (``level`` unused)."""
    y, se, sd = self.y, self.se, self.sd
    k = y.shape[1]
    budget = 2 * k
    tiny = np.finfo(float).tiny
    gamma = 1.0
    n_ratios = 0
    kept_i, kept_j, kept_r = [], [], []
    for r0 in range(0, k, _PREPARE_ROWS):
        r1 = min(k, r0 + _PREPARE_ROWS)
        block = se[r0:r1]
        ok = block > 0
        ok &= np.arange(k)[None, :] > np.arange(r0, r1)[:, None]
        bi, bj = np.nonzero(ok)
        if bi.size == 0:
            continue
        bi += r0
        ratio = se[bi, bj] / np.maximum(sd[bi] + sd[bj], tiny)
        gamma = min(gamma, float(ratio.min()))
        n_ratios += ratio.size
        if ratio.size > budget + 1:
            smallest = np.argpartition(ratio, budget)[: budget + 1]
            smallest.sort()
            bi, bj, ratio = bi[smallest], bj[smallest], ratio[smallest]
        kept_i.append(bi)
        kept_j.append(bj)
        kept_r.append(ratio)
    iu = np.concatenate(kept_i) if kept_i else np.empty(0, dtype=np.intp)
    ju = np.concatenate(kept_j) if kept_j else np.empty(0, dtype=np.intp)
    ratio = np.concatenate(kept_r) if kept_r else np.empty(0)
    special = np.zeros(ratio.shape, dtype=bool)
    if n_ratios > budget:
        typical = float(np.partition(ratio, budget)[budget])
        if gamma < 0.75 * typical:
            gamma = typical
            special = ratio < typical
    self.special_j, self.special_k = iu[special], ju[special]
    self.dense_all = False
    eligible = se > 0
    np.fill_diagonal(eligible, False)
    eligible[self.special_j, self.special_k] = False
    eligible[self.special_k, self.special_j] = False
    self.parts = [cr._Part(cols=np.arange(k), ref=-1, sdv=sd, gamma=gamma * (1 - 1e-9), mask=eligible)]
    self.prepared = True


@contextmanager
def before_issue_24() -> Iterator[None]:
    saved = cr._Exceedances._prepare
    cr._Exceedances._prepare = prepare_v2  # type: ignore[method-assign]
    try:
        yield
    finally:
        cr._Exceedances._prepare = saved  # type: ignore[method-assign]
