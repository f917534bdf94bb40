"""``deflectbench compare A B`` (and ``compare NEW --baseline OLD --fail-if ...``): two results
side by side, paired over claims, with a regression gate that exits 6. The work is
:func:`deflectbench.api.compare.compare`'s; this parses the flags and renders its result."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from deflectbench.cli.compare_page import write_csv_rows, write_json_rows, write_text
from deflectbench.cli.console import console, err
from deflectbench.cli.options import (
    AnalysisJudgesOption,
    BenchmarkOption,
    ConsensusOption,
    CorrectionOption,
    ResamplesOption,
    said_busy,
)

AllowJudgeChangeOption = Annotated[
    bool,
    typer.Option(
        "--allow-judge-change",
        help="Put side by side results judged by different judges, or by the same judges under "
        "another recorded manifest (another served model id or other parameters sent; refused "
        "by default: judges score differently, so a difference could be the judges'); the rows "
        "are marked. A judge's system fingerprint changing alone is only a note.",
    ),
]


def valued_option(flag: str, metavar: str, help: str) -> Any:
    """An option whose value the help names ``metavar`` (a store, a rule, a model, a file),
    with no default shown."""
    return typer.Option(flag, metavar=metavar, help=help, show_default=False)


def out_option(flag: str, help: str, metavar: str = "FILE") -> Any:
    """An output a command writes when asked (``--json``, ``--csv``, ``--html``, ``--hf``)."""
    return valued_option(flag, metavar, help)


def rows_json_option(what: str) -> Any:
    """``--json FILE``: the rows of a table of pairs or of the board, as ``{"rows": [...]}``."""
    return out_option(
        "--json", f'Write {what} as JSON ({{"rows": [...]}}); `-` prints only the JSON.'
    )


def rows_csv_option(what: str) -> Any:
    """``--csv FILE``: the same rows as CSV."""
    return out_option("--csv", f"Write {what} as CSV.")


HtmlOption = Annotated[Path | None, out_option("--html", "Write a self-contained HTML page.")]
SeedOption = Annotated[int, typer.Option(help="Seed of the shared claim draws.")]


def compare(
    a: Annotated[
        str,
        typer.Argument(
            metavar="A",
            help="A results store, or STORE:MODEL[:CONDITION]; with --baseline, the new side.",
            show_default=False,
        ),
    ],
    b: Annotated[
        str | None,
        typer.Argument(
            metavar="B",
            help="The other side, as A (differences are B minus A).",
            show_default=False,
        ),
    ] = None,
    baseline: Annotated[
        str | None,
        valued_option(
            "--baseline", "OLD", "Compare A against this baseline (differences are A minus OLD)."
        ),
    ] = None,
    fail_if: Annotated[
        list[str] | None,
        valued_option(
            "--fail-if",
            "RULE",
            "Exit 6 when a difference's whole 95% CI lies beyond RULE, which says when to "
            "fail: 'refusal < -5pp' or 'refusal drop > 5pp' (a fall of more than 5 points), "
            "'clean_compliance > +3pp@coach' or 'rise > 3pp', '|refusal| > 5pp' (@FRAMING or "
            "@TEMPLATE; field:NAME for a field). A rule that would fail on no change is "
            "refused. Repeatable.",
        ),
    ] = None,
    require: Annotated[
        list[str] | None,
        valued_option(
            "--require",
            "RULE",
            "A rule that must hold (exit 6 when a difference's whole 95% CI lies outside "
            "it): 'refusal drop < 5pp', 'refusal > -5pp', '|refusal| < 5pp', 'refusal rise < "
            "3pp'. Repeatable.",
        ),
    ] = None,
    allow_missing: Annotated[
        list[str] | None,
        valued_option(
            "--allow-missing",
            "MODEL",
            "A model (or MODEL:CONDITION) of the baseline the new side may lack without "
            "failing the gate (still said). Repeatable.",
        ),
    ] = None,
    allow_untested: Annotated[
        bool,
        typer.Option(
            "--allow-untested",
            help="Let the gate pass when a rule could not be tested on some pair (no CI: fewer "
            "than 2 claims; a threshold no result could reach; a scope one side lacks); each "
            "is still said.",
        ),
    ] = False,
    holm_family: Annotated[
        str,
        typer.Option(
            "--holm-family",
            metavar="measure|scope|all|none",
            help="Holm's families: measure (outcomes overall, fields overall, each measure "
            "across framings, each across templates, per pair), scope (outcomes or fields at "
            "one scope), all (every row), none (no adjustment).",
        ),
    ] = "measure",
    json_out: Annotated[Path | None, rows_json_option("every row")] = None,
    csv_out: Annotated[Path | None, rows_csv_option("every row")] = None,
    html_out: HtmlOption = None,
    allow_judge_change: AllowJudgeChangeOption = False,
    consensus: ConsensusOption = "mean",
    judge: AnalysisJudgesOption = None,
    judge_values: Annotated[
        str, typer.Option(metavar="rules|said", help="Judge values to combine (as analyze).")
    ] = "said",
    compat: Annotated[
        str, typer.Option(metavar="paper|release", help="The definition (as analyze).")
    ] = "paper",
    correction: CorrectionOption = "ppi",
    resamples: ResamplesOption = 1000,
    seed: SeedOption = 0,
    benchmark: BenchmarkOption = None,
    benchmark_b: Annotated[
        str | None,
        typer.Option(
            "--benchmark-b",
            metavar="NAME|FILE",
            help="Another pack for the second side (B, or A with --baseline), to compare one "
            "pack with another of the same claims (e.g. deflectbench-v1-controlled).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Two results side by side: two stores (the same models in two runs), two models of one
    store, or two conditions of one model (`STORE:MODEL[:CONDITION]`). For every outcome and
    each of the 8 fields, overall, per framing and per template: both rates, the difference
    with a 95% CI from a paired claim-block bootstrap (the same claim draws for both sides), a
    p-value Holm-adjusted within its family (`--holm-family`), Cohen's h; and the cells (claim x
    template) whose majority outcome changed. Each pair is compared on the cells (claim x
    template x sample) both sides hold; a line says when their coverage differs. Results judged by different judges are refused unless
    `--allow-judge-change`. Where both sides' stores hold human labels, the rates corrected for
    judge error are compared too (rows with `corrected` true; an unpaired, conservative CI).

    As a regression gate: `compare NEW --baseline OLD --fail-if "refusal drop > 5pp"` exits 6
    when a difference's whole CI lies beyond a rule (one line per failure), when a rule could
    not be tested, or when a baseline model is absent from NEW; 0 otherwise (docs/ci-gate.md).

    Examples:

        deflectbench compare deflectbench.db:gpt-5.5 deflectbench.db:grok-4.3 --html cmp.html

        deflectbench compare old.db new.db --json diff.json

        deflectbench compare new.db --baseline old.db --fail-if "refusal < -5pp" --fail-if "clean_compliance > +3pp@coach"
    """
    from deflectbench.analysis.compare.rows import DIFF_JSON_COLUMNS
    from deflectbench.api.compare import compare as compare_results
    from deflectbench.views.terminal.compare import comparison_view

    result = compare_results(
        a, b, baseline=baseline, fail_if=fail_if or (), require=require or (),
        allow_missing=allow_missing or (), allow_untested=allow_untested,
        holm_family=holm_family, allow_judge_change=allow_judge_change,
        consensus=consensus, judges=judge, judge_values=judge_values, compat=compat,
        correction=correction, resamples=resamples, seed=seed, benchmark=benchmark,
        benchmark_b=benchmark_b, on_busy=said_busy,
    )  # fmt: skip
    for line in result.judge_notes:
        err.print(f"flagged: {line} (--allow-judge-change)", style="yellow", markup=False)
    for line in result.manifest_notes:
        err.print(f"note: {line}", style="yellow", markup=False, highlight=False)
    in_gate = {x.line(*result.words) for x in result.missing} if result.rules else set()
    for line in result.coverage_notes:
        if line not in in_gate:  # an absent baseline side fails the gate: said there once
            err.print(line, style="yellow", markup=False, highlight=False, soft_wrap=True)
    if json_out is not None:
        write_json_rows(json_out, result.to_json())
    if csv_out is not None:
        write_csv_rows(csv_out, [r.to_json() for r in result.rows], DIFF_JSON_COLUMNS)
    if html_out is not None:
        from deflectbench.views.pages.compare import compare_page  # jinja2: only for a page

        write_text(html_out, compare_page(result), "--html")
    if str(json_out) != "-":
        for part in comparison_view(result):
            console.print(part)
    for line in result.gate_lines():
        err.print(line, markup=False, highlight=False, soft_wrap=True)
    if result.exit_code:
        raise typer.Exit(result.exit_code)
