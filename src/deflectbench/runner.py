"""One ``run``: record the run, generate for each model, judge with each judge, score.

Composes the pipeline's stages; the CLI and the Python API both call :func:`execute`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from deflectbench.analysis.scored import scored_table
from deflectbench.benchmark import Benchmark
from deflectbench.config import RunPlan
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


@dataclass
class RunReport:
    run_id: str
    generation: dict[str, StageResult] = field(default_factory=dict)
    judging: dict[str, StageResult] = field(default_factory=dict)
    scored: pd.DataFrame | None = None
    stopped_early: bool = False


async def judge_all(
    store: Store,
    benchmark: Benchmark,
    judges: Sequence[str],
    models: Mapping[str, Model],
    run_id: str | None,
    *,
    only_models: Sequence[str] | None = None,
    retry_errors: bool = False,
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
    say: Callable[[str], Any] = lambda msg: None,
) -> RunReport:
    """Generate the plan's missing cells, judge what is unjudged, and score the plan's models."""
    config: dict[str, Any] = plan.to_json()
    config["retry_errors"] = options.retry_errors
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
            stage=stage,
            should_stop=should_stop,
        )
    finally:
        for m in models.values():
            await m.aclose()
    report.stopped_early = bool(should_stop and should_stop())
    scored = scored_table(store, benchmark, judges=list(plan.judges))
    report.scored = scored[scored["model"].isin(plan.models)] if len(scored) else scored
    return report
