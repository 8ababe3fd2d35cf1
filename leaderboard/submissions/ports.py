"""What ``submissions`` needs from ``scoring`` and ``rankings``, registered by them (``core.ports``).

A stored submission's files are checked against the task's public item list before anything is stored
(by the task's kind, through ``challenges.ports.task_kind_registry``) and handed to scoring once the transaction
commits. (A selected entry rebuilds its
boards through ``challenges.ports.boards_rebuild``.) The calls stay in ``submissions.services``; the
imports point down.
"""

from __future__ import annotations

from typing import Protocol

from leaderboard.core.ports import Port


class SubmissionDispatch(Protocol):
    def __call__(self, *, submission_id: int) -> object: ...


#: Sends a stored submission to the scoring queue (``scoring.services.submission_dispatch``).
submission_dispatch: Port[SubmissionDispatch] = Port("scoring dispatch", provider="leaderboard.scoring")
