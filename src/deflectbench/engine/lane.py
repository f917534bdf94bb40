"""A lane: one model's or one judge's items, sent through its provider's account.

Items come from an iterable given at the start, or are added while the run goes (a judge's
lane is fed each generation the moment it is stored); a lane with open feeds is not done even
when it has nothing to send. Every item is reported exactly once through ``on_result``, the
moment it finishes; an item that was not sent when the lane stopped is not reported at all
(still to do). Retries, their backoff, the abort after a run of failures and the per-model cap
are the lane's; concurrency, pacing and pauses are its account's.
"""

from __future__ import annotations

import asyncio
import collections
import heapq
import itertools
import random
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Generic, TypedDict, TypeVar

from deflectbench.engine.flow import Job
from deflectbench.engine.policy import (
    EngineEvent,
    EnginePolicy,
    EngineStats,
    EventKind,
    Failure,
    Fatal,
    NotSent,
)
from deflectbench.models.base import Completion, ModelError

if TYPE_CHECKING:
    from deflectbench.engine.account import Account

T = TypeVar("T")

OnResult = Callable[[T, Completion | None, Failure | None], None]


class LaneOptions(TypedDict, Generic[T], total=False):
    """A lane's keyword settings, as :meth:`Engine.lane <deflectbench.engine.Engine.lane>`
    passes them on to :class:`Lane` (see there)."""

    priority: int
    items: Iterable[T] | None
    feeds: int
    estimate_tokens: Callable[[T], int] | None
    should_stop: Callable[[], bool] | None
    on_progress: Callable[[EngineEvent], None] | None


class Lane(Generic[T]):
    """The items of one model or judge; see the module docstring."""

    def __init__(
        self,
        account: Account,
        name: str,
        call: Callable[[T], Awaitable[Completion]],
        on_result: OnResult[T],
        policy: EnginePolicy,
        *,
        priority: int = 0,
        items: Iterable[T] | None = None,
        feeds: int = 0,
        estimate_tokens: Callable[[T], int] | None = None,
        should_stop: Callable[[], bool] | None = None,
        on_progress: Callable[[EngineEvent], None] | None = None,
    ) -> None:
        self.account = account
        self.name = name
        self.call = call
        self.on_result = on_result
        self.policy = policy
        #: Higher goes first when both wait on the same account (judges before generations).
        self.priority = priority
        self.estimate_tokens = estimate_tokens
        self.should_stop = should_stop
        self.on_progress = on_progress
        self.cap = policy.model_max_concurrency
        self.buffer: collections.deque[T] = collections.deque()
        self.iterator: Iterator[T] | None = iter(items) if items is not None else None
        #: Producers still adding items (a judge's: the generations not finished yet).
        self.feeds = feeds
        self.front: collections.deque[Job[T]] = collections.deque()
        self.retry_heap: list[tuple[float, int, Job[T]]] = []
        self.seq = itertools.count()
        #: Items taken up and not yet reported (sent, waiting to retry, or put back).
        self.in_progress = 0
        #: Jobs a worker holds (pacing or in flight): what the per-model cap counts.
        self.active = 0
        self.in_flight = 0
        self.failure_run = 0
        self.halted = False
        #: Nothing more will be reported (done or stopped, nothing in flight, no feed open).
        self.finished = False
        self.on_finished: list[Callable[[], None]] = []
        self.stats = EngineStats()
        self._done_signalled = False

    # -- feeding -----------------------------------------------------------------------------

    def add(self, item: T) -> None:
        """One more item to send (its lane has an open feed)."""
        self.buffer.append(item)
        self.account.idle.notify_one()

    def open_feed(self) -> None:
        self.feeds += 1

    def close_feed(self) -> None:
        """A producer is done: once all are, the lane ends when its items are."""
        self.feeds -= 1
        self.settle()

    # -- state -------------------------------------------------------------------------------

    @property
    def done_dispatching(self) -> bool:
        """Nothing more will be sent: stopped, or no item left and none to come."""
        return self.halted or (
            self.feeds == 0 and self.iterator is None and not self.buffer and self.in_progress == 0
        )

    @property
    def waiting(self) -> int:
        """Items added and not yet taken up (an iterable's items are not counted)."""
        return len(self.buffer)

    def settle(self) -> None:
        """Tell the account when the lane is done, and the lane's watchers when it is over."""
        if not self.done_dispatching:
            return
        if not self._done_signalled:
            self._done_signalled = True
            self.account.idle.notify_all()
        if not self.finished and self.in_flight == 0 and self.feeds == 0:
            self.finished = True
            for callback in self.on_finished:
                callback()

    def halt_requested(self) -> bool:
        if self.halted:
            return True
        if self.should_stop is not None and self.should_stop():
            self.stats.stopped = True
            self.halted = True
            self.account.idle.notify_all()
            self._emit("stop")
            self.settle()
        return self.halted

    def ready(self, now: float) -> bool:
        """Something can be sent now (peeks at the iterable, taking nothing up)."""
        if self.halt_requested():
            return False
        if self.cap is not None and self.active >= self.cap:
            return False
        if self.front or self.buffer:
            return True
        heap = self.retry_heap
        if heap and heap[0][0] <= now:
            return True
        if self.iterator is not None:
            try:
                self.buffer.append(next(self.iterator))
            except StopIteration:
                self.iterator = None
                self.settle()
                return False
            return True
        return False

    def take(self, now: float) -> Job[T] | None:
        """The next job: one put back, else a retry that is due, else a fresh item."""
        heap = self.retry_heap
        if self.front:
            job = self.front.popleft()
        elif heap and heap[0][0] <= now:
            job = heapq.heappop(heap)[2]
        elif self.buffer:
            item = self.buffer.popleft()
            self.in_progress += 1
            job = Job(item, self)
            if self.estimate_tokens is not None and self.account.tpm is not None:
                job.estimate = self.estimate_tokens(item)
        else:
            return None
        self.active += 1
        return job

    def next_due(self) -> float | None:
        if self.halted or not self.retry_heap:
            return None
        return self.retry_heap[0][0]

    def park(self, job: Job[T], delay: float) -> None:
        """Try ``job`` again after ``delay`` seconds (unreported if the lane stops first)."""
        heapq.heappush(self.retry_heap, (self.account.loop.time() + delay, next(self.seq), job))
        self._let_go()
        self.account.idle.notify_one()

    def put_back(self, job: Job[T]) -> None:
        """A job taken and not sent: first in line again."""
        self.front.appendleft(job)
        self._let_go()
        self.account.idle.notify_one()

    def _let_go(self) -> None:
        self.active -= 1
        if self.cap is not None and self.active == self.cap - 1:
            self.account.idle.notify_one()

    def finalize(self, elapsed: float) -> None:
        account = self.account
        stats = self.stats
        stats.elapsed = elapsed
        stats.unfinished = self.in_progress
        stats.final_concurrency = account.gate.limit
        stats.lowest_concurrency = account.lowest_concurrency
        stats.concurrency_trace = list(account.concurrency_trace)

    # -- one attempt -------------------------------------------------------------------------

    async def attempt(self, job: Job[T]) -> bool:
        """One attempt at ``job``; True when nothing was sent and it should be tried again."""
        account = self.account
        policy = self.policy
        dispatched_at = account.loop.time()
        job.attempts += 1
        self.stats.requests += 1
        self.in_flight += 1
        account.sending()
        completion: Completion | None = None
        error: ModelError | None = None
        not_sent: NotSent | None = None
        try:
            async with asyncio.timeout(policy.timeout_s):
                completion = await self.call(job.item)
        except ModelError as exc:
            error = exc
        except TimeoutError:
            error = ModelError(f"no answer within {policy.timeout_s:g}s", retryable=True)
            error.cause = "timeout"
        except NotSent as exc:
            not_sent = exc
        except Fatal:
            raise
        except Exception as exc:  # a bug in `call`: report it against the item, carry on
            error = ModelError(f"{type(exc).__name__}: {exc}", cause=type(exc).__name__)
        finally:
            self.in_flight -= 1
            account.returned(not_sent is None, dispatched_at)
        if not_sent is not None:
            again = await self._withhold(job, not_sent)
        else:
            again = False
            if completion is not None:
                self._succeeded(job, completion)
            else:
                self._failed(job, error or ModelError("call returned no completion"), dispatched_at)
        self.settle()
        return again

    def _succeeded(self, job: Job[T], completion: Completion) -> None:
        self.stats.ok += 1
        self.in_progress -= 1
        self.failure_run = 0
        account = self.account
        usage = completion.usage
        if completion.cached:
            account.refund(job.estimate)
        elif account.tpm is not None:
            account.tpm.charge(usage.input_tokens + usage.output_tokens - job.estimate)
        raised = account.succeeded()
        self._let_go()
        if self.on_progress is not None:
            if raised:
                self._emit("concurrency")
            self._emit("ok", job)
        self.on_result(job.item, completion, None)

    def _failed(self, job: Job[T], error: ModelError, dispatched_at: float) -> None:
        policy = self.policy
        stats = self.stats
        account = self.account
        retry_after = error.retry_after
        if error.rate_limited:
            stats.rate_limited += 1
            job.rate_failures += 1
            if account.rate_limited(dispatched_at):
                self._emit("concurrency")
            budget_left = job.rate_failures <= policy.max_rate_limit_retries
            failures = job.rate_failures
        else:
            job.other_failures += 1
            budget_left = job.other_failures <= policy.max_retries
            failures = job.other_failures
        message = str(error)
        too_long = retry_after is not None and retry_after > policy.retry_after_max_s
        if too_long:
            message += f" (server asked to wait {retry_after:.0f}s)"
        if error.retryable and budget_left and not too_long:
            if retry_after is not None:
                delay = retry_after * (1.0 + 0.1 * random.random())
                pause = min(retry_after, policy.pool_pause_max_s)
                if account.pause(pause):
                    self._emit("pause", job, delay=pause)
            else:
                cap = min(policy.backoff_max_s, policy.backoff_base_s * 2.0 ** (failures - 1))
                delay = random.uniform(0.0, cap)
            stats.retries += 1
            self.park(job, delay)
            if self.on_progress is not None:
                self._emit("retry", job, delay=delay, error=message, status=error.status)
            return
        stats.failed += 1
        self.in_progress -= 1
        self.failure_run += 1
        self._let_go()
        failure = Failure(message, error.status, job.attempts, error.retryable, error.cause)
        if self.on_progress is not None:
            self._emit("failed", job, error=message, status=error.status)
        limit = policy.abort_after_failures
        if limit is not None and self.failure_run >= limit and not self.halted:
            self.halted = True
            stats.aborted = f"{self.failure_run} failures in a row; last: {message}"
            account.idle.notify_all()
            self._emit("abort", job, error=stats.aborted, status=error.status)
        self.on_result(job.item, None, failure)

    async def _withhold(self, job: Job[T], not_sent: NotSent) -> bool:
        """``call`` sent nothing: wait for room and try again (True), or leave the item to do,
        unreported (False)."""
        job.attempts -= 1
        self.stats.requests -= 1
        if not_sent.wait is not None:
            await not_sent.wait()  # holding the worker: no new item starts meanwhile
            if not self.halt_requested():
                return True
            self.park(job, 0.0)
            return False
        self.stats.withheld += 1
        self.in_progress -= 1
        self._let_go()
        return False

    def _emit(
        self,
        kind: EventKind,
        job: Job[T] | None = None,
        *,
        delay: float = 0.0,
        error: str | None = None,
        status: int | None = None,
    ) -> None:
        if self.on_progress is not None:
            item, attempts = (job.item, job.attempts) if job is not None else (None, 0)
            limit, in_flight = self.account.gate.limit, self.account.in_flight
            event = EngineEvent(kind, item, attempts, limit, in_flight, delay, error, status)
            self.on_progress(event)
