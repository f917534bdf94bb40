"""Batch follow-through, what ``deflectbench status`` does with a batch run: collect what came
back, send again what failed, hand new answers to their judges (judge batches, the lexical
judge, and through the normal engine the judges with no batch API), and with ``wait`` again
until no batch is open; then say what is left (:func:`leftovers`): failed items not done yet,
answers awaiting a judge, a multi-turn pack's turn-2 cells due and not sent.

One event loop for the whole: the SDK clients' connections belong to it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from deflectbench.judging.judges import is_rule_based
from deflectbench.pipeline.batches.engine_judges import EngineJudges, Standing
from deflectbench.pipeline.batches.mode import BatchMode
from deflectbench.pipeline.batches.submit import BatchSummary
from deflectbench.pipeline.batches.turns_due import not_sent_by_model, turns_due
from deflectbench.store import Store
from deflectbench.store.batches import BatchRow

#: Waits before the next look at the open batches given (returns early on a stop).
Pause = Callable[[Sequence[BatchRow]], Awaitable[None]]


async def follow_through(
    mode: BatchMode,
    engine: EngineJudges,
    *,
    wait: bool,
    pause: Pause,
    on_round: Callable[[BatchSummary], None],
) -> None:
    """Collect once (nothing open: only the stored answers that await a batch judge, such as
    a multi-turn pack's turn-2 replies, go out in judge batches) and judge what came with the
    judges that have no batch API; ``on_round`` gets what each round did. With ``wait``,
    again after each ``pause`` until no batch is open or the context says stop."""
    try:
        while True:
            left = await mode.collect()
            await engine.judge(mode.engine_judges())
            on_round(mode.take_summary())
            if not wait or not left or mode.ctx.stopped():
                return
            await pause(left)
    finally:
        await mode.aclose()


@dataclass(frozen=True)
class Leftovers:
    """What a batch run still lacks after ``status``: each makes it exit 5."""

    #: (model, kind, items) failed or expired, sent again, not done yet.
    failing: list[tuple[str, str, int]] = field(default_factory=list)
    #: The engine judges that judged now or have answers awaiting them.
    judges: list[Standing] = field(default_factory=list)
    #: Turn-2 cells due and not sent, per model.
    turns: dict[str, int] = field(default_factory=dict)

    @property
    def incomplete(self) -> bool:
        return bool(self.failing or self.turns or any(s.awaiting for s in self.judges))


def leftovers(store: Store, engine: EngineJudges | None) -> Leftovers:
    """What the store's batch runs still lack (``engine``: the judges this command judged)."""
    return Leftovers(
        failing=list(store.batch_failures()),
        judges=engine.standing() if engine is not None else [],
        turns=not_sent_by_model(turns_due(store)),
    )


def answers_await_judges(store: Store, benchmark: str | None) -> bool:
    """Whether answers of batch models await a model judge their run named (failed
    verdicts included: the next status sends them again; a batch judge's too, such as turn-2
    replies a later run generated: status sends them as a judge batch)."""
    return any(
        store.pending_judgments(j, benchmark=benchmark, models=sorted(m), retry_errors=True)
        for j, m in store.batch_judges().items()
        if not is_rule_based(j)
    )
