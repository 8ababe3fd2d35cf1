"""Figures of an entry's details, drawn once when it is scored (matplotlib's SVG backend, no display).

Drawn from aggregates only (precision at the 101 recall thresholds, per class); they are stored with the
score and shown where its details are (organizers during the challenge, everyone once revealed).
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

#: At most this many classes get their own line; the rest are summarised by the mean curve.
MAX_CURVES = 12


def precision_recall_svg(
    recall: Sequence[float], precision: Mapping[str, Sequence[float | None]], *, title: str
) -> str:
    """Precision against recall per class (COCO's interpolated precision at the recall thresholds).

    A class whose precision is undefined (-1: no ground truth) is left out. pycocotools stores 0 at the
    recall thresholds the detections never reach; a reached positive recall has a positive precision, so
    those zeros are drawn as the curve's end (a gap), not as a drop to zero.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    plt.rcParams["svg.fonttype"] = "none"  # text stays text: smaller files, searchable labels
    plt.rcParams["svg.hashsalt"] = "leaderboard"  # stable ids: the same curves give the same file
    r = np.asarray(recall, dtype=np.float64)
    curves = {
        name: np.array([np.nan if v is None or v <= 0 else v for v in values], dtype=np.float64)
        for name, values in precision.items()
    }
    curves = {name: c for name, c in curves.items() if np.isfinite(c).any()}
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    try:
        shown = list(curves.items())[:MAX_CURVES]
        for name, c in shown:
            ax.plot(r, c, linewidth=1.2, label=name)
        if len(curves) > MAX_CURVES:
            mean = np.nanmean(np.stack(list(curves.values())), axis=0)
            ax.plot(r, mean, color="black", linewidth=2.0, label=f"mean of {len(curves)} classes")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("recall")
        ax.set_ylabel("precision")
        ax.set_title(title, fontsize=10)
        ax.grid(True, linewidth=0.3)
        if shown:
            ax.legend(fontsize=7, loc="lower left", ncol=2 if len(shown) > 6 else 1)
        out = io.StringIO()
        fig.savefig(out, format="svg", bbox_inches="tight", metadata={"Date": None})
    finally:
        plt.close(fig)
    return out.getvalue()
