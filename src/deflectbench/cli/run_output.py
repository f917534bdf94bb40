"""What the run commands share on the command line: printing what a view returns (tables and
:class:`~deflectbench.views.terminal.lines.Line` values, each on its stream), and the
``--config`` option of batch mode's commands."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import typer

from deflectbench.cli.console import console, err

ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        help="The run configuration the batches were submitted with; needed only when its "
        "[providers.NAME] sections set headers or extra_body (stored by name only).",
    ),
]


def show(items: Iterable[Any]) -> None:
    """Print each table on stdout and each line on its stream, in order."""
    from deflectbench.views.terminal.lines import Line

    for item in items:
        if not isinstance(item, Line):
            console.print(item)
            continue
        (err if item.err else console).print(
            item.text,
            style=item.style,
            highlight=False,
            markup=item.markup,
        )
