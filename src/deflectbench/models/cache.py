"""The request cache: an identical request is paid for once.

A request is identical when the model, the messages, the sampling parameters and the sample
number are (a repeated draw of a cell is a different request even with the same seed).
Where answers are kept is not the models' business: anything with ``cache_get`` and
``cache_put`` is a :class:`RequestCache` (the store is one). Looking up is synchronous and
cheap, so the pipeline answers hits before the engine sees them: a hit never waits for a
rate pacer or a concurrency slot.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, Protocol

from deflectbench.models.base import Completion, GenerationParams, Message, Model, Usage


class RequestCache(Protocol):
    """Where paid-for answers are kept, by :func:`request_key`."""

    def cache_get(self, key: str) -> dict[str, Any] | None:
        """The stored answer: ``text``, ``input_tokens``, ``output_tokens``, ``finish_reason``."""
        ...

    def cache_put(
        self,
        key: str,
        model: str,
        text: str,
        input_tokens: int,
        output_tokens: int,
        finish_reason: str | None,
    ) -> None: ...


def request_key(
    model: str, messages: Sequence[Message], params: GenerationParams, sample: int | None
) -> str:
    """Identity of a request for the cache: same model, messages, parameters and sample.

    Stores keep their answers under these keys: changing the recipe orphans every cache.
    """
    payload = {
        "model": model,
        "messages": [[m.role, m.content] for m in messages],
        "params": params.as_dict(),
        "sample": sample,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


class CachedModel:
    """A model whose identical requests are answered from ``cache`` (``None``: no cache)."""

    def __init__(self, model: Model, cache: RequestCache | None) -> None:
        self.model = model
        self.cache = cache

    def lookup(
        self, messages: Sequence[Message], params: GenerationParams, sample: int | None
    ) -> Completion | None:
        """The cached answer to this request, or None; sends nothing."""
        if self.cache is None:
            return None
        return self._hit(request_key(self.model.name, messages, params, sample))

    async def complete(
        self, messages: Sequence[Message], params: GenerationParams, sample: int | None
    ) -> Completion:
        """Answer from the cache, else send the request and remember the answer."""
        if self.cache is None:
            return await self.model.complete(messages, params)
        key = request_key(self.model.name, messages, params, sample)
        hit = self._hit(key)
        if hit is not None:
            return hit
        completion = await self.model.complete(messages, params)
        usage = completion.usage
        self.cache.cache_put(
            key,
            self.model.name,
            completion.text,
            usage.input_tokens,
            usage.output_tokens,
            completion.finish_reason,
        )
        return completion

    def _hit(self, key: str) -> Completion | None:
        assert self.cache is not None
        hit = self.cache.cache_get(key)
        if hit is None:
            return None
        return Completion(
            hit["text"],
            Usage(hit["input_tokens"], hit["output_tokens"]),
            hit["finish_reason"],
            cached=True,
        )
