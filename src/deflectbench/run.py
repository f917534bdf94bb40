"""One run: record it, generate for each model, judge with each judge, score.

Composes the pipeline's stages; the CLI and the Python API both call :func:`execute`. A run
is one invocation; the repeated draws of a cell within it are its samples.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from deflectbench.benchmark import Benchmark
from deflectbench.config import RunPlan
from deflectbench.cost import CostMeter, Price, estimate_tokens, price_for
from deflectbench.judging.judges import ModelJudge, is_rule_based
from deflectbench.models.base import Model
from deflectbench.pipeline import (
    Advance,
    StageResult,
    StopCheck,
    generate,
    judge_lexical,
    judge_with_model,
    pending_for_judge,
)
from deflectbench.store import Store

StageFactory = Callable[[str, int], Advance]


def _no_stage(description: str, total: int) -> Advance:
    return lambda ok: None


@dataclass(frozen=True)
class RunOptions:
    retry_errors: bool = False
    command: str = "run"
    versions: Mapping[str, str] = field(default_factory=dict)
    use_cache: bool = True
    max_cost_usd: float | None = None
    prices: Mapping[str, Price] = field(default_factory=dict)
    #: The resolved configuration file and flags, stored with the run (never holds keys).
    config: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class RunReport:
    run_id: str
    generation: dict[str, StageResult] = field(default_factory=dict)
    judging: dict[str, StageResult] = field(default_factory=dict)
    stopped_early: bool = False
    #: Why the run stopped early: "interrupted" or "budget".
    stop_reason: str | None = None
    spent_usd: float = 0.0


async def judge_all(
    store: Store,
    benchmark: Benchmark,
    judges: Sequence[str],
    models: Mapping[str, Model],
    run_id: str | None,
    *,
    only_models: Sequence[str] | None = None,
    retry_errors: bool = False,
    use_cache: bool = True,
    meter: CostMeter | None = None,
    stage: StageFactory = _no_stage,
    should_stop: StopCheck | None = None,
) -> dict[str, StageResult]:
    """Every judge over every valid generation it has not judged (of ``only_models``)."""
    results: dict[str, StageResult] = {}
    for name in judges:
        if should_stop is not None and should_stop():
            break
        pending = pending_for_judge(store, name, benchmark, only_models, retry_errors=retry_errors)
        advance = stage(f"judge {name}", len(pending))
        if is_rule_based(name):
            results[name] = judge_lexical(
                store, benchmark, pending, run_id=run_id, advance=advance, should_stop=should_stop
            )
        else:
            judge = ModelJudge(models[name], benchmark.rubric)
            results[name] = await judge_with_model(
                store,
                benchmark,
                judge,
                pending,
                run_id=run_id,
                use_cache=use_cache,
                meter=meter,
                advance=advance,
                should_stop=should_stop,
            )
    return results


async def execute(
    store: Store,
    benchmark: Benchmark,
    plan: RunPlan,
    models: Mapping[str, Model],
    options: RunOptions = RunOptions(),
    *,
    stage: StageFactory = _no_stage,
    should_stop: StopCheck | None = None,
) -> RunReport:
    """Generate the plan's missing cells, judge what is unjudged, and score the plan's models."""
    config: dict[str, Any] = plan.to_json()
    config["retry_errors"] = options.retry_errors
    config["cache"] = options.use_cache
    config["max_cost_usd"] = options.max_cost_usd
    config["file"] = dict(options.config)
    config["model_defaults"] = {
        name: {"max_tokens": models[name].default_max_tokens} for name in plan.models
    }
    run_id = store.create_run(
        command=options.command,
        benchmark=benchmark.key,
        benchmark_version=benchmark.version,
        benchmark_sha256=benchmark.sha256,
        config=config,
        versions=dict(options.versions),
    )
    report = RunReport(run_id=run_id)
    cells = plan.cells
    meter = CostMeter(options.max_cost_usd, options.prices)
    user_stop = should_stop

    def stop() -> bool:
        if user_stop is not None and user_stop():
            report.stop_reason = report.stop_reason or "interrupted"
            return True
        if meter.exceeded:
            report.stop_reason = report.stop_reason or "budget"
            return True
        return False

    should_stop = stop
    try:
        for name in plan.models:
            if should_stop is not None and should_stop():
                break
            todo = len(
                store.missing_cells(benchmark.key, name, cells, retry_errors=options.retry_errors)
            )
            advance = stage(f"generate {name}", todo)
            report.generation[name] = await generate(
                store,
                benchmark,
                models[name],
                cells,
                run_id=run_id,
                seed=plan.seed,
                max_tokens=plan.max_tokens,
                temperature=plan.temperature,
                retry_errors=options.retry_errors,
                use_cache=options.use_cache,
                meter=meter,
                advance=advance,
                should_stop=should_stop,
            )
        report.judging = await judge_all(
            store,
            benchmark,
            plan.judges,
            models,
            run_id,
            only_models=plan.models,
            retry_errors=options.retry_errors,
            use_cache=options.use_cache,
            meter=meter,
            stage=stage,
            should_stop=should_stop,
        )
    finally:
        for m in models.values():
            await m.aclose()
    report.stopped_early = should_stop()
    report.spent_usd = meter.spent_usd
    return report


# -- the dry run ----------------------------------------------------------------------------

#: Output tokens assumed for a judge's JSON verdict with its one-sentence reasoning.
JUDGE_OUTPUT_TOKENS = 90
#: Output tokens assumed per generation when the store has none of the model's yet.
TYPICAL_OUTPUT_TOKENS = 400


@dataclass(frozen=True)
class EstimateRow:
    """What one model or judge will be asked, before anything is sent."""

    role: str  # "model" or "judge"
    name: str
    done: int
    requests: int
    input_tokens: int
    output_tokens: int
    output_tokens_max: int
    cost_usd: float | None
    cost_usd_max: float | None


def estimate(
    store: Store,
    benchmark: Benchmark,
    plan: RunPlan,
    models: Mapping[str, Model],
    *,
    retry_errors: bool = False,
    prices: Mapping[str, Price] | None = None,
) -> list[EstimateRow]:
    """Requests, tokens and cost per model and judge for what is still missing.

    Input tokens are estimated from the prompt text (about 4 characters a token); output tokens
    from this model's stored mean if it has generations already, else a typical length capped
    by ``max_tokens``; the upper bound assumes every reply runs to ``max_tokens``.
    """
    rows: list[EstimateRow] = []
    cells = plan.cells
    new_responses: list[tuple[str, int]] = []  # (claim_id, expected output tokens) to judge
    for name in plan.models:
        model = models[name]
        todo = store.missing_cells(benchmark.key, name, cells, retry_errors=retry_errors)
        max_tokens = plan.max_tokens or model.default_max_tokens
        mean_out = store.mean_output_tokens(name)
        expected_out = round(mean_out) if mean_out else min(TYPICAL_OUTPUT_TOKENS, max_tokens)
        tokens_in = sum(estimate_tokens(benchmark.render(c, p)) + 8 for c, p, _ in todo)
        price = price_for(name, prices)
        rows.append(
            EstimateRow(
                "model",
                name,
                len(cells) - len(todo),
                len(todo),
                tokens_in,
                expected_out * len(todo),
                max_tokens * len(todo),
                None if price is None else price.cost(tokens_in, expected_out * len(todo)),
                None if price is None else price.cost(tokens_in, max_tokens * len(todo)),
            )
        )
        new_responses.extend((c, expected_out) for c, _, _ in todo)
    rubric_tokens = estimate_tokens(benchmark.rubric.system + benchmark.rubric.user_template)
    for name in plan.judges:
        pending = store.pending_judgments(
            name, benchmark=benchmark.key, models=plan.models, retry_errors=retry_errors
        )
        judged = store.judged_count(name, benchmark.key, plan.models)
        tokens_in = sum(
            rubric_tokens + estimate_tokens(benchmark.claim(p.claim_id).text + p.response)
            for p in pending
        )
        tokens_in += sum(
            rubric_tokens + estimate_tokens(benchmark.claim(c).text) + out
            for c, out in new_responses
        )
        n = len(pending) + len(new_responses)
        price = price_for(name, prices)
        cost = None if price is None else price.cost(tokens_in, JUDGE_OUTPUT_TOKENS * n)
        rows.append(
            EstimateRow(
                "judge",
                name,
                judged,
                n,
                tokens_in,
                JUDGE_OUTPUT_TOKENS * n,
                JUDGE_OUTPUT_TOKENS * n,
                cost,
                cost,
            )
        )
    return rows
