"""The second turn of a multi-turn pack: after a first reply, the follow-up its outcome calls for.

Turn 1 is the pack's ordinary cell, generated and judged as in any run. Once judged, each
turn-1 answer whose consensus outcome (the paper's rule: the mean over the run's judges of what
each said, every judge needed) has a follow-up in the pack gets one turn-2 cell: the
conversation [turn-1 prompt, turn-1 reply, follow-up], sent to the same model under the same
condition, sampled once. Its reply is stored as a generation (prompt id ``<prompt_id>#turn2``,
the follow-up as its prompt) with its link to turn 1 (:meth:`Store.add_turn`), so the judges
judge it like any answer, blind to the model and framing, with the conversation before it
(:meth:`Store.conversations`: turn 1's request and reply, the follow-up) in delimited blocks
and the reply alone in its own; a killed run resumes with exactly the turn-2 cells still
missing: the store's unique key allows one turn 2 per turn-1 generation.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from deflectbench.benchmark import Benchmark
from deflectbench.engine import Engine, EnginePolicy, Failure, Lane
from deflectbench.judging.judges import ModelJudge
from deflectbench.models.base import Completion, GenerationParams, Message, Model
from deflectbench.pipeline.board import Row
from deflectbench.pipeline.context import RunContext
from deflectbench.pipeline.lanes import close_lane, model_lane, model_requests, model_row
from deflectbench.pipeline.record import count_generation, generation_record
from deflectbench.pipeline.requests import answer_from_cache
from deflectbench.pipeline.results import store_errors_stop_the_run
from deflectbench.pipeline.stages import judge_tasks
from deflectbench.pipeline.stream import StreamResult, run_stream
from deflectbench.records import Cell
from deflectbench.store import Store
from deflectbench.store.turns import turn_prompt_id
from deflectbench.vocab import consensus_outcome

#: The turn a follow-up starts (the packs have two turns).
SECOND_TURN = 2
#: After a model's or judge's name on the live board, for its turn-2 row.
TURN2_LABEL = " (turn 2)"


@dataclass(frozen=True)
class TurnCell:
    """One turn-2 cell: the turn-1 conversation so far and the follow-up its outcome chose."""

    parent_gen_id: int
    claim_id: str
    #: The template's prompt id (turn 1's).
    prompt_id: str
    sample: int
    #: Turn 1 as it was sent and answered (the stored texts).
    prompt: str
    response: str
    followup_id: str
    followup_text: str
    #: The turn-1 consensus outcome that chose the follow-up.
    after: str

    @property
    def key(self) -> Cell:
        """Its cell in the store: the turn-1 cell's, with the turn-2 prompt id."""
        return Cell(self.claim_id, turn_prompt_id(self.prompt_id, SECOND_TURN), self.sample)

    def messages(self) -> list[Message]:
        return [
            Message("user", self.prompt),
            Message("assistant", self.response),
            Message("user", self.followup_text),
        ]


class Turn1Answer(NamedTuple):
    """A judged turn-1 answer, as the store gives it back: its key, and what was said."""

    gen_id: int
    claim_id: str
    prompt_id: str
    sample: int
    prompt: str
    response: str


def turn1_outcomes(
    store: Store, benchmark: Benchmark, model: str, condition: str, judges: Sequence[str]
) -> list[tuple[Turn1Answer, str]]:
    """Each turn-1 answer every one of ``judges`` has a verdict on, with its consensus outcome."""
    by_gen: dict[int, list[dict[str, Any]]] = {}
    for row in store.turn1_verdicts(benchmark.key, model, condition, judges):
        by_gen.setdefault(int(row["gen_id"]), []).append(row)
    out = []
    for rows in by_gen.values():
        if len({r["judge"] for r in rows}) < len(set(judges)):
            continue
        said = [json.loads(r["said_json"]) if r["said_json"] else {} for r in rows]
        first = rows[0]
        answer = Turn1Answer(
            int(first["gen_id"]),
            first["claim_id"],
            first["prompt_id"],
            int(first["sample"]),
            first["prompt"],
            first["response"],
        )
        out.append((answer, consensus_outcome(said)))
    return out


def followup_cells(
    store: Store,
    benchmark: Benchmark,
    model: str,
    condition: str,
    judges: Sequence[str],
) -> list[TurnCell]:
    """Every turn-2 cell the judged turn-1 answers call for (stored or not), oldest first."""
    cells = []
    for answer, turn1 in turn1_outcomes(store, benchmark, model, condition, judges):
        followup = benchmark.followup_for(turn1)
        if followup is None:
            continue
        cells.append(
            TurnCell(
                parent_gen_id=answer.gen_id,
                claim_id=answer.claim_id,
                prompt_id=answer.prompt_id,
                sample=answer.sample,
                prompt=answer.prompt,
                response=answer.response,
                followup_id=followup.followup_id,
                followup_text=benchmark.render_followup(
                    followup, answer.claim_id, answer.prompt_id
                ),
                after=turn1,
            )
        )
    return cells


@dataclass(frozen=True)
class TurnTask:
    """One model's turn 2: under its condition and settings, after the verdicts of ``judges``."""

    model: Model
    condition: str
    judges: Sequence[str]
    seed: int = 0
    max_tokens: int | None = None
    temperature: float | None = None
    policy: EnginePolicy | None = None


@dataclass
class TurnsResult(StreamResult):
    """What turn 2 did, per model: its stage result, the cells due and those still missing;
    per judge (``judging``), what it did on the answers still unjudged after turn 2 (its
    replies)."""

    due: dict[str, int] = field(default_factory=dict)
    missing: dict[str, int] = field(default_factory=dict)


def missing_turns(
    store: Store, benchmark: Benchmark, task: TurnTask, *, retry_errors: bool = False
) -> tuple[list[TurnCell], list[TurnCell]]:
    """(every turn-2 cell due, those without a stored result)."""
    cells = followup_cells(store, benchmark, task.model.name, task.condition, task.judges)
    keys = store.missing_cells(
        benchmark.key,
        task.model.name,
        [c.key for c in cells],
        retry_errors=retry_errors,
        condition=task.condition,
    )
    todo = set(keys)
    return cells, [c for c in cells if c.key in todo]


def turn_recorder(
    ctx: RunContext,
    task: TurnTask,
    params_for: Callable[[TurnCell], GenerationParams],
    row: Row,
) -> Callable[[TurnCell, Completion | None, Failure | None], None]:
    """Store a turn-2 result (or error row) with its link to turn 1, the moment it arrives."""

    def on_result(cell: TurnCell, completion: Completion | None, failure: Failure | None) -> None:
        params = params_for(cell)
        rec = generation_record(
            ctx, task, cell.key, cell.followup_text, params, completion, failure
        )
        with store_errors_stop_the_run():
            ctx.store.add_turn(
                rec,
                parent_gen_id=cell.parent_gen_id,
                turn=SECOND_TURN,
                followup_id=cell.followup_id,
                after_outcome=cell.after,
            )
        count_generation(row, rec, completion, failure)

    return on_result


async def generate_turns(ctx: RunContext, tasks: Sequence[TurnTask]) -> TurnsResult:
    """Generate every model's missing turn-2 cells at once (cache hits first, the budget
    reserved before each request, each result stored as it arrives); each model gets a row
    on the run's board (its live display)."""
    out = TurnsResult()
    store, benchmark, board = ctx.store, ctx.benchmark, ctx.board
    if not benchmark.followups:
        return out
    board.ended_at = None
    engine = Engine()
    lanes = []
    for task in tasks:
        due, todo = missing_turns(store, benchmark, task, retry_errors=ctx.retry_errors)
        store.plan(benchmark.key, task.model.name, [c.key for c in due], condition=task.condition)
        row = model_row(board, task.model, len(due), len(todo), TURN2_LABEL)
        out.generation[task.model.name] = row.result
        out.due[task.model.name] = len(due)
        lane = await _turn_lane(engine, ctx, task, todo, row)
        lanes.append((row, lane))
    board.accounts = list(engine.accounts.values())
    try:
        await engine.run()
    finally:
        board.ended_at = time.monotonic()
    for row, lane in lanes:
        row.finished = True
        close_lane(row.result, lane, ctx.stopped())
    for task in tasks:
        _, todo = missing_turns(store, benchmark, task, retry_errors=True)
        out.missing[task.model.name] = len(todo)
    return out


async def _turn_lane(
    engine: Engine, ctx: RunContext, task: TurnTask, todo: Sequence[TurnCell], row: Row
) -> Lane[TurnCell]:
    """A model's turn-2 lane: the cells the request cache holds are stored at once, the others
    queued; the same parameters as turn 1, with each turn-2 cell's own seed."""
    asked = model_requests(ctx, task, _cell_of, TurnCell.messages)
    on_result = turn_recorder(ctx, task, asked.params_for, row)
    if ctx.use_cache:
        todo = await answer_from_cache(todo, asked.requests.lookup, on_result, ctx.stopped)
    lane = model_lane(engine, "turn 2", task, asked, on_result, ctx.stopped, todo)
    lane.on_finished.append(lambda: setattr(row, "finished", True))
    return lane


def _cell_of(cell: TurnCell) -> Cell:
    return cell.key


async def run_turns(
    ctx: RunContext,
    tasks: Sequence[TurnTask],
    judges: Mapping[str, ModelJudge | None],
    models: Sequence[str],
) -> TurnsResult:
    """Turn 2 of a run, after turn 1 is judged: generate every missing turn-2 cell, then
    hand every answer of ``models`` still unjudged (the new turn-2 replies among them) to
    ``judges``, blind to the model as always, each turn-2 reply with its conversation. Their
    rows on the run's board are marked as turn 2."""
    out = await generate_turns(ctx, tasks)
    if not out.generation or ctx.stopped():
        return out
    backlog = judge_tasks(ctx, judges, models)
    named = {t.name: replace(t, name=t.name + TURN2_LABEL) for t in backlog}
    judged = await run_stream(ctx, [], list(named.values()))
    out.judging = {name: judged.judging[t.name] for name, t in named.items()}
    return out
