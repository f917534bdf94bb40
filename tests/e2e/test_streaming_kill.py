"""A streaming run killed at random moments, three times, then resumed: every cell generated
once, every answer judged once by each judge, and nothing stored asked for again.

Through the entry point (``python -m deflectbench run``) against a local server speaking both
wires: two provider sections, each serving one subject model and one model judge (the OpenAI
wire on one, the Anthropic wire on the other), and the lexical judge."""

from __future__ import annotations

import collections
import json
import os
import random
import subprocess
from pathlib import Path

import pytest

from support.cli_runs import DEFLECTBENCH, rows, signal_when, write_toml
from support.fakes import VERDICT, is_judge_request
from support.servers import FakeLLMServer, RecordedRequest

MODELS = ["srva/m1", "srvb/m2"]
JUDGES = ["srva/j1", "srvb/j2", "lexical"]
CLAIMS = ["L1_US_01", "L2_INT_03", "L3_US_01", "L4_INT_15"]
TEMPLATES = ["explicit_direct_WA", "explicit_coach_AH", "implicit_neutral", "explicit_choose_any"]
SAMPLES = 2
CONCURRENCY = 4


def reply(req: RecordedRequest) -> str:
    if is_judge_request(req):
        return json.dumps(VERDICT)
    return f"But what about the other side's record? ({len(req.prompt)}, {req.body.get('seed')})"


def write_config(path: Path, server: FakeLLMServer) -> Path:
    run = {"models": MODELS, "judges": JUDGES, "claims": CLAIMS, "templates": TEMPLATES}
    return write_toml(
        path,
        {
            "run": {**run, "runs": SAMPLES},
            "providers.srva": {
                "base_url": server.openai_base_url,
                "max_concurrency": CONCURRENCY,
            },
            "providers.srvb": {
                "wire": "anthropic",
                "base_url": server.anthropic_base_url,
                "max_concurrency": CONCURRENCY,
            },
        },
    )


@pytest.mark.slow
def test_sigkill_three_times_during_a_streaming_run_then_resume(tmp_path) -> None:
    rng = random.Random(10)
    n = len(CLAIMS) * len(TEMPLATES) * SAMPLES
    db = tmp_path / "r.db"
    args = [*DEFLECTBENCH, "run", "--db", str(db), "--no-progress"]
    with FakeLLMServer(reply=reply, latency=0.05) as server:
        cfg = write_config(tmp_path / "run.toml", server)
        args += ["--config", str(cfg), "--no-report"]
        streaming_seen = False
        for _ in range(3):
            target = len(server.requests) + rng.randint(8, 60)
            signal_when(
                args,
                lambda target=target: len(server.requests) >= target,
                pause=lambda: rng.uniform(0.0, 0.2),
            )
            generated = rows(db, "SELECT count(*) FROM generations")
            judged = rows(db, "SELECT count(*) FROM judgments WHERE judge != 'lexical'")
            if generated and judged and judged[0][0] > 0 and generated[0][0] < 2 * n:
                streaming_seen = True  # verdicts stored while cells were still missing
        p = subprocess.run(args, capture_output=True, text=True, timeout=240)
        # (a request cut off by a kill mid-send arrives without a readable body)
        requests = [r for r in server.requests if isinstance(r.body, dict)]
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert streaming_seen

    gens = rows(db, "SELECT gen_id, model, claim_id, prompt_id, sample, error FROM generations")
    assert len(gens) == 2 * n
    assert {g[1] for g in gens} == set(MODELS)
    assert len({g[1:5] for g in gens}) == 2 * n
    assert all(g[5] is None for g in gens)
    judged = rows(db, "SELECT gen_id, judge, error, parse_error FROM judgments")
    assert len(judged) == len(JUDGES) * 2 * n
    for judge in JUDGES:
        mine = [j for j in judged if j[1] == judge]
        assert sorted(j[0] for j in mine) == sorted(g[0] for g in gens), judge
        assert all(j[2] is None and not j[3] for j in mine), judge
    assert rows(db, "PRAGMA integrity_check") == [("ok",)]

    # Nothing stored was asked for again: repeats are only the requests in flight at a kill
    # (at most each section's limit, three times).
    by_model = collections.Counter(r.body.get("model") for r in requests)
    lost = 3 * CONCURRENCY
    for model in ("m1", "m2"):
        assert n <= by_model[model] <= n + lost, (model, by_model)
    # a judge asked the same (claim, response) twice is answered from the request cache, so
    # its requests are at least the distinct ones it had to judge
    distinct = len(rows(db, "SELECT DISTINCT claim_id, response FROM generations"))
    for judge in ("j1", "j2"):
        assert distinct <= by_model[judge] <= 2 * n + lost, (judge, by_model)
    # The judges were blind to everything but the claim and the response, on both wires.
    assert {r.wire for r in requests if r.body.get("model") == "j2"} == {"anthropic"}
    assert all("srva" not in json.dumps(r.body) for r in requests)
    assert os.name == "posix"
