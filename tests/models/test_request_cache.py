"""The request cache: same keys as ever, any get/put object will do, and hits skip the engine."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from deflectbench.config import resolve_plan
from deflectbench.engine import EnginePolicy
from deflectbench.models.base import Completion, GenerationParams, Message
from deflectbench.models.cache import CachedModel, RequestCache, request_key
from deflectbench.pipeline import RunContext, generate
from deflectbench.store import Store
from support.fakes import EchoModel


class DictCache:
    """A request cache that is not the store: the protocol is structural."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}

    def cache_get(self, key: str) -> dict[str, Any] | None:
        return self.rows.get(key)

    def cache_put(
        self,
        key: str,
        model: str,
        text: str,
        input_tokens: int,
        output_tokens: int,
        finish_reason: str | None,
    ) -> None:
        self.rows.setdefault(
            key,
            {
                "text": text,
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "finish_reason": finish_reason,
            },
        )


def test_keys_are_those_existing_stores_hold() -> None:
    # Computed with the pipeline's key function before the cache moved: stores keep hitting.
    judge = request_key(
        "openai/gpt-x",
        [Message("system", "Be terse."), Message("user", "Claim: X")],
        GenerationParams(temperature=0.0, max_tokens=300, json_schema={"type": "object"}),
        None,
    )
    assert judge == "92308fe41691343ee6bf28e7083448c587362ee1107056d137ea4a9150f1ae73"
    generation = request_key(
        "test/echo",
        [Message("user", "Deflect this")],
        GenerationParams(temperature=0.7, max_tokens=64, seed=12345),
        3,
    )
    assert generation == "1078c0303f6bc24cc4b529c92d2f414b40c3060ac3f5eb7c6d9f1a2658e15962"


def test_identical_request_is_paid_once_and_samples_differ(tmp_path) -> None:
    cache: RequestCache = DictCache()
    model = EchoModel()
    cached = CachedModel(model, cache)
    messages, params = [Message("user", "Deflect this")], GenerationParams(seed=1)
    assert cached.lookup(messages, params, 1) is None
    first = asyncio.run(cached.complete(messages, params, 1))
    again = asyncio.run(cached.complete(messages, params, 1))
    assert not first.cached and again.cached and again.text == first.text
    assert again.usage == first.usage and again.finish_reason == first.finish_reason
    assert len(model.calls) == 1
    asyncio.run(cached.complete(messages, params, 2))  # another sample: another request
    assert len(model.calls) == 2
    # No cache: every request is sent and nothing is remembered.
    uncached = CachedModel(model, None)
    assert uncached.lookup(messages, params, 1) is None
    assert not asyncio.run(uncached.complete(messages, params, 1)).cached
    assert len(model.calls) == 3
    with Store.open(tmp_path / "x.db") as store:  # the store is a RequestCache as it stands
        on_disk: RequestCache = store
        stored = CachedModel(model, on_disk)
        asyncio.run(stored.complete(messages, params, 1))
        assert stored.lookup(messages, params, 1) is not None


def test_cache_hits_wait_for_no_pacer_and_no_slot(tmp_path, benchmark) -> None:
    plan = resolve_plan(benchmark, models=["test/echo"], judges=["lexical"], preset="quick")
    cells = plan.cells[:40]
    with Store.open(tmp_path / "x.db") as store:
        first = EchoModel()
        asyncio.run(generate(RunContext(store, benchmark, "r1"), first, cells))
        assert len(first.calls) == 40
        store.conn.execute("DELETE FROM generations")
        again = EchoModel()
        # One request a minute, one at a time: forty paced requests would take forty minutes.
        policy = EnginePolicy(max_concurrency=1, requests_per_minute=1)
        started = time.monotonic()
        result = asyncio.run(
            generate(RunContext(store, benchmark, "r2"), again, cells, policy=policy)
        )
        assert time.monotonic() - started < 10
        assert result.ok == result.cached == 40 and again.calls == []
        assert len(store.generation_rows()) == 40
        # A stop requested before the stage starts answers nothing, from the cache or not.
        store.conn.execute("DELETE FROM generations")
        stopped = asyncio.run(
            generate(RunContext(store, benchmark, "r3", should_stop=lambda: True), again, cells)
        )
        assert stopped.ok == 0 and stopped.stopped_early and store.generation_rows() == []


def test_what_else_shapes_a_request_is_part_of_its_key() -> None:
    """Extra request fields (or a seed not sent) make another request: another condition's
    answers are never served from the cache; keys without them are unchanged."""
    messages, params = [Message("user", "Deflect this")], GenerationParams(seed=1)
    plain = request_key("test/echo", messages, params, 1)
    assert request_key("test/echo", messages, params, 1, {}) == plain
    assert request_key("test/echo", messages, params, 1, {"extra": {"top_k": 5}}) != plain
    cache = DictCache()
    asyncio.run(CachedModel(EchoModel(), cache).complete(messages, params, 1))
    tuned = EchoModel()
    tuned.extra_body = {"top_k": 5}
    assert CachedModel(tuned, cache).lookup(messages, params, 1) is None
    assert CachedModel(EchoModel(), cache).lookup(messages, params, 1) is not None


def test_replies_are_scrubbed_before_they_are_kept(monkeypatch) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-0123456789abcdef")

    class Leaky(EchoModel):
        async def complete(self, messages, params):
            reply = await super().complete(messages, params)
            return Completion(reply.text + " tok-0123456789abcdef", reply.usage, "stop")

    cache = DictCache()
    got = asyncio.run(
        CachedModel(Leaky(), cache).complete([Message("user", "x")], GenerationParams(), 1)
    )
    assert "tok-0123456789abcdef" not in got.text and "[redacted]" in got.text
    assert all("tok-0123456789abcdef" not in row["text"] for row in cache.rows.values())
