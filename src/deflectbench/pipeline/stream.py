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

from deflectbench.benchmark import Benchmark
from deflectbench.cost import CostMeter
from deflectbench.engine import Engine, EnginePolicy, Lane
from deflectbench.judging.judges import ModelJudge
from deflectbench.models.base import GenerationParams, Message, Model
from deflectbench.pipeline.board import Board, Row
from deflectbench.pipeline.lanes import (
    JUDGE_PRIORITY,
    close_lane,
    model_lane,
    model_requests,
    model_row,
)
from deflectbench.pipeline.record import (
    Cell,
    LexicalJudge,
    ModelJudgeFeed,
    generation_recorder,
    judgment_recorder,
)
from deflectbench.pipeline.requests import JUDGE_OUTPUT_TOKENS, Requests
from deflectbench.pipeline.results import Advance, StageResult, StopCheck
from deflectbench.records import PendingGeneration
from deflectbench.store import Store


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
    store: Store,
    benchmark: Benchmark,
    generations: Sequence[GenerationTask],
    judges: Sequence[JudgeTask],
    *,
    run_id: str | None,
    retry_errors: bool = False,
    use_cache: bool = True,
    meter: CostMeter | None = None,
    should_stop: StopCheck | None = None,
    board: Board | None = None,
    watch: Callable[[Board], None] | None = None,
) -> StreamResult:
    """Generate every task's missing cells and judge every answer, old and new, at once.

    ``watch`` is given the board, its rows and accounts in place, before the first request."""
    board = board if board is not None else Board()
    engine = Engine()
    cache = store if use_cache else None
    out = StreamResult()
    starts: list[Callable[[], Coroutine[Any, Any, None]]] = []
    finishers: list[Callable[[], None]] = []

    feeds: list[Feed] = []
    for task in judges:
        row = board.row(
            "judge",
            task.name,
            "" if task.judge is None else task.judge.model.provider,
            StageResult(),
        )
        out.judging[task.name] = row.result
        row.known = len(task.backlog)
        opened = 1 + len(generations)  # its backlog, and each model's answers
        if task.judge is None:
            lexical = LexicalJudge(
                store,
                benchmark,
                run_id,
                row,
                feeds=opened,
                should_stop=should_stop,
                advance=task.advance,
            )
            feeds.append(lexical)
            starts.append(lexical.run)
        else:
            feed, finish = _judge_lane(
                engine, store, benchmark, task, row, cache, meter, should_stop, run_id, opened
            )
            feeds.append(feed)
            finishers.append(finish)
        starts.append(_backlog_feeder(feeds[-1], task.backlog, should_stop))

    def hand_to_judges(p: PendingGeneration) -> None:
        for feed in feeds:
            feed.offer(p)

    for task in generations:
        start, finish = _generation_lane(
            engine,
            store,
            benchmark,
            task,
            board,
            cache,
            meter,
            should_stop,
            run_id,
            retry_errors,
            hand_to_judges,
            feeds,
            out,
        )
        if start is not None:
            starts.append(start)
        finishers.append(finish)

    board.accounts = list(engine.accounts.values())
    if watch is not None:
        watch(board)
    tasks = [asyncio.create_task(engine.run())]
    tasks += [asyncio.create_task(start()) for start in starts]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        board.ended_at = time.monotonic()
    stopping = bool(should_stop and should_stop())
    for finish in finishers:
        finish()
    for res in out.judging.values():
        res.stopped_early = res.stopped_early or stopping or res.withheld > 0
    return out


def _generation_lane(
    engine: Engine,
    store: Store,
    benchmark: Benchmark,
    task: GenerationTask,
    board: Board,
    cache: Store | None,
    meter: CostMeter | None,
    should_stop: StopCheck | None,
    run_id: str | None,
    retry_errors: bool,
    on_answer: Callable[[PendingGeneration], None],
    feeds: Sequence[Feed],
    out: StreamResult,
) -> tuple[Callable[[], Coroutine[Any, Any, None]] | None, Callable[[], None]]:
    """A model's lane: its missing cells (cache hits answered first), each answer to the judges."""
    model = task.model
    store.plan(benchmark.key, model.name, task.cells, condition=task.condition)
    todo = store.missing_cells(
        benchmark.key, model.name, task.cells, retry_errors=retry_errors, condition=task.condition
    )
    row = model_row(board, model, len(task.cells), len(todo))
    out.generation[model.name] = row.result

    def messages(cell: Cell) -> list[Message]:
        return [Message("user", benchmark.render(cell[0], cell[1]))]

    asked = model_requests(benchmark, task, cache, meter, _same_cell, messages)
    on_result = generation_recorder(
        store,
        benchmark,
        model,
        task.condition,
        run_id,
        asked.params_for,
        row,
        estimate=asked.estimate,
        advance=task.advance,
        on_answer=on_answer,
    )
    feeding = cache is not None and bool(todo)
    lane = model_lane(
        engine,
        "generate",
        task,
        asked,
        on_result,
        should_stop,
        items=None if feeding else todo,
        feeds=1 if feeding else 0,
    )

    def finished() -> None:
        row.finished = True
        for feed in feeds:
            feed.close_feed()

    lane.on_finished.append(finished)
    start = _cache_feeder(lane, asked.requests, on_result, todo, should_stop) if feeding else None
    return start, lambda: close_lane(row.result, lane, should_stop)


def _same_cell(cell: Cell) -> Cell:
    return cell


def _judge_lane(
    engine: Engine,
    store: Store,
    benchmark: Benchmark,
    task: JudgeTask,
    row: Row,
    cache: Store | None,
    meter: CostMeter | None,
    should_stop: StopCheck | None,
    run_id: str | None,
    feeds: int,
) -> tuple[ModelJudgeFeed, Callable[[], None]]:
    """A model judge's lane, fed as answers are stored; blind: claim and response only."""
    judge = task.judge
    assert judge is not None
    params = judge.params()

    def request(p: PendingGeneration) -> tuple[list[Message], GenerationParams, None]:
        return judge.messages(benchmark.claim(p.claim_id).text, p.response), params, None

    requests = Requests(judge.model, cache, meter, request)
    estimate = requests.estimator(JUDGE_OUTPUT_TOKENS)
    on_result = judgment_recorder(
        store, judge, run_id, row, estimate=estimate, advance=task.advance
    )
    lane = engine.lane(
        f"judge {task.name}",
        requests.call,
        on_result,
        task.policy or EnginePolicy.for_model(judge.model),
        account=judge.model.provider,
        priority=JUDGE_PRIORITY,
        feeds=feeds,
        estimate_tokens=estimate,
        should_stop=should_stop,
    )
    lane.on_finished.append(lambda: setattr(row, "finished", True))
    feed = ModelJudgeFeed(lane, requests, on_result, row, should_stop)
    return feed, lambda: close_lane(row.result, lane, should_stop)


def _cache_feeder(
    lane: Lane[Cell],
    requests: Requests[Cell],
    on_result: Callable[..., None],
    todo: Sequence[Cell],
    should_stop: StopCheck | None,
) -> Callable[[], Coroutine[Any, Any, None]]:
    """Answer each cell the request cache holds at once; queue the others on the lane."""

    async def feed() -> None:
        try:
            for i, cell in enumerate(todo):
                if lane.halted or (should_stop is not None and should_stop()):
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
    feed: Feed, backlog: Sequence[PendingGeneration], should_stop: StopCheck | None
) -> Callable[[], Coroutine[Any, Any, None]]:
    """Hand a judge what the store holds unjudged, then close that feed."""

    async def run() -> None:
        try:
            for i, p in enumerate(backlog):
                if should_stop is not None and should_stop():
                    return
                feed.offer(p, counted=True)
                if i % 64 == 63:
                    await asyncio.sleep(0)
        finally:
            feed.close_feed()

    return run
