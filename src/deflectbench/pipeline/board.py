"""What a run is doing right now, for a live display: a row per model and per judge, a line
per provider (account). The pipeline writes the rows as results land; a display reads them,
from another thread if it likes (every figure is a plain number, read without a lock)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from deflectbench.pipeline.results import StageResult

if TYPE_CHECKING:
    from deflectbench.engine import Account

Role = Literal["model", "judge"]


@dataclass
class Row:
    """One model's generation or one judge in this run."""

    role: Role
    name: str
    #: The provider section (account) its requests count against; "" for the lexical judge.
    provider: str
    result: StageResult = field(default_factory=StageResult)
    #: Items known for this run: a model's cells to generate; a judge's answers handed to it
    #: so far (answers still to come are added by :meth:`Board.total`).
    known: int = 0
    #: Items finished: stored results, cache hits, error rows.
    done: int = 0
    errors: int = 0
    finished: bool = False
    #: What the model says of itself now, for the progress line (its threads, say).
    note: Callable[[], str] | None = None

    def count(self, ok: bool) -> None:
        self.done += 1
        self.errors += not ok


@dataclass(frozen=True)
class ProviderLine:
    name: str
    in_flight: int
    #: Concurrency allowed now (halved after 429s), and at most.
    limit: int
    max_concurrency: int
    requests_last_minute: int
    requests: int
    spent_usd: float


class Board:
    """The rows of a run, and the accounts their requests go through."""

    def __init__(self) -> None:
        self.rows: list[Row] = []
        self.accounts: list[Account] = []
        self.started_at = time.monotonic()
        self.ended_at: float | None = None
        #: Lines the run says as it goes (a replica set aside, or back), oldest first; a
        #: display prints each once (appended from the event loop, read from another thread).
        self.said: list[str] = []

    def say(self, line: str) -> None:
        self.said.append(line)

    def listen(self, models: Iterable[object]) -> None:
        """Hear what ``models`` say as they go (a multi-endpoint model's router)."""
        for model in models:
            listeners = getattr(model, "listeners", None)
            if isinstance(listeners, list) and self.say not in listeners:
                listeners.append(self.say)

    def row(self, role: Role, name: str, provider: str, result: StageResult) -> Row:
        row = Row(role, name, provider, result)
        self.rows.append(row)
        return row

    def elapsed(self) -> float:
        return (self.ended_at or time.monotonic()) - self.started_at

    def total(self, row: Row) -> int:
        """What the row will have done at the end, as far as is known now: a judge also gets
        every generation still to come (an upper bound: some will be errors or no answer)."""
        if row.role == "model" or row.finished:
            return max(row.known, row.done)
        coming = sum(
            max(r.known - r.done, 0) for r in self.rows if r.role == "model" and not r.finished
        )
        return max(row.known, row.done) + coming

    def providers(self) -> list[ProviderLine]:
        lines = []
        for acct in self.accounts:
            spent = sum(r.result.cost_usd for r in self.rows if r.provider == acct.name)
            lines.append(
                ProviderLine(
                    acct.name,
                    acct.in_flight,
                    acct.limit,
                    acct.max_concurrency,
                    acct.requests_last_minute(),
                    acct.requests,
                    spent,
                )
            )
        return lines
