"""The engine's moving parts: a job (an item and its attempts), a resizable gate, a pacer, and
the idle workers of an account waiting for work."""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from deflectbench.engine.lane import Lane

T = TypeVar("T")


async def gather_or_cancel(tasks: Sequence[asyncio.Task[Any]]) -> None:
    """Wait for every task; when one fails (or the wait is cancelled), cancel the others and
    wait for them too before re-raising, so no task outlives the run that started it."""
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


class Job(Generic[T]):
    __slots__ = ("attempts", "estimate", "item", "lane", "other_failures", "rate_failures")

    def __init__(self, item: T, lane: Lane[T] | None = None) -> None:
        self.item = item
        #: The lane it belongs to (its model or judge).
        self.lane: Any = lane
        self.attempts = 0
        self.rate_failures = 0
        self.other_failures = 0
        #: Tokens charged to the tokens-per-minute pacer before sending (corrected on reply).
        self.estimate = 0


class Gate:
    """A semaphore whose size can change while it is in use."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    async def acquire(self) -> None:
        if self.active < self.limit and not self._waiters:
            self.active += 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # the slot was handed over just as we were cancelled
            else:
                self._waiters.remove(future)
            raise

    def release(self) -> None:
        self.active -= 1
        self._wake()

    def set_limit(self, limit: int) -> None:
        self.limit = limit
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.active < self.limit:
            future = self._waiters.popleft()
            if not future.done():
                self.active += 1
                future.set_result(None)


class Pacer:
    """Spaces out a cost (requests or tokens) at a steady rate, with no burst allowance."""

    def __init__(self, per_second: float) -> None:
        self.rate = per_second
        self.next_at = 0.0

    def reserve(self, cost: float, now: float) -> float:
        """Book the next free moment for ``cost``; return how long to wait for it."""
        start = max(self.next_at, now)
        self.next_at = start + cost / self.rate
        return start - now

    def charge(self, cost: float) -> None:
        """Account for cost learnt after the fact (negative refunds an overestimate)."""
        self.next_at += cost / self.rate


class Idle:
    """Workers with a slot and nothing to send, waiting to be told there may be work.

    ``notify_one`` wakes one (a new item: one worker is enough), ``notify_all`` every one (the
    work ran out, a lane stopped); a waiter also wakes after its timeout, to find a retry due.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    async def wait(self, timeout: float) -> None:
        future: asyncio.Future[None] = self.loop.create_future()
        if len(self._waiters) > 64:  # drop those that timed out long ago
            self._waiters = collections.deque(f for f in self._waiters if not f.done())
        self._waiters.append(future)
        handle = self.loop.call_later(max(timeout, 0.0), _wake, future)
        try:
            await future
        finally:
            handle.cancel()

    def notify_one(self) -> None:
        waiters = self._waiters
        while waiters:
            future = waiters.popleft()
            if not future.done():
                future.set_result(None)
                return

    def notify_all(self) -> None:
        waiters, self._waiters = self._waiters, collections.deque()
        for future in waiters:
            _wake(future)


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
