"""``deflectbench import-batch RESULTS.jsonl``: a batch engine's output for a ``run
--batch-file`` file taken back, each cell once (:mod:`deflectbench.api.batch_file`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from deflectbench.cli.options import DEFAULT_DB, DbOption
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
    db: DbOption = DEFAULT_DB,
) -> None:
    """Take a batch engine's output back: each cell of a `run --batch-file` file once.

    Answers, non-answers (length, content filter) and per-line errors are stored as batch
    mode stores them; a cell with no line in the output is stored as an error row (`run
    --batch-file --retry-errors` writes it again). Importing the same output again adds
    nothing. Then judge: `deflectbench judge`, or the same `run` without --batch-file.

    Example:

        deflectbench import-batch results.jsonl --db results.db
    """
    from deflectbench.api.run import import_batch as take_back
    from deflectbench.views.terminal.batch_lines import imported

    report = take_back(results, db=db, config=config)
    show(imported(report, results))
    if report.exit_code:
        raise typer.Exit(report.exit_code)
