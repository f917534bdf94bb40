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

import asyncio
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from deflectbench import gate
from deflectbench.benchmark import Benchmark
from deflectbench.config import ResolvedRun, RunPlan
from deflectbench.config.shard import check_resumable, parse_shard
from deflectbench.cost import CostMeter, Price, refuse_unpriced

# The dry run lives in its own module; importers of deflectbench.execute keep finding it here.
from deflectbench.dry_run import EstimateRow as EstimateRow
from deflectbench.dry_run import estimate as estimate
from deflectbench.dry_run import plan_settings
from deflectbench.dry_run import planned_condition as planned_condition
from deflectbench.judging.hygiene import check_self_judging
from deflectbench.judging.judges import ModelJudge
from deflectbench.models.base import Model
from deflectbench.models.sdk_loader import idle as sdk_idle
from deflectbench.models.sdk_loader import went_out
from deflectbench.pipeline import (
    Board,
    GenerationTask,
    RunContext,
    StageResult,
    StopCheck,
    StreamResult,
    manifest,
    pending_for_judge,
    run_stream,
)
from deflectbench.pipeline.batches import BatchMode, BatchSummary
from deflectbench.pipeline.stages import build_judges, judge_pending, judge_tasks
from deflectbench.pipeline.turns import TurnsResult, TurnTask, run_turns
from deflectbench.records import Cell
from deflectbench.store import Store

#: Called once, before the first request, with the board a live display reads.
Watch = Callable[[Board], None]


@dataclass(frozen=True)
class RunOptions:
    """How a run is carried out, derived from its resolved configuration (:meth:`of`)."""

    retry_errors: bool = False
    command: str = "run"
    versions: Mapping[str, str] = field(default_factory=dict)
    cache: bool = True
    #: USD this store may have spent in all, this run included (finite, above 0; None: no
    #: budget). Each request's maximum cost is reserved before it is sent.
    max_cost: float | None = None
    prices: Mapping[str, Price] = field(default_factory=dict)
    #: The resolved configuration as a run file, stored with the run (never holds keys).
    config: Mapping[str, Any] = field(default_factory=dict)
    #: The condition's label (``--label``); None: derived from the settings.
    label: str | None = None
    #: Let a budgeted run use models or judges without a known price (their cost is not
    #: counted); otherwise such a run is refused before any request.
    allow_unpriced: bool = False
    #: Batch mode: models and judges whose provider has a batch API go by batches
    #: (:mod:`deflectbench.pipeline.batches`); the others through the engine, in the same run.
    batch: bool = False
    #: Let a judge be one of the subject models (refused otherwise: it would grade itself).
    allow_self_judging: bool = False
    #: What a part (``--shard``) did to the providers' limits, said as the run starts.
    limits_said: tuple[str, ...] = ()

    @classmethod
    def of(
        cls, run: ResolvedRun, *, command: str = "run", versions: Mapping[str, str] = {}
    ) -> RunOptions:
        """The options of a resolved run (its settings, prices and stored configuration)."""
        c = run.config
        return cls(
            retry_errors=bool(c.retry_errors),
            command=command,
            versions=dict(versions),
            cache=c.cache is not False,
            max_cost=c.max_cost,
            prices=run.prices,
            config=run.file,
            label=c.label,
            allow_unpriced=bool(c.allow_unpriced),
            batch=bool(c.batch),
            allow_self_judging=bool(c.allow_self_judging),
        )


def versions() -> dict[str, str]:
    """The versions stored with a run, so its results can be traced to the code behind them."""
    from deflectbench import __version__

    out = {"deflectbench": __version__, "python": sys.version.split()[0]}
    for dist in ("llama-cpp-python", "openai", "anthropic", "numpy", "pandas", "scipy"):
        with suppress(metadata.PackageNotFoundError):
            out[dist] = metadata.version(dist)
    return out


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
    #: Per model, the other model ids its stored replies say served them, with how many.
    served_by: dict[str, dict[str, int]] = field(default_factory=dict)

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
            for served, n in self.served_by.get(model, {}).items():
                text += f", warning: {n} replies say they were served by {served!r}"
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


def store_meter(store: Store, options: RunOptions, names: Sequence[str]) -> CostMeter:
    """The budget of ``options`` (its ``max_cost``, ``prices``, ``allow_unpriced``), counting
    what the store has spent, and in batch mode what open batches hold reserved, as spent
    before; a budget that is no finite number above 0, or one that cannot price ``names``, is
    refused (ConfigError)."""
    spent = store.spent_usd() + (store.batch_reserved_usd() if options.batch else 0.0)
    meter = CostMeter(options.max_cost, options.prices, spent_before=spent)
    refuse_unpriced(meter, names, options.allow_unpriced)
    return meter


async def judge_all(
    ctx: RunContext,
    judges: Sequence[str],
    models: Mapping[str, Model],
    *,
    only_models: Sequence[str] | None = None,
    watch: Watch | None = None,
) -> dict[str, StageResult]:
    """Every judge, all at once, over every valid answer it has not judged (of
    ``only_models``, in every condition), under the context's budget (:func:`store_meter`
    makes one) and stop check."""
    return await judge_pending(ctx, build_judges(ctx.benchmark, judges, models), only_models, watch)


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

    Refused before any request (ConfigError, ConditionError): a judge that is a subject model
    (unless ``options.allow_self_judging``), a budget that is not a finite number above 0, a
    budget with unpriced models or judges, a label naming other settings.

    The phases: the batch phase (batch mode) around the engine's; the first turn (every model
    generating, every judge judging as answers come); the second turn of a multi-turn pack;
    then the accounting of what is still missing.
    """
    clock = manifest.Clock()
    probing: asyncio.Task[dict[str, Any]] | None = None
    started: list[RunReport] = []  # the run's report, once it has one (for its manifest)
    try:
        check_self_judging(plan.models, plan.judges, options.allow_self_judging)
        refuse_unpriced(
            CostMeter(options.max_cost, options.prices),
            [*plan.models, *plan.judges],
            options.allow_unpriced,
        )
        check_resumable(store.runs(), parse_shard(plan.extra.get("shard")))
        run_id, conditions = open_run(store, benchmark, plan, models, options)
        report = RunReport(run_id=run_id, conditions=conditions)
        started.append(report)
        probing = asyncio.ensure_future(_probe_after_first(models, [*plan.models, *plan.judges]))
        async with _batch_phase(store, benchmark, plan, models, options, report) as batched:
            ctx = _context(store, benchmark, options, report, should_stop)
            ctx.board.listen(models.values())  # a replica set aside or back: said as it goes
            for line in options.limits_said:  # a part's share of the limits: said first
                ctx.board.say(line)
            judges = build_judges(benchmark, [j for j in plan.judges if j not in batched], models)
            by_engine = [models[n] for n in plan.models if n not in batched]
            first = await _first_turn(ctx, plan, by_engine, conditions, judges, watch)
            report.generation, report.judging = first.generation, first.judging
            if benchmark.followups and not ctx.stopped():  # turn 2, once turn 1 is judged
                report.turns = await _second_turn(ctx, plan, models, conditions, judges)
        _account(ctx, plan, report)
    finally:
        servers = await _servers(probing, models, [*plan.models, *plan.judges])
        for done in started:  # what was really run, a stopped run's too
            manifest.record(store, done, plan, models, servers, clock, batch=options.batch)
        for m in models.values():
            await m.aclose()
    return report


#: How often the probe of the self-hosted servers looks whether the first request has left.
_PROBE_POLL_S = 0.05


async def _probe_after_first(models: Mapping[str, Model], names: list[str]) -> dict[str, Any]:
    """The self-hosted servers asked what they serve (:func:`manifest.probe_servers`) once the
    run's first request has left and every SDK is loaded: beside the requests, not before the
    first nor beside an SDK's import (issue 37)."""
    while not (went_out() and sdk_idle()):
        await asyncio.sleep(_PROBE_POLL_S)
    return await manifest.probe_servers(models, names)


async def _servers(
    probing: asyncio.Task[dict[str, Any]] | None, models: Mapping[str, Model], names: list[str]
) -> dict[str, Any]:
    """The servers' answers for the manifest: the probe's, awaited (it ran beside the
    requests; bounded by its timeout), or asked now when no request left (none started)."""
    if probing is None:
        return {}
    if not probing.done() and not went_out():
        probing.cancel()
        with suppress(asyncio.CancelledError):
            await probing
        return await manifest.probe_servers(models, names)
    return await probing


def open_run(
    store: Store,
    benchmark: Benchmark,
    plan: RunPlan,
    models: Mapping[str, Model],
    options: RunOptions,
) -> tuple[str, dict[str, str]]:
    """The run's id and each model's condition label. The labels are registered first if new,
    all or none (ConditionError); then the run's row: its plan, options, conditions and the
    models' defaults (never keys)."""
    with store.transaction():
        conditions = {
            name: store.register_condition(
                name, plan_settings(benchmark, plan, models[name]), options.label
            )
            for name in plan.models
        }
    config: dict[str, Any] = plan.to_json()
    config["retry_errors"] = options.retry_errors
    config["cache"] = options.cache
    config["max_cost_usd"] = options.max_cost
    config["allow_unpriced"] = options.allow_unpriced
    config["label"] = options.label
    config["conditions"] = dict(conditions)
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
    return run_id, conditions


def _context(
    store: Store,
    benchmark: Benchmark,
    options: RunOptions,
    report: RunReport,
    user_stop: StopCheck | None,
) -> RunContext:
    """The run's context. Its meter is built once, after the batch phase has submitted (what
    open batches hold reserved counts as spent); its stop check says why on the report."""
    meter = store_meter(store, options, [])
    asked = user_stop or _never

    def stop() -> bool:
        if asked():
            report.stop_reason = report.stop_reason or "interrupted"
            return True
        if meter.exceeded:
            report.stop_reason = report.stop_reason or "budget"
            return True
        return False

    return RunContext(
        store,
        benchmark,
        report.run_id,
        meter,
        use_cache=options.cache,
        retry_errors=options.retry_errors,
        should_stop=stop,
    )


def _never() -> bool:
    return False


async def _first_turn(
    ctx: RunContext,
    plan: RunPlan,
    models: Sequence[Model],
    conditions: Mapping[str, str],
    judges: Mapping[str, ModelJudge | None],
    watch: Watch | None,
) -> StreamResult:
    """Every model's missing cells at once; each answer to every judge as it is stored, with
    what the store holds unjudged (of the plan's models, every condition)."""
    cells = [Cell(*c) for c in plan.cells]
    generations = [
        GenerationTask(
            m,
            cells,
            conditions[m.name],
            seed=plan.seed,
            max_tokens=plan.max_tokens,
            temperature=plan.temperature,
        )
        for m in models
    ]
    return await run_stream(ctx, generations, judge_tasks(ctx, judges, plan.models), watch=watch)


async def _second_turn(
    ctx: RunContext,
    plan: RunPlan,
    models: Mapping[str, Model],
    conditions: Mapping[str, str],
    judges: Mapping[str, ModelJudge | None],
) -> TurnsResult:
    """A multi-turn pack's turn 2 for every model, then its replies to the engine's judges
    (the batch judges get them in the judge batches the batch phase sends)."""
    tasks = [
        TurnTask(
            models[n], conditions[n], plan.judges, plan.seed, plan.max_tokens, plan.temperature
        )
        for n in plan.models
    ]
    return await run_turns(ctx, tasks, judges, plan.models)


@asynccontextmanager
async def _batch_phase(
    store: Store,
    benchmark: Benchmark,
    plan: RunPlan,
    models: Mapping[str, Model],
    options: RunOptions,
    report: RunReport,
) -> AsyncIterator[set[str]]:
    """Batch mode, around the engine's phases: before them, collect what open batches
    returned and submit each batch model's missing cells; after, send every answer still
    unjudged (turn 2's replies too) to the batch judges. Yields the models and judges that
    go by batch (none without batch mode)."""
    if not options.batch:
        yield set()
        return
    ctx = RunContext(  # the batches' own: they reserve against the budget before submitting
        store,
        benchmark,
        report.run_id,
        CostMeter(options.max_cost, options.prices),
        use_cache=options.cache,
        retry_errors=options.retry_errors,
    )
    batches = BatchMode(ctx, models, sections=options.config.get("providers") or {})
    await batches.start_run(  # collect what came back, then submit what is missing
        plan.models,
        plan.cells,
        report.conditions,
        judges=plan.judges,
        seed=plan.seed,
        max_tokens=plan.max_tokens,
        temperature=plan.temperature,
    )
    yield {*batches.batched(plan.models), *batches.batched(plan.judges)}
    for j in batches.batched(plan.judges):
        pending = pending_for_judge(
            store, j, benchmark, plan.models, retry_errors=options.retry_errors
        )
        await batches.submit_judgments(j, pending)
    report.batches = batches.summary
    report.in_batches = {
        m: len(store.batched_cells(benchmark.key, m, report.conditions[m])) for m in plan.models
    }
    report.judge_in_batches = {j: len(store.batched_answers(j)) for j in plan.judges}


def _account(ctx: RunContext, plan: RunPlan, report: RunReport) -> None:
    """What the run spent, why it stopped, and what is still missing or unjudged (the store
    asked again: what every phase, the batch one's included, left)."""
    store, key = ctx.store, ctx.benchmark.key
    stages = [*report.generation.values(), *report.judging.values()]
    stages += [*report.turns.generation.values(), *report.turns.judging.values()]
    held_back = report.batches is not None and any(report.batches.withheld.values())
    if held_back or any(r.withheld for r in stages):  # batch mode's hold-back too: exit 3
        report.stop_reason = report.stop_reason or "budget"
    report.stopped_early = ctx.stopped() or report.stop_reason is not None
    if ctx.meter is not None:
        report.spent_usd = ctx.meter.spent_usd
        report.total_spent_usd = ctx.meter.total_usd
    cells = plan.cells
    for name in plan.models:
        report.planned[name] = len(cells)
        condition = report.conditions[name]
        missing = store.missing_cells(key, name, cells, retry_errors=True, condition=condition)
        report.missing[name] = len(missing)
        served = store.served_models(key, name, condition)
        if other := {s: n for s, n in served.items() if gate.served_model(name, s)}:
            report.served_by[name] = other
    for name in plan.judges:
        pending = store.pending_judgments(
            name, benchmark=key, models=plan.models, retry_errors=True
        )
        report.unjudged[name] = len(pending)
