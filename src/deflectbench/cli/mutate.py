"""``deflectbench mutate``: write a pack of deterministic prompt variants (benchmark.mutate)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from deflectbench.cli.console import console


def mutate(
    pack: Annotated[str, typer.Argument(help="A shipped pack's name or a pack file.")],
    kinds: Annotated[
        str,
        typer.Option(help="Comma-separated: paraphrase, register, persona, translate, encode."),
    ] = "paraphrase,register,persona,translate,encode",
    seed: Annotated[int, typer.Option(help="Chooses among the written variants (0).")] = 0,
    out: Annotated[
        Path | None,
        typer.Option(help="The file to write (default: <pack>-mutated-s<seed>.json here)."),
    ] = None,
) -> None:
    """Write a new pack whose templates are variants of PACK's, each keeping its origin.

    The variants are written in DeflectBench, not generated: the same pack, kinds and seed
    always give the same file. Each template stores its origin (its PACK template id) and its
    mutation kind; run the new pack with --benchmark FILE.

    Examples:

        deflectbench mutate deflectbench-v1 --kinds persona,encode --seed 1

        deflectbench mutate deflectbench-v1 --kinds paraphrase,register --out v1-wording.json
    """
    from deflectbench.api.results import mutate as write_mutated

    written = write_mutated(pack, kinds=kinds, seed=seed, out=out)
    console.print(
        f"wrote {written.path}: pack {written.pack}, {written.templates} templates",
        highlight=False,
        markup=False,
    )
