"""One model served by several endpoints used together: a list of base URLs, each with its own
concurrency limit (a vLLM, SGLang or llama.cpp replica per GPU node, say).

To the engine it is one model whose account limit is the sum of its endpoints'; each request
goes to the endpoint with the most room (in flight relative to its limit), so a fast replica
with a high limit takes a larger share. An endpoint that cannot be reached (connection refused
or reset, timeout) is set aside for a while and the error is raised as usual: the engine
retries it, and the retry goes to another endpoint. Which endpoint answered is not part of a
result's identity (the same weights behind every URL is the user's promise), so cache keys and
conditions are those of a single endpoint.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from deflectbench.models.base import (
    Completion,
    GenerationParams,
    Limits,
    Message,
    Model,
    ModelError,
)

#: Seconds an endpoint that could not be reached is passed over (unless all are).
DOWN_FOR_S = 30.0
#: Causes that say the endpoint itself is unreachable, not that the request was bad.
_UNREACHABLE = ("connection", "timeout")


@dataclass
class Endpoint:
    """A member model (one base URL) and its share of the work."""

    model: Model
    limit: int
    in_flight: int = 0
    served: int = 0
    failed: int = 0
    down_until: float = 0.0
    label: str = field(default="")


class MultiEndpointModel(Model):
    """``name`` served by ``endpoints`` (models of the same name, one per base URL)."""

    def __init__(self, name: str, endpoints: Sequence[tuple[Model, int]], limits: Limits) -> None:
        if not endpoints:
            raise ValueError("a multi-endpoint model needs at least one endpoint")
        self.name = name
        self.endpoints = [
            Endpoint(m, limit, label=getattr(m, "base_url", m.name)) for m, limit in endpoints
        ]
        first = self.endpoints[0].model
        self.default_max_tokens = first.default_max_tokens
        self.send_seed = first.send_seed
        self.extra_body = first.extra_body
        self.limits = limits
        self._room: tuple[asyncio.AbstractEventLoop, asyncio.Condition] | None = None

    def __repr__(self) -> str:
        urls = ", ".join(e.label for e in self.endpoints)
        return f"MultiEndpointModel(name={self.name!r}, endpoints=[{urls}])"

    def request_identity(self) -> dict[str, object]:
        return self.endpoints[0].model.request_identity()

    def _condition(self) -> asyncio.Condition:
        loop = asyncio.get_running_loop()
        if self._room is None or self._room[0] is not loop:
            self._room = (loop, asyncio.Condition())
        return self._room[1]

    def _pick(self, now: float) -> Endpoint | None:
        """The endpoint with the most room, preferring those not set aside; None if all full."""
        free = [e for e in self.endpoints if e.in_flight < e.limit]
        if not free:
            return None
        up = [e for e in free if e.down_until <= now]
        pool = up or (free if all(e.down_until > now for e in self.endpoints) else [])
        if not pool:  # the endpoints that are up are full: wait for one of them
            return None
        return min(pool, key=lambda e: (e.in_flight / e.limit, -e.limit))

    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        room = self._condition()
        async with room:
            await room.wait_for(lambda: self._pick(time.monotonic()) is not None)
            endpoint = self._pick(time.monotonic())
            assert endpoint is not None
            endpoint.in_flight += 1
        try:
            completion = await endpoint.model.complete(messages, params)
        except ModelError as exc:
            endpoint.failed += 1
            if exc.status is None and any(c in exc.cause.lower() for c in _UNREACHABLE):
                endpoint.down_until = time.monotonic() + DOWN_FOR_S
            raise
        else:
            endpoint.served += 1
            endpoint.down_until = 0.0
            return completion
        finally:
            async with room:
                endpoint.in_flight -= 1
                room.notify_all()

    async def aclose(self) -> None:
        for e in self.endpoints:
            await e.model.aclose()
