"""Which scores may share a board: the same resample weights W (issue 13 point 4, issue 14 "Done when").

A board pairs its entries through the task's common resample weights: replicate ``b`` of every entry was
computed on the same resample. That holds only for scores drawn with the same seed, the same number of
resamples and the same way of drawing W (the engine version written with each score). A rebuild reads
those three fields of every score it chooses and never mixes two kinds:

- the **seed** and **resamples** must be the challenge's current ones (what scoring uses now);
- the **engine version** must be the task's: the version of its score scored longest ago (among those with
  the current seed and resamples). A task therefore keeps the W version it was scored with: a score
  written by a newer engine is left off until an organizer re-scores the task (a re-score rewrites every
  score, and the board then moves to the new version as a whole; while it runs, the board keeps the
  scores not yet re-scored).

A score left off is named, with its reason, in the snapshot's signature (``left_off``: key, name and
reason, starting with "needs re-score") and in the worker's log, so organizers see why an entry is missing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

logger = logging.getLogger(__name__)

#: How a left-off entry's reason starts (what organizers search for).
NEEDS_RESCORE = "needs re-score"


class _Scored(Protocol):
    @property
    def key(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def score(self) -> Any: ...


E = TypeVar("E", bound=_Scored)


@dataclass(frozen=True)
class Reference:
    """The resample weights of a board: seed, number of resamples and engine version."""

    seed: int
    resamples: int
    engine_version: str | None  # None: no score has the current seed and resamples

    def as_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "resamples": self.resamples, "engine_version": self.engine_version}


def reference(*, seed: int, resamples: int, scores: list[Any]) -> Reference:
    """The board's reference: the current seed and resamples, and the engine version of the score with
    those that was scored longest ago (``scores``: every current score of the task's split)."""
    same_weights = [s for s in scores if s.seed == seed and s.resamples == resamples]
    if not same_weights:
        return Reference(seed=seed, resamples=resamples, engine_version=None)
    oldest = min(same_weights, key=lambda s: (s.scored_at, s.pk))
    return Reference(seed=seed, resamples=resamples, engine_version=oldest.engine_version)


def reason(score: Any, ref: Reference) -> str | None:
    """Why ``score`` cannot share the board with ``ref``'s weights, or None when it can."""
    differences = []
    if score.seed != ref.seed:
        differences.append(f"seed {score.seed} (the board's: {ref.seed})")
    if score.resamples != ref.resamples:
        differences.append(f"{score.resamples} resamples (the board's: {ref.resamples})")
    if ref.engine_version is not None and score.engine_version != ref.engine_version:
        differences.append(f"engine {score.engine_version} (the board's: {ref.engine_version})")
    if not differences:
        return None
    return f"{NEEDS_RESCORE}: scored with {', '.join(differences)}; its replicates cannot be paired with the board's"


def split_compatible(entries: list[E], ref: Reference) -> tuple[list[E], list[dict[str, str]]]:
    """The entries whose scores share ``ref``'s weights, and the others as ``{key, name, reason}``."""
    kept: list[E] = []
    left_off: list[dict[str, str]] = []
    for e in entries:
        why = reason(e.score, ref)
        if why is None:
            kept.append(e)
        else:
            left_off.append({"key": e.key, "name": e.name, "reason": why})
    return kept, left_off
