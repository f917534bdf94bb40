"""``deflectbench monitor``: refusal, soft-refusal and labeled flags for any text, fast enough
for production logs (the rule-based ``lexical`` judge; see ``judging.monitor``)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, TextIO

import typer

from deflectbench.cli.console import UserError, console, err
from deflectbench.escaping import terminal_safe


@contextmanager
def _opened(source: str) -> Iterator[TextIO]:
    if source == "-":
        yield sys.stdin
        return
    path = Path(source)
    if path.is_dir():
        raise UserError(f"{source} is a folder: give a file, or - to read standard input")
    try:
        with path.open(encoding="utf-8", errors="replace", newline="") as fh:
            yield fh
    except FileNotFoundError:
        raise UserError(f"no file {source}: give a file, or - to read standard input") from None
    except OSError as exc:
        raise UserError(f"cannot read {source}: {exc.strerror or exc}") from None


def monitor(
    source: Annotated[
        str,
        typer.Argument(
            metavar="FILE",
            help="The text to read: a file, or - for standard input.",
            show_default=False,
        ),
    ] = "-",
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            metavar="auto|jsonl|text",
            help="jsonl: one JSON object per line, its text in --field (an `id` is carried "
            "through). text: items separated by a blank line. auto (default): jsonl for "
            ".jsonl/.ndjson files and for standard input starting with `{`, text otherwise.",
        ),
    ] = "auto",
    field: Annotated[
        str, typer.Option("--field", help="The JSONL field holding the text.")
    ] = "text",
    id_field: Annotated[
        str, typer.Option("--id-field", help="The JSONL field shown as each item's id.")
    ] = "id",
    jsonl: Annotated[
        bool,
        typer.Option(
            "--jsonl",
            help="Print one JSON object per item (line, id, refusal, soft_refusal, labeled, "
            "outcome) as it is read, instead of a table.",
        ),
    ] = False,
    only_flagged: Annotated[
        bool, typer.Option("--only-flagged", help="Show only items with at least one flag.")
    ] = False,
    workers: Annotated[
        int,
        typer.Option(min=1, help="Processes to score with (2 on a 2-core machine for large logs)."),
    ] = 1,
) -> None:
    """Flag refusals, soft refusals and labeled fallacies in any text, offline and fast.

    Each item is read by the rule-based `lexical` judge without a claim: `refusal`, `soft
    refusal` (a fallacy hedged by caveats) and `labeled` (a fallacy named as such), plus the
    paper's outcome. Labeled compliance is the paper's cheap monitoring signal; `deflectbench
    validate` measures the monitor's precision and recall against the LLM judges and people.
    A summary line (counts, items per second) goes to standard error. A bad JSONL line stops
    with its line number.

    Examples:

        deflectbench monitor release/data/generations/generations_gpt_5_5.jsonl --field response --id-field gen_id --only-flagged

        deflectbench monitor replies.txt --format text

        cat logs.jsonl | deflectbench monitor - --jsonl --workers 2 > flags.jsonl
    """
    from deflectbench.judging.monitor import (
        FORMATS,
        MonitorInputError,
        Tally,
        format_of,
        monitor_items,
        read_items,
    )
    from deflectbench.views.terminal.monitor import (
        monitor_line,
        monitor_row,
        monitor_summary,
        monitor_table,
    )

    if fmt not in ("auto", *FORMATS):
        raise UserError(f"unknown --format {fmt!r}; valid: auto, {', '.join(FORMATS)}")
    tally = Tally()
    name = "standard input" if source == "-" else source
    table = monitor_table(name, titled=not jsonl)
    start = time.perf_counter()
    with _opened(source) as fh:
        kind, lines = format_of(source, fmt, iter(fh))
        items = read_items(lines, fmt=kind, field=field, name=name, id_field=id_field)
        try:
            for item, found in monitor_items(items, workers=workers):
                tally.add(found)
                if only_flagged and not (found.refusal or found.soft_refusal or found.labeled):
                    continue
                if jsonl:
                    sys.stdout.write(monitor_line(item, found))
                else:
                    monitor_row(table, item, found)
        except MonitorInputError as exc:
            sys.stdout.flush()
            raise UserError(terminal_safe(str(exc))) from None
    seconds = time.perf_counter() - start
    if not jsonl:
        console.print(table)
    err.print(monitor_summary(tally, seconds), highlight=False)
