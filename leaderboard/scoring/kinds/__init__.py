"""The registry of task kinds (``Task.kind``): what each kind decides, one module per kind.

``get_kind(task.kind)`` and ``kind_for_metric(metric)`` are the service's only way to a kind's rules; see
:mod:`leaderboard.scoring.kinds.base` and docs/adding-a-task-kind.md. Importing this package registers
every kind below (a new kind: one module, one line here).
"""

# isort: off
# The registration order is the API's order of the kinds (``kind_choices``): tabular first.
from leaderboard.scoring.kinds import tabular  # noqa: F401  (registration)
from leaderboard.scoring.kinds import detection  # noqa: F401
from leaderboard.scoring.kinds import segmentation  # noqa: F401
from leaderboard.scoring.kinds import text  # noqa: F401

# isort: on
from leaderboard.scoring.kinds.base import (
    DEFAULT_KIND,
    REGISTRY,
    ExampleFile,
    TaskKind,
    all_kinds,
    get_kind,
    kind_choices,
    kind_for_metric,
    register,
    stream_limit,
    upload_limit,
)

__all__ = [
    "DEFAULT_KIND",
    "REGISTRY",
    "ExampleFile",
    "TaskKind",
    "all_kinds",
    "get_kind",
    "kind_choices",
    "kind_for_metric",
    "register",
    "stream_limit",
    "upload_limit",
]
