"""The terminal's view of a leaderboard (:class:`~deflectbench.analysis.compare.leaderboard.
Leaderboard`): the ranked table (rows judged by other judges marked ``*``), how its groups are
made, and whose judges the board's are. Read from the typed rows; stored text escaped."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import RenderableType
from rich.markup import escape
from rich.table import Table

from deflectbench.views.format import count, interval, pct
from deflectbench.views.terminal.compare import MISSING, safe

if TYPE_CHECKING:
    from deflectbench.analysis.compare.leaderboard import Leaderboard

__all__ = ["leaderboard_view"]


def leaderboard_view(lb: Leaderboard) -> list[RenderableType]:
    """Everything ``deflectbench leaderboard`` prints on standard output, in order."""
    from deflectbench.analysis.compare.leaderboard import GROUPS_NOTE

    rows, packs = lb.rows, len(lb.packs) > 1
    title = lb.title if packs or not rows else f"{lb.title} ({rows[0].pack})"
    t = Table(title=escape(title))
    columns = ("#", "group", "model", "condition", *(("pack",) if packs else ()), "store", "rate",
               "95% CI", "n")  # fmt: skip
    for c in columns:
        t.add_column(c, justify="right" if c in ("#", "rate", "n") else "left", overflow="fold")
    for r in rows:
        t.add_row(
            (MISSING if r.rank is None else str(r.rank)) + ("" if r.judges_match else "*"),
            escape(r.group or ""),
            safe(r.model),
            safe(r.condition or MISSING),
            *((safe(r.pack),) if packs else ()),
            safe(Path(r.store).name),
            pct(r.rate, missing=MISSING),
            interval(r.ci_lo, r.ci_hi, sep="-", missing=MISSING),
            count(r.n),
        )
    out: list[RenderableType] = [t, f"[dim]{escape(GROUPS_NOTE)}[/]"]
    if lb.others:
        out.append(f"[yellow]* judged by other judges than the board's ({escape(lb.judges)})[/]")
    return out
