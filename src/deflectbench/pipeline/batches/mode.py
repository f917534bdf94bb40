"""Batch mode: submit what is missing as provider batches, collect what they return.

Every step goes through the store first: a batch and its items are written before the request
leaves (state ``submitting``), its provider id the moment the provider answers, its results
with its items' states in one transaction. A process killed anywhere loses nothing: the next
collect finds a ``submitting`` batch by its tag (or submits it then), and an item in an open
batch is never put in another. Failed, expired, errored and unreadable items are sent again
in a new batch, up to ``max_attempts``; then an error row is stored (``--retry-errors`` sends
it again later). Each answer a generation batch brings goes to its judges at once: judge
batches for batch judges, the lexical judge scored here; the run's other judges (no batch
API) are named for the caller, which judges through the normal engine.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from deflectbench.benchmark import Benchmark
from deflectbench.cost import Price, max_input_tokens, price_for
from deflectbench.judging.judges import ModelJudge, is_rule_based
from deflectbench.models.base import Completion, Model, ModelError
from deflectbench.models.cache import CachedModel
from deflectbench.pipeline.batches.collect import Collecting
from deflectbench.pipeline.batches.jobs import GENERATION, Cell, GenerationJob, Job, JudgmentJob
from deflectbench.pipeline.batches.wire import (
    BatchAPI,
    Limits,
    Lines,
    batch_api,
)
from deflectbench.pipeline.requests import generation_params
from deflectbench.pipeline.results import store_errors_stop_the_run
from deflectbench.records import PendingGeneration
from deflectbench.store import Store
from deflectbench.store.batches import BatchItem, BatchRow

#: Tries per item (the first included) before an error row is stored.
MAX_ATTEMPTS = 3


@dataclass
class BatchSummary:
    """What batch mode did in one invocation, per model or judge name."""

    submitted: dict[str, int] = field(default_factory=dict)
    new_batches: int = 0
    cached: dict[str, int] = field(default_factory=dict)
    withheld: dict[str, int] = field(default_factory=dict)
    collected: dict[str, int] = field(default_factory=dict)
    resent: dict[str, int] = field(default_factory=dict)
    given_up: dict[str, int] = field(default_factory=dict)
    garbled: int = 0
    #: One line per batch that failed, expired, or lost items.
    problems: list[str] = field(default_factory=list)

    def add(self, table: dict[str, int], name: str, n: int = 1) -> None:
        if n:
            table[name] = table.get(name, 0) + n


class BatchMode(Collecting):
    """Batch mode over a store, for the models and judges given (built models, by name)."""

    def __init__(
        self,
        store: Store,
        benchmark: Benchmark,
        models: Mapping[str, Model],
        *,
        run_id: str | None = None,
        prices: Mapping[str, Price] | None = None,
        budget_usd: float | None = None,
        use_cache: bool = True,
        max_attempts: int = MAX_ATTEMPTS,
        limits: Mapping[str, Limits] | None = None,
        sections: Mapping[str, object] | None = None,
    ) -> None:
        self.store = store
        self.benchmark = benchmark
        self.models = dict(models)
        self.run_id = run_id
        self.prices = dict(prices or {})
        self.budget_usd = budget_usd
        self.use_cache = use_cache
        self.max_attempts = max_attempts
        self.limits = limits
        #: The provider sections (redacted: no credentials) kept with each batch, so a later
        #: ``status`` reaches the same servers.
        self.sections = dict(sections or {})
        self.summary = BatchSummary()
        self._apis: dict[str, BatchAPI | None] = {}

    # -- which models go by batch ----------------------------------------------------------

    def api(self, name: str) -> BatchAPI | None:
        if name not in self._apis:
            model = self.models.get(name)
            self._apis[name] = None if model is None else batch_api(model, self.limits)
        return self._apis[name]

    def batched(self, names: Sequence[str]) -> list[str]:
        """The names among ``names`` whose provider has a batch API."""
        return [n for n in names if not is_rule_based(n) and self.api(n) is not None]

    def price(self, name: str) -> Price | None:
        price = price_for(name, self.prices)
        return None if price is None else price.in_batch()

    # -- submitting ------------------------------------------------------------------------

    async def start_run(
        self,
        models: Sequence[str],
        cells: Sequence[Cell],
        conditions: Mapping[str, str],
        *,
        judges: Sequence[str],
        seed: int,
        max_tokens: int | None,
        temperature: float | None,
        retry_errors: bool = False,
    ) -> None:
        """A run's batch part, before the engine's: collect what open batches returned, then
        submit each batch model's missing cells (their answers go to ``judges``)."""
        await self.collect(only_known=True)
        for name in self.batched(models):
            base = generation_params(
                self.benchmark,
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
                name, cells, conditions[name], settings, retry_errors=retry_errors
            )

    def generation_job(
        self, name: str, condition: str, settings: Mapping[str, object]
    ) -> GenerationJob:
        return GenerationJob(self.benchmark, self.models[name], condition, settings)

    def judgment_job(self, name: str) -> JudgmentJob:
        return JudgmentJob(self.benchmark, ModelJudge(self.models[name], self.benchmark.rubric))

    async def submit_generations(
        self,
        name: str,
        cells: Sequence[Cell],
        condition: str,
        settings: Mapping[str, object],
        *,
        retry_errors: bool = False,
    ) -> None:
        """The model's cells with no result and in no open batch, as batches."""
        job = self.generation_job(name, condition, settings)
        self.store.plan(self.benchmark.key, name, cells, condition=condition)
        todo = self.store.missing_cells(
            self.benchmark.key, name, cells, retry_errors=retry_errors, condition=condition
        )
        held = self.store.batched_cells(self.benchmark.key, name, condition)
        items = [job.item(c) for c in todo if c not in held]
        await self._submit(job, items)

    async def submit_judgments(self, name: str, pending: Sequence[PendingGeneration]) -> None:
        """The answers this judge has not judged and no open batch carries, as batches."""
        job = self.judgment_job(name)
        held = self.store.batched_answers(name)
        items = [job.item(p) for p in pending if p.gen_id not in held]
        await self._submit(job, items)

    async def _submit(
        self,
        job: Job,
        items: Sequence[BatchItem],
        resubmits: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        """Answer what the request cache holds, reserve the rest's cost, split by the API's
        limits, and submit each part (stored first)."""
        if not items:
            return
        api = self.api(job.name)
        assert api is not None
        cache = CachedModel(job.model, self.store if self.use_cache else None)
        left = self._budget_left()
        price = self.price(job.name)
        parts: list[_Part] = [_Part(api.lines())]
        try:
            for n, item in enumerate(items):
                req = job.request(item)
                if cache.cache is not None:
                    key = cache.key(req.messages, req.params, req.sample)
                    item = replace(item, cache_key=key)
                    hit = cache.answer(key)
                    if hit is not None:
                        with store_errors_stop_the_run():
                            self._store_results(job, [(item, hit, None)])
                        self.summary.add(self.summary.cached, job.name)
                        continue
                cost = 0.0
                if price is not None:
                    texts = [m.content for m in req.messages]
                    cost = price.cost(max_input_tokens(texts), req.params.max_tokens)
                if left is not None:
                    if cost > left:
                        self.summary.add(self.summary.withheld, job.name, len(items) - n)
                        break
                    left -= cost
                body = job.model.wire_body(req.messages, req.params)  # type: ignore[attr-defined]
                line = api.encode(item.custom_id, body)
                part = parts[-1]
                if part.lines.count >= api.limits.max_requests or (
                    part.lines.size + part.lines.cost(line) > api.limits.max_bytes - _ENVELOPE_BYTES
                ):
                    part = _Part(api.lines())
                    parts.append(part)
                part.add(item, line, cost)
            for part in parts:
                if part.items:
                    await self._submit_part(job, part, resubmits or {})
        finally:
            for part in parts:
                part.lines.close()

    def _budget_left(self) -> float | None:
        if self.budget_usd is None:
            return None
        spent = self.store.spent_usd() + self.store.batch_reserved_usd()
        return max(0.0, self.budget_usd - spent)

    async def _submit_part(
        self, job: Job, part: _Part, resubmits: Mapping[str, Sequence[str]]
    ) -> None:
        api = self.api(job.name)
        assert api is not None
        items = part.items
        key = f"db-{uuid.uuid4().hex[:20]}"
        self.store.batch_begin(
            batch_key=key,
            wire=api.wire,
            model=job.name,
            kind=job.kind,
            run_id=self.run_id,
            benchmark=self.benchmark.key,
            condition=job.condition,
            settings={**job.settings, "sections": self.sections} if self.sections else job.settings,
            items=items,
            reserved_usd=part.reserved,
            resubmits=[(bk, i.custom_id) for i in items for bk in resubmits.get(i.custom_id, ())],
        )
        await self._send(api, key, part.lines)
        self.summary.new_batches += 1
        self.summary.add(self.summary.submitted, job.name, len(items))

    async def _send(self, api: BatchAPI, key: str, lines: Lines) -> None:
        try:
            remote, file_id = await api.submit(lines, key)
        except ModelError as exc:
            if exc.status is not None:  # refused: nothing was sent
                self.store.batch_discard(key, str(exc))
            raise  # unreachable: left `submitting`, found (or sent) by the next collect
        with store_errors_stop_the_run():
            self.store.batch_submitted(key, remote.id, remote.status, file_id)

    def _job(self, row: BatchRow) -> Job:
        if row.kind == GENERATION:
            assert row.condition is not None
            return self.generation_job(row.model, row.condition, row.settings)
        return self.judgment_job(row.model)

    def _load_answers(self, job: Job, items: Sequence[BatchItem]) -> None:
        if isinstance(job, JudgmentJob):
            found = self.store.answers(i.gen_id for i in items if i.gen_id is not None)
            for gen_id, (claim, response) in found.items():
                job.answers[gen_id] = PendingGeneration(gen_id, claim, response)

    def _store_results(
        self,
        job: Job,
        results: Sequence[tuple[BatchItem, Completion | None, str | None]],
        cache: CachedModel | None = None,
    ) -> None:
        for item, completion, error in results:
            rec = job.record(item, completion, error, self.run_id)
            if isinstance(job, GenerationJob):
                self.store.add_generation(rec)  # type: ignore[arg-type]
            else:
                self.store.add_judgment(rec)  # type: ignore[arg-type]
            if cache is not None and completion is not None and not completion.cached:
                if item.cache_key is None:
                    req = job.request(item)
                    cache.remember(req.messages, req.params, req.sample, completion)
                else:
                    cache.keep(item.cache_key, completion)


#: Bytes kept free in a batch for what wraps its lines (the Anthropic request's braces).
_ENVELOPE_BYTES = 1024


@dataclass
class _Part:
    """One batch's worth of items, within the API's request and byte limits."""

    lines: Lines
    items: list[BatchItem] = field(default_factory=list)
    reserved: float = 0.0

    def add(self, item: BatchItem, line: bytes, cost: float) -> None:
        self.items.append(item)
        self.lines.add(line)
        self.reserved += cost
