"""The incremental board in the service: a per-process cache of the last boards built (issue 14).

A rebuild (``rankings.services.leaderboard_rebuild``) asks :func:`take` for the
:class:`stats.board_update.BoardCache` to build its board with. The cache of a (task, split) is kept
after the rebuild that wrote a snapshot (:func:`keep`), with what that board was built from: the
snapshot's inputs digest and sequence, the board's settings, and the ordered list of its entries'
(key, score id, scored_at). The next rebuild of that board in the same process takes the update path
only when

- the latest snapshot is the one this process wrote (same sequence and inputs digest: no other process
  wrote a board since, and the writing transaction was not rolled back),
- the settings are the same (metric, truth version, resamples, seed, confidence, interval method,
  correction, stratification, grouping, engine version),
- and the entries are the kept ones, in the same order, with the same scores, plus exactly one.

Anything else (an entry removed, an entry re-scored: a new score id or ``scored_at``, a changed setting,
a board written by another process) starts from an empty ``BoardCache``: the full rebuild. Even on the
update path ``BoardCache`` itself compares the previous entries' values, replicates and options with
the new call's and rebuilds in full on any difference, so a stale cache never gives a number: the update
path's numbers are the full rebuild's (``stats.board_update``, tests/stats/test_board_update.py and
tests/service/test_board_incremental.py).

The cache lives in the worker process (Celery prefork: each child has its own), bounded by
``settings.BOARD_CACHE_BOARDS`` boards, least recently used first out; about 110 MB per board at
K = 1,000, B = 10,000. A board's rebuilds reach the same process only by chance when a worker runs
several children, so the state of each board written is also shared (``rankings.board_state``: Redis, or
the data directory) once its snapshot is committed, and :func:`take` falls back to it when this process
keeps no usable board: the next rebuild on any process or host takes the update path under the same
conditions. A taken board is out of the cache while it is being built, so
two threads never share one.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import transaction

from leaderboard.rankings import board_state
from leaderboard.rankings.board import COLUMN_DIGEST, ENGINE_VERSION, BoardCache

if TYPE_CHECKING:
    from leaderboard.challenges.models import Task
    from leaderboard.rankings.models import BoardSnapshot
    from leaderboard.rankings.services import Entry

__all__ = ["BoardCache", "clear", "keep", "keep_score_data", "peek", "score_data", "take"]

EntryInputs = tuple[tuple[str, int, str], ...]


@dataclass
class _Kept:
    board: BoardCache
    settings: tuple[object, ...]
    entries: EntryInputs
    digest: str
    sequence: int


_lock = threading.Lock()
_boards: OrderedDict[tuple[int, str], _Kept] = OrderedDict()

#: The scores' binary columns as the last rebuild of a board in this process read them (issue 24): score id
#: -> (``scored_at``, replicates, jackknife, item statistics), the bytes as stored. A score's columns are
#: written with its ``scored_at`` (``auto_now``: every re-scoring saves a new one), so a row of the same id
#: and ``scored_at`` holds the same bytes, and a rebuild reads from the database only the scores whose
#: (id, ``scored_at``) it does not find here (``rankings.services._load_score_data``): on the update path,
#: the new entry's. About 240 KB per entry at N = B = 10,000 (240 MB at K = 1,000), one set per board, the
#: boards bounded as above (``settings.BOARD_CACHE_BOARDS``) and their bytes by
#: ``settings.BOARD_SCORE_DATA_MAX_BYTES`` (least recently used first out; a larger board is not kept); each
#: rebuild replaces its board's set by the entries it read, so entries that left the board leave it too.
#: ... and the column's digest (board.column_digest_of), or None
ScoreData = tuple[str, Any, Any, Any, str | None]
_data: OrderedDict[tuple[int, str], tuple[int, dict[int, ScoreData]]] = OrderedDict()


def _settings_of(task: Task, split: str) -> tuple[object, ...]:
    c = task.challenge
    return (
        task.metric,
        task.kind,
        split,
        task.truth_version,
        task.stratify,
        task.grouped,
        task.n_items,
        c.resamples,
        c.seed,
        c.confidence,
        c.interval_method,
        c.correction,
        ENGINE_VERSION,
    )


def _entries_of(entries: Sequence[Entry]) -> EntryInputs:
    return tuple((e.key, int(e.score.pk), e.score.scored_at.isoformat()) for e in entries)


def _one_added(old: EntryInputs, new: EntryInputs) -> bool:
    """Whether ``new`` is ``old`` with exactly one element inserted (the others in the same order)."""
    if len(new) != len(old) + 1:
        return False
    i = next((j for j in range(len(old)) if old[j] != new[j]), len(old))
    return new[:i] + new[i + 1 :] == old


def take(
    *, task: Task, split: str, previous: BoardSnapshot | None, entries: Sequence[Entry]
) -> BoardCache | None:
    """The ``BoardCache`` to build this board with: this process's kept one when the board adds exactly one
    entry to it (the update path), an empty one otherwise (the full rebuild); None when the cache is off.

    The kept board leaves the cache here; :func:`keep` puts it (or the empty one, now holding this board)
    back once the snapshot is written."""
    if settings.BOARD_CACHE_BOARDS <= 0:
        return None
    with _lock:
        kept = _boards.pop((task.pk, split), None)
    if _usable(kept, task=task, split=split, previous=previous, entries=entries):
        return kept.board  # type: ignore[union-attr]
    if previous is not None and board_state.enabled():
        # another process (or host) built the previous board: its state as it stored it (board_state)
        stored = board_state.load(task_id=task.pk, split=split)
        if stored is not None:
            meta, board = stored
            shared = _Kept(
                board=board,
                settings=tuple(meta.get("settings") or ()),
                entries=tuple(tuple(e) for e in meta.get("entries") or ()),
                digest=str(meta.get("digest")),
                sequence=int(meta.get("sequence", -1)),
            )
            if _usable(shared, task=task, split=split, previous=previous, entries=entries):
                return board
    return BoardCache()


def _usable(
    kept: _Kept | None, *, task: Task, split: str, previous: BoardSnapshot | None, entries: Sequence[Entry]
) -> bool:
    """Whether a kept board is the previous snapshot's, with these settings, and the entries add one."""
    return (
        kept is not None
        and previous is not None
        and previous.sequence == kept.sequence
        and previous.signature.get("inputs") == kept.digest
        and kept.settings == _settings_of(task, split)
        and _one_added(kept.entries, _entries_of(entries))
    )


def keep(
    *, task: Task, split: str, board: BoardCache | None, snapshot: BoardSnapshot, entries: Sequence[Entry]
) -> None:
    """Keep the cache that built ``snapshot`` for the next rebuild of this board in this process."""
    size = settings.BOARD_CACHE_BOARDS
    if board is None or size <= 0:
        return
    kept = _Kept(
        board=board,
        settings=_settings_of(task, split),
        entries=_entries_of(entries),
        digest=str(snapshot.signature.get("inputs")),
        sequence=snapshot.sequence,
    )
    with _lock:
        _boards[(task.pk, split)] = kept
        _boards.move_to_end((task.pk, split))
        while len(_boards) > size:
            _boards.popitem(last=False)
    if board_state.enabled():
        # shared once the snapshot is committed (a rolled-back snapshot shares nothing); the next rebuild
        # on another process reads it (board_state); the participant's wait does not include it
        meta = {
            "settings": list(kept.settings),
            "entries": [list(e) for e in kept.entries],
            "digest": kept.digest,
            "sequence": kept.sequence,
        }
        task_id = task.pk
        transaction.on_commit(lambda: board_state.save(task_id=task_id, split=split, meta=meta, board=board))


def score_data(task_id: int, split: str) -> dict[int, ScoreData]:
    """The scores' columns this process read for its last rebuild of this board (``{}``: none kept)."""
    if settings.BOARD_CACHE_BOARDS <= 0:
        return {}
    with _lock:
        kept = _data.get((task_id, split))
    return {} if kept is None else kept[1]


def keep_score_data(task_id: int, split: str, entries: Sequence[Entry]) -> None:
    """Keep the columns of these entries' scores (read by this rebuild) for the next rebuild of the board."""
    size, limit = settings.BOARD_CACHE_BOARDS, settings.BOARD_SCORE_DATA_MAX_BYTES
    with _lock:
        _data.pop((task_id, split), None)  # the previous set goes whether or not this one is kept
    if size <= 0 or limit <= 0:
        return
    kept = {
        int(e.score.pk): (
            e.score.scored_at.isoformat(),
            e.score.replicates,
            e.score.jackknife,
            e.score.item_statistics,
            getattr(e.score, COLUMN_DIGEST, None),  # as the build computed it (none: the next one will)
        )
        for e in entries
    }
    nbytes = sum(len(v) for _, *columns, _ in kept.values() for v in columns if v is not None)
    if nbytes > limit:
        return
    with _lock:
        _data[(task_id, split)] = (nbytes, kept)
        while len(_data) > size or sum(n for n, _ in _data.values()) > limit:
            _data.popitem(last=False)


def peek(task_id: int, split: str) -> BoardCache | None:
    """The kept cache of a board, if any (its ``last`` says how the last build went)."""
    with _lock:
        kept = _boards.get((task_id, split))
    return None if kept is None else kept.board


def clear() -> None:
    """Forget every kept board (the next rebuild of each is a full one)."""
    with _lock:
        _boards.clear()
        _data.clear()
