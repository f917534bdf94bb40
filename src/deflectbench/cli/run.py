"""``deflectbench run``, ``judge`` and ``status``: the flags parsed into a
:class:`~deflectbench.config.RunConfig` (and the library's arguments), the work done by
:mod:`deflectbench.api.run`, the typed result shown (:mod:`deflectbench.views.terminal`), and
the exit code the result says."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Annotated, Any

import typer

from deflectbench.cli.cascade_flags import (
    CheapJudgeOption,
    ExpensiveShareOption,
    ExpensiveTargetOption,
    StratifyOption,
)
from deflectbench.cli.console import console, err
from deflectbench.cli.flags import flag_command
from deflectbench.cli.live import RUN_SUMMARY_MODULES, LiveBoard
from deflectbench.cli.options import (
    DEFAULT_DB,
    AllowSelfJudgingOption,
    BenchmarkOption,
    DbOption,
    ProgressOption,
)
from deflectbench.cli.progress import graceful_stop
from deflectbench.cli.run_output import ConfigOption, show


@dataclass(frozen=True)
class RunCommandFlags:
    """`deflectbench run`'s flags."""

    preset: Annotated[
        str | None,
        typer.Option(
            help="quick: 8 claims x 15 templates x 1 sample (120 cells); full: 80 x 15 x 5."
        ),
    ] = None
    models: Annotated[
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
    judges: Annotated[
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
    samples: Annotated[int | None, typer.Option(help="Samples per cell (preset's by default).")] = (
        None
    )
    runs: Annotated[int | None, typer.Option(hidden=True, help="Old name of --samples.")] = None
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
    until: Annotated[
        str | None,
        typer.Option(
            help='Stop once the target precision is met, e.g. "halfwidth<=0.03" (every '
            'outcome per model; "... per model x framing", "refusal +-3pp per model", "... in '
            '4 looks"): claims in rounds, a look after each, intervals valid after stopping '
            "(docs/until.md)."
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
    shard_limits: Annotated[
        str | None,
        typer.Option(
            "--shard-limits",
            help="Under --shard: split (default; each part takes 1/N of a provider's "
            "concurrency and per-minute limits, as the parts share one key or pool) or each "
            "(every part uses them all).",
        ),
    ] = None
    cheap_judge: CheapJudgeOption = None
    expensive_share: ExpensiveShareOption = None
    expensive_target: ExpensiveTargetOption = None
    stratify: StratifyOption = None
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
    allow_self_judging: AllowSelfJudgingOption = False
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

        deflectbench run --claims L1_US_01 --templates explicit_coach_WA --samples 3

        deflectbench run --config run.toml --dry-run    # the cost; sends nothing

        deflectbench run -m openai/gpt-5.5 -j openai/gpt-5.4-mini --max-cost 20
    """
    from deflectbench.api import run as api

    config = _run_config(f)
    if f.dry_run:
        from deflectbench.views.terminal.run_tables import estimate_view

        est = api.estimate(config, db=f.db)
        show(estimate_view(est))
        est.check()
        return
    if f.batch_file is not None:
        from deflectbench.views.terminal import batch_lines

        show(batch_lines.written(api.write_batch_file(f.batch_file, config, db=f.db), f.batch_file))
        return
    from deflectbench.models.sdk_loader import hold_gc, release_gc

    hold_gc()  # until the SDKs are in (issue 37): the collector's passes over them delay the run
    try:
        with (
            LiveBoard(f.progress, warm=(*RUN_SUMMARY_MODULES, *_RUN_VIEWS)) as live,
            graceful_stop() as should_stop,
        ):
            result = api.run(config, db=f.db, watch=live.attach, should_stop=should_stop)
    finally:
        release_gc()
    # the views after the run, warmed up beside it: nothing the first request does not need
    from deflectbench.views.terminal import batch_lines, run_lines

    show(run_lines.run_report(result))
    if result.report.batches is not None:
        show(batch_lines.summary(result.report.batches))
    if f.write_report:
        with err.busy("writing the report…"):
            html = api.report_after_run(result, f.report_out)
        if html is not None:
            console.print(f"report: {html}", highlight=False, markup=False)
    show(run_lines.run_end(result))
    raise typer.Exit(result.exit_code)


#: What ``run`` shows after its requests, imported beside them (not before the first).
_RUN_VIEWS = ("deflectbench.views.terminal.run_lines", "deflectbench.views.terminal.batch_lines")


def _run_config(f: RunCommandFlags) -> Any:
    """The run file's configuration (``--config``), the flags given winning; a switch left
    off is not given (the file may turn it on); ``--runs`` is ``--samples``."""
    from deflectbench.config import RunConfig, load_config

    values = {
        x.name: None if x.default is False and getattr(f, x.name) is False else getattr(f, x.name)
        for x in fields(f)
    }
    values["samples"] = f.samples if f.samples is not None else f.runs
    file = load_config(f.config) if f.config is not None else RunConfig()
    return file.merged(RunConfig.given(values))


@dataclass(frozen=True)
class JudgeCommandFlags:
    """`deflectbench judge`'s flags."""

    judges: Annotated[
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
    allow_self_judging: AllowSelfJudgingOption = False
    self_consistency: Annotated[
        float | None,
        typer.Option(
            help="Then re-judge this share of the answers every judge has judged (e.g. 0.02), "
            "chosen by --seed, each judge again, the cache bypassed, within --max-cost; stored "
            "apart, never in the analysis' rates: it reports each judge's agreement with itself.",
        ),
    ] = None
    seed: Annotated[
        int,
        typer.Option(help="The seed choosing the --self-consistency and the cascade's sample (0)."),
    ] = 0
    cheap_judge: CheapJudgeOption = None
    expensive_share: ExpensiveShareOption = None
    expensive_target: ExpensiveTargetOption = None
    stratify: StratifyOption = None
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
    from deflectbench.api import run as api
    from deflectbench.views.terminal import batch_lines, run_lines

    settings = asdict(f)
    progress, dry_run = settings.pop("progress"), settings.pop("dry_run")
    if dry_run:
        result = api.judge(dry_run=True, **settings)
        show(run_lines.judge_report(result))
        assert result.estimate is not None
        result.estimate.check()
        return
    with LiveBoard(progress) as live, graceful_stop() as should_stop:
        result = api.judge(watch=live.attach, should_stop=should_stop, **settings)
    if result.batches is not None:
        show(batch_lines.summary(result.batches))
    show(run_lines.judge_report(result))
    raise typer.Exit(result.exit_code)


def status(
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    benchmark: BenchmarkOption = None,
    wait: Annotated[
        bool,
        typer.Option("--wait", help="Batch mode: look again every 30 s until no batch is open."),
    ] = False,
    config: ConfigOption = None,
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

    A quoted glob over the parts of a `--shard I/N` array shows each file's part, progress and
    spending, the totals and the parts no file holds (exit 5 while anything is missing):

        deflectbench status --db 'results/part-*.db'
    """
    if any(ch in str(db) for ch in "*?["):  # an array's parts (docs/scale.md)
        from deflectbench.cli.parts import show_parts

        show_parts(db, as_json)
    from deflectbench.api import run as api
    from deflectbench.cli.batch import wait_bar
    from deflectbench.views.terminal import batch_lines
    from deflectbench.views.terminal.packs import packs_line
    from deflectbench.views.terminal.run_tables import manifest_tables, status_tables

    with graceful_stop() as should_stop:
        st = api.status(
            db,
            benchmark=benchmark,
            config=config,
            wait=wait,
            pause=wait_bar(progress, should_stop),
            on_round=lambda summary: show(batch_lines.summary(summary)),
            should_stop=should_stop,
        )
    if st.follow is not None:
        show(batch_lines.follow(st.follow, table=not as_json))
    if as_json:
        console.print_json(data=st.to_json())
        raise typer.Exit(st.exit_code)
    show(status_tables(st))
    if line := packs_line(st.benchmarks, st.benchmark):
        console.print(line, highlight=False, markup=False)
    if st.tie_rule:
        console.print(st.tie_rule, highlight=False, markup=False)
    show([*batch_lines.served(st.served_by), *manifest_tables(st.manifest)])
    raise typer.Exit(st.exit_code)
