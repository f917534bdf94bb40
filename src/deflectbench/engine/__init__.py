"""Run work items through an async call with bounded, adaptive concurrency.

The engine knows nothing of what an item means: it takes an iterable of items, an async
``call(item) -> Completion`` and an ``on_result(item, completion, failure)`` callback, and
reports every item exactly once, the moment it finishes. Design points, each fixing a way the
simple "gather batches of 50 behind a semaphore" scheme loses time or results:

* A pool of workers with no batch barrier: a finished request frees its slot at once, so one
  slow reply never idles the other slots.
* Concurrency adapts (AIMD): a 429 halves the allowed concurrency (once per round trip, not
  once per rejected request), a run of successes as long as the current limit adds one back.
* Optional requests- and tokens-per-minute pacers space requests evenly (no bursts), a little
  under the stated limit, so a server enforcing that limit rarely has to say 429.
* Retryable errors are retried with exponential backoff and full jitter; a server's
  Retry-After is honoured for that item, and pauses the whole pool briefly. An item waiting
  to retry does not hold a worker, so other items keep flowing meanwhile.
* ``should_stop`` is consulted before every dispatch (Ctrl-C): nothing new starts, requests
  in flight finish and are reported. Cancellation loses nothing already reported, because
  reporting is synchronous and immediate. ``call`` may decline to send an item
  (:class:`NotSent`: a budget) or stop the whole run (:class:`Fatal`: the store failed).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import random
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Generic, TypeVar

from deflectbench.engine.flow import Gate, Job, Pacer
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

T = TypeVar("T")

__all__ = [
    "EngineEvent",
    "EnginePolicy",
    "EngineStats",
    "Failure",
    "Fatal",
    "NotSent",
    "run_items",
]


async def run_items(
    items: Iterable[T],
    call: Callable[[T], Awaitable[Completion]],
    on_result: Callable[[T, Completion | None, Failure | None], None],
    policy: EnginePolicy | None = None,
    *,
    estimate_tokens: Callable[[T], int] | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_progress: Callable[[EngineEvent], None] | None = None,
) -> EngineStats:
    """Run ``call`` on every item; report each through ``on_result`` exactly once.

    ``on_result(item, completion, None)`` on success, ``on_result(item, None, failure)``
    once retries are exhausted or the error is not retryable. Items not started when
    ``should_stop()`` turns true (or the run aborts) are not reported at all: they are
    still to do. ``estimate_tokens`` feeds the tokens-per-minute pacer before a request
    (actual usage is charged afterwards either way). Exceptions raised by ``on_result``
    stop the run and propagate.
    """
    run = _Run(items, call, on_result, policy or EnginePolicy(), estimate_tokens, should_stop)
    run.on_progress = on_progress
    return await run.run()


class _Run(Generic[T]):
    def __init__(
        self,
        items: Iterable[T],
        call: Callable[[T], Awaitable[Completion]],
        on_result: Callable[[T, Completion | None, Failure | None], None],
        policy: EnginePolicy,
        estimate_tokens: Callable[[T], int] | None,
        should_stop: Callable[[], bool] | None,
    ) -> None:
        self.items: Iterator[T] = iter(items)
        self.call = call
        self.on_result = on_result
        self.policy = policy
        self.estimate_tokens = estimate_tokens
        self.should_stop = should_stop
        self.on_progress: Callable[[EngineEvent], None] | None = None
        self.loop = asyncio.get_running_loop()
        self.stats = EngineStats()
        limit = min(policy.initial_concurrency or policy.max_concurrency, policy.max_concurrency)
        self.gate = Gate(max(policy.min_concurrency, limit))
        rpm, tpm = policy.requests_per_minute, policy.tokens_per_minute
        headroom = policy.rate_headroom
        self.rpm = Pacer(rpm * headroom / 60.0) if rpm else None
        self.tpm = Pacer(tpm * headroom / 60.0) if tpm else None
        self.exhausted = False
        self.halted = False
        #: Items taken from the iterator and not yet reported.
        self.in_progress = 0
        self.in_flight = 0
        self.retry_heap: list[tuple[float, int, Job[T]]] = []
        self.seq = itertools.count()
        self.wakeup = asyncio.Event()
        self.pause_until = 0.0
        self.last_decrease_at = -1.0
        self.success_run = 0
        self.failure_run = 0
        self.started_at = 0.0

    # -- main loop ---------------------------------------------------------------------------

    async def run(self) -> EngineStats:
        self.started_at = self.loop.time()
        self.stats.lowest_concurrency = self.gate.limit
        self.stats.concurrency_trace.append((0.0, self.gate.limit))
        workers = [asyncio.create_task(self._worker()) for _ in range(self.policy.max_concurrency)]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise
        finally:
            self.stats.elapsed = self.loop.time() - self.started_at
            self.stats.unfinished = self.in_progress
            self.stats.final_concurrency = self.gate.limit
        return self.stats

    async def _worker(self) -> None:
        gate = self.gate
        while True:
            await gate.acquire()
            try:
                job = await self._next_job()
                if job is None:
                    return
                while await self._attempt(job):
                    pass  # sent nothing yet: `call` waited for room (a budget), try it again
            finally:
                gate.release()

    def _halt_requested(self) -> bool:
        if self.halted:
            return True
        if self.should_stop is not None and self.should_stop():
            self.halted = True
            self.stats.stopped = True
            self.wakeup.set()
            self._emit("stop")
        return self.halted

    async def _next_job(self) -> Job[T] | None:
        """A retry that is due, else a fresh item, else wait; None when nothing is left."""
        while True:
            if self._halt_requested():
                return None
            heap = self.retry_heap
            now = self.loop.time()
            if heap and heap[0][0] <= now:
                return heapq.heappop(heap)[2]
            if not self.exhausted:
                try:
                    item = next(self.items)
                except StopIteration:
                    self.exhausted = True
                    continue
                self.in_progress += 1
                job = Job(item)
                if self.estimate_tokens is not None and self.tpm is not None:
                    job.estimate = self.estimate_tokens(item)
                return job
            if self.in_progress == 0:
                self.wakeup.set()  # let the other idle workers see that we are done
                return None
            self.wakeup.clear()
            timeout = heap[0][0] - now if heap else None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wakeup.wait(), timeout)

    # -- one attempt -------------------------------------------------------------------------

    async def _attempt(self, job: Job[T]) -> bool:
        """One attempt at ``job``; True when nothing was sent and it should be tried again."""
        loop = self.loop
        policy = self.policy
        waited = False
        while (pause := self.pause_until - loop.time()) > 0:
            await asyncio.sleep(pause)
            waited = True
        wait = 0.0
        if self.rpm is not None:
            wait = self.rpm.reserve(1.0, loop.time())
        if self.tpm is not None:
            wait = max(wait, self.tpm.reserve(job.estimate, loop.time()))
        if wait > 0:
            await asyncio.sleep(wait)
            waited = True
        if waited and self._halt_requested():
            self._park(job, 0.0)  # taken but never sent: still to do
            return False
        dispatched_at = loop.time()
        job.attempts += 1
        self.stats.requests += 1
        self.in_flight += 1
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
        if not_sent is not None:
            return await self._withhold(job, not_sent)
        if completion is not None:
            self._succeeded(job, completion)
        else:
            error = error or ModelError("call returned no completion")
            self._failed(job, error, dispatched_at)
        return False

    def _succeeded(self, job: Job[T], completion: Completion) -> None:
        stats = self.stats
        stats.ok += 1
        self.in_progress -= 1
        self.failure_run = 0
        if self.tpm is not None:
            usage = completion.usage
            self.tpm.charge(usage.input_tokens + usage.output_tokens - job.estimate)
        gate = self.gate
        self.success_run += 1
        if self.success_run >= gate.limit and gate.limit < self.policy.max_concurrency:
            self.success_run = 0
            self._set_limit(gate.limit + 1)
        if self.on_progress is not None:
            self._emit("ok", job)
        self._finish_if_done()
        self.on_result(job.item, completion, None)

    def _failed(self, job: Job[T], error: ModelError, dispatched_at: float) -> None:
        policy = self.policy
        stats = self.stats
        now = self.loop.time()
        retry_after = error.retry_after
        if error.rate_limited:
            stats.rate_limited += 1
            job.rate_failures += 1
            self.success_run = 0
            if dispatched_at >= self.last_decrease_at:
                # Only a request sent after the last cut reflects the current limit.
                self.last_decrease_at = now
                self._set_limit(max(policy.min_concurrency, self.gate.limit // 2))
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
                if now + pause > self.pause_until:
                    self.pause_until = now + pause
                    self._emit("pause", job, delay=pause)
            else:
                cap = min(policy.backoff_max_s, policy.backoff_base_s * 2.0 ** (failures - 1))
                delay = random.uniform(0.0, cap)
            stats.retries += 1
            self._park(job, delay)
            if self.on_progress is not None:
                self._emit("retry", job, delay=delay, error=message, status=error.status)
            return
        stats.failed += 1
        self.in_progress -= 1
        self.failure_run += 1
        failure = Failure(message, error.status, job.attempts, error.retryable, error.cause)
        if self.on_progress is not None:
            self._emit("failed", job, error=message, status=error.status)
        limit = policy.abort_after_failures
        if limit is not None and self.failure_run >= limit and not self.halted:
            self.halted = True
            stats.aborted = f"{self.failure_run} failures in a row; last: {message}"
            self.wakeup.set()
            self._emit("abort", job, error=stats.aborted, status=error.status)
        self._finish_if_done()
        self.on_result(job.item, None, failure)

    # -- helpers -----------------------------------------------------------------------------

    async def _withhold(self, job: Job[T], not_sent: NotSent) -> bool:
        """``call`` sent nothing: wait for room and try again (True), or leave the item to do,
        unreported (False)."""
        job.attempts -= 1
        self.stats.requests -= 1
        if not_sent.wait is not None:
            await not_sent.wait()  # holding the worker: no new item starts meanwhile
            if not self._halt_requested():
                return True
            self._park(job, 0.0)
            return False
        self.stats.withheld += 1
        self.in_progress -= 1
        self._finish_if_done()
        return False

    def _park(self, job: Job[T], delay: float) -> None:
        heapq.heappush(self.retry_heap, (self.loop.time() + delay, next(self.seq), job))
        self.wakeup.set()

    def _finish_if_done(self) -> None:
        if self.exhausted and self.in_progress == 0:
            self.wakeup.set()

    def _set_limit(self, limit: int) -> None:
        if limit == self.gate.limit:
            return
        self.gate.set_limit(limit)
        stats = self.stats
        stats.lowest_concurrency = min(stats.lowest_concurrency, limit)
        stats.concurrency_trace.append((self.loop.time() - self.started_at, limit))
        self._emit("concurrency")

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
            limit, in_flight = self.gate.limit, self.in_flight
            event = EngineEvent(kind, item, attempts, limit, in_flight, delay, error, status)
            self.on_progress(event)
