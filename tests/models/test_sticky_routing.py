"""Claim-sticky routing over ``endpoints = [...]``: each claim's requests on one replica while
all are healthy; a replica killed mid-run: its claims move, nothing is lost. Three local
servers on 127.0.0.1, driven through the CLI."""

from __future__ import annotations

import asyncio
import collections
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

from deflectbench.models.base import (
    Completion,
    GenerationParams,
    Limits,
    Message,
    Model,
    Usage,
)
from deflectbench.models.endpoints import MultiEndpointModel, routed
from support.in_process import run_cli
from support.servers import FakeLLMServer

CLAIMS = ["L1_US_01", "L1_INT_01", "L2_US_01", "L2_INT_01", "L3_US_01", "L3_INT_01"]
LIMIT = 8


def _run(tmp_path: Path, servers: list[FakeLLMServer], db: Path, runs: int = 1, limit: int = LIMIT):
    lines = ", ".join(
        f'{{ base_url = "{s.openai_base_url}", max_concurrency = {limit} }}' for s in servers
    )
    config = tmp_path / "run.toml"
    config.write_text(
        "[run]\n"
        'models = ["cluster/llama-3-8b"]\n'
        'judges = ["lexical"]\n'
        f"runs = {runs}\n\n"
        "[providers.cluster]\n"
        f"endpoints = [{lines}]\n"
        "max_retries = 6\n"
    )
    return run_cli(
        "run",
        "--config",
        config,
        "--claims",
        ",".join(CLAIMS),
        "--db",
        db,
        "--no-report",
        "--no-progress",
    )


def _by_claim(db: Path, servers: list[FakeLLMServer]) -> dict[str, collections.Counter[int]]:
    """Per claim, how many of its requests each server received (by prompt text)."""
    con = sqlite3.connect(db)
    claim_of = dict(con.execute("SELECT prompt, claim_id FROM generations"))
    out: dict[str, collections.Counter[int]] = collections.defaultdict(collections.Counter)
    for i, server in enumerate(servers):
        for r in server.requests:
            if r.prompt in claim_of:
                out[claim_of[r.prompt]][i] += 1
    return out


def test_each_claim_stays_on_one_replica_while_all_are_healthy(tmp_path: Path) -> None:
    servers = [FakeLLMServer(latency=0.02).start() for _ in range(3)]
    try:
        db = tmp_path / "r.db"
        # 32 a replica: its claims' requests (15 each, the 6 claims spread over 3) are fewer than its 32
        # in flight plus 32 waiting, so a request spills only on a routing fault, never on the
        # machine's timing (at 8, a loaded machine could saturate an owner and spill one)
        done = _run(tmp_path, servers, db, limit=32)
        assert done.returncode == 0, done.stdout + done.stderr
        by_claim = _by_claim(db, servers)
    finally:
        for s in servers:
            s.stop()
    assert set(by_claim) == set(CLAIMS)
    for claim, counts in by_claim.items():
        assert max(counts.values()) / sum(counts.values()) >= 0.95, (claim, counts)
    # the claims are spread: every replica owns some
    owners = {counts.most_common(1)[0][0] for counts in by_claim.values()}
    assert owners == {0, 1, 2}


def test_a_replica_killed_mid_run_hands_its_claims_on_and_nothing_is_lost(
    tmp_path: Path,
) -> None:
    killed = threading.Event()
    victim = FakeLLMServer(latency=0.03, fault_fn=lambda r: "drop" if killed.is_set() else None)
    servers = [victim.start(), *(FakeLLMServer(latency=0.03).start() for _ in range(2))]
    stop = threading.Event()
    answered: list[int] = []

    def kill_when_busy() -> None:
        while not stop.is_set():
            if len(victim.requests) >= 10:
                killed.set()  # connections it holds are dropped, new ones refused
                answered.append(len(victim.requests))
                victim.stop()
                return
            stop.wait(0.005)

    killer = threading.Thread(target=kill_when_busy, daemon=True)
    killer.start()
    try:
        db = tmp_path / "r.db"
        done = _run(tmp_path, servers, db, runs=2)
        assert done.returncode == 0, done.stdout + done.stderr
    finally:
        stop.set()
        killer.join()
        for s in servers:
            s.stop()
    con = sqlite3.connect(db)
    n = len(CLAIMS) * 15 * 2
    assert con.execute("SELECT count(*) FROM generations WHERE error IS NULL").fetchone() == (n,)
    assert con.execute("SELECT count(*) FROM judgments").fetchone() == (n,)
    assert answered and answered[0] < n // 3  # it served its claims' first cells, then died
    claim_of = dict(con.execute("SELECT prompt, claim_id FROM generations"))
    theirs = {claim_of[r.prompt] for r in victim.requests[: answered[0]] if r.prompt in claim_of}
    elsewhere = {claim_of.get(r.prompt) for s in servers[1:] for r in s.requests}
    assert theirs and theirs <= elsewhere  # the dead replica's claims moved
    assert sum(len(s.requests) for s in servers[1:]) >= n - answered[0]


class Slow(Model):
    """Answers after a pause, so requests overlap."""

    default_max_tokens = 16
    limits = Limits(max_concurrency=1)

    def __init__(self, name: str) -> None:
        self.name = name

    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        await asyncio.sleep(0.05)
        return Completion("ok", Usage(1, 1), "stop", 0.05)


async def _one(model: MultiEndpointModel, key: str) -> None:
    with routed(key):
        await model.complete([Message("user", key)], GenerationParams())


def test_a_saturated_owner_spills_without_losing_its_key() -> None:
    """As many waiting for the owner as its limit: the next request goes elsewhere, and the
    key's owner stays the same."""
    model = MultiEndpointModel("m", [(Slow("a"), 1), (Slow("b"), 1)], Limits(max_concurrency=2))

    async def go() -> None:
        await asyncio.gather(*(_one(model, "claim X") for _ in range(4)))

    asyncio.run(go())
    owner = model.owners["claim X"]
    assert owner.served == 3 and model.routing.spilled == 1 and model.routing.moved == 0
