"""Batch adoption (issue 22): a batch is adopted only if what the provider says of it is what
this store sent: OpenAI's metadata tag, input file and endpoint; Anthropic's request count and
its results' custom ids. A provider answering a creation with another existing batch's id
(another store's) has that batch refused (one line, its items sent again), never its results
stored as this store's answers. Against the batch emulators."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from deflectbench.benchmark import default_benchmark
from deflectbench.cost import CostMeter
from deflectbench.models.batch_api import Outcome, Remote, foreign_ids, not_ours
from deflectbench.models.providers import build_api_model
from deflectbench.pipeline.batches import BatchMode, cell_id
from deflectbench.pipeline.context import RunContext
from deflectbench.store import Store
from support.batch_servers import BatchServer
from support.fakes import VERDICT, is_judge_request
from support.servers import RecordedRequest

ENV = {"OPENAI_API_KEY": "sk-local-test", "ANTHROPIC_API_KEY": "sk-ant-local-test"}
B = default_benchmark()
CELLS = [(c.claim_id, t.prompt_id, s) for c in B.claims[:4] for t in B.templates[:1] for s in (0,)]
MINE, THEIRS = CELLS[:2], CELLS[2:]  # the same number of items: the count cannot tell
SETTINGS = {"seed": 0, "temperature": 1.0, "max_tokens": 64, "judges": []}
MODELS = {"openai": "openai/gpt-5-mini", "anthropic": "anthropic/claude-haiku-4-5"}


def reply(req: RecordedRequest) -> str:
    return json.dumps(VERDICT) if is_judge_request(req) else "What about the other side?"


class Mode:
    """One store in batch mode on the emulator, its steps on one event loop."""

    def __init__(self, path: Path, server: BatchServer, name: str) -> None:
        self.name = name
        self.store = Store.open(path)
        url = server.openai_base_url if name.startswith("openai") else server.anthropic_base_url
        m = build_api_model(name, {"base_url": url}, ENV)
        self.mode = BatchMode(RunContext(self.store, B, meter=CostMeter(None)), {m.name: m})
        self.loop = asyncio.new_event_loop()

    def run(self, *steps: Callable[[], Any]) -> None:
        for step in steps:
            self.loop.run_until_complete(step())

    def submit(self, cells: list) -> Callable[[], Any]:
        return lambda: self.mode.submit_generations(self.name, cells, "c", SETTINGS)

    def answered(self) -> set[tuple[str, str, int]]:
        return {
            (r["claim_id"], r["prompt_id"], r["sample"])
            for r in self.store.generation_rows()
            if r["error"] is None
        }

    def close(self) -> None:
        self.store.close()
        self.loop.close()


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_another_stores_batch_answered_at_creation_is_never_adopted(tmp_path, wire):
    name = MODELS[wire]
    with BatchServer(reply=reply) as server:
        theirs = Mode(tmp_path / "theirs.db", server, name)
        mine = Mode(tmp_path / "mine.db", server, name)
        try:
            theirs.run(theirs.submit(THEIRS))  # batch 0: another store's, still open
            # my creation (batch 1) is answered with batch 0's id
            server.faults = replace(server.faults, answer_create_with={1: 0}.get)
            mine.run(mine.submit(MINE), mine.mode.collect, mine.mode.collect)
            assert mine.answered() <= set(MINE)  # never another store's answers
            problems = [p for p in mine.mode.summary.problems if "not adopted" in p]
            assert len(problems) == 1, mine.mode.summary.problems
            assert "\n" not in problems[0]
            expected = "tag" if wire == "openai" else "custom ids this store did not send"
            assert expected in problems[0]
            # its items go again, as its own (refused at creation: the next run sends them;
            # refused at collection: collecting sends them again)
            mine.run(mine.submit(MINE), mine.mode.collect, mine.mode.collect)
            assert mine.answered() == set(MINE)
            theirs.run(theirs.mode.collect)  # their batch is theirs, whole
            assert theirs.answered() == set(THEIRS)
            rows = mine.store.batch_list()
            assert not [r for r in rows if r.state == "submitting"]
            sent = {cell_id(c) for c in MINE}
            stored = {i.custom_id for r in rows for i in mine.store.batch_items(r.batch_key)}
            assert stored == sent
        finally:
            theirs.close()
            mine.close()


def test_what_the_provider_says_of_a_batch_must_be_what_was_sent():
    remote = Remote("b1", "in_progress", False, tag="db-mine", input_file_id="file-1",
                    endpoint="/v1/chat/completions", requests=4)  # fmt: skip
    ok = {"items": 4, "input_file_id": "file-1", "endpoint": "/v1/chat/completions"}
    assert not_ours(remote, "db-mine", **ok) is None
    assert "tag 'db-theirs'" in not_ours(replace(remote, tag="db-theirs"), "db-mine", **ok)
    assert "tag ''" in not_ours(replace(remote, tag=""), "db-mine", **ok)  # untagged
    assert "input file" in not_ours(replace(remote, input_file_id="file-9"), "db-mine", **ok)
    assert "endpoint" in not_ours(replace(remote, endpoint="/v1/embeddings"), "db-mine", **ok)
    assert "holds 5 requests" in not_ours(replace(remote, requests=5), "db-mine", **ok)
    assert not_ours(replace(remote, tag=None, requests=None), "db-mine", **ok) is None
    outcomes = [Outcome("g1", "succeeded"), Outcome("g9", "succeeded")]
    assert foreign_ids(outcomes, {"g1", "g2"}).startswith("1 of its results")
    assert foreign_ids(outcomes[:1], {"g1", "g2"}) is None
