"""One model served by several endpoints used together: a list of base URLs, each with its own
concurrency limit (a vLLM, SGLang or llama.cpp replica per GPU node, say).

To the engine it is one model whose account limit is the sum of its endpoints'; each request
goes to the endpoint with the most room (in flight relative to its limit), so a fast replica
with a high limit takes a larger share. An endpoint that cannot be reached (connection refused
or reset, timeout) is set aside for a while and the error is raised as usual: the engine
retries it, and the retry goes to another endpoint. Which endpoint answered is not part of a
result's identity (the same weights behind every URL is the user's promise), so cache keys and
conditions are those of a single endpoint.

Claim-sticky routing: a serving engine (vLLM, SGLang) caches prompt prefixes per replica, and
the prompts of one claim share theirs, so every request made under :func:`routed` with one key
(the pipeline uses the claim, for a generation and for a judge's verdict on it alike) goes to
the endpoint that key was first sent to, its owner, while that endpoint is healthy. A request
waits for its owner when the owner is full; it goes elsewhere only when the owner is saturated
(as many requests already wait for it as its limit) or down (then the key gets a new owner
and stays there). A request without a key goes where there is the most room. Models served by
the same endpoints (a model and a judge on one vLLM pool) share one table of owners, so a
judge's requests reach the replica that holds its claim's prefix.

The router speaks: a line to its listeners (the run's progress output) when an endpoint is set
aside and when it answers again, its URL without credentials; per endpoint it counts requests,
failures and the keys moved away from it (:meth:`MultiEndpointModel.endpoint_counts`, kept in
the run's manifest).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
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
#: Keys whose owner is remembered (least recently used forgotten first): a pack's claims and
#: the generations being judged at once fit many times over.
MAX_OWNERS = 4096
#: The owners of keys, shared by the models served by one set of endpoints (by their URLs).
_OWNERS: dict[tuple[str, ...], OrderedDict[str, int]] = {}
#: The routing key of the requests made in this context (None: no affinity).
_ROUTE: ContextVar[str | None] = ContextVar("deflectbench_route", default=None)


@contextmanager
def routed(key: str | None) -> Iterator[None]:
    """Requests made inside go, as far as health and room allow, to one endpoint per ``key``."""
    token = _ROUTE.set(key)
    try:
        yield
    finally:
        _ROUTE.reset(token)


@dataclass
class RoutingStats:
    """What the sticky routing did: requests sent to their key's owner, sent elsewhere because
    the owner was saturated, and keys moved because their owner was down."""

    to_owner: int = 0
    spilled: int = 0
    moved: int = 0


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
    #: Requests waiting for this endpoint because it owns their key.
    waiting: int = 0
    #: Keys moved away from this endpoint because it was down.
    moved: int = 0
    #: Set aside now (unreachable at its last request, no answer since).
    aside: bool = False


class MultiEndpointModel(Model):
    """``name`` served by ``endpoints`` (models of the same name, one per base URL)."""

    def __init__(self, name: str, endpoints: Sequence[tuple[Model, int]], limits: Limits) -> None:
        if not endpoints:
            raise ValueError("a multi-endpoint model needs at least one endpoint")
        self.name = name
        self.endpoints = [Endpoint(m, limit, label=_label(m)) for m, limit in endpoints]
        self.serve_as(self.endpoints[0].model)
        self.limits = limits
        self._room: tuple[asyncio.AbstractEventLoop, asyncio.Condition] | None = None
        urls = [getattr(e.model, "base_url", None) for e in self.endpoints]
        named = tuple(u for u in urls if isinstance(u, str))
        #: Key -> index of its owner in ``endpoints``, shared with models on the same URLs.
        self._owners: OrderedDict[str, int] = (
            _OWNERS.setdefault(named, OrderedDict()) if len(named) == len(urls) else OrderedDict()
        )
        self.routing = RoutingStats()
        #: Called with each line the router says (an endpoint set aside, or back).
        self.listeners: list[Callable[[str], None]] = []

    @property
    def owners(self) -> dict[str, Endpoint]:
        """Each key's owner now."""
        return {k: self.endpoints[i] for k, i in self._owners.items()}

    def endpoint_counts(self) -> list[dict[str, object]]:
        """Per endpoint: its URL (no credentials), its limit, requests answered and failed,
        keys moved away from it, and whether it is set aside now."""
        return [
            {
                "endpoint": e.label,
                "max_concurrency": e.limit,
                "requests": e.served + e.failed,
                "failures": e.failed,
                "moved": e.moved,
                "set_aside": e.aside,
            }
            for e in self.endpoints
        ]

    def _say(self, line: str) -> None:
        for listen in list(self.listeners):
            listen(line)

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
        return min(pool, key=lambda e: ((e.in_flight + e.waiting) / e.limit, -e.limit))

    def _choose(self, key: str | None, now: float) -> tuple[Endpoint | None, Endpoint | None]:
        """(the endpoint to send to now, or None; the owner to wait for, or None)."""
        if key is None:
            return self._pick(now), None
        index = self._owners.get(key)
        owner = None if index is None else self.endpoints[index]
        up_elsewhere = any(e.down_until <= now for e in self.endpoints)
        if owner is not None and owner.down_until > now and up_elsewhere:
            del self._owners[key]  # down, and another is up: the key moves
            self.routing.moved += 1
            owner.moved += 1
            owner = None
        if owner is not None:
            self._owners.move_to_end(key)
            if owner.in_flight < owner.limit:
                self.routing.to_owner += 1
                return owner, None
            if owner.waiting < owner.limit:
                return None, owner
            spill = self._pick(now)  # saturated: anywhere with room, the key staying put
            if spill is not None:
                self.routing.spilled += 1
            return spill, None
        chosen = self._pick(now)
        if chosen is not None:
            self._owners[key] = self.endpoints.index(chosen)
            while len(self._owners) > MAX_OWNERS:
                self._owners.popitem(last=False)
        return chosen, None

    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        room = self._condition()
        key = _ROUTE.get()
        async with room:
            while True:
                endpoint, owner = self._choose(key, time.monotonic())
                if endpoint is not None:
                    break
                if owner is not None:
                    owner.waiting += 1
                try:
                    await room.wait()
                finally:
                    if owner is not None:
                        owner.waiting -= 1
            endpoint.in_flight += 1
        try:
            completion = await endpoint.model.complete(messages, params)
        except ModelError as exc:
            endpoint.failed += 1
            if exc.status is None and any(c in exc.cause.lower() for c in _UNREACHABLE):
                endpoint.down_until = time.monotonic() + DOWN_FOR_S
                if not endpoint.aside:
                    endpoint.aside = True
                    self._say(
                        f"{self.name}: endpoint {endpoint.label} set aside ({exc.cause}); "
                        f"its claims go to the others, tried again in {DOWN_FOR_S:g} s"
                    )
            raise
        else:
            endpoint.served += 1
            endpoint.down_until = 0.0
            if endpoint.aside:
                endpoint.aside = False
                self._say(f"{self.name}: endpoint {endpoint.label} is back (answered again)")
            return completion
        finally:
            async with room:
                endpoint.in_flight -= 1
                room.notify_all()

    async def aclose(self) -> None:
        for e in self.endpoints:
            await e.model.aclose()


def _label(model: Model) -> str:
    """How an endpoint is named where it is shown: its URL without credentials, else its name."""
    from deflectbench.models._http import public_url

    url = getattr(model, "base_url", None)
    return public_url(url) if isinstance(url, str) else model.name
