"""The terminal's ``status`` over the parts of an array: a row per results file (its part,
cells planned / ok / errors / missing, spent), the totals, and a line naming the parts no file
holds."""

from __future__ import annotations

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from deflectbench.results.parts_status import PartRow, PartsStatus
from deflectbench.views.format import count, usd


def parts_tables(st: PartsStatus) -> list[RenderableType]:
    t = Table(
        title=f"Parts ({len(st.rows)} files)",
        box=None,
        pad_edge=False,
        header_style="bold underline",
    )
    t.add_column("file / part", overflow="fold")
    for c in ("planned", "ok", "errors", "missing", "spent"):
        t.add_column(c, justify="right", no_wrap=True)
    for r in st.rows:
        name = Text(str(r.path) + "\n") + Text(", ".join(r.parts) or "not a part", style="dim")
        t.add_row(name, *_cells(r))
    t.add_row(Text("total", style="bold"), *_cells(st.total))
    out: list[RenderableType] = [t]
    if st.missing_parts:
        out.append(
            Text(
                f"missing: part{'s' * (len(st.missing_parts) > 1)} {', '.join(st.missing_parts)} "
                "(no file holds it: run it, or pass its file)",
                style="red",
            )
        )
    return out


def _cells(r: PartRow) -> tuple[str, ...]:
    """A file's (or the total's) cells planned, ok, errors, missing and spent."""
    return count(r.planned), count(r.ok), count(r.errors), count(r.missing), usd(r.spent_usd)
