"""Honest statistics for leaderboards: bootstrap intervals, paired comparisons, rank intervals.

A pure numpy/scipy package (matplotlib only for drawing). It never imports Django, so it can be used on
its own from Python and from its command line (``python -m stats``).
"""

__version__ = "0.1.0"
