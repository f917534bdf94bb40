"""``deflectbench merge OUT STORE...``: the parts of a sharded run as one store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from deflectbench.cli.console import print_outcome
from deflectbench.cli.options import said_busy


def merge(
    out: Annotated[
        Path,
        typer.Argument(
            metavar="OUT", help="The merged results file (created if missing).", show_default=False
        ),
    ],
    stores: Annotated[
        list[Path],
        typer.Argument(
            metavar="STORE...",
            help="Results files to merge into OUT, e.g. the parts of `run --shard I/N`.",
            show_default=False,
        ),
    ],
    allow_missing_parts: Annotated[
        bool,
        typer.Option(
            "--allow-missing-parts",
            help="Merge although a part of a `--shard I/N` array is missing or unfinished "
            "(each named in a note) instead of refusing (exit 2).",
        ),
    ] = False,
) -> None:
    """Merge results files (the parts of `run --shard I/N`) into OUT: every cell and verdict
    once.

    A record OUT already holds with the same content is counted as present; one with other
    content is refused and reported (exit 1), as `import` does; a failed request is replaced by
    a result. The parts of a `--shard I/N` array are checked first (by the I/N each part's
    run records): a part no file holds, or one with cells that have no result, is refused in
    one line naming it (exit 2, nothing written) unless --allow-missing-parts. Conditions keep their labels and settings: a label naming other settings in two
    files is refused before anything is written. Runs keep their ids. Merging again adds
    nothing.

    Examples:

        deflectbench merge all.db deflectbench.db       # a copy, every row once

        deflectbench merge all.db part-1.db part-2.db part-3.db   # the parts of --shard I/3
    """
    from deflectbench.api.results import merge as run_merge

    result = run_merge(stores, db=out, on_busy=said_busy, allow_missing_parts=allow_missing_parts)
    print_outcome(result, "refused")
