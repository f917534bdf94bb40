"""The terminal's view of ``monitor``: a table of the items read (a snippet of each text, never
the whole), one JSON line per item, and the summary line. Texts and ids are untrusted: escaped
for the terminal and for rich markup."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from deflectbench.escaping import json_line_safe, terminal_safe

if TYPE_CHECKING:
    from deflectbench.judging.monitor import Flags, Item, Tally

__all__ = ["SNIPPET", "monitor_line", "monitor_row", "monitor_summary", "monitor_table"]

#: Characters of each text the table shows (the whole text is never printed).
SNIPPET = 60


def _snippet(text: str) -> str:
    one = " ".join(text.split())
    return one if len(one) <= SNIPPET else one[: SNIPPET - 1] + "…"


def monitor_table(name: str, *, titled: bool = True) -> Table:
    """The empty table of items read from ``name`` (no title when not ``titled``)."""
    table = Table(title=f"Monitor: {escape(terminal_safe(name))}" if titled else None)
    for c in ("line", "id", "ref", "soft", "lab", "outcome", "text"):
        table.add_column(c, justify="right" if c == "line" else "left", overflow="fold")
    return table


def monitor_row(table: Table, item: Item, found: Flags) -> None:
    """One item's row: line, id, the three flags (1 or ·), the outcome and a snippet."""
    table.add_row(
        str(item.line),
        escape(terminal_safe("" if item.id is None else str(item.id))),
        *("1" if v else "·" for v in (found.refusal, found.soft_refusal, found.labeled)),
        found.outcome,
        escape(terminal_safe(_snippet(item.text))),
    )


def monitor_line(item: Item, found: Flags) -> str:
    """One item as a JSON line (line, id, the flags as 0/1, outcome), newline included."""
    row = {"line": item.line, "id": item.id, **found.as_dict()}
    return json_line_safe(json.dumps(row, ensure_ascii=False)) + "\n"


def monitor_summary(tally: Tally, seconds: float) -> str:
    """The counts and the speed, for standard error."""
    n = tally.items
    rate = f", {n / seconds:,.0f} items/s" if seconds > 0 and n else ""
    return (
        f"{n:,} items: {tally.refusal:,} refusal, {tally.soft_refusal:,} soft refusal, "
        f"{tally.labeled:,} labeled ({tally.labeled_compliance:,} labeled compliance){rate}"
    )
