"""Batch mode's collecting half: look at open batches, store what ended, send again what
failed, hand new answers to their judges, cancel.

A batch left ``submitting`` by a process that died is first looked for at the provider by its
tag (found: adopted, never sent twice), else sent then. An ended batch's results are stored
with its items' states in one transaction; an item with no readable result (failed, expired,
errored, a garbled line, missing) is marked to go again, up to ``max_attempts``, then stored
as an error row. Cancelled by the user: left missing, not failed. New answers go to the batch
judges and the lexical judge here; :meth:`Collector.engine_judges` names the judges left to
the normal engine (``status`` runs them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime

from deflectbench import gate
from deflectbench.cost import Price
from deflectbench.gate import GateError
from deflectbench.judging.judges import is_rule_based, lexical_judgment
from deflectbench.models.base import Completion, ModelError
from deflectbench.models.batch_api import (
    CANCELED,
    SUCCEEDED,
    BatchAPI,
    Outcome,
    Remote,
    foreign_ids,
    not_ours,
)
from deflectbench.models.wire_log import WireLog
from deflectbench.pipeline.batches.jobs import GenerationJob, Job
from deflectbench.pipeline.batches.submit import Result, Submitter
from deflectbench.pipeline.results import store_errors_stop_the_run
from deflectbench.store.batches import BatchItem, BatchRow

#: An item whose result the gate refused (usage out of range): sent again within the limit.
REFUSED = "refused"
#: An item of an ended batch with no result line, and why (its error row says both).
LOST, NO_LINE = "lost", "no readable result line"
#: What ``deflectbench batch cancel`` notes on a batch (its unfinished items are not resent).
CANCELLED_BY_USER = "cancelled by deflectbench batch cancel"
#: Called with (batches looked at, batches in all) while collecting.
Progress = Callable[[int, int], None]


class Collector:
    """The collecting half of batch mode, over the :class:`Submitter` it sends again through."""

    def __init__(self, submitter: Submitter, max_attempts: int) -> None:
        self.sub = submitter
        self.store = submitter.store
        self.max_attempts = max_attempts

    async def collect(
        self, progress: Progress | None = None, *, only_known: bool = False
    ) -> list[BatchRow]:
        """Look at every open batch once; store what ended; send again what failed (within
        the retry limit); hand new answers to their judges. Returns the open batches after.

        ``only_known``: leave alone batches of models this mode was not given (a run
        collects its own models' batches; ``status`` every one, and says which it cannot
        reach)."""
        rows = self.store.batch_list(open_only=True)
        if only_known:
            rows = [r for r in rows if self.sub.api(r.model) is not None]
        for n, row in enumerate(rows):
            api = self._api_for(row)
            remote = await self._resolve(api, row) if row.state == "submitting" else None
            if row.state == "open" or remote is not None:
                remote_id = remote.id if remote else row.remote_id
                assert remote_id is not None  # an open batch's id is stored
                remote = await api.retrieve(remote_id)
                why = "the provider answered with another id" if remote.id != remote_id else None
                why = why or not_ours(
                    remote,
                    row.batch_key,
                    items=row.items,
                    input_file_id=row.input_file_id,
                    endpoint=getattr(api, "endpoint", None),
                )
                if why is not None:  # another store's or model's batch: none of it is stored
                    self._refuse(row, remote_id, why)
                elif remote.ended:
                    self.store.batch_progress(row.batch_key, remote.status, remote.counts)
                    await self._collect_one(api, row, remote)
                else:
                    self.store.batch_progress(row.batch_key, remote.status, remote.counts)
            if progress is not None:
                progress(n + 1, len(rows))
        await self.resend()
        await self.judge_new_answers()
        return self.store.batch_list(open_only=True)

    def _api_for(self, row: BatchRow) -> BatchAPI:
        api = self.sub.api(row.model)
        if api is None:
            raise ModelError(
                f"batch {row.remote_id or row.batch_key} is {row.model}'s, which this command "
                "cannot reach: pass the --config the run used"
            )
        return api

    async def _resolve(self, api: BatchAPI, row: BatchRow) -> Remote | None:
        """A batch written but not known to be submitted: find it by its tag, else send it."""
        since = datetime.fromisoformat(row.created_at.replace("Z", "+00:00")).timestamp()
        known = {r.remote_id for r in self.store.batch_list() if r.remote_id}
        remote = await api.find(row.batch_key, since, row.items, known)
        if remote is not None:
            self.store.batch_submitted(row.batch_key, remote.id, remote.status, None)
            return remote
        job = self.sub.job(row)
        items = self.store.batch_items(row.batch_key)
        self.sub.load_answers(job, items)
        lines = api.lines()
        sent = WireLog()
        try:
            for i in items:
                lines.add(_line(api, job, i))
                sent.requests += 1
            if await self.sub.send(api, row.batch_key, lines):
                self.sub.manifests.submitted(self.sub.ctx.run_id, job, sent)
        finally:
            lines.close()
        return None  # just sent: nothing to retrieve yet

    async def _collect_one(self, api: BatchAPI, row: BatchRow, remote: Remote) -> None:
        """Store an ended batch's results and its items' states in one transaction."""
        job = self.sub.job(row)
        items = self.store.batch_items(row.batch_key, "open")
        by_id = {i.custom_id: i for i in items}
        outcomes, garbled = await api.results(remote) if any(remote.refs) else ([], 0)
        sent = {i.custom_id for i in self.store.batch_items(row.batch_key)}
        if (why := foreign_ids(outcomes, sent)) is not None:
            self._refuse(row, remote.id, why)  # not the batch this store sent: nothing stored
            return
        self.sub.load_answers(job, items)
        self.sub.summary.garbled += garbled
        price = self.sub.price(job.name)
        cache = self.sub.cache(job)
        user_cancelled = (row.error or "") == CANCELLED_BY_USER
        results: list[Result] = []
        states: list[tuple[str, str | None, str]] = []
        failed: dict[str, int] = {}
        seen: set[str] = set()
        for o in outcomes:
            item = by_id.get(o.custom_id)
            if item is None or o.custom_id in seen:
                continue  # not ours, or a repeated line: each item once
            seen.add(o.custom_id)
            if o.kind == SUCCEEDED and o.completion is not None:
                try:  # the gate's rule, before anything is stored or priced
                    priced = _priced(o.completion, price)
                except GateError as exc:  # this item's error, sent again within the limit
                    failed[REFUSED] = failed.get(REFUSED, 0) + 1
                    refused = Outcome(o.custom_id, REFUSED, error=str(exc))
                    states.append(self._failed(job, item, refused, user_cancelled, results))
                    continue
                results.append((item, priced, None))
                states.append(("done", None, item.custom_id))
                continue
            failed[o.kind] = failed.get(o.kind, 0) + 1
            states.append(self._failed(job, item, o, user_cancelled, results))
        for item in items:
            if item.custom_id not in seen:
                failed["no result"] = failed.get("no result", 0) + 1
                lost = Outcome(item.custom_id, LOST, error=NO_LINE)
                states.append(self._failed(job, item, lost, user_cancelled, results))
        with store_errors_stop_the_run(), self.store.transaction():
            self.sub.store_results(job, results, cache=cache)
            self.store.batch_close(row.batch_key, states, error=row.error or remote.error)
        self._recorded(job, row, results, states)
        if failed:
            what = ", ".join(f"{n} {k}" for k, n in sorted(failed.items()))
            self.sub.summary.problems.append(
                f"{job.name} batch {remote.id} {remote.status}: {len(items) - sum(failed.values())} "
                f"of {len(items)} done; {what}"
                + (f"; {garbled} unreadable result lines" if garbled else "")
                + (f" ({remote.error})" if remote.error else "")
            )

    def replace_lost(self, row: BatchRow, pairs: Sequence[tuple[BatchItem, Outcome]]) -> None:
        """Results that came after their batch was collected (a batch file's output in two
        files): each item, given up for want of a result line, stored now: its answer (or
        the engine's error) replaces the "no result line" error row, with the item's state,
        in one transaction. Only such rows: the store keeps a good result whatever comes."""
        job = self.sub.job(row)
        price = self.sub.price(job.name)
        results: list[Result] = []
        states: list[tuple[str, str | None, str]] = []
        for item, o in pairs:
            if o.kind == SUCCEEDED and o.completion is not None:
                try:
                    results.append((item, _priced(o.completion, price), None))
                    states.append(("done", None, item.custom_id))
                    continue
                except GateError as exc:
                    o = Outcome(o.custom_id, REFUSED, error=str(exc))
            states.append(self._failed(job, item, o, False, results))
        with store_errors_stop_the_run(), self.store.transaction():
            self.sub.store_results(job, results, cache=self.sub.cache(job))
            self.store.batch_items_update(row.batch_key, states)
        self._recorded(job, row, results, states)

    def _recorded(
        self,
        job: Job,
        row: BatchRow,
        results: Sequence[Result],
        states: Sequence[tuple[str, str | None, str]],
    ) -> None:
        """What a collection stored, recorded in the run's manifest (recording only, after the
        store has it; never raises) and counted in the summary."""
        self.sub.manifests.collected(
            self.sub.ctx.run_id,
            job,
            row.run_id,
            [c for _, c, _ in results if c is not None],
            sum(1 for s in states if s[0] != "done"),
        )
        self.sub.summary.add(
            self.sub.summary.collected, job.name, sum(1 for s in states if s[0] == "done")
        )

    def _refuse(self, row: BatchRow, remote_id: str, why: str) -> None:
        """A batch the provider says is not the one this store sent (another store's tag,
        another input file, other custom ids): none of its results is stored; each open item
        is that item's error, sent again within the retry limit; one line says why."""
        job = self.sub.job(row)
        items = self.store.batch_items(row.batch_key, "open")
        self.sub.load_answers(job, items)
        results: list[Result] = []
        states = [
            self._failed(job, i, Outcome(i.custom_id, REFUSED, error=why), False, results)
            for i in items
        ]
        with store_errors_stop_the_run(), self.store.transaction():
            if results:  # given up after the retry limit: error rows, never answers
                self.sub.store_results(job, results, cache=self.sub.cache(job))
            self.store.batch_close(row.batch_key, states, error=f"not adopted: {why}")
        self.sub.summary.problems.append(
            f"{job.name} batch {remote_id}: not adopted, {why}; its {len(items)} items go again"
        )

    def _failed(
        self,
        job: Job,
        item: BatchItem,
        outcome: Outcome,
        user_cancelled: bool,
        results: list[Result],
    ) -> tuple[str, str | None, str]:
        """An item without an answer: cancelled by the user (left missing), sent again, or
        given up after ``max_attempts`` (an error row)."""
        error = f"batch {outcome.kind}: {outcome.error}"
        if user_cancelled and outcome.kind in (CANCELED, "expired", LOST):
            return ("cancelled", error, item.custom_id)
        if item.attempt < self.max_attempts:
            self.sub.summary.add(self.sub.summary.resent, job.name)
            return ("retry", error, item.custom_id)
        self.sub.summary.add(self.sub.summary.given_up, job.name)
        results.append((item, None, f"{error} (after {item.attempt} tries)"))
        return ("given_up", error, item.custom_id)

    async def resend(self) -> None:
        """Send again, in new batches, the items of collected batches marked for it (unless
        a result came meanwhile or an open batch carries them); each cell or answer once."""
        groups: dict[tuple[str, str, str | None], tuple[BatchRow, list[tuple[str, BatchItem]]]]
        groups = {}
        for row, item in self.store.batch_retries():
            key = (row.model, row.kind, row.condition)
            groups.setdefault(key, (row, []))[1].append((row.batch_key, item))
        for row, marked in groups.values():
            if self.sub.api(row.model) is None:
                continue  # a model this command was not given (``status`` is given all)
            job = self.sub.job(row)
            old = list({i.custom_id: i for _, i in reversed(marked)}.values())  # newest try
            if isinstance(job, GenerationJob):
                held = self.store.batched_cells(row.benchmark, row.model, row.condition or "")
                missing = set(
                    self.store.missing_cells(
                        row.benchmark,
                        row.model,
                        [i.cell for i in old],
                        retry_errors=True,
                        condition=job.condition,
                    )
                )
                todo = [i for i in old if i.cell in missing and i.cell not in held]
            else:
                held_ids = self.store.batched_answers(row.model)
                pending = {
                    p.gen_id for p in self.store.pending_judgments(row.model, retry_errors=True)
                }
                todo = [i for i in old if i.gen_id in pending and i.gen_id not in held_ids]
                self.sub.load_answers(job, todo)
            wanted = {i.custom_id for i in todo}
            origins: dict[str, list[str]] = {}
            for batch_key, item in marked:
                origins.setdefault(item.custom_id, []).append(batch_key)
            self.store.batch_items_superseded(
                [(bk, i.custom_id) for bk, i in marked if i.custom_id not in wanted]
            )
            fresh = [replace(i, attempt=i.attempt + 1) for i in todo]
            await self.sub.submit(job, fresh, resubmits=origins)

    async def judge_new_answers(self) -> None:
        """Every answer a generation batch brought, to each judge its run named: judge
        batches for batch judges, the lexical judge scored here (the others:
        :meth:`engine_judges`, which the caller judges through the normal engine)."""
        for judge, models in self.store.batch_judges().items():
            pending = self.store.pending_judgments(
                judge, benchmark=self.sub.benchmark.key, models=sorted(models)
            )
            if not pending:
                continue
            if is_rule_based(judge):
                with store_errors_stop_the_run(), self.store.transaction():
                    for p in pending:
                        claim = self.sub.benchmark.claim(p.claim_id).text
                        self.store.add_judgment(
                            lexical_judgment(p.gen_id, claim, p.response, self.sub.ctx.run_id)
                        )
                self.sub.summary.add(self.sub.summary.collected, judge, len(pending))
                self.sub.summary.add(self.sub.summary.judged, judge, len(pending))
            elif self.sub.api(judge) is not None:
                await self.sub.submit_judgments(judge, pending)

    def engine_judges(self) -> dict[str, list[str]]:
        """The model judges batch runs named that no batch API serves (a model judge on
        another server, ``local/``, or one this command could not build): judge -> the batch
        models whose answers it judges. ``status`` judges them through the normal engine."""
        return {
            judge: sorted(models)
            for judge, models in self.store.batch_judges().items()
            if not is_rule_based(judge) and self.sub.api(judge) is None
        }

    async def cancel(self) -> list[tuple[BatchRow, str]]:
        """Ask the provider to cancel every open batch; what finished is still collected."""
        out = []
        for row in self.store.batch_list(open_only=True):
            if row.remote_id is None:
                continue
            api = self._api_for(row)
            self.store.batch_cancel_requested(row.batch_key, CANCELLED_BY_USER)
            remote = await api.cancel(row.remote_id)
            self.store.batch_progress(row.batch_key, remote.status, remote.counts)
            out.append((row, remote.status))
        return out


def _priced(c: Completion, price: Price | None) -> Completion:
    """A reply with its cost, after the gate's rule on its usage (a GateError: refused)."""
    gate.reply_usage(c.usage.input_tokens, c.usage.output_tokens)
    usage = c.usage
    cost = None if price is None else gate.cost(price.cost(usage.input_tokens, usage.output_tokens))
    return replace(c, cost_usd=cost)


def _line(api: BatchAPI, job: Job, item: BatchItem) -> bytes:
    """An item's batch line: its request as the model's normal path sends it."""
    req = job.request(item)
    return api.encode(item.custom_id, req.messages, req.params)
