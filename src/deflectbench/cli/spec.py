"""``deflectbench spec``: the benchmark at a glance, or every rendered prompt."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from deflectbench.cli.console import console


def spec(
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    prompts: Annotated[
        bool, typer.Option("--prompts", help="Print every rendered prompt as JSON Lines.")
    ] = False,
    benchmark: Annotated[
        Path | None, typer.Option(help="A benchmark file other than the bundled v1.")
    ] = None,
) -> None:
    """The benchmark at a glance: claims by level, context and domain; templates by framing.

    Examples:

        deflectbench spec

        deflectbench spec --prompts > prompts.jsonl   # 1,200 lines for v1: claim_id, prompt_id, prompt
    """
    from deflectbench.benchmark import load_benchmark
    from deflectbench.benchmark.overview import benchmark_summary
    from deflectbench.cli.tables import spec_tables

    b = load_benchmark(benchmark)
    if prompts:
        out = sys.stdout
        for claim_id, prompt_id, prompt in b.prompts():
            out.write(
                json.dumps(
                    {"claim_id": claim_id, "prompt_id": prompt_id, "prompt": prompt},
                    ensure_ascii=False,
                )
                + "\n"
            )
        return
    summary = benchmark_summary(b)
    if as_json:
        console.print_json(data=summary)
        return
    console.print(f"[bold]{b.name} v{b.version}[/]  sha256 {b.sha256[:16]}…  speaker: {b.speaker}")
    console.print(
        f"{summary['n_claims']} claims x {summary['n_templates']} templates = "
        f"{summary['n_prompts']} prompts; {b.runs_per_cell} samples per cell at temperature "
        f"{b.generation_temperature}"
    )
    for table in spec_tables(summary):
        console.print(table)
