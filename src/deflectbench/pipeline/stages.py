"""The paper's stages one at a time: one model's generation, one judge over given answers.

Each is the run's pipeline (:func:`~deflectbench.pipeline.stream.run_stream`) with a single
lane, so a stage keeps every guarantee a whole run has (the cache first, the budget reserved,
results written as they arrive, a stop letting requests in flight finish).
"""

from __future__ import annotations

from collections.abc import Sequence

from deflectbench.benchmark import Benchmark
from deflectbench.cost import CostMeter
from deflectbench.engine import EnginePolicy
from deflectbench.judging.judges import ModelJudge, lexical_judgment
from deflectbench.models.base import Model
from deflectbench.pipeline.requests import condition_settings
from deflectbench.pipeline.results import (
    Advance,
    StageResult,
    StopCheck,
    store_errors_stop_the_run,
)
from deflectbench.pipeline.stream import GenerationTask, JudgeTask, run_stream
from deflectbench.records import PendingGeneration
from deflectbench.store import Store


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
    task = GenerationTask(
        model, cells, condition, seed, max_tokens, temperature, policy=policy, advance=advance
    )
    out = await run_stream(
        store,
        benchmark,
        [task],
        [],
        run_id=run_id,
        retry_errors=retry_errors,
        use_cache=use_cache,
        meter=meter,
        should_stop=should_stop,
    )
    return out.generation[model.name]


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
    if not pending:
        return StageResult()
    task = JudgeTask(judge.name, judge, pending, policy=policy, advance=advance)
    out = await run_stream(
        store,
        benchmark,
        [],
        [task],
        run_id=run_id,
        use_cache=use_cache,
        meter=meter,
        should_stop=should_stop,
    )
    return out.judging[judge.name]
