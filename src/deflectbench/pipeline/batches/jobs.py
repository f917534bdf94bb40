"""What a batch carries, and what its results become: one model's cells under a condition, or
one judge's answers.

A job makes each item's request exactly as the normal path does (the same messages,
parameters and per-cell seed: the request cache and the condition cannot tell them apart),
its custom id (the cell's id, or the answer's), and the record a result is stored as.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from deflectbench.benchmark import Benchmark
from deflectbench.engine import Failure
from deflectbench.judging.judges import ModelJudge, failed_judgment
from deflectbench.models.base import Completion, GenerationParams, Message, Model
from deflectbench.pipeline.context import RunContext
from deflectbench.pipeline.record import generation_record
from deflectbench.pipeline.requests import cell_seed
from deflectbench.records import Cell, GenerationRecord, JudgmentRecord, PendingGeneration
from deflectbench.secrets import scrub
from deflectbench.store.batches import BatchItem

GENERATION, JUDGMENT = "generation", "judgment"
#: What both batch APIs accept as a custom id.
CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_PART = re.compile(r"^[a-zA-Z0-9_]+$")


def cell_id(cell: Cell) -> str:
    """A cell's id within its model and condition: ``g-<claim>-<template>-<sample>``; a cell
    whose ids do not fit the APIs' pattern gets a digest instead (the store maps it back)."""
    claim, prompt, sample = cell
    plain = f"g-{claim}-{prompt}-{sample}"
    if _PART.match(claim) and _PART.match(prompt) and len(plain) <= 64:
        return plain
    digest = hashlib.sha256(f"{claim}\0{prompt}\0{sample}".encode()).hexdigest()
    return f"g-{digest[:40]}"


def answer_id(gen_id: int) -> str:
    """An answer's id for a judge: ``j-<generation id>``."""
    return f"j-{gen_id}"


def batch_result(completion: Completion | None, error: str | None) -> Completion | str:
    """An item's result as either job records it: the reply, with no latency (a batch has none
    per request), or why there is none (``batch error`` when the provider names nothing)."""
    if completion is None:
        return error or "batch error"
    return completion if completion.latency_s is None else replace(completion, latency_s=None)


@dataclass(frozen=True)
class Request:
    messages: list[Message]
    params: GenerationParams
    sample: int | None


class GenerationJob:
    """One model's cells under one condition; ``settings`` holds the resolved temperature,
    max_tokens, base seed, and the judges its answers go to."""

    kind = GENERATION

    def __init__(
        self, benchmark: Benchmark, model: Model, condition: str, settings: Mapping[str, Any]
    ) -> None:
        self.benchmark = benchmark
        self.model = model
        self.name = model.name
        self.condition = condition
        self.settings = dict(settings)
        self.seed = int(settings["seed"])
        self.temperature = float(settings["temperature"])
        self.max_tokens = int(settings["max_tokens"])

    def params(self, cell: Cell) -> GenerationParams:
        return GenerationParams(
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=cell_seed(self.seed, self.name, *cell),
        )

    def request(self, item: BatchItem) -> Request:
        cell = item.cell
        prompt = self.benchmark.render(cell[0], cell[1])
        return Request([Message("user", prompt)], self.params(cell), cell[2])

    def item(self, cell: Cell, attempt: int = 1) -> BatchItem:
        return BatchItem(cell_id(cell), *cell, attempt=attempt)

    def record(
        self, item: BatchItem, result: Completion | str, ctx: RunContext
    ) -> GenerationRecord:
        """The cell's row: the reply, or the error (:func:`batch_result`)."""
        cell = item.cell
        prompt = self.benchmark.render(cell.claim_id, cell.prompt_id)
        params = self.params(cell)
        if isinstance(result, str):
            failure = Failure(result, None, item.attempt, retryable=False)
            return generation_record(ctx, self, cell, prompt, params, None, failure)
        return generation_record(ctx, self, cell, prompt, params, result, None)


class JudgmentJob:
    """One judge's answers (blind: the claim and the response, and a later turn's
    conversation before it)."""

    kind = JUDGMENT
    condition = None

    def __init__(self, benchmark: Benchmark, judge: ModelJudge) -> None:
        self.benchmark = benchmark
        self.judge = judge
        self.model = judge.model
        self.name = judge.name
        self.settings: dict[str, Any] = {}
        self._params = judge.params()
        #: gen_id -> the answer, for the items this job builds requests for.
        self.answers: dict[int, PendingGeneration] = {}

    def item(self, p: PendingGeneration, attempt: int = 1) -> BatchItem:
        self.answers[p.gen_id] = p
        return BatchItem(answer_id(p.gen_id), gen_id=p.gen_id, attempt=attempt)

    def request(self, item: BatchItem) -> Request:
        assert item.gen_id is not None
        p = self.answers[item.gen_id]
        claim = self.benchmark.claim(p.claim_id).text
        return Request(self.judge.messages(claim, p.response, p.conversation), self._params, None)

    def record(self, item: BatchItem, result: Completion | str, ctx: RunContext) -> JudgmentRecord:
        """The judge's verdict on the answer, or the error (:func:`batch_result`)."""
        assert item.gen_id is not None
        if isinstance(result, str):
            return failed_judgment(item.gen_id, self.name, scrub(result), ctx.run_id)
        return self.judge.record(item.gen_id, result, ctx.run_id)


Job = GenerationJob | JudgmentJob
