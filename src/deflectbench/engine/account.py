"""An account: one provider section's limits, shared by every model and judge it serves.

One concurrency gate (adaptive: a 429 halves it, once per round trip; a run of successes as
long as the limit adds one back), one requests-per-minute and one tokens-per-minute pacer, and
one pause after a Retry-After, whichever lane's request met the limit. The account's workers
pick the next item among its lanes: the highest priority lane with something to send (judges
before new generations), round-robin among equals, a lane at its own cap skipped. The choice
is made as late as possible: after the pacers' wait, a lane of higher priority that has work
by then takes the slot, and the item first picked waits at the head of its lane.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from deflectbench.engine.flow import Gate, Idle, Job, Pacer
from deflectbench.engine.policy import EnginePolicy

if TYPE_CHECKING:
    from deflectbench.engine.lane import Lane

#: Longest an idle worker sleeps before looking again (a stop, a retry falling due).
POLL_S = 1.0
#: The window of the requests-per-minute figure shown while a run goes.
MINUTE_S = 60.0


class Account:
    """The shared limits of one provider section, and the workers that honour them."""

    def __init__(self, name: str, policy: EnginePolicy, loop: asyncio.AbstractEventLoop) -> None:
        self.name = name
        self.loop = loop
        self.max_concurrency = policy.max_concurrency
        self.min_concurrency = policy.min_concurrency
        self.initial_concurrency = policy.initial_concurrency
        self.requests_per_minute = policy.requests_per_minute
        self.tokens_per_minute = policy.tokens_per_minute
        self.rate_headroom = policy.rate_headroom
        self.lanes: list[Lane[Any]] = []
        self.gate = Gate(policy.max_concurrency)
        self.rpm: Pacer | None = None
        self.tpm: Pacer | None = None
        self.idle = Idle(loop)
        self.pause_until = 0.0
        self.last_decrease_at = -1.0
        self.success_run = 0
        self.started_at = 0.0
        self.lowest_concurrency = 0
        self.concurrency_trace: list[tuple[float, int]] = []
        #: Requests in flight now, and the most there ever were at once.
        self.in_flight = 0
        self.max_in_flight = 0
        #: Requests sent (all lanes), and when the recent ones were.
        self.requests = 0
        #: Requests sent in each of the last 60 seconds (slot: second % 60; stamp: second),
        #: plain numbers a display thread can read while the run writes them.
        self._per_second = [0] * int(MINUTE_S)
        self._second = [-1] * int(MINUTE_S)
        self._rr = 0
        self._started = False
        #: Jobs of workers waiting on a pause or a pacer, each in a holder a swap may change.
        self._pacing: list[list[Job[Any]]] = []

    def admit(self, policy: EnginePolicy) -> None:
        """Another lane on this account: the tightest limits any lane states hold for all."""
        self.max_concurrency = min(self.max_concurrency, policy.max_concurrency)
        self.min_concurrency = min(
            max(self.min_concurrency, policy.min_concurrency), self.max_concurrency
        )
        self.requests_per_minute = _tighter(self.requests_per_minute, policy.requests_per_minute)
        self.tokens_per_minute = _tighter(self.tokens_per_minute, policy.tokens_per_minute)
        self.rate_headroom = min(self.rate_headroom, policy.rate_headroom)
        if policy.initial_concurrency is not None:
            self.initial_concurrency = min(
                self.initial_concurrency or policy.initial_concurrency, policy.initial_concurrency
            )

    def start(self) -> None:
        """Fix the limits before the first request (every lane has been admitted)."""
        if self._started:
            return
        self._started = True
        top = self.max_concurrency
        limit = max(self.min_concurrency, min(self.initial_concurrency or top, top))
        self.gate = Gate(limit)
        headroom = self.rate_headroom
        rpm, tpm = self.requests_per_minute, self.tokens_per_minute
        self.rpm = Pacer(rpm * headroom / 60.0) if rpm else None
        self.tpm = Pacer(tpm * headroom / 60.0) if tpm else None
        self.started_at = self.loop.time()
        self.lowest_concurrency = limit
        self.concurrency_trace.append((0.0, limit))

    # -- what a display reads ----------------------------------------------------------------

    @property
    def limit(self) -> int:
        """The concurrency allowed now (at most ``max_concurrency``; lower after 429s)."""
        return self.gate.limit

    def requests_last_minute(self) -> int:
        """Requests sent in the last minute (safe to call from another thread)."""
        now = int(self.loop.time())
        counts, seconds = self._per_second, self._second
        return sum(counts[i] for i in range(len(counts)) if now - seconds[i] < MINUTE_S)

    # -- workers -----------------------------------------------------------------------------

    async def worker(self) -> None:
        gate = self.gate
        while True:
            await gate.acquire()
            try:
                job = await self._next_job()
                if job is None:
                    return
                while await job.lane.attempt(job):
                    # Nothing was sent (a budget waited for room): pace it again and retry.
                    job = await self._paced(job)
                    if job is None:
                        break
            finally:
                gate.release()

    async def _next_job(self) -> Job[Any] | None:
        """The next item to send, paced; None when every lane is done."""
        while True:
            now = self.loop.time()
            lane = self._pick(now, None)
            if lane is not None:
                job = lane.take(now)
                if job is not None:
                    job = await self._paced(job)
                    if job is not None:
                        return job
                continue
            if all(lane.done_dispatching for lane in self.lanes):
                self.idle.notify_all()
                return None
            timeout = POLL_S
            for lane in self.lanes:
                due = lane.next_due()
                if due is not None:
                    timeout = min(timeout, due - now)
            await self.idle.wait(timeout)

    def _pick(self, now: float, above: int | None) -> Lane[Any] | None:
        """The lane to send from: highest priority first (above ``above``), round-robin."""
        lanes = self.lanes
        n = len(lanes)
        if n == 1:
            lane = lanes[0]
            if (above is None or lane.priority > above) and lane.ready(now):
                return lane
            return None
        best: Lane[Any] | None = None
        best_priority = above
        best_at = 0
        start = self._rr
        for i in range(n):
            at = (start + i) % n
            lane = lanes[at]
            if best_priority is not None and lane.priority <= best_priority:
                continue
            if lane.ready(now):
                best, best_priority, best_at = lane, lane.priority, at
        if best is not None:
            self._rr = (best_at + 1) % n
        return best

    async def _paced(self, job: Job[Any]) -> Job[Any] | None:
        """Wait out a pause and the pacers for ``job``; after a wait, the slot goes to the
        highest priority item by then: one a lane holds (the job waits at the head of its
        lane), or one another worker is pacing (the two workers swap jobs). None: the lane
        stopped meanwhile (the job is parked, still to do)."""
        loop = self.loop
        waited = False
        holder = [job]
        self._pacing.append(holder)
        try:
            while (pause := self.pause_until - loop.time()) > 0:
                await asyncio.sleep(pause)
                waited = True
            wait = 0.0
            now = loop.time()
            if self.rpm is not None:
                wait = self.rpm.reserve(1.0, now)
            if self.tpm is not None:
                wait = max(wait, self.tpm.reserve(job.estimate, now))
            if wait > 0:
                await asyncio.sleep(wait)
                waited = True
        finally:
            self._pacing = [h for h in self._pacing if h is not holder]
        job = holder[0]  # another worker may have swapped its job for ours meanwhile
        if not waited:
            return job
        lane = job.lane
        if lane.halt_requested():
            lane.park(job, 0.0)  # taken but never sent: still to do
            lane.settle()
            return None
        if len(self.lanes) > 1:
            now = loop.time()
            better = self._pick(now, lane.priority)
            other = better.take(now) if better is not None else None
            if other is not None:
                lane.put_back(job)
                if self.tpm is not None:
                    self.tpm.charge(other.estimate - job.estimate)
                return other
            for pacing in self._pacing:
                theirs = pacing[0].lane
                if theirs.priority > lane.priority and not theirs.halt_requested():
                    pacing[0], job = job, pacing[0]
                    lane = job.lane
        return job

    # -- what lanes tell the account ---------------------------------------------------------

    def sending(self) -> None:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def returned(self, sent: bool, dispatched_at: float) -> None:
        self.in_flight -= 1
        if sent:
            self.requests += 1
            second = int(dispatched_at)
            slot = second % len(self._second)
            if self._second[slot] != second:
                self._second[slot] = second
                self._per_second[slot] = 0
            self._per_second[slot] += 1

    def refund(self, tokens: int) -> None:
        """A reply from the cache: it used none of the per-minute limits."""
        if self.rpm is not None:
            self.rpm.charge(-1.0)
        if self.tpm is not None:
            self.tpm.charge(-tokens)

    def succeeded(self) -> bool:
        """A success; True if it raised the concurrency limit."""
        self.success_run += 1
        gate = self.gate
        if self.success_run >= gate.limit and gate.limit < self.max_concurrency:
            self.success_run = 0
            self._set_limit(gate.limit + 1)
            return True
        return False

    def rate_limited(self, dispatched_at: float) -> bool:
        """A 429; True if it halved the limit (once per round trip, not once per reply)."""
        self.success_run = 0
        if dispatched_at < self.last_decrease_at:
            return False  # sent before the last cut: it says nothing of the current limit
        self.last_decrease_at = self.loop.time()
        return self._set_limit(max(self.min_concurrency, self.gate.limit // 2))

    def pause(self, seconds: float) -> bool:
        """Hold every lane's new requests for ``seconds`` (a Retry-After); True if extended."""
        until = self.loop.time() + seconds
        if until > self.pause_until:
            self.pause_until = until
            return True
        return False

    def _set_limit(self, limit: int) -> bool:
        if limit == self.gate.limit:
            return False
        self.gate.set_limit(limit)
        self.lowest_concurrency = min(self.lowest_concurrency, limit)
        self.concurrency_trace.append((self.loop.time() - self.started_at, limit))
        return True


def _tighter(a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    return a if b is None else min(a, b)
