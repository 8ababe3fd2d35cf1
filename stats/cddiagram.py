"""Critical-difference diagrams (Demsar 2006) as SVG, with deterministic bytes.

The diagram shows the axis of average ranks (1 = best, on the left), each entry's name joined to its
average rank, the Nemenyi critical difference as a bar above the axis (Nemenyi post-hoc only), and one
thick bar under the axis for every clique of entries the post-hoc cannot separate.

The SVG is drawn with matplotlib's object API (no pyplot state) under a fixed ``svg.hashsalt``, with text
kept as ``<text>`` elements (``svg.fonttype = "none"``) and no date in the metadata, so the same input
gives the same bytes in any process with the same matplotlib version.
"""

from __future__ import annotations

import io
from typing import Any

import matplotlib as mpl
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure

from stats.crosstask import CrossTaskResult

__all__ = ["SVG_HASHSALT", "cd_diagram_svg"]

#: fixed salt of the ids matplotlib writes into SVG files, so the bytes are reproducible
SVG_HASHSALT = "honest-leaderboard-cd"

_RC: dict[str, Any] = {
    "svg.hashsalt": SVG_HASHSALT,
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "font.size": 9.0,
    "path.simplify": False,
    "svg.image_inline": True,
}


def cd_diagram_svg(result: CrossTaskResult, *, title: str | None = None, width: float = 6.5) -> bytes:
    """Draw the critical-difference diagram of a cross-task comparison as SVG bytes.

    Parameters
    ----------
    result : CrossTaskResult
        From :func:`stats.crosstask.compare_across_tasks`.
    title : str, optional
        A title above the diagram.
    width : float, default 6.5
        Width in inches (the height follows from the number of entries).

    Returns
    -------
    bytes
        A UTF-8 SVG document; entry names are ``<text>`` elements.

    References
    ----------
    .. [1] Demsar, J. (2006). Statistical comparisons of classifiers over multiple data sets. *JMLR* 7,
       1-30, Section 4 (Figures 1 and 2).

    Examples
    --------
    >>> import numpy as np
    >>> from stats.crosstask import compare_across_tasks
    >>> table = np.array([[0.81, 0.79, 0.70], [0.90, 0.88, 0.85], [0.75, 0.76, 0.60],
    ...                   [0.66, 0.61, 0.58], [0.92, 0.90, 0.91]])
    >>> svg = cd_diagram_svg(compare_across_tasks(table, names=["a", "b", "c"]), title="3 entries, 5 tasks")
    >>> svg.startswith(b"<?xml") and b"</svg>" in svg
    True
    """
    if not isinstance(result, CrossTaskResult):
        raise TypeError("`result` must be a CrossTaskResult (see stats.crosstask.compare_across_tasks).")
    if width <= 0:
        raise ValueError("`width` must be positive.")
    k = len(result.names)
    order = result.order()
    ranks = [float(result.average_ranks[i]) for i in order]
    left_half = (k + 1) // 2
    n_cliques = len(result.cliques)
    rows = max(left_half, k - left_half)
    # Room for the longest label on each side ("(2.12) logistic-regression"), so no name is clipped:
    # about 0.075 inch per character at the diagram's font size, and at least 3 inches of axis.
    longest = max(
        len(f"({float(r):.3f}) {n}") for n, r in zip(result.names, result.average_ranks, strict=True)
    )
    margin = max(1.6, 0.25 + 0.075 * longest)
    width = max(width, 2 * margin + 3.0)
    line = 0.22  # inches per text row
    top = 0.75 + (0.3 if title else 0.0)
    clique_space = 0.12 * (n_cliques + 1)
    height = top + clique_space + line * (rows + 1) + 0.2

    with mpl.rc_context(_RC):  # type: ignore[arg-type]
        fig = Figure(figsize=(width, height))
        FigureCanvasSVG(fig)
        ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
        ax.set_xlim(0.0, width)
        ax.set_ylim(height, 0.0)  # y grows downwards, in inches
        ax.set_axis_off()

        lo_rank, hi_rank = 1.0, float(k)

        def x_of(rank: float) -> float:
            span = hi_rank - lo_rank if hi_rank > lo_rank else 1.0
            return margin + (rank - lo_rank) / span * (width - 2 * margin)

        if title:
            ax.text(width / 2, 0.2, title, ha="center", va="center", fontsize=10)
        axis_y = top
        ax.plot([x_of(lo_rank), x_of(hi_rank)], [axis_y, axis_y], color="black", linewidth=1.0)
        for r in range(1, k + 1):
            ax.plot([x_of(r), x_of(r)], [axis_y - 0.06, axis_y], color="black", linewidth=1.0)
            ax.text(x_of(r), axis_y - 0.1, str(r), ha="center", va="bottom")

        if result.posthoc == "nemenyi":
            cd = result.critical_difference
            cd_y = axis_y - 0.42
            ax.plot([x_of(1.0), x_of(min(1.0 + cd, hi_rank))], [cd_y, cd_y], color="black", linewidth=1.2)
            for end in (1.0, min(1.0 + cd, hi_rank)):
                ax.plot([x_of(end), x_of(end)], [cd_y - 0.04, cd_y + 0.04], color="black", linewidth=1.2)
            ax.text(x_of(1.0 + cd / 2), cd_y - 0.06, f"CD = {cd:.3f}", ha="center", va="bottom")

        for c, clique in enumerate(result.cliques):
            members = [float(result.average_ranks[result.names.index(name)]) for name in clique]
            y = axis_y + 0.12 * (c + 1)
            ax.plot(
                [x_of(min(members)) - 0.04, x_of(max(members)) + 0.04],
                [y, y],
                color="black",
                linewidth=3.0,
                solid_capstyle="butt",
            )

        text_top = axis_y + clique_space + line * 0.8
        for pos, (i, rank) in enumerate(zip(order, ranks, strict=True)):
            name = result.names[i]
            if pos < left_half:
                y = text_top + line * pos
                x_end = margin - 0.1
                ha = "right"
            else:
                y = text_top + line * (k - 1 - pos)
                x_end = width - margin + 0.1
                ha = "left"
            ax.plot([x_of(rank), x_of(rank), x_end], [axis_y, y, y], color="black", linewidth=0.8)
            label = f"{name} ({rank:.3f})" if ha == "left" else f"({rank:.3f}) {name}"
            ax.text(x_end + (-0.05 if ha == "right" else 0.05), y, label, ha=ha, va="center")

        buffer = io.BytesIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()
