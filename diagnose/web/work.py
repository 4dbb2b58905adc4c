"""The diagnosis work, off the event loop: a fixed pool of threads and a bounded queue in front of it.

A request takes a ticket before its body is read; past ``threads + queue`` tickets it gets 503 with
``Retry-After`` at once, so memory for uploads in flight is bounded too (tickets x max_upload_mb).
A ticket is given back when its work is done, even if the client went away meanwhile, so
abandoned requests cannot pile work up behind the limit.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import ClassVar, TypeVar

from diagnose.errors import DiagnoseError

T = TypeVar("T")
RETRY_AFTER_S = 2


class Busy(DiagnoseError):
    """Every diagnosis thread is busy and the queue is full: try again shortly."""

    status = 503
    headers: ClassVar[dict[str, str]] = {"Retry-After": str(RETRY_AFTER_S)}


class Ticket:
    """One admitted request's place in the pool; ``run`` may be called once, ``release`` any number of times."""

    def __init__(self, pool: WorkPool) -> None:
        self._pool = pool
        self._released = False
        self._running = False

    async def run(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on a pool thread; the ticket is given back when it finishes."""
        self._running = True
        future: Future[T] = self._pool.executor.submit(fn)
        future.add_done_callback(lambda _: self._give_back())
        return await asyncio.wrap_future(future)

    def _give_back(self) -> None:
        with self._pool.lock:
            if not self._released:
                self._released = True
                self._pool.admitted -= 1

    def release(self) -> None:
        """Give the place back if no work was started with it (a started run gives it back when done)."""
        if not self._running:
            self._give_back()


class WorkPool:
    """``threads`` diagnosis threads and room for ``queue`` more admitted requests."""

    def __init__(self, threads: int, queue: int) -> None:
        self.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="diagnose-work")
        self.capacity = threads + queue
        self.admitted = 0
        self.lock = threading.Lock()

    def admit(self) -> Ticket:
        """A ticket, or Busy (503, Retry-After) when ``threads + queue`` requests are already in."""
        with self.lock:
            if self.admitted >= self.capacity:
                raise Busy(f"the server is busy ({self.capacity} diagnoses in progress or waiting); retry in {RETRY_AFTER_S} s")
            self.admitted += 1
        return Ticket(self)
