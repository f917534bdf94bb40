"""Results into the store the moment they arrive: a generation, a judge's verdict.

Each recorder is a lane's ``on_result``: it writes one record, counts it on the model's or
judge's :class:`StageResult` and board row, and (for a generation that is an answer) hands it
to every judge at once. Replies that are no answer (filtered, refused, empty) are stored and
counted, never judged. A store that cannot write stops the run: an answered request is never
stored as an error.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from deflectbench import gate
from deflectbench.engine import Failure, Lane
from deflectbench.gate import GateError
from deflectbench.judging.judges import ModelJudge, failed_judgment, lexical_judgment
from deflectbench.models.base import Completion, GenerationParams
from deflectbench.pipeline.board import Row
from deflectbench.pipeline.context import RunContext
from deflectbench.pipeline.lanes import Asker, ModelRequests, ModelTask
from deflectbench.pipeline.requests import Requests, TokenEstimate
from deflectbench.pipeline.results import (
    Advance,
    StopCheck,
    store_errors_stop_the_run,
)
from deflectbench.records import Cell, GenerationRecord, PendingGeneration
from deflectbench.secrets import scrub
from deflectbench.vocab import FIELDS, NON_ANSWERS

OnAnswer = Callable[[PendingGeneration], None]


def _noop(ok: bool) -> None:
    """No progress callback."""


def generation_record(
    ctx: RunContext,
    task: Asker,
    cell: Cell,
    prompt: str,
    params: GenerationParams,
    completion: Completion | None,
    failure: Failure | None,
) -> GenerationRecord:
    """A cell's stored row (either turn): the reply with its usage and cost, or the failure
    scrubbed, so no key reaches the store; the parameters as sent, less the schema."""
    sent = params.as_dict()
    sent.pop("json_schema")
    common: dict[str, Any] = dict(
        benchmark=ctx.benchmark.key,
        model=task.model.name,
        condition=task.condition,
        claim_id=cell.claim_id,
        prompt_id=cell.prompt_id,
        sample=cell.sample,
        prompt=prompt,
        params=sent,
        run_id=ctx.run_id,
    )
    if completion is None:
        assert failure is not None
        return GenerationRecord(**common, response=None, error=scrub(failure.error))
    try:  # the gate's rules: a reply the store would refuse is this cell's error row
        gate.reply_usage(completion.usage.input_tokens, completion.usage.output_tokens)
        cost = gate.cost(completion.cost_usd)
        return gate.generation(
            GenerationRecord(
                **common,
                response=completion.text,
                input_tokens=completion.usage.input_tokens,
                output_tokens=completion.usage.output_tokens,
                latency_s=completion.latency_s,
                finish_reason=completion.finish_reason,
                cost_usd=cost,
                served_model=served_model(completion),
            )
        )
    except GateError as exc:
        return GenerationRecord(**common, response=None, error=f"refused: {exc}")


def served_model(completion: Completion) -> str | None:
    """The model id the reply names (``model`` in the provider's body), when it names one a
    store keeps (printable, bounded) and scrubbed of credentials (a server may echo the key it
    was sent as its model id); :func:`deflectbench.gate.served_model` words a mismatch."""
    raw = completion.raw
    served = gate.served_id(raw.get("model") if isinstance(raw, dict) else None)
    return scrub(served) if served is not None else None


def refused(completion: Completion | None, rec: Any) -> bool:
    """A reply the gate refused: stored as an error row, counted as a failure."""
    return completion is not None and getattr(rec, "error", None) is not None


def count_generation(
    row: Row,
    rec: GenerationRecord,
    completion: Completion | None,
    failure: Failure | None,
    estimate: TokenEstimate[Any] | None = None,
) -> bool:
    """Count a stored generation on its row (a reply, or an error by its cause); True for an
    answer, the only kind the judges get."""
    result = row.result
    answer = completion is not None and completion.finish_reason not in NON_ANSWERS
    if completion is not None:
        result.add_reply(completion)
        result.ok += answer
        if estimate is not None:
            estimate.observe(completion)
    else:
        result.add_error(failure.cause if failure else "error", rec.error or "")
    row.count(completion is not None)
    return answer


def generation_recorder(
    ctx: RunContext,
    task: ModelTask,
    asked: ModelRequests[Cell],
    row: Row,
    *,
    advance: Advance | None = None,
    on_answer: OnAnswer | None = None,
) -> Callable[[Cell, Completion | None, Failure | None], None]:
    """Store a cell's result (or error row); hand an answer to the judges."""
    tick = advance or _noop
    store, benchmark = ctx.store, ctx.benchmark

    def on_result(cell: Cell, completion: Completion | None, failure: Failure | None) -> None:
        prompt = benchmark.render(cell.claim_id, cell.prompt_id)
        params = asked.params_for(cell)
        rec = generation_record(ctx, task, cell, prompt, params, completion, failure)
        if refused(completion, rec):
            completion, failure = None, Failure(rec.error or "", None, 1, False, "refused reply")
        with store_errors_stop_the_run():
            store.add_generation(rec)
        answer = count_generation(row, rec, completion, failure, asked.estimate)
        tick(completion is not None)
        if answer and on_answer is not None:
            with store_errors_stop_the_run():
                gen_id = store.generation_id(benchmark.key, task.model.name, *cell, task.condition)
            if gen_id is not None:
                on_answer(PendingGeneration(gen_id, cell.claim_id, rec.response or ""))

    return on_result


def judgment_recorder(
    ctx: RunContext,
    judge: ModelJudge,
    row: Row,
    *,
    estimate: TokenEstimate[PendingGeneration] | None = None,
    advance: Advance | None = None,
) -> Callable[[PendingGeneration, Completion | None, Failure | None], None]:
    """Store a judge's reply (its verdict, or why it holds none) or its failed request."""
    result = row.result
    tick = advance or _noop

    def on_result(
        p: PendingGeneration, completion: Completion | None, failure: Failure | None
    ) -> None:
        if completion is not None:
            rec = judge.record(p.gen_id, completion, ctx.run_id)
            try:  # the gate's rules: a reply the store would refuse is this item's error
                gate.judgment(rec, FIELDS)
            except GateError as exc:
                rec = failed_judgment(p.gen_id, judge.name, f"refused: {exc}", ctx.run_id)
                completion, failure = (
                    None,
                    Failure(rec.error or "", None, 1, False, "refused reply"),
                )
        else:
            assert failure is not None
            rec = failed_judgment(p.gen_id, judge.name, scrub(failure.error), ctx.run_id)
        with store_errors_stop_the_run():
            ctx.store.add_judgment(rec)
        if completion is not None:
            result.ok += 1
            result.add_reply(completion)
            if estimate is not None:
                estimate.observe(completion)
            if rec.parse_error:
                result.parse_errors += 1
                if result.parse_error_example is None:
                    result.parse_error_example = (
                        f"generation {p.gen_id}: {rec.reasoning}: {(rec.raw or '')[:160]!r}"
                    )
        else:
            result.add_error(failure.cause if failure else "error", rec.error or "")
        row.count(completion is not None)
        tick(completion is not None)

    return on_result


@dataclass(eq=False)
class ModelJudgeFeed:
    """A model judge's way in: each answer is looked up in the request cache (a hit is stored
    at once, waiting for no pacer) or queued on the judge's lane. Each answer once."""

    lane: Lane[PendingGeneration]
    requests: Requests[PendingGeneration]
    on_result: Callable[[PendingGeneration, Completion | None, Failure | None], None]
    row: Row
    stopped: StopCheck
    seen: set[int] = field(default_factory=set, init=False)

    def offer(self, p: PendingGeneration, *, counted: bool = False) -> None:
        """Judge ``p`` (``counted``: already in the row's total, as the backlog is)."""
        if p.gen_id in self.seen:
            return
        self.seen.add(p.gen_id)
        self.row.known += not counted
        if self.requests.uses_cache and not self.stopped():
            hit = self.requests.lookup(p)
            if hit is not None:
                self.on_result(p, hit, None)
                return
        self.lane.add(p)

    def close_feed(self) -> None:
        self.lane.close_feed()


class LexicalJudge:
    """The rule-based judge in a run: no requests, so no engine and no provider; it scores
    each answer as it comes, one write per verdict, and stops when the run stops."""

    def __init__(
        self, ctx: RunContext, row: Row, *, feeds: int, advance: Advance | None = None
    ) -> None:
        self.ctx = ctx
        self.row = row
        self.feeds = feeds
        self.tick = advance or _noop
        self.queue: collections.deque[PendingGeneration] = collections.deque()
        self.seen: set[int] = set()
        self._more = asyncio.Event()

    def offer(self, p: PendingGeneration, *, counted: bool = False) -> None:
        """Judge ``p`` (``counted``: already in the row's total, as the backlog is)."""
        if p.gen_id in self.seen:
            return
        self.seen.add(p.gen_id)
        self.row.known += not counted
        self.queue.append(p)
        self._more.set()

    def close_feed(self) -> None:
        self.feeds -= 1
        self._more.set()

    async def run(self) -> None:
        result = self.row.result
        scored = 0
        try:
            while True:
                while self.queue:
                    if self.ctx.stopped():
                        result.stopped_early = True
                        return
                    self.judge(self.queue.popleft())
                    scored += 1
                    if scored % 32 == 0:
                        await asyncio.sleep(0)  # let requests, Ctrl-C and the display through
                if self.feeds <= 0:
                    return
                if self.ctx.stopped():
                    result.stopped_early = True
                    return
                self._more.clear()
                await self._more.wait()
        finally:
            self.row.finished = True

    def judge(self, p: PendingGeneration) -> None:
        ctx = self.ctx
        rec = lexical_judgment(
            p.gen_id, ctx.benchmark.claim(p.claim_id).text, p.response, ctx.run_id
        )
        with store_errors_stop_the_run():
            ctx.store.add_judgment(rec)
        self.row.result.ok += 1
        self.row.count(True)
        self.tick(True)
