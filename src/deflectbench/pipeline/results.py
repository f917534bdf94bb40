"""What one model's generation or one judge did in a run, and the store failure that stops it."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from deflectbench.engine import Fatal
from deflectbench.models.base import Completion
from deflectbench.store import StoreError
from deflectbench.vocab import NON_ANSWERS, TRUNCATED

#: Called once per finished item with True (stored result) or False (stored error).
Advance = Callable[[bool], None]
StopCheck = Callable[[], bool]


@dataclass
class StageResult:
    """What one stage (a model's generation, or one judge) did in this run.

    For generation ``ok`` counts stored answers (truncated ones included) and ``non_answers``
    the replies that are none, by type; for a judge ``ok`` counts stored replies and
    ``parse_errors`` those of them holding no verdict (as ``deflectbench status`` does).
    """

    ok: int = 0
    errors: int = 0
    skipped: int = 0
    #: Answered from the request cache (no request sent, nothing paid).
    cached: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    stopped_early: bool = False
    #: Why the engine gave up on its own (e.g. every request failing: a bad key or model name).
    aborted: str | None = None
    #: The first few error messages (scrubbed).
    error_samples: list[str] = field(default_factory=list)
    #: Errors by cause (``HTTP 500``, ``timeout``, ``connection refused``, ...) ...
    errors_by_cause: dict[str, int] = field(default_factory=dict)
    #: ... and the first message of each cause.
    error_examples: dict[str, str] = field(default_factory=dict)
    #: Replies that are no answer, by type (``content_filter``, ``refusal``, ``empty``).
    non_answers: dict[str, int] = field(default_factory=dict)
    #: Answers cut at ``max_tokens`` (stored and judged).
    truncated: int = 0
    parse_errors: int = 0
    #: The first reply that held no verdict, with why.
    parse_error_example: str | None = None
    #: Items not sent because the budget could not cover their maximum cost (still to do).
    withheld: int = 0
    #: Items taken up but not finished because the stage stopped (still to do).
    unfinished: int = 0
    #: What this stage's priced requests cost, in USD.
    cost_usd: float = 0.0

    def failures(self) -> dict[str, int]:
        """Items without a result, by cause: the errors, and those the budget held back."""
        causes = dict(self.errors_by_cause)
        if self.withheld:
            causes["not sent: over the budget"] = self.withheld
        return causes

    def add_error(self, cause: str, message: str) -> None:
        self.errors += 1
        self.errors_by_cause[cause] = self.errors_by_cause.get(cause, 0) + 1
        self.error_examples.setdefault(cause, message)
        if len(self.error_samples) < 3:
            self.error_samples.append(message)

    def add_reply(self, completion: Completion) -> None:
        """Count a stored reply: its type, tokens and cost."""
        reason = completion.finish_reason
        if reason in NON_ANSWERS:
            self.non_answers[reason] = self.non_answers.get(reason, 0) + 1
        self.truncated += reason == TRUNCATED
        if completion.cached:
            self.cached += 1
            return
        self.input_tokens += completion.usage.input_tokens
        self.output_tokens += completion.usage.output_tokens
        self.cost_usd += completion.cost_usd or 0.0


class StoreWriteError(StoreError, Fatal):
    """The store failed while a stage was saving or looking up a result: the stage stops."""


@contextmanager
def store_errors_stop_the_run() -> Iterator[None]:
    """Turn a store failure (busy, full, read-only) into one clear error that stops the run,
    never into an error row for a request that was answered."""
    try:
        yield
    except sqlite3.Error as exc:
        raise StoreWriteError(
            f"the store could not save a result ({exc}); everything stored so far is kept: "
            "run the same command again to continue"
        ) from None
