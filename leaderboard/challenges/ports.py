"""Ports of the task layer (``leaderboard.core.ports``), registered by the apps above it.

- ``task_kind_registry`` (scoring): creating a task parses its hidden file with its kind's parser, and a stored
  submission's files are checked and limited by their task's kind (``scoring.kinds``, the registry).
- ``boards_rebuild`` (rankings): a task's boards changed (an entry scored, selected or re-scored);
  ``submissions`` and ``scoring`` call it, ``rankings.services.boards_rebuild_dispatch`` answers.
- ``notices`` (notifications): a submission scored or failed (scoring), a private board revealed
  (challenges); ``notifications.services`` notifies the participants.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from leaderboard.core.ports import Port


class ParsedTruth(Protocol):
    """What the task writers read of a parsed hidden-labels file (``scoring.engine.ParsedTruth``)."""

    @property
    def ids(self) -> list[str]: ...
    @property
    def labels(self) -> list[Any]: ...
    @property
    def label_set(self) -> list[str]: ...
    @property
    def groups(self) -> list[str] | None: ...
    @property
    def private(self) -> list[bool] | None: ...
    @property
    def kind(self) -> str: ...
    @property
    def vision(self) -> dict[str, Any]: ...
    @property
    def data(self) -> bytes | None: ...


class TaskKindPort(Protocol):
    """What the task and submission writers ask of a task kind (``scoring.kinds.TaskKind``)."""

    @property
    def name(self) -> str: ...
    def parse_truth(
        self,
        data: bytes,
        *,
        name: str,
        metric: str,
        labels: Sequence[str] | None,
        group_column: str | None,
        split_column: str | None,
        positive: str | None,
        options: Mapping[str, Any],
    ) -> ParsedTruth: ...
    def secondary_metrics(self, metric: str, names: Sequence[str], parsed: Any) -> list[str]: ...
    def replacement_labels(self, task: Any) -> list[str] | None: ...
    def replacement_options(self, task: Any) -> dict[str, Any]: ...
    def validate_predictions(self, data: bytes, *, name: str, task: Any) -> None: ...
    def upload_max_bytes(self) -> int: ...


class TaskKinds(Protocol):
    """The registry of task kinds: the kind a metric belongs to, and a task's kind."""

    def for_metric(self, metric: str) -> TaskKindPort: ...
    def of_task(self, task: Any) -> TaskKindPort: ...


#: The task kinds (``scoring.kinds``): a task's hidden file is parsed, a predictions file checked and
#: limited, by its kind; scoring registers the registry, so these apps never import it.
task_kind_registry: Port[TaskKinds] = Port("task kinds", provider="leaderboard.scoring")


class BoardsRebuild(Protocol):
    def __call__(self, *, task_ids: list[int]) -> object: ...


boards_rebuild: Port[BoardsRebuild] = Port("board rebuild", provider="leaderboard.rankings")


class Notices(Protocol):
    """Tell participants of an event (``notifications.services``): called once the change committed."""

    def submission_finished(self, *, submission_id: int) -> object: ...
    def board_revealed(self, *, challenge_id: int) -> object: ...


#: Notices (e-mail and the site's list): scoring tells of a submission scored or failed, challenges of a
#: revealed private board; ``leaderboard.notifications`` registers it.
notices: Port[Notices] = Port("notices", provider="leaderboard.notifications")
