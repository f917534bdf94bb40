"""``deflectbench analyze``, ``report``, ``import`` and ``export``: read and move results (the
work is :mod:`deflectbench.api.results`'; the tables, :mod:`deflectbench.views.terminal`'s)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from deflectbench.api._common import AnalysisSettings
from deflectbench.cli.console import UserError, console, err, print_outcome
from deflectbench.cli.flags import flag_command
from deflectbench.cli.options import (
    DEFAULT_DB,
    AnalysisJudgesOption,
    BenchmarkOption,
    ConsensusOption,
    CorrectionOption,
    DbOption,
    JudgeValuesOption,
    PoolModelsOption,
    ResamplesOption,
    json_file_option,
    said_busy,
    write_json,
)

__all__ = ["JudgeValuesOption", "analyze", "export", "import_", "report"]

#: ``--compat``: the paper's definition, or the release script's numbers.
CompatOption = Annotated[
    str,
    typer.Option(
        metavar="paper|release",
        help="paper (default): the paper's definition. release: what the release's analysis "
        "script computes, with its five quirks (keeps generations one judge parsed, outcomes by "
        "overwriting so soft refusal/labeled/clean beat refusal, -1 averaged as a number, "
        "generations no judge parsed kept as other, judge records of failed requests in "
        "agreement); see `deflectbench audit` for what each moves.",
    ),
]
AllowPackChangeOption = Annotated[
    bool,
    typer.Option(
        "--allow-pack-change",
        help="Analyse answers made with other content of the same pack id (an edited pack "
        "file) with this file's claims and templates, flagged, instead of refusing them.",
    ),
]


@dataclass(frozen=True)
class AnalysisFlags:
    """The options ``analyze`` and ``report`` share: the analysis settings, the pack, the
    results file."""

    consensus: ConsensusOption = "mean"
    judge: AnalysisJudgesOption = None
    judge_values: JudgeValuesOption = "said"
    compat: CompatOption = "paper"
    correction: CorrectionOption = "ppi"
    pool_models: PoolModelsOption = False
    resamples: ResamplesOption = 1000
    seed: Annotated[
        int, typer.Option(help="Seed of the bootstrap draws (same seed, same CIs).")
    ] = 0
    benchmark: BenchmarkOption = None
    db: DbOption = DEFAULT_DB
    allow_pack_change: AllowPackChangeOption = False

    def settings(self) -> AnalysisSettings:
        """The keywords of :func:`deflectbench.api.results.analyze` and ``report``."""
        return {
            "consensus": self.consensus,
            "judges": self.judge,
            "judge_values": self.judge_values,
            "compat": self.compat,
            "correction": self.correction,
            "pool_models": self.pool_models,
            "resamples": self.resamples,
            "seed": self.seed,
            "allow_pack_change": self.allow_pack_change,
        }


@dataclass(frozen=True)
class ReportAnalysisFlags(AnalysisFlags):
    """``report``'s: the same, the seed also picking the example responses."""

    seed: Annotated[
        int, typer.Option(help="Seed of the bootstrap draws and of the example responses shown.")
    ] = 0


@dataclass(frozen=True)
class AnalyzeFlags:
    json_out: Annotated[
        Path | None, json_file_option("the full summary (every table, CIs, counts)")
    ] = None
    analysis: AnalysisFlags = AnalysisFlags()


@dataclass(frozen=True)
class ReportFlags:
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", help="Folder for report.html, report.md, tables/ and figures/."
        ),
    ] = Path("deflectbench-report")
    figures: Annotated[
        str,
        typer.Option(
            "--figures",
            metavar="svg|png|pdf|all",
            help="Figure files to write: svg (default; drawn by the report itself and embedded "
            "in report.html), png or pdf (also written, drawn with matplotlib: slower), or all.",
        ),
    ] = "svg"
    analysis: ReportAnalysisFlags = ReportAnalysisFlags()


def _quiet(line: str) -> None:
    """A line on stderr in yellow, printed as it is (no markup)."""
    err.print(line, style="yellow", highlight=False, markup=False)


@flag_command(AnalyzeFlags)
def analyze(f: AnalyzeFlags) -> None:
    """The paper's analysis of a results file: each model's signature with 95% CIs, judge
    agreement (kappa beside AC1), refusal by framing, level and context, the fallacy-type
    swing, coach framing (E.3), chi-square and TOST tests.

    By default the paper's definition: the judges' values as they said them, a field is 1
    when its mean over the judges that scored it is at least 0.5, a generation counts once
    every judge parsed it
    (the paper: 24,000 attempted, 23,990 valid, 23,981 scored), outcomes in the order refusal,
    soft refusal, labeled compliance, clean compliance, other. `--compat release` gives the
    release script's numbers instead. Works the same on your own runs and on the imported
    public release. An analysis is of one benchmark pack: the one the store holds, or
    `--benchmark NAME` when it holds several (then the others are compared with it, never
    pooled: the JSON's `packs`). When the store holds human labels of the pack, each rate is
    also given corrected for judge error (PPI++ by default; `--correction`), beside the
    judged and the labels-only rate, each with its CI and n (docs/validity.md).

    Examples:

        deflectbench analyze

        deflectbench analyze --json summary.json --consensus all

        deflectbench analyze --consensus judge:lexical --json - | jq .counts

        deflectbench analyze --db paper.db --compat release  # the release script's numbers
    """
    from deflectbench.api.results import analyze as run_analysis

    a, json_out = f.analysis, f.json_out
    s = run_analysis(a.db, benchmark=a.benchmark, on_busy=said_busy, **a.settings())
    if s.pack_change is not None:
        _quiet(f"flagged: {s.pack_change}")
    if s.n_scored == 0:
        raise UserError(
            f"nothing to analyze in --db {a.db}: {s.n_attempted} generations attempted, "
            f"{s.n_valid} valid, 0 judged by every judge ({', '.join(s.judges) or 'no judges'}); "
            "run `deflectbench judge` first, or pick judges with --judge"
        )
    if write_json(s.to_json(), json_out):
        return
    # the terminal's views: not needed when the JSON went to stdout
    from deflectbench.views.terminal.cascade import cascade_terminal
    from deflectbench.views.terminal.labels import corrected_terminal, no_labels_line
    from deflectbench.views.terminal.tables import render_terminal
    from deflectbench.views.terminal.turns import turn_terminal
    from deflectbench.views.terminal.validity_checks import validity_check_terminal

    for part in [*render_terminal(s), *corrected_terminal(s), *cascade_terminal(s)]:
        console.print(part)
    if s.corrected is None and a.correction != "none":
        _quiet(no_labels_line(a.db, s.benchmark.pack))
    if s.packs is not None:  # a store holding several packs
        from deflectbench.views.terminal.packs import pack_comparison_tables, packs_note

        for table in pack_comparison_tables(s.packs):
            console.print(table)
        _quiet(packs_note(s.packs, s.benchmark.pack))
    for table in turn_terminal(s.turns):
        console.print(table)
    for part in validity_check_terminal(s):
        console.print(part)
    if note := s.elsewhere_note:
        console.print(note, style="yellow", highlight=False, markup=False)
    if json_out is not None:
        console.print(f"summary: {json_out.resolve()}", highlight=False, markup=False)


@flag_command(ReportFlags)
def report(f: ReportFlags) -> None:
    """The paper's figures and tables for a results file, as one self-contained web page.

    Writes `DIR/report.html` (figures embedded, no scripts, nothing loaded from the network: it
    opens offline and can be mailed), `DIR/report.md`, `DIR/tables/*.csv` and `DIR/figures/*.svg`
    (`--figures png`, `pdf` or `all` add PNG or PDF files, drawn with matplotlib), then prints
    the path of report.html. The same results file and options give identical files. Model
    output in the examples is shown as plain text, never as HTML. An empty results file gives a
    page that says what to run first.

    Examples:

        deflectbench report

        deflectbench report --out paper-report --consensus judge:openai/gpt-5.4-mini

        deflectbench report --out release-report --compat release

        deflectbench report --figures all   # also PNG and PDF files of every figure
    """
    from deflectbench.api.results import report as write_report

    a = f.analysis
    with err.busy("building the report…"):
        paths = write_report(
            a.db,
            f.out,
            benchmark=a.benchmark,
            figures=f.figures,
            on_busy=said_busy,
            **a.settings(),
        )
    console.print(str(paths.html), highlight=False, markup=False, soft_wrap=True)


def import_(
    paths: Annotated[
        list[Path],
        typer.Argument(
            metavar="PATHS",
            help="Release files or folders (searched recursively): `generations_*.jsonl` and "
            "`evals_*.jsonl`, also gzipped (`.jsonl.gz`); or Inspect logs of the deflectbench "
            "task (`*.eval`, `*.json`, or a folder of them); or folders written by `export "
            "--format hf`.",
            show_default=False,
        ),
    ],
    benchmark: BenchmarkOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Import the public release's generations and judge scores, so the analysis runs on them.

    Generations are read before judge records, whatever the order given. Importing the same
    files again adds nothing. A garbled line or a bad record is reported as file:line and
    skipped, the rest of its file is imported (exit code 1 when anything was skipped).
    Inspect logs of the `deflectbench/deflectbench` task are imported too: each epoch as a
    generation, each judge's reply as a judgment, under a condition named from the log's
    settings (e.g. `inspect-temp1-maxdefault-noseed`).

    Examples:

        deflectbench import release/data/ --db paper.db   # the release's files

        deflectbench import generations_gpt_5_5.jsonl evals_gpt_5_4_mini.jsonl

        deflectbench import logs/ --db inspect.db   # Inspect logs (docs/inspect.md)

        deflectbench import hf-results/ --db copy.db   # a folder from `export --format hf`
    """
    from deflectbench.api.results import import_ as run_import
    from deflectbench.views.terminal.imports import import_table

    result = run_import(paths, db=db, benchmark=benchmark, on_busy=said_busy)
    console.print(import_table(result))
    print_outcome(result, "skipped")


def export(
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder to write into (created if missing).")
    ],
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            metavar="release|jsonl|csv|parquet|hf",
            help="release: the public release's JSON Lines files; jsonl, csv or parquet: two flat "
            "tables (generations, judgments); hf: a Hugging Face dataset folder.",
        ),
    ] = "release",
    what: Annotated[
        str,
        typer.Option(
            metavar="results|benchmark",
            help="With --format hf: results (default; the store's) or benchmark (its claims, "
            "templates and rendered prompts; no store needed).",
        ),
    ] = "results",
    benchmark: BenchmarkOption = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Write the results file out: in the release's format (so tools made for the paper's data
    read our runs) or as flat tables for pandas, R or a spreadsheet.

    `--format release` writes `data/generations/generations_*.jsonl` (one file per model) and
    `data/evals/evals_*.jsonl` (one per judge); an imported release comes back out byte for byte.
    The flat tables are `generations.FORMAT` (one row per generation: claim level, context,
    domain, framing, fallacy, condition, each judge's fields, consensus and outcome) and
    `judgments.FORMAT` (e.g. `generations.csv`; columns in docs/exports.md). `--format hf`
    writes a folder that `datasets.load_dataset` reads (Parquet and a dataset card), for you to
    push to the Hub; `deflectbench import` reads it back.

    Examples:

        deflectbench export --format release --out my-run/

        deflectbench export --format parquet --out tables/ --db paper.db

        deflectbench export --format hf --out hf-results/

        deflectbench export --format hf --what benchmark --out hf-benchmark/
    """
    from deflectbench.api.results import export as run_export

    result = run_export(db, out, format=fmt, what=what, benchmark=benchmark, on_busy=said_busy)
    for path in result.files:
        console.print(str(path), highlight=False, markup=False)
    console.print(result.summary(), highlight=False, markup=False)
