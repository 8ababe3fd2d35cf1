"""``python -m stats``: see :mod:`stats.cli`."""

import sys

from stats.cli import main

if __name__ == "__main__":
    sys.exit(main())
