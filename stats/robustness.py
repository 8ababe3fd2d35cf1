"""How stable a ranking is: rank frequencies, Kendall's tau, and three ranking schemes side by side.

What the BIAS guideline for biomedical challenges (Maier-Hein et al. 2020) asks every challenge report
for, as challengeR (Wiesenfarth et al. 2021) computes it, from the task's common resamples:

- :func:`rank_robustness`: per entry, how often it held each rank over the bootstrap resamples, its
  median rank and equal-tailed 95% rank interval (a blob plot, :func:`blob_plot_svg`, with a text
  alternative, :meth:`RankRobustness.text`), and the distribution of Kendall's tau-b between the board's
  ranking and every bootstrap ranking (:func:`kendall_tau_b`, vectorised over the resamples);
- :func:`ranking_schemes`: for one task with per-item scores, aggregate-then-rank (rank the mean),
  rank-then-aggregate (rank the entries on every item, then rank the mean rank) and test-then-rank
  (count the entries each one beats in a one-sided Wilcoxon signed-rank test at level ``alpha``, then rank
  by that count), where they disagree, and, given the task's resample weights ``W``, the bootstrap rank
  intervals of the first two: the mean rank of a resample is ``W @ R / N`` for the per-item ranks ``R``,
  one matrix product like every other replicate of the board;
- :func:`consensus_ranking`: across the tasks of a challenge, the ranking by mean rank over tasks
  (Borda's count; with complete rankings it is the Euclidean consensus that challengeR's ``consensus``
  computes by default); :func:`challenge_ranking` puts the three schemes side by side across tasks, each
  with its consensus, and names the entries on which they disagree.

Stated rules: ranks are "min" ranks (1, 2, 2, 4), rank 1 the best whatever the metric's direction (as on
the board and challengeR's default ``ties.method = "min"``). A missing result (NaN) is ranked worst on its
item (every missing entry of an item shares rank ``present + 1``); for the mean and the tests it counts as
``missing_value`` (default: the worst score observed anywhere in the task). A bootstrap ranking with every
entry tied has no tau-b (0/0): such resamples are left out and counted in ``undefined``.

References
----------
.. [1] Maier-Hein, L. et al. (2020). BIAS: Transparent reporting of biomedical image analysis challenges.
       *Medical Image Analysis* 66, 101796.
.. [2] Wiesenfarth, M. et al. (2021). Methods and open-source toolkit for analyzing and visualizing
       challenge results. *Scientific Reports* 11, 2369.
.. [3] Kendall, M. G. (1945). The treatment of ties in ranking problems. *Biometrika* 33(3), 239-251.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from stats.checks import check_level, check_replicates, check_vector
from stats.compare_ranks import min_ranks, rank_distribution

__all__ = [
    "CONSENSUS_METHOD",
    "SCHEMES",
    "ChallengeRanking",
    "Consensus",
    "EntryRanks",
    "RankRobustness",
    "RankingSchemes",
    "SchemeRanking",
    "TauDistribution",
    "blob_plot_svg",
    "challenge_ranking",
    "consensus_ranking",
    "kendall_tau_b",
    "per_item_ranks",
    "rank_robustness",
    "ranking_schemes",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

SCHEMES: tuple[str, ...] = ("aggregate-then-rank", "rank-then-aggregate", "test-then-rank")
#: How the consensus across tasks is formed (named in results).
CONSENSUS_METHOD = "mean rank over tasks (Borda; challengeR's Euclidean consensus)"
#: Elements (resamples x pairs) compared at once by :func:`kendall_tau_b`.
_TAU_CHUNK = 1 << 22
#: Above this many entries tau-b is computed per resample by ``scipy.stats.kendalltau`` (O(K log K)).
_TAU_PAIRWISE_MAX_K = 300
SVG_HASHSALT = "honest-leaderboard-blob"


def _names(names: Sequence[str] | None, k: int) -> tuple[str, ...]:
    if names is None:
        return tuple(f"entry-{j}" for j in range(k))
    if len(names) != k:
        raise ValueError(f"`names` must have one name per entry ({k}).")
    return tuple(str(n) for n in names)


def kendall_tau_b(reference: npt.ArrayLike, samples: npt.ArrayLike) -> FloatArray:
    """Kendall's tau-b between ``reference`` (K,) and every row of ``samples`` (B, K), vectorised.

    ``tau_b = (n_c - n_d) / sqrt((n_0 - n_1)(n_0 - n_2))`` with ``n_c - n_d`` the sum over pairs
    ``i < j`` of ``sign(x_i - x_j) sign(y_i - y_j)`` and ``n_1``, ``n_2`` the tied pairs of each side
    (Kendall 1945): the statistic ``scipy.stats.kendalltau`` computes by default. Values or ranks give the
    same result (only the signs of differences enter). NaN where one side has every pair tied (0/0).
    ``O(B K^2)`` in chunks of resamples up to 300 entries; above, scipy per resample, ``O(B K log K)``.

    Examples
    --------
    >>> kendall_tau_b([1, 2, 3], [[1, 2, 3], [3, 2, 1], [1, 3, 2]]).round(4).tolist()
    [1.0, -1.0, 0.3333]
    """
    x = check_vector(reference, name="reference", minimum=2)
    y = np.asarray(samples, dtype=np.float64)
    if y.ndim == 1:
        y = y[None, :]
    k = x.shape[0]
    if y.ndim != 2 or y.shape[1] != k:
        raise ValueError(f"`samples` must have shape (B, {k}).")
    if k > _TAU_PAIRWISE_MAX_K:  # O(K log K) per resample (Knight's algorithm in scipy) beats O(K^2)
        out_rows = np.empty(y.shape[0])
        for b, row in enumerate(y):
            out_rows[b] = sps.kendalltau(x, row).statistic
        return out_rows
    i, j = np.triu_indices(k, 1)
    sx = np.sign(x[i] - x[j])
    n0 = float(i.shape[0])
    n1 = float(np.count_nonzero(sx == 0))
    out = np.empty(y.shape[0])
    step = max(1, _TAU_CHUNK // max(1, i.shape[0]))
    for start in range(0, y.shape[0], step):
        block = y[start : start + step]
        d = np.sign(block[:, i] - block[:, j])
        num = d @ sx
        n2 = np.count_nonzero(d == 0, axis=1)
        den = np.sqrt((n0 - n1) * (n0 - n2))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start : start + step] = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return out


@dataclass(frozen=True)
class TauDistribution:
    """Kendall's tau-b between the board's ranking and the bootstrap rankings.

    Attributes
    ----------
    values : numpy.ndarray, shape (B - undefined,)
        One tau-b per resample (resamples with no tau-b left out).
    mean, median, low, high : float
        Mean, median and equal-tailed ``confidence`` bounds (linear quantiles).
    undefined : int
        Resamples in which every entry tied (no tau-b).
    """

    values: FloatArray = field(repr=False)
    mean: float
    median: float
    low: float
    high: float
    undefined: int
    confidence: float

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary with a 20-bin histogram on [-1, 1]."""
        counts, edges = np.histogram(self.values, bins=20, range=(-1.0, 1.0))
        return {
            "mean": self.mean,
            "median": self.median,
            "interval": [self.low, self.high],
            "confidence": self.confidence,
            "undefined": self.undefined,
            "histogram": {"edges": edges.round(6).tolist(), "counts": counts.tolist()},
        }


def _tau_distribution(reference: FloatArray, samples: FloatArray, confidence: float) -> TauDistribution:
    tau = kendall_tau_b(reference, samples)
    defined = tau[np.isfinite(tau)]
    if defined.size == 0:
        raise ValueError("every bootstrap ranking ties every entry: Kendall's tau-b is undefined.")
    tail = (1 - confidence) / 2
    return TauDistribution(
        values=defined,
        mean=float(defined.mean()),
        median=float(np.median(defined)),
        low=float(np.quantile(defined, tail)),
        high=float(np.quantile(defined, 1 - tail)),
        undefined=int(tau.size - defined.size),
        confidence=confidence,
    )


@dataclass(frozen=True)
class EntryRanks:
    """One entry's ranks over the bootstrap resamples.

    Attributes
    ----------
    name : str
    rank : int
        Rank on the full test set (1 = best, ties share the smallest rank).
    median : int
        Median rank over the resamples (inverse of the empirical distribution function at 0.5).
    low, high : int
        Equal-tailed ``confidence`` rank interval (same rule).
    frequencies : tuple[float, ...]
        Share of resamples in which the entry held rank 1, 2, ..., K.
    """

    name: str
    rank: int
    median: int
    low: int
    high: int
    frequencies: tuple[float, ...]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "name": self.name,
            "rank": self.rank,
            "median": self.median,
            "interval": [self.low, self.high],
            "frequencies": [round(f, 6) for f in self.frequencies],
        }


@dataclass(frozen=True)
class RankRobustness:
    """Rank frequencies per entry and Kendall's tau-b of the bootstrap rankings (one task).

    Attributes
    ----------
    entries : tuple[EntryRanks, ...]
        In the order of the board (rank, then name).
    tau : TauDistribution
    confidence : float
    higher_is_better : bool
    resamples : int
    scheme : str
        The ranking the bootstrap re-ranks (``"aggregate-then-rank"`` for a board's values).
    """

    entries: tuple[EntryRanks, ...]
    tau: TauDistribution
    confidence: float
    higher_is_better: bool
    resamples: int
    scheme: str = "aggregate-then-rank"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "scheme": self.scheme,
            "confidence": self.confidence,
            "higher_is_better": self.higher_is_better,
            "resamples": self.resamples,
            "ties": "min",
            "entries": [e.as_dict() for e in self.entries],
            "kendall_tau_b": self.tau.as_dict(),
        }

    def text(self) -> str:
        """The blob plot's text alternative: one line per entry, then the tau-b summary."""
        pct = f"{self.confidence * 100:g}%"
        lines = [f"Rank over {self.resamples} bootstrap resamples ({self.scheme}; rank 1 = best):"]
        for e in self.entries:
            top = max(range(len(e.frequencies)), key=lambda r: e.frequencies[r])
            lines.append(
                f"{e.name}: rank {e.rank}, median {e.median}, {pct} interval {e.low}-{e.high}, "
                f"most often rank {top + 1} ({e.frequencies[top]:.0%} of resamples)"
            )
        t = self.tau
        lines.append(
            f"Kendall's tau-b with the full ranking: median {t.median:.3f}, mean {t.mean:.3f}, "
            f"{pct} interval [{t.low:.3f}, {t.high:.3f}]"
            + (f"; {t.undefined} resamples with every entry tied left out" if t.undefined else "")
        )
        return "\n".join(lines)


def _median_rank(probabilities: FloatArray) -> IntArray:
    cumulative = np.cumsum(probabilities, axis=1)
    return (np.argmax(cumulative >= 0.5 - 1e-9, axis=1) + 1).astype(np.int64)


def rank_robustness(
    values: npt.ArrayLike,
    replicates: npt.ArrayLike,
    *,
    higher_is_better: bool,
    names: Sequence[str] | None = None,
    confidence: float = 0.95,
    scheme: str = "aggregate-then-rank",
) -> RankRobustness:
    """Rank frequencies, median rank and rank interval per entry, and tau-b of the bootstrap rankings.

    Parameters
    ----------
    values : array_like, shape (K,)
        The board's values (or any scores to rank, e.g. mean per-item ranks).
    replicates : array_like, shape (B, K)
        Their replicates over the task's common resamples.
    higher_is_better : bool
    names : sequence of str, optional
    confidence : float, default 0.95
    scheme : str
        A label for what ``values`` are (:data:`SCHEMES`).

    Examples
    --------
    >>> theta = np.random.default_rng(1).normal([0.80, 0.79, 0.70], 0.01, size=(2000, 3))
    >>> rr = rank_robustness([0.80, 0.79, 0.70], theta, higher_is_better=True, names=["a", "b", "c"])
    >>> [(e.name, e.median, e.low, e.high) for e in rr.entries]
    [('a', 1, 1, 2), ('b', 2, 1, 2), ('c', 3, 3, 3)]
    """
    theta = check_replicates(replicates)
    k = theta.shape[1]
    p = check_vector(values, name="values", length=k, what="values, one per entry")
    confidence = check_level(confidence, name="confidence")
    labels = _names(names, k)
    if k < 2:
        raise ValueError("a ranking needs at least 2 entries.")
    observed = min_ranks(p, higher_is_better=higher_is_better)
    dist = rank_distribution(theta, higher_is_better=higher_is_better, confidence=confidence)
    median = _median_rank(dist.probabilities)
    keyed = -p if higher_is_better else p
    if np.all(keyed == keyed[0]):
        raise ValueError("every entry ties on the full test set: there is no ranking to compare with.")
    # tau-b of ranks = tau-b of the keyed values (signs of differences only)
    tau = _tau_distribution(keyed, -theta if higher_is_better else theta, confidence)
    order = sorted(range(k), key=lambda j: (observed[j], labels[j]))
    entries = tuple(
        EntryRanks(
            name=labels[j],
            rank=int(observed[j]),
            median=int(median[j]),
            low=int(dist.low[j]),
            high=int(dist.high[j]),
            frequencies=tuple(float(f) for f in dist.probabilities[j]),
        )
        for j in order
    )
    return RankRobustness(
        entries=entries,
        tau=tau,
        confidence=confidence,
        higher_is_better=higher_is_better,
        resamples=theta.shape[0],
        scheme=scheme,
    )


def blob_plot_svg(result: RankRobustness, *, title: str | None = None) -> bytes:
    """The blob plot of :func:`rank_robustness` as SVG bytes (challengeR's rank-frequency plot).

    One column per entry (in board order), one row per rank (1 at the top); a disc's area is the share of
    resamples in which the entry held that rank; a black cross marks the median rank and a black line the
    rank interval. Names longer than 32 characters are shortened to their end on the plot. The SVG carries :meth:`RankRobustness.text` as its ``<desc>`` text alternative;
    reproducible bytes (fixed hash salt, no date).

    Examples
    --------
    >>> theta = np.random.default_rng(1).normal([0.80, 0.79, 0.70], 0.01, size=(500, 3))
    >>> svg = blob_plot_svg(rank_robustness([0.80, 0.79, 0.70], theta, higher_is_better=True))
    >>> svg.startswith(b"<?xml") and b"<desc" in svg
    True
    """
    import matplotlib as mpl
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    k = len(result.entries)
    rc: dict[str, Any] = {
        "svg.hashsalt": SVG_HASHSALT,
        "svg.fonttype": "none",
        "font.family": "DejaVu Sans",
        "font.size": 9.0,
    }
    width = max(3.5, 0.45 * k + 1.5)
    labels = [_short(e.name) for e in result.entries]
    height = max(3.0, 0.3 * k + 1.5) + 0.09 * max(len(label) for label in labels)
    with mpl.rc_context(rc):  # type: ignore[arg-type]
        fig = Figure(figsize=(width, height))
        FigureCanvasSVG(fig)
        ax = fig.add_subplot(1, 1, 1)
        xs, ys, sizes = [], [], []
        for col, e in enumerate(result.entries):
            for r, f in enumerate(e.frequencies):
                if f > 0:
                    xs.append(col + 1)
                    ys.append(r + 1)
                    sizes.append(400.0 * f)
        ax.scatter(xs, ys, s=sizes, color="#1f77b4", alpha=0.6, linewidths=0)
        for col, e in enumerate(result.entries):
            ax.plot([col + 1, col + 1], [e.low, e.high], color="black", linewidth=1.0)
            ax.plot([col + 1], [e.median], marker="x", color="black", markersize=5)
        ax.plot([1, k], [1, k], color="grey", linewidth=0.5, linestyle=":")
        ax.set_xticks(range(1, k + 1))
        ax.set_xticklabels(labels, rotation=90)
        ax.set_yticks(range(1, k + 1))
        ax.set_ylim(k + 0.7, 0.3)
        ax.set_xlim(0.3, k + 0.7)
        ax.set_ylabel("rank")
        ax.set_title(title or f"Rank over {result.resamples} bootstrap resamples")
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    svg = buffer.getvalue()
    desc = _xml_escape(result.text()).encode()
    head, sep, tail = _split_after_svg_tag(svg)
    return head + sep + b" <desc>" + desc + b"</desc>\n" + tail


#: Entry names longer than this are shortened on the plot (keeping their end); the text alternative has them whole.
_LABEL_CHARS = 32


def _short(name: str) -> str:
    return name if len(name) <= _LABEL_CHARS else "..." + name[-(_LABEL_CHARS - 3) :]


def _split_after_svg_tag(svg: bytes) -> tuple[bytes, bytes, bytes]:
    start = svg.index(b"<svg")
    end = svg.index(b">", start) + 1
    return svg[:end], b"\n", svg[end:].lstrip(b"\n")


def _xml_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def per_item_ranks(item_scores: npt.ArrayLike, *, higher_is_better: bool) -> FloatArray:
    """Rank the entries on every item (rows), missing (NaN) ranked worst: shape (N, K), min ranks.

    Examples
    --------
    >>> per_item_ranks([[0.9, 0.5, np.nan], [0.2, 0.2, 0.1]], higher_is_better=True).tolist()
    [[1.0, 2.0, 3.0], [1.0, 1.0, 3.0]]
    """
    s = np.asarray(item_scores, dtype=np.float64)
    if s.ndim != 2:
        raise ValueError("`item_scores` must have shape (N, K).")
    missing = np.isnan(s)
    keyed = np.where(missing, np.inf, -s if higher_is_better else s)  # missing sorts last, ties together
    return min_ranks(keyed, higher_is_better=False).astype(np.float64)


@dataclass(frozen=True)
class SchemeRanking:
    """One ranking scheme's result on one task.

    Attributes
    ----------
    scheme : str
        One of :data:`SCHEMES`.
    scores : tuple[float, ...]
        What is ranked: the mean score, the mean per-item rank (lower is better) or the number of entries
        significantly beaten.
    ranks : tuple[int, ...]
        Min ranks, 1 = best.
    robustness : RankRobustness or None
        Bootstrap rank intervals of the scheme, given the task's resample weights (none for
        test-then-rank, whose tests are not resampled).
    """

    scheme: str
    scores: tuple[float, ...]
    ranks: tuple[int, ...]
    robustness: RankRobustness | None = field(default=None, repr=False)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "scheme": self.scheme,
            "scores": list(self.scores),
            "ranks": list(self.ranks),
            "robustness": None if self.robustness is None else self.robustness.as_dict(),
        }


@dataclass(frozen=True)
class RankingSchemes:
    """Aggregate-then-rank, rank-then-aggregate and test-then-rank of one task, side by side.

    Attributes
    ----------
    names : tuple[str, ...]
    schemes : tuple[SchemeRanking, ...]
        In the order of :data:`SCHEMES`.
    disagreements : tuple[str, ...]
        Entries whose rank differs between the schemes.
    tau_between : dict[str, float]
        Kendall's tau-b between every two schemes' rankings (``"a vs b"``).
    alpha : float
        Level of each one-sided Wilcoxon test of test-then-rank (unadjusted, as challengeR's default).
    missing_value : float
        What a missing result counts as for the mean and the tests.
    missing : int
        Number of missing (entry, item) results.
    rules : str
        The ranking rules in words (ties, missing results).
    """

    names: tuple[str, ...]
    schemes: tuple[SchemeRanking, ...]
    disagreements: tuple[str, ...]
    tau_between: dict[str, float]
    alpha: float
    missing_value: float
    missing: int
    rules: str

    def scheme(self, name: str) -> SchemeRanking:
        """The result of scheme ``name``."""
        for s in self.schemes:
            if s.scheme == name:
                return s
        raise KeyError(name)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "names": list(self.names),
            "schemes": [s.as_dict() for s in self.schemes],
            "disagreements": list(self.disagreements),
            "tau_between": self.tau_between,
            "alpha": self.alpha,
            "missing_value": self.missing_value,
            "missing": self.missing,
            "rules": self.rules,
        }


def _wins(filled: FloatArray, *, higher_is_better: bool, alpha: float) -> FloatArray:
    """Per entry, the number of others it beats in a one-sided paired Wilcoxon signed-rank test."""
    k = filled.shape[1]
    wins = np.zeros(k)
    alternative = "greater" if higher_is_better else "less"
    for a in range(k):
        for b in range(k):
            if a == b:
                continue
            d = filled[:, a] - filled[:, b]
            if not np.any(d != 0):
                continue  # identical results: never significant
            p = float(sps.wilcoxon(d, alternative=alternative, zero_method="wilcox").pvalue)
            wins[a] += p < alpha
    return wins


def ranking_schemes(
    item_scores: npt.ArrayLike,
    *,
    higher_is_better: bool,
    names: Sequence[str] | None = None,
    alpha: float = 0.05,
    missing_value: float | None = None,
    weights: npt.ArrayLike | None = None,
    confidence: float = 0.95,
) -> RankingSchemes:
    """Rank one task's entries three ways from their per-item scores (BIAS; challengeR).

    Parameters
    ----------
    item_scores : array_like, shape (N, K)
        Per-item (per-case) score of every entry, NaN where an entry has no result for an item. The
        aggregate is the mean over items (a mean-decomposable metric: accuracy, Dice per case...).
    higher_is_better : bool
    names : sequence of str, optional
    alpha : float, default 0.05
        Level of each one-sided Wilcoxon signed-rank test (test-then-rank).
    missing_value : float, optional
        What a missing result counts as in the mean and the tests; default the worst observed score.
    weights : array_like, shape (B, N), optional
        The task's resample counts ``W``: adds the bootstrap rank intervals of aggregate-then-rank and
        rank-then-aggregate (replicates ``W @ S / W.sum(1)`` and ``W @ R / W.sum(1)``).
    confidence : float, default 0.95

    Returns
    -------
    RankingSchemes

    Examples
    --------
    >>> s = np.array([[0.9, 0.8], [0.9, 0.8], [0.0, 0.8]])  # a wins two items, b wins on average
    >>> rs = ranking_schemes(s, higher_is_better=True, names=["a", "b"])
    >>> rs.scheme("aggregate-then-rank").ranks, rs.scheme("rank-then-aggregate").ranks
    ((2, 1), (1, 2))
    """
    s = np.asarray(item_scores, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] < 2 or s.shape[1] < 2:
        raise ValueError("`item_scores` must have shape (N, K) with N >= 2 items and K >= 2 entries.")
    if np.any(np.isinf(s)):
        raise ValueError("`item_scores` must be finite or NaN (missing).")
    n, k = s.shape
    labels = _names(names, k)
    alpha = check_level(alpha, name="alpha")
    missing = np.isnan(s)
    if missing.all(axis=0).any():
        raise ValueError("an entry has no result on any item.")
    if missing_value is None:
        missing_value = float(np.nanmin(s) if higher_is_better else np.nanmax(s))
    filled = np.where(missing, missing_value, s)
    means = filled.mean(axis=0)
    item_ranks = per_item_ranks(s, higher_is_better=higher_is_better)
    mean_ranks = item_ranks.mean(axis=0)
    wins = _wins(filled, higher_is_better=higher_is_better, alpha=alpha)
    agg_rank = min_ranks(means, higher_is_better=higher_is_better)
    rta_rank = min_ranks(mean_ranks, higher_is_better=False)
    ttr_rank = min_ranks(wins, higher_is_better=True)

    agg_rob = rta_rob = None
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim != 2 or w.shape[1] != n or w.shape[0] < 2:
            raise ValueError(f"`weights` must have shape (B, {n}) with B >= 2.")
        totals = w.sum(axis=1, keepdims=True)
        if np.any(totals <= 0):
            raise ValueError("every resample of `weights` must weigh some item.")
        agg_rob = rank_robustness(
            means, w @ filled / totals, higher_is_better=higher_is_better, names=labels,
            confidence=confidence, scheme="aggregate-then-rank",
        )  # fmt: skip
        if np.any(mean_ranks != mean_ranks[0]):
            rta_rob = rank_robustness(
                mean_ranks, w @ item_ranks / totals, higher_is_better=False, names=labels,
                confidence=confidence, scheme="rank-then-aggregate",
            )  # fmt: skip

    schemes = (
        SchemeRanking("aggregate-then-rank", tuple(map(float, means)), tuple(map(int, agg_rank)), agg_rob),
        SchemeRanking(
            "rank-then-aggregate", tuple(map(float, mean_ranks)), tuple(map(int, rta_rank)), rta_rob
        ),
        SchemeRanking("test-then-rank", tuple(map(float, wins)), tuple(map(int, ttr_rank)), None),
    )
    ranks = np.array([sc.ranks for sc in schemes])
    differ = np.any(ranks != ranks[0], axis=0)
    tau: dict[str, float] = {}
    for a in range(3):
        for b in range(a + 1, 3):
            t = kendall_tau_b(ranks[a], ranks[b][None, :])[0]
            tau[f"{SCHEMES[a]} vs {SCHEMES[b]}"] = float(t) if np.isfinite(t) else 0.0
    n_missing = int(missing.sum())
    missing_rule = (
        f"{n_missing} missing results, ranked worst on their item and counted as {missing_value:g} in the mean "
        "and the tests"
        if n_missing
        else "no missing results (a missing one would be ranked worst on its item)"
    )
    rules = (
        f"ranks: min (1, 2, 2, 4), 1 = best; {missing_rule}; test-then-rank: one-sided Wilcoxon "
        f"signed-rank tests at {alpha:g}, unadjusted, ranked by the number of entries beaten"
    )
    return RankingSchemes(
        names=labels,
        schemes=schemes,
        disagreements=tuple(labels[j] for j in np.flatnonzero(differ)),
        tau_between=tau,
        alpha=alpha,
        missing_value=float(missing_value),
        missing=int(missing.sum()),
        rules=rules,
    )


@dataclass(frozen=True)
class Consensus:
    """The consensus ranking of a challenge's tasks.

    Attributes
    ----------
    names : tuple[str, ...]
    tasks : tuple[str, ...]
    mean_ranks : tuple[float, ...]
        Mean over tasks of each entry's rank.
    ranks : tuple[int, ...]
        Min ranks of the mean ranks.
    method : str
        :data:`CONSENSUS_METHOD`.
    disagreements : tuple[str, ...]
        Entries whose rank on some task differs from their consensus rank.
    """

    names: tuple[str, ...]
    tasks: tuple[str, ...]
    mean_ranks: tuple[float, ...]
    ranks: tuple[int, ...]
    method: str
    disagreements: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "names": list(self.names),
            "tasks": list(self.tasks),
            "mean_ranks": list(self.mean_ranks),
            "ranks": list(self.ranks),
            "method": self.method,
            "disagreements": list(self.disagreements),
        }


def consensus_ranking(task_ranks: Mapping[str, Sequence[int]], *, names: Sequence[str]) -> Consensus:
    """The consensus of per-task rankings: rank by mean rank over tasks (min ranks).

    With complete rankings the ranking by mean rank minimises the summed squared (Euclidean) distance to
    the tasks' rank vectors among rank vectors that are permutations, which is challengeR's default
    ``consensus(method = "euclidean")``.

    Examples
    --------
    >>> c = consensus_ranking({"t1": [1, 2, 3], "t2": [2, 1, 3]}, names=["a", "b", "c"])
    >>> c.ranks, c.mean_ranks
    ((1, 1, 3), (1.5, 1.5, 3.0))
    """
    labels = tuple(names)
    if not task_ranks:
        raise ValueError("`task_ranks` must hold at least one task.")
    table = np.array([np.asarray(r, dtype=np.float64) for r in task_ranks.values()])
    if table.ndim != 2 or table.shape[1] != len(labels) or not np.all(np.isfinite(table)):
        raise ValueError(f"every task's ranks must be {len(labels)} finite numbers, one per name.")
    mean = table.mean(axis=0)
    ranks = min_ranks(mean, higher_is_better=False)
    differ = np.any(table != ranks[None, :], axis=0)
    return Consensus(
        names=labels,
        tasks=tuple(task_ranks),
        mean_ranks=tuple(float(m) for m in mean),
        ranks=tuple(int(r) for r in ranks),
        method=CONSENSUS_METHOD,
        disagreements=tuple(labels[j] for j in np.flatnonzero(differ)),
    )


@dataclass(frozen=True)
class ChallengeRanking:
    """The three ranking schemes across the tasks of a challenge, each with its consensus.

    Attributes
    ----------
    names : tuple[str, ...]
    tasks : tuple[str, ...]
    consensus : dict[str, Consensus]
        Per scheme (:data:`SCHEMES`), the consensus of the tasks' rankings (mean rank over tasks).
    disagreements : tuple[str, ...]
        Entries whose consensus rank differs between the schemes.
    per_task : dict[str, RankingSchemes]
    """

    names: tuple[str, ...]
    tasks: tuple[str, ...]
    consensus: dict[str, Consensus]
    disagreements: tuple[str, ...]
    per_task: dict[str, RankingSchemes] = field(repr=False)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "names": list(self.names),
            "tasks": list(self.tasks),
            "consensus": {k: v.as_dict() for k, v in self.consensus.items()},
            "disagreements": list(self.disagreements),
            "per_task": {k: v.as_dict() for k, v in self.per_task.items()},
        }


def challenge_ranking(per_task: Mapping[str, RankingSchemes]) -> ChallengeRanking:
    """Aggregate-, rank- and test-then-rank across a challenge's tasks, with a consensus for each.

    Each task's :func:`ranking_schemes` result (the same entries on every task, any order) is given by task
    name; each scheme's per-task ranks are combined by :func:`consensus_ranking`.

    Examples
    --------
    >>> s1 = np.array([[0.9, 0.8], [0.9, 0.8], [0.0, 0.8]])
    >>> s2 = np.array([[0.9, 0.5], [0.8, 0.4], [0.7, 0.6]])
    >>> c = challenge_ranking({"t1": ranking_schemes(s1, higher_is_better=True, names=["a", "b"]),
    ...                        "t2": ranking_schemes(s2, higher_is_better=True, names=["a", "b"])})
    >>> c.consensus["aggregate-then-rank"].ranks, c.consensus["rank-then-aggregate"].ranks
    ((1, 1), (1, 2))
    """
    if not per_task:
        raise ValueError("`per_task` must hold at least one task.")
    first = next(iter(per_task.values()))
    names = tuple(sorted(first.names))
    for task, rs in per_task.items():
        if sorted(rs.names) != list(names):
            raise ValueError(f"task '{task}' ranks other entries than the first task.")
    consensus = {}
    for scheme in SCHEMES:
        ranks = {}
        for task, rs in per_task.items():
            by_name = dict(zip(rs.names, rs.scheme(scheme).ranks, strict=True))
            ranks[task] = [by_name[n] for n in names]
        consensus[scheme] = consensus_ranking(ranks, names=names)
    table = np.array([consensus[s].ranks for s in SCHEMES])
    differ = np.any(table != table[0], axis=0)
    return ChallengeRanking(
        names=names,
        tasks=tuple(per_task),
        consensus=consensus,
        disagreements=tuple(names[j] for j in np.flatnonzero(differ)),
        per_task=dict(per_task),
    )
