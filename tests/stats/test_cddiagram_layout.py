"""The diagram makes room for long entry names instead of clipping them at the figure's edge."""

import re

import numpy as np

from stats.cddiagram import cd_diagram_svg
from stats.crosstask import compare_across_tasks


def svg_width_pt(svg: bytes) -> float:
    match = re.search(rb'<svg[^>]* width="([0-9.]+)pt"', svg)
    assert match is not None
    return float(match.group(1))


def test_long_names_widen_the_figure_so_labels_fit() -> None:
    scores = np.array([[0.9, 0.8, 0.7], [0.85, 0.8, 0.6], [0.88, 0.7, 0.65]])
    short = cd_diagram_svg(compare_across_tasks(scores, names=["a", "b", "c"]))
    long_names = ["a-very-long-entry-name-that-would-be-clipped", "b", "c"]
    long = cd_diagram_svg(compare_across_tasks(scores, names=long_names))
    assert svg_width_pt(short) == 6.5 * 72  # the default width when names are short
    # 45 characters need about 0.25 + 0.075 * 52 inches on each side, plus 3 inches of axis.
    assert svg_width_pt(long) >= 72 * (2 * (0.25 + 0.075 * 45) + 3.0)
