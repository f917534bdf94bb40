"""``deflectbench status``'s word on a multi-turn pack's turn 2 in batch mode: one line per
model with turn-2 cells due and not sent (the count is the library's:
:func:`~deflectbench.pipeline.batches.turns_due.turns_due`), and ``--json``'s ``turn2``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from deflectbench.cli.console import err

if TYPE_CHECKING:
    from deflectbench.store import Store


def report_turns(per_model: Mapping[str, int]) -> None:
    """One line per model with turn-2 cells due and not sent."""
    for model, n in per_model.items():
        cells = "cell" if n == 1 else "cells"
        err.print(
            f"{model}: {n} turn-2 {cells} due, not sent yet: run the same "
            "`deflectbench run --batch ...` again (turn 2 goes by ordinary requests)",
            style="yellow",
            highlight=False,
            markup=False,
        )


def turns_json(store: Store) -> list[dict[str, Any]]:
    """``status --json``'s ``turn2``: each multi-turn batch model's cells due and not sent."""
    from deflectbench.pipeline.batches.turns_due import turns_due

    return [asdict(t) for t in turns_due(store)]
