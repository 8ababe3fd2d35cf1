"""The command line of the statistics package: ``python -m stats <subcommand> ...``.

- :mod:`stats.cli.main`: the parser, ``score`` and ``main`` (exit codes, messages);
- :mod:`stats.cli.compare`: the ``leaderboard`` and ``cd`` subcommands;
- :mod:`stats.cli.inputs`: reading the truth and prediction files;
- :mod:`stats.cli.edges`: the resampling options (groups, strata) and warnings;
- :mod:`stats.cli.vision`: detection and segmentation inputs.
"""

from stats.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
