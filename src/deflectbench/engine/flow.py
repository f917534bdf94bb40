"""The engine's moving parts: a job (an item and its attempts), a resizable gate, a pacer."""

from __future__ import annotations

import asyncio
import collections
from typing import Generic, TypeVar

T = TypeVar("T")


class Job(Generic[T]):
    __slots__ = ("attempts", "estimate", "item", "other_failures", "rate_failures")

    def __init__(self, item: T) -> None:
        self.item = item
        self.attempts = 0
        self.rate_failures = 0
        self.other_failures = 0
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
