"""One pipeline for a whole run: every model generates at once, each answer goes to every judge
the moment it is stored, and the run ends when the last verdict lands.

Each model and each model judge is a lane of the engine on its provider's account (the limits
its provider section states, shared by every model and judge it serves); judges' lanes go
before generations on a shared account, so judged results accumulate from the first minute
and a stopped run leaves whole cells. The lexical judge scores answers in this process as they
come. Request-cache hits are answered before any pacer; the budget is reserved before every
request; a stop (Ctrl-C, SIGTERM, the budget) lets requests in flight finish and be stored.
Everything is written as it arrives, so a run can be killed at any moment and resumed by
running it again: what is stored is never asked for again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

from deflectbench.engine import Engine, EnginePolicy, Lane, gather_or_cancel
from deflectbench.judging.judges import ModelJudge
from deflectbench.models.base import GenerationParams, Message, Model
from deflectbench.pipeline.board import Board, Row
from deflectbench.pipeline.context import RunContext
from deflectbench.pipeline.lanes import (
    JUDGE_PRIORITY,
    close_lane,
    model_lane,
    model_requests,
    model_row,
)
from deflectbench.pipeline.record import (
    LexicalJudge,
    ModelJudgeFeed,
    generation_recorder,
    judgment_recorder,
)
from deflectbench.pipeline.requests import JUDGE_OUTPUT_TOKENS, Requests
from deflectbench.pipeline.results import Advance, StageResult
from deflectbench.records import Cell, PendingGeneration


@dataclass(frozen=True)
class GenerationTask:
    """One model's part of a run: the cells it should have under its condition."""

    model: Model
    cells: Sequence[Cell]
    condition: str
    seed: int = 0
    max_tokens: int | None = None
    temperature: float | None = None
    #: Instead of the policy the model's limits ask for.
    policy: EnginePolicy | None = None
    advance: Advance | None = None


@dataclass(frozen=True)
class JudgeTask:
    """One judge's part of a run: what is stored and unjudged now, and every answer to come."""

    name: str
    #: The model judging with the rubric; None for the rule-based judge.
    judge: ModelJudge | None
    backlog: Sequence[PendingGeneration] = ()
    policy: EnginePolicy | None = None
    advance: Advance | None = None


@dataclass
class StreamResult:
    generation: dict[str, StageResult] = field(default_factory=dict)
    judging: dict[str, StageResult] = field(default_factory=dict)


Feed = ModelJudgeFeed | LexicalJudge


async def run_stream(
    ctx: RunContext,
    generations: Sequence[GenerationTask],
    judges: Sequence[JudgeTask],
    *,
    watch: Callable[[Board], None] | None = None,
) -> StreamResult:
    """Generate every task's missing cells and judge every answer, old and new, at once.

    ``watch`` is given the board, its rows and accounts in place, before the first request."""
    engine = Engine()
    out = StreamResult()
    starts: list[Callable[[], Coroutine[Any, Any, None]]] = []
    finishers: list[Callable[[], None]] = []

    feeds: list[Feed] = []
    for task in judges:
        provider = "" if task.judge is None else task.judge.model.provider
        row = ctx.board.row("judge", task.name, provider, StageResult())
        out.judging[task.name] = row.result
        row.known = len(task.backlog)
        opened = 1 + len(generations)  # its backlog, and each model's answers
        if task.judge is None:
            lexical = LexicalJudge(ctx, row, feeds=opened, advance=task.advance)
            feeds.append(lexical)
            starts.append(lexical.run)
        else:
            feed, finish = _judge_lane(engine, ctx, task, row, opened)
            feeds.append(feed)
            finishers.append(finish)
        starts.append(_backlog_feeder(ctx, feeds[-1], task.backlog))

    for generation in generations:
        start, finish = _generation_lane(engine, ctx, generation, feeds, out)
        if start is not None:
            starts.append(start)
        finishers.append(finish)

    ctx.board.accounts = list(engine.accounts.values())
    if watch is not None:
        watch(ctx.board)
    tasks = [asyncio.create_task(engine.run())]
    tasks += [asyncio.create_task(start()) for start in starts]
    try:
        await gather_or_cancel(tasks)
    finally:
        ctx.board.ended_at = time.monotonic()
    stopping = ctx.stopped()
    for finish in finishers:
        finish()
    for res in out.judging.values():
        res.stopped_early = res.stopped_early or stopping or res.withheld > 0
    return out


def _generation_lane(
    engine: Engine,
    ctx: RunContext,
    task: GenerationTask,
    feeds: Sequence[Feed],
    out: StreamResult,
) -> tuple[Callable[[], Coroutine[Any, Any, None]] | None, Callable[[], None]]:
    """A model's lane: its missing cells (cache hits answered first), each answer to every
    judge's feed."""
    model, store, benchmark = task.model, ctx.store, ctx.benchmark
    store.plan(benchmark.key, model.name, task.cells, condition=task.condition)
    missing = store.missing_cells(
        benchmark.key,
        model.name,
        task.cells,
        retry_errors=ctx.retry_errors,
        condition=task.condition,
    )
    todo = [Cell(*c) for c in missing]
    row = model_row(ctx.board, model, len(task.cells), len(todo))
    out.generation[model.name] = row.result

    def messages(cell: Cell) -> list[Message]:
        return [Message("user", benchmark.render(cell.claim_id, cell.prompt_id))]

    def hand_to_judges(p: PendingGeneration) -> None:
        for feed in feeds:
            feed.offer(p)

    asked = model_requests(ctx, task, _same_cell, messages)
    on_result = generation_recorder(
        ctx, task, asked, row, advance=task.advance, on_answer=hand_to_judges
    )
    feeding = ctx.use_cache and bool(todo)
    lane = model_lane(
        engine, "generate", task, asked, on_result, ctx.stopped, None if feeding else todo
    )

    def finished() -> None:
        row.finished = True
        for feed in feeds:
            feed.close_feed()

    lane.on_finished.append(finished)
    start = _cache_feeder(ctx, lane, asked.requests, on_result, todo) if feeding else None
    return start, lambda: close_lane(row.result, lane, ctx.stopped())


def _same_cell(cell: Cell) -> Cell:
    return cell


def _judge_lane(
    engine: Engine, ctx: RunContext, task: JudgeTask, row: Row, feeds: int
) -> tuple[ModelJudgeFeed, Callable[[], None]]:
    """A model judge's lane, fed as answers are stored; blind: claim and response only (a
    later turn's reply with the conversation before it)."""
    judge = task.judge
    assert judge is not None
    params = judge.params()
    benchmark = ctx.benchmark

    def request(p: PendingGeneration) -> tuple[list[Message], GenerationParams, None]:
        claim = benchmark.claim(p.claim_id).text
        return judge.messages(claim, p.response, p.conversation), params, None

    requests = Requests(judge.model, ctx.cache, ctx.meter, request)
    estimate = requests.estimator(JUDGE_OUTPUT_TOKENS)
    on_result = judgment_recorder(ctx, judge, row, estimate=estimate, advance=task.advance)
    lane = engine.lane(
        f"judge {task.name}",
        requests.call,
        on_result,
        task.policy or EnginePolicy.for_model(judge.model),
        account=judge.model.provider,
        priority=JUDGE_PRIORITY,
        feeds=feeds,
        estimate_tokens=estimate,
        should_stop=ctx.stopped,
    )
    lane.on_finished.append(lambda: setattr(row, "finished", True))
    feed = ModelJudgeFeed(lane, requests, on_result, row, ctx.stopped)
    return feed, lambda: close_lane(row.result, lane, ctx.stopped())


def _cache_feeder(
    ctx: RunContext,
    lane: Lane[Cell],
    requests: Requests[Cell],
    on_result: Callable[..., None],
    todo: Sequence[Cell],
) -> Callable[[], Coroutine[Any, Any, None]]:
    """Answer each cell the request cache holds at once; queue the others on the lane."""

    async def feed() -> None:
        try:
            for i, cell in enumerate(todo):
                if lane.halted or ctx.stopped():
                    return
                hit = requests.lookup(cell)
                if hit is None:
                    lane.add(cell)
                else:
                    on_result(cell, hit, None)
                if i % 64 == 63:
                    await asyncio.sleep(0)  # let requests, Ctrl-C and the display through
        finally:
            lane.close_feed()

    return feed


def _backlog_feeder(
    ctx: RunContext, feed: Feed, backlog: Sequence[PendingGeneration]
) -> Callable[[], Coroutine[Any, Any, None]]:
    """Hand a judge what the store holds unjudged, then close that feed."""

    async def run() -> None:
        try:
            for i, p in enumerate(backlog):
                if ctx.stopped():
                    return
                feed.offer(p, counted=True)
                if i % 64 == 63:
                    await asyncio.sleep(0)
        finally:
            feed.close_feed()

    return run
