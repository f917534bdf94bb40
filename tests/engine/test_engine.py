"""The engine: exactly-once reporting under faults, adaptive concurrency, pacing, stopping."""

from __future__ import annotations

import asyncio
import collections
import random
import time
import zlib
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deflectbench.engine import (
    EngineEvent,
    EnginePolicy,
    EngineStats,
    Failure,
    Fatal,
    NotSent,
    run_items,
)
from deflectbench.models.base import (
    Completion,
    GenerationParams,
    Limits,
    Message,
    ModelError,
    Usage,
)
from deflectbench.models.openai_compat import OpenAICompatModel
from support.servers import FakeLLMServer, RecordedRequest

FAST = {"backoff_base_s": 0.005, "backoff_max_s": 0.02}


class Recorder:
    """Collects on_result calls and checks nobody is reported twice."""

    def __init__(self) -> None:
        self.ok: dict[Any, Completion] = {}
        self.failed: dict[Any, Failure] = {}
        self.calls = 0

    def __call__(self, item: Any, completion: Completion | None, failure: Failure | None) -> None:
        self.calls += 1
        assert item not in self.ok and item not in self.failed, f"{item!r} reported twice"
        assert (completion is None) != (failure is None)
        if completion is not None:
            self.ok[item] = completion
        else:
            assert failure is not None
            self.failed[item] = failure


def openai_model(srv: FakeLLMServer, timeout_s: float = 5.0) -> OpenAICompatModel:
    return OpenAICompatModel(
        "local/m",
        "m",
        base_url=srv.openai_base_url,
        api_key="sk-local",
        limits=Limits(timeout_s=timeout_s),
    )


def sdk_call(model: OpenAICompatModel) -> Callable[[str], Any]:
    params = GenerationParams(max_tokens=64)

    async def call(prompt: str) -> Completion:
        return await model.complete([Message("user", prompt)], params)

    return call


async def run_with_model(
    srv: FakeLLMServer, items: list[str], policy: EnginePolicy, recorder: Recorder, **kw: Any
) -> EngineStats:
    model = openai_model(srv, timeout_s=kw.pop("timeout_s", 5.0))
    try:
        return await run_items(items, sdk_call(model), recorder, policy, **kw)
    finally:
        await model.aclose()


# -- exactly once under faults ----------------------------------------------------------------

MIXED = [
    "429",
    "500",
    "503",
    "529",
    "502",
    "408",
    "drop",
    "malformed",
    "nonjson",
    "empty_choices",
    "hang",
]


def test_2000_items_with_20_percent_faults_all_succeed_exactly_once() -> None:
    def fault(request: RecordedRequest) -> str | None:
        # Deterministic per (prompt, attempt): about 20% of requests fail, never more than
        # three times for one prompt, so every item can succeed within its retries.
        if request.attempt >= 3:
            return None
        h = zlib.crc32(f"{request.prompt}#{request.attempt}".encode())
        if h % 100 >= 20:
            return None
        return MIXED[(h // 100) % len(MIXED)]

    items = [f"prompt number {i}" for i in range(2000)]
    recorder = Recorder()
    policy = EnginePolicy(max_concurrency=32, timeout_s=2.0, **FAST)
    with FakeLLMServer(fault_fn=fault, retry_after="0.01", hang_s=3.0) as srv:
        stats = asyncio.run(run_with_model(srv, items, policy, recorder, timeout_s=0.8))
        faults = sum(srv.stats.faults.values())
        total = srv.stats.requests
    assert recorder.calls == 2000
    assert not recorder.failed
    assert set(recorder.ok) == set(items)
    # Every reply belongs to its own item (no mix-ups between concurrent requests).
    assert all(c.text == f"echo: {item}" for item, c in recorder.ok.items())
    assert stats.ok == 2000 and stats.failed == 0 and stats.unfinished == 0
    assert 0.15 < faults / total < 0.25
    # One retry per fault (plus, on a loaded machine, the odd healthy reply that came later
    # than the client's timeout).
    assert faults <= stats.retries == stats.requests - 2000 <= faults + 10
    assert stats.requests == total
    assert stats.rate_limited == srv.stats.faults["429"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(min_value=0, max_value=60),
    concurrency=st.integers(min_value=1, max_value=8),
    seed=st.integers(min_value=0, max_value=10_000),
    fault_rate=st.floats(min_value=0.0, max_value=0.9),
)
def test_every_item_reported_exactly_once(
    n: int, concurrency: int, seed: int, fault_rate: float
) -> None:
    """Whatever mix of errors comes back, each item is reported once, success or failure."""
    rng = random.Random(seed)
    kinds = [
        ModelError("429", retryable=True, status=429, rate_limited=True, retry_after=0.0),
        ModelError("500", retryable=True, status=500),
        ModelError("400", retryable=False, status=400),
        ModelError("timeout", retryable=True),
    ]

    async def call(item: int) -> Completion:
        await asyncio.sleep(rng.random() * 0.002)
        if rng.random() < fault_rate:
            raise rng.choice(kinds)
        return Completion(text=str(item))

    recorder = Recorder()
    policy = EnginePolicy(
        max_concurrency=concurrency,
        max_retries=2,
        max_rate_limit_retries=3,
        abort_after_failures=None,
        backoff_base_s=0.0005,
        backoff_max_s=0.001,
    )
    stats = asyncio.run(run_items(range(n), call, recorder, policy))
    assert recorder.calls == n
    assert set(recorder.ok) | set(recorder.failed) == set(range(n))
    assert stats.ok == len(recorder.ok) and stats.failed == len(recorder.failed)
    assert all(c.text == str(i) for i, c in recorder.ok.items())
    for failure in recorder.failed.values():
        if failure.status == 400:
            assert failure.attempts >= 1 and not failure.retryable
        else:
            assert failure.retryable


# -- failures ---------------------------------------------------------------------------------


def test_non_retryable_4xx_fails_after_one_attempt_with_its_cause() -> None:
    bad = "prompt 7"

    def fault(request: RecordedRequest) -> str | None:
        return "400" if request.prompt == bad else None

    items = [f"prompt {i}" for i in range(20)]
    recorder = Recorder()
    with FakeLLMServer(fault_fn=fault) as srv:
        stats = asyncio.run(run_with_model(srv, items, EnginePolicy(**FAST), recorder))
        sent = [r for r in srv.requests if r.prompt == bad]
    assert list(recorder.failed) == [bad]
    failure = recorder.failed[bad]
    assert failure.attempts == 1 and len(sent) == 1
    assert failure.status == 400 and not failure.retryable
    assert "HTTP 400" in failure.error and "Simulated error 400" in failure.error
    assert stats.ok == 19 and stats.failed == 1 and stats.retries == 0


def test_retries_exhausted_become_a_retryable_failure() -> None:
    async def call(item: int) -> Completion:
        raise ModelError("server error", retryable=True, status=503)

    recorder = Recorder()
    policy = EnginePolicy(max_retries=3, **FAST)
    stats = asyncio.run(run_items([1], call, recorder, policy))
    failure = recorder.failed[1]
    assert failure.attempts == 4 and failure.retryable and failure.status == 503
    assert stats.retries == 3 and stats.failed == 1


def test_engine_timeout_retries_a_hung_call() -> None:
    attempts = collections.Counter[int]()

    async def call(item: int) -> Completion:
        attempts[item] += 1
        if attempts[item] == 1:
            await asyncio.sleep(10)
        return Completion(text="late but fine")

    recorder = Recorder()
    policy = EnginePolicy(timeout_s=0.05, **FAST)
    started = time.monotonic()
    asyncio.run(run_items(range(5), call, recorder, policy))
    assert time.monotonic() - started < 1.0
    assert len(recorder.ok) == 5 and all(n == 2 for n in attempts.values())


def test_a_bug_in_call_is_reported_not_raised() -> None:
    async def call(item: int) -> Completion:
        if item == 2:
            raise KeyError("oops")
        return Completion(text="ok")

    recorder = Recorder()
    asyncio.run(run_items(range(4), call, recorder, EnginePolicy(**FAST)))
    assert recorder.failed[2].error.startswith("KeyError") and recorder.failed[2].attempts == 1
    assert len(recorder.ok) == 3


def test_abort_after_consecutive_failures() -> None:
    """A bad key fails everything: stop after a few instead of burning through 24,000 items."""
    with FakeLLMServer(fault_kinds=["401"], fault_rate=1.0) as srv:
        recorder = Recorder()
        policy = EnginePolicy(max_concurrency=4, abort_after_failures=10, **FAST)
        items = [f"p{i}" for i in range(500)]
        stats = asyncio.run(run_with_model(srv, items, policy, recorder))
        requests = srv.stats.requests
    assert stats.aborted is not None and "HTTP 401" in stats.aborted
    assert 10 <= stats.failed <= 10 + 4
    assert requests == stats.failed == recorder.calls


def test_on_result_exception_propagates_and_cancels_workers() -> None:
    async def call(item: int) -> Completion:
        await asyncio.sleep(0.001)
        return Completion(text="ok")

    def on_result(item: int, completion: Completion | None, failure: Failure | None) -> None:
        if item == 5:
            raise OSError("disk full")

    async def main() -> None:
        with pytest.raises(OSError, match="disk full"):
            await run_items(range(100), call, on_result, EnginePolicy(max_concurrency=4))
        await asyncio.sleep(0)
        assert len(asyncio.all_tasks()) == 1  # only this one: no orphan workers

    asyncio.run(main())


def test_failures_carry_their_cause() -> None:
    with FakeLLMServer(schedule=["404", "hang"], hang_s=2.0) as srv:
        recorder = Recorder()
        policy = EnginePolicy(max_concurrency=1, max_retries=0, timeout_s=0.3, **FAST)
        asyncio.run(run_with_model(srv, ["a", "b"], policy, recorder))
    assert recorder.failed["a"].cause == "HTTP 404"
    assert recorder.failed["b"].cause == "timeout"


def test_fatal_from_call_propagates_and_is_never_reported() -> None:
    async def call(item: int) -> Completion:
        if item == 3:
            raise Fatal("the store is locked")
        await asyncio.sleep(0.001)
        return Completion(text="ok")

    recorder = Recorder()
    with pytest.raises(Fatal, match="locked"):
        asyncio.run(run_items(range(50), call, recorder, EnginePolicy(max_concurrency=4)))
    assert 3 not in recorder.failed and 3 not in recorder.ok


def test_not_sent_items_are_withheld_or_wait_for_room() -> None:
    """A budget: odd items never fit (withheld, unreported); even ones wait for room once."""
    room = asyncio.Event
    waited: list[int] = []

    async def main() -> tuple[EngineStats, Recorder]:
        freed = room()

        async def call(item: int) -> Completion:
            if item % 2:
                raise NotSent("too dear")
            if item not in waited:
                waited.append(item)
                raise NotSent("wait for room", wait=freed.wait)
            return Completion(text="ok")

        async def free_soon() -> None:
            await asyncio.sleep(0.05)
            freed.set()

        recorder = Recorder()
        task = asyncio.create_task(free_soon())
        stats = await run_items(range(10), call, recorder, EnginePolicy(max_concurrency=3))
        await task
        return stats, recorder

    stats, recorder = asyncio.run(main())
    assert sorted(recorder.ok) == [0, 2, 4, 6, 8] and not recorder.failed
    assert stats.withheld == 5 and stats.requests == 5 and stats.ok == 5
    assert sorted(waited) == [0, 2, 4, 6, 8]


# -- adaptive concurrency ---------------------------------------------------------------------


def test_concurrency_halves_on_429_and_grows_back() -> None:
    """A server allowing 4 concurrent requests, then (from item 400 on) 100."""
    state = {"active": 0, "cap": 4, "peak_after_change": 0}

    async def call(item: int) -> Completion:
        if item >= 400:
            state["cap"] = 100
        if state["active"] >= state["cap"]:
            raise ModelError("429", retryable=True, status=429, rate_limited=True)
        state["active"] += 1
        try:
            await asyncio.sleep(0.002)
        finally:
            state["active"] -= 1
        return Completion(text="ok")

    events: list[EngineEvent] = []
    recorder = Recorder()
    policy = EnginePolicy(max_concurrency=16, **FAST)
    stats = asyncio.run(run_items(range(1000), call, recorder, policy, on_progress=events.append))
    assert len(recorder.ok) == 1000
    assert stats.rate_limited > 0
    assert stats.lowest_concurrency <= 4
    assert stats.final_concurrency == 16
    limits = [limit for _, limit in stats.concurrency_trace]
    assert limits[0] == 16 and min(limits) <= 4 and limits[-1] == 16
    assert any(e.kind == "concurrency" for e in events)


def test_a_burst_of_429s_halves_once_not_once_per_reply() -> None:
    """16 requests in flight all rejected at once is one congestion signal, not sixteen."""
    seen = {"n": 0}

    async def call(item: int) -> Completion:
        seen["n"] += 1
        first_wave = seen["n"] <= 16
        await asyncio.sleep(0.01)
        if first_wave:
            raise ModelError("429", retryable=True, status=429, rate_limited=True)
        return Completion(text="ok")

    stats = asyncio.run(
        run_items(range(16), call, Recorder(), EnginePolicy(max_concurrency=16, **FAST))
    )
    assert stats.rate_limited == 16
    assert stats.lowest_concurrency == 8


def test_concurrency_adapts_to_a_rejecting_server_through_the_sdk() -> None:
    items = [f"p{i}" for i in range(300)]
    recorder = Recorder()
    with FakeLLMServer(concurrency_cap=4, cap_mode="reject", latency=0.01, retry_after=None) as srv:
        policy = EnginePolicy(max_concurrency=16, max_rate_limit_retries=50, **FAST)
        stats = asyncio.run(run_with_model(srv, items, policy, recorder))
        assert srv.stats.max_active <= 4
        rejected = srv.stats.rejected_cap
    assert len(recorder.ok) == 300
    assert stats.rate_limited == rejected > 0
    assert stats.lowest_concurrency <= 4
    # After adapting, most requests get through: far fewer 429s than successes.
    assert rejected < 150


# -- Retry-After and pacing -------------------------------------------------------------------


def test_retry_after_is_honoured_for_the_item_and_pauses_the_pool() -> None:
    items = ["first", "second"]
    recorder = Recorder()
    with FakeLLMServer(schedule=["429"], retry_after="0.4") as srv:
        policy = EnginePolicy(max_concurrency=1, **FAST)
        stats = asyncio.run(run_with_model(srv, items, policy, recorder))
        times = {(r.prompt, r.attempt): r.received_at for r in srv.requests}
    assert len(recorder.ok) == 2 and stats.rate_limited == 1
    assert times[("first", 1)] - times[("first", 0)] >= 0.4
    # The pool paused too: "second" did not slip in during the pause.
    assert times[("second", 0)] - times[("first", 0)] >= 0.4


def test_requests_per_minute_pacing_against_an_enforcing_server() -> None:
    limit_rpm = 1200.0  # 20/s, enforced by the server over 2-second windows
    items = [f"p{i}" for i in range(70)]
    recorder = Recorder()
    with FakeLLMServer(rpm_limit=limit_rpm, rpm_window_s=2.0, latency=0.01) as srv:
        policy = EnginePolicy(max_concurrency=16, requests_per_minute=limit_rpm, **FAST)
        stats = asyncio.run(run_with_model(srv, items, policy, recorder))
        admitted = srv.stats.admitted_at
        rejected = srv.stats.rejected_rpm
    assert len(recorder.ok) == 70
    assert rejected <= 1  # <= ~1%
    rate = (len(admitted) - 1) / (admitted[-1] - admitted[0])
    assert 0.9 * 20 <= rate <= 20.0
    assert stats.requests == len(admitted) + rejected


def test_tokens_per_minute_pacing() -> None:
    async def call(item: int) -> Completion:
        return Completion(text="x", usage=Usage(input_tokens=80, output_tokens=20))

    sent: list[float] = []

    def estimate(item: int) -> int:
        return 100

    async def main() -> EngineStats:
        async def timed(item: int) -> Completion:
            sent.append(time.monotonic())
            return await call(item)

        policy = EnginePolicy(tokens_per_minute=120_000, rate_headroom=1.0)  # 2000 tokens/s
        return await run_items(range(41), timed, Recorder(), policy, estimate_tokens=estimate)

    stats = asyncio.run(main())
    assert stats.ok == 41
    rate = 40 / (sent[-1] - sent[0])  # requests/s; 100 tokens each
    assert 18 <= rate <= 20.5


# -- stopping ---------------------------------------------------------------------------------


def test_should_stop_stops_dispatch_and_reports_in_flight() -> None:
    started: list[int] = []
    recorder = Recorder()

    async def call(item: int) -> Completion:
        started.append(item)
        await asyncio.sleep(0.02)
        return Completion(text="ok")

    policy = EnginePolicy(max_concurrency=8)
    stats = asyncio.run(
        run_items(range(1000), call, recorder, policy, should_stop=lambda: recorder.calls >= 10)
    )
    assert stats.stopped
    assert recorder.calls == len(started)  # everything sent was reported
    assert 10 <= recorder.calls <= 10 + 8
    assert stats.unfinished == 0


def test_should_stop_leaves_parked_retries_unreported() -> None:
    attempts = collections.Counter[int]()
    stop = {"now": False}

    async def call(item: int) -> Completion:
        attempts[item] += 1
        if item == 0:
            stop["now"] = True
            raise ModelError("503", retryable=True, status=503)
        return Completion(text="ok")

    recorder = Recorder()
    stats = asyncio.run(
        run_items(range(1), call, recorder, EnginePolicy(**FAST), should_stop=lambda: stop["now"])
    )
    assert recorder.calls == 0 and stats.unfinished == 1 and attempts[0] == 1


def test_cancellation_keeps_what_was_reported() -> None:
    recorder = Recorder()

    async def call(item: int) -> Completion:
        await asyncio.sleep(0.005)
        return Completion(text=str(item))

    async def main() -> None:
        task = asyncio.create_task(run_items(range(10_000), call, recorder, EnginePolicy()))
        while recorder.calls < 50:
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0)
        assert len(asyncio.all_tasks()) == 1

    asyncio.run(main())
    reported = recorder.calls
    assert 50 <= reported < 10_000
    assert all(c.text == str(i) for i, c in recorder.ok.items())


# -- cost -------------------------------------------------------------------------------------


def test_harness_cpu_per_request_is_small() -> None:
    async def call(item: int) -> Completion:
        return Completion(text="ok")

    recorder = Recorder()
    n = 20_000
    started = time.process_time()
    asyncio.run(run_items(range(n), call, recorder, EnginePolicy(max_concurrency=16)))
    per_request = (time.process_time() - started) / n
    assert recorder.calls == n
    assert per_request < 0.5e-3, f"{per_request * 1e6:.0f} us per request"


def test_policy_for_model_uses_provider_hints() -> None:
    limits = Limits(requests_per_minute=500, timeout_s=30)
    model = OpenAICompatModel(
        "x/y", "y", base_url="http://127.0.0.1:9/v1", api_key="k", limits=limits
    )
    policy = EnginePolicy.for_model(model, max_retries=2)
    assert policy.requests_per_minute == 500 and policy.max_retries == 2
    assert policy.max_concurrency == model.max_concurrency and policy.timeout_s == 35
    with pytest.raises(ValueError):
        EnginePolicy(max_concurrency=0)


# -- lanes and accounts -------------------------------------------------------------------------


def test_a_lane_with_an_open_feed_waits_for_items_and_ends_once_closed() -> None:
    from deflectbench.engine import Engine

    recorder = Recorder()

    async def call(item: int) -> Completion:
        return Completion(text=str(item))

    async def main() -> None:
        engine = Engine()
        lane = engine.lane("fed", call, recorder, EnginePolicy(max_concurrency=2), feeds=1)
        finished: list[bool] = []
        lane.on_finished.append(lambda: finished.append(True))

        async def producer() -> None:
            for i in range(5):
                await asyncio.sleep(0.02)
                lane.add(i)
            await asyncio.sleep(0.05)
            assert not finished  # nothing left to send, but the feed is open
            lane.close_feed()

        await asyncio.gather(engine.run(), producer())
        assert finished == [True]

    asyncio.run(main())
    assert sorted(recorder.ok) == [0, 1, 2, 3, 4]


def test_a_per_model_cap_within_the_account() -> None:
    from deflectbench.engine import Engine

    active = collections.Counter[str]()
    most = collections.Counter[str]()

    def caller(name: str) -> Callable[[int], Any]:
        async def call(item: int) -> Completion:
            active[name] += 1
            active["all"] += 1
            most[name] = max(most[name], active[name])
            most["all"] = max(most["all"], active["all"])
            await asyncio.sleep(0.005)
            active[name] -= 1
            active["all"] -= 1
            return Completion(text="ok")

        return call

    async def main() -> None:
        engine = Engine()
        shared = EnginePolicy(max_concurrency=6)
        capped = EnginePolicy(max_concurrency=6, model_max_concurrency=2)
        engine.lane("a", caller("a"), Recorder(), capped, account="x", items=range(40))
        engine.lane("b", caller("b"), Recorder(), shared, account="x", items=range(40))
        await engine.run()

    asyncio.run(main())
    assert most["a"] == 2 and most["all"] == 6
