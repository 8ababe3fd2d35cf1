"""BLAS threads of the comparison products (issue 14).

On the project's 2-core machine, shared by several processes, OpenBLAS with two threads ran the
products of a board and of the randomization test 1.2-3.5x *slower* in wall time than with one thread
(``float32`` ``Z @ delta`` of the randomization: 1.03 s against 0.54 s quiet, 5.2 s against 1.4 s at
load 10; the Gram matrix of a board of 1,000: 0.22 s against 0.18 s quiet, 0.97 s against 0.45 s at
load 10; docs/benchmarks.md). The results are the same bits for any thread count (OpenBLAS splits the
output, not the sums; checked in ``tests/stats/test_board_update.py``). Celery runs several workers per
host anyway, so :func:`blas_threads` limits the products to ``LEADERBOARD_BLAS_THREADS`` threads
(default 1) while a board or a test is computed, and restores the setting afterwards.

The same setting sizes the small thread pool of :func:`in_blocks` (issue 24, fifth pass): independent
blocks of a board's passes that spend their time inside numpy (which releases the GIL), such as the
row blocks of the max-t search, run on that many threads and their results are returned in the blocks'
order, so the numbers are the same bits as one thread's. Default 1: no pool, the blocks one by one.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

from threadpoolctl import ThreadpoolController

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")
R = TypeVar("R")

_controller: ThreadpoolController | None = None


def _threads() -> int:
    raw = os.environ.get("LEADERBOARD_BLAS_THREADS", "1").strip()
    try:
        return max(1, int(raw))
    except ValueError:
        return 1


@contextmanager
def blas_threads() -> Iterator[None]:
    """Limit BLAS to ``LEADERBOARD_BLAS_THREADS`` threads (default 1) inside the block."""
    global _controller
    if _controller is None:
        _controller = ThreadpoolController()
    with _controller.limit(limits=_threads(), user_api="blas"):
        yield


def with_blas_threads(fn: F) -> F:
    """Decorator: run ``fn`` inside :func:`blas_threads`."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with blas_threads():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def board_threads() -> int:
    """The threads a board may use: ``LEADERBOARD_BLAS_THREADS`` (default 1)."""
    return _threads()


def in_blocks(fn: Callable[[T], R], blocks: Iterable[T]) -> list[R]:
    """``[fn(block) for block in blocks]``, on :func:`board_threads` threads when that is above 1.

    The results come back in the blocks' order whatever the threads' timing; the first exception (in
    that order) is raised after the pool has finished. ``fn`` must not write to memory another block
    reads or writes.
    """
    items = list(blocks)
    n = min(board_threads(), len(items))
    if n <= 1:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(fn, items))
