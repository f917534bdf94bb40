"""``deflectbench monitor``: refusal, soft-refusal and labeled flags for any text, fast enough
for production logs (the rule-based ``lexical`` judge; see ``judging.monitor``)."""

from __future__ import annotations

import json
import sys
import time
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer
from rich.markup import escape
from rich.table import Table

from deflectbench.cli.console import UserError, console, err
from deflectbench.escaping import json_line_safe, terminal_safe

if TYPE_CHECKING:
    from deflectbench.judging.monitor import Item

#: Characters of each text the table shows (the whole text is never printed).
SNIPPET = 60


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


def _format_of(source: str, fmt: str, lines: Iterator[str]) -> tuple[str, Iterable[str]]:
    """``auto``: JSONL for ``.jsonl``/``.ndjson`` files, text for other files; on standard
    input, JSONL if the first non-blank line starts with ``{``."""
    if fmt != "auto":
        return fmt, lines
    if source != "-":
        return ("jsonl" if Path(source).suffix in (".jsonl", ".ndjson") else "text"), lines
    head: list[str] = []
    for line in lines:
        head.append(line)
        if line.strip():
            break
    first = next((h for h in head if h.strip()), "")
    return ("jsonl" if first.lstrip().startswith("{") else "text"), chain(head, lines)


def _snippet(text: str) -> str:
    one = " ".join(text.split())
    return one if len(one) <= SNIPPET else one[: SNIPPET - 1] + "…"


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
    from deflectbench.judging.monitor import FORMATS, MonitorInputError, monitor, read_items

    if fmt not in ("auto", *FORMATS):
        raise UserError(f"unknown --format {fmt!r}; valid: auto, {', '.join(FORMATS)}")
    counts: Counter[str] = Counter()
    name = "standard input" if source == "-" else source
    table = Table(title=None if jsonl else f"Monitor: {escape(terminal_safe(name))}")
    for c in ("line", "id", "ref", "soft", "lab", "outcome", "text"):
        table.add_column(c, justify="right" if c == "line" else "left", overflow="fold")
    start = time.perf_counter()
    with _opened(source) as fh:
        kind, lines = _format_of(source, fmt, iter(fh))
        items = read_items(lines, fmt=kind, field=field, name=name, id_field=id_field)
        pending: deque[Item] = deque()
        texts = _remember(items, pending)
        try:
            for flags in monitor(texts, workers=workers):
                item = pending.popleft()
                counts["items"] += 1
                for f in ("refusal", "soft_refusal", "labeled"):
                    counts[f] += getattr(flags, f)
                counts[f"outcome:{flags.outcome}"] += 1
                flagged = flags.refusal or flags.soft_refusal or flags.labeled
                if only_flagged and not flagged:
                    continue
                if jsonl:
                    row = {"line": item.line, "id": item.id, **flags.as_dict()}
                    sys.stdout.write(json_line_safe(json.dumps(row, ensure_ascii=False)) + "\n")
                else:
                    table.add_row(
                        str(item.line),
                        escape(terminal_safe("" if item.id is None else str(item.id))),
                        *(
                            "1" if v else "·"
                            for v in (flags.refusal, flags.soft_refusal, flags.labeled)
                        ),
                        flags.outcome,
                        escape(terminal_safe(_snippet(item.text))),
                    )
        except MonitorInputError as exc:
            sys.stdout.flush()
            raise UserError(terminal_safe(str(exc))) from None
    seconds = time.perf_counter() - start
    if not jsonl:
        console.print(table)
    n = counts["items"]
    rate = f", {n / seconds:,.0f} items/s" if seconds > 0 and n else ""
    err.print(
        f"{n:,} items: {counts['refusal']:,} refusal, {counts['soft_refusal']:,} soft refusal, "
        f"{counts['labeled']:,} labeled ({counts['outcome:labeled_compliance']:,} labeled compliance)"
        f"{rate}",
        highlight=False,
    )


def _remember(items: Iterable[Item], pending: deque[Item]) -> Iterator[str]:
    """The texts of ``items``, each item queued in ``pending`` until its flags come back (the
    monitor may read ahead when it uses several processes)."""
    for item in items:
        pending.append(item)
        yield item.text
