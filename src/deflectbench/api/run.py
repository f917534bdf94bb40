"""Make results from Python: ``run`` (generate, judge, score: the whole pipeline, resumable),
``estimate`` (the dry run), ``judge`` (judge what is stored) and ``status`` (what a results
file holds), each returning a typed result that holds what the command prints.

    import deflectbench as dfb

    result = dfb.run(models=["openai-compatible/my-model"], claims="L1_US_01", db="x.db")
    result.complete, result.exit_code, result.framing    # the outcome; a DataFrame
    dfb.status("x.db").to_json()                          # `deflectbench status --json`

A run's settings are one :class:`~deflectbench.config.RunConfig`: give one (or a run file's
path) first, and any of its settings as keywords (they win, as flags do over the file). The
command line parses its flags into the same RunConfig and calls these functions; a live view
and Ctrl-C come in as ``watch`` (given the run's board before the first request) and
``should_stop`` (asked between requests: True stops dispatching, what is in flight is stored).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import TYPE_CHECKING, Any

from deflectbench.api._common import (
    DEFAULT_DB,
    DbPath,
    blocking,
    open_store,
    pick_benchmark,
    split,
    stored_benchmark,
)
from deflectbench.api.batches import Pause

if TYPE_CHECKING:
    from deflectbench.api.cascade import CascadeAsk
    from deflectbench.benchmark import Benchmark
    from deflectbench.config import ResolvedRun, RunConfig, RunPlan
    from deflectbench.config.shard import Shard
    from deflectbench.dry_run import Estimate
    from deflectbench.execute import RunOptions
    from deflectbench.models.base import Model
    from deflectbench.pipeline import Board, RunContext, StageResult
    from deflectbench.pipeline.batches import BatchSummary
    from deflectbench.records import PendingGeneration
    from deflectbench.results.judge import JudgeResult
    from deflectbench.results.run import RunResult
    from deflectbench.results.status import StatusResult
    from deflectbench.store import Store

__all__ = ["estimate", "judge", "run", "run_async", "status"]

Watch = Callable[["Board"], None]
StopCheck = Callable[[], bool]


async def run_async(
    config: RunConfig | str | os.PathLike[str] | None = None,
    /,
    *,
    db: DbPath = DEFAULT_DB,
    watch: Watch | None = None,
    should_stop: StopCheck | None = None,
    report_out: DbPath | None = None,
    **settings: Any,
) -> RunResult:
    """Generate the missing cells, judge what is unjudged and score the run's models: the
    ``deflectbench run`` command. ``settings`` are :class:`RunConfig` fields (``models``,
    ``judges``, ``claims``, ``samples``, ``max_cost``, ...); ``report_out``: a folder to write
    the HTML report to after the run. Refused before any request (ConfigError and the like):
    what ``run`` refuses. ``run_async`` awaits it in a running event loop (a notebook's, a
    server's); ``run`` is the same function run to its end in a new loop."""
    from deflectbench.api.until import Rounds, check_until, execute_run
    from deflectbench.models.sdk_loader import preload_for
    from deflectbench.results.run import RunResult

    ready, cascade = _cascaded(_prepare(configure(config, settings), dry_run=False))
    ready.refusal().check()  # before the store is opened: a refused run leaves no empty store
    rule = check_until(ready.run.config)  # --until: refused before the store is opened
    preload_for(ready.models.values())  # the SDKs load beside the set-up, one after the other
    with open_store(db) as store:
        report, plan, until = await execute_run(
            store, rule, Rounds(_set_up(ready), lambda: _set_up(_again(ready)), watch, should_stop)
        )
        result = RunResult(
            config=ready.run.config,
            plan=plan,
            report=report,
            scored=_scored(store, ready.benchmark, ready.run.plan.models, ready.run.plan.judges),
            db=Path(db),
            until=until,
        )
        if ready.run.config.control:
            # here, not above: scipy and pandas (about 2 s of CPU) must not delay the first request
            from deflectbench.analysis.summary.validity_checks import store_control

            control = store_control(store, ready.benchmark, ready.run.plan.judges)
            result = replace(result, control=control)
    if cascade is not None and not result.report.stopped_early:  # the judges on the sample
        judged = await asyncio.to_thread(_judge_sample, ready, cascade, db, watch, should_stop)
        result = replace(result, cascade=judged)
    if report_out is not None:
        result = replace(result, report_path=report_after_run(result, report_out))
    return result


#: :func:`run_async` run to its end in a new event loop (its parameters, its result).
run = blocking(run_async, "run")


def estimate(
    config: RunConfig | str | os.PathLike[str] | None = None,
    /,
    *,
    db: DbPath = DEFAULT_DB,
    **settings: Any,
) -> Estimate:
    """The dry run (``run --dry-run``): per model and judge the requests, tokens and cost of
    what is still missing; nothing is sent or written. What the run would be refused for
    (an unpriced model under a budget) is raised by :meth:`Estimate.check`; a label naming
    other settings is refused here, as the run refuses it; API keys not set and an expected
    cost over the budget are in :attr:`Estimate.warnings`."""
    from deflectbench.dry_run import estimate as rows_of
    from deflectbench.store import Store

    ready = _prepare(configure(config, settings), dry_run=True)
    if ready.run.config.cheap_judge is not None:
        from deflectbench.errors import ConfigError

        raise ConfigError(
            "run --dry-run with --cheap-judge: the estimate does not price a cascade yet; "
            "`deflectbench plan` prices one (docs/cascade.md)"
        )
    path = Path(db)
    with ExitStack() as stack:
        if path.exists():
            store = Store.open(path, readonly=True)
        else:  # nothing stored yet: estimate against an empty store that is thrown away
            store = Store.open(Path(stack.enter_context(TemporaryDirectory())) / "dry-run.db")
        stack.callback(store.close)
        rows = rows_of(store, ready.benchmark, ready.run.plan, ready.models, ready.options)
        spent = store.spent_usd() + (store.batch_reserved_usd() if ready.options.batch else 0.0)
    return replace(
        ready.refusal(),
        rows=tuple(rows),
        units=len(ready.run.plan.cells),
        max_cost=ready.options.max_cost,
        missing_keys=ready.missing_keys,
        spent_usd=spent,
        limits=ready.options.limits_said,
    )


def report_after_run(result: RunResult, out_dir: DbPath) -> Path | None:
    """The HTML report of the run's store in ``out_dir`` (the analysis defaults); None when
    the run stopped early or scored nothing."""
    from deflectbench.views.report import write_report_after_run

    if result.report.stopped_early or not len(result.scored):
        return None
    with open_store(result.db, must_exist=True) as store:
        benchmark = pick_benchmark(result.config.benchmark)
        return Path(write_report_after_run(store, benchmark, Path(out_dir)))


def write_batch_file(
    out: DbPath,
    config: RunConfig | str | os.PathLike[str] | None = None,
    /,
    *,
    db: DbPath = DEFAULT_DB,
    **settings: Any,
) -> Any:
    """``run --batch-file OUT``: the pending cells of one model as OpenAI batch JSONL at
    ``out``, for the user's own batch engine; sends nothing (``import_batch`` takes the results
    back). Returns what was written (:class:`~deflectbench.results.batches.Written`)."""
    from deflectbench.api._common import store_or_nothing
    from deflectbench.api.batch_file import write_batch_file as write

    ready = _prepare(configure(config, settings), dry_run=False)
    ready.refusal().check()
    with store_or_nothing(db) as store:
        return write(store, ready.benchmark, ready.run.plan, ready.models, ready.options, Path(out))


def import_batch(
    results: DbPath,
    *,
    db: DbPath = DEFAULT_DB,
    config: DbPath | None = None,
    accept_models: tuple[str, ...] = (),
) -> Any:
    """``import-batch RESULTS``: an engine's output for a ``run --batch-file`` file, each cell
    once (:class:`~deflectbench.results.batches.Imported`); ``accept_models``: model ids a
    reply may name besides the one its cell was written for."""
    from deflectbench.api.batch_file import import_batch_file
    from deflectbench.config import load_run_file

    providers = load_run_file(Path(config)).providers if config is not None else {}
    with open_store(db, must_exist=True) as store:
        return import_batch_file(store, Path(results), providers, accept_models=accept_models)


def configure(
    config: RunConfig | str | os.PathLike[str] | None, settings: dict[str, Any]
) -> RunConfig:
    """A RunConfig (or a run file's) with ``settings`` (RunConfig fields) winning."""
    from deflectbench.config import RunConfig, load_config

    if isinstance(config, str | os.PathLike):
        base = load_config(Path(config))
    else:
        base = config if config is not None else RunConfig()
    return base.merged(RunConfig.of(**settings)) if settings else base


@dataclass(frozen=True)
class _Ready:
    """A run resolved and its models built, before anything is sent."""

    benchmark: Benchmark
    run: ResolvedRun
    models: dict[str, Model]
    options: RunOptions
    #: A dry run's: the run's refusal for API keys that are not set (None: all set).
    missing_keys: str | None = None
    #: A run in cascade: the judges that see only the sample (the plan's judge is the cheap one).
    expensive: tuple[str, ...] | list[str] = ()

    def refusal(self) -> Estimate:
        """An empty estimate holding what the run would be refused for (a budget that cannot
        price a model or judge)."""
        from deflectbench.cost import CostMeter, refuse_unpriced
        from deflectbench.dry_run import Estimate
        from deflectbench.errors import ConfigError

        o, plan = self.options, self.run.plan
        try:
            refuse_unpriced(
                CostMeter(o.max_cost, o.prices), [*plan.models, *plan.judges], o.allow_unpriced
            )
        except ConfigError as exc:
            return Estimate((), 0, refusal=exc)
        return Estimate((), 0)


def _prepare(config: RunConfig, *, dry_run: bool) -> _Ready:
    """The run's pack, its defaults applied, its models built (a dry run needs no keys), the
    control added; a judge that is a subject refused."""
    from deflectbench.benchmark.control_replies import CONTROL_MODEL
    from deflectbench.config import build_models, resolve_run
    from deflectbench.config.shard import parse_shard
    from deflectbench.config.shard_limits import check_mode, share_limits
    from deflectbench.execute import RunOptions, versions
    from deflectbench.judging.hygiene import check_self_judging
    from deflectbench.pipeline.control import CONTROL_PRICE, with_control

    benchmark = pick_benchmark(config.benchmark)
    resolved = resolve_run(benchmark, config)
    plan, c = resolved.plan, resolved.config
    check_self_judging(plan.models, plan.judges, bool(c.allow_self_judging))
    models = build_models(plan.models, plan.judges, c.providers, dry_run=dry_run)
    said = share_limits(models, parse_shard(c.shard), check_mode(c.shard_limits))
    missing = _missing_keys(plan.models, plan.judges, c.providers) if dry_run else None
    if c.control:
        plan, models = with_control(plan, models)
        prices = {CONTROL_MODEL: CONTROL_PRICE, **resolved.prices}
        resolved = replace(resolved, plan=plan, prices=prices)
    options = replace(RunOptions.of(resolved, versions=versions()), limits_said=said)
    return _Ready(benchmark, resolved, models, options, missing)


def _cascaded(ready: _Ready) -> tuple[_Ready, CascadeAsk | None]:
    """A run in cascade (``cheap_judge``): the run judges with the cheap judge alone, built
    beside the others; the judges then see the sample (:func:`_judge`, after the run)."""
    from deflectbench.config import build_models
    from deflectbench.errors import ConfigError

    c, plan = ready.run.config, ready.run.plan
    ask = _cascade_of(c, list(plan.judges), int(c.seed or 0), None, None, None, None)
    if ask is None:
        return ready, None
    if c.batch:
        raise ConfigError("run --cheap-judge with --batch: not supported yet (docs/cascade.md)")
    built = build_models([], [ask.cheap], c.providers)
    run = replace(ready.run, plan=replace(plan, judges=(ask.cheap,)))
    expensive = [j for j in plan.judges if j != ask.cheap]
    return replace(ready, run=run, models={**ready.models, **built}, expensive=expensive), ask


def _judge_sample(
    ready: _Ready,
    ask: CascadeAsk,
    db: DbPath,
    watch: Watch | None,
    should_stop: StopCheck | None,
) -> JudgeResult:
    """A cascaded run's judges over the sample, after the run: :func:`judge` with the run's
    settings (its own store connection and models, in a thread of its own)."""
    c = ready.run.config
    return judge(
        db,
        judges=list(ready.expensive),
        config=c,
        shard=c.shard,
        retry_errors=bool(c.retry_errors),
        allow_self_judging=bool(c.allow_self_judging),
        seed=ask.seed,
        watch=watch,
        should_stop=should_stop,
    )


def _set_up(ready: _Ready) -> tuple[Benchmark, RunPlan, dict[str, Model], RunOptions]:
    """A run's set-up as ``run --until``'s rounds take it."""
    return ready.benchmark, ready.run.plan, ready.models, ready.options


def _again(ready: _Ready) -> _Ready:
    """The run set up afresh from its resolved configuration: a later round of ``run
    --until`` (each round closes its models)."""
    return _cascaded(_prepare(ready.run.config, dry_run=False))[0]  # a cascade: the cheap judge


def _missing_keys(models: Sequence[str], judges: Sequence[str], providers: Any) -> str | None:
    """What the run says of API keys that are not set (its own check, the models built as the
    run builds them), or None."""
    from deflectbench.config import build_models
    from deflectbench.models.providers import MissingKeyError

    try:
        build_models(models, judges, providers)
    except MissingKeyError as exc:
        return str(exc)
    return None


def _scored(store: Store, b: Benchmark, models: Sequence[str], judges: Sequence[str]) -> Any:
    """The run's models, scored by the run's judges (what the table after a run shows)."""
    from deflectbench.analysis.frames.scored import scored_table

    scored = scored_table(store, b, judges=list(judges))
    return scored[scored["model"].isin(models)] if len(scored) else scored


# -- judge ----------------------------------------------------------------------------------


def judge(
    db: DbPath = DEFAULT_DB,
    *,
    judges: Sequence[str] | str | None = None,
    config: RunConfig | str | os.PathLike[str] | None = None,
    max_cost: float | None = None,
    allow_unpriced: bool = False,
    shard: str | None = None,
    retry_errors: bool = False,
    batch: bool = False,
    allow_self_judging: bool = False,
    self_consistency: float | None = None,
    seed: int = 0,
    benchmark: str | None = None,
    dry_run: bool = False,
    watch: Watch | None = None,
    should_stop: StopCheck | None = None,
    cheap_judge: str | None = None,
    expensive_share: float | None = None,
    expensive_target: str | None = None,
    stratify: str | None = None,
) -> JudgeResult:
    """Judge every stored generation a judge has not judged yet (``deflectbench judge``);
    ``judges`` default to the run file's, else lexical. ``self_consistency``: then re-judge
    that share of the answers every judge has judged (chosen by ``seed``). ``dry_run``: only
    the estimate (:attr:`JudgeResult.estimate`). ``config``'s [providers] and [prices] apply,
    and its judges, max_cost, allow_unpriced and cascade settings unless given here.

    Cascaded judging (docs/cascade.md): ``cheap_judge`` scores every answer, then ``judges``
    only a sample chosen by ``seed``: ``expensive_share`` of the answers (``stratify``: per
    ``"model"`` or ``"model,framing"``), or the shares ``expensive_target`` needs (e.g.
    ``"refusal +-3pp per model"``); the design is stored, so a resumed or extended judging
    draws the same sample."""
    from deflectbench.config import RunConfig, build_models, check_budget, file_prices
    from deflectbench.config.shard import parse_shard
    from deflectbench.config.shard_limits import check_mode, share_limits
    from deflectbench.errors import ConfigError
    from deflectbench.pipeline.self_consistency import check_share

    part = parse_shard(shard)
    if part is not None and batch:
        raise ConfigError("judge --shard with --batch: judge a part without --batch")
    file = configure(config, {}) if config is not None else RunConfig()
    pack = benchmark or file.benchmark
    names = split(judges) or list(file.judges or []) or ["lexical"]
    budget = check_budget(max_cost if max_cost is not None else file.max_cost)
    if self_consistency is not None:
        check_share(self_consistency)
    prices = file_prices(file.prices)
    if pack is not None:
        pick_benchmark(pack)  # an unknown pack is named (did you mean) before the store
    cascade = _cascade_of(
        file, names, seed, cheap_judge, expensive_share, expensive_target, stratify
    )
    if cascade is not None and (batch or dry_run):
        raise ConfigError(
            "--cheap-judge with --batch or --dry-run: not supported yet; judge in cascade "
            "without them (docs/cascade.md)"
        )
    if cascade is not None:
        names = [cascade.cheap, *(j for j in names if j != cascade.cheap)]
    built = build_models([], names, file.providers, dry_run=dry_run)
    said = share_limits(built, part, check_mode(file.shard_limits))  # a part's share, said
    job = _Judging(
        names,
        built,
        prices,
        budget,
        allow_unpriced or bool(file.allow_unpriced),
        retry_errors,
        file.providers,
        said,
    )
    if dry_run:
        return _judge_estimate(db, pack, job, self_consistency, seed)
    with open_store(db, must_exist=True) as store:
        b = stored_benchmark(store, pack)
        return _judge(
            store,
            b,
            job,
            _JudgeAsk(
                part,
                batch,
                allow_self_judging,
                self_consistency,
                seed,
                watch,
                should_stop,
                cascade,
            ),
        )


def _cascade_of(
    file: RunConfig,
    names: Sequence[str],
    seed: int,
    cheap: str | None,
    share: float | None,
    target: str | None,
    stratify: str | None,
) -> CascadeAsk | None:
    """The cascade asked for (arguments over the run file's keys), checked."""
    from deflectbench.api.cascade import cascade_ask

    return cascade_ask(
        cheap if cheap is not None else file.cheap_judge,
        share if share is not None else file.expensive_share,
        target if target is not None else file.expensive_target,
        stratify if stratify is not None else file.stratify,
        seed,
        names,
    )


@dataclass(frozen=True)
class _Judging:
    """What judging uses: the judges, built, their prices and the budget."""

    names: list[str]
    built: dict[str, Model]
    prices: dict[str, Any]
    budget: float | None
    allow_unpriced: bool
    retry_errors: bool
    providers: dict[str, Any]
    #: What a part (``--shard``) does to the judges' providers' limits, said first.
    limits_said: tuple[str, ...] = ()


@dataclass(frozen=True)
class _JudgeAsk:
    """How judging goes: a part, by batch, self-judging allowed, the self-consistency pass,
    and the hooks."""

    part: Shard | None
    batch: bool
    allow_self_judging: bool
    self_consistency: float | None
    seed: int
    watch: Watch | None
    should_stop: StopCheck | None
    #: Cascaded judging: the cheap judge on every answer, the others on the sample.
    cascade: CascadeAsk | None = None


def _judge(store: Store, b: Benchmark, job: _Judging, ask: _JudgeAsk) -> JudgeResult:
    from deflectbench.cost import CostMeter
    from deflectbench.execute import RunOptions, judge_all, store_meter, versions
    from deflectbench.judging.hygiene import check_self_judging
    from deflectbench.judging.judges import check_judge_language, is_rule_based
    from deflectbench.pipeline import RunContext, manifest
    from deflectbench.results.judge import JudgeResult

    names = job.names
    check_judge_language(names, b.language, b.pack)
    subjects = store.status(benchmark=b.key)["models"]
    check_self_judging(subjects, names, ask.allow_self_judging)
    by_engine, summary = names, None
    if ask.batch:
        from deflectbench.api.batches import judge_by_batch

        meter = CostMeter(job.budget, job.prices)
        by_engine, summary = judge_by_batch(
            store, b, names, job.built, meter, job.retry_errors, job.providers
        )
    budgeted = RunOptions(max_cost=job.budget, prices=job.prices, allow_unpriced=job.allow_unpriced)
    meter = store_meter(store, budgeted, by_engine)
    judging = manifest.start_judging(store, b, by_engine, job.built, versions())
    stop = ask.should_stop or (lambda: False)
    ctx = RunContext(
        store, b, judging.run_id, meter=meter, retry_errors=job.retry_errors, should_stop=stop
    )
    ctx.board.listen(job.built.values())  # a replica set aside or back: said as it goes
    for line in job.limits_said:
        ctx.board.say(line)
    sample: frozenset[int] | None = None
    if ask.cascade is not None:
        results, sample = _judge_cascade(ctx, by_engine, job.built, ask)
    elif ask.part is None:
        results = asyncio.run(judge_all(ctx, by_engine, job.built, watch=ask.watch))
    else:
        results = _judge_part(ctx, by_engine, job.built, ask.part, ask.watch)
    manifest.end_judging(store, judging, job.built, results, stop())  # what judged
    interrupted = stop()
    only = _sample_of(ask.cascade, sample)
    rejudged = {}
    if ask.self_consistency is not None and not interrupted:
        rejudged = _rejudge(store, b, by_engine, job.built, ask, meter)
    return JudgeResult(
        judges=list(names),
        results=results,
        left={j: _left_in_part(ctx, j, ask.part, only(j)) for j in names},
        in_batches={j: len(store.batched_answers(j)) for j in names},
        interrupted=interrupted,
        rejudged=rejudged,
        seed=ask.seed,
        free=frozenset(j for j in by_engine if is_rule_based(j)),
        batches=summary,
        cascade=None if sample is None else len(sample),
    )


def _judge_cascade(
    ctx: RunContext, judges: Sequence[str], models: Any, ask: _JudgeAsk
) -> tuple[dict[str, StageResult], frozenset[int] | None]:
    """Cascaded judging: the cheap judge over every unjudged answer (of the part); then, unless
    stopped, the design settled and stored, the other judges over the sample's unjudged
    answers. Returns each judge's stage and the sample (None: stopped before it was drawn)."""
    from deflectbench.api.cascade import sampled_ids, settle_design

    assert ask.cascade is not None
    cheap = ask.cascade.cheap
    results = _judge_only(ctx, [cheap], models, ask.part, None, ask.watch)
    if ctx.stopped():
        return results, None
    expensive = [j for j in judges if j != cheap]
    design = settle_design(ctx.store, ctx.benchmark, ask.cascade, expensive)
    sample = sampled_ids(ctx.store, ctx.benchmark, design)
    results.update(_judge_only(ctx, expensive, models, ask.part, sample, ask.watch))
    return results, sample


def _sample_of(
    cascade: CascadeAsk | None, sample: frozenset[int] | None
) -> Callable[[str], frozenset[int] | None]:
    """Per judge, the answers it is to judge (None: all): the sample for an expensive judge."""
    cheap = None if cascade is None else cascade.cheap
    return lambda j: None if cascade is None or j == cheap else (sample or frozenset())


def _rejudge(
    store: Store, b: Benchmark, names: Sequence[str], built: Any, ask: _JudgeAsk, meter: Any
) -> dict[str, Any]:
    """``judge --self-consistency``: the seeded sample re-judged by every judge within the
    budget."""
    from deflectbench.pipeline.self_consistency import rejudge
    from deflectbench.pipeline.stages import build_judges

    judges = build_judges(b, names, built)
    share = float(ask.self_consistency or 0.0)
    return asyncio.run(rejudge(store, b, judges, share, ask.seed, meter=meter))


def _judge_part(
    ctx: RunContext, judges: Sequence[str], models: Any, shard: Shard, watch: Watch | None
) -> dict[str, StageResult]:
    """``judge --shard I/N``: every judge, all at once, over the unjudged answers of the
    part's claims (the claims ``run --shard`` gives that part)."""
    return _judge_only(ctx, judges, models, shard, None, watch)


def _judge_only(
    ctx: RunContext,
    judges: Sequence[str],
    models: Any,
    shard: Shard | None,
    sample: frozenset[int] | None,
    watch: Watch | None,
) -> dict[str, StageResult]:
    """Every judge, all at once, over the unjudged answers of the part's claims (``shard``;
    None: all) that ``sample`` holds (None: all)."""
    from deflectbench.pipeline import run_stream
    from deflectbench.pipeline.stages import build_judges, judge_tasks

    def keep(p: PendingGeneration) -> bool:
        return (shard is None or shard.holds(p.claim_id)) and (sample is None or p.gen_id in sample)

    tasks = [
        replace(t, backlog=[p for p in t.backlog if keep(p)])
        for t in judge_tasks(ctx, build_judges(ctx.benchmark, judges, models), None)
    ]
    return asyncio.run(run_stream(ctx, [], tasks, watch=watch)).judging


def _left_in_part(
    ctx: RunContext, judge: str, shard: Shard | None, sample: frozenset[int] | None = None
) -> int:
    """Answers of the part (all, for None) this judge has no verdict for (of ``sample``, for
    an expensive judge of a cascade)."""
    pending = ctx.store.pending_judgments(judge, benchmark=ctx.benchmark.key, retry_errors=True)
    return sum(
        1
        for p in pending
        if (shard is None or shard.holds(p.claim_id)) and (sample is None or p.gen_id in sample)
    )


def _judge_estimate(
    db: DbPath, pack: str | None, job: _Judging, share: float | None, seed: int
) -> JudgeResult:
    """``judge --dry-run``: what judging and the self-consistency pass would send and cost;
    the refusal the command would meet (an unpriced judge under a budget) in the estimate."""
    from deflectbench.cost import CostMeter, refuse_unpriced
    from deflectbench.dry_run import DryRun, Estimate, judge_estimate
    from deflectbench.errors import ConfigError
    from deflectbench.results.judge import JudgeResult

    with open_store(db, must_exist=True) as store:
        b = stored_benchmark(store, pack)
        options = DryRun(retry_errors=job.retry_errors, prices=job.prices)
        rows = judge_estimate(store, b, job.names, options, self_consistency=share, seed=seed)
        answers = store.benchmark_counts().get(b.key, 0)
    refusal = None
    try:
        refuse_unpriced(CostMeter(job.budget, job.prices), job.names, job.allow_unpriced)
    except ConfigError as exc:
        refusal = exc
    est = Estimate(tuple(rows), answers, job.budget, "stored answers of the pack", refusal)
    return JudgeResult(judges=list(job.names), estimate=est)


# -- status ---------------------------------------------------------------------------------


def status(
    db: DbPath = DEFAULT_DB,
    *,
    benchmark: str | None = None,
    config: DbPath | None = None,
    wait: bool = False,
    pause: Pause | None = None,
    on_round: Callable[[BatchSummary], None] | None = None,
    should_stop: StopCheck | None = None,
) -> StatusResult:
    """What a results file holds (``deflectbench status``); with batches (``run --batch``),
    first collects the finished ones, sends failed items again and judges the answers
    (``wait``: until none is open, ``pause`` between looks; ``on_round``: what each round
    did). ``config``: the run file the batches were submitted with, when its providers set
    headers or extra_body. ``.to_json()`` is ``status --json``."""
    from deflectbench.analysis.summary.validity_checks import tie_rule
    from deflectbench.api.batches import follow_batches
    from deflectbench.pipeline.batches.turns_due import turns_due
    from deflectbench.results.status import StatusResult

    follow = follow_batches(
        db, config=config, wait=wait, pause=pause, on_round=on_round, should_stop=should_stop
    )
    with open_store(db, must_exist=True) as store:
        key = pick_benchmark(benchmark).key if benchmark else None
        st = store.status(benchmark=key)
        return StatusResult.of(
            Path(db),
            st,
            benchmark=key,
            benchmarks=store.benchmark_counts(),
            served_by=_served_by(store, key),
            batches=store.batch_list(),
            turn2=turns_due(store),
            tie_rule=tie_rule(list(st["judges"])),
            manifest=_manifest(store),
            follow=follow,
        )


def _served_by(store: Store, key: str | None) -> list[Any]:
    """Per model and condition whose replies say another model served them: the model, the
    condition, its replies, the other served ids with their counts, and the line to show."""
    from deflectbench.gate import served_line, served_mismatch
    from deflectbench.results.status import ServedBy

    out = []
    for (model, condition), entry in store.served_counts(key).items():
        other = served_mismatch(model, entry["served"])
        if not other:
            continue
        line = served_line(model, entry["served"], entry["replies"])
        warning = f"warning: {line} (condition {condition})"
        out.append(ServedBy(model, condition, entry["replies"], other, warning))
    return out


def _manifest(store: Store) -> list[Any]:
    """Every run's manifest rows, oldest run first."""
    from deflectbench.results.status import ManifestRow
    from deflectbench.store.manifests import manifest_rows

    return [
        ManifestRow(
            r["run_id"], r["role"], r["name"], r["condition"], r["updated_at"], r["manifest"]
        )
        for r in manifest_rows(store)
    ]
