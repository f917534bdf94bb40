"""The paper's stages: generate (missing cells -> prompts -> engine -> store) and judge
(unjudged generations -> blind judge requests -> engine -> parsed verdicts -> store).

The one place that knows both the benchmark and the engine. Every result is written the moment
it arrives, so each stage can be stopped at any point and resumed by running it again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from deflectbench.benchmark import Benchmark
from deflectbench.cost import CostMeter
from deflectbench.engine import EnginePolicy, Failure, run_items
from deflectbench.judging.judges import ModelJudge, failed_judgment, lexical_judgment
from deflectbench.models.base import Completion, GenerationParams, Message, Model, Usage
from deflectbench.secrets import scrub
from deflectbench.store import GenerationRecord, PendingGeneration, Store

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


def request_key(
    model: str, messages: Sequence[Message], params: GenerationParams, sample: int | None
) -> str:
    """Identity of a request for the cache: same model, messages, parameters and sample."""
    payload = {
        "model": model,
        "messages": [[m.role, m.content] for m in messages],
        "params": params.as_dict(),
        "sample": sample,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


async def cached_complete(
    store: Store | None,
    model: Model,
    messages: Sequence[Message],
    params: GenerationParams,
    sample: int | None,
) -> Completion:
    """Answer from the store's request cache when the identical request was paid for before."""
    if store is None:
        return await model.complete(messages, params)
    key = request_key(model.name, messages, params, sample)
    hit = store.cache_get(key)
    if hit is not None:
        return Completion(
            hit["text"],
            Usage(hit["input_tokens"], hit["output_tokens"]),
            hit["finish_reason"],
            cached=True,
        )
    completion = await model.complete(messages, params)
    store.cache_put(
        key,
        model.name,
        completion.text,
        completion.usage.input_tokens,
        completion.usage.output_tokens,
        completion.finish_reason,
    )
    return completion


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

    async def call(cell: tuple[str, str, int]) -> Completion:
        messages = [Message("user", benchmark.render(cell[0], cell[1]))]
        return await cached_complete(
            store if use_cache else None, model, messages, params_for(cell), cell[2]
        )

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

    async def call(p: PendingGeneration) -> Completion:
        messages = judge.messages(benchmark.claim(p.claim_id).text, p.response)
        return await cached_complete(
            store if use_cache else None, judge.model, messages, params, None
        )

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

    policy = policy or EnginePolicy.for_model(judge.model)
    stats = await run_items(list(pending), call, on_result, policy, should_stop=should_stop)
    result.aborted = scrub(stats.aborted) if stats.aborted else None
    result.stopped_early = bool(should_stop and should_stop())
    return result
