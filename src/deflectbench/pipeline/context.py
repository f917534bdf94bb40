"""What every lane of one run shares, said once: the store, the pack, the run, the budget, the
cache and retry policy, the stop check and the live board.

A run threads these same values through every stage, lane and recorder; one frozen
:class:`RunContext` carries them instead, so a cross-cutting setting is one field here and not
a parameter in ten signatures. It is frozen: a phase that needs a variant (another board) makes
one with :func:`dataclasses.replace`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from deflectbench.benchmark import Benchmark
from deflectbench.cost import CostMeter
from deflectbench.pipeline.board import Board
from deflectbench.pipeline.results import StopCheck
from deflectbench.store import Store


@dataclass(frozen=True)
class RunContext:
    """One run's shared settings; every stage of the pipeline reads them from here."""

    store: Store
    benchmark: Benchmark
    #: The run its rows are stored under (None: rows of no recorded run, as the stages allow).
    run_id: str | None = None
    #: The budget, reserved before every request (None: no budget, nothing counted).
    meter: CostMeter | None = None
    #: Answer from the request cache before sending.
    use_cache: bool = True
    #: Ask again for cells whose stored row is an error.
    retry_errors: bool = False
    #: Ctrl-C, SIGTERM or the budget; read through :meth:`stopped`.
    should_stop: StopCheck | None = None
    #: The live display's board; each phase adds its rows to it.
    board: Board = field(default_factory=Board)

    def stopped(self) -> bool:
        """Whether the run is to stop: requests in flight finish, nothing new is sent."""
        return self.should_stop is not None and self.should_stop()

    @property
    def cache(self) -> Store | None:
        """The request cache: the store, unless the run asked for no cache."""
        return self.store if self.use_cache else None
