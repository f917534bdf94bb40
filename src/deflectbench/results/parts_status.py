"""What ``deflectbench status --db 'results/part-*.db'`` returns: an array's progress and
spending across its parts (one results file each), without merging them first.

A row per file: the part its runs record (``k/N``), its cells planned, with a result, failed
and missing, and what it spent; the totals; and the parts of the array no file holds (by the
``k/N`` the others record), so a part that never started is said, not silently absent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class PartRow:
    """One results file of the array."""

    path: Path
    #: ``k/N`` of each part its runs ran (several for a merged file; empty: not a part).
    parts: tuple[str, ...]
    planned: int
    ok: int
    errors: int
    #: Planned cells with no row at all (not yet sent).
    missing: int
    #: None when a price is unknown.
    spent_usd: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "parts": list(self.parts),
            "planned": self.planned,
            "ok": self.ok,
            "errors": self.errors,
            "missing": self.missing,
            "spent_usd": self.spent_usd,
        }


@dataclass(frozen=True)
class PartsStatus:
    """An array's parts, file by file, with the totals and the parts no file holds."""

    rows: list[PartRow]
    #: ``k/N`` of each part of an array that no file holds.
    missing_parts: list[str] = field(default_factory=list)

    @property
    def total(self) -> PartRow:
        """The files' cells and spending added up, as one row (no path, no part)."""
        rows = self.rows
        spent = [r.spent_usd for r in rows]
        return PartRow(
            path=Path(),
            parts=(),
            planned=sum(r.planned for r in rows),
            ok=sum(r.ok for r in rows),
            errors=sum(r.errors for r in rows),
            missing=sum(r.missing for r in rows),
            # None when any part's spending is unknown.
            spent_usd=None if any(s is None for s in spent) else sum(s or 0.0 for s in spent),
        )

    @property
    def exit_code(self) -> int:
        """5 while a part is missing or a cell has no result yet (as ``run``'s incomplete)."""
        total = self.total
        return 5 if self.missing_parts or total.missing or total.errors else 0

    def to_json(self) -> dict[str, Any]:
        total = self.total.to_json()
        del total["path"], total["parts"]
        return {
            "parts": [r.to_json() for r in self.rows],
            "missing_parts": list(self.missing_parts),
            "total": total,
        }
