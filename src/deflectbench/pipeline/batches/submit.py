"""Batch mode's sending half: which models go by batch, what a batch carries, and how it leaves.

Every step goes through the store first: a batch and its items are written before the request
leaves (state ``submitting``), its provider id the moment the provider answers. Before an item
is put in a batch, the request cache is asked (a hit is stored at once), and its maximum cost
is reserved by the budget's one step (:meth:`~deflectbench.cost.CostMeter.reserve`, on a meter
at batch prices that counts what open batches hold): an item that does not fit is withheld,
and so is every item after it. A batch is split by its API's request and byte limits.

The batch API is the model's own (:meth:`~deflectbench.models.base.Model.batch_api`): a plugin
model batches by offering one; a batch line is the body the model's normal path sends.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from deflectbench import gate
from deflectbench.cost import BudgetReached, CostMeter, Price, max_input_tokens
from deflectbench.gate import GateError
from deflectbench.judging.judges import ModelJudge, is_rule_based
from deflectbench.models.base import Completion, Model, ModelError
from deflectbench.models.batch_api import BatchAPI, Limits, Lines, not_ours
from deflectbench.models.cache import CachedModel
from deflectbench.models.wire_log import WireLog
from deflectbench.pipeline.batches.jobs import (
    GENERATION,
    GenerationJob,
    Job,
    JudgmentJob,
    batch_result,
)
from deflectbench.pipeline.batches.manifests import BatchManifests
from deflectbench.pipeline.context import RunContext
from deflectbench.pipeline.results import store_errors_stop_the_run
from deflectbench.records import Cell, PendingGeneration
from deflectbench.store.batches import BatchItem, BatchRow, NewBatch
from deflectbench.vocab import FIELDS

#: An item's result as stored: the item, its completion (None: failed), why it failed.
Result = tuple[BatchItem, Completion | None, str | None]


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
    #: Verdicts judges gave here, per judge (the lexical judge's; also in ``collected``).
    judged: dict[str, int] = field(default_factory=dict)
    #: One line per batch that failed, expired, or lost items.
    problems: list[str] = field(default_factory=list)

    def add(self, table: dict[str, int], name: str, n: int = 1) -> None:
        if n:
            table[name] = table.get(name, 0) + n


def batch_api(model: Model, limits: Mapping[str, Limits] | None = None) -> BatchAPI | None:
    """The batch API the model offers (None: the normal path serves it), with the limits given
    for its wire, if any (tests and emulators set tighter ones)."""
    api = model.batch_api()
    if api is not None and limits and api.wire in limits:
        api.limits = limits[api.wire]
    return api


class Submitter:
    """The state batch mode's halves share (the run's context, the built models, their batch
    APIs, the summary) and the sending of batches."""

    def __init__(
        self,
        ctx: RunContext,
        models: Mapping[str, Model],
        limits: Mapping[str, Limits] | None = None,
        sections: Mapping[str, object] | None = None,
        manifest_run: str | None = None,
    ) -> None:
        self.ctx = ctx
        self.store = ctx.store
        self.benchmark = ctx.benchmark
        self.models = dict(models)
        self.limits = limits
        #: The provider sections (redacted: no credentials) kept with each batch, so a later
        #: ``status`` reaches the same servers.
        self.sections = dict(sections or {})
        self.summary = BatchSummary()
        #: The manifest rows of what batches carry (recording only; ``ctx.run_id`` or, when
        #: the context has none, ``manifest_run``'s).
        self.manifests = BatchManifests(ctx.store, manifest_run)
        #: The run's budget and prices, at batch rates.
        self.pricing = (ctx.meter or CostMeter(None)).for_batches(0.0)
        self._apis: dict[str, BatchAPI | None] = {}

    def api(self, name: str) -> BatchAPI | None:
        if name not in self._apis:
            model = self.models.get(name)
            self._apis[name] = None if model is None else batch_api(model, self.limits)
        return self._apis[name]

    def batched(self, names: Sequence[str]) -> list[str]:
        """The names among ``names`` whose model offers a batch API."""
        return [n for n in names if not is_rule_based(n) and self.api(n) is not None]

    def price(self, name: str) -> Price | None:
        return self.pricing.price(name)

    # -- jobs --------------------------------------------------------------------------------

    def generation_job(
        self, name: str, condition: str, settings: Mapping[str, object]
    ) -> GenerationJob:
        return GenerationJob(self.benchmark, self.models[name], condition, settings)

    def judgment_job(self, name: str) -> JudgmentJob:
        return JudgmentJob(self.benchmark, ModelJudge(self.models[name], self.benchmark.rubric))

    def job(self, row: BatchRow) -> Job:
        """The job a stored batch was made by."""
        if row.kind == GENERATION:
            assert row.condition is not None
            return self.generation_job(row.model, row.condition, row.settings)
        return self.judgment_job(row.model)

    def load_answers(self, job: Job, items: Sequence[BatchItem]) -> None:
        """A judgment job's answers for ``items``, read back from the store."""
        if isinstance(job, JudgmentJob):
            found = self.store.answers(i.gen_id for i in items if i.gen_id is not None)
            talks = self.store.conversations(found)  # a later turn's judge sees it
            for gen_id, (claim, response) in found.items():
                job.answers[gen_id] = PendingGeneration(
                    gen_id, claim, response, talks.get(gen_id, ())
                )

    def _store_generation(
        self, job: GenerationJob, item: BatchItem, completion: Completion | None, error: str | None
    ) -> Completion | None:
        """Store an item's result, or its error row where the gate refuses the result (the store
        would); the completion stored (None: an error row, nothing to cache)."""
        rec = job.record(item, batch_result(completion, error), self.ctx)
        try:
            gate.generation(rec)
        except GateError as exc:
            completion, rec = None, job.record(item, f"refused: {exc}", self.ctx)
        self.store.add_generation(rec)
        return completion

    def _store_judgment(
        self, job: JudgmentJob, item: BatchItem, completion: Completion | None, error: str | None
    ) -> Completion | None:
        """:meth:`_store_generation` for a judge's verdict."""
        rec = job.record(item, batch_result(completion, error), self.ctx)
        try:
            gate.judgment(rec, FIELDS)
        except GateError as exc:
            completion, rec = None, job.record(item, f"refused: {exc}", self.ctx)
        self.store.add_judgment(rec)
        return completion

    def store_results(
        self, job: Job, results: Sequence[Result], cache: CachedModel | None = None
    ) -> None:
        for item, completion, error in results:
            if isinstance(job, GenerationJob):
                completion = self._store_generation(job, item, completion, error)
            else:
                completion = self._store_judgment(job, item, completion, error)
            if cache is not None and completion is not None and not completion.cached:
                if item.cache_key is None:
                    req = job.request(item)
                    cache.remember(req.messages, req.params, req.sample, completion)
                else:
                    cache.keep(item.cache_key, completion)

    def cache(self, job: Job) -> CachedModel:
        return CachedModel(job.model, self.ctx.cache)

    # -- submitting --------------------------------------------------------------------------

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
        await self.submit(job, [job.item(c) for c in todo if c not in held])

    async def submit_judgments(self, name: str, pending: Sequence[PendingGeneration]) -> None:
        """The answers this judge has not judged and no open batch carries, as batches."""
        job = self.judgment_job(name)
        held = self.store.batched_answers(name)
        await self.submit(job, [job.item(p) for p in pending if p.gen_id not in held])

    async def submit(
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
        cache = self.cache(job)
        meter = self.pricing.for_batches(self.store.committed_usd())
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
                            self.store_results(job, [(item, hit, None)])
                        self.summary.add(self.summary.cached, job.name)
                        continue
                texts = [m.content for m in req.messages]
                try:
                    hold = meter.reserve(job.name, max_input_tokens(texts), req.params.max_tokens)
                except BudgetReached:
                    self.summary.add(self.summary.withheld, job.name, len(items) - n)
                    break
                line = api.encode(item.custom_id, req.messages, req.params)
                body = _sent_body(api, req)
                part = parts[-1]
                if part.lines.count >= api.limits.max_requests or (
                    part.lines.size + part.lines.cost(line) > api.limits.max_bytes - _ENVELOPE_BYTES
                ):
                    part = _Part(api.lines())
                    parts.append(part)
                part.add(item, line, hold.amount_usd, body)
            for part in parts:
                if part.items:
                    await self._submit_part(job, part, resubmits or {})
        finally:
            for part in parts:
                part.lines.close()

    async def _submit_part(
        self, job: Job, part: _Part, resubmits: Mapping[str, Sequence[str]]
    ) -> None:
        api = self.api(job.name)
        assert api is not None
        items = part.items
        key = f"db-{uuid.uuid4().hex[:20]}"
        batch = NewBatch(
            batch_key=key,
            wire=api.wire,
            model=job.name,
            kind=job.kind,
            run_id=self.ctx.run_id,
            benchmark=self.benchmark.key,
            condition=job.condition,
            settings={**job.settings, "sections": self.sections} if self.sections else job.settings,
            reserved_usd=part.reserved,
        )
        again = [(bk, i.custom_id) for i in items for bk in resubmits.get(i.custom_id, ())]
        self.store.batch_begin(batch, items, again)
        if await self.send(api, key, part.lines):
            self.manifests.submitted(self.ctx.run_id, job, part.wire)
        self.summary.new_batches += 1
        self.summary.add(self.summary.submitted, job.name, len(items))

    async def send(self, api: BatchAPI, key: str, lines: Lines) -> bool:
        """Send a stored batch's lines; its provider id is stored the moment it is known.
        True when the batch was adopted (its lines are the store's, submitted)."""
        try:
            remote, file_id = await api.submit(lines, key)
        except ModelError as exc:
            if exc.status is not None:  # refused: nothing was sent
                self.store.batch_discard(key, str(exc))
            raise  # unreachable: left `submitting`, found (or sent) by the next collect
        taken = {r.remote_id: r.batch_key for r in self.store.batch_list() if r.remote_id}
        if taken.get(remote.id, key) != key:  # another batch's id: its results are not these
            self.store.batch_discard(
                key,
                f"the provider answered with batch id {remote.id}, which is this store's "
                f"batch {taken[remote.id]}: not adopted",
            )
            self.summary.problems.append(
                f"batch {key}: the provider answered with the id of another batch "
                f"({remote.id}); not adopted, its items go again"
            )
            return False
        why = not_ours(
            remote,
            key,
            items=lines.count,
            input_file_id=file_id,
            endpoint=getattr(api, "endpoint", None),
        )
        if why is not None:  # another store's or another model's batch: never adopted
            self.store.batch_discard(
                key, f"the provider answered with batch id {remote.id}: {why}: not adopted"
            )
            self.summary.problems.append(
                f"batch {key}: the provider answered with batch id {remote.id}, which is not "
                f"the one this store sent ({why}); not adopted, its items go again"
            )
            return False
        with store_errors_stop_the_run():
            self.store.batch_submitted(key, remote.id, remote.status, file_id)
        return True


#: Bytes kept free in a batch for what wraps its lines (the Anthropic request's braces).
_ENVELOPE_BYTES = 1024


@dataclass
class _Part:
    """One batch's worth of items, within the API's request and byte limits."""

    lines: Lines
    items: list[BatchItem] = field(default_factory=list)
    reserved: float = 0.0
    #: The parameters its lines' bodies carry, for the manifest.
    wire: WireLog = field(default_factory=WireLog)

    def add(
        self, item: BatchItem, line: bytes, cost: float, body: Mapping[str, Any] | None
    ) -> None:
        self.items.append(item)
        self.lines.add(line)
        self.reserved += cost
        if body is None:  # an API that does not say its bodies: the line counted only
            self.wire.requests += 1
        else:
            self.wire.note_sent(body)


def _sent_body(api: BatchAPI, req: Any) -> Mapping[str, Any] | None:
    """The body a line carries, for the manifest, from an API that says it (the built-in ones
    do; a plugin's may not): never fails the submit."""
    body = getattr(api, "body", None)
    if body is None:
        return None
    try:
        found = body(req.messages, req.params)
    except Exception:  # recording only
        return None
    return found if isinstance(found, Mapping) else None
