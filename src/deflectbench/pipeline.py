"""The paper's stages: generate (missing cells -> prompts -> engine -> store) and judge
(unjudged generations -> blind judge requests -> engine -> parsed verdicts -> store).

The one place that knows both the benchmark and the engine. Every result is written the moment
it arrives, so each stage can be stopped at any point and resumed by running it again. Every
request goes through the request cache (replies scrubbed of credentials) and the budget (its
maximum cost reserved before it is sent); replies that are no answer (filtered, refused,
empty) are stored and counted, never judged. A store that cannot write stops the stage: an
answered request is never stored as an error.
"""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Generic, TypeVar

from deflectbench.benchmark import Benchmark
from deflectbench.conditions import Settings
from deflectbench.cost import BudgetReached, CostMeter, max_input_tokens
from deflectbench.engine import EnginePolicy, Failure, Fatal, NotSent, run_items
from deflectbench.judging.judges import ModelJudge, failed_judgment, lexical_judgment
from deflectbench.models.base import Completion, GenerationParams, Message, Model
from deflectbench.models.cache import CachedModel
from deflectbench.records import GenerationRecord, PendingGeneration
from deflectbench.secrets import scrub
from deflectbench.store import Store, StoreError
from deflectbench.vocab import NON_ANSWERS, TRUNCATED

T = TypeVar("T")

#: Called once per finished item with True (stored result) or False (stored error).
Advance = Callable[[bool], None]
StopCheck = Callable[[], bool]


@dataclass
class StageResult:
    """What one stage (a model's generation, or one judge) did in this run.

    For generation ``ok`` counts stored answers (truncated ones included) and ``non_answers``
    the replies that are none, by type; for a judge ``ok`` counts stored replies and
    ``parse_errors`` those of them holding no verdict (as ``deflectbench status`` does).
    """

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
    #: The first few error messages (scrubbed).
    error_samples: list[str] = field(default_factory=list)
    #: Errors by cause (``HTTP 500``, ``timeout``, ``connection refused``, ...) ...
    errors_by_cause: dict[str, int] = field(default_factory=dict)
    #: ... and the first message of each cause.
    error_examples: dict[str, str] = field(default_factory=dict)
    #: Replies that are no answer, by type (``content_filter``, ``refusal``, ``empty``).
    non_answers: dict[str, int] = field(default_factory=dict)
    #: Answers cut at ``max_tokens`` (stored and judged).
    truncated: int = 0
    parse_errors: int = 0
    #: The first reply that held no verdict, with why.
    parse_error_example: str | None = None
    #: Items not sent because the budget could not cover their maximum cost (still to do).
    withheld: int = 0
    #: Items taken up but not finished because the stage stopped (still to do).
    unfinished: int = 0
    #: What this stage's priced requests cost, in USD.
    cost_usd: float = 0.0

    def failures(self) -> dict[str, int]:
        """Items without a result, by cause: the errors, and those the budget held back."""
        causes = dict(self.errors_by_cause)
        if self.withheld:
            causes["not sent: over the budget"] = self.withheld
        return causes

    def add_error(self, cause: str, message: str) -> None:
        self.errors += 1
        self.errors_by_cause[cause] = self.errors_by_cause.get(cause, 0) + 1
        self.error_examples.setdefault(cause, message)
        if len(self.error_samples) < 3:
            self.error_samples.append(message)

    def add_reply(self, completion: Completion) -> None:
        """Count a stored reply: its type, tokens and cost."""
        reason = completion.finish_reason
        if reason in NON_ANSWERS:
            self.non_answers[reason] = self.non_answers.get(reason, 0) + 1  # type: ignore[index]
        self.truncated += reason == TRUNCATED
        if completion.cached:
            self.cached += 1
            return
        self.input_tokens += completion.usage.input_tokens
        self.output_tokens += completion.usage.output_tokens
        self.cost_usd += completion.cost_usd or 0.0


def cell_seed(seed: int, model: str, claim_id: str, prompt_id: str, sample: int) -> int:
    """A per-cell seed that does not depend on the order cells run in."""
    digest = hashlib.sha256(f"{seed}|{model}|{claim_id}|{prompt_id}|{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


class StoreWriteError(StoreError, Fatal):
    """The store failed while a stage was saving or looking up a result: the stage stops."""


@contextmanager
def store_errors_stop_the_run() -> Iterator[None]:
    """Turn a store failure (busy, full, read-only) into one clear error that stops the run,
    never into an error row for a request that was answered."""
    try:
        yield
    except sqlite3.Error as exc:
        raise StoreWriteError(
            f"the store could not save a result ({exc}); everything stored so far is kept: "
            "run the same command again to continue"
        ) from None


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


class Requests(Generic[T]):
    """How a stage sends an item: the cache first, then the budget, then the model."""

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

    def lookup(self, item: T) -> Completion | None:
        with store_errors_stop_the_run():
            return self.cached.lookup(*self.request(item))

    async def call(self, item: T) -> Completion:
        """Send the item's request, its maximum cost reserved; the reply carries its cost."""
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


async def _run_stage(
    requests: Requests[T],
    todo: list[T],
    on_result: Callable[[T, Completion | None, Failure | None], None],
    result: StageResult,
    *,
    use_cache: bool,
    policy: EnginePolicy | None,
    should_stop: StopCheck | None,
) -> StageResult:
    if use_cache:
        todo = await answer_from_cache(todo, requests.lookup, on_result, should_stop)
    policy = policy or EnginePolicy.for_model(requests.model)
    stats = await run_items(todo, requests.call, on_result, policy, should_stop=should_stop)
    result.aborted = scrub(stats.aborted) if stats.aborted else None
    result.withheld = stats.withheld
    result.unfinished = stats.unfinished
    result.stopped_early = bool(should_stop and should_stop()) or stats.withheld > 0
    return result


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
    condition: str | None = None,
    policy: EnginePolicy | None = None,
    retry_errors: bool = False,
    use_cache: bool = True,
    meter: CostMeter | None = None,
    advance: Advance | None = None,
    should_stop: StopCheck | None = None,
) -> StageResult:
    """Generate every cell of ``cells`` this model has no stored result for under
    ``condition`` (None: the condition of these settings, registered if new)."""
    if condition is None:
        settings = condition_settings(
            benchmark, model, seed=seed, max_tokens=max_tokens, temperature=temperature
        )
        condition = store.register_condition(model.name, settings)
    store.plan(benchmark.key, model.name, cells, condition=condition)
    todo = store.missing_cells(
        benchmark.key, model.name, cells, retry_errors=retry_errors, condition=condition
    )
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

    def request(cell: tuple[str, str, int]) -> tuple[list[Message], GenerationParams, int]:
        return [Message("user", benchmark.render(cell[0], cell[1]))], params_for(cell), cell[2]

    def on_result(
        cell: tuple[str, str, int], completion: Completion | None, failure: Failure | None
    ) -> None:
        claim_id, prompt_id, sample = cell
        params = params_for(cell).as_dict()
        params.pop("json_schema")
        common = dict(
            benchmark=benchmark.key,
            model=model.name,
            condition=condition,
            claim_id=claim_id,
            prompt_id=prompt_id,
            sample=sample,
            prompt=benchmark.render(claim_id, prompt_id),
            params=params,
            run_id=run_id,
        )
        if completion is not None:
            rec = GenerationRecord(
                **common,
                response=completion.text,
                input_tokens=completion.usage.input_tokens,
                output_tokens=completion.usage.output_tokens,
                latency_s=completion.latency_s,
                finish_reason=completion.finish_reason,
                cost_usd=completion.cost_usd,
            )
        else:
            assert failure is not None
            rec = GenerationRecord(**common, response=None, error=scrub(failure.error))
        with store_errors_stop_the_run():
            store.add_generation(rec)
        if completion is not None:
            result.add_reply(completion)
            result.ok += completion.finish_reason not in NON_ANSWERS
        else:
            result.add_error(failure.cause if failure else "error", rec.error or "")
        if advance is not None:
            advance(completion is not None)

    requests = Requests(model, store if use_cache else None, meter, request)
    return await _run_stage(
        requests,
        todo,
        on_result,
        result,
        use_cache=use_cache,
        policy=policy,
        should_stop=should_stop,
    )


def pending_for_judge(
    store: Store,
    judge_name: str,
    benchmark: Benchmark,
    models: Sequence[str] | None = None,
    *,
    retry_errors: bool = False,
) -> list[PendingGeneration]:
    """Every condition's valid answers this judge has not judged (non-answers never are)."""
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
        rec = lexical_judgment(p.gen_id, benchmark.claim(p.claim_id).text, p.response, run_id)
        with store_errors_stop_the_run():
            store.add_judgment(rec)
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

    def request(p: PendingGeneration) -> tuple[list[Message], GenerationParams, None]:
        return judge.messages(benchmark.claim(p.claim_id).text, p.response), params, None

    def on_result(
        p: PendingGeneration, completion: Completion | None, failure: Failure | None
    ) -> None:
        if completion is not None:
            rec = judge.record(p.gen_id, completion, run_id)
        else:
            assert failure is not None
            rec = failed_judgment(p.gen_id, judge.name, scrub(failure.error), run_id)
        with store_errors_stop_the_run():
            store.add_judgment(rec)
        if completion is not None:
            result.ok += 1
            result.add_reply(completion)
            if rec.parse_error:
                result.parse_errors += 1
                if result.parse_error_example is None:
                    result.parse_error_example = (
                        f"generation {p.gen_id}: {rec.reasoning}: {(rec.raw or '')[:160]!r}"
                    )
        else:
            result.add_error(failure.cause if failure else "error", rec.error or "")
        if advance is not None:
            advance(completion is not None)

    requests = Requests(judge.model, store if use_cache else None, meter, request)
    return await _run_stage(
        requests,
        list(pending),
        on_result,
        result,
        use_cache=use_cache,
        policy=policy,
        should_stop=should_stop,
    )
