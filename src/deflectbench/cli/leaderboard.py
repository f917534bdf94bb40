"""``deflectbench leaderboard STORE...``: every model x condition x pack of the stores, ranked
by one rate with CIs and groups not significantly different (paired tests, letters). The work
is :func:`deflectbench.api.compare.leaderboard`'s; this parses the flags and renders it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from deflectbench.cli.compare import (
    AllowJudgeChangeOption,
    HtmlOption,
    SeedOption,
    out_option,
    rows_csv_option,
    rows_json_option,
)
from deflectbench.cli.compare_page import write_csv_rows, write_json_rows, write_text
from deflectbench.cli.console import console, err
from deflectbench.cli.options import (
    AnalysisJudgesOption,
    BenchmarkOption,
    ConsensusOption,
    ResamplesOption,
    said_busy,
)


def leaderboard(
    stores: Annotated[
        list[Path],
        typer.Argument(
            metavar="STORE...", help="Results stores (SQLite files).", show_default=False
        ),
    ],
    by: Annotated[
        str,
        typer.Option(
            "--by",
            metavar="MEASURE",
            help="The rate to rank by: an outcome (refusal, soft_refusal, labeled_compliance, "
            "clean_compliance, other) or a field (field:NAME where they share a name).",
        ),
    ] = "refusal",
    ascending: Annotated[
        bool, typer.Option("--ascending", help="Lowest rate first (default: highest first).")
    ] = False,
    json_out: Annotated[Path | None, rows_json_option("the board")] = None,
    csv_out: Annotated[Path | None, rows_csv_option("the board")] = None,
    html_out: HtmlOption = None,
    hf_out: Annotated[
        Path | None,
        out_option(
            "--hf",
            "Write a Hugging Face dataset folder (leaderboard.csv and a card whose config names "
            "it); nothing is uploaded: you push the folder.",
            metavar="DIR",
        ),
    ] = None,
    allow_judge_change: AllowJudgeChangeOption = False,
    consensus: ConsensusOption = "mean",
    judge: AnalysisJudgesOption = None,
    resamples: ResamplesOption = 1000,
    seed: SeedOption = 0,
    benchmark: BenchmarkOption = None,
) -> None:
    """Every model x condition x pack of the stores, ranked by one rate (`--by`, refusal by
    default) with its 95% CI and groups of rows not significantly different: a compact letter
    display from pairwise paired claim-block bootstrap tests within a pack, Holm-adjusted.

    Judges must match: rows judged by other judges than most rows are marked `*` and not
    ranked, unless `--allow-judge-change` (then ranked with the others, still marked).

    Examples:

        deflectbench leaderboard deflectbench.db

        deflectbench leaderboard run1.db run2.db paper.db --by clean_compliance --html board.html
    """
    from deflectbench.analysis.compare.rows import BOARD_JSON_COLUMNS
    from deflectbench.api.compare import leaderboard as board_of
    from deflectbench.interop.card import leaderboard_card
    from deflectbench.views.pages.leaderboard import leaderboard_page
    from deflectbench.views.terminal.leaderboard import leaderboard_view

    lb = board_of(
        stores, by=by, ascending=ascending, allow_judge_change=allow_judge_change,
        consensus=consensus, judges=judge, resamples=resamples, seed=seed, benchmark=benchmark,
        on_busy=said_busy,
    )  # fmt: skip
    for note in lb.notes:
        err.print(f"flagged: {note}", style="yellow", markup=False, highlight=False)
    rows = [r.to_json() for r in lb.rows]
    if json_out is not None:
        write_json_rows(json_out, lb.to_json())
    if csv_out is not None:
        write_csv_rows(csv_out, rows, BOARD_JSON_COLUMNS)
    if hf_out is not None:
        write_csv_rows(hf_out / "leaderboard.csv", rows, BOARD_JSON_COLUMNS)
        write_text(hf_out / "README.md", leaderboard_card(lb), "--hf card")
    if html_out is not None:
        write_text(html_out, leaderboard_page(lb), "--html")
    if str(json_out) != "-":
        for part in leaderboard_view(lb):
            console.print(part)
