"""One run: record it, generate with every model and judge every answer at once, score.

The CLI and the Python API both call :func:`execute`. A run is one invocation; the repeated
draws of a cell within it are its samples. Before anything is sent, a run checks its budget and
its prices and registers each model's condition (the settings its results are sampled under);
then one pipeline (:func:`~deflectbench.pipeline.run_stream`) generates for every model at once
and hands each answer to every judge as soon as it is stored, each provider's limits shared by
every model and judge it serves; after, its report says whether everything planned has a
result and a verdict (:attr:`RunReport.complete`), so a run whose every request failed ends as
a failure however few requests it made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from deflectbench.benchmark import Benchmark
from deflectbench.config import RunPlan
from deflectbench.cost import CostMeter, Price
from deflectbench.errors import ConfigError

# The dry run lives in its own module; importers of deflectbench.run keep finding it here.
from deflectbench.estimate import EstimateRow as EstimateRow
from deflectbench.estimate import estimate as estimate
from deflectbench.estimate import plan_settings
from deflectbench.estimate import planned_condition as planned_condition
from deflectbench.judging.judges import ModelJudge, check_judge_language, is_rule_based
from deflectbench.models.base import Model
from deflectbench.pipeline import (
    Board,
    GenerationTask,
    JudgeTask,
    StageResult,
    StopCheck,
    pending_for_judge,
    run_stream,
)
from deflectbench.pipeline.batches import BatchMode, BatchSummary
from deflectbench.pipeline.turns import TurnsResult, TurnTask, run_turns
from deflectbench.store import Store

#: Called once, before the first request, with the board a live display reads.
Watch = Callable[[Board], None]


@dataclass(frozen=True)
class RunOptions:
    retry_errors: bool = False
    command: str = "run"
    versions: Mapping[str, str] = field(default_factory=dict)
    use_cache: bool = True
    #: USD this store may have spent in all, this run included (finite, above 0; None: no
    #: budget). Each request's maximum cost is reserved before it is sent.
    max_cost_usd: float | None = None
    prices: Mapping[str, Price] = field(default_factory=dict)
    #: The resolved configuration file and flags, stored with the run (never holds keys).
    config: Mapping[str, Any] = field(default_factory=dict)
    #: The condition's label (``--label``); None: derived from the settings.
    label: str | None = None
    #: Let a budgeted run use models or judges without a known price (their cost is not
    #: counted); otherwise such a run is refused before any request.
    allow_unpriced: bool = False
    #: Batch mode: models and judges whose provider has a batch API go by batches
    #: (:mod:`deflectbench.pipeline.batches`); the others through the engine, in the same run.
    batch: bool = False


@dataclass
class RunReport:
    run_id: str
    generation: dict[str, StageResult] = field(default_factory=dict)
    judging: dict[str, StageResult] = field(default_factory=dict)
    stopped_early: bool = False
    #: Why the run stopped early: "interrupted" or "budget".
    stop_reason: str | None = None
    #: What this run's priced requests cost.
    spent_usd: float = 0.0
    #: What the store's priced requests have cost in all, this run's included.
    total_spent_usd: float = 0.0
    #: The condition (label) each model was run under.
    conditions: dict[str, str] = field(default_factory=dict)
    #: Cells planned per model.
    planned: dict[str, int] = field(default_factory=dict)
    #: Per model, planned cells with no result after the run (an error row is no result).
    missing: dict[str, int] = field(default_factory=dict)
    #: Per judge, answers of the run's models it has no verdict request for (failed ones count).
    unjudged: dict[str, int] = field(default_factory=dict)
    #: A multi-turn pack's second turn (empty for a one-turn pack).
    turns: TurnsResult = field(default_factory=TurnsResult)
    #: Batch mode: what it did, and per model (judge) the cells (answers) open batches hold.
    batches: BatchSummary | None = None
    in_batches: dict[str, int] = field(default_factory=dict)
    judge_in_batches: dict[str, int] = field(default_factory=dict)

    @property
    def waiting(self) -> bool:
        """Not complete only because open batches hold what is missing (batch mode): collect
        with ``deflectbench status``."""
        stages = [*self.generation.values(), *self.judging.values()]
        return (
            self.batches is not None
            and not self.stopped_early
            and any([*self.in_batches.values(), *self.judge_in_batches.values()])
            and all(n <= self.in_batches.get(m, 0) for m, n in self.missing.items())
            and all(n <= self.judge_in_batches.get(j, 0) for j, n in self.unjudged.items())
            and not any(r.parse_errors or r.aborted for r in stages)
        )

    @property
    def complete(self) -> bool:
        """Everything planned has a result, every answer a judge's reply, and every reply of
        this run parsed; nothing stopped early."""
        stages = [*self.generation.values(), *self.judging.values(), *self.turns.judging.values()]
        return (
            not self.stopped_early
            and not any(self.missing.values())
            and not any(self.turns.missing.values())
            and not any(self.unjudged.values())
            and not any(r.parse_errors or r.aborted for r in stages)
        )

    def account(self) -> str:
        """The run in one line: complete, or what is missing, failed or unparsed and why."""
        parts = []
        for model, planned in self.planned.items():
            res = self.generation.get(model, StageResult())
            missing = self.missing.get(model, 0)
            text = f"{model} [{self.conditions.get(model, '?')}]: "
            if missing:
                text += f"{missing} of {planned} cells without a result"
                text += _counts(res.failures(), " (", ")")
            else:
                text += f"{planned} cells"
            text += _counts(res.non_answers, ", no answer: ")
            parts.append(text + _turn2(self.turns, model))
        for judge, res in self.judging.items():
            text = f"judge {judge}: "
            text += f"{self.unjudged[judge]} not judged" if self.unjudged.get(judge) else "done"
            text += _counts(res.failures(), " (", ")")
            if res.parse_errors:
                text += f", {res.parse_errors} replies without a verdict"
            parts.append(text)
        if any([*self.in_batches.values(), *self.judge_in_batches.values()]):
            parts.append(
                f"open batches hold {sum(self.in_batches.values())} cells and "
                f"{sum(self.judge_in_batches.values())} answers to judge: `deflectbench status` "
                "collects them"
            )
        if self.stop_reason:
            parts.append(
                "stopped at the --max-cost budget"
                if self.stop_reason == "budget"
                else f"stopped: {self.stop_reason}"
            )
        return ("complete: " if self.complete else "incomplete: ") + "; ".join(parts)


def _turn2(turns: TurnsResult, model: str) -> str:
    """`` + turn 2: 3 of 12 cells without a result`` (nothing for a one-turn pack)."""
    if model not in turns.due:
        return ""
    due, missing = turns.due[model], turns.missing.get(model, 0)
    res = turns.generation.get(model, StageResult())
    cells = "cell" if due == 1 else "cells"
    text = (
        f" + turn 2: {missing} of {due} {cells} without a result"
        if missing
        else f" + turn 2: {due} {cells}"
    )
    return text + _counts(res.failures(), " (", ")") + _counts(res.non_answers, ", no answer: ")


def _counts(counts: Mapping[str, int], lead: str, end: str = "") -> str:
    """``HTTP 500 x2, timeout x1``, most frequent first, between ``lead`` and ``end``."""
    if not counts:
        return ""
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    return lead + ", ".join(f"{k} x{n}" for k, n in ranked) + end


def refuse_unpriced(meter: CostMeter, names: Sequence[str], allow_unpriced: bool) -> None:
    """A budget cannot bound what it cannot price: refuse before any request (ConfigError)."""
    if meter.budget_usd is None or allow_unpriced:
        return
    unpriced = meter.unpriced(list(names))
    if unpriced:
        raise ConfigError(
            f"--max-cost cannot bound {', '.join(unpriced)}: no known price; add "
            f'[prices."{unpriced[0]}"] to the run configuration, or allow unpriced models '
            "(--allow-unpriced; their cost is then not counted)"
        )


def register_conditions(
    store: Store,
    benchmark: Benchmark,
    plan: RunPlan,
    models: Mapping[str, Model],
    label: str | None,
) -> dict[str, str]:
    """Each model's condition label, registered if new; all or none (ConditionError)."""
    with store.transaction():
        return {
            name: store.register_condition(
                name, plan_settings(benchmark, plan, models[name]), label
            )
            for name in plan.models
        }


def judge_tasks(
    store: Store,
    benchmark: Benchmark,
    judges: Sequence[str],
    models: Mapping[str, Model],
    only_models: Sequence[str] | None,
    retry_errors: bool,
) -> list[JudgeTask]:
    """Each judge, with the answers the store holds that it has not judged (every condition
    of ``only_models``)."""
    check_judge_language(judges, benchmark.language, benchmark.pack)
    tasks = []
    for name in judges:
        backlog = pending_for_judge(store, name, benchmark, only_models, retry_errors=retry_errors)
        judge = None if is_rule_based(name) else ModelJudge(models[name], benchmark.rubric)
        tasks.append(JudgeTask(name, judge, backlog))
    return tasks


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
    max_cost_usd: float | None = None,
    prices: Mapping[str, Price] | None = None,
    allow_unpriced: bool = False,
    watch: Watch | None = None,
    should_stop: StopCheck | None = None,
) -> dict[str, StageResult]:
    """Every judge, all at once, over every valid answer it has not judged (of
    ``only_models``, in every condition). Without a ``meter``, one is made from
    ``max_cost_usd`` and ``prices``, counting from what the store has spent (an unpriced judge
    under a budget is refused)."""
    if meter is None:
        meter = CostMeter(max_cost_usd, prices, spent_before=store.spent_usd())
        refuse_unpriced(meter, judges, allow_unpriced)
    tasks = judge_tasks(store, benchmark, judges, models, only_models, retry_errors)
    out = await run_stream(
        store,
        benchmark,
        [],
        tasks,
        run_id=run_id,
        use_cache=use_cache,
        meter=meter,
        should_stop=should_stop,
        watch=watch,
    )
    return out.judging


async def execute(
    store: Store,
    benchmark: Benchmark,
    plan: RunPlan,
    models: Mapping[str, Model],
    options: RunOptions = RunOptions(),
    *,
    watch: Watch | None = None,
    should_stop: StopCheck | None = None,
) -> RunReport:
    """Generate the plan's missing cells and judge what is unjudged, all at once.

    Every model generates at once; each answer goes to every judge as soon as it is stored;
    the run ends when the last verdict lands. ``watch`` is given the run's :class:`Board`
    before the first request (a live display reads it).

    Refused before any request (ConfigError, ConditionError): a budget that is not a finite
    number above 0, a budget with unpriced models or judges, a label naming other settings.
    """
    try:
        meter = CostMeter(options.max_cost_usd, options.prices, spent_before=store.spent_usd())
        refuse_unpriced(meter, [*plan.models, *plan.judges], options.allow_unpriced)
        conditions = register_conditions(store, benchmark, plan, models, options.label)
        report = await _execute(
            store, benchmark, plan, models, options, meter, conditions, watch, should_stop
        )
    finally:
        for m in models.values():
            await m.aclose()
    return report


async def _execute(
    store: Store,
    benchmark: Benchmark,
    plan: RunPlan,
    models: Mapping[str, Model],
    options: RunOptions,
    meter: CostMeter,
    conditions: dict[str, str],
    watch: Watch | None,
    user_stop: StopCheck | None,
) -> RunReport:
    config: dict[str, Any] = plan.to_json()
    config["retry_errors"] = options.retry_errors
    config["cache"] = options.use_cache
    config["max_cost_usd"] = options.max_cost_usd
    config["allow_unpriced"] = options.allow_unpriced
    config["label"] = options.label
    config["conditions"] = conditions
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
    report = RunReport(run_id=run_id, conditions=conditions)
    cells = plan.cells

    def stop() -> bool:
        if user_stop is not None and user_stop():
            report.stop_reason = report.stop_reason or "interrupted"
            return True
        if meter.exceeded:
            report.stop_reason = report.stop_reason or "budget"
            return True
        return False

    generations = [
        GenerationTask(
            models[name],
            cells,
            conditions[name],
            seed=plan.seed,
            max_tokens=plan.max_tokens,
            temperature=plan.temperature,
        )
        for name in plan.models
    ]
    batches = None
    if options.batch:
        batches = BatchMode(
            store,
            benchmark,
            models,
            run_id=run_id,
            prices=options.prices,
            budget_usd=options.max_cost_usd,
            use_cache=options.use_cache,
            sections=options.config.get("providers") or {},
        )
        await batches.start_run(  # collect what came back, then submit what is missing
            plan.models,
            cells,
            conditions,
            judges=plan.judges,
            seed=plan.seed,
            max_tokens=plan.max_tokens,
            temperature=plan.temperature,
            retry_errors=options.retry_errors,
        )
        generations = [g for g in generations if g.model.name not in batches.batched(plan.models)]
        meter = CostMeter(  # what the batches reserved counts as spent
            options.max_cost_usd,
            options.prices,
            spent_before=store.spent_usd() + store.batch_reserved_usd(),
        )
    by_engine = [j for j in plan.judges if batches is None or j not in batches.batched([j])]
    judges = judge_tasks(store, benchmark, by_engine, models, plan.models, options.retry_errors)
    board = Board()  # shown live; turn 2 of a multi-turn pack adds its rows
    out = await run_stream(
        store,
        benchmark,
        generations,
        judges,
        run_id=run_id,
        retry_errors=options.retry_errors,
        use_cache=options.use_cache,
        meter=meter,
        should_stop=stop,
        board=board,
        watch=watch,
    )
    report.generation, report.judging = out.generation, out.judging
    if benchmark.followups and not stop():  # a multi-turn pack: turn 2, once turn 1 is judged
        report.turns = await run_turns(
            store,
            benchmark,
            [
                TurnTask(
                    models[n],
                    conditions[n],
                    plan.judges,
                    plan.seed,
                    plan.max_tokens,
                    plan.temperature,
                )
                for n in plan.models
            ],
            lambda: judge_tasks(  # batch judges get turn 2 in the judge batches sent below
                store, benchmark, by_engine, models, plan.models, options.retry_errors
            ),
            run_id=run_id,
            retry_errors=options.retry_errors,
            use_cache=options.use_cache,
            meter=meter,
            should_stop=stop,
            board=board,
        )
    if batches is not None:  # turn-1 answers and turn-2 replies alike go to batch judges
        for j in batches.batched(plan.judges):
            pending = pending_for_judge(
                store, j, benchmark, plan.models, retry_errors=options.retry_errors
            )
            await batches.submit_judgments(j, pending)
        report.batches = batches.summary
        report.in_batches = {
            m: len(store.batched_cells(benchmark.key, m, conditions[m])) for m in plan.models
        }
        report.judge_in_batches = {j: len(store.batched_answers(j)) for j in plan.judges}
    stages = [*report.generation.values(), *report.judging.values()]
    stages += [*report.turns.generation.values(), *report.turns.judging.values()]
    if any(r.withheld for r in stages):
        report.stop_reason = report.stop_reason or "budget"
    report.stopped_early = stop() or report.stop_reason is not None
    report.spent_usd = meter.spent_usd
    report.total_spent_usd = meter.total_usd
    for name in plan.models:
        report.planned[name] = len(cells)
        report.missing[name] = len(
            store.missing_cells(
                benchmark.key, name, cells, retry_errors=True, condition=conditions[name]
            )
        )
    for name in plan.judges:
        report.unjudged[name] = len(
            store.pending_judgments(
                name, benchmark=benchmark.key, models=plan.models, retry_errors=True
            )
        )
    return report
