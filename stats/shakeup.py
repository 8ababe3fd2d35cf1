"""The shake-up report: how the public board's order held up on the private items at the reveal.

Kaggle-like challenges rank on public items during the competition and reveal a private board at the end;
teams then meet a "shake-up" that nobody explains. This module measures it:

- the rank agreement of public and private values of the counted entries (Spearman's rho and Kendall's
  tau-b, scipy's), with a bootstrap interval from the boards' own paired replicates: resample ``b`` of the
  public items and resample ``b`` of the private items together form a resample of all items, stratified
  by split;
- a **re-split reference**: the items are dealt again at random into a public and a private part of the
  same sizes, many times, and the same agreement is computed each time. ``P(reference <= observed)`` says
  how unusual the observed agreement is when nothing but the luck of the split is at work (a small value:
  the public board was fitted more than chance explains);
- per team: public and private value and rank, the rank change, whether the private rank lies inside the
  public **simultaneous** rank set (the set the board promised), and the public-minus-private gap (oriented
  so that a positive gap means the public board flattered the team) with a one-sided re-split p-value,
  Holm-adjusted across teams;
- a summary: teams inside their rank sets, top-10 retention, whether the public winner is in the private
  best set.

The re-split reference needs per-item statistics (decomposable metrics); for rank-based metrics the report
says it is not available rather than inventing one. Monte Carlo p-values are ``(1 + count) / (1 + draws)``
(Phipson & Smyth 2010).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats as sps

from stats.compare import holm
from stats.compare_ranks import min_ranks
from stats.signature import Signature

FloatArray = NDArray[np.float64]
Finalize = Callable[[Any], Any]
ArrayLike1D = Sequence[float] | FloatArray

#: Re-splits drawn per block: the masks of one block are ``block x N`` float64.
_BLOCK = 128


@dataclass(frozen=True)
class TeamShake:
    """One counted entry at the reveal."""

    name: str
    public_value: float
    private_value: float
    public_rank: int  # competition ranking (1, 2, 2, 4) on each board's point values
    private_rank: int
    rank_change: int  # public rank - private rank: positive = moved up at the reveal
    public_rank_set: tuple[int, int] | None  # the public board's simultaneous rank set
    inside_rank_set: bool | None
    gap: float  # public - private, oriented: positive = the public board flattered the entry
    gap_p: float | None  # one-sided re-split p-value of the gap (None without per-item statistics)
    gap_p_holm: float | None
    in_private_best_set: bool | None


@dataclass(frozen=True)
class ShakeupReport:
    """Everything the report page, API and CSV show."""

    names: tuple[str, ...]
    spearman: float
    spearman_interval: tuple[float, float] | None
    kendall: float
    kendall_interval: tuple[float, float] | None
    resplits: int
    reference_spearman: tuple[float, float, float] | None  # 5%, 50%, 95% quantiles of the reference
    p_reference_le_observed: float | None
    teams: tuple[TeamShake, ...]
    inside_rank_sets: int | None
    rank_sets_known: int
    top10_retained: int
    top10_size: int
    public_winner: str
    public_winner_in_private_best_set: bool | None
    notes: tuple[str, ...]
    signature: Signature = field(repr=False)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (no NaN: undefined values are ``None``)."""
        return {
            "names": list(self.names),
            "spearman": _finite(self.spearman),
            "spearman_interval": _pair(self.spearman_interval),
            "kendall": _finite(self.kendall),
            "kendall_interval": _pair(self.kendall_interval),
            "resplits": self.resplits,
            "reference_spearman": None
            if self.reference_spearman is None
            else dict(zip(("q05", "q50", "q95"), self.reference_spearman, strict=True)),
            "p_reference_le_observed": self.p_reference_le_observed,
            "teams": [
                {
                    "name": t.name,
                    "public_value": t.public_value,
                    "private_value": t.private_value,
                    "public_rank": t.public_rank,
                    "private_rank": t.private_rank,
                    "rank_change": t.rank_change,
                    "public_rank_set": None if t.public_rank_set is None else list(t.public_rank_set),
                    "inside_rank_set": t.inside_rank_set,
                    "gap": t.gap,
                    "gap_p": t.gap_p,
                    "gap_p_holm": t.gap_p_holm,
                    "in_private_best_set": t.in_private_best_set,
                }
                for t in self.teams
            ],
            "summary": {
                "teams": len(self.teams),
                "inside_rank_sets": self.inside_rank_sets,
                "rank_sets_known": self.rank_sets_known,
                "top10_retained": self.top10_retained,
                "top10_size": self.top10_size,
                "public_winner": self.public_winner,
                "public_winner_in_private_best_set": self.public_winner_in_private_best_set,
            },
            "notes": list(self.notes),
            "signature": self.signature.as_dict(),
            "signature_text": str(self.signature),
        }


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _pair(p: tuple[float, float] | None) -> list[float | None] | None:
    return None if p is None else [_finite(p[0]), _finite(p[1])]


def _rowwise_spearman(a: FloatArray, b: FloatArray) -> FloatArray:
    """Spearman's rho of each row of ``a`` with the same row of ``b`` (average ranks for ties)."""
    ra = sps.rankdata(a, axis=-1)
    rb = sps.rankdata(b, axis=-1)
    ra -= ra.mean(axis=-1, keepdims=True)
    rb -= rb.mean(axis=-1, keepdims=True)
    den = np.sqrt((ra * ra).sum(axis=-1) * (rb * rb).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (ra * rb).sum(axis=-1) / den, np.nan)


def _interval(draws: FloatArray, confidence: float) -> tuple[float, float] | None:
    finite = draws[np.isfinite(draws)]
    if finite.size < 2:
        return None
    tail = (1 - confidence) / 2
    lo, hi = np.quantile(finite, [tail, 1 - tail])
    return float(lo), float(hi)


def shakeup(
    public_values: ArrayLike1D,
    private_values: ArrayLike1D,
    *,
    names: Sequence[str],
    higher_is_better: bool,
    metric: str,
    public_rank_sets: Sequence[tuple[int, int] | None] | None = None,
    private_best_set: Sequence[bool | None] | None = None,
    public_replicates: FloatArray | None = None,
    private_replicates: FloatArray | None = None,
    item_statistics: Sequence[tuple[FloatArray, FloatArray]] | None = None,
    finalize: Finalize | None = None,
    resplits: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> ShakeupReport:
    """The shake-up report of the counted entries of one task.

    Parameters
    ----------
    public_values, private_values : shape (K,)
        Each entry's value on the public and on the private board.
    names : K entry names.
    higher_is_better : the metric's direction.
    metric : the metric's registry name (for the signature).
    public_rank_sets : K (low, high) simultaneous rank sets of the public board (None where unknown).
    private_best_set : K flags: in the private board's best set.
    public_replicates, private_replicates : shape (B, K)
        The boards' paired bootstrap replicates (the same resample ``b`` for every entry), for the
        intervals of the correlations. Both or neither.
    item_statistics : K pairs (public S, private S), each (n_split, m)
        Per-item statistics for the re-split reference (decomposable metrics); with ``finalize``.
    finalize : the metric's ``finalize`` on pooled sums.
    resplits : re-splits of the reference.
    seed : seed of the re-splits.
    confidence : level of the correlation intervals.
    """
    pub, priv = _shakeup_iv(public_values, private_values, names=names, resplits=resplits)
    k = pub.size
    notes: list[str] = []
    spearman, kendall = _correlations(pub, priv, notes)
    sp_int, kt_int = _correlation_intervals(public_replicates, private_replicates, k, confidence)
    sign = 1.0 if higher_is_better else -1.0
    reference, gap_p, p_ref = _reference(item_statistics, finalize, sign, resplits, seed, k, notes)
    teams = _teams(
        pub,
        priv,
        names=names,
        higher_is_better=higher_is_better,
        gaps=sign * (pub - priv),
        gap_p=gap_p,
        public_rank_sets=public_rank_sets,
        private_best_set=private_best_set,
    )
    order = sorted(range(k), key=lambda i: (teams[i].public_rank, teams[i].name))
    known = [t.inside_rank_set for t in teams if t.inside_rank_set is not None]
    top = min(10, k)
    public_top = {teams[i].name for i in order[:top]}
    private_order = sorted(range(k), key=lambda i: (teams[i].private_rank, teams[i].name))
    private_top = {teams[i].name for i in private_order[:top]}
    winner = teams[order[0]]
    with_items = item_statistics is not None
    return ShakeupReport(
        names=tuple(str(n) for n in (teams[i].name for i in order)),
        spearman=spearman,
        spearman_interval=sp_int,
        kendall=kendall,
        kendall_interval=kt_int,
        resplits=resplits if with_items else 0,
        reference_spearman=_reference_quantiles(reference),
        p_reference_le_observed=p_ref,
        teams=tuple(teams[i] for i in order),
        inside_rank_sets=sum(known) if known else None,
        rank_sets_known=len(known),
        top10_retained=len(public_top & private_top),
        top10_size=top,
        public_winner=winner.name,
        public_winner_in_private_best_set=winner.in_private_best_set,
        notes=tuple(notes),
        signature=_shakeup_signature(
            metric, resplits, seed, confidence, with_items=with_items, intervals=sp_int
        ),
    )


def _shakeup_iv(
    public_values: ArrayLike1D, private_values: ArrayLike1D, *, names: Sequence[str], resplits: int
) -> tuple[FloatArray, FloatArray]:
    """The two boards' values, checked (one per name, at least 2, finite)."""
    pub = np.asarray(public_values, dtype=np.float64)
    priv = np.asarray(private_values, dtype=np.float64)
    k = pub.size
    if priv.shape != pub.shape or len(names) != k:
        raise ValueError("public values, private values and names must have one entry each")
    if k < 2:
        raise ValueError(f"a shake-up report needs at least 2 entries on both boards, found {k}")
    if not (np.isfinite(pub).all() and np.isfinite(priv).all()):
        raise ValueError("every public and private value must be a finite number")
    if resplits < 1:
        raise ValueError("resplits must be at least 1")
    return pub, priv


def _correlations(pub: FloatArray, priv: FloatArray, notes: list[str]) -> tuple[float, float]:
    """Spearman's rho and Kendall's tau-b of the two boards (a note where a board is constant)."""
    with warnings.catch_warnings():  # a constant board: the correlations are undefined, said in a note
        warnings.simplefilter("ignore", sps.ConstantInputWarning)
        spearman = float(sps.spearmanr(pub, priv).statistic)
        kendall = float(sps.kendalltau(pub, priv).statistic)
    if not np.isfinite(spearman):
        notes.append("Every entry has the same value on one board: the rank correlations are undefined.")
    return spearman, kendall


def _correlation_intervals(
    public_replicates: FloatArray | None, private_replicates: FloatArray | None, k: int, confidence: float
) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """Percentile intervals of both correlations over the boards' paired replicates (None without them)."""
    if (public_replicates is None) != (private_replicates is None):
        raise ValueError("give both boards' replicates or neither")
    if public_replicates is None or private_replicates is None:
        return None, None
    pr = np.asarray(public_replicates, dtype=np.float64)
    vr = np.asarray(private_replicates, dtype=np.float64)
    if pr.shape != vr.shape or pr.ndim != 2 or pr.shape[1] != k:
        raise ValueError(f"replicates must both have shape (B, {k})")
    sp_int = _interval(_rowwise_spearman(pr, vr), confidence)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sps.ConstantInputWarning)
        taus = np.array([sps.kendalltau(pr[b], vr[b]).statistic for b in range(pr.shape[0])])
    return sp_int, _interval(taus, confidence)


def _reference(
    item_statistics: Sequence[tuple[FloatArray, FloatArray]] | None,
    finalize: Finalize | None,
    sign: float,
    resplits: int,
    seed: int,
    k: int,
    notes: list[str],
) -> tuple[FloatArray | None, FloatArray | None, float | None]:
    """The re-split reference of rho, the gaps' one-sided p-values and ``P(reference <= observed)``."""
    if item_statistics is None:
        notes.append(
            "No per-item statistics for this metric: the re-split reference and the gap p-values are not "
            "computed."
        )
        return None, None, None
    if len(item_statistics) != k:
        raise ValueError("one pair of per-item statistics per entry")
    if finalize is None:
        raise ValueError("the re-split reference needs the metric's finalize")
    reference, gap_p, sp_obs = _resplit(item_statistics, finalize, sign, resplits, seed)
    ref_finite = reference[np.isfinite(reference)]
    # re-splits whose rho is undefined (every entry tied on one part) are left out of the reference
    p_ref = (
        float((1 + np.sum(ref_finite <= sp_obs + 1e-12)) / (1 + ref_finite.size)) if ref_finite.size else None
    )
    return reference, gap_p, p_ref


def _reference_quantiles(reference: FloatArray | None) -> tuple[float, float, float] | None:
    if reference is None or not np.isfinite(reference).any():
        return None
    q = np.quantile(reference[np.isfinite(reference)], [0.05, 0.5, 0.95])
    return float(q[0]), float(q[1]), float(q[2])


def _teams(
    pub: FloatArray,
    priv: FloatArray,
    *,
    names: Sequence[str],
    higher_is_better: bool,
    gaps: FloatArray,
    gap_p: FloatArray | None,
    public_rank_sets: Sequence[tuple[int, int] | None] | None,
    private_best_set: Sequence[bool | None] | None,
) -> list[TeamShake]:
    """One :class:`TeamShake` per entry, in the input order."""
    k = pub.size
    gap_p_holm = holm(gap_p) if gap_p is not None else None
    pub_rank = min_ranks(pub, higher_is_better=higher_is_better)
    priv_rank = min_ranks(priv, higher_is_better=higher_is_better)
    sets = list(public_rank_sets) if public_rank_sets is not None else [None] * k
    best = list(private_best_set) if private_best_set is not None else [None] * k
    teams = []
    for i in range(k):
        rs = sets[i]
        teams.append(
            TeamShake(
                name=str(names[i]),
                public_value=float(pub[i]),
                private_value=float(priv[i]),
                public_rank=int(pub_rank[i]),
                private_rank=int(priv_rank[i]),
                rank_change=int(pub_rank[i] - priv_rank[i]),
                public_rank_set=None if rs is None else (int(rs[0]), int(rs[1])),
                inside_rank_set=None if rs is None else bool(rs[0] <= priv_rank[i] <= rs[1]),
                gap=float(gaps[i]),
                gap_p=None if gap_p is None else float(gap_p[i]),
                gap_p_holm=None if gap_p_holm is None else float(gap_p_holm[i]),
                in_private_best_set=best[i],
            )
        )
    return teams


def _shakeup_signature(
    metric: str,
    resplits: int,
    seed: int,
    confidence: float,
    *,
    with_items: bool,
    intervals: tuple[float, float] | None,
) -> Signature:
    return Signature(
        metric=metric,
        method="shakeup",
        resamples=resplits if with_items else 0,
        seed=seed if with_items else None,
        confidence=confidence if intervals is not None else None,
    ).with_extra(
        correlation="spearman,kendall-tau-b",
        interval="percentile over paired board replicates" if intervals is not None else "none",
        reference="re-split at the same sizes" if with_items else "none",
        gap_test="one-sided re-split, holm" if with_items else "none",
        ranks="competition (1,2,2,4)",
    )


def _resplit(
    item_statistics: Sequence[tuple[FloatArray, FloatArray]],
    finalize: Finalize,
    sign: float,
    resplits: int,
    seed: int,
) -> tuple[FloatArray, FloatArray, float]:
    """Spearman's rho of every re-split, each entry's one-sided gap p-value, and the observed rho.

    The observed gaps and rho are recomputed from the same per-item statistics as the reference (for an
    entry with several runs the stored statistics are one run's), so observed and reference are alike.
    """
    pairs = [(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)) for a, b in item_statistics]
    k = len(pairs)
    n_pub, n_priv = pairs[0][0].shape[0], pairs[0][1].shape[0]
    if any(a.shape[0] != n_pub or b.shape[0] != n_priv for a, b in pairs):
        raise ValueError("every entry's per-item statistics must cover the same public and private items")
    if n_pub < 1 or n_priv < 1:
        raise ValueError("both splits need at least one item")
    full = [np.concatenate([a, b]) for a, b in pairs]
    totals = [s.sum(axis=0) for s in full]
    obs_pub = np.array([float(finalize(a.sum(axis=0))) for a, _ in pairs])
    obs_priv = np.array([float(finalize(b.sum(axis=0))) for _, b in pairs])
    obs_gap = sign * (obs_pub - obs_priv)
    obs_rho = float(_rowwise_spearman(obs_pub[None, :], obs_priv[None, :])[0])
    n = n_pub + n_priv
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    rho = np.empty(resplits)
    exceed = np.zeros(k)
    done = 0
    while done < resplits:
        size = min(_BLOCK, resplits - done)
        # a random public part of n_pub items per re-split: the first n_pub of a random permutation
        keys = rng.random((size, n))
        cut = np.partition(keys, n_pub - 1, axis=1)[:, n_pub - 1 : n_pub]
        mask = (keys <= cut).astype(np.float64)
        pub_r = np.empty((size, k))
        priv_r = np.empty((size, k))
        for j, (s, total) in enumerate(zip(full, totals, strict=True)):
            pooled = mask @ s
            pub_r[:, j] = finalize(pooled)
            priv_r[:, j] = finalize(total - pooled)
        rho[done : done + size] = _rowwise_spearman(pub_r, priv_r)
        exceed += (sign * (pub_r - priv_r) >= obs_gap - 1e-12).sum(axis=0)
        done += size
    return rho, (1 + exceed) / (1 + resplits), obs_rho


#: Teams drawn in the slope chart (the public top; the table has every team).
SLOPE_CHART_TEAMS = 30


def slope_chart_svg(report: ShakeupReport, *, title: str | None = None) -> bytes:
    """A slope chart of the public and private ranks of the public board's top teams, as SVG bytes.

    Each team is a line from its public rank (left) to its private rank (right); a line that leaves the
    team's public simultaneous rank set is drawn solid red, one inside it grey. Deterministic bytes, as the
    critical-difference diagram (text as ``<text>``, fixed hash salt, no date).
    """
    import io

    import matplotlib as mpl
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    from stats.cddiagram import _RC

    teams = list(report.teams[:SLOPE_CHART_TEAMS])
    k = len(report.teams)
    worst = max([t.public_rank for t in teams] + [t.private_rank for t in teams] + [1])
    bottom, top = 0.4, 0.45 if title else 0.15  # inches: the tick labels below, the title above
    height = bottom + top + 0.24 * worst
    with mpl.rc_context(_RC):  # type: ignore[arg-type]
        fig = Figure(figsize=(6.5, height))
        FigureCanvasSVG(fig)
        ax = fig.add_axes((0.3, bottom / height, 0.4, 1 - (bottom + top) / height))
        for t in teams:
            outside = t.inside_rank_set is False
            ax.plot(
                [0, 1],
                [t.public_rank, t.private_rank],
                color="#b3261e" if outside else "#7a7a7a",
                linewidth=1.6 if outside else 0.9,
                marker="o",
                markersize=3,
            )
        # one label per rank and side: tied teams share it ("1. alpha, beta"), so no text overlaps
        for x, side, rank_of in ((-0.04, "right", "public_rank"), (1.04, "left", "private_rank")):
            by_rank: dict[int, list[str]] = {}
            for t in teams:
                by_rank.setdefault(int(getattr(t, rank_of)), []).append(t.name)
            for rank, names in by_rank.items():
                ax.text(x, rank, f"{rank}. {', '.join(names)}", ha=side, va="center")
        ax.set_ylim(worst + 0.5, 0.5)
        ax.set_xlim(0, 1)
        ax.set_xticks([0, 1], ["public rank", "private rank"])
        ax.set_yticks([])
        for spine in ("left", "right", "top"):
            ax.spines[spine].set_visible(False)
        if title:
            shown = f" (top {len(teams)} of {k})" if len(teams) < k else ""
            fig.suptitle(f"{title}: public to private{shown}", fontsize=9, y=1 - 0.1 / height)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()
