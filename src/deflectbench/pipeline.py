"""The paper's stages: generate (missing cells -> prompts -> engine -> store) and judge
(unjudged generations -> blind judge requests -> engine -> parsed verdicts -> store).

The one place that knows both the benchmark and the engine. Every result is written the moment
it arrives, so each stage can be stopped at any point and resumed by running it again.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from deflectbench.benchmark import Benchmark
from deflectbench.cost import CostMeter
from deflectbench.engine import EnginePolicy, Failure, run_items
from deflectbench.judging.judges import ModelJudge, failed_judgment, lexical_judgment
from deflectbench.models.base import Completion, GenerationParams, Message, Model
from deflectbench.models.cache import CachedModel
from deflectbench.records import GenerationRecord, PendingGeneration
from deflectbench.secrets import scrub
from deflectbench.store import Store

T = TypeVar("T")

#: Called once per finished item with True (stored result) or False (stored error).
Advance = Callable[[bool], None]
StopCheck = Callable[[], bool]


@dataclass
class StageResult:
    ok: int = 0
    errors: int = 0
    skipped: int = 0
    #: Answered from the request cache (no request sent, nothing paid).
    cached: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    stopped_early: bool = False
    #: Why the engine gave up on its own (e.g. every request failing: a bad key or model name).
    aborted: str | None = None
    error_samples: list[str] = field(default_factory=list)


def cell_seed(seed: int, model: str, claim_id: str, prompt_id: str, sample: int) -> int:
    """A per-cell seed that does not depend on the order cells run in."""
    digest = hashlib.sha256(f"{seed}|{model}|{claim_id}|{prompt_id}|{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


async def answer_from_cache(
    items: Sequence[T],
    lookup: Callable[[T], Completion | None],
    on_result: Callable[[T, Completion | None, Failure | None], None],
    should_stop: StopCheck | None,
) -> list[T]:
    """Report every item the request cache answers, before the engine; return the others.

    Hits wait for no pacer and no concurrency slot. (A duplicate among the others, answered
    while the stage runs, is still found at dispatch: ``CachedModel.complete`` looks first.)
    """
    rest: list[T] = []
    for i, item in enumerate(items):
        if should_stop is not None and should_stop():
            return rest + list(items[i:])
        hit = lookup(item)
        if hit is None:
            rest.append(item)
        else:
            on_result(item, hit, None)
        if i % 64 == 63:
            await asyncio.sleep(0)  # let Ctrl-C and the progress display through
    return rest


def _account(
    result: StageResult, meter: CostMeter | None, model: str, completion: Completion
) -> None:
    result.ok += 1
    if completion.cached:
        result.cached += 1
        return
    result.input_tokens += completion.usage.input_tokens
    result.output_tokens += completion.usage.output_tokens
    if meter is not None:
        meter.add(model, completion.usage.input_tokens, completion.usage.output_tokens)


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


async def generate(
    store: Store,
    benchmark: Benchmark,
    model: Model,
    cells: Sequence[tuple[str, str, int]],
    *,
    run_id: str | None,
    seed: int = 0,
    max_tokens: int | None = None,
    temperature: float | None = None,
    policy: EnginePolicy | None = None,
    retry_errors: bool = False,
    use_cache: bool = True,
    meter: CostMeter | None = None,
    advance: Advance | None = None,
    should_stop: StopCheck | None = None,
) -> StageResult:
    """Generate every cell of ``cells`` this model has no stored result for."""
    store.plan(benchmark.key, model.name, cells)
    todo = store.missing_cells(benchmark.key, model.name, cells, retry_errors=retry_errors)
    result = StageResult(skipped=len(cells) - len(todo))
    if not todo:
        return result
    base = generation_params(
        benchmark, model, seed=seed, max_tokens=max_tokens, temperature=temperature
    )

    def params_for(cell: tuple[str, str, int]) -> GenerationParams:
        return GenerationParams(
            temperature=base.temperature,
            max_tokens=base.max_tokens,
            seed=cell_seed(seed, model.name, *cell),
        )

    def messages_for(cell: tuple[str, str, int]) -> list[Message]:
        return [Message("user", benchmark.render(cell[0], cell[1]))]

    cached = CachedModel(model, store if use_cache else None)

    async def call(cell: tuple[str, str, int]) -> Completion:
        return await cached.complete(messages_for(cell), params_for(cell), cell[2])

    def lookup(cell: tuple[str, str, int]) -> Completion | None:
        return cached.lookup(messages_for(cell), params_for(cell), cell[2])

    def on_result(
        cell: tuple[str, str, int], completion: Completion | None, failure: Failure | None
    ) -> None:
        claim_id, prompt_id, sample = cell
        params = params_for(cell).as_dict()
        params.pop("json_schema")
        common = dict(
            benchmark=benchmark.key,
            model=model.name,
            claim_id=claim_id,
            prompt_id=prompt_id,
            sample=sample,
            prompt=benchmark.render(claim_id, prompt_id),
            params=params,
            run_id=run_id,
        )
        if completion is not None:
            store.add_generation(
                GenerationRecord(
                    **common,
                    response=completion.text,
                    input_tokens=completion.usage.input_tokens,
                    output_tokens=completion.usage.output_tokens,
                    latency_s=completion.latency_s,
                    finish_reason=completion.finish_reason,
                )
            )
            _account(result, meter, model.name, completion)
        else:
            assert failure is not None
            error = scrub(failure.error)
            store.add_generation(GenerationRecord(**common, response=None, error=error))
            result.errors += 1
            if len(result.error_samples) < 3:
                result.error_samples.append(error)
        if advance is not None:
            advance(completion is not None)

    if use_cache:
        todo = await answer_from_cache(todo, lookup, on_result, should_stop)
    policy = policy or EnginePolicy.for_model(model)
    stats = await run_items(todo, call, on_result, policy, should_stop=should_stop)
    result.aborted = scrub(stats.aborted) if stats.aborted else None
    result.stopped_early = bool(should_stop and should_stop())
    return result


def pending_for_judge(
    store: Store,
    judge_name: str,
    benchmark: Benchmark,
    models: Sequence[str] | None = None,
    *,
    retry_errors: bool = False,
) -> list[PendingGeneration]:
    return store.pending_judgments(
        judge_name, benchmark=benchmark.key, models=models, retry_errors=retry_errors
    )


def judge_lexical(
    store: Store,
    benchmark: Benchmark,
    pending: Sequence[PendingGeneration],
    *,
    run_id: str | None,
    advance: Advance | None = None,
    should_stop: StopCheck | None = None,
) -> StageResult:
    """The rule-based judge: no requests, so no engine; still one write per verdict."""
    result = StageResult()
    for p in pending:
        if should_stop is not None and should_stop():
            result.stopped_early = True
            break
        store.add_judgment(
            lexical_judgment(p.gen_id, benchmark.claim(p.claim_id).text, p.response, run_id)
        )
        result.ok += 1
        if advance is not None:
            advance(True)
    return result


async def judge_with_model(
    store: Store,
    benchmark: Benchmark,
    judge: ModelJudge,
    pending: Sequence[PendingGeneration],
    *,
    run_id: str | None,
    policy: EnginePolicy | None = None,
    use_cache: bool = True,
    meter: CostMeter | None = None,
    advance: Advance | None = None,
    should_stop: StopCheck | None = None,
) -> StageResult:
    """Send each pending generation, blind, to a model judge; store verdicts as they come."""
    result = StageResult()
    if not pending:
        return result
    params = judge.params()

    cached = CachedModel(judge.model, store if use_cache else None)

    def messages_for(p: PendingGeneration) -> list[Message]:
        return judge.messages(benchmark.claim(p.claim_id).text, p.response)

    async def call(p: PendingGeneration) -> Completion:
        return await cached.complete(messages_for(p), params, None)

    def lookup(p: PendingGeneration) -> Completion | None:
        return cached.lookup(messages_for(p), params, None)

    def on_result(
        p: PendingGeneration, completion: Completion | None, failure: Failure | None
    ) -> None:
        if completion is not None:
            rec = judge.record(p.gen_id, completion, run_id)
            store.add_judgment(rec)
            _account(result, meter, judge.name, completion)
        else:
            assert failure is not None
            error = scrub(failure.error)
            store.add_judgment(failed_judgment(p.gen_id, judge.name, error, run_id))
            result.errors += 1
            if len(result.error_samples) < 3:
                result.error_samples.append(error)
        if advance is not None:
            advance(completion is not None)

    todo = list(pending)
    if use_cache:
        todo = await answer_from_cache(todo, lookup, on_result, should_stop)
    policy = policy or EnginePolicy.for_model(judge.model)
    stats = await run_items(todo, call, on_result, policy, should_stop=should_stop)
    result.aborted = scrub(stats.aborted) if stats.aborted else None
    result.stopped_early = bool(should_stop and should_stop())
    return result
