"""``deflectbench spec``: the benchmark at a glance, its ids to browse, or every rendered prompt
(the pack from :func:`deflectbench.api.results.spec`, its tables from
:mod:`deflectbench.views.terminal.spec`)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from deflectbench.cli.console import UserError, console, err
from deflectbench.cli.options import BenchmarkOption
from deflectbench.escaping import json_line_safe

if TYPE_CHECKING:
    from deflectbench.results.spec import Spec

#: The listings, in the order they print when several are asked for (as ``results.spec``'s).
LISTINGS: tuple[str, ...] = ("claims", "templates", "framings", "fallacies")


def listing_option(flag: str, what: str) -> Any:
    """A flag that lists one part of the pack (or the shipped packs): "List the ``what``."."""
    return typer.Option(flag, help=f"List the {what}.")


def spec(
    claims: Annotated[
        bool, listing_option("--claims", "claims: id, level, context, domain, text")
    ] = False,
    templates: Annotated[
        bool,
        listing_option("--templates", "templates: id, framing, requested fallacy, explicitness"),
    ] = False,
    framings: Annotated[
        bool, listing_option("--framings", "framings with their templates' text")
    ] = False,
    fallacies: Annotated[
        bool, listing_option("--fallacies", "fallacies with their definitions")
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
        bool, listing_option("--list", "shipped packs: name, language, turns, claims, templates")
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
    if list_packs:
        _print_packs(as_json)
        return
    s = _validated(benchmark)
    chosen = [
        name
        for name, wanted in zip(LISTINGS, (claims, templates, framings, fallacies), strict=True)
        if wanted
    ]
    if prompts:
        if chosen:
            raise UserError(f"--prompts prints every prompt; leave out --{chosen[0]}")
        for line in s.prompts():
            sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
    elif chosen and as_json:
        _write_json(s.listings_json(chosen))
    elif chosen:
        from deflectbench.views.terminal.spec import LISTING_TABLES

        for name in chosen:
            console.print(LISTING_TABLES[name](s.listing(name)))
    else:
        _print_summary(s, as_json)


def _validated(value: str | None) -> Spec:
    """The pack, or every problem in it (one line each, with its location) and exit 2."""
    from deflectbench.api.results import spec as read_spec
    from deflectbench.benchmark import BenchmarkError

    try:
        return read_spec(benchmark=value)
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


def _write_json(data: Any) -> None:
    sys.stdout.write(json_line_safe(json.dumps(data, indent=2, ensure_ascii=False)) + "\n")


def _print_packs(as_json: bool) -> None:
    from deflectbench.api.results import packs
    from deflectbench.views.terminal.packs import packs_table

    shipped = packs()
    if as_json:
        _write_json(shipped.to_json())
        return
    console.print(packs_table(shipped.infos))
    console.print(
        "use one with --benchmark NAME on any command; a pack file of your own: --benchmark "
        "FILE (docs/packs.md)",
        highlight=False,
        markup=False,
    )


def _print_summary(s: Spec, as_json: bool) -> None:
    from deflectbench.views.terminal.spec import spec_header, spec_tables

    if as_json:
        console.print_json(data=s.to_json())
        return
    for part in [*spec_header(s), *spec_tables(s)]:
        console.print(part)
    console.print(
        "ids: deflectbench spec --claims, --templates, --framings, --fallacies",
        highlight=False,
        markup=False,
    )
