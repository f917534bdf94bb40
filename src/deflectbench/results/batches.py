"""What batch mode's commands end with: the follow-through ``status`` does (collect, resend,
judge; what is left), a batch file written for the user's own engine (``run --batch-file``)
and its results taken back (``import-batch``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from deflectbench.pipeline.batches import BatchSummary
    from deflectbench.pipeline.batches.follow import Leftovers
    from deflectbench.store.batches import BatchRow


@dataclass(frozen=True)
class BatchFollow:
    """``status`` on a store with batches: what each round did, the batches after it, what
    is still left, and whether a stop ended it."""

    leftovers: Leftovers
    batches: list[BatchRow]
    stopped: bool = False
    rounds: list[BatchSummary] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """130 when stopped; 5 while failed items, answers awaiting a judge or turn-2 cells
        due are left; else 0."""
        if self.stopped:
            return 130
        return 5 if self.leftovers.incomplete else 0


@dataclass
class Written:
    """``run --batch-file``: the cells of one model written as OpenAI batch JSONL."""

    model: str
    written: int = 0
    cached: int = 0
    #: Lines of cells written before and not imported yet, written again.
    held: int = 0
    withheld: int = 0


@dataclass
class Imported:
    """``import-batch``: the lines of an engine's output, what was stored, what was not."""

    lines: int = 0
    garbled: int = 0
    #: Lines whose cell is in no open batch file (imported before, or not this store's).
    not_open: int = 0
    collected: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """1 when lines could not be read; else 0."""
        return 1 if self.garbled else 0
