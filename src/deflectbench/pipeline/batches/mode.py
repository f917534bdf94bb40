"""Batch mode: submit what is missing as provider batches, collect what they return.

Two halves, each an object of its own: the :class:`~.submit.Submitter` (which models go by
batch, the request cache and the budget before a batch leaves, the store before the provider)
and the :class:`~.collect.Collector` (open batches looked at, results stored, failed items sent
again up to ``max_attempts``, new answers handed to their judges). :class:`BatchMode` holds
both over one run's :class:`~deflectbench.pipeline.context.RunContext` (its store, pack, run id,
cache flag, retry policy, and the meter whose budget and prices batches keep) and is what a
run and ``status`` call. A process killed anywhere loses nothing: see the halves' notes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from deflectbench.models.base import Model
from deflectbench.models.batch_api import BatchAPI, Limits
from deflectbench.pipeline.batches.collect import Collector, Progress
from deflectbench.pipeline.batches.submit import BatchSummary, Submitter
from deflectbench.pipeline.context import RunContext
from deflectbench.pipeline.requests import generation_params
from deflectbench.records import Cell
from deflectbench.store.batches import BatchRow

#: Tries per item (the first included) before an error row is stored.
MAX_ATTEMPTS = 3


class BatchMode:
    """Batch mode over a run's context, for the models and judges given (built, by name).

    ``limits``: per wire, tighter limits than the APIs' own; ``sections``: the provider
    sections (redacted) kept with each batch, so a later ``status`` reaches the same servers;
    ``manifest_run``: the run whose manifest rows say what the batches carried when the
    context has no run (``judge --batch``).
    """

    def __init__(
        self,
        ctx: RunContext,
        models: Mapping[str, Model],
        *,
        max_attempts: int = MAX_ATTEMPTS,
        limits: Mapping[str, Limits] | None = None,
        sections: Mapping[str, object] | None = None,
        manifest_run: str | None = None,
    ) -> None:
        self.ctx = ctx
        self.submitter = Submitter(ctx, models, limits, sections, manifest_run)
        self.collector = Collector(self.submitter, max_attempts)
        #: The model's cells with no result and in no open batch, as batches (the submitter's).
        self.submit_generations = self.submitter.submit_generations
        #: The answers a judge has not judged and no open batch carries, as batches.
        self.submit_judgments = self.submitter.submit_judgments

    @property
    def models(self) -> dict[str, Model]:
        return self.submitter.models

    @property
    def summary(self) -> BatchSummary:
        """What this mode did since it was made (or since :meth:`take_summary`)."""
        return self.submitter.summary

    def take_summary(self) -> BatchSummary:
        """What this mode did since the last call; the next starts afresh."""
        done, self.submitter.summary = self.submitter.summary, BatchSummary()
        return done

    def api(self, name: str) -> BatchAPI | None:
        return self.submitter.api(name)

    def batched(self, names: Sequence[str]) -> list[str]:
        """The names among ``names`` whose model offers a batch API."""
        return self.submitter.batched(names)

    # -- a run's batch part ------------------------------------------------------------------

    async def start_run(
        self,
        models: Sequence[str],
        cells: Sequence[tuple[str, str, int]],
        conditions: Mapping[str, str],
        *,
        judges: Sequence[str],
        seed: int,
        max_tokens: int | None,
        temperature: float | None,
    ) -> None:
        """A run's batch part, before the engine's: collect what open batches returned, then
        submit each batch model's missing cells (their answers go to ``judges``; cells whose
        stored row is an error again if the context says to retry errors). ``cells`` are the
        plan's (plain tuples)."""
        await self.collect(only_known=True)
        todo = [Cell(*c) for c in cells]
        for name in self.batched(models):
            base = generation_params(
                self.ctx.benchmark,
                self.models[name],
                seed=seed,
                max_tokens=max_tokens,
                temperature=temperature,
            )
            settings = {
                "seed": seed,
                "temperature": base.temperature,
                "max_tokens": base.max_tokens,
                "judges": list(judges),
            }
            await self.submit_generations(
                name, todo, conditions[name], settings, retry_errors=self.ctx.retry_errors
            )

    async def judge(self, names: Sequence[str]) -> list[str]:
        """``judge --batch``: collect open batches, submit each batch judge's unjudged answers
        (failed verdicts again if the context says to retry errors); return the judges left
        to the engine (no batch API)."""
        await self.collect()
        store, key = self.ctx.store, self.ctx.benchmark.key
        for j in self.batched(names):
            pending = store.pending_judgments(j, benchmark=key, retry_errors=self.ctx.retry_errors)
            await self.submit_judgments(j, pending)
        return [j for j in names if j not in self.batched(names)]

    # -- collecting --------------------------------------------------------------------------

    async def collect(
        self, progress: Progress | None = None, *, only_known: bool = False
    ) -> list[BatchRow]:
        """Look at every open batch once (see :meth:`Collector.collect`); the open ones after."""
        return await self.collector.collect(progress, only_known=only_known)

    def engine_judges(self) -> dict[str, list[str]]:
        """The model judges batch runs named that no batch API serves: judge -> the batch
        models whose answers it judges (``status`` judges them through the normal engine)."""
        return self.collector.engine_judges()

    async def cancel(self) -> list[tuple[BatchRow, str]]:
        """Ask the provider to cancel every open batch; what finished is still collected."""
        return await self.collector.cancel()

    async def aclose(self) -> None:
        """Close the models' connections (they belong to the event loop that made them)."""
        for m in self.models.values():
            await m.aclose()
