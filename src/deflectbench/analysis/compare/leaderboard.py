"""A leaderboard as one typed result: the board (:func:`.board.leaderboard`, a DataFrame), what
it ranks by, and what it says of rows judged by other judges. :func:`deflectbench.leaderboard`
returns it; the terminal, the page, the files and the Hugging Face card render it, and
``to_json()`` is exactly what ``deflectbench leaderboard --json`` writes."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import pandas as pd

from deflectbench.analysis.compare.rows import BoardRow, rows_of

__all__ = ["GROUPS_NOTE", "Leaderboard"]

GROUPS_NOTE = (
    "groups: compact letter display from pairwise paired claim-block bootstrap tests within a "
    "pack, Holm-adjusted over every pair; rows sharing a letter are not significantly "
    "different (p_holm >= 0.05)"
)


@dataclass(frozen=True)
class Leaderboard:
    """The ranked board (``board``: one row per model x condition x pack, best first within
    each pack), the measure it ranks by (``kind`` outcome or field), its order, and whether rows
    judged by other judges were ranked with the others (``allow_judge_change``)."""

    board: pd.DataFrame
    kind: str = "outcome"
    measure: str = "refusal"
    ascending: bool = False
    allow_judge_change: bool = False

    @cached_property
    def rows(self) -> list[BoardRow]:
        """The board's rows, typed (what the views and the files read)."""
        return rows_of(BoardRow, self.board)

    @property
    def name(self) -> str:
        """The measure as titles say it: an outcome, or ``field NAME``."""
        return self.measure if self.kind == "outcome" else f"field {self.measure}"

    @property
    def title(self) -> str:
        return f"Leaderboard by {self.name}"

    @property
    def packs(self) -> list[str]:
        """The packs of the rows, in order."""
        return list(dict.fromkeys(r.pack for r in self.rows))

    @property
    def others(self) -> bool:
        """Some row was judged by other judges than the board's."""
        return not all(r.judges_match for r in self.rows)

    @property
    def judges(self) -> str:
        """The board's judges (those of most rows); empty for an empty board."""
        return next((r.judges for r in self.rows if r.judges_match), "")

    @property
    def coverage_notes(self) -> list[str]:
        """One line per pack whose ranked rows held different cells: what they were ranked on
        and what each row lost (nothing when they held the same cells)."""
        from pathlib import Path

        lines = []
        for pack in self.packs:
            rows = [r for r in self.rows if r.pack == pack and r.rank is not None]
            lost = [r for r in rows if r.dropped]
            if not lost:
                continue
            left = ", ".join(
                f"{Path(r.store).name}:{r.model}"
                + (f" [{r.condition}]" if r.condition else "")
                + f" {r.dropped:,}"
                for r in lost
            )
            lines.append(
                f"coverage differs in {pack}: every ranked row is ranked on the {rows[0].cells:,} "
                f"cells (claim x template x sample) all of them hold; cells left out: {left}"
            )
        return lines

    @property
    def notes(self) -> list[str]:
        """What the board says of rows whose cells differ, and of rows judged by other judges
        (nothing when there are none)."""
        if not self.others:
            return self.coverage_notes
        ranked = (
            "ranked with the others (--allow-judge-change)"
            if self.allow_judge_change
            else "not ranked (--allow-judge-change ranks them together)"
        )
        return [
            *self.coverage_notes,
            f"rows marked * were judged by other judges than the board's ({self.judges}): {ranked}",
        ]

    @property
    def exit_code(self) -> int:
        return 0

    def to_json(self) -> dict[str, Any]:
        """Exactly what ``deflectbench leaderboard --json`` writes."""
        return {
            "rows": [r.to_json() for r in self.rows],
            "by": {"kind": self.kind, "measure": self.measure},
            "order": "ascending" if self.ascending else "descending",
            "groups": GROUPS_NOTE,
            "judges": self.judges,
            "notes": self.notes,
        }
