"""``deflectbench run``, ``judge`` and ``status``: make results, and say what a file holds."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path
from typing import Annotated, Any

import typer

from deflectbench import __version__
from deflectbench.cli.batch import ConfigOption as BatchConfigOption
from deflectbench.cli.console import console, err
from deflectbench.cli.flags import flag_command
from deflectbench.cli.live import LiveBoard
from deflectbench.cli.options import (
    DEFAULT_DB,
    BenchmarkOption,
    DbOption,
    ProgressOption,
    open_store,
    pick_benchmark,
    run_file_benchmark,
    split,
    stored_benchmark,
)
from deflectbench.cli.progress import graceful_stop
from deflectbench.cli.run_output import (
    print_aborted,
    print_account,
    print_estimate,
    print_run_report,
    print_stage,
    scored_for_plan,
)


@dataclass(frozen=True)
class RunCommandFlags:
    """`deflectbench run`'s flags."""

    preset: Annotated[
        str | None,
        typer.Option(
            help="quick: 8 claims x 15 templates x 1 sample (120 cells); full: 80 x 15 x 5."
        ),
    ] = None
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            "-m",
            help="Model(s) to test as provider/model (repeat or comma-separate): local/smollm2, "
            "gguf/PATH, openai/..., anthropic/..., deepseek/..., xai/..., gemini/..., "
            "openrouter/..., openai-compatible/..., or NAME/... for a [providers.NAME] section "
            "with a base_url. Default local/smollm2.",
        ),
    ] = None
    judge: Annotated[
        list[str] | None,
        typer.Option(
            "--judge",
            "-j",
            help="Judge(s): lexical (rule-based, offline) or a model as provider/model (repeat "
            "or comma-separate). Default: the release's pair when "
            "ANTHROPIC_API_KEY and OPENAI_API_KEY are set, else lexical.",
        ),
    ] = None
    claims: Annotated[
        list[str] | None,
        typer.Option(
            help="Claim ids instead of the preset's, e.g. L1_US_01,L3_INT_02 "
            "(`deflectbench spec --claims` lists them)."
        ),
    ] = None
    templates: Annotated[
        list[str] | None,
        typer.Option(
            help="Template ids instead of all 15, e.g. explicit_coach_WA "
            "(`deflectbench spec --templates` lists them)."
        ),
    ] = None
    runs: Annotated[int | None, typer.Option(help="Samples per cell (preset's by default).")] = None
    seed: Annotated[
        int | None, typer.Option(help="Base seed (0); each cell derives its own from it.")
    ] = None
    max_tokens: Annotated[
        int | None,
        typer.Option(help="Output token cap (default: 256 local, 2048 API as in the release)."),
    ] = None
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            help="A TOML run configuration ([run], [providers.NAME], [prices]; every key in "
            "docs/configuration.md). Flags win.",
        ),
    ] = None
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print requests, tokens and cost; send nothing.")
    ] = False
    max_cost: Annotated[
        float | None,
        typer.Option(
            help="Stop cleanly once the results file's spending (all runs, this one included) "
            "reaches this many USD; requests in flight finish."
        ),
    ] = None
    cache: Annotated[
        bool | None,
        typer.Option(
            "--cache/--no-cache", help="Reuse identical requests already paid for (default on)."
        ),
    ] = None
    label: Annotated[
        str | None,
        typer.Option(
            help="Name these settings (a condition), e.g. temp07. Default: derived from the "
            "settings (temp1-max256-seed0). Other settings are stored beside, never mixed."
        ),
    ] = None
    allow_unpriced: Annotated[
        bool,
        typer.Option(
            "--allow-unpriced",
            help="Run with --max-cost even where a model or judge has no known price (its "
            "spending is then not counted).",
        ),
    ] = False
    batch: Annotated[
        bool,
        typer.Option(
            "--batch",
            help="Send openai/ and anthropic/ models and judges as provider batches (half the "
            "price, up to 24 h; docs/batch.md); others run as usual. Ends once submitted: "
            "`deflectbench status` collects.",
        ),
    ] = False
    shard: Annotated[
        str | None,
        typer.Option(
            envvar="DEFLECTBENCH_SHARD",
            help="Run part I of N, e.g. 2/3 (claims split by a stable hash of their id; the "
            "same part every time), into its own --db; `deflectbench merge` joins the parts "
            "(docs/scale.md).",
        ),
    ] = None
    batch_file: Annotated[
        Path | None,
        typer.Option(
            "--batch-file",
            help="Write the pending cells as OpenAI batch JSONL to this file (one model), for "
            "your own batch engine (vLLM's run_batch; docs/open-models.md); sends nothing. "
            "`deflectbench import-batch` takes the results back.",
        ),
    ] = None
    retry_errors: Annotated[bool, typer.Option(help="Try stored error rows again.")] = False
    allow_self_judging: Annotated[
        bool,
        typer.Option(
            "--allow-self-judging",
            help="Let a judge be one of the models tested (refused by default: a model grading "
            "its own answers is biased).",
        ),
    ] = False
    control: Annotated[
        bool,
        typer.Option(
            "--control",
            help="Add the positive control, model control/synthetic (offline, known "
            "deflections): the run says whether the judges found them; exit 7 if not.",
        ),
    ] = False
    write_report: Annotated[
        bool, typer.Option("--report/--no-report", help="End by writing the HTML report.")
    ] = True
    report_out: Annotated[Path, typer.Option(help="Folder for the report written at the end.")] = (
        Path("deflectbench-report")
    )
    benchmark: BenchmarkOption = None
    db: DbOption = DEFAULT_DB
    progress: ProgressOption = True


@flag_command(RunCommandFlags)
def run(f: RunCommandFlags) -> None:
    """Generate, judge and summarise: the whole pipeline at once, resumable.

    Every model generates at once and each answer is judged as soon as it is stored; each
    provider section's limits are shared by every model and judge it serves, and judging goes
    first. Only missing cells are generated and only unjudged generations judged, so re-running the same
    command after a crash or Ctrl-C picks up where it stopped, and re-running a finished one adds
    nothing. API keys come from the environment only (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...).
    Your own server (vLLM, llama.cpp, Ollama): -m openai-compatible/NAME with
    OPENAI_COMPATIBLE_BASE_URL=http://HOST:PORT/v1, or a [providers.x] base_url in --config.

    Examples:

        deflectbench run                                # quick preset, offline

        deflectbench run -m openai-compatible/NAME      # your own server

        deflectbench run --claims L1_US_01 --templates explicit_coach_WA --runs 3

        deflectbench run --config run.toml --dry-run    # the cost; sends nothing

        deflectbench run -m openai/gpt-5.5 -j openai/gpt-5.4-mini --max-cost 20
    """
    from deflectbench.benchmark.control_replies import CONTROL_MODEL
    from deflectbench.config import RunFile, RunFlags, build_models, load_run_file, resolve_run
    from deflectbench.config.plan import shard_plan
    from deflectbench.config.shard import parse_shard
    from deflectbench.judging.hygiene import check_self_judging
    from deflectbench.pipeline.control import CONTROL_PRICE, with_control
    from deflectbench.execute import RunOptions, execute

    file = load_run_file(f.config) if f.config is not None else RunFile()
    b = pick_benchmark(f.benchmark or run_file_benchmark(file.run.benchmark, f.config))
    flags = RunFlags(
        models=split(f.model),
        judges=split(f.judge),
        preset=f.preset,
        claims=split(f.claims),
        templates=split(f.templates),
        samples=f.runs,
        seed=f.seed,
        max_tokens=f.max_tokens,
        max_cost=f.max_cost,
        cache=f.cache,
        label=f.label,
        allow_unpriced=f.allow_unpriced or None,
    )
    settings = resolve_run(b, flags, file)
    plan = shard_plan(settings.plan, parse_shard(f.shard))
    check_self_judging(plan.models, plan.judges, f.allow_self_judging)
    built = build_models(plan.models, plan.judges, settings.providers, dry_run=f.dry_run)
    if f.control:
        plan, built = with_control(plan, built)
        settings = replace(settings, prices={CONTROL_MODEL: CONTROL_PRICE, **settings.prices})
    options = RunOptions(
        retry_errors=f.retry_errors,
        command="run",
        versions=_versions(),
        use_cache=settings.use_cache,
        max_cost_usd=settings.max_cost_usd,
        prices=settings.prices,
        config=settings.file,
        label=settings.label,
        allow_unpriced=settings.allow_unpriced,
        batch=f.batch,
        allow_self_judging=f.allow_self_judging,
    )
    from deflectbench.cost import CostMeter, refuse_unpriced

    def refuse_what_the_run_refuses() -> None:
        # the run's own first check (run.execute), made before the store is opened: a dry run
        # refuses what the run would (after its table), and a refused run leaves no empty store
        meter = CostMeter(options.max_cost_usd, options.prices)
        refuse_unpriced(meter, [*plan.models, *plan.judges], options.allow_unpriced)

    if f.dry_run:
        print_estimate(f.db, b, plan, built, options)
        refuse_what_the_run_refuses()
        return
    refuse_what_the_run_refuses()
    if f.batch_file is not None:
        from deflectbench.cli.batch_file import print_written, write_batch_file
        from deflectbench.cli.fresh_store import store_or_nothing

        with store_or_nothing(f.db) as store:
            written = write_batch_file(store, b, plan, built, options, f.batch_file)
        print_written(written, f.batch_file)
        return
    store = open_store(f.db)
    try:
        with LiveBoard(f.progress) as live, graceful_stop() as should_stop:
            report = asyncio.run(
                execute(store, b, plan, built, options, watch=live.attach, should_stop=should_stop)
            )
        scored = scored_for_plan(store, b, plan)
        print_run_report(report, scored, plan, f.db)
        if report.batches is not None:
            from deflectbench.cli.batch import print_summary

            print_summary(report.batches)
        if f.write_report and not report.stopped_early and len(scored):
            from deflectbench.views.report import write_report_after_run

            with err.status("writing the report…"):
                html = write_report_after_run(store, b, f.report_out)
            console.print(f"report: {html}", highlight=False, markup=False)
        print_account(report.account(), report.complete or report.waiting)
        control = _print_control(store, b, plan.judges) if f.control else None
    finally:
        store.close()
    code = _exit_code(
        stop_reason=report.stop_reason if report.stopped_early else None,
        aborted=_any_aborted([*report.generation.values(), *report.judging.values()]),
        complete=report.complete or report.waiting,
    )
    raise typer.Exit(
        EXIT_CONTROL_FAILED if code in (EXIT_OK, EXIT_INCOMPLETE) and control is False else code
    )


def _print_control(store: Any, benchmark: Any, judges: Sequence[str]) -> bool:
    """The run's last line with ``--control``: whether the judges found the control's known
    deflections (and labels), with each judge's rates; True when it passed."""
    from deflectbench.analysis.summary.validity_checks import store_control

    result = store_control(store, benchmark, judges)
    console.print(result.line(), highlight=False, markup=False)
    return result.passed


#: Exit codes (the README's table says the same): done; an import skipped lines (results.py);
#: bad input; budget reached; a model or judge failed every request; finished but incomplete;
#: interrupted.
EXIT_OK, EXIT_BAD_INPUT, EXIT_BUDGET, EXIT_ABORTED, EXIT_INCOMPLETE, EXIT_INTERRUPTED = (
    0,
    2,
    3,
    4,
    5,
    130,
)
#: ``run --control``: the judges missed the control's known deflections (6 is compare's gate).
EXIT_CONTROL_FAILED = 7


def _exit_code(*, stop_reason: str | None, aborted: bool, complete: bool) -> int:
    if stop_reason == "interrupted":
        return EXIT_INTERRUPTED
    if stop_reason == "budget":
        return EXIT_BUDGET
    if aborted:
        return EXIT_ABORTED
    return EXIT_OK if complete else EXIT_INCOMPLETE


def _versions() -> dict[str, str]:
    """The versions stored with a run, so its results can be traced to the code behind them."""
    out = {"deflectbench": __version__, "python": sys.version.split()[0]}
    for dist in ("llama-cpp-python", "openai", "anthropic", "numpy", "pandas", "scipy"):
        with suppress(metadata.PackageNotFoundError):
            out[dist] = metadata.version(dist)
    return out


def _any_aborted(results: Sequence[Any]) -> bool:
    """A model or judge gave up (the engine aborted it), or failed every request it sent
    (e.g. a one-cell run whose only request failed: too few failures for the engine to abort,
    but nothing to show, so exit 4 as the README says, not 5)."""
    return any(
        getattr(r, "aborted", None)
        or (
            getattr(r, "errors", 0) > 0
            and not getattr(r, "ok", 0)
            and not getattr(r, "non_answers", None)
        )
        for r in results
    )


@dataclass(frozen=True)
class JudgeCommandFlags:
    """`deflectbench judge`'s flags."""

    judge_names: Annotated[
        list[str] | None,
        typer.Option("--judge", "-j", help="Judge(s), e.g. lexical or openai/gpt-5.4-mini."),
    ] = None
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            help="A TOML run configuration: its [providers.NAME] and [prices] apply (and its "
            "[run] judges and max_cost, unless given as flags).",
        ),
    ] = None
    max_cost: Annotated[
        float | None,
        typer.Option(
            help="Stop cleanly once the store's spending reaches this many USD (all runs)."
        ),
    ] = None
    allow_unpriced: Annotated[
        bool,
        typer.Option("--allow-unpriced", help="Judge with --max-cost even without a known price."),
    ] = False
    shard: Annotated[
        str | None,
        typer.Option(
            envvar="DEFLECTBENCH_SHARD",
            help="Judge only the answers of part I of N's claims, e.g. 2/3 (the claims "
            "`run --shard` gives that part; docs/scale.md).",
        ),
    ] = None
    retry_errors: Annotated[bool, typer.Option(help="Retry judge requests that failed.")] = False
    batch: Annotated[
        bool,
        typer.Option(
            "--batch",
            help="Send openai/ and anthropic/ judges' requests as provider batches (half the "
            "price; `deflectbench status` collects them).",
        ),
    ] = False
    allow_self_judging: Annotated[
        bool,
        typer.Option(
            "--allow-self-judging",
            help="Let a judge be a model whose answers the store holds (refused by default).",
        ),
    ] = False
    self_consistency: Annotated[
        float | None,
        typer.Option(
            help="Then re-judge this share of the answers every judge has judged (e.g. 0.02), "
            "chosen by --seed, each judge again, the cache bypassed, within --max-cost; stored "
            "apart, never in the analysis' rates: it reports each judge's agreement with itself.",
        ),
    ] = None
    seed: Annotated[
        int, typer.Option(help="The seed choosing the --self-consistency sample (0).")
    ] = 0
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print each judge's requests, tokens and cost (the --self-consistency pass "
            "included); send nothing.",
        ),
    ] = False
    benchmark: BenchmarkOption = None
    db: DbOption = DEFAULT_DB
    progress: ProgressOption = True


@flag_command(JudgeCommandFlags)
def judge(f: JudgeCommandFlags) -> None:
    """Judge every stored generation a judge has not judged yet (blind: claim and response
    only; a multi-turn pack's turn-2 reply with the conversation before it).

    Ends with one line: done, or what is left unjudged and why (exit 5 when anything is left).
    Judges the generations of one benchmark pack (with that pack's rubric): the one the store
    holds, or `--benchmark NAME` when it holds several.

    Example:

        deflectbench judge --judge lexical
    """
    from deflectbench.cli.shard import judge_part, left_in_part
    from deflectbench.config import (
        RunFile,
        build_models,
        check_budget,
        file_prices,
        load_run_file,
    )
    from deflectbench.config.shard import parse_shard
    from deflectbench.errors import ConfigError
    from deflectbench.judging.hygiene import check_self_judging
    from deflectbench.judging.judges import check_judge_language
    from deflectbench.pipeline import RunContext, manifest
    from deflectbench.pipeline.self_consistency import check_share
    from deflectbench.execute import RunOptions, judge_all, store_meter

    part = parse_shard(f.shard)
    if part is not None and f.batch:
        raise ConfigError("judge --shard with --batch: judge a part without --batch")

    file = load_run_file(f.config) if f.config is not None else RunFile()
    benchmark = f.benchmark or run_file_benchmark(file.run.benchmark, f.config)
    names = split(f.judge_names) or list(file.run.judges or []) or ["lexical"]
    budget = check_budget(f.max_cost if f.max_cost is not None else file.run.max_cost)
    if f.self_consistency is not None:
        check_share(f.self_consistency)
    prices = file_prices(file.prices)
    if benchmark is not None:
        pick_benchmark(benchmark)  # an unknown pack is named (did you mean) before the store
    built = build_models([], names, file.providers, dry_run=f.dry_run)
    unpriced_ok = f.allow_unpriced or bool(file.run.allow_unpriced)
    if f.dry_run:
        _judge_dry_run(f, benchmark, names, prices, budget, unpriced_ok)
        return
    store = open_store(f.db, must_exist=True)
    try:
        b = stored_benchmark(store, benchmark)
        check_judge_language(names, b.language, b.pack)
        subjects = store.status(benchmark=b.key)["models"]
        check_self_judging(subjects, names, f.allow_self_judging)
        by_engine = names
        if f.batch:
            from deflectbench.cli.batch import judge_by_batch
            from deflectbench.cost import CostMeter

            by_engine = judge_by_batch(
                store, b, names, built, CostMeter(budget, prices), f.retry_errors, file.providers
            )
        budgeted = RunOptions(max_cost_usd=budget, prices=prices, allow_unpriced=unpriced_ok)
        meter = store_meter(store, budgeted, by_engine)
        judging = manifest.start_judging(store, b, by_engine, built, _versions())
        with LiveBoard(f.progress) as live, graceful_stop() as should_stop:
            ctx = RunContext(
                store,
                b,
                judging.run_id,
                meter=meter,
                retry_errors=f.retry_errors,
                should_stop=should_stop,
            )
            if part is None:
                results = asyncio.run(judge_all(ctx, by_engine, built, watch=live.attach))
            else:
                results = judge_part(ctx, by_engine, built, part, watch=live.attach)
        manifest.end_judging(store, judging, built, results, should_stop())  # what judged
        for j, res in results.items():
            print_stage(f"judge {j}", res, f"judged, {res.errors} errors")
            print_aborted(f"judge {j}", res)
        interrupted = should_stop()
        not_rejudged = 0  # re-judgments the budget withheld
        if f.self_consistency is not None and not interrupted:
            not_rejudged = _rejudge(store, b, by_engine, built, f.self_consistency, f.seed, meter)
        left = {j: left_in_part(ctx, j, part) for j in names}
        in_batches = {j: len(store.batched_answers(j)) for j in names}
    finally:
        store.close()
    budget_hit = any(r.withheld for r in results.values()) or not_rejudged > 0
    parts = [
        f"judge {j}: "
        + (f"{left[j] - in_batches[j]} not judged" if left[j] > in_batches[j] else "done")
        + (f", {in_batches[j]} in open batches (`deflectbench status`)" if in_batches[j] else "")
        + (
            f", {results[j].parse_errors} replies without a verdict"
            if j in results and results[j].parse_errors
            else ""
        )
        for j in names
    ]
    if not_rejudged:
        parts.append(f"self-consistency: {not_rejudged} re-judgments not sent (budget)")
    complete = (
        not interrupted
        and all(left[j] <= in_batches[j] for j in names)
        and not any(r.parse_errors for r in results.values())
        and not not_rejudged
    )
    print_account(("complete: " if complete else "incomplete: ") + "; ".join(parts), complete)
    raise typer.Exit(
        _exit_code(
            stop_reason="interrupted" if interrupted else ("budget" if budget_hit else None),
            aborted=_any_aborted(list(results.values())),
            complete=complete,
        )
    )


def _rejudge(
    store: Any, b: Any, names: Sequence[str], built: Any, share: float, seed: int, meter: Any
) -> int:
    """``judge --self-consistency``: the seeded sample re-judged by every judge within the
    budget, one line each; how many requests the budget withheld."""
    from deflectbench.pipeline.self_consistency import rejudge
    from deflectbench.pipeline.stages import build_judges

    judges = build_judges(b, names, built)
    done = asyncio.run(rejudge(store, b, judges, share, seed, meter=meter))
    for j, r in done.items():
        line = f"self-consistency {j}: {r.sampled} answers in the sample (seed {seed}), "
        line += f"{r.sent} re-judged now" + (f", {r.failed} failed" if r.failed else "")
        if judges[j] is not None and r.sent:
            line += f", {r.cost_usd:.4f} USD" if r.cost_usd is not None else ", cost unknown"
        console.print(line, highlight=False, markup=False)
        if r.withheld:
            err.print(
                f"self-consistency {j}: {r.withheld} not sent (budget reached: {r.budget}); "
                "kept as not-sent rows, sent by the same command with a larger --max-cost",
                style="yellow",
                highlight=False,
                markup=False,
            )
    return sum(r.withheld for r in done.values())


def _judge_dry_run(
    f: JudgeCommandFlags,
    benchmark: str | None,
    names: Sequence[str],
    prices: Any,
    budget: float | None,
    allow_unpriced: bool,
) -> None:
    """``judge --dry-run``: what judging and the --self-consistency pass would send and cost;
    then refused as the command would be (an unpriced judge under a budget)."""
    from deflectbench.views.terminal.run_tables import estimate_view
    from deflectbench.cost import CostMeter, refuse_unpriced
    from deflectbench.estimate import DryRun, judge_estimate

    store = open_store(f.db, must_exist=True)
    try:
        b = stored_benchmark(store, benchmark)
        rows = judge_estimate(
            store,
            b,
            names,
            DryRun(retry_errors=f.retry_errors, prices=prices),
            self_consistency=f.self_consistency,
            seed=f.seed,
        )
        answers = store.benchmark_counts().get(b.key, 0)
    finally:
        store.close()
    for part in estimate_view(rows, answers, budget, of="stored answers of the pack"):
        console.print(part)
    refuse_unpriced(CostMeter(budget, prices), list(names), allow_unpriced)


def status(
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    benchmark: BenchmarkOption = None,
    wait: Annotated[
        bool,
        typer.Option("--wait", help="Batch mode: look again every 30 s until no batch is open."),
    ] = False,
    config: BatchConfigOption = None,
    db: DbOption = DEFAULT_DB,
    progress: ProgressOption = True,
) -> None:
    """What the results file holds: per model and condition cells planned / generated / errors
    / no answer / missing; per judge generations judged / parse errors / errors; what was spent;
    generations per benchmark pack; each run's manifest (what the clients saw: the model ids
    replies named, the parameters sent, requests, tokens, throughput, spend).

    Examples:

        deflectbench status --json

        deflectbench status --benchmark deflectbench-v1    # one pack's rows only

    With batches (`run --batch`): collects the finished ones, stores their results, sends
    failed or expired items again, judges the answers (judge batches, or the engine for judges
    without a batch API), shows every batch, and exits 5 while failed items are not done,
    answers await a judge, or a multi-turn pack's turn-2 cells are due and not sent (the next
    `run --batch` sends them); `--wait` until none is open.
    """
    from deflectbench.analysis.summary.validity_checks import tie_rule
    from deflectbench.cli.batch import batches_json, collect_and_show
    from deflectbench.cli.batch_turns import turns_json
    from deflectbench.cli.run_output import manifest_json, print_manifest
    from deflectbench.cli.served import print_served, served_by

    rc = collect_and_show(db, config=config, wait=wait, progress=progress, table=not as_json)
    store = open_store(db, must_exist=True)
    try:
        key = pick_benchmark(benchmark).key if benchmark else None
        st = store.status(benchmark=key)
        st["benchmarks"] = store.benchmark_counts()
        st["served_by"] = served_by(store, key)  # replies another model served
        st["batches"] = batches_json(store)
        if as_json:  # the table view says it in collect_and_show's lines
            st["turn2"] = turns_json(store)
        st["tie_rule"] = tie_rule(list(st["judges"]))
        st["manifest"] = manifest_json(store)  # what each run really ran, per model and judge
    finally:
        store.close()
    if as_json:
        console.print_json(data=st)
        raise typer.Exit(rc)
    from deflectbench.views.terminal.run_tables import status_tables

    for table in status_tables(st, db):
        console.print(table)
    from deflectbench.cli.pack_tables import packs_line

    if line := packs_line(st["benchmarks"], key):
        console.print(line, highlight=False, markup=False)
    if st["tie_rule"]:
        console.print(st["tie_rule"], highlight=False, markup=False)
    print_served(st["served_by"])
    print_manifest(st["manifest"])
    raise typer.Exit(rc)
