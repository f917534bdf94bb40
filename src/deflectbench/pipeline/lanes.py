"""A model's lane, set up once for both turns: its row on the board, its requests with each
cell's own parameters, the engine lane, and what the engine knows of it at the end.

Turn 1 (:mod:`.stream`) asks for cells and turn 2 (:mod:`.turns`) for conversations, but both
are keyed by their cell in the store, which fixes the seed; so one set-up serves both and a
resumed run asks each cell again exactly as it first did.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from deflectbench.benchmark import Benchmark
from deflectbench.cost import CostMeter
from deflectbench.engine import Engine, EnginePolicy, Lane
from deflectbench.engine.lane import OnResult
from deflectbench.models.base import GenerationParams, Message, Model
from deflectbench.pipeline.board import Board, Row
from deflectbench.pipeline.record import Cell
from deflectbench.pipeline.requests import (
    TYPICAL_OUTPUT_TOKENS,
    Requests,
    TokenEstimate,
    cell_seed,
    generation_params,
)
from deflectbench.pipeline.results import StageResult, StopCheck
from deflectbench.secrets import scrub
from deflectbench.store import Store

T = TypeVar("T")

#: A judge's lane goes before a generation's when both wait on one account.
JUDGE_PRIORITY, GENERATION_PRIORITY = 1, 0


class ModelTask(Protocol):
    """What a model's lane needs of its task (turn 1's or turn 2's)."""

    @property
    def model(self) -> Model: ...
    @property
    def seed(self) -> int: ...
    @property
    def max_tokens(self) -> int | None: ...
    @property
    def temperature(self) -> float | None: ...
    @property
    def policy(self) -> EnginePolicy | None: ...


@dataclass(frozen=True)
class ModelRequests(Generic[T]):
    """How a model's items are asked: each one's parameters, its requests and their estimate."""

    params_for: Callable[[T], GenerationParams]
    requests: Requests[T]
    estimate: TokenEstimate[T]


def model_row(board: Board, model: Model, due: int, todo: int, label: str = "") -> Row:
    """A model's row on the board: ``due`` cells, ``todo`` of them still to be asked."""
    row = board.row("model", model.name + label, model.provider, StageResult(skipped=due - todo))
    row.known = todo
    return row


def model_requests(
    benchmark: Benchmark,
    task: ModelTask,
    cache: Store | None,
    meter: CostMeter | None,
    key: Callable[[T], Cell],
    messages: Callable[[T], list[Message]],
) -> ModelRequests[T]:
    """The task's settings for every item, with the seed of the item's cell (``key``)."""
    model = task.model
    base = generation_params(
        benchmark, model, seed=task.seed, max_tokens=task.max_tokens, temperature=task.temperature
    )

    def params_for(item: T) -> GenerationParams:
        return GenerationParams(
            temperature=base.temperature,
            max_tokens=base.max_tokens,
            seed=cell_seed(task.seed, model.name, *key(item)),
        )

    def request(item: T) -> tuple[list[Message], GenerationParams, int]:
        return messages(item), params_for(item), key(item)[2]

    requests = Requests(model, cache, meter, request)
    estimate = requests.estimator(min(TYPICAL_OUTPUT_TOKENS, base.max_tokens))
    return ModelRequests(params_for, requests, estimate)


def model_lane(
    engine: Engine,
    verb: str,
    task: ModelTask,
    asked: ModelRequests[T],
    on_result: OnResult[T],
    should_stop: StopCheck | None,
    *,
    items: Sequence[T] | None = None,
    feeds: int = 0,
) -> Lane[T]:
    """The task's lane on its provider's account, under its own policy or its model's."""
    model = task.model
    return engine.lane(
        f"{verb} {model.name}",
        asked.requests.call,
        on_result,
        task.policy or EnginePolicy.for_model(model),
        account=model.provider,
        priority=GENERATION_PRIORITY,
        items=items,
        feeds=feeds,
        estimate_tokens=asked.estimate,
        should_stop=should_stop,
    )


def close_lane(result: StageResult, lane: Lane[Any], should_stop: StopCheck | None) -> None:
    """What the engine knows of a lane, onto its result."""
    stats = lane.stats
    result.aborted = scrub(stats.aborted) if stats.aborted else None
    result.withheld = stats.withheld
    result.unfinished = stats.unfinished
    result.stopped_early = bool(should_stop and should_stop()) or stats.withheld > 0
