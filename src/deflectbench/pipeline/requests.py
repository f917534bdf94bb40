"""How a request is made and sent: its parameters and per-cell seed, the cache first, then the
budget, then the model; and the token estimate the tokens-per-minute pacer is charged first.

Every request goes through the request cache (replies scrubbed of credentials) and the budget
(its maximum cost reserved before it is sent, settled on the reply).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Generic, TypeVar

from deflectbench.benchmark import Benchmark
from deflectbench.conditions import Settings
from deflectbench.cost import (
    MESSAGE_OVERHEAD_TOKENS,
    BudgetReached,
    CostMeter,
    estimate_tokens,
    max_input_tokens,
)
from deflectbench.engine import Failure, NotSent
from deflectbench.models.base import Completion, GenerationParams, Message, Model
from deflectbench.models.cache import CachedModel
from deflectbench.models.endpoints import routed
from deflectbench.pipeline.affinity import affinity
from deflectbench.pipeline.results import StopCheck, store_errors_stop_the_run
from deflectbench.store import Store

T = TypeVar("T")

#: Output tokens assumed for a judge's JSON verdict with its one-sentence reasoning.
JUDGE_OUTPUT_TOKENS = 90
#: Output tokens assumed per generation when none has come back yet.
TYPICAL_OUTPUT_TOKENS = 400


def cell_seed(seed: int, model: str, claim_id: str, prompt_id: str, sample: int) -> int:
    """A per-cell seed that does not depend on the order cells run in."""
    digest = hashlib.sha256(f"{seed}|{model}|{claim_id}|{prompt_id}|{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def generation_params(
    benchmark: Benchmark,
    model: Model,
    *,
    seed: int,
    max_tokens: int | None,
    temperature: float | None,
) -> GenerationParams:
    return GenerationParams(
        temperature=benchmark.generation_temperature if temperature is None else temperature,
        max_tokens=model.default_max_tokens if max_tokens is None else max_tokens,
        seed=seed,
    )


def condition_settings(
    benchmark: Benchmark,
    model: Model,
    *,
    seed: int,
    max_tokens: int | None,
    temperature: float | None,
) -> Settings:
    """The settings that make a model's results what they are: what is sent, and to what."""
    params = generation_params(
        benchmark, model, seed=seed, max_tokens=max_tokens, temperature=temperature
    )
    return Settings(
        temperature=params.temperature,
        max_tokens=params.max_tokens,
        seed=seed,
        benchmark_sha256=benchmark.sha256,
        send_seed=model.send_seed,
        extra=dict(model.extra_body),
        pack=None if benchmark.is_paper else benchmark.pack,
    )


async def answer_from_cache(
    items: Sequence[T],
    lookup: Callable[[T], Completion | None],
    on_result: Callable[[T, Completion | None, Failure | None], None],
    stopped: StopCheck,
) -> list[T]:
    """Report every item the request cache answers, before the engine; return the others.

    Hits wait for no pacer and no concurrency slot. (A duplicate among the others, answered
    while the stage runs, is still found at dispatch: ``Requests.call`` looks first.)
    """
    rest: list[T] = []
    for i, item in enumerate(items):
        if stopped():
            return rest + list(items[i:])
        hit = lookup(item)
        if hit is None:
            rest.append(item)
        else:
            on_result(item, hit, None)
        if i % 64 == 63:
            await asyncio.sleep(0)  # let Ctrl-C and the progress display through
    return rest


class Requests(Generic[T]):
    """How a lane sends an item: the cache first, then the budget, then the model."""

    def __init__(
        self,
        model: Model,
        cache: Store | None,
        meter: CostMeter | None,
        request: Callable[[T], tuple[list[Message], GenerationParams, int | None]],
    ) -> None:
        self.model = model
        self.cached = CachedModel(model, cache)
        self.meter = meter
        self.request = request

    @property
    def uses_cache(self) -> bool:
        return self.cached.cache is not None

    def lookup(self, item: T) -> Completion | None:
        with store_errors_stop_the_run():
            return self.cached.lookup(*self.request(item))

    async def call(self, item: T) -> Completion:
        """Send the item's request, its maximum cost reserved; the reply carries its cost.
        Routed by its claim (a judge's, its generation) over a model's endpoints."""
        with routed(affinity(item)):
            return await self._call(item)

    async def _call(self, item: T) -> Completion:
        messages, params, sample = self.request(item)
        hit = self.lookup(item)
        if hit is not None:
            return hit
        meter = self.meter
        if meter is None:
            with store_errors_stop_the_run():
                return await self.cached.send(messages, params, sample)
        texts = [m.content for m in messages]
        try:
            hold = meter.reserve(self.model.name, max_input_tokens(texts), params.max_tokens)
        except BudgetReached as exc:
            raise NotSent(str(exc), wait=meter.released if exc.others_in_flight else None) from None
        try:
            completion = await self.cached.fetch(messages, params)
        except BaseException:
            meter.release(hold)  # no reply: nothing to pay
            raise
        usage = completion.usage
        completion = replace(
            completion, cost_usd=meter.settle(hold, usage.input_tokens, usage.output_tokens)
        )
        with store_errors_stop_the_run():
            self.cached.remember(messages, params, sample, completion)
        return completion

    def estimator(self, expected_output: int) -> TokenEstimate[T]:
        return TokenEstimate(self.request, expected_output)


class TokenEstimate(Generic[T]):
    """Tokens a request will use, guessed before it is sent (for the tokens-per-minute pacer):
    its text at about four characters a token, plus the mean output so far (a default until
    the first reply). The pacer is corrected by the real usage on the reply."""

    def __init__(
        self,
        request: Callable[[T], tuple[list[Message], GenerationParams, int | None]],
        expected_output: int,
    ) -> None:
        self.request = request
        self.default = expected_output
        self.outputs = 0
        self.replies = 0

    def __call__(self, item: T) -> int:
        messages, params, _ = self.request(item)
        tokens_in = sum(estimate_tokens(m.content) + MESSAGE_OVERHEAD_TOKENS for m in messages)
        out = self.outputs / self.replies if self.replies else self.default
        return tokens_in + round(min(out, params.max_tokens))

    def observe(self, completion: Completion) -> None:
        if not completion.cached:
            self.outputs += completion.usage.output_tokens
            self.replies += 1
