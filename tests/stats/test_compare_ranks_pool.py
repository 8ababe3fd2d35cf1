"""The exact Gram matrix's passes on the board's threads, and the plan's count of crossed candidates (issue
24, seventh pass): the same bits (and the same integers) as one thread's, for any number of threads and
any blocks, on awkward shapes."""

from __future__ import annotations

import numpy as np
import pytest

import stats.compare_ranks as cr


def _reference_operand(y: np.ndarray) -> np.ndarray:
    """The Gram operand computed independently of ``stats.compare_ranks``'s blocks: each column rounded to
    multiples of ``2^(e_j - s)``, ``2^e_j`` the power of two above its largest absolute value."""
    s = cr._gram_bits(y.shape[0])
    _, e = np.frexp(np.abs(y).max(axis=0, initial=0.0))
    return np.rint(y * np.ldexp(1.0, s - e)) * np.ldexp(1.0, e - s)


def _awkward(rng: np.random.Generator, b: int, k: int) -> np.ndarray:
    """Deviations whose columns differ in scale by up to 2^80, with a zero column, a column of one sign,
    identical columns and a column whose largest value is negative."""
    y = rng.normal(size=(b, k)) * np.ldexp(1.0, rng.integers(-40, 40, size=k))
    if k >= 4:
        y[:, 1] = 0.0
        y[:, 2] = np.abs(y[:, 2])
        y[:, 3] = y[:, 0]
    y[0, -1] = -8.0 * np.abs(y[:, -1]).max()
    return y


@pytest.mark.parametrize("threads", ["1", "2", "3"])
@pytest.mark.parametrize(
    ("b", "k", "block", "piece", "span"),
    [
        (997, 7, 7 * 50, 7 * 3, 2),  # B not a multiple of the block nor of the span, pieces of 3 rows
        (400, 1, 1 << 23, 1 << 16, 16),  # one entry, one block
        (130, 3, 3, 3, 1),  # one row per block and per piece
        (301, 40, 40 * 64, 40 * 5, 3),
        (5, 65, 1 << 23, 1 << 16, 16),  # fewer resamples than entries
    ],
)
def test_the_gram_matrix_on_the_pool_is_the_one_product(
    monkeypatch: pytest.MonkeyPatch, threads: str, b: int, k: int, block: int, piece: int, span: int
) -> None:
    """``_exact_gram`` with its rounding spans and its triangle copy on 1, 2 or 3 threads: ``z^T z`` of the
    independently rounded operand to the bit, symmetric, and the means of its columns."""
    monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", threads)
    monkeypatch.setattr(cr, "_GRAM_BLOCK", block)
    monkeypatch.setattr(cr, "_ROUND_PIECE", piece)
    monkeypatch.setattr(cr, "_ROUND_SPAN", span)
    rng = np.random.default_rng(b * 1000 + k)
    y = _awkward(rng, b, k)
    z = _reference_operand(y)
    gram, means = cr._exact_gram(y)
    assert gram.flags.c_contiguous
    assert np.array_equal(gram, z.T @ z)
    assert np.array_equal(gram, gram.T)
    assert np.array_equal(means, z.mean(axis=0))
    assert np.array_equal(cr._gram_exponents(y), np.frexp(np.abs(y).max(axis=0, initial=0.0))[1])


def test_the_gram_matrix_is_the_same_on_one_and_two_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """A board-sized product in 256-row triangle blocks (K above 256: several blocks, one partial),
    with the module's own block sizes: the same bits on one and two threads."""
    rng = np.random.default_rng(3)
    y = _awkward(rng, 600, 700)
    got = {}
    for threads in ("1", "2"):
        monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", threads)
        got[threads] = cr._exact_gram(y)
    assert np.array_equal(got["1"][0], got["2"][0])
    assert np.array_equal(got["1"][1], got["2"][1])
    z = _reference_operand(y)
    assert np.array_equal(got["2"][0], z.T @ z)


def _near_ties(rng: np.random.Generator, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """A plan's sample shape: ``up = v - h s``, ``low = v + h s``, with ties rounded at one decimal, a row
    of one value, a row without candidates, and upper values one unit in the last place below a lower
    value of their row (the keys of the far rows round them together: candidates only by the key)."""
    v = np.round(rng.normal(size=(rows, cols)), 1)
    h = np.round(rng.uniform(0.0, 1.5, size=cols), 1)
    up, low = v - h, v + h
    up[3] = low[3] = 0.5  # one value in the row
    low[5] = up[5].max() + 1.0  # no lower candidate reaches any upper one
    for r in range(6, rows, 2):
        j, kk = rng.integers(0, cols, size=2)
        up[r, j] = np.nextafter(low[r, kk], -np.inf)
    return up, low


def test_the_crossed_count_is_the_tail_pairs_count_in_any_row_blocks() -> None:
    """``_crossed_count`` over any split of the rows (each block with its first row) is the sum of
    ``_tail_pairs``'s prefixes of the whole sample, to the unit, where the keys round ties together."""
    rng = np.random.default_rng(17)
    up, low = _near_ties(rng, 3000, 40)
    want = int(cr._tail_pairs(up, low)[4].sum())
    assert cr._crossed_count(up, low) == want
    for step in (1, 7, 128, 1499, 2999):
        got = sum(cr._crossed_count(up[r : r + step], low[r : r + step], r) for r in range(0, 3000, step))
        assert got == want
    # the blocks' first rows matter: keyed from row 0, the far rows' near ties stay apart (fewer candidates)
    wrong = sum(cr._crossed_count(up[r : r + 100], low[r : r + 100]) for r in range(0, 3000, 100))
    assert wrong < want
    assert cr._crossed_count(up[:0], low[:0]) == 0


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_the_plan_counts_the_same_candidates_on_any_threads(
    monkeypatch: pytest.MonkeyPatch, threads: str
) -> None:
    """``_sample_crossed`` splits the sample's rows over the board's threads: the same count as one
    ``_tail_pairs`` on 1, 2 or 3 threads, also for fewer rows than threads."""
    monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", threads)
    rng = np.random.default_rng(23)
    for rows in (1, 2, 129, 1000):
        up, low = _near_ties(rng, max(rows, 7), 60)
        up, low = up[:rows], low[:rows]
        assert cr._sample_crossed(up, low) == int(cr._tail_pairs(up, low)[4].sum())


def _previous_cross(
    search: cr._Exceedances, part: cr._Part, level: float, sym: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The crossing as it was before the seventh pass (one row block after the other, its tails found by
    ``_tail_pairs`` on the whole block): every candidate's entries repeated, its deviations gathered from
    the block and its standard error from the K x K table by 2-D indices. The list it makes, in its
    order."""
    y, se = search.y, search.se
    cols = part.cols
    whole = cols.size == y.shape[1]
    pairs_ok = (part.mask & sym) if whole else (sym[np.ix_(cols, cols)] & part.mask)
    h = level * part.gamma * (1 - 1e-9)
    hs = h * part.sdv
    got: list[list[np.ndarray]] = [[], [], [], []]
    for r0 in range(0, y.shape[0], cr._ROW_BLOCK):
        yc = y[r0 : r0 + cr._ROW_BLOCK]
        shifted = yc if whole else yc[:, cols]
        if part.ref >= 0:
            shifted = shifted - yc[:, part.ref : part.ref + 1]
        slack = 64 * np.finfo(float).eps * (1 + h) * float(np.abs(yc).max(initial=0.0))
        j_rows, j_cols, k_cols, start_k, reps = cr._tail_pairs(shifted - (hs - slack), shifted + hs)
        ends = np.cumsum(reps)
        first = 0
        while first < j_rows.size:
            base = 0 if first == 0 else int(ends[first - 1])
            last = max(int(np.searchsorted(ends, base + cr._CANDIDATE_CHUNK, side="right")), first + 1)
            rr = reps[first:last]
            total = int(rr.sum())
            if total:
                jj = np.repeat(j_cols[first:last], rr)
                bb = np.repeat(j_rows[first:last], rr)
                within = np.arange(total) - np.repeat(np.cumsum(rr) - rr, rr)
                kk = k_cols[np.repeat(start_k[j_rows[first:last]], rr) + within]
                lj, lk = jj, kk
                if not whole:
                    jj, kk = cols[jj], cols[kk]
                with np.errstate(divide="ignore", invalid="ignore"):
                    z = (yc[bb, jj] - yc[bb, kk]) / se[jj, kk]
                hit = np.flatnonzero(z >= level)
                hit = hit[pairs_ok[lj[hit], lk[hit]]]
                for out, values in zip(got, (jj[hit], kk[hit], bb[hit] + r0, z[hit]), strict=True):
                    out.append(values)
            first = last
    return tuple(np.concatenate(out) if out else np.empty(0) for out in got)  # type: ignore[return-value]


@pytest.mark.parametrize("family", ["mix", "nested", "ties"])
@pytest.mark.parametrize(("chunk", "piece"), [(5, 1), (1 << 21, 100), (5, 1 << 16)])
@pytest.mark.parametrize("threads", ["1", "2"])
def test_the_crossing_lists_what_it_listed_before_in_its_order(
    monkeypatch: pytest.MonkeyPatch, family: str, chunk: int, piece: int, threads: str
) -> None:
    """The crossing reads each candidate's deviations from per-candidate arrays and its standard error by
    flat positions (seventh pass): the same (pair, resample, statistic) list, in the same order, as the
    crossing before it, on whole and referenced parts, with chunks that split one upper candidate's
    run, on 1 and 2 threads, and with a standard-error table that is not C-contiguous (2-D gathers); and
    every listed statistic is at or above the level and every one left out of the part's pairs below it;
    also with the tails found in pieces of one row or a few (then keyed for the whole block)."""
    from tests.benchmarks import families

    monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", threads)
    monkeypatch.setattr(cr, "_ROW_BLOCK", 64)
    monkeypatch.setattr(cr, "_CANDIDATE_CHUNK", chunk)
    monkeypatch.setattr(cr, "_TAIL_PIECE", piece)  # the tails by one row, by one or two rows, by block
    monkeypatch.setattr(cr, "_REFERENCE_WHEN", 0.0)
    monkeypatch.setattr(cr, "_THIRD_WHEN", 0.0)
    monkeypatch.setattr(cr, "_TAIL_COST", 0.0)
    monkeypatch.setattr(cr, "_GROUP_MIN", 8)
    theta, point = families.replicates(families.correctness(family, 300, 90, seed=1), 400, seed=1)
    y = theta - point
    se, sd = cr._pair_standard_errors(y)
    for table in (se, np.asfortranarray(se)):  # symmetric: the same numbers, the other layout
        search = cr._Exceedances(y, table, sd, order=np.argsort(point, kind="stable"))
        level = 2.5
        search._prepare(level)
        assert search.parts
        sym = np.triu(se > 0, 1)
        sym |= sym.T
        for part in search.parts:
            lists: list[list[np.ndarray]] = [[], [], [], []]
            search._cross(part, level, sym, 0, *lists)
            got = [np.concatenate(out) if out else np.empty(0) for out in lists]
            want = _previous_cross(search, part, level, sym)
            for a, b in zip(got, want, strict=True):
                assert a.dtype == b.dtype or a.size == 0
                assert np.array_equal(a, b)
            # against every statistic of the part's pairs
            li, lk = np.nonzero(part.mask & sym[np.ix_(part.cols, part.cols)])
            gj, gk = part.cols[li], part.cols[lk]
            z = (y[:, gj] - y[:, gk]) / se[gj, gk]
            rows, pairs = np.nonzero(z >= level)
            assert sorted(zip(got[0].tolist(), got[1].tolist(), got[2].tolist(), strict=True)) == sorted(
                zip(gj[pairs].tolist(), gk[pairs].tolist(), rows.tolist(), strict=True)
            )
            assert np.array_equal(np.sort(got[3]), np.sort(z[rows, pairs]))


def test_the_separations_into_a_used_table_are_the_fresh_ones() -> None:
    """``_separated_by`` into the step-down's reused table (``out``, left as a previous step wrote it, here
    all True or all False) writes every element: the fresh table's, with zero standard errors (inf and
    NaN statistics) and several row blocks."""
    rng = np.random.default_rng(29)
    k = 600
    p = np.round(rng.normal(size=k), 2)
    se = np.abs(rng.normal(size=(k, k)))
    se = np.triu(se, 1) + np.triu(se, 1).T
    se[:5, :5] = 0.0  # equal and unequal values with a zero standard error
    p[1] = p[0]
    want = cr._separated_by(p, se, 1.5)
    for fill in (True, False):
        used = np.full((k, k), fill)
        got = cr._separated_by(p, se, 1.5, out=used)
        assert got is used
        assert np.array_equal(got, want)


@pytest.mark.parametrize("span", [1, 64, 130, 1024])
@pytest.mark.parametrize("chunk", [3000, 1 << 17])
@pytest.mark.parametrize("threads", ["1", "2"])
def test_the_dense_pairs_list_every_statistic_whatever_the_transposed_spans(
    monkeypatch: pytest.MonkeyPatch, span: int, chunk: int, threads: str
) -> None:
    """The dense pairs' deviations transposed by spans of resamples (seventh pass; 128 at a time within a
    span, spans not a multiple of it) on 1 and 2 threads, with small and large blocks of pairs: every
    active dense pair's statistic at or above the level, in the pairs' order and then the resamples', as
    the whole transposed deviations give it."""
    from tests.benchmarks import families

    monkeypatch.setenv("LEADERBOARD_BLAS_THREADS", threads)
    monkeypatch.setattr(cr, "_TRANSPOSE_SPAN", span)
    monkeypatch.setattr(cr, "_SPECIAL_CHUNK", chunk)  # 9 or 393 pairs per block
    monkeypatch.setattr(cr, "_SPECIAL_SPAN", 2)
    theta, point = families.replicates(families.correctness("near_duplicates", 300, 70, seed=4), 333, seed=4)
    y = theta - point
    se, sd = cr._pair_standard_errors(y)
    search = cr._Exceedances(y, se, sd)
    rng = np.random.default_rng(4)
    pairs = np.array([(j, k) for j in range(70) for k in range(j + 1, 70) if se[j, k] > 0])
    pick = pairs[np.sort(rng.choice(len(pairs), 300, replace=False))]
    search.special_j, search.special_k = pick[:, 0], pick[:, 1]
    active = np.triu(rng.random((70, 70)) < 0.8, 1)
    level = 1.5
    _, pj, pk, rows, z = search._dense_special(level, active)
    on = active[pick[:, 0], pick[:, 1]]
    sj, sk = pick[on, 0], pick[on, 1]
    stats = np.abs(y[:, sj] - y[:, sk]).T / se[sj, sk][:, None]  # pairs x resamples
    wp, wb = np.nonzero(stats >= level)
    assert np.array_equal(pj, sj[wp]) and np.array_equal(pk, sk[wp])
    assert np.array_equal(rows, wb)
    assert np.array_equal(z, stats[wp, wb])
