"""``deflectbench status --db 'results/part-*.db'``: an array's parts at a glance (progress and
spending across the parts' files, the parts no file holds), nothing merged."""

from __future__ import annotations

from pathlib import Path

import typer

from deflectbench.cli.console import console
from deflectbench.cli.run_output import show


def show_parts(db: Path, as_json: bool) -> None:
    """Print the parts' status (a table, or JSON) and exit with its code (5 while incomplete)."""
    from deflectbench.api.parts import status_parts
    from deflectbench.views.terminal.parts_status import parts_tables

    st = status_parts([db])
    if as_json:
        console.print_json(data=st.to_json())
    else:
        show(parts_tables(st))
    raise typer.Exit(st.exit_code)
