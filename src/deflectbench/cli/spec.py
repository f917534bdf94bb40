"""``deflectbench spec``: the benchmark at a glance, its ids to browse, or every rendered prompt."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from deflectbench.cli.console import UserError, console, err
from deflectbench.cli.options import BenchmarkOption
from deflectbench.escaping import json_line_safe

if TYPE_CHECKING:
    from deflectbench.benchmark import Benchmark

#: The listings, in the order they print when several are asked for.
LISTINGS: tuple[str, ...] = ("claims", "templates", "framings", "fallacies")


def spec(
    claims: Annotated[
        bool,
        typer.Option("--claims", help="List the claims: id, level, context, domain, text."),
    ] = False,
    templates: Annotated[
        bool,
        typer.Option(
            "--templates", help="List the templates: id, framing, requested fallacy, explicitness."
        ),
    ] = False,
    framings: Annotated[
        bool,
        typer.Option("--framings", help="List the framings with their templates' text."),
    ] = False,
    fallacies: Annotated[
        bool,
        typer.Option("--fallacies", help="List the fallacies with their definitions."),
    ] = False,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print JSON instead of tables: the summary, or the listing asked for (an array; "
            "with several listings, an object keyed by listing).",
        ),
    ] = False,
    prompts: Annotated[
        bool, typer.Option("--prompts", help="Print every rendered prompt as JSON Lines.")
    ] = False,
    list_packs: Annotated[
        bool,
        typer.Option(
            "--list", help="List the shipped packs: name, language, turns, claims, templates."
        ),
    ] = False,
    benchmark: BenchmarkOption = None,
) -> None:
    """The benchmark at a glance: claims by level, context and domain; templates by framing.

    With `--claims`, `--templates`, `--framings` or `--fallacies`: every id to pass to
    `deflectbench run --claims/--templates`, with what it stands for. `--list` lists the
    shipped packs; `--benchmark FILE` validates a pack file of your own and lists every
    problem with its location (exit 2), or shows it when it is valid.

    Examples:

        deflectbench spec

        deflectbench spec --claims                      # ids, levels, texts

        deflectbench spec --templates --json | jq '.[].prompt_id'

        deflectbench spec --prompts > prompts.jsonl     # 1,200 lines for v1

        deflectbench spec --list                        # the shipped packs

        deflectbench spec --benchmark deflectbench-v1-controlled --templates
    """
    from deflectbench.cli.options import pick_benchmark

    if list_packs:
        _print_packs(as_json)
        return
    b = _validated(benchmark, pick_benchmark)
    chosen = [
        name
        for name, wanted in zip(LISTINGS, (claims, templates, framings, fallacies), strict=True)
        if wanted
    ]
    if prompts:
        if chosen:
            raise UserError(f"--prompts prints every prompt; leave out --{chosen[0]}")
        _print_prompts(b)
    elif chosen:
        _print_listings(b, chosen, as_json)
    else:
        _print_summary(b, as_json)


def _validated(value: str | None, pick: Callable[[str | None], Benchmark]) -> Benchmark:
    """The pack, or every problem in it (one line each, with its location) and exit 2."""
    from deflectbench.benchmark import BenchmarkError

    try:
        return pick(value)
    except BenchmarkError as exc:
        problems = getattr(exc, "problems", None)
        if not problems or len(problems) == 1:
            raise
        for problem in problems:
            err.print(f"[bold red]error:[/] {escape(problem)}", highlight=False, soft_wrap=True)
        err.print(
            f"{len(problems)} problems in --benchmark {value}; the format is in docs/packs.md",
            highlight=False,
            markup=False,
        )
        raise typer.Exit(2) from None


def _print_packs(as_json: bool) -> None:
    from dataclasses import asdict

    from deflectbench.benchmark import pack_infos
    from deflectbench.cli.pack_tables import packs_table

    infos = pack_infos()
    if as_json:
        sys.stdout.write(
            json_line_safe(json.dumps([asdict(i) for i in infos], indent=2, ensure_ascii=False))
            + "\n"
        )
        return
    console.print(packs_table(infos))
    console.print(
        "use one with --benchmark NAME on any command; a pack file of your own: --benchmark "
        "FILE (docs/packs.md)",
        highlight=False,
        markup=False,
    )


def _print_prompts(b: Benchmark) -> None:
    out = sys.stdout
    for claim_id, prompt_id, prompt in b.prompts():
        out.write(
            json.dumps(
                {"claim_id": claim_id, "prompt_id": prompt_id, "prompt": prompt},
                ensure_ascii=False,
            )
            + "\n"
        )


def _print_summary(b: Benchmark, as_json: bool) -> None:
    from deflectbench.benchmark.overview import benchmark_summary
    from deflectbench.views.terminal.tables import spec_tables

    summary = benchmark_summary(b)
    if as_json:
        console.print_json(data=summary)
        return
    console.print(
        f"[bold]{escape(b.pack)}[/] ({escape(b.name)} v{escape(b.version)}, language "
        f"{escape(b.language)}, {b.turns} turn{'s' if b.turns > 1 else ''}"
        + (f", based on {escape(b.based_on)}" if b.based_on else "")
        + f")  sha256 {b.sha256[:16]}…  speaker: {escape(b.speaker)}"
    )
    console.print(
        f"{summary['n_claims']} claims x {summary['n_templates']} templates = "
        f"{summary['n_prompts']} prompts; {b.runs_per_cell} samples per cell at temperature "
        f"{b.generation_temperature}"
    )
    for table in spec_tables(summary):
        console.print(table)
    console.print(
        "ids: deflectbench spec --claims, --templates, --framings, --fallacies",
        highlight=False,
        markup=False,
    )


def _print_listings(b: Benchmark, chosen: list[str], as_json: bool) -> None:
    from deflectbench.views.terminal import tables

    rows = {name: LISTING_ROWS[name](b) for name in chosen}
    if as_json:
        data = rows[chosen[0]] if len(chosen) == 1 else rows
        sys.stdout.write(json_line_safe(json.dumps(data, indent=2, ensure_ascii=False)) + "\n")
        return
    render = {
        "claims": tables.claims_table,
        "templates": tables.templates_table,
        "framings": tables.framings_table,
        "fallacies": tables.fallacies_table,
    }
    for name in chosen:
        console.print(render[name](rows[name]))


# -- the listings' rows (what --json prints and the tables show) ----------------------------


def claim_rows(b: Benchmark) -> list[dict[str, Any]]:
    """Every claim in file order: id, controversy level (number and name), context, domain, text."""
    return [
        {
            "claim_id": c.claim_id,
            "level": c.level,
            "level_name": c.level_name,
            "context": c.context,
            "domain": c.domain,
            "text": c.text,
        }
        for c in b.claims
    ]


def template_rows(b: Benchmark) -> list[dict[str, Any]]:
    """Every template in file order, with its text (placeholders such as ``{claim}`` kept)."""
    return [
        {
            "prompt_id": t.prompt_id,
            "prompt_num": t.prompt_num,
            "framing": t.framing,
            "fallacy": t.fallacy,
            "explicitness": t.explicitness,
            "frame": t.frame,
            "template": t.template,
        }
        for t in b.templates
    ]


def framing_rows(b: Benchmark) -> list[dict[str, Any]]:
    """Each framing in the paper's order, with the templates that use it and their text."""
    from deflectbench.vocab import FRAMINGS

    present = {t.framing for t in b.templates}
    order = [f for f in FRAMINGS if f in present] + sorted(present - set(FRAMINGS))
    out = []
    for framing in order:
        members = [t for t in b.templates if t.framing == framing]
        out.append(
            {
                "framing": framing,
                "explicitness": sorted({t.explicitness for t in members}),
                "templates": [
                    {"prompt_id": t.prompt_id, "fallacy": t.fallacy, "template": t.template}
                    for t in members
                ],
            }
        )
    return out


def fallacy_rows(b: Benchmark) -> list[dict[str, Any]]:
    """Each fallacy with its definition (as the prompts quote it) and the templates asking for
    it; ``model_choice`` and ``any`` templates leave the choice to the model."""
    return [
        {
            "fallacy_id": f.fallacy_id,
            "name": f.name,
            "definition": f.definition,
            "templates": [t.prompt_id for t in b.templates if t.fallacy == f.fallacy_id],
        }
        for f in b.fallacies
    ]


LISTING_ROWS = {
    "claims": claim_rows,
    "templates": template_rows,
    "framings": framing_rows,
    "fallacies": fallacy_rows,
}
