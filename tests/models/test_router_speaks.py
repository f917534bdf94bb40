"""The router speaks: a line when an endpoint is set aside and when it answers again (its URL
without credentials), per-endpoint requests, failures and moved claims in the run's manifest
and ``status``; judges routed by claim as generations are, on the replicas they share."""

from __future__ import annotations

import asyncio
import collections
import json
import os
import re
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from deflectbench.models import endpoints
from deflectbench.models.base import (
    Completion,
    GenerationParams,
    Limits,
    Message,
    Model,
    ModelError,
    Usage,
)
from deflectbench.models.endpoints import MultiEndpointModel, routed
from deflectbench.pipeline.affinity import affinity
from deflectbench.records import PendingGeneration
from support.fakes import is_judge_request
from support.in_process import run_cli
from support.replies import unique_reply
from support.servers import FakeLLMServer

CLAIMS = ["L1_US_01", "L1_INT_01", "L2_US_01", "L2_INT_01", "L3_US_01", "L3_INT_01"]
ANSWER = re.compile(r"\(answer \d+\)")


class Flaky(Model):
    """Unreachable while ``down`` is set, else answers at once."""

    default_max_tokens = 16
    limits = Limits(max_concurrency=4)

    def __init__(self, name: str, base_url: str) -> None:
        self.name = name
        self.base_url = base_url
        self.down = False

    async def complete(self, messages: Sequence[Message], params: GenerationParams) -> Completion:
        if self.down:
            raise ModelError("connection refused", retryable=True, cause="connection refused")
        return Completion("ok", Usage(1, 1), "stop", 0.0)


def test_a_line_when_an_endpoint_is_set_aside_and_when_it_is_back(monkeypatch) -> None:
    monkeypatch.setattr(endpoints, "DOWN_FOR_S", 0.05)
    a = Flaky("pool/m", "http://user:s3cret@127.0.0.1:1/v1")
    b = Flaky("pool/m", "http://127.0.0.1:2/v1")
    model = MultiEndpointModel("pool/m", [(a, 4), (b, 4)], Limits(max_concurrency=8))
    heard: list[str] = []
    model.listeners.append(heard.append)

    async def ask(key: str) -> None:
        with routed(key):
            await model.complete([Message("user", key)], GenerationParams())

    async def go() -> None:
        await ask("claim A")  # owner: a (the first with the most room)
        a.down = True
        with pytest.raises(ModelError):
            await ask("claim A")  # a set aside
        await ask("claim A")  # the claim moves to b
        a.down = False
        await asyncio.sleep(0.1)  # a's time aside is up
        await ask("claim C")  # a is tried again and answers

    asyncio.run(go())
    assert heard == [
        "pool/m: endpoint http://127.0.0.1:1/v1 set aside (connection refused); its claims go "
        "to the others, tried again in 0.05 s",
        "pool/m: endpoint http://127.0.0.1:1/v1 is back (answered again)",
    ]
    assert not any("s3cret" in line or "user" in line for line in heard)
    counts = model.endpoint_counts()
    assert counts[0] == {
        "endpoint": "http://127.0.0.1:1/v1",
        "max_concurrency": 4,
        "requests": 3,
        "failures": 1,
        "moved": 1,
        "set_aside": False,
    }
    assert counts[1]["requests"] == 1 and counts[1]["failures"] == 0  # claim A, moved


def test_a_judge_is_routed_by_its_claim() -> None:
    item = PendingGeneration(gen_id=7, claim_id="L1_US_01", response="r")
    assert affinity(item) == "claim L1_US_01"


def _config(tmp_path: Path, servers: list[FakeLLMServer], judge: str, limit: int = 8) -> Path:
    lines = ", ".join(
        f'{{ base_url = "{s.openai_base_url}", max_concurrency = {limit} }}' for s in servers
    )
    config = tmp_path / "run.toml"
    config.write_text(
        f'[run]\nmodels = ["cluster/m"]\njudges = ["{judge}"]\nsamples = 2\n\n'
        f"[providers.cluster]\nendpoints = [{lines}]\nmax_retries = 6\n"
    )
    return config


def _run(tmp_path: Path, config: Path, db: Path):
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


def test_a_replica_down_and_back_is_said_and_counted(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(endpoints, "DOWN_FOR_S", 0.3)
    down = threading.Event()
    # 0.25 s a reply: the 180 requests take about 2 s, well past the 0.6 s down and the 0.3 s
    # before it is tried again, however fast or loaded the machine (at 0.03 s the run could end
    # before the replica was asked again, and "is back" was never said)
    victim = FakeLLMServer(latency=0.25, fault_fn=lambda r: "drop" if down.is_set() else None)
    servers = [victim.start(), *(FakeLLMServer(latency=0.25).start() for _ in range(2))]
    urls = [s.openai_base_url for s in servers]
    stop = threading.Event()

    def down_for_a_while() -> None:
        while not stop.is_set() and len(victim.requests) < 10:
            stop.wait(0.005)
        down.set()  # its connections dropped
        stop.wait(0.6)
        down.clear()  # and back

    flapper = threading.Thread(target=down_for_a_while, daemon=True)
    flapper.start()
    db = tmp_path / "r.db"
    try:
        done = _run(tmp_path, _config(tmp_path, servers, "lexical"), db)
        shown = run_cli("status", "--db", db, env={**os.environ, "COLUMNS": "200"})
        as_json = run_cli("status", "--json", "--db", db)
    finally:
        stop.set()
        flapper.join()
        for s in servers:
            s.stop()
    assert done.returncode == 0, done.stdout + done.stderr
    url = urls[0]
    said = [line for line in done.stderr.splitlines() if "endpoint" in line]
    assert said[0].startswith(f"cluster/m: endpoint {url} set aside (")
    assert f"cluster/m: endpoint {url} is back (answered again)" in said
    [row] = [r for r in json.loads(as_json.stdout)["manifest"] if r["name"] == "cluster/m"]
    by_url = {e["endpoint"]: e for e in row["endpoints"]}
    assert set(by_url) == set(urls)
    assert by_url[url]["failures"] >= 1 and by_url[url]["moved"] >= 1
    # independent count: every request a server received (the dropped ones too) was one
    assert by_url[url]["requests"] == len(victim.requests)
    for other, s in zip(urls[1:], servers[1:], strict=True):
        assert by_url[other]["requests"] == len(s.requests)
        assert by_url[other]["failures"] == 0
    assert "Endpoints: what each replica did (latest run of each)" in shown.stdout
    [line] = [x for x in shown.stdout.splitlines() if url in x]
    cells = [c.strip() for c in line.strip("│ ").split("│")]
    failures, moved = by_url[url]["failures"], by_url[url]["moved"]
    assert cells == ["cluster/m", url, str(len(victim.requests)), str(failures), str(moved), "up"]
    print(shown.stdout[shown.stdout.index("Endpoints:") - 40 :])
    print("\n".join(said))


def test_judges_on_the_same_replicas_follow_their_claims(tmp_path: Path) -> None:
    servers = [FakeLLMServer(reply=unique_reply, latency=0.02).start() for _ in range(3)]
    db = tmp_path / "r.db"
    try:
        # 32 a replica: a claim's 30 answers and 30 verdicts (2 samples) are fewer than its
        # owner's 32 in flight plus 32 waiting, so none spills: each must reach its owner
        done = _run(tmp_path, _config(tmp_path, servers, "cluster/judge", limit=32), db)
    finally:
        for s in servers:
            s.stop()
    assert done.returncode == 0, done.stdout + done.stderr
    con = sqlite3.connect(db)
    claim_of_prompt: dict[str, str] = {}
    claim_of_answer: dict[str, str] = {}
    for prompt, response, claim in con.execute(
        "SELECT prompt, response, claim_id FROM generations"
    ):
        claim_of_prompt[prompt] = claim
        claim_of_answer[ANSWER.search(response).group()] = claim  # type: ignore[union-attr]
    judged: dict[str, collections.Counter[int]] = collections.defaultdict(collections.Counter)
    generated: dict[str, collections.Counter[int]] = collections.defaultdict(collections.Counter)
    for i, s in enumerate(servers):
        for r in s.requests:
            if is_judge_request(r):
                found = ANSWER.search(json.dumps(r.body))
                assert found is not None
                judged[claim_of_answer[found.group()]][i] += 1
            else:
                generated[claim_of_prompt[r.prompt]][i] += 1
    assert set(judged) == set(generated) == set(CLAIMS)
    for claim in CLAIMS:  # its answers and its verdicts on one replica
        assert len(generated[claim]) == 1 and judged[claim].keys() == generated[claim].keys()
