"""Honest statistics for leaderboards: bootstrap intervals, paired comparisons, rank intervals.

A pure numpy/scipy package (matplotlib only for drawing). It never imports Django, so it can be used on
its own from Python and from its command line (``python -m stats``). Usage with examples:
docs/stats-api.md.

The names below are the public API, importable from ``stats`` directly. They are loaded on first use
(``import stats`` itself reads no submodule, so the command line and the service pay only for what they
call); each also lives in its submodule (``stats.engine.score_entries`` is ``stats.score_entries``).

- Scoring entries: :func:`score_entries`, :func:`score_item_statistics`, :class:`EntryScore`,
  :func:`get_metric`, :data:`METRICS`, :func:`read_truth`, :func:`read_predictions`, :class:`InputError`.
- Intervals: :func:`intervals_for`, :func:`interval_for`, :func:`bootstrap_bounds`,
  :func:`wilson_interval`, :func:`clopper_pearson_interval`, :class:`Interval`, :func:`delong_interval`,
  :func:`default_interval` (the metric's default interval, the one rule of every command and board).
- A task's board: :func:`build_board`, :class:`Board`, :class:`BoardRow`.
- Comparisons: :func:`paired_difference`, :func:`bootstrap_p_values`, :func:`paired_randomization`,
  :func:`mcnemar_exact`, :func:`delong_test`, :func:`adjust_p_values`, :func:`holm`,
  :func:`benjamini_hochberg`, :func:`items_needed`, :func:`rank_distribution`,
  :func:`simultaneous_ranks` (and ``stats.compare_runs.compare_runs`` for runs with several seeds: it
  shares its name with its module, so it is not re-exported here).
- Across tasks and critical-difference diagrams: :func:`compare_across_tasks`, :func:`friedman`,
  :func:`cd_diagram_svg`.
- Vision: :func:`parse_coco_truth`, :func:`parse_coco_results`, :class:`DetectionTask`,
  :func:`score_detection_entries`, :func:`segmentation_statistics`.
- The leader's selection-adjusted score, ranking robustness, what a test set resolves (issue 23):
  :func:`leader_adjusted`, :func:`rank_robustness`, :func:`ranking_schemes`, :func:`challenge_ranking`,
  :func:`blob_plot_svg`, :func:`planned_resolution`, :func:`board_resolution`, :func:`items_for_gap`.
- Every result carries a :class:`Signature` (how it was computed).

Examples
--------
>>> import stats
>>> scores = stats.score_entries([1, 0, 1, 1, 0, 1], [[1, 0, 1, 0, 0, 1]], metric="accuracy",
...                              resamples=200, seed=0)
>>> round(scores[0].value, 4)
0.8333
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> the submodule that defines it
_PUBLIC: dict[str, str] = {
    # scoring entries
    "EntryScore": "stats.engine",
    "score_entries": "stats.engine",
    "score_item_statistics": "stats.engine",
    "METRICS": "stats.metrics",
    "Metric": "stats.metrics",
    "get_metric": "stats.metrics",
    "InputError": "stats.io",
    "read_predictions": "stats.io",
    "read_truth": "stats.io",
    "Signature": "stats.signature",
    # intervals
    "Interval": "stats.intervals",
    "bootstrap_bounds": "stats.intervals",
    "clopper_pearson_interval": "stats.intervals",
    "default_interval": "stats.intervals",
    "interval_for": "stats.intervals",
    "intervals_for": "stats.intervals",
    "wilson_interval": "stats.intervals",
    "delong_interval": "stats.delong",
    # a task's board
    "Board": "stats.board",
    "BoardRow": "stats.board",
    "build_board": "stats.board",
    # comparisons
    "adjust_p_values": "stats.compare",
    "benjamini_hochberg": "stats.compare",
    "bootstrap_p_values": "stats.compare",
    "holm": "stats.compare",
    "items_needed": "stats.compare",
    "mcnemar_exact": "stats.compare",
    "paired_difference": "stats.compare",
    "paired_randomization": "stats.compare",
    "rank_distribution": "stats.compare_ranks",
    "simultaneous_ranks": "stats.compare_ranks",
    "delong_test": "stats.delong",
    # across tasks, critical-difference diagrams
    "compare_across_tasks": "stats.crosstask",
    "friedman": "stats.crosstask",
    "cd_diagram_svg": "stats.cddiagram",
    # vision
    "DetectionTask": "stats.vision.detection",
    "score_detection_entries": "stats.vision.detection",
    "parse_coco_results": "stats.vision.detection_io",
    "parse_coco_truth": "stats.vision.detection_io",
    "segmentation_statistics": "stats.vision.segmentation",
    # the leader's adjusted score, ranking robustness, what a test set resolves (issue 23)
    "leader_adjusted": "stats.selection",
    "rank_robustness": "stats.robustness",
    "ranking_schemes": "stats.robustness",
    "challenge_ranking": "stats.robustness",
    "blob_plot_svg": "stats.robustness",
    "planned_resolution": "stats.power",
    "board_resolution": "stats.power",
    "items_for_gap": "stats.power",
}

__all__ = [
    "METRICS",
    "Board",
    "BoardRow",
    "DetectionTask",
    "EntryScore",
    "InputError",
    "Interval",
    "Metric",
    "Signature",
    "adjust_p_values",
    "benjamini_hochberg",
    "blob_plot_svg",
    "board_resolution",
    "bootstrap_bounds",
    "bootstrap_p_values",
    "build_board",
    "cd_diagram_svg",
    "challenge_ranking",
    "clopper_pearson_interval",
    "compare_across_tasks",
    "default_interval",
    "delong_interval",
    "delong_test",
    "friedman",
    "get_metric",
    "holm",
    "interval_for",
    "intervals_for",
    "items_for_gap",
    "items_needed",
    "leader_adjusted",
    "mcnemar_exact",
    "paired_difference",
    "paired_randomization",
    "parse_coco_results",
    "parse_coco_truth",
    "planned_resolution",
    "rank_distribution",
    "rank_robustness",
    "ranking_schemes",
    "read_predictions",
    "read_truth",
    "score_detection_entries",
    "score_entries",
    "score_item_statistics",
    "segmentation_statistics",
    "simultaneous_ranks",
    "wilson_interval",
]

if TYPE_CHECKING:  # the same names for type checkers and editors
    from stats.board import Board, BoardRow, build_board
    from stats.cddiagram import cd_diagram_svg
    from stats.compare import (
        adjust_p_values,
        benjamini_hochberg,
        bootstrap_p_values,
        holm,
        items_needed,
        mcnemar_exact,
        paired_difference,
        paired_randomization,
    )
    from stats.compare_ranks import rank_distribution, simultaneous_ranks
    from stats.crosstask import compare_across_tasks, friedman
    from stats.delong import delong_interval, delong_test
    from stats.engine import EntryScore, score_entries, score_item_statistics
    from stats.intervals import (
        Interval,
        bootstrap_bounds,
        clopper_pearson_interval,
        default_interval,
        interval_for,
        intervals_for,
        wilson_interval,
    )
    from stats.io import InputError, read_predictions, read_truth
    from stats.metrics import METRICS, Metric, get_metric
    from stats.power import board_resolution, items_for_gap, planned_resolution
    from stats.robustness import blob_plot_svg, challenge_ranking, rank_robustness, ranking_schemes
    from stats.selection import leader_adjusted
    from stats.signature import Signature
    from stats.vision.detection import DetectionTask, score_detection_entries
    from stats.vision.detection_io import parse_coco_results, parse_coco_truth
    from stats.vision.segmentation import segmentation_statistics


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'stats' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
