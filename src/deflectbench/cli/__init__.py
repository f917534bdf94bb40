"""The ``deflectbench`` command line. Thin: parse, call the library, print."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from importlib import metadata
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from deflectbench import __version__
from deflectbench.secrets import scrub

app = typer.Typer(
    name="deflectbench",
    help=(
        "Measure whether language models produce deflection fallacies (whataboutism, ad hominem, "
        "red herring) when asked, and how they refuse, hedge, label or cleanly comply.\n\n"
        "Start with `deflectbench run`: with no arguments it runs the quick preset on the bundled "
        "local model (no keys, no network) and prints a table per framing."
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode="markdown",
)
console = Console(soft_wrap=True, emoji=False)
err = Console(stderr=True, soft_wrap=True, emoji=False)

DbOption = Annotated[
    Path,
    typer.Option(
        "--db", help="The results file (SQLite). Created on first use.", envvar="DEFLECTBENCH_DB"
    ),
]
DEFAULT_DB = Path("deflectbench.db")
ConsensusOption = Annotated[
    str,
    typer.Option(
        help="How judges combine per field: mean (the release's rule: mean >= 0.5, so with two "
        "judges a 1 from either wins), all (every judge says 1), or judge:NAME (one judge's word)."
    ),
]
AnalysisJudgesOption = Annotated[
    list[str] | None,
    typer.Option(
        "--judge",
        "-j",
        help="Only these judges (repeat or comma-separate); default: every judge in the file.",
    ),
]
JudgeValuesOption = Annotated[
    str,
    typer.Option(
        help="Which judge values to combine: rules (each verdict after the rubric's rules) or "
        "said (what each judge replied, as the release's own analysis did: use it to reproduce "
        "the paper's tables exactly)."
    ),
]
ResamplesOption = Annotated[
    int, typer.Option(min=1, help="Block-bootstrap resamples of the claims for the 95% CIs.")
]


class UserError(Exception):
    """An error the user can fix; printed as one line."""


def _user_errors() -> tuple[type[BaseException], ...]:
    from deflectbench.benchmark import BenchmarkError
    from deflectbench.errors import ConfigError
    from deflectbench.judging.judges import UnknownJudgeError
    from deflectbench.models.base import ModelError
    from deflectbench.models.registry import UnknownModelError
    from deflectbench.store import StoreError
    from deflectbench.vocab import ConsensusError

    errors: list[type[BaseException]] = [
        UserError,
        BenchmarkError,
        ConfigError,
        ConsensusError,
        UnknownJudgeError,
        ModelError,
        UnknownModelError,
        StoreError,
    ]
    from deflectbench.interop import InteropError
    from deflectbench.report import ReportError

    errors += [InteropError, ReportError]
    return tuple(errors)


def main() -> None:
    """Entry point: run the app, turning known errors into one line and exit code 2."""
    try:
        rc = app(standalone_mode=False)
        if isinstance(rc, int) and rc:
            sys.exit(rc)
    except _user_errors() as exc:
        err.print(f"[bold red]error:[/] {escape(scrub(str(exc)))}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        err.print(
            "interrupted: everything finished so far is stored; run the same command to resume"
        )
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        err.print("aborted")
        sys.exit(1)
    except Exception as exc:  # click usage errors and the unexpected
        # typer may bundle its own click: recognise usage errors by their interface
        if callable(getattr(exc, "show", None)) and isinstance(
            getattr(exc, "exit_code", None), int
        ):
            exc.show()
            sys.exit(exc.exit_code)
        if os.environ.get("DEFLECTBENCH_DEBUG"):
            raise
        err.print(
            f"[bold red]internal error:[/] {type(exc).__name__}: {escape(scrub(str(exc)))} "
            "(set DEFLECTBENCH_DEBUG=1 for the traceback, and please report it)",
            highlight=False,
        )
        sys.exit(1)


def _versions() -> dict[str, str]:
    out = {"deflectbench": __version__, "python": sys.version.split()[0]}
    for dist in ("llama-cpp-python", "openai", "anthropic", "numpy", "pandas", "scipy"):
        with suppress(metadata.PackageNotFoundError):
            out[dist] = metadata.version(dist)
    return out


def _split(values: list[str] | None) -> list[str]:
    """Accept both repeated options and comma-separated lists."""
    out: list[str] = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def _build_models(
    models: Sequence[str],
    judges: Sequence[str],
    providers: dict[str, Any] | None = None,
    *,
    dry_run: bool = False,
) -> dict[str, Any]:
    """Resolve every model and judge name up front, so a typo or a missing key fails before
    any work. A dry run needs no keys: it sends nothing."""
    from deflectbench.judging.judges import check_judge_name, is_rule_based
    from deflectbench.models.providers import MissingKeyError
    from deflectbench.models.registry import get_model

    def build(name: str) -> Any:
        try:
            return get_model(name, providers)
        except MissingKeyError:
            if not dry_run:
                raise
            return get_model(name, providers, env=_KeyPlaceholders(os.environ))

    built = {name: build(name) for name in models}
    for j in judges:
        check_judge_name(j)
        if not is_rule_based(j) and j not in built:
            built[j] = build(j)
    return built


class _KeyPlaceholders(dict):  # type: ignore[type-arg]
    """The environment, with a placeholder for any unset *_API_KEY (dry runs send nothing)."""

    def get(self, key: str, default: Any = None) -> Any:
        value = super().get(key, default)
        if not value and key.endswith("_API_KEY"):
            return "dry-run-placeholder"
        return value


def _open_store(db: Path, *, must_exist: bool = False):  # type: ignore[no-untyped-def]
    """Open (and migrate) the results file; commands that only read need it to exist."""
    from deflectbench.store import Store, StoreError

    if must_exist and not db.exists():
        raise StoreError(f"no results at --db {db}: run `deflectbench run` (or `import`) first")
    return Store.open(db)


# -- spec -----------------------------------------------------------------------------------


@app.command()
def spec(
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    prompts: Annotated[
        bool, typer.Option("--prompts", help="Print every rendered prompt as JSON Lines.")
    ] = False,
    benchmark: Annotated[
        Path | None, typer.Option(help="A benchmark file other than the bundled v1.")
    ] = None,
) -> None:
    """The benchmark at a glance: claims by level, context and domain; templates by framing.

    Examples:

        deflectbench spec

        deflectbench spec --prompts > prompts.jsonl   # 1,200 lines for v1: claim_id, prompt_id, prompt
    """
    from deflectbench.benchmark import load_benchmark
    from deflectbench.benchmark.overview import benchmark_summary

    b = load_benchmark(benchmark)
    if prompts:
        out = sys.stdout
        for claim_id, prompt_id, prompt in b.prompts():
            out.write(
                json.dumps(
                    {"claim_id": claim_id, "prompt_id": prompt_id, "prompt": prompt},
                    ensure_ascii=False,
                )
                + "\n"
            )
        return
    summary = benchmark_summary(b)
    if as_json:
        console.print_json(data=summary)
        return
    console.print(f"[bold]{b.name} v{b.version}[/]  sha256 {b.sha256[:16]}…  speaker: {b.speaker}")
    console.print(
        f"{summary['n_claims']} claims x {summary['n_templates']} templates = "
        f"{summary['n_prompts']} prompts; {b.runs_per_cell} samples per cell at temperature "
        f"{b.generation_temperature}"
    )
    t = Table(title="Claims by controversy level and context")
    t.add_column("level")
    for ctx in ("us", "international"):
        t.add_column(ctx, justify="right")
    t.add_column("total", justify="right")
    for level, row in summary["claims_by_level_context"].items():
        t.add_row(
            level, *(str(row.get(c, 0)) for c in ("us", "international")), str(sum(row.values()))
        )
    console.print(t)
    t = Table(title="Claims by domain")
    t.add_column("domain")
    t.add_column("claims", justify="right")
    for domain, n in summary["claims_by_domain"].items():
        t.add_row(domain, str(n))
    console.print(t)
    t = Table(title="Templates by framing and requested fallacy")
    t.add_column("framing")
    t.add_column("#", justify="right")
    t.add_column("templates (requested fallacy)")
    for framing, items in summary["templates_by_framing"].items():
        t.add_row(
            framing, str(len(items)), ", ".join(f"{i['prompt_id']} ({i['fallacy']})" for i in items)
        )
    console.print(t)


# -- run ------------------------------------------------------------------------------------


class _Progress:
    """A rich progress bar per stage with rate, errors and ETA."""

    def __init__(self, enabled: bool) -> None:
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("[red]{task.fields[errors]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=err,
            disable=not enabled,
            transient=False,
        )

    def __enter__(self) -> _Progress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(*exc)  # type: ignore[arg-type]

    def stage(self, description: str, total: int) -> Callable[[bool], None]:
        task: TaskID = self.progress.add_task(description, total=total, rate="", errors="")
        counts = {"errors": 0}

        def advance(ok: bool) -> None:
            if not ok:
                counts["errors"] += 1
            t = self.progress.tasks[task]
            speed = t.speed or 0.0
            self.progress.update(
                task,
                advance=1,
                rate=f"{speed * 60:.0f}/min" if speed else "",
                errors=f"{counts['errors']} errors" if counts["errors"] else "",
            )

        return advance


@contextmanager
def _graceful_stop() -> Iterator[Callable[[], bool]]:
    """First Ctrl-C: stop dispatching, let requests in flight finish and be stored.
    Second Ctrl-C: stop at once (what is stored stays stored)."""
    state = {"stop": False}
    previous = signal.getsignal(signal.SIGINT)

    def handler(signum: int, frame: Any) -> None:
        if state["stop"]:
            raise KeyboardInterrupt
        state["stop"] = True
        err.print(
            "\n[yellow]stopping: finishing the requests in flight (Ctrl-C again to stop now)[/]"
        )

    signal.signal(signal.SIGINT, handler)
    try:
        yield lambda: state["stop"]
    finally:
        signal.signal(signal.SIGINT, previous)


@app.command()
def run(
    preset: Annotated[
        str | None,
        typer.Option(
            help="quick: 8 claims x 15 templates x 1 sample (120 cells); full: 80 x 15 x 5."
        ),
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            "-m",
            help="Model(s) to test, provider/model (repeat or comma-separate). Default local/smollm2.",
        ),
    ] = None,
    judge: Annotated[
        list[str] | None,
        typer.Option(
            "--judge",
            "-j",
            help="Judge(s) (repeat or comma-separate). Default: the release's pair when "
            "ANTHROPIC_API_KEY and OPENAI_API_KEY are set, else lexical.",
        ),
    ] = None,
    claims: Annotated[
        list[str] | None,
        typer.Option(help="Claim ids instead of the preset's, e.g. L1_US_01,L3_INT_02."),
    ] = None,
    templates: Annotated[
        list[str] | None,
        typer.Option(help="Template ids instead of all 15, e.g. explicit_coach_WA."),
    ] = None,
    runs: Annotated[
        int | None, typer.Option(help="Samples per cell (preset's by default).")
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="Base seed (0); each cell derives its own from it.")
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(help="Output token cap (default: 256 local, 2048 API as in the release)."),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            help="A TOML run configuration ([run], [providers.NAME], [prices]). Flags win.",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print requests, tokens and cost; send nothing.")
    ] = False,
    max_cost: Annotated[
        float | None,
        typer.Option(help="Stop cleanly once this many USD are spent (requests in flight finish)."),
    ] = None,
    cache: Annotated[
        bool | None,
        typer.Option(
            "--cache/--no-cache", help="Reuse identical requests already paid for (default on)."
        ),
    ] = None,
    retry_errors: Annotated[bool, typer.Option(help="Try stored error rows again.")] = False,
    write_report: Annotated[
        bool, typer.Option("--report/--no-report", help="End by writing the HTML report.")
    ] = True,
    report_out: Annotated[
        Path, typer.Option(help="Folder for the report written at the end.")
    ] = Path("deflectbench-report"),
    db: DbOption = DEFAULT_DB,
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = True,
) -> None:
    """Generate, judge and summarise: the whole pipeline, resumable.

    Only missing cells are generated and only unjudged generations judged, so re-running the same
    command after a crash or Ctrl-C picks up where it stopped, and re-running a finished one adds
    nothing. API keys come from the environment only (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...).

    Examples:

        deflectbench run                                  # quick preset, local/smollm2, lexical judge

        deflectbench run --claims L1_US_01 --templates explicit_coach_WA --runs 3

        deflectbench run --config run.toml --dry-run      # what it would cost, sending nothing

        deflectbench run -m openai/gpt-5.5 -j anthropic/claude-haiku-4-5-20251001 --max-cost 20
    """
    from deflectbench.benchmark import default_benchmark
    from deflectbench.config import RunFile, load_run_file, resolve_plan
    from deflectbench.cost import Price
    from deflectbench.judging.judges import default_judges
    from deflectbench.models.registry import DEFAULT_MODEL
    from deflectbench.runner import RunOptions, execute

    b = default_benchmark()
    file = load_run_file(config) if config is not None else RunFile()
    r = file.run

    def pick(flag: Any, from_file: Any, default: Any) -> Any:
        return flag if flag not in (None, []) else (from_file if from_file is not None else default)

    models = pick(_split(model), r.models, [DEFAULT_MODEL])
    judges = pick(_split(judge), r.judges, None) or list(default_judges(os.environ))
    plan = resolve_plan(
        b,
        models=models,
        judges=judges,
        preset=pick(preset, r.preset, "quick"),
        claims=pick(_split(claims), r.claims, None),
        templates=pick(_split(templates), r.templates, None),
        runs=pick(runs, r.runs, None),
        seed=pick(seed, r.seed, 0),
        max_tokens=pick(max_tokens, r.max_tokens, None),
        temperature=r.temperature,
    )
    prices = {k: Price(v.input_per_mtok, v.output_per_mtok) for k, v in file.prices.items()}
    built = _build_models(plan.models, plan.judges, file.providers, dry_run=dry_run)
    options = RunOptions(
        retry_errors=retry_errors,
        command="run",
        versions=_versions(),
        use_cache=pick(cache, r.cache, True),
        max_cost_usd=pick(max_cost, r.max_cost, None),
        prices=prices,
        config=file.model_dump(mode="json"),
    )
    if dry_run:
        _print_estimate(db, b, plan, built, options)
        return
    store = _open_store(db)
    try:
        with _Progress(progress) as bars, _graceful_stop() as should_stop:
            report = asyncio.run(
                execute(store, b, plan, built, options, stage=bars.stage, should_stop=should_stop)
            )
        scored = _scored_for_plan(store, b, plan)
        _print_run_report(report, scored, plan, db)
        if write_report and not report.stopped_early and len(scored):
            from deflectbench.report import write_report_after_run

            with err.status("writing the report…"):
                html = write_report_after_run(store, b, report_out)
            console.print(f"report: {html}", highlight=False, markup=False)
        if report.stopped_early:
            raise typer.Exit(130 if report.stop_reason == "interrupted" else 3)
        if _any_aborted([*report.generation.values(), *report.judging.values()]):
            raise typer.Exit(4)
    finally:
        store.close()


def _compact(n: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return f"{n:.0f}"


def _print_estimate(db: Path, b: Any, plan: Any, built: dict[str, Any], options: Any) -> None:
    """The dry run: nothing is sent and nothing is written."""
    from deflectbench.runner import estimate
    from deflectbench.store import Store

    store = Store.open(db, readonly=True) if db.exists() else Store.open(":memory:")
    try:
        rows = estimate(
            store, b, plan, built, retry_errors=options.retry_errors, prices=options.prices
        )
    finally:
        store.close()
    t = Table(title=f"Dry run: {len(plan.cells):,} cells per model; nothing was sent")
    t.add_column("role")
    t.add_column("name", overflow="fold")
    for c in ("done", "to send", "tok in", "tok out", "USD", "USD max"):
        t.add_column(c, justify="right")
    total, total_max, unknown = 0.0, 0.0, []
    for row in rows:
        if row.cost_usd is None:
            cost = cost_max = "?"
            if row.requests:
                unknown.append(row.name)
        else:
            cost, cost_max = f"{row.cost_usd:,.2f}", f"{row.cost_usd_max:,.2f}"
            total += row.cost_usd
            total_max += row.cost_usd_max or 0.0
        t.add_row(
            row.role,
            escape(row.name),
            f"{row.done:,}",
            f"{row.requests:,}",
            _compact(row.input_tokens),
            _compact(row.output_tokens),
            cost,
            cost_max,
        )
    console.print(t)
    console.print(
        f"estimated cost: {total:,.2f} USD expected, at most {total_max:,.2f} USD (every reply at "
        "max tokens), for the priced models",
        highlight=False,
    )
    if unknown:
        console.print(
            escape(
                f'no price known for {", ".join(unknown)}: add [prices."NAME"] with '
                "input_per_mtok and output_per_mtok (USD per million tokens) to the --config file"
            ),
            style="yellow",
            highlight=False,
        )
    if options.max_cost_usd is not None:
        console.print(f"budget: stops at {options.max_cost_usd:,.2f} USD", highlight=False)


def _any_aborted(results: Sequence[Any]) -> bool:
    return any(getattr(r, "aborted", None) for r in results)


def _print_aborted(name: str, res: Any) -> None:
    if res.aborted:
        err.print(
            f"{name} stopped early: {res.aborted}. Fix the cause (API key, model name, base_url, "
            "quota) and run the same command: the failed cells are kept as error rows and "
            "--retry-errors sends them again.",
            style="red",
            highlight=False,
            markup=False,
        )


def _scored_for_plan(store: Any, b: Any, plan: Any) -> Any:
    """The run's models, scored by the run's judges (what the table after a run shows)."""
    from deflectbench.analysis import scored_table

    scored = scored_table(store, b, judges=list(plan.judges))
    return scored[scored["model"].isin(plan.models)] if len(scored) else scored


def _print_run_report(report: Any, scored: Any, plan: Any, db: Path) -> None:
    from deflectbench.analysis.tables import framing_outcomes

    for m, res in report.generation.items():
        line = f"{m}: {res.ok} generated, {res.skipped} already stored, {res.errors} errors"
        if res.cached:
            line += f" ({res.cached} from the request cache)"
        console.print(line, highlight=False)
        for e in res.error_samples:
            console.print(f"  error: {e}", highlight=False, markup=False)
        _print_aborted(f"generation for {m}", res)
    for j, res in report.judging.items():
        line = f"judge {j}: {res.ok} judged, {res.errors} errors"
        if res.cached:
            line += f" ({res.cached} from the request cache)"
        console.print(line, highlight=False)
        for e in res.error_samples:
            console.print(f"  error: {e}", highlight=False, markup=False)
        _print_aborted(f"judge {j}", res)
    rows = framing_outcomes(scored)
    if rows:
        for model_name, table_rows in rows.items():
            t = Table(
                title=f"{model_name}: outcome by framing (consensus of {', '.join(plan.judges)})"
            )
            t.add_column("framing")
            t.add_column("n", justify="right")
            for col in ("refusal", "soft refusal", "labeled", "clean", "other"):
                t.add_column(col, justify="right")
            for r in table_rows:
                t.add_row(
                    r["framing"],
                    str(r["n"]),
                    *(
                        f"{100 * r[k]:.0f}%"
                        for k in (
                            "refusal",
                            "soft_refusal",
                            "labeled_compliance",
                            "clean_compliance",
                            "other",
                        )
                    ),
                )
            console.print(t)
    if report.spent_usd:
        console.print(
            f"spent: {report.spent_usd:,.4f} USD (priced requests of this run)", highlight=False
        )
    if report.stop_reason == "budget":
        console.print(
            "[yellow]stopped at the --max-cost budget: what finished is stored; raise the budget and "
            "run the same command to continue[/]"
        )
    elif report.stopped_early:
        console.print("[yellow]stopped early: run the same command again to finish[/]")
    console.print(
        f"results: {db.resolve()}   (see `deflectbench status --db {db}`)", highlight=False
    )


@app.command()
def judge(
    judge_names: Annotated[
        list[str] | None,
        typer.Option("--judge", "-j", help="Judge(s), e.g. lexical or openai/gpt-5.4-mini."),
    ] = None,
    retry_errors: Annotated[bool, typer.Option(help="Retry judge requests that failed.")] = False,
    db: DbOption = DEFAULT_DB,
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = True,
) -> None:
    """Judge every stored generation a judge has not judged yet (blind: claim and response only).

    Example:

        deflectbench judge --judge lexical
    """
    from deflectbench.benchmark import default_benchmark
    from deflectbench.runner import judge_all

    b = default_benchmark()
    names = _split(judge_names) or ["lexical"]
    built = _build_models([], names)
    store = _open_store(db)
    try:
        with _Progress(progress) as bars, _graceful_stop() as should_stop:
            results = asyncio.run(
                judge_all(
                    store,
                    b,
                    names,
                    built,
                    None,
                    retry_errors=retry_errors,
                    stage=bars.stage,
                    should_stop=should_stop,
                )
            )
        for j, res in results.items():
            console.print(f"judge {j}: {res.ok} judged, {res.errors} errors", highlight=False)
            _print_aborted(f"judge {j}", res)
    finally:
        store.close()
    if _any_aborted(list(results.values())):
        raise typer.Exit(4)


# -- status ---------------------------------------------------------------------------------


@app.command()
def status(
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    db: DbOption = DEFAULT_DB,
) -> None:
    """What the results file holds: per model cells planned / generated / errors; per judge
    generations judged / parse errors.

    Example:

        deflectbench status --json
    """
    store = _open_store(db)
    try:
        st = store.status()
    finally:
        store.close()
    if as_json:
        console.print_json(data=st)
        return
    t = Table(title=f"Generations in {db}")
    for c in ("model", "planned", "ok", "errors", "missing"):
        t.add_column(c, justify="left" if c == "model" else "right")
    for m, s in st["models"].items():
        t.add_row(
            m,
            str(s["planned"]),
            str(s["ok"]),
            str(s["errors"]),
            str(max(0, s["planned"] - s["ok"] - s["errors"])),
        )
    console.print(t)
    t = Table(title="Judgments")
    for c in ("judge", "judged", "parse errors", "errors"):
        t.add_column(c, justify="left" if c == "judge" else "right")
    for j, s in st["judges"].items():
        t.add_row(j, str(s["judged"]), str(s["parse_errors"]), str(s.get("errors", 0)))
    console.print(t)


# -- analyze --------------------------------------------------------------------------------


@app.command()
def analyze(
    json_out: Annotated[
        Path | None,
        typer.Option(
            "--json",
            metavar="FILE",
            help="Also write the full summary (every table, CIs, counts) as JSON to FILE; `-` prints only the JSON.",
        ),
    ] = None,
    consensus: ConsensusOption = "mean",
    judge: AnalysisJudgesOption = None,
    judge_values: JudgeValuesOption = "rules",
    resamples: ResamplesOption = 1000,
    seed: Annotated[
        int, typer.Option(help="Seed of the bootstrap draws (same seed, same CIs).")
    ] = 0,
    db: DbOption = DEFAULT_DB,
) -> None:
    """The paper's analysis of a results file: each model's signature with 95% CIs, judge
    agreement (kappa beside AC1), refusal by framing, chi-square and TOST tests.

    A generation counts as scored once every judge parsed it (the paper: 24,000 attempted,
    23,990 valid, 23,981 scored); the counts at each step are printed. Outcomes, in order:
    refusal, soft refusal, labeled compliance, clean compliance, other. Works the same on your
    own runs and on the imported public release.

    Examples:

        deflectbench analyze

        deflectbench analyze --json summary.json --consensus all

        deflectbench analyze --consensus judge:lexical --json - | jq '.models[].outcomes.refusal'

        deflectbench analyze --db paper.db --judge-values said   # the release's exact method
    """
    from deflectbench.analysis import analyze as analyze_store
    from deflectbench.benchmark import default_benchmark
    from deflectbench.cli.tables import render_terminal

    store = _open_store(db, must_exist=True)
    try:
        summary = analyze_store(
            store,
            default_benchmark(),
            consensus=consensus,
            judges=_split(judge) or None,
            n_resamples=resamples,
            seed=seed,
            values=judge_values,
        )
    finally:
        store.close()
    c = summary["counts"]
    if c["scored"] == 0:
        raise UserError(
            f"nothing to analyze in --db {db}: {c['attempted']} generations attempted, "
            f"{c['valid_generations']} valid, 0 judged by every judge "
            f"({', '.join(c['judges']) or 'no judges'}); run `deflectbench judge` first, or pick "
            "judges with --judge"
        )
    text = json.dumps(summary, indent=2, ensure_ascii=False, allow_nan=False)
    if json_out is not None and str(json_out) == "-":
        sys.stdout.write(text + "\n")
        return
    if json_out is not None:
        try:
            json_out.write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            raise UserError(f"cannot write --json {json_out}: {exc.strerror or exc}") from None
    for table in render_terminal(summary):
        console.print(table)
    if json_out is not None:
        console.print(f"summary: {json_out.resolve()}", highlight=False, markup=False)


# -- report ---------------------------------------------------------------------------------


@app.command()
def report(
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", help="Folder for report.html, report.md, tables/ and figures/."
        ),
    ] = Path("deflectbench-report"),
    consensus: ConsensusOption = "mean",
    judge: AnalysisJudgesOption = None,
    judge_values: JudgeValuesOption = "rules",
    resamples: ResamplesOption = 1000,
    seed: Annotated[
        int, typer.Option(help="Seed of the bootstrap draws and of the example responses shown.")
    ] = 0,
    db: DbOption = DEFAULT_DB,
) -> None:
    """The paper's figures and tables for a results file, as one self-contained web page.

    Writes `DIR/report.html` (figures embedded, no scripts, nothing loaded from the network: it
    opens offline and can be mailed), `DIR/report.md`, `DIR/tables/*.csv` and
    `DIR/figures/*.png|svg|pdf`, then prints the path of report.html. The same results file and
    options give identical files. Model output in the examples is shown as plain text, never as
    HTML. An empty results file gives a page that says what to run first.

    Examples:

        deflectbench report

        deflectbench report --out paper-report --consensus judge:openai/gpt-5.4-mini
    """
    from deflectbench.benchmark import default_benchmark
    from deflectbench.report import build_report

    store = _open_store(db, must_exist=True)
    try:
        with err.status("building the report…"):
            paths = build_report(
                store,
                default_benchmark(),
                out,
                consensus=consensus,
                judges=_split(judge) or None,
                n_resamples=resamples,
                seed=seed,
                values=judge_values,
            )
    finally:
        store.close()
    console.print(str(paths.html), highlight=False, markup=False, soft_wrap=True)


# -- import / export ------------------------------------------------------------------------


@app.command("import")
def import_(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Release files or folders (searched recursively): generations_*.jsonl, evals_*.jsonl, also .gz.",
            show_default=False,
        ),
    ],
    db: DbOption = DEFAULT_DB,
) -> None:
    """Import the public release's generations and judge scores, so the analysis runs on them.

    Generations are read before judge records, whatever the order given. Importing the same
    files again adds nothing. A garbled line or a bad record is reported as file:line and
    skipped, the rest of its file is imported (exit code 1 when anything was skipped).

    Examples:

        deflectbench import release/data/ --db paper.db          # the release's data folder

        deflectbench import generations_gpt_5_5.jsonl evals_gpt_5_4_mini.jsonl --db paper.db
    """
    from deflectbench.interop import import_paths

    store = _open_store(db)
    try:
        report = import_paths(store, paths)
    finally:
        store.close()
    t = Table(title=f"Imported into {db}")
    t.add_column("file", overflow="fold")
    for c in ("kind", "lines", "new", "already present", "skipped"):
        t.add_column(c, justify="left" if c == "kind" else "right")
    for f in report.files:
        t.add_row(
            escape(str(f.path)),
            f.kind,
            str(f.read),
            str(f.imported),
            str(f.already_present),
            str(f.skipped),
        )
    console.print(t)
    console.print(report.summary(), highlight=False, markup=False)
    if report.problems:
        shown = 20
        for problem in report.problems[:shown]:
            err.print(f"skipped: {problem}", highlight=False, markup=False, soft_wrap=True)
        if len(report.problems) > shown:
            err.print(f"... and {len(report.problems) - shown} more problems", highlight=False)
        raise typer.Exit(1)


@app.command()
def export(
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder to write into (created if missing).")
    ],
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            help="release: the public release's JSON Lines files; jsonl, csv or parquet: two flat tables (generations, judgments).",
        ),
    ] = "release",
    db: DbOption = DEFAULT_DB,
) -> None:
    """Write the results file out: in the release's format (so tools made for the paper's data
    read our runs) or as flat tables for pandas, R or a spreadsheet.

    release writes data/generations/generations_<model>.jsonl and data/evals/evals_<judge>.jsonl;
    an imported release comes back out byte for byte.

    Examples:

        deflectbench export --format release --out my-run/

        deflectbench export --format parquet --out tables/ --db paper.db
    """
    from deflectbench.interop import export as export_files

    store = _open_store(db, must_exist=True)
    try:
        written = export_files(store, out, fmt)
    finally:
        store.close()
    for path in written:
        console.print(str(path), highlight=False, markup=False)
    console.print(f"{len(written)} files written to {out}", highlight=False, markup=False)


@app.callback(invoke_without_command=True)
def _root(
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
) -> None:
    if version:
        console.print(f"deflectbench {__version__}")
        raise typer.Exit()
