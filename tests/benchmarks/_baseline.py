"""The implementations before issue 14, kept as the named baseline of ``make bench`` and of tests.

Not used by the product. ``python -m tests.benchmarks.bench`` and ``python -m tests.benchmarks.bench_compare`` time the current
code against these in the same run; the tests check that the current code gives the same numbers (the
same bytes of ``W``, the same rank counts and interval bounds; the max-t sets differ only where float32
rounding flipped a decision, see ``tests/stats/test_compare_ranks_maxt.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from stats.checks import check_count, check_level, check_replicates, check_vector
from stats.compare import RANDOMIZATION_CHUNK, RandomizationResult, _swap_chunk
from stats.compare_ranks import RankDistribution, SimultaneousRanks
from stats.resampling import ResampleDesign

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

_MASK32 = np.uint64(0xFFFFFFFF)
_SHIFT32 = np.uint64(32)

__all__ = [
    "draw_chunk_v0",
    "paired_randomization_v0",
    "quantiles_v0",
    "rank_counts_v0",
    "rank_distribution_v0",
    "simultaneous_critical_values_v0",
    "simultaneous_ranks_v0",
]


def _bounded_v0(raw: npt.NDArray[np.uint64], bound: int) -> npt.NDArray[np.uint64]:
    b = np.uint64(bound)
    hi = raw >> _SHIFT32
    lo = raw & _MASK32
    return (hi * b + ((lo * b) >> _SHIFT32)) >> _SHIFT32


def draw_chunk_v0(design: ResampleDesign, chunk: int) -> npt.NDArray[np.uint8]:
    """One chunk of ``W`` as drawn before issue 14: all draws of the chunk at once, uint64 temporaries."""
    rows = len(design.chunk_rows(chunk))
    units = design.n_units
    bitgen = np.random.PCG64(np.random.SeedSequence(design.seed, spawn_key=(chunk,)))
    offsets = (np.arange(rows, dtype=np.int64) * units)[:, None]
    if design.strata_of_unit is None:
        raw = np.asarray(bitgen.random_raw(rows * units), dtype=np.uint64)
        idx = _bounded_v0(raw, units).astype(np.int64).reshape(rows, units)
        counts = np.bincount((idx + offsets).ravel(), minlength=rows * units)
    else:
        counts = np.zeros(rows * units, dtype=np.int64)
        for stratum in range(int(design.strata_of_unit.max()) + 1):
            members = np.flatnonzero(design.strata_of_unit == stratum)
            raw = np.asarray(bitgen.random_raw(rows * members.shape[0]), dtype=np.uint64)
            idx = members[_bounded_v0(raw, members.shape[0]).astype(np.int64)].reshape(rows, -1)
            counts += np.bincount((idx + offsets).ravel(), minlength=rows * units)
    if counts.max(initial=0) > 255:
        raise OverflowError("a unit was drawn more than 255 times in one resample.")
    return counts.astype(np.uint8).reshape(rows, units)


def quantiles_v0(theta: FloatArray, probs: FloatArray) -> FloatArray:
    """Interval quantiles by sorting every column (before issue 14)."""
    b = theta.shape[0]
    srt = np.sort(theta, axis=0)
    pos = np.nan_to_num(np.clip(probs, 0.0, 1.0), nan=0.0) * (b - 1)
    lo = np.floor(pos).astype(np.intp)
    hi = np.minimum(lo + 1, b - 1)
    frac = pos - lo
    cols = np.arange(theta.shape[1])
    low_v = srt[lo, cols]
    high_v = srt[hi, cols]
    out = low_v + frac * (high_v - low_v)
    out = np.where(np.isnan(probs), np.nan, out)
    has_nan = np.isnan(theta).any(axis=0)
    return np.where(has_nan, np.nan, out)


def rank_counts_v0(theta: npt.ArrayLike, *, higher_is_better: bool) -> npt.NDArray[np.int64]:
    """The K x K rank counts, ranking every resample with a stable argsort (before issue 14)."""
    x = check_replicates(theta, name="theta")
    b, k = x.shape
    offsets = np.arange(k)[None, :] * k
    counts = np.zeros(k * k, dtype=np.int64)
    step = max(1, (1 << 20) // k)
    for start in range(0, b, step):
        keyed = -x[start : start + step] if higher_is_better else x[start : start + step]
        order = np.argsort(keyed, axis=1, kind="stable")
        ordered = np.take_along_axis(keyed, order, axis=1)
        fresh = np.ones_like(ordered, dtype=bool)
        fresh[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
        first = np.maximum.accumulate(np.where(fresh, np.arange(k), 0), axis=1) + 1
        ranks = np.empty_like(first)
        np.put_along_axis(ranks, order, first, axis=1)
        counts += np.bincount((offsets + (ranks - 1)).ravel(), minlength=k * k)
    return counts.reshape(k, k)


def _pair_standard_errors_v0(centred: FloatArray) -> FloatArray:
    b = centred.shape[0]
    cov = centred.T @ centred / (b - 1)
    var = np.diag(cov)
    se2 = var[:, None] + var[None, :] - 2 * cov
    scale = var[:, None] + var[None, :]
    se2 = np.where(se2 <= 1e-10 * scale, 0.0, se2)
    np.fill_diagonal(se2, 0.0)
    return np.sqrt(se2)


def _max_abs_t_v0(
    deviations_t: npt.NDArray[np.floating], inverse_se: FloatArray, active: BoolArray
) -> npt.NDArray[np.floating]:
    k, b = deviations_t.shape
    out = np.zeros(b, dtype=deviations_t.dtype)
    for j in range(k - 1):
        cols = np.flatnonzero(active[j, j + 1 :]) + j + 1
        if cols.size == 0:
            continue
        block = deviations_t[cols] - deviations_t[j]
        block *= inverse_se[j, cols].astype(deviations_t.dtype)[:, None]
        np.maximum(out, block.max(axis=0), out=out)
        np.maximum(out, -block.min(axis=0), out=out)
    return out


def simultaneous_critical_values_v0(
    theta: npt.ArrayLike,
    point: npt.ArrayLike,
    *,
    higher_is_better: bool,
    confidence: float = 0.95,
    stepdown: bool = True,
    max_steps: int | None = None,
) -> tuple[list[float], BoolArray]:
    """The max-t step-down as before issue 14 (dense, float32): the critical value of each step and the
    ``better`` matrix. ``max_steps`` stops early (to time a single step of a large board)."""
    x = check_replicates(theta, name="theta")
    k = x.shape[1]
    p = check_vector(point, name="point", length=k, what="values, one per entry")
    confidence = check_level(confidence, name="confidence")
    sign = 1.0 if higher_is_better else -1.0
    se = _pair_standard_errors_v0(x - x.mean(axis=0))
    diff = sign * (p[:, None] - p[None, :])
    with np.errstate(divide="ignore", invalid="ignore"):
        t_obs = np.where(se > 0, diff / se, np.sign(diff) * np.inf)
    t_obs = np.where((se == 0) & (diff == 0), 0.0, t_obs)
    inverse_se = np.where(se > 0, 1.0 / np.where(se > 0, se, 1.0), 0.0)
    deviations_t = np.ascontiguousarray((x - p).T, dtype=np.float32)
    upper_pairs = np.triu(np.ones((k, k), dtype=bool), 1) & (se > 0)
    zero = (se == 0) & (diff != 0)
    np.fill_diagonal(zero, False)
    separated = zero.copy()
    criticals: list[float] = []
    while max_steps is None or len(criticals) < max_steps:
        active = upper_pairs & ~separated
        if not active.any():
            break
        maxima = _max_abs_t_v0(deviations_t, inverse_se, active)
        critical = float(np.quantile(maxima, confidence, method="higher"))
        criticals.append(critical)
        newly = active & (np.abs(t_obs) > critical)
        if not newly.any():
            break
        separated |= newly | newly.T
        if not stepdown:
            break
    return criticals, separated & (diff > 0)


def paired_randomization_v0(
    statistics: Sequence[npt.ArrayLike],
    *,
    finalize: Callable[[np.ndarray], np.ndarray],
    reference: int,
    randomizations: int = 10_000,
    seed: int = 0,
    dtype: npt.DTypeLike | None = None,
) -> RandomizationResult:
    """Paired approximate randomization as before issue 14 (every item in the product)."""
    if len(statistics) < 1:
        raise ValueError("`statistics` must hold at least one entry.")
    arrays = [np.asarray(s, dtype=np.float64) for s in statistics]
    arrays = [a[:, None] if a.ndim == 1 else a for a in arrays]
    shape = arrays[0].shape
    if any(a.ndim != 2 or a.shape != shape for a in arrays) or shape[0] < 1:
        raise ValueError("`statistics` must be arrays of one common shape (N, m) with N >= 1.")
    if not all(np.all(np.isfinite(a)) for a in arrays):
        raise ValueError("`statistics` must be finite.")
    k = len(arrays)
    reference = check_count(reference, name="reference")
    if reference >= k:
        raise ValueError(f"`reference` must be an index below {k}, got {reference}.")
    randomizations = check_count(randomizations, name="randomizations", minimum=1)
    seed = check_count(seed, name="seed")
    n, m = shape
    ref = arrays[reference]
    delta = np.stack([a - ref for a in arrays], axis=1)  # (N, K, m)
    pooled_ref = ref.sum(axis=0)  # (m,)
    pooled = np.stack([a.sum(axis=0) for a in arrays])  # (K, m)
    values = np.asarray(finalize(pooled), dtype=np.float64)
    observed = values - float(np.asarray(finalize(pooled_ref), dtype=np.float64))
    threshold = np.abs(observed) * (1 - 1e-9)
    if dtype is None:
        largest = float(np.abs(delta).max()) if delta.size else 0.0
        integer = all(np.array_equal(a, np.round(a)) for a in arrays)
        dtype = np.float32 if integer and n * largest < 2**24 else np.float64
    delta_flat = delta.reshape(n, k * m)
    # columns that no swap can move (shared by both entries of every pair: item counts, true-class
    # counts) are left out of the product
    moving = np.flatnonzero(np.any(delta_flat != 0, axis=0))
    delta_moving = np.ascontiguousarray(delta_flat[:, moving], dtype=dtype)
    counts = np.zeros(k, dtype=np.int64)
    for c, start in enumerate(range(0, randomizations, RANDOMIZATION_CHUNK)):
        rows = min(RANDOMIZATION_CHUNK, randomizations - start)
        z = _swap_chunk(n, seed, c)[:rows].astype(dtype)
        moved_flat = np.zeros((rows, k * m))
        moved_flat[:, moving] = z @ delta_moving
        moved = moved_flat.reshape(rows, k, m)  # (r, K, m)
        # swapped: reference gets + moved, entry gets - moved
        ref_side = np.asarray(finalize(pooled_ref + moved), dtype=np.float64)
        entry_side = np.asarray(finalize(pooled[None, :, :] - moved), dtype=np.float64)
        counts += (np.abs(entry_side - ref_side) >= threshold).sum(axis=0)
    same = np.all(delta == 0, axis=(0, 2))
    p_values: FloatArray = np.where(same, 1.0, (1.0 + counts) / (1.0 + randomizations))
    return RandomizationResult(
        p_values=p_values, counts=counts, observed=observed, randomizations=randomizations, seed=int(seed)
    )


def rank_distribution_v0(
    theta: npt.ArrayLike, *, higher_is_better: bool, confidence: float = 0.95
) -> RankDistribution:
    """:func:`stats.compare_ranks.rank_distribution` with the stable argsort of before issue 14."""
    counts = rank_counts_v0(theta, higher_is_better=higher_is_better)
    b = int(counts[0].sum())
    cumulative = np.cumsum(counts, axis=1)
    tail = (1 - confidence) / 2
    low = np.argmax(cumulative >= tail * b - 1e-9, axis=1) + 1
    high = np.argmax(cumulative >= (1 - tail) * b - 1e-9, axis=1) + 1
    return RankDistribution(
        probabilities=counts / b, low=low.astype(np.int64), high=high.astype(np.int64), confidence=confidence
    )


def simultaneous_ranks_v0(
    theta: npt.ArrayLike,
    point: npt.ArrayLike,
    *,
    higher_is_better: bool,
    confidence: float = 0.95,
    stepdown: bool = True,
) -> SimultaneousRanks:
    """:func:`stats.compare_ranks.simultaneous_ranks` as before issue 14 (dense, float32)."""
    x = check_replicates(theta, name="theta")
    k = x.shape[1]
    criticals, better = simultaneous_critical_values_v0(
        x, point, higher_is_better=higher_is_better, confidence=confidence, stepdown=stepdown
    )
    lower = 1 + better.sum(axis=0)
    return SimultaneousRanks(
        lower=lower.astype(np.int64),
        upper=(k - better.sum(axis=1)).astype(np.int64),
        best=lower == 1,
        better=better,
        critical_value=criticals[-1] if criticals else float("inf"),
        standard_errors=_pair_standard_errors_v0(x - x.mean(axis=0)),
        steps=max(1, len(criticals)),
        confidence=confidence,
    )
