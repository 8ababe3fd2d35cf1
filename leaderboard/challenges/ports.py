"""Ports of the task layer (``leaderboard.core.ports``), registered by the apps above it.

- ``truth_parser`` (scoring): creating a task parses its hidden-labels file; the parser is scoring's
  (``scoring.engine.parse_truth``), the one place where hidden labels meet the statistics package.
- ``boards_rebuild`` (rankings): a task's boards changed (an entry scored, selected or re-scored);
  ``submissions`` and ``scoring`` call it, ``rankings.services.boards_rebuild_dispatch`` answers.
"""

from __future__ import annotations

from collections.abc import Sequence
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


class TruthParser(Protocol):
    def __call__(
        self,
        data: bytes,
        *,
        name: str,
        metric: str,
        labels: Sequence[str] | None,
        group_column: str | None,
        split_column: str | None,
        positive: str | None = None,
        ignore_index: int = 255,
        reduce_zero_label: bool = False,
    ) -> ParsedTruth: ...


truth_parser: Port[TruthParser] = Port("hidden-labels parser", provider="leaderboard.scoring")


class BoardsRebuild(Protocol):
    def __call__(self, *, task_ids: list[int]) -> object: ...


boards_rebuild: Port[BoardsRebuild] = Port("board rebuild", provider="leaderboard.rankings")
