"""What batch mode's commands end with: the follow-through ``status`` does (collect, resend,
judge; what is left), a batch file written for the user's own engine (``run --batch-file``)
and its results taken back (``import-batch``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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
    """``import-batch``: the lines of an engine's output, what each became. Every count is of
    lines or cells, never of verdicts (the judges' are ``judged``, apart)."""

    #: Non-blank lines read.
    lines: int = 0
    #: Cells answered by this import (``replaced`` of them in place of a "no result line"
    #: error row an earlier import stored when their line was missing).
    answered: int = 0
    replaced: int = 0
    #: Cells stored as error rows with the engine's message (message -> cells).
    errors: int = 0
    error_messages: dict[str, int] = field(default_factory=dict)
    #: Cells of the batch files collected now that had no line: "no result line" error rows
    #: (a later file with their lines replaces them).
    missing: int = 0
    #: Lines skipped: for cells of no batch file of this store (another part's, run's or
    #: store's), for a cell answered before or twice in the file, fitting cells of two batch
    #: files, naming another model (model -> lines), unreadable.
    other_cells: int = 0
    duplicates: int = 0
    ambiguous: int = 0
    other_model: dict[str, int] = field(default_factory=dict)
    unreadable: int = 0
    unreadable_lines: list[str] = field(default_factory=list)
    #: The batch models the lines went to -> the model id their lines carry.
    models: dict[str, str] = field(default_factory=dict)
    #: Nothing taken: the model ids this store's batch files were written for.
    expected: list[str] = field(default_factory=list)
    #: Verdicts judges gave the new answers (the lexical judge), per judge.
    judged: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def unmatched(self) -> bool:
        """Lines were read and none is for a cell of this store's batch files (another
        store's output, or the wrong ``--db``)."""
        taken = self.answered or self.errors or self.duplicates
        return bool(self.lines) and not (taken or self.other_model or self.ambiguous)

    @property
    def exit_code(self) -> int:
        """1 when lines could not be read, named another model, fit two batch files (not
        imported: look at the file) or none was for this store; else 0."""
        bad = self.unreadable or self.other_model or self.ambiguous or self.unmatched
        return 1 if bad else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "lines": self.lines,
            "cells_answered": self.answered,
            "replaced_errors": self.replaced,
            "errors": self.errors,
            "error_messages": [{"message": k, "cells": n} for k, n in self.error_messages.items()],
            "no_result_line": self.missing,
            "skipped_other_cells": self.other_cells,
            "skipped_duplicates": self.duplicates,
            "skipped_ambiguous": self.ambiguous,
            "other_model_lines": [{"model": k, "lines": n} for k, n in self.other_model.items()],
            "unreadable": self.unreadable,
            "unreadable_lines": list(self.unreadable_lines),
            "models": dict(self.models),
            "expected_models": list(self.expected),
            "judged": dict(self.judged),
            "problems": list(self.problems),
            "exit_code": self.exit_code,
        }
