"""Hostile batch results (issue 22): a result line whose usage overflows, whose ``error`` or
``response`` is a string, is that item's error (sent again within the retry limit), never an
exception that leaves the batch open and stops every later ``status``; a provider answering
batch creation with the id of another batch of this store is not adopted."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from deflectbench.benchmark import default_benchmark
from deflectbench.cost import CostMeter
from deflectbench.models.providers import build_api_model
from deflectbench.pipeline.batches import BatchMode, cell_id
from deflectbench.pipeline.context import RunContext
from deflectbench.store import Store
from support.batch_servers import BatchServer, EmulatedBatch
from support.fakes import VERDICT, is_judge_request
from support.servers import RecordedRequest

ENV = {"OPENAI_API_KEY": "sk-local-test"}
NAME = "openai/gpt-5-mini"
B = default_benchmark()
CELLS = [
    (c.claim_id, t.prompt_id, s) for c in B.claims[:3] for t in B.templates[:2] for s in (0, 1)
]
SETTINGS = {"seed": 0, "temperature": 1.0, "max_tokens": 64, "judges": []}
TARGET = cell_id(CELLS[3])


def reply(req: RecordedRequest) -> str:
    return json.dumps(VERDICT) if is_judge_request(req) else "What about the other side?"


def mode_for(tmp_path: Path, server: BatchServer) -> tuple[Store, BatchMode]:
    store = Store.open(tmp_path / "b.db")
    m = build_api_model(NAME, {"base_url": server.openai_base_url}, ENV)
    return store, BatchMode(RunContext(store, B, meter=CostMeter(None)), {m.name: m})


def run(mode: BatchMode, *steps: Callable[[], Any]) -> None:
    """Each step in turn on one event loop (the SDK client's connections live on it)."""
    loop = LOOPS.setdefault(id(mode), asyncio.new_event_loop())
    for step in steps:
        loop.run_until_complete(step())


LOOPS: dict[int, asyncio.AbstractEventLoop] = {}


def submit(mode: BatchMode, cells: list = CELLS) -> Callable[[], Any]:
    return lambda: mode.submit_generations(NAME, cells, "c", SETTINGS)


def stored(store: Store) -> int:
    sql = "SELECT count(*) FROM generations WHERE error IS NULL"
    return int(store.conn.execute(sql).fetchone()[0])


class HostileServer(BatchServer):
    """The OpenAI emulator, its output file's line for :data:`TARGET` rewritten once."""

    def __init__(self, mutate: Callable[[dict[str, Any]], Any], **kw: Any) -> None:
        super().__init__(reply=reply, **kw)
        self.mutate = mutate
        self.done = False

    def _openai_files(self, batch: EmulatedBatch) -> tuple[bytes, bytes]:
        out, err = super()._openai_files(batch)
        lines = []
        for raw in out.splitlines():
            line = json.loads(raw)
            if line["custom_id"] == TARGET and not self.done:
                self.done = True
                line = self.mutate(line)
            lines.append(json.dumps(line).encode() + b"\n")
        return b"".join(lines), err


def usage(value: int) -> Callable[[dict], dict]:
    def edit(line: dict) -> dict:
        line["response"]["body"]["usage"]["prompt_tokens"] = value
        return line

    return edit


@pytest.mark.parametrize(
    "mutate",
    [
        usage(10**30),
        usage(-3300),
        lambda line: line | {"error": "boom"},
        lambda line: line | {"response": "boom"},
        lambda line: line | {"response": {"status_code": 200, "body": "boom"}},
    ],
    ids=["usage-1e30", "usage-negative", "error-string", "response-string", "body-string"],
)
def test_a_hostile_result_line_is_its_items_error_and_goes_again(tmp_path: Path, mutate) -> None:
    with HostileServer(mutate) as server:
        store, mode = mode_for(tmp_path, server)
        run(mode, submit(mode), mode.collect)  # never raises
        assert stored(store) == len(CELLS) - 1
        assert store.batch_list(open_only=True) == [] or all(
            r.state != "submitting" for r in store.batch_list(open_only=True)
        )
        run(mode, mode.collect)  # the next status collects the item sent again
        assert stored(store) == len(CELLS)
        assert server.submissions[("openai", NAME.split("/", 1)[1], TARGET)] == 2
        rows = store.generation_rows()
        assert all(0 <= r["input_tokens"] <= 10**8 for r in rows)
        assert store.spent_usd() >= 0


def test_a_batch_created_under_another_batchs_id_is_not_adopted(tmp_path: Path) -> None:
    with BatchServer(reply=reply) as server:
        store, mode = mode_for(tmp_path, server)
        run(mode, submit(mode, CELLS[:4]))
        first = next(iter(server.batches.values()))
        real_create = server.create

        def same_id(wire, requests, **extra):
            batch = real_create(wire, requests, **extra)
            server.batches.pop(batch.id)
            batch.id = first.id  # the provider answers with an existing batch's id
            return batch

        server.create = same_id  # type: ignore[method-assign]
        run(mode, submit(mode, CELLS[4:]))
        rows = store.batch_list()
        ids = [r.remote_id for r in rows if r.remote_id]
        assert len(ids) == len(set(ids))  # never two batches of one id
        assert any("not adopted" in p for p in mode.summary.problems)
        assert not [r for r in rows if r.state == "submitting"]


def test_batch_modes_budget_hold_back_exits_3_like_the_direct_path(tmp_path: Path) -> None:
    from support.cli_runs import QUIET_RUN, Cli, write_toml

    cli = Cli(env={**ENV, "DEFLECTBENCH_BATCH_POLL_S": "0.2"}, run_flags=QUIET_RUN)
    with BatchServer(reply=reply) as server:
        run_file = {
            "models": [NAME],
            "judges": ["lexical"],
            "claims": [c.claim_id for c in B.claims[:3]],
            "templates": [t.prompt_id for t in B.templates[:2]],
            "runs": 2,
            "max_cost": 0.0007,
        }
        cfg = write_toml(
            tmp_path / "run.toml",
            {"run": run_file, "providers.openai": {"base_url": server.openai_base_url}},
        )
        p = cli("run", "--batch", "--config", str(cfg), "--db", str(tmp_path / "r.db"))
    assert "over the --max-cost budget" in p.stderr
    assert p.returncode == 3, p.stderr
