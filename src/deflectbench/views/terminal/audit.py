"""``deflectbench audit``'s terminal tables, from the typed
:class:`~deflectbench.analysis.compat.audit.Audit`: one table per quirk of the release script,
then all five against the paper's definition, each move in points per model and measure."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from deflectbench.analysis.compat.audit import HEADLINE, NOTE
from deflectbench.views.format import num, pct

if TYPE_CHECKING:
    from deflectbench.analysis.compat.audit import Audit, QuirkEffect

__all__ = ["render_audit"]


def _moves(effect: QuirkEffect) -> dict[str, dict[str, Any]]:
    """Per model (in the table's order) and measure, the row of its move."""
    out: dict[str, dict[str, Any]] = {}
    for r in effect.moves.itertuples(index=False):
        out.setdefault(str(r.model), {})[r.measure] = r
    return out


def _moves_table(title: str, effect: QuirkEffect, totals: bool) -> Table:
    """Per model and headline measure: the move in points (``totals``: paper -> release too)."""
    t = Table(title=title)
    t.add_column("model", overflow="fold")
    for _, _, label in HEADLINE:
        t.add_column(label, justify="right")
    for model, row in _moves(effect).items():
        cells = []
        for _, measure, _ in HEADLINE:
            e = row.get(measure)
            cell = num(e.delta_pp if e else None, "+.2f", zero_below=0.005)
            if totals:
                paper, with_quirk = (e.paper, e.with_quirk) if e else (None, None)
                cell = f"{pct(paper)} → {pct(with_quirk)}\n[dim]{cell} pts[/]"
            cells.append(cell)
        t.add_row(escape(model), *cells)
    return t


def render_audit(audit: Audit) -> list[Table | Text]:
    """The audit as terminal tables: one per quirk, then the total."""
    out: list[Table | Text] = [
        Text(
            f"Paper definition: {audit.paper_scored:,} scored generations, judges "
            f"{', '.join(audit.judges) or 'none'}. Moves in percentage points (with the quirk "
            "minus the paper's); outcome shares for refusal, soft refusal, labeled and clean, the "
            "field rate for any fallacy."
        )
    ]
    for q in audit.quirks:
        if q.quirk is None:  # each quirk alone names its quirk; only the total has none
            continue
        touched = (
            f"{q.added:,} generations added, {q.changed:,} changed, agreement on {q.agreement_n:,}"
        )
        title = f"{q.quirk.label} {escape(q.quirk.title)}: {touched}"
        out.append(_moves_table(title, q, totals=False))
        out.append(Text(f"  affects: {q.quirk.affects}", style="dim"))
    total = audit.release
    title = (
        f"All five (--compat release): paper → release, {total.scored:,} scored "
        f"({total.added:,} added, {total.changed:,} changed), agreement on "
        f"{total.agreement_n:,} generations"
    )
    out.append(_moves_table(title, total, totals=True))
    out.append(Text(NOTE, style="dim"))
    return out
