"""``deflectbench import-batch RESULTS.jsonl``: a batch engine's output for a ``run
--batch-file`` file taken back, each cell once (:mod:`deflectbench.api.batch_file`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from deflectbench.cli.options import DEFAULT_DB, DbOption, json_file_option
from deflectbench.cli.run_output import show


def import_batch(
    results: Annotated[
        Path,
        typer.Argument(
            metavar="RESULTS.jsonl",
            help="The output file of your batch engine (OpenAI batch output JSONL) for a file "
            "written by `run --batch-file`.",
            show_default=False,
        ),
    ],
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="The run configuration `run --batch-file` used."),
    ] = None,
    accept_model: Annotated[
        list[str] | None,
        typer.Option(
            "--accept-model",
            metavar="ID",
            help="Import replies that name this model id although their cells were written "
            "for another (an engine serving the model under another name); repeatable.",
        ),
    ] = None,
    json_out: Annotated[Path | None, json_file_option("the counts")] = None,
    db: DbOption = DEFAULT_DB,
) -> None:
    """Take a batch engine's output back: each cell of a `run --batch-file` file once.

    Answers, non-answers (length, content filter) and per-line errors (the engine's message
    kept) are stored as batch mode stores them; a cell of the file with no line in the output
    is stored as a "no result line" error row, which a later output file with its line
    replaces (an engine's output in parts: import each). Lines for cells of no batch file of
    this store (another part's or run's), repeated lines and cells answered before are counted
    and skipped; a reply naming another model is not imported (exit 1) unless
    --accept-model says so. Then judge: `deflectbench judge`, or the same `run` without
    --batch-file.

    Example:

        deflectbench import-batch results.jsonl --db results.db
    """
    from deflectbench.api.run import import_batch as take_back
    from deflectbench.cli.options import write_json
    from deflectbench.views.terminal.batch_lines import imported

    report = take_back(results, db=db, config=config, accept_models=tuple(accept_model or ()))
    if not write_json(report.to_json(), json_out):
        show(imported(report, results))
    if report.exit_code:
        raise typer.Exit(report.exit_code)
