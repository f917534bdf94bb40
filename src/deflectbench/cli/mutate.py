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
    from deflectbench.benchmark.mutate import MutationError, parse_kinds
    from deflectbench.benchmark.mutate import mutate as make
    from deflectbench.errors import ConfigError

    try:
        body = make(pack, parse_kinds(kinds), seed)
    except MutationError as exc:
        raise ConfigError(str(exc)) from None
    import json

    pack_id = json.loads(body)["pack"]
    path = out if out is not None else Path(f"{pack_id}.json")
    path.write_bytes(body)
    n = len(json.loads(body)["templates"])
    console.print(f"wrote {path}: pack {pack_id}, {n} templates", highlight=False, markup=False)
