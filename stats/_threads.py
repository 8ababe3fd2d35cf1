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

import collections
import contextlib
import contextvars
import functools
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
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


@contextlib.contextmanager
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


#: How much nicer (lower in priority) than the caller a :func:`beside` thread runs: it takes the cores the
#: board's own threads leave idle (its serial stretches) and yields them back when they are busy.
_BESIDE_NICE = 10


class Beside:
    """A result computed by :func:`beside` (on a thread, or at once): :meth:`result` waits for it."""

    def __init__(
        self, fn: Callable[[], R], threaded: bool, *, nicer: bool = True, name: str = "board-beside"
    ) -> None:
        self._result: Any = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        if not threaded:
            self._result = fn()  # at once, in the caller's thread: exceptions raise here
            return
        context = contextvars.copy_context()  # numpy's error state and the like, as in the caller

        def run() -> None:
            if nicer:
                with contextlib.suppress(OSError):  # a platform without per-thread priorities: as it is
                    os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), _nicer())
            try:
                self._result = context.run(fn)
            except BaseException as error:  # handed to the caller by result()
                self._error = error

        self._thread = threading.Thread(target=run, name=name, daemon=True)
        self._thread.start()

    def wait(self) -> None:
        """Wait for the function to end, without its value or exception (a caller that is failing already
        and must leave no thread writing into what it drops)."""
        if self._thread is not None:
            self._thread.join()

    def result(self) -> Any:
        """The function's value (its exception raised here, in the caller's thread)."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return self._result


def _nicer() -> int:
    return min(19, os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) + _BESIDE_NICE)


def beside(fn: Callable[[], R]) -> Beside:
    """Start ``fn()`` beside the caller's work: on a thread of lower priority when :func:`board_threads` is
    above 1 (the numbers are the same: ``fn`` must only read what the caller's work reads, and write
    nothing it reads), else at once. ``.result()`` returns its value or raises its exception.

    The thread runs at :data:`_BESIDE_NICE` more niceness than the caller, so on a busy pool it takes little
    CPU, and it fills the stretches where one thread of the board works alone (issue 24: the value
    intervals of a board of 10,000 beside its max-t search). It runs in a copy of the caller's context
    (numpy's ``errstate`` is a context variable)."""
    return Beside(fn, threaded=board_threads() > 1)


def in_order(fn: Callable[[T], R], blocks: Iterable[T]) -> Iterator[R]:
    """``fn(block)`` for every block, yielded in the blocks' order while the next blocks are computed on
    :func:`board_threads` threads (at most that many ahead of the caller): the caller's own serial work on
    each result (an unbuffered add that holds the GIL) overlaps the next blocks' (issue 24: the rank
    counts). One thread: the blocks one by one, each computed when the caller asks for it. ``fn`` must not
    write to memory another block or the caller reads or writes."""
    items = list(blocks)
    n = min(board_threads(), len(items))
    if n <= 1:
        for item in items:
            yield fn(item)
        return
    with ThreadPoolExecutor(max_workers=n) as pool:
        pending: collections.deque[Future[R]] = collections.deque()
        try:
            for item in items:
                pending.append(pool.submit(fn, item))
                if len(pending) > n:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:  # a consumer that stopped early, or an error: run nothing more
                future.cancel()
