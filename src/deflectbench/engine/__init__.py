"""Run work items through async calls with bounded, adaptive concurrency shared per provider.

The engine knows nothing of what an item means. A run is a set of *lanes* (one per model or
judge: its items, an async ``call(item) -> Completion`` and an ``on_result(item, completion,
failure)`` callback) on *accounts* (one per provider section: the limits its lanes share).
Every item is reported exactly once, the moment it finishes. Design points, each fixing a way
the simple "gather batches of 50 behind a semaphore" scheme loses time or results:

* A pool of workers per account with no batch barrier: a finished request frees its slot at
  once, so one slow reply never idles the other slots; the slot goes to whichever lane on the
  account has work, judges first (:mod:`deflectbench.engine.account`).
* Concurrency adapts (AIMD) per account: a 429 halves the allowed concurrency (once per round
  trip, not once per rejected request), a run of successes as long as the limit adds one back.
* Optional requests- and tokens-per-minute pacers per account space requests evenly (no
  bursts), a little under the stated limit, so a server enforcing it rarely has to say 429;
  tokens are charged from an estimate before sending and corrected on the reply.
* Retryable errors are retried with exponential backoff and full jitter; a server's
  Retry-After is honoured for that item, and pauses the whole account briefly. An item waiting
  to retry does not hold a worker, so other items keep flowing meanwhile.
* ``should_stop`` is consulted before every dispatch (Ctrl-C): nothing new starts, requests
  in flight finish and are reported. Cancellation loses nothing already reported, because
  reporting is synchronous and immediate. ``call`` may decline to send an item
  (:class:`NotSent`: a budget) or stop the whole run (:class:`Fatal`: the store failed).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar, Unpack

from deflectbench.engine.account import Account
from deflectbench.engine.flow import gather_or_cancel
from deflectbench.engine.lane import Lane, LaneOptions, OnResult
from deflectbench.engine.policy import (
    EngineEvent,
    EnginePolicy,
    EngineStats,
    Failure,
    Fatal,
    NotSent,
)
from deflectbench.models.base import Completion

T = TypeVar("T")

__all__ = [
    "Account",
    "Engine",
    "EngineEvent",
    "EnginePolicy",
    "EngineStats",
    "Failure",
    "Fatal",
    "Lane",
    "NotSent",
    "gather_or_cancel",
    "run_items",
]


class Engine:
    """Lanes on the accounts they share; :meth:`run` until every lane is done.

    Made inside the running event loop. Add every lane first: an account's limits are fixed
    when the run starts (the tightest any of its lanes states).
    """

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.accounts: dict[str, Account] = {}
        self.lanes: list[Lane[Any]] = []

    def lane(
        self,
        name: str,
        call: Callable[[T], Awaitable[Completion]],
        on_result: OnResult[T],
        policy: EnginePolicy | None = None,
        *,
        account: str | None = None,
        **options: Unpack[LaneOptions[T]],
    ) -> Lane[T]:
        """A lane on ``account`` (default: its own), with :class:`Lane`'s keyword ``options``
        (:class:`~deflectbench.engine.lane.LaneOptions`). ``items`` are known now; ``feeds`` counts
        producers that will :meth:`Lane.add` more and then :meth:`Lane.close_feed`."""
        policy = policy or EnginePolicy()
        key = account or name
        acct = self.accounts.get(key)
        if acct is None:
            acct = self.accounts[key] = Account(key, policy, self.loop)
        else:
            acct.admit(policy)
        lane = Lane(acct, name, call, on_result, policy, **options)
        acct.lanes.append(lane)
        self.lanes.append(lane)
        return lane

    async def run(self) -> None:
        """Send every lane's items; return once all are done (or stopped). An exception from
        ``on_result`` or a :class:`Fatal` from ``call`` cancels everything and propagates."""
        for acct in self.accounts.values():
            acct.start()
        started = self.loop.time()
        workers = [
            asyncio.create_task(acct.worker())
            for acct in self.accounts.values()
            for _ in range(acct.max_concurrency)
        ]
        try:
            await gather_or_cancel(workers)
        finally:
            elapsed = self.loop.time() - started
            for lane in self.lanes:
                lane.finalize(elapsed)


async def run_items(
    items: Iterable[T],
    call: Callable[[T], Awaitable[Completion]],
    on_result: OnResult[T],
    policy: EnginePolicy | None = None,
    *,
    estimate_tokens: Callable[[T], int] | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_progress: Callable[[EngineEvent], None] | None = None,
) -> EngineStats:
    """Run ``call`` on every item (one lane on its own account); report each through
    ``on_result`` exactly once.

    ``on_result(item, completion, None)`` on success, ``on_result(item, None, failure)``
    once retries are exhausted or the error is not retryable. Items not started when
    ``should_stop()`` turns true (or the run aborts) are not reported at all: they are
    still to do. ``estimate_tokens`` feeds the tokens-per-minute pacer before a request
    (actual usage corrects it afterwards). Exceptions raised by ``on_result`` stop the run
    and propagate.
    """
    engine = Engine()
    lane = engine.lane(
        "items",
        call,
        on_result,
        policy,
        items=items,
        estimate_tokens=estimate_tokens,
        should_stop=should_stop,
        on_progress=on_progress,
    )
    await engine.run()
    return lane.stats
