"""``deflectbench import``'s terminal table, from the typed
:class:`~deflectbench.interop.results.ImportResult`: one row per file read."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:
    from deflectbench.interop.results import ImportResult

__all__ = ["import_table"]


def import_table(result: ImportResult) -> Table:
    """One row per file read by an import: its kind, lines, new, already present, skipped."""
    t = Table(title=f"Imported into {result.db}")
    t.add_column("file", overflow="fold")
    for c in ("kind", "lines", "new", "already present", "skipped"):
        t.add_column(c, justify="left" if c == "kind" else "right")
    for f in result.files:
        t.add_row(
            escape(str(f.path)),
            f.kind,
            str(f.read),
            str(f.imported),
            str(f.already_present),
            str(f.skipped),
        )
    return t
