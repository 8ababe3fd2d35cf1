"""The field's paired significance tests for corpus metrics, and the traps, as products over statistics.

Every test here works on stored per-segment statistics ``S_k`` (N x m, last column the count) of K
systems and the metric's vectorised ``finalize``; a resample is ``W @ S`` and a randomization swap is
``Z @ S_a + (1 - Z) @ S_b``, so every replicate is an exact corpus score and one matrix product serves
all systems.

Tests and their rules (docs/text.md has their measured A/A error rates):

``"randomization"``
    Paired approximate randomization (Noreen 1989; Riezler and Maxwell 2005): swap each segment's pair
    with probability 1/2, count draws with ``|d_r| >= |d_obs|`` (a relative tolerance of 1e-9 so exact
    ties count), ``p = (c + 1) / (R + 1)``; two identical systems get ``p = 1``. Exact for any corpus
    metric. (:func:`stats.compare.paired_randomization`.)
``"koehn"``
    Koehn's (2004) paired bootstrap: the share of resamples in which the system does not win, made
    two-sided, ``p = min(1, 2 (1 + min(#{d* <= 0}, #{d* >= 0})) / (B + 1))``; inverts the percentile
    interval.
``"2delta"``
    Berg-Kirkpatrick, Burkett and Klein (2012): resamples that win by at least twice the observed gain,
    two-sided, ``p = min(1, 2 (1 + min(#{d* >= 2d}, #{d* <= 2d})) / (B + 1))``; inverts the basic
    interval.
``convention="sacrebleu"``
    :func:`sacrebleu_paired_bs` and :func:`sacrebleu_paired_ar` reproduce sacreBLEU 2.6.0's
    ``--paired-bs`` and ``--paired-ar`` p-values exactly from its seed (its resample indices and swap
    masks, its float32 bootstrap arithmetic, its strict ``>`` that calls a system significant against an
    identical copy of itself, p = 1/(R + 1)), so published numbers can be checked.

References
----------
.. [1] Koehn, P. (2004). Statistical significance tests for machine translation evaluation. EMNLP.
.. [2] Riezler, S. and Maxwell, J. T. (2005). On some pitfalls in automatic evaluation and significance
       testing for MT. ACL Workshop on Intrinsic and Extrinsic Evaluation Measures.
.. [3] Berg-Kirkpatrick, T., Burkett, D. and Klein, D. (2012). An empirical investigation of statistical
       significance in NLP. EMNLP-CoNLL.
.. [4] Clark, J. H., Dyer, C., Lavie, A. and Smith, N. A. (2011). Better hypothesis testing for
       statistical machine translation (MultEval). ACL.
.. [5] Kish, L. (1965). Survey Sampling. Wiley (the design effect 1 + (m - 1) rho).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from stats.checks import check_count, check_statistics
from stats.compare import bootstrap_p_values, items_needed, paired_randomization
from stats.resampling import resample_weights
from stats.text.extract import TextMetric
from stats.text.finalize import brevity_ratio

__all__ = [
    "RULES",
    "SACREBLEU_SEED",
    "AcrossMetrics",
    "BrevityCheck",
    "DesignEffect",
    "PairedTests",
    "SacrebleuResult",
    "adjust_across_metrics",
    "brevity_check",
    "design_effects",
    "paired_tests",
    "sacrebleu_paired_ar",
    "sacrebleu_paired_bs",
    "segments_needed",
]

FloatArray = NDArray[np.float64]
Finalize = Callable[[np.ndarray], np.ndarray]
RULES = ("randomization", "koehn", "2delta")
#: sacreBLEU's default seed (``SACREBLEU_SEED``, 12345).
SACREBLEU_SEED = 12345
#: Rows of resample indices drawn at once (sacreBLEU draws them in one call; numpy's ``choice`` stream
#: is the same in chunks, which bounds memory at 1,000 x N).
_BS_CHUNK = 1000
_BOOT_RULE = {"koehn": "percentile", "2delta": "basic"}


def _stack(statistics: Sequence[ArrayLike]) -> list[FloatArray]:
    return check_statistics(statistics, one_dimensional=True, finite=True)


def _resample_counts(idx: NDArray[np.intp], n: int, dtype: Any) -> NDArray[Any]:
    """Count rows (rows, n) of bootstrap index rows: how often each segment is drawn."""
    w = np.empty((idx.shape[0], n), dtype=dtype)
    for i, row in enumerate(idx):  # one bincount per row: faster than one over offset indices
        w[i] = np.bincount(row, minlength=n)
    return w


@dataclass(frozen=True)
class PairedTests:
    """Every system against a reference system, with one rule.

    Attributes
    ----------
    rule : str
        ``"randomization"``, ``"koehn"`` or ``"2delta"``.
    values : ndarray (K,)
        Corpus values.
    differences : ndarray (K,)
        ``value_k - value_reference``.
    p_values : ndarray (K,)
        Two-sided; 1 for the reference itself and for a system identical to it.
    draws : int
        ``R`` randomizations or ``B`` resamples.
    seed : int
    """

    rule: str
    values: FloatArray
    differences: FloatArray
    p_values: FloatArray
    draws: int
    seed: int


def paired_tests(
    statistics: Sequence[ArrayLike],
    *,
    finalize: Finalize,
    reference: int = 0,
    rule: str = "randomization",
    draws: int = 10_000,
    seed: int = 0,
    groups: ArrayLike | None = None,
) -> PairedTests:
    """Paired tests of every system against ``reference`` under one of :data:`RULES`.

    Parameters
    ----------
    statistics : sequence of array_like (N, m)
        Per-segment statistics of every system (same segments, same columns).
    finalize : callable
        The metric's vectorised finalizer.
    reference : int
        Index of the reference (baseline) system.
    rule : {"randomization", "koehn", "2delta"}
    draws : int
        Randomizations ``R`` or bootstrap resamples ``B``.
    seed : int
        Seed of the swap matrix (:func:`stats.compare.randomization_weights`) or of the task's resample
        weights (:func:`stats.resampling.resample_weights`).
    groups : array_like (N,), optional
        Document of each segment: the bootstrap rules resample documents (randomization swaps segments).

    Examples
    --------
    >>> import numpy as np
    >>> from stats.text.finalize import ter_finalize
    >>> a = np.array([[1, 5, 1], [0, 4, 1], [2, 6, 1], [1, 5, 1]], dtype=float)
    >>> r = paired_tests([a, a.copy()], finalize=ter_finalize, draws=999)
    >>> r.p_values.tolist()  # identical systems: p = 1
    [1.0, 1.0]
    """
    if rule not in RULES:
        raise ValueError(f"`rule` must be one of {list(RULES)}, got {rule!r}.")
    arrays = _stack(statistics)
    draws = check_count(draws, name="draws", minimum=1)
    k = len(arrays)
    if not 0 <= reference < k:
        raise ValueError(f"`reference` must be an index below {k}, got {reference}.")
    values = np.asarray(finalize(np.stack([a.sum(axis=0) for a in arrays])), dtype=np.float64)
    diffs = values - values[reference]
    if rule == "randomization":
        res = paired_randomization(
            arrays, finalize=finalize, reference=reference, randomizations=draws, seed=seed
        )
        return PairedTests(rule, values, diffs, res.p_values, draws, seed)
    n = arrays[0].shape[0]
    w = resample_weights(n, resamples=draws, seed=seed, groups=groups).astype(np.float64)
    theta = np.column_stack([finalize(w @ a) for a in arrays])
    d = theta - theta[:, [reference]]
    p = np.ones(k)
    others = [j for j in range(k) if j != reference]
    if others:
        p[others] = bootstrap_p_values(d[:, others], diffs[others], rule=_BOOT_RULE[rule])
    return PairedTests(rule, values, diffs, p, draws, seed)


# --------------------------------------------------------------------------------------------------
# sacreBLEU's conventions, reproduced exactly


@dataclass(frozen=True)
class SacrebleuResult:
    """sacreBLEU's paired-test output for every system against the baseline (system 0).

    Attributes
    ----------
    test : {"bs", "ar"}
    scores : ndarray (K,)
        Corpus scores (sacreBLEU's ``Result.score``).
    p_values : ndarray (K,)
        ``(c + 1) / (n + 1)`` with sacreBLEU's strict ``>``; NaN for the baseline.
    means, cis : ndarray (K,) or None
        Paired bootstrap only: the bootstrap mean and half-width of the 2.5-97.5% range (sacreBLEU's
        ``estimate_ci``), for the systems other than the baseline (NaN for the baseline, whose interval
        sacreBLEU draws from its own ``SACREBLEU_SEED`` stream). For BLEU they may differ from
        sacreBLEU's in the last bits (numpy's exp and log; the p-values are recomputed with the C
        library's wherever that could change a count).
    n_samples : int
    seed : int or None
    signature : str
        sacreBLEU's signature with ``bs:``/``ar:`` and the seed.
    """

    test: str
    scores: FloatArray
    p_values: FloatArray
    means: FloatArray | None
    cis: FloatArray | None
    n_samples: int
    seed: int | None
    signature: str


def _sacrebleu_metric_check(metric: TextMetric) -> None:
    if metric.name not in ("bleu", "chrf", "chrf++", "ter"):
        raise ValueError(f"sacreBLEU's paired tests cover BLEU, chrF and TER, not {metric.name}.")


def _python_fallback(metric: TextMetric, pooled: FloatArray) -> NDArray[np.bool_]:
    """Where sacreBLEU's score is a Python float (not numpy float32) in its bootstrap: chrF with no
    qualifying order or a zero F, TER with empty references. One such resample makes its array float64."""
    if metric.name == "ter":
        return np.asarray(pooled[..., 1] <= 0)
    if metric.name in ("chrf", "chrf++") and not metric.option("eps_smoothing"):
        return np.asarray(metric.finalize(pooled, float32=True) == 0)
    return np.zeros(pooled.shape[:-1], dtype=bool)


#: Relative margin within which a comparison is recomputed with the C library's exp and log: numpy's
#: vectorised ones differ from them by a few ulps, so BLEU differs by far less than this (1e-14 relative).
_BORDER = 1e-9


def _near(x: NDArray[Any], threshold: NDArray[Any] | float) -> NDArray[np.bool_]:
    t = np.asarray(threshold, dtype=np.float64)
    return np.asarray(np.abs(np.asarray(x, dtype=np.float64) - t) <= _BORDER * np.maximum(np.abs(t), 1.0))


def _sacrebleu_scores(metric: TextMetric, pooled: FloatArray, *, libm: bool = True) -> NDArray[Any]:
    """Bootstrap scores as ``metric._compute_score_from_stats(float32 sums).score`` gives them, in the
    dtype of sacreBLEU's ``np.array([...])`` of them (float64 for BLEU; float32 for chrF and TER unless a
    Python-float fallback occurs); bit for bit with ``libm=True``, within a few ulps (BLEU) without."""
    values = metric.finalize(pooled, libm=libm, float32=True)
    if metric.name == "bleu" or (metric.name in ("chrf", "chrf++") and metric.option("eps_smoothing")):
        return values
    if np.any(_python_fallback(metric, pooled)):
        return values
    return values.astype(np.float32)


def _point_scores(metric: TextMetric, arrays: list[FloatArray]) -> FloatArray:
    return np.asarray(metric.finalize(np.stack([a.sum(axis=0) for a in arrays]), libm=True), dtype=np.float64)


def _sig(metric: TextMetric, n_refs: int, test: str, n: int, seed: int | None) -> str:
    head, rest = metric.signature(n_refs).split("|", 1)  # sacreBLEU's order: nrefs, test, seed, ...
    return f"{head}|{test}:{n}|seed:{str(seed).lower()}|{rest}"


def sacrebleu_paired_bs(
    statistics: Sequence[ArrayLike],
    metric: TextMetric,
    *,
    n_samples: int = 1000,
    seed: int | None = SACREBLEU_SEED,
    n_refs: int = 1,
) -> SacrebleuResult:
    """sacreBLEU 2.6.0's paired bootstrap (``--paired-bs``), system 0 the baseline, from statistics.

    sacreBLEU draws one index matrix ``rng.choice(N, (n_samples, N))`` from ``default_rng(seed)`` shared
    by every system, sums float32 statistics per resample, scores each sum, and for each system takes
    ``s_b = |d_b| - mean |d|`` and ``p = (#{s_b > |d_obs|} + 1) / (n_samples + 1)``. Here the same indices
    become count rows of ``W`` and ``W @ S`` gives every system's sums at once (exact: integer
    statistics below 2**24); the scores follow sacreBLEU's float32 arithmetic and C-library exp/log, so
    the p-values are sacreBLEU's bit for bit (tested against ``sacrebleu.significance.PairedTest``).
    Exact for BLEU, chrF and single-reference TER; multi-reference TER averages reference lengths,
    which sacreBLEU sums in float32 in its own order (agreement then up to float32 rounding).

    Parameters
    ----------
    statistics : sequence of array_like (N, m)
        Statistics of the baseline (first) and the other systems, as :meth:`TextMetric.statistics`.
    metric : TextMetric
    n_samples : int, default 1000
        sacreBLEU's ``--paired-bs-n`` (its default 1000).
    seed : int or None, default 12345
        sacreBLEU's ``SACREBLEU_SEED``; ``None`` (or 0, which sacreBLEU turns into None) draws fresh entropy.
    n_refs : int
        For the signature.
    """
    _sacrebleu_metric_check(metric)
    arrays = _stack(statistics)
    n_samples = check_count(n_samples, name="n_samples", minimum=1)
    n = arrays[0].shape[0]
    seed = seed if seed else None
    rng = np.random.default_rng(seed)
    stacked = np.hstack(arrays)  # (N, K m)
    k, m = len(arrays), arrays[0].shape[1]
    exact32 = bool(np.array_equal(stacked, np.round(stacked)))
    exact32 = exact32 and n * float(np.abs(stacked).max(initial=0.0)) < 2**24
    # integer statistics: float32 sums are exact; otherwise float64 sums rounded once to float32, as
    # sacreBLEU's float32 rows are (see the docstring)
    s_prod = stacked.astype(np.float32) if exact32 else stacked.astype(np.float32).astype(np.float64)
    pooled = np.empty((n_samples, k, m))
    for start in range(0, n_samples, _BS_CHUNK):
        rows = min(_BS_CHUNK, n_samples - start)
        idx = rng.choice(n, size=(rows, n), replace=True)
        block = _resample_counts(idx, n, s_prod.dtype) @ s_prod
        if not exact32:
            block = block.astype(np.float32)
        pooled[start : start + rows] = block.astype(np.float64).reshape(rows, k, m)
    points = _point_scores(metric, arrays)
    # BLEU's exp and log: numpy's (fast) first; a system any of whose comparisons falls within a relative
    # 1e-9 of the threshold is rescored with the C library's, as sacreBLEU scores (so the count is its own)
    transcendental = metric.name == "bleu"
    scores = [_sacrebleu_scores(metric, pooled[:, j, :], libm=not transcendental) for j in range(k)]
    exact: dict[int, NDArray[Any]] = {}

    def exact_scores(j: int) -> NDArray[Any]:
        if j not in exact:
            exact[j] = _sacrebleu_scores(metric, pooled[:, j, :], libm=True) if transcendental else scores[j]
        return exact[j]

    p = np.full(k, np.nan)
    means = np.full(k, np.nan)
    cis = np.full(k, np.nan)
    for j in range(1, k):
        real_difference = abs(float(points[0]) - float(points[j]))
        sample_diffs = np.abs(scores[j] - scores[0])
        centred = sample_diffs - sample_diffs.mean()
        if transcendental and (np.any(_near(centred, real_difference)) or not np.isfinite(centred).all()):
            scores[j] = exact_scores(j)
            scores[0] = exact_scores(0)
            sample_diffs = np.abs(scores[j] - scores[0])
            centred = sample_diffs - sample_diffs.mean()
        c = int(np.sum(centred > real_difference))
        p[j] = (c + 1) / (n_samples + 1)
        ordered = np.sort(scores[j])  # sacreBLEU's estimate_ci: mean and half the 2.5-97.5% range
        lower = n_samples // 40
        means[j] = float(ordered.mean())
        cis[j] = float(0.5 * (ordered[n_samples - lower - 1] - ordered[lower]))
    return SacrebleuResult(
        "bs", points, p, means, cis, n_samples, seed, _sig(metric, n_refs, "bs", n_samples, seed)
    )


def sacrebleu_paired_ar(
    statistics: Sequence[ArrayLike],
    metric: TextMetric,
    *,
    n_samples: int = 10_000,
    seed: int | None = SACREBLEU_SEED,
    n_refs: int = 1,
) -> SacrebleuResult:
    """sacreBLEU 2.6.0's paired approximate randomization (``--paired-ar``), system 0 the baseline.

    sacreBLEU draws one swap mask ``rng.integers(2, (n_samples, N), dtype=bool)`` from
    ``default_rng(seed)``, builds the two shuffled pseudo-systems ``mask @ S_base + ~mask @ S_sys`` and
    the reverse, and counts ``|score_a - score_b| > |d_obs|`` strictly: a system identical to the
    baseline gets ``p = 1/(n_samples + 1)``, "significant". Reproduced exactly (the mask is one call,
    as sacreBLEU draws it; numpy's boolean stream differs when drawn in pieces).
    """
    _sacrebleu_metric_check(metric)
    arrays = _stack(statistics)
    n_samples = check_count(n_samples, name="n_samples", minimum=1)
    n = arrays[0].shape[0]
    seed = seed if seed else None
    rng = np.random.default_rng(seed)
    pos = rng.integers(2, size=(n_samples, n), dtype=bool)
    k = len(arrays)
    points = _point_scores(metric, arrays)
    base = arrays[0]
    p = np.full(k, np.nan)
    if k > 1:
        m = base.shape[1]
        # mask @ base + ~mask @ sys = sys_total + mask @ (base - sys): one product per block of draws for
        # every system; exact in float32 when every statistic is an integer and no sum reaches 2**24
        delta = np.hstack([base - a for a in arrays[1:]])  # (N, (K-1) m)
        exact32 = bool(np.array_equal(delta, np.round(delta)))
        exact32 = exact32 and n * float(np.abs(delta).max(initial=0.0)) < 2**24
        dtype: Any = np.float32 if exact32 else np.float64
        delta_d = delta.astype(dtype)
        sys_totals = np.stack([a.sum(axis=0) for a in arrays[1:]])  # (K-1, m)
        base_total = base.sum(axis=0)
        counts = np.zeros(k - 1, dtype=np.int64)
        observed = np.array([abs(float(points[0]) - float(points[j])) for j in range(1, k)])
        for start in range(0, n_samples, _BS_CHUNK):
            z = pos[start : start + _BS_CHUNK].astype(dtype)
            moved = (z @ delta_d).astype(np.float64).reshape(z.shape[0], k - 1, m)
            shuf_a, shuf_b = sys_totals[None] + moved, base_total[None, None] - moved
            gap = np.abs(metric.finalize(shuf_a) - metric.finalize(shuf_b))
            near = _near(gap, observed[None, :]) if metric.name == "bleu" else np.zeros(gap.shape, dtype=bool)
            if near.any():  # rescore the draws at the threshold with the C library's exp and log
                gap[near] = np.abs(
                    metric.finalize(shuf_a[near], libm=True) - metric.finalize(shuf_b[near], libm=True)
                )
            counts += np.sum(gap > observed[None, :], axis=0)
        p[1:] = (counts + 1) / (n_samples + 1)
    return SacrebleuResult(
        "ar", points, p, None, None, n_samples, seed, _sig(metric, n_refs, "ar", n_samples, seed)
    )


# --------------------------------------------------------------------------------------------------
# traps


@dataclass(frozen=True)
class AcrossMetrics:
    """p-values of a task's metrics with the non-primary ones adjusted across metrics.

    Attributes
    ----------
    primary : str
        The metric the organizer named in advance: its p-values are left as they are.
    p_values : dict of str to ndarray (K,)
        Per metric, per system; for the other metrics, adjusted across them system by system.
    label : str
        What the adjustment was, to show beside the numbers.
    """

    primary: str
    p_values: dict[str, FloatArray]
    label: str


def adjust_across_metrics(
    p_values: dict[str, ArrayLike], *, primary: str, correction: str = "holm"
) -> AcrossMetrics:
    """Adjust the comparisons on a task's secondary metrics across those metrics.

    Choosing the metric after looking multiplies the size (testing BLEU and six more metrics, "any
    rejects" reaches 0.161 instead of 0.05; TEXT.md). The organizer names the primary metric in advance;
    its p-values stand, and for each system the p-values of the other metrics are adjusted together
    (Holm by default) and labelled so.

    Examples
    --------
    >>> r = adjust_across_metrics({"bleu": [0.01], "chrf": [0.02], "ter": [0.04]}, primary="bleu")
    >>> float(r.p_values["bleu"][0]), float(r.p_values["chrf"][0]), float(r.p_values["ter"][0]), r.label
    (0.01, 0.04, 0.04, 'holm across 2 secondary metrics (chrf, ter); bleu primary, unadjusted')
    """
    from stats.compare import adjust_p_values

    if primary not in p_values:
        raise ValueError(f"`primary` must be one of the metrics {sorted(p_values)}, got {primary!r}.")
    arrays = {k: np.atleast_1d(np.asarray(v, dtype=np.float64)) for k, v in p_values.items()}
    others = [k for k in arrays if k != primary]
    out = {primary: arrays[primary].copy()}
    if others:
        table = np.stack([arrays[k] for k in others])  # (metrics, K)
        adjusted = np.stack(
            [adjust_p_values(table[:, j], correction=correction) for j in range(table.shape[1])], axis=1
        )
        out.update({k: adjusted[i] for i, k in enumerate(others)})
    label = f"{correction} across {len(others)} secondary metrics ({', '.join(others)}); {primary} primary, unadjusted"
    return AcrossMetrics(primary, out, label)


@dataclass(frozen=True)
class BrevityCheck:
    """Pooled length ratios hypothesis / closest reference of two systems and whether BLEU's brevity
    penalty kink is in play (the bootstrap is inconsistent there).

    Attributes
    ----------
    ratios : tuple of float
        ``H / R`` of each system.
    standard_errors : tuple of float
        Bootstrap standard errors of each ratio.
    warning : str or None
        Set when the ratios lie on both sides of 1, or either lies within 2 standard errors of 1.
    """

    ratios: tuple[float, float]
    standard_errors: tuple[float, float]
    warning: str | None


def brevity_check(
    statistics: Sequence[ArrayLike],
    *,
    names: Sequence[str] = ("a", "b"),
    resamples: int = 2000,
    seed: int = 0,
    groups: ArrayLike | None = None,
) -> BrevityCheck:
    """The brevity-penalty warning of a pair of BLEU systems (statistics as :func:`bleu_finalize` reads).

    ``log BP = min(0, 1 - R/H)`` has a kink at ``H = R``: when two systems' lengths straddle the
    reference length, or either is within two standard errors of it, percentile and basic intervals of
    BLEU and of its difference cover far from nominal (TEXT.md: basic covers 0.632 at one standard error
    from the kink, nominal 0.90). The randomization test stays exact.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> def sys(scale):
    ...     ref = rng.integers(5, 30, 200).astype(float)
    ...     hyp = np.round(ref * scale)
    ...     z = np.zeros((200, 8))
    ...     return np.column_stack([hyp, ref, z, np.ones(200)])
    >>> brevity_check([sys(0.99), sys(1.01)]).warning is not None
    True
    """
    arrays = _stack(statistics)
    if len(arrays) != 2:
        raise ValueError("`statistics` must hold exactly two systems.")
    n = arrays[0].shape[0]
    w = resample_weights(n, resamples=resamples, seed=seed, groups=groups).astype(np.float64)
    ratios, ses = [], []
    for a in arrays:
        ratios.append(float(brevity_ratio(a.sum(axis=0))))
        ses.append(float(np.nanstd(brevity_ratio(w @ a), ddof=1)))
    warning = None
    straddle = (ratios[0] - 1) * (ratios[1] - 1) < 0
    near = [abs(r - 1) <= 2 * s for r, s in zip(ratios, ses, strict=True)]
    if straddle or any(near):
        why = (
            "lie on both sides of 1"
            if straddle
            else f"{' and '.join(nm for nm, x in zip(names, near, strict=True) if x)} within 2 standard errors of 1"
        )
        warning = (
            f"length ratios hyp/ref {names[0]} {ratios[0]:.4f} (se {ses[0]:.4f}), {names[1]} {ratios[1]:.4f} "
            f"(se {ses[1]:.4f}) {why}: BLEU's brevity penalty has a kink at 1 and the bootstrap is not "
            "consistent there; trust the randomization test, not the bootstrap interval"
        )
    return BrevityCheck((ratios[0], ratios[1]), (ses[0], ses[1]), warning)


@dataclass(frozen=True)
class DesignEffect:
    """Bootstrap variance by document over bootstrap variance by segment.

    Attributes
    ----------
    values : ndarray (K,)
        Design effect of each system's value (Kish's ``1 + (m - 1) rho``, measured).
    differences : ndarray (K,)
        Design effect of each system's paired difference to the reference (1 for the reference);
        pairing mostly cancels the document effect.
    documents : int
        Number of documents.
    """

    values: FloatArray
    differences: FloatArray
    documents: int


def design_effects(
    statistics: Sequence[ArrayLike],
    *,
    finalize: Finalize,
    documents: ArrayLike,
    reference: int = 0,
    resamples: int = 2000,
    seed: int = 0,
) -> DesignEffect:
    """Measured design effects of a document-level (cluster) bootstrap against a segment-level one."""
    arrays = _stack(statistics)
    n = arrays[0].shape[0]
    docs = np.asarray(documents)
    w_seg = resample_weights(n, resamples=resamples, seed=seed).astype(np.float64)
    w_doc = resample_weights(n, resamples=resamples, seed=seed, groups=docs).astype(np.float64)
    seg = np.column_stack([finalize(w_seg @ a) for a in arrays])
    doc = np.column_stack([finalize(w_doc @ a) for a in arrays])
    var_v = np.nanvar(doc, axis=0, ddof=1) / np.nanvar(seg, axis=0, ddof=1)
    dseg = seg - seg[:, [reference]]
    ddoc = doc - doc[:, [reference]]
    with np.errstate(divide="ignore", invalid="ignore"):
        var_d = np.nanvar(ddoc, axis=0, ddof=1) / np.nanvar(dseg, axis=0, ddof=1)
    var_d[reference] = 1.0
    return DesignEffect(var_v, var_d, int(np.unique(docs).shape[0]))


def segments_needed(
    gap: ArrayLike,
    differences: ArrayLike,
    *,
    n_segments: int,
    alpha: float = 0.05,
    power: float = 0.8,
) -> list[int | None]:
    """Segments needed to resolve a gap at level ``alpha`` with ``power``, from the bootstrap variance of
    the paired difference (standard error scaling as ``1/sqrt(n)``; :func:`stats.compare.items_needed`).

    Parameters
    ----------
    gap : array_like (K,)
        Observed differences.
    differences : array_like (B, K)
        Bootstrap replicates of the paired differences.
    n_segments : int
        Segments of the test set the replicates were drawn from.
    """
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim == 1:
        d = d[:, None]
    se = np.nanstd(d, axis=0, ddof=1)
    return items_needed(gap=gap, standard_error=se, n_items=n_segments, alpha=alpha, power=power)
