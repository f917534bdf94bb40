"""Batch mode's collecting half: look at open batches, store what ended, send again what
failed, hand new answers to their judges, cancel.

A batch left ``submitting`` by a process that died is first looked for at the provider by its
tag (found: adopted, never sent twice), else sent then. An ended batch's results are stored
with its items' states in one transaction; an item with no readable result (failed, expired,
errored, a garbled line, missing) is marked to go again, up to ``max_attempts``, then stored
as an error row. Cancelled by the user: left missing, not failed. New answers go to the batch
judges and the lexical judge here; :meth:`Collecting.engine_judges` names the judges left to
the normal engine (``status`` runs them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from deflectbench.judging.judges import is_rule_based, lexical_judgment
from deflectbench.models.base import Completion, ModelError
from deflectbench.models.cache import CachedModel
from deflectbench.pipeline.batches.jobs import GenerationJob, Job
from deflectbench.pipeline.batches.wire import CANCELED, SUCCEEDED, BatchAPI, Outcome, Remote
from deflectbench.pipeline.results import store_errors_stop_the_run
from deflectbench.store.batches import BatchItem, BatchRow

if TYPE_CHECKING:
    from deflectbench.pipeline.batches.mode import BatchMode

#: What ``deflectbench batch cancel`` notes on a batch (its unfinished items are not resent).
CANCELLED_BY_USER = "cancelled by deflectbench batch cancel"
#: Called with (batches looked at, batches in all) while collecting.
Progress = Callable[[int, int], None]


class Collecting:
    """The collecting methods of :class:`~deflectbench.pipeline.batches.mode.BatchMode`."""

    async def collect(
        self: BatchMode, progress: Progress | None = None, *, only_known: bool = False
    ) -> list[BatchRow]:
        """Look at every open batch once; store what ended; send again what failed (within
        the retry limit); hand new answers to their judges. Returns the open batches after.

        ``only_known``: leave alone batches of models this mode was not given (a run
        collects its own models' batches; ``status`` every one, and says which it cannot
        reach)."""
        rows = self.store.batch_list(open_only=True)
        if only_known:
            rows = [r for r in rows if self.api(r.model) is not None]
        for n, row in enumerate(rows):
            api = self._api_for(row)
            remote = await self._resolve(api, row) if row.state == "submitting" else None
            if row.state == "open" or remote is not None:
                remote = await api.retrieve(remote.id if remote else row.remote_id)  # type: ignore[arg-type]
                self.store.batch_progress(row.batch_key, remote.status, remote.counts)
                if remote.ended:
                    await self._collect_one(api, row, remote)
            if progress is not None:
                progress(n + 1, len(rows))
        await self.resend()
        await self.judge_new_answers()
        return self.store.batch_list(open_only=True)

    def _api_for(self: BatchMode, row: BatchRow) -> BatchAPI:
        api = self.api(row.model)
        if api is None:
            raise ModelError(
                f"batch {row.remote_id or row.batch_key} is {row.model}'s, which this command "
                "cannot reach: pass the --config the run used"
            )
        return api

    async def _resolve(self: BatchMode, api: BatchAPI, row: BatchRow) -> Remote | None:
        """A batch written but not known to be submitted: find it by its tag, else send it."""
        since = datetime.fromisoformat(row.created_at.replace("Z", "+00:00")).timestamp()
        known = {r.remote_id for r in self.store.batch_list() if r.remote_id}
        remote = await api.find(row.batch_key, since, row.items, known)
        if remote is not None:
            self.store.batch_submitted(row.batch_key, remote.id, remote.status, None)
            return remote
        job = self._job(row)
        items = self.store.batch_items(row.batch_key)
        self._load_answers(job, items)
        lines = api.lines()
        try:
            for i in items:
                lines.add(api.encode(i.custom_id, _body(job, i)))
            await self._send(api, row.batch_key, lines)
        finally:
            lines.close()
        return None  # just sent: nothing to retrieve yet

    async def _collect_one(self: BatchMode, api: BatchAPI, row: BatchRow, remote: Remote) -> None:
        """Store an ended batch's results and its items' states in one transaction."""
        job = self._job(row)
        items = self.store.batch_items(row.batch_key, "open")
        by_id = {i.custom_id: i for i in items}
        outcomes, garbled = await api.results(remote) if any(remote.refs) else ([], 0)
        self._load_answers(job, items)
        self.summary.garbled += garbled
        price = self.price(job.name)
        cache = CachedModel(job.model, self.store if self.use_cache else None)
        user_cancelled = (row.error or "") == CANCELLED_BY_USER
        results: list[tuple[BatchItem, Completion | None, str | None]] = []
        states: list[tuple[str, str | None, str]] = []
        failed: dict[str, int] = {}
        seen: set[str] = set()
        for o in outcomes:
            item = by_id.get(o.custom_id)
            if item is None or o.custom_id in seen:
                continue  # not ours, or a repeated line: each item once
            seen.add(o.custom_id)
            if o.kind == SUCCEEDED and o.completion is not None:
                c = o.completion
                cost = (
                    None
                    if price is None
                    else price.cost(c.usage.input_tokens, c.usage.output_tokens)
                )
                results.append((item, replace(c, cost_usd=cost), None))
                states.append(("done", None, item.custom_id))
                continue
            failed[o.kind] = failed.get(o.kind, 0) + 1
            states.append(self._failed(job, item, o, user_cancelled, results))
        for item in items:
            if item.custom_id not in seen:
                failed["no result"] = failed.get("no result", 0) + 1
                lost = Outcome(item.custom_id, "lost", error="no readable result line")
                states.append(self._failed(job, item, lost, user_cancelled, results))
        with store_errors_stop_the_run(), self.store.transaction():
            self._store_results(job, results, cache=cache)
            self.store.batch_close(row.batch_key, states, error=row.error or remote.error)
        self.summary.add(self.summary.collected, job.name, sum(1 for s in states if s[0] == "done"))
        if failed:
            what = ", ".join(f"{n} {k}" for k, n in sorted(failed.items()))
            self.summary.problems.append(
                f"{job.name} batch {remote.id} {remote.status}: {len(items) - sum(failed.values())} "
                f"of {len(items)} done; {what}"
                + (f"; {garbled} unreadable result lines" if garbled else "")
                + (f" ({remote.error})" if remote.error else "")
            )

    def _failed(
        self: BatchMode,
        job: Job,
        item: BatchItem,
        outcome: Outcome,
        user_cancelled: bool,
        results: list[tuple[BatchItem, Completion | None, str | None]],
    ) -> tuple[str, str | None, str]:
        """An item without an answer: cancelled by the user (left missing), sent again, or
        given up after ``max_attempts`` (an error row)."""
        error = f"batch {outcome.kind}: {outcome.error}"
        if user_cancelled and outcome.kind in (CANCELED, "expired", "lost"):
            return ("cancelled", error, item.custom_id)
        if item.attempt < self.max_attempts:
            self.summary.add(self.summary.resent, job.name)
            return ("retry", error, item.custom_id)
        self.summary.add(self.summary.given_up, job.name)
        results.append((item, None, f"{error} (after {item.attempt} tries)"))
        return ("given_up", error, item.custom_id)

    async def resend(self: BatchMode) -> None:
        """Send again, in new batches, the items of collected batches marked for it (unless
        a result came meanwhile or an open batch carries them); each cell or answer once."""
        groups: dict[tuple[str, str, str | None], tuple[BatchRow, list[tuple[str, BatchItem]]]]
        groups = {}
        for row, item in self.store.batch_retries():
            key = (row.model, row.kind, row.condition)
            groups.setdefault(key, (row, []))[1].append((row.batch_key, item))
        for row, marked in groups.values():
            if self.api(row.model) is None:
                continue  # a model this command was not given (``status`` is given all)
            job = self._job(row)
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
                self._load_answers(job, todo)
            wanted = {i.custom_id for i in todo}
            origins: dict[str, list[str]] = {}
            for batch_key, item in marked:
                origins.setdefault(item.custom_id, []).append(batch_key)
            self.store.batch_items_superseded(
                [(bk, i.custom_id) for bk, i in marked if i.custom_id not in wanted]
            )
            fresh = [replace(i, attempt=i.attempt + 1) for i in todo]
            await self._submit(job, fresh, resubmits=origins)

    async def judge_new_answers(self: BatchMode) -> None:
        """Every answer a generation batch brought, to each judge its run named: judge
        batches for batch judges, the lexical judge scored here (the others:
        :meth:`engine_judges`, which the caller judges through the normal engine)."""
        for judge, models in self.store.batch_judges().items():
            pending = self.store.pending_judgments(
                judge, benchmark=self.benchmark.key, models=sorted(models)
            )
            if not pending:
                continue
            if is_rule_based(judge):
                with store_errors_stop_the_run(), self.store.transaction():
                    for p in pending:
                        claim = self.benchmark.claim(p.claim_id).text
                        self.store.add_judgment(
                            lexical_judgment(p.gen_id, claim, p.response, self.run_id)
                        )
                self.summary.add(self.summary.collected, judge, len(pending))
            elif self.api(judge) is not None:
                await self.submit_judgments(judge, pending)

    def engine_judges(self: BatchMode) -> dict[str, list[str]]:
        """The model judges batch runs named that no batch API serves (a model judge on
        another server, ``local/``, or one this command could not build): judge -> the batch
        models whose answers it judges. ``status`` judges them through the normal engine."""
        return {
            judge: sorted(models)
            for judge, models in self.store.batch_judges().items()
            if not is_rule_based(judge) and self.api(judge) is None
        }

    async def cancel(self: BatchMode) -> list[tuple[BatchRow, str]]:
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


def _body(job: Job, item: BatchItem) -> dict[str, object]:
    """The wire body of an item's request (what its batch line carries)."""
    req = job.request(item)
    return job.model.wire_body(req.messages, req.params)  # type: ignore[attr-defined, no-any-return]
