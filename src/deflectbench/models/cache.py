"""The request cache: an identical request is paid for once.

A request is identical when the model, the messages, the sampling parameters, what else
shapes it (extra request fields, a seed not sent) and the sample number are (a repeated draw of a cell is a different request
even with the same seed). Replies are scrubbed of credentials before they are kept or used:
a server that echoes the key it was sent leaks it nowhere.
Where answers are kept is not the models' business: anything with ``cache_get`` and
``cache_put`` is a :class:`RequestCache` (the store is one). Looking up is synchronous and
cheap, so the pipeline answers hits before the engine sees them: a hit never waits for a
rate pacer or a concurrency slot.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from deflectbench.models.base import (
    Completion,
    GenerationParams,
    Message,
    Model,
    Usage,
    finish_reason,
)
from deflectbench.secrets import scrub


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
    model: str,
    messages: Sequence[Message],
    params: GenerationParams,
    sample: int | None,
    identity: Mapping[str, Any] | None = None,
) -> str:
    """Identity of a request for the cache: same model, messages, parameters, sample and what
    else shapes the request (``Model.request_identity``: extra fields, a seed not sent).

    Stores keep their answers under these keys: changing the recipe orphans every cache (so
    ``identity`` joins it only when set: keys without it are those stores always held).
    """
    payload: dict[str, Any] = {
        "model": model,
        "messages": [[m.role, m.content] for m in messages],
        "params": params.as_dict(),
        "sample": sample,
    }
    if identity:
        payload["identity"] = json.loads(json.dumps(dict(identity), sort_keys=True, default=str))
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
        return self._hit(self._key(messages, params, sample))

    def _key(
        self, messages: Sequence[Message], params: GenerationParams, sample: int | None
    ) -> str:
        return request_key(self.model.name, messages, params, sample, self.model.request_identity())

    def key(self, messages: Sequence[Message], params: GenerationParams, sample: int | None) -> str:
        """The request's cache key (batch mode keeps it with the item: computed once)."""
        return self._key(messages, params, sample)

    def answer(self, key: str) -> Completion | None:
        """The cached answer under ``key``, or None (no cache: always None)."""
        return None if self.cache is None else self._hit(key)

    def keep(self, key: str, completion: Completion) -> None:
        """Keep an answer under a key already computed (nothing without a cache)."""
        if self.cache is not None:
            usage = completion.usage
            self.cache.cache_put(
                key,
                self.model.name,
                completion.text,
                usage.input_tokens,
                usage.output_tokens,
                completion.finish_reason,
            )

    async def complete(
        self, messages: Sequence[Message], params: GenerationParams, sample: int | None
    ) -> Completion:
        """Answer from the cache, else send the request and remember the (scrubbed) answer."""
        hit = self.lookup(messages, params, sample)
        return hit if hit is not None else await self.send(messages, params, sample)

    async def send(
        self, messages: Sequence[Message], params: GenerationParams, sample: int | None
    ) -> Completion:
        """Send the request without looking first; remember the (scrubbed) answer."""
        completion = await self.fetch(messages, params)
        self.remember(messages, params, sample, completion)
        return completion

    async def fetch(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        """Send the request; the answer scrubbed of credentials, not yet remembered."""
        return _scrubbed(await self.model.complete(messages, params))

    def remember(
        self,
        messages: Sequence[Message],
        params: GenerationParams,
        sample: int | None,
        completion: Completion,
    ) -> None:
        """:meth:`keep` a fetched answer under the identical request's key."""
        if self.cache is not None:
            self.keep(self._key(messages, params, sample), completion)

    def _hit(self, key: str) -> Completion | None:
        assert self.cache is not None
        hit = self.cache.cache_get(key)
        if hit is None:
            return None
        text = scrub(hit["text"])  # kept before replies were scrubbed, or before a key was set
        return Completion(
            text,
            Usage(hit["input_tokens"], hit["output_tokens"]),
            finish_reason(hit["finish_reason"], text),  # kept before reasons were normalised
            cached=True,
        )


def _scrubbed(completion: Completion) -> Completion:
    text = scrub(completion.text)
    return completion if text == completion.text else dataclasses.replace(completion, text=text)
