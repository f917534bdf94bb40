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

from deflectbench.engine import Engine, EnginePolicy, Lane
from deflectbench.engine.lane import OnResult
from deflectbench.models.base import GenerationParams, Message, Model
from deflectbench.pipeline.board import Board, Row
from deflectbench.pipeline.context import RunContext
from deflectbench.pipeline.requests import (
    TYPICAL_OUTPUT_TOKENS,
    Requests,
    TokenEstimate,
    cell_seed,
    generation_params,
)
from deflectbench.pipeline.results import StageResult, StopCheck
from deflectbench.records import Cell
from deflectbench.secrets import scrub

T = TypeVar("T")

#: A judge's lane goes before a generation's when both wait on one account.
JUDGE_PRIORITY, GENERATION_PRIORITY = 1, 0


class Asker(Protocol):
    """Who asked for a stored generation: the model and the condition it ran under (a lane's
    task, or a batch's job)."""

    @property
    def model(self) -> Model: ...
    @property
    def condition(self) -> str: ...


class ModelTask(Asker, Protocol):
    """What a model's lane needs of its task (turn 1's or turn 2's)."""

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
    row.note = model.status
    return row


def model_requests(
    ctx: RunContext,
    task: ModelTask,
    key: Callable[[T], Cell],
    messages: Callable[[T], list[Message]],
) -> ModelRequests[T]:
    """The task's settings for every item, with the seed of the item's cell (``key``)."""
    model = task.model
    base = generation_params(
        ctx.benchmark,
        model,
        seed=task.seed,
        max_tokens=task.max_tokens,
        temperature=task.temperature,
    )

    def params_for(item: T) -> GenerationParams:
        return GenerationParams(
            temperature=base.temperature,
            max_tokens=base.max_tokens,
            seed=cell_seed(task.seed, model.name, *key(item)),
        )

    def request(item: T) -> tuple[list[Message], GenerationParams, int]:
        return messages(item), params_for(item), key(item)[2]

    requests = Requests(model, ctx.cache, ctx.meter, request)
    estimate = requests.estimator(min(TYPICAL_OUTPUT_TOKENS, base.max_tokens))
    return ModelRequests(params_for, requests, estimate)


def model_lane(
    engine: Engine,
    verb: str,
    task: ModelTask,
    asked: ModelRequests[T],
    on_result: OnResult[T],
    should_stop: StopCheck,
    items: Sequence[T] | None,
) -> Lane[T]:
    """The task's lane on its provider's account, under its own policy or its model's: given
    its ``items``, or (None) fed one by one until its one feed closes."""
    model = task.model
    return engine.lane(
        f"{verb} {model.name}",
        asked.requests.call,
        on_result,
        task.policy or EnginePolicy.for_model(model),
        account=model.provider,
        priority=GENERATION_PRIORITY,
        items=items,
        feeds=1 if items is None else 0,
        estimate_tokens=asked.estimate,
        should_stop=should_stop,
    )


def close_lane(result: StageResult, lane: Lane[Any], stopped: bool) -> None:
    """What the engine knows of a lane, onto its result (``stopped``: the run stopped)."""
    stats = lane.stats
    result.aborted = scrub(stats.aborted) if stats.aborted else None
    result.withheld = stats.withheld
    result.unfinished = stats.unfinished
    result.stopped_early = stopped or stats.withheld > 0
