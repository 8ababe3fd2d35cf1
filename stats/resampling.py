"""Bootstrap resample weights: one fixed matrix ``W`` (B x N counts) per task.

A bootstrap resample is a vector of counts over the resampled units (items, or groups of items for the
grouped bootstrap). ``W`` stacks ``B`` of them. It is generated from the task's seed in fixed chunks of
:data:`CHUNK_RESAMPLES` rows: chunk ``c`` is drawn from its own child seed
``SeedSequence(seed, spawn_key=(c,))`` with the PCG64 bit generator, so any row range of ``W`` can be
computed on its own and the matrix does not depend on batch size, worker count or machine. The draws
use only PCG64's raw 64-bit output and integer arithmetic (Lemire's multiply-shift), not
``Generator.integers``, whose algorithm numpy does not promise to keep: ``W`` is a function of
``(seed, resamples, units, strata)`` and of :data:`ALGORITHM` alone. For the plain and grouped
bootstrap, ``W`` for ``B1`` resamples is the first ``B1`` rows of ``W`` for ``B2 > B1``.

Counts are stored as uint8. A count above 255 needs one unit drawn 256 times in one resample
(impossible with at most 255 units, probability far below 1e-300 otherwise); it is detected and raises.

References
----------
.. [1] Efron, B. and Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*, ch. 6 and 14.
.. [2] Davison, A. C. and Hinkley, D. V. (1997). *Bootstrap Methods and their Application*, sec. 3.8
       (stratified and cluster resampling).
.. [3] O'Neill, M. E. (2014). PCG: A Family of Simple Fast Space-Efficient Statistically Good Algorithms
       for Random Number Generation. HMC-CS-2014-0905.
.. [4] Lemire, D. (2019). Fast Random Integer Generation in an Interval. ACM TOMACS 29(1).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from stats.checks import check_count

__all__ = [
    "ALGORITHM",
    "CACHE_MAX_BYTES",
    "CHUNK_RESAMPLES",
    "ResampleDesign",
    "cacheable",
    "chunk_count",
    "resample_design",
    "resample_weights",
    "unit_weights",
]

#: Rows of ``W`` drawn from one child seed. Fixed: changing it changes every ``W``.
CHUNK_RESAMPLES = 256
#: Largest ``W`` (bytes, one per count) kept in the on-disk cache. A larger one (N = 1,000,000 items and
#: B = 10,000 resamples is 10 GB) is drawn chunk by chunk whenever it is needed: a chunk costs about as
#: much to draw as to read back from disk, and memory stays at one chunk.
CACHE_MAX_BYTES = 2**31
#: Name of the drawing algorithm; part of every cache key.
ALGORITHM = "pcg64-seedsequence-lemire64-chunk256-v1"
_MASK32 = np.uint64(0xFFFFFFFF)
_SHIFT32 = np.uint64(32)


def _codes(values: ArrayLike, n_items: int, name: str) -> tuple[NDArray[np.intp], int]:
    arr = np.asarray(values)
    if arr.shape != (n_items,):
        raise ValueError(f"`{name}` must hold one value per item ({n_items}), got shape {arr.shape}.")
    uniques, inverse = np.unique(arr, return_inverse=True)
    return inverse.astype(np.intp), int(uniques.shape[0])


@dataclass(frozen=True, eq=False)
class ResampleDesign:
    """Everything that determines ``W``.

    Attributes
    ----------
    n_items : int
        Number of test items ``N``.
    resamples : int
        Number of resamples ``B``.
    seed : int
        The task's seed.
    n_units : int
        Number of resampled units: ``N``, or the number of groups for the grouped bootstrap.
    unit_of_item : ndarray of intp, shape (N,)
        Index of each item's unit (groups numbered in sorted order of their ids).
    strata_of_unit : ndarray of intp, shape (n_units,) or None
        Stratum of each unit for the stratified bootstrap (strata in sorted order of their values).
    grouped : bool
        Whether units are groups of items.
    """

    n_items: int
    resamples: int
    seed: int
    n_units: int
    unit_of_item: NDArray[np.intp]
    strata_of_unit: NDArray[np.intp] | None
    grouped: bool

    @property
    def n_chunks(self) -> int:
        """Number of chunks of :data:`CHUNK_RESAMPLES` rows (the last one may be shorter)."""
        return chunk_count(self.resamples)

    def chunk_rows(self, chunk: int) -> range:
        """Rows of ``W`` that chunk ``chunk`` holds."""
        start = chunk * CHUNK_RESAMPLES
        return range(start, min(start + CHUNK_RESAMPLES, self.resamples))

    def key(self) -> str:
        """A hex digest of every parameter that determines ``W`` (the cache key)."""
        h = hashlib.sha256()
        head = {
            "algorithm": ALGORITHM,
            "n_items": self.n_items,
            "n_units": self.n_units,
            "resamples": self.resamples,
            "seed": self.seed,
            "grouped": self.grouped,
            "stratified": self.strata_of_unit is not None,
        }
        h.update(json.dumps(head, sort_keys=True).encode())
        h.update(np.ascontiguousarray(self.unit_of_item, dtype=np.int64).tobytes())
        if self.strata_of_unit is not None:
            h.update(np.ascontiguousarray(self.strata_of_unit, dtype=np.int64).tobytes())
        return h.hexdigest()[:40]

    def describe(self) -> dict[str, str]:
        """Settings for a :class:`~stats.signature.Signature`'s ``extra``."""
        out = {"resampling": "grouped" if self.grouped else "items"}
        if self.strata_of_unit is not None:
            out["stratified"] = "true"
        return out


def chunk_count(resamples: int) -> int:
    """Number of fixed chunks that ``resamples`` rows span."""
    return -(-resamples // CHUNK_RESAMPLES)


def resample_design(
    n_items: int,
    *,
    resamples: int,
    seed: int,
    groups: ArrayLike | None = None,
    strata: ArrayLike | None = None,
) -> ResampleDesign:
    """Validate the parameters of ``W`` and fix its units.

    Parameters
    ----------
    n_items : int
        Number of test items.
    resamples : int
        Number of bootstrap resamples ``B``.
    seed : int
        Non-negative integer seed of the task.
    groups : array_like, shape (N,), optional
        Group id of each item (writer, video, patient): whole groups are resampled.
    strata : array_like, shape (N,), optional
        Stratum of each item (usually its true class): each resample keeps the number of units of every
        stratum. With ``groups``, every group must lie in a single stratum.

    Returns
    -------
    ResampleDesign
    """
    n_items = check_count(n_items, name="n_items", minimum=1)
    resamples = check_count(resamples, name="resamples", minimum=1)
    seed = check_count(seed, name="seed")
    if groups is None:
        unit_of_item = np.arange(n_items, dtype=np.intp)
        n_units = n_items
    else:
        unit_of_item, n_units = _codes(groups, n_items, "groups")
    strata_of_unit: NDArray[np.intp] | None = None
    if strata is not None:
        item_strata, _ = _codes(strata, n_items, "strata")
        strata_of_unit = np.full(n_units, -1, dtype=np.intp)
        strata_of_unit[unit_of_item] = item_strata
        if np.any(strata_of_unit[unit_of_item] != item_strata):
            raise ValueError("`strata` must be constant within each group of `groups`.")
    return ResampleDesign(
        n_items=n_items,
        resamples=resamples,
        seed=seed,
        n_units=n_units,
        unit_of_item=unit_of_item,
        strata_of_unit=strata_of_unit,
        grouped=groups is not None,
    )


#: Draws handled at once when drawing a chunk of ``W``: the temporaries (8 bytes per draw) stay at a few
#: MiB whatever N (at N = 1,000,000 one chunk was 256 million draws, 9.8 GB of temporaries), and a small
#: block stays in the processor's cache, which makes the draw about twice as fast. The stream of PCG64
#: outputs is consumed in the same order whatever the block, so ``W``'s bytes do not depend on it.
_DRAW_BLOCK = 1 << 17
_OVERFLOW = "a unit was drawn more than 255 times in one resample, which uint8 weights cannot hold."


def _bounded(raw: NDArray[np.uint64], bound: int) -> NDArray[np.uint64]:
    """``floor(raw * bound / 2**64)`` exactly, in uint64 arithmetic (``bound < 2**32``).

    With ``raw = hi 2**32 + lo``: ``floor((hi bound + floor(lo bound / 2**32)) / 2**32)``. The low word
    can only carry into the result when ``(hi bound) mod 2**32 >= 2**32 - bound`` (probability
    ``bound / 2**32``), so the low word is multiplied for those draws alone.
    """
    b = np.uint64(bound)
    out = raw >> _SHIFT32
    out *= b
    low = out & _MASK32
    carry = np.flatnonzero(low >= np.uint64(2**32 - bound))
    out >>= _SHIFT32
    if carry.size:
        out[carry] += (low[carry] + (((raw[carry] & _MASK32) * b) >> _SHIFT32)) >> _SHIFT32
    return out


def _count_draws(bitgen: np.random.PCG64, rows: int, units: int) -> Iterator[tuple[int, NDArray[np.intp]]]:
    """Draw ``rows`` resamples of ``units`` draws each from ``bitgen``, in row blocks of bounded size.

    Yields ``(first row, counts)`` with ``counts`` of shape (block rows, units); the PCG64 outputs are
    consumed row after row, as one call for all rows would.
    """
    per = max(1, _DRAW_BLOCK // units)
    for r0 in range(0, rows, per):
        r1 = min(rows, r0 + per)
        idx = _bounded(np.asarray(bitgen.random_raw((r1 - r0) * units), dtype=np.uint64), units)
        flat = idx.view(np.int64).reshape(r1 - r0, units)
        flat += (np.arange(r1 - r0, dtype=np.int64) * units)[:, None]
        counts = np.bincount(flat.ravel(), minlength=(r1 - r0) * units)
        if counts.max(initial=0) > 255:
            raise OverflowError(_OVERFLOW)
        yield r0, counts.reshape(r1 - r0, units)


def _draw_chunk(design: ResampleDesign, chunk: int) -> NDArray[np.uint8]:
    rows = len(design.chunk_rows(chunk))
    units = design.n_units
    bitgen = np.random.PCG64(np.random.SeedSequence(design.seed, spawn_key=(chunk,)))
    out = np.zeros((rows, units), dtype=np.uint8)
    if design.strata_of_unit is None:
        for r0, counts in _count_draws(bitgen, rows, units):
            out[r0 : r0 + counts.shape[0]] = counts
    else:
        # each unit lies in one stratum, so its count comes from that stratum's draws alone
        for stratum in range(int(design.strata_of_unit.max()) + 1):
            members = np.flatnonzero(design.strata_of_unit == stratum)
            for r0, counts in _count_draws(bitgen, rows, members.shape[0]):
                out[r0 : r0 + counts.shape[0], members] = counts
    return out


def _chunk_range(design: ResampleDesign, chunks: range | None) -> range:
    if chunks is None:
        return range(design.n_chunks)
    if not isinstance(chunks, range) or chunks.step != 1:
        raise ValueError("`chunks` must be a range with step 1.")
    if chunks.start < 0 or chunks.stop > design.n_chunks or chunks.start >= chunks.stop:
        raise ValueError(f"`chunks` must be a non-empty range within range(0, {design.n_chunks}).")
    return chunks


def _cache_path(design: ResampleDesign, cache_dir: str | os.PathLike[str]) -> Path:
    return Path(cache_dir) / f"weights-{design.key()}.npy"


def _load_cached(design: ResampleDesign, path: Path) -> NDArray[np.uint8] | None:
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError):
        return None
    if arr.dtype != np.uint8 or arr.shape != (design.resamples, design.n_units):
        return None
    return arr


def _build_cache(design: ResampleDesign, path: Path) -> NDArray[np.uint8]:
    """Draw ``W`` chunk by chunk straight into a new ``.npy`` file (atomically renamed), memory-mapped.

    Memory stays at one chunk whatever the size of ``W``; the file is the same as ``np.save`` writes.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".weights-", suffix=".npy.tmp")
    os.close(fd)
    try:
        out = np.lib.format.open_memmap(
            tmp, mode="w+", dtype=np.uint8, shape=(design.resamples, design.n_units)
        )
        for c in range(design.n_chunks):
            rows = design.chunk_rows(c)
            out[rows.start : rows.stop] = _draw_chunk(design, c)
        out.flush()
        del out
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    loaded = _load_cached(design, path)
    if loaded is None:  # pragma: no cover - the file was just written
        raise OSError(f"the resample-weight cache {path} could not be read back")
    return loaded


def cacheable(design: ResampleDesign) -> bool:
    """Whether ``W`` is small enough to be cached on disk (:data:`CACHE_MAX_BYTES`)."""
    return design.resamples * design.n_units <= CACHE_MAX_BYTES


def iter_unit_weight_chunks(
    design: ResampleDesign,
    *,
    chunks: range | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> Iterator[tuple[int, NDArray[np.uint8]]]:
    """Yield ``(chunk, W_chunk)`` for each chunk, ``W_chunk`` of shape (rows, n_units) uint8.

    With ``cache_dir``, the whole matrix is read from (or first written to) its cache file; rows are
    then sliced from a memory map, so memory stays bounded by one chunk plus the page cache. A part of
    the chunks (a worker's share of a fanned-out scoring) is read from the cache when it exists and
    otherwise drawn alone, not the whole matrix for a few chunks: the same bytes either way.
    """
    span = _chunk_range(design, chunks)
    partial = len(span) < design.n_chunks
    if cache_dir is not None and cacheable(design):
        path = _cache_path(design, cache_dir)
        full = _load_cached(design, path) if partial else unit_weights(design, cache_dir=cache_dir)
        if full is not None:
            for c in span:
                rows = design.chunk_rows(c)
                yield c, np.asarray(full[rows.start : rows.stop])
            return
    for c in span:
        yield c, _draw_chunk(design, c)


def unit_weights(
    design: ResampleDesign,
    *,
    chunks: range | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> NDArray[np.uint8]:
    """Resample counts per unit, shape (rows, n_units), uint8.

    Parameters
    ----------
    design : ResampleDesign
        From :func:`resample_design`.
    chunks : range, optional
        Only the rows of these chunks (``range(first, stop)``); all rows by default.
    cache_dir : path, optional
        Directory of the ``.npy`` cache (no pickle). The file is keyed by :meth:`ResampleDesign.key`,
        written atomically, and rebuilt bit-identically when it is absent or unreadable.
    """
    span = _chunk_range(design, chunks)
    if cache_dir is not None and cacheable(design):
        path = _cache_path(design, cache_dir)
        full = _load_cached(design, path)
        if full is None:
            full = _build_cache(design, path)
        start, stop = design.chunk_rows(span.start).start, design.chunk_rows(span.stop - 1).stop
        return full[start:stop]
    return np.concatenate([_draw_chunk(design, c) for c in span])


def resample_weights(
    n_items: int,
    *,
    resamples: int,
    seed: int,
    groups: ArrayLike | None = None,
    strata: ArrayLike | None = None,
    chunks: range | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> NDArray[np.uint8]:
    """Bootstrap counts per item, shape (B, N) uint8: the task's ``W``.

    Deterministic for ``(n_items, resamples, seed, groups, strata)`` whatever the chunking. For the
    grouped bootstrap each item carries the count of its group.

    Parameters
    ----------
    n_items, resamples, seed, groups, strata
        As in :func:`resample_design`.
    chunks : range, optional
        Only the rows of these chunks of :data:`CHUNK_RESAMPLES` resamples.
    cache_dir : path, optional
        As in :func:`unit_weights`.

    Returns
    -------
    W : ndarray of uint8, shape (B, N)

    Examples
    --------
    >>> from stats.resampling import resample_weights
    >>> W = resample_weights(5, resamples=3, seed=0)
    >>> W.shape, W.dtype, W.sum(axis=1).tolist()
    ((3, 5), dtype('uint8'), [5, 5, 5])
    """
    design = resample_design(n_items, resamples=resamples, seed=seed, groups=groups, strata=strata)
    units = unit_weights(design, chunks=chunks, cache_dir=cache_dir)
    if not design.grouped:
        return units
    return units[:, design.unit_of_item]
