"""The incremental board's state where every worker reads it (issue 24): Redis, or the data directory.

``rankings.board_cache`` keeps the last boards a worker process built in its own memory, which helps only
when the next rebuild of a board lands on the same process. After each rebuild that wrote a snapshot,
:func:`save` also stores what the update path needs (``stats.board_update.BoardCache.export``: the rank
table, the Gram matrix's lower triangle, the max-t exceedance list, the value intervals; not the
replicates, which the next rebuild reads from the scores anyway and checks against their digests: one per
column since issue 24's third pass, ``BoardCache.build(column_digests=...)``)
with what the board was built from (the settings, the entries' key, score id and ``scored_at``, the
snapshot's sequence and inputs digest): one record per (task, split), replaced by each rebuild. A rebuild
whose process holds no usable board of its own :func:`load`\\ s it, under the same conditions as the
in-process board (``board_cache.take``), and ``BoardCache`` then checks values, replicates and options
itself, so a stale or foreign record gives a full rebuild, never another number.

Stored as ``leaderboard.scoring.state_codec`` bytes (plain arrays in an npz archive and a JSON outline:
nothing executes code when it is read), under the key ``board-state:<task>:<split>``

- in **Redis** (``REDIS_URL``: every worker on every host reads it), raw bytes through redis-py (Django's
  cache would pickle them), expiring after ``BOARD_STATE_SECONDS``;
- else in ``DATA_DIR/board-state/`` (the embedded default: one host, its processes share the disk).

A record larger than ``BOARD_STATE_MAX_BYTES`` is not stored (the rebuilds on other processes are then
full). Stored uncompressed (zlib level 0; see :func:`save`). Sizes at B = 10,000: 24.2 MB at K = 1,000
(measured; 2 B K bytes of 16-bit ranks and 4 K^2 of the Gram triangle are most of it), so about 4.2 MB at
K = 200; 204 MB at K = 5,000 (measured, saved in 0.6-0.9 s).
Storing or reading a record that fails (Redis down, a full disk, a record of another format) is logged
and costs a full rebuild: the state is a cache, the scores are the truth.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from django.conf import settings

from leaderboard.rankings.board import BoardCache
from leaderboard.scoring import state_codec

logger = logging.getLogger(__name__)

#: The record's layout; a record of another layout is ignored (a full rebuild).
FORMAT = 1

_client: Any = None


def _key(task_id: int, split: str) -> str:
    return f"board-state:{task_id}:{split}"


def _redis() -> Any:
    global _client
    if _client is None:
        import redis

        _client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=30, socket_connect_timeout=5)
    return _client


def _path(task_id: int, split: str) -> Path:
    return Path(settings.DATA_DIR) / "board-state" / f"{task_id}-{split}.npz"


def enabled() -> bool:
    return bool(settings.BOARD_STATE_SHARED) and settings.BOARD_CACHE_BOARDS > 0


def save(*, task_id: int, split: str, meta: dict[str, Any], board: BoardCache) -> int:
    """Store ``board``'s state with ``meta`` (what it was built from); the bytes stored (0: not stored)."""
    if not enabled():
        return 0
    t0 = time.perf_counter()
    try:
        exported = board.export()
        if exported is None:
            return 0
        # stored, not compressed (zlib level 0): the 16-bit ranks hardly compress (17.7 MB at level 1 against
        # about 25 MB), and level 1 cost 0.57 s of CPU per save at K = 1,000 (most of the save), during which
        # the worker that built the board takes no other task
        data = state_codec.dumps({"format": FORMAT, "meta": meta, "board": exported}, level=0)
        if len(data) > settings.BOARD_STATE_MAX_BYTES:
            logger.info(
                "board %s/%s: state of %.0f MB not shared (limit %.0f MB)",
                task_id, split, len(data) / 1e6, settings.BOARD_STATE_MAX_BYTES / 1e6,
            )  # fmt: skip
            return 0
        if settings.REDIS_URL:
            _redis().set(_key(task_id, split), data, ex=int(settings.BOARD_STATE_SECONDS))
        else:
            path = _path(task_id, split)
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as f:
                f.write(data)
            os.replace(f.name, path)  # readers see the old record or the new one, never half of one
    except Exception:  # a cache: a failure costs the next rebuild on another process a full build
        logger.warning("board %s/%s: state not shared", task_id, split, exc_info=True)
        return 0
    logger.info(
        "board %s/%s: state shared (%.1f MB in %.2f s)",
        task_id,
        split,
        len(data) / 1e6,
        time.perf_counter() - t0,
    )
    return len(data)


def load(*, task_id: int, split: str) -> tuple[dict[str, Any], BoardCache] | None:
    """The stored state of a board and what it was built from, or None (none stored, unreadable)."""
    if not enabled():
        return None
    try:
        if settings.REDIS_URL:
            data = _redis().get(_key(task_id, split))
        else:
            path = _path(task_id, split)
            data = path.read_bytes() if path.exists() else None
        if data is None:
            return None
        record = state_codec.loads(data)
        if not isinstance(record, dict) or record.get("format") != FORMAT:
            return None
        return record["meta"], BoardCache.restore(record["board"])
    except Exception:
        logger.warning("board %s/%s: shared state unreadable", task_id, split, exc_info=True)
        return None


def forget(*, task_id: int, split: str) -> None:
    """Remove a board's stored state (tests; a board whose state must not be reused)."""
    try:
        if settings.REDIS_URL:
            _redis().delete(_key(task_id, split))
        else:
            _path(task_id, split).unlink(missing_ok=True)
    except Exception:
        logger.warning("board %s/%s: shared state not removed", task_id, split, exc_info=True)
