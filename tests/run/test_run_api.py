"""Whole runs against local servers speaking the OpenAI and Anthropic wire formats, through the
official SDKs: faults, kills, budgets, the cache, judge blindness, and keys that never leak."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from deflectbench.benchmark import default_benchmark
from deflectbench.engine import EnginePolicy
from deflectbench.models.registry import get_model
from deflectbench.pipeline import RunContext, generate
from deflectbench.store import Store
from support.cli_runs import Cli, query, write_toml
from support.fakes import is_judge_request
from support.replies import judged
from support.servers import FakeLLMServer, RecordedRequest

OPENAI_KEY = "sk-test-OPENAI-5ecr3t-0000111122223333"
ANTHROPIC_KEY = "sk-ant-test-ANTHROPIC-5ecr3t-4444555566667777"
KEYS = {"OPENAI_API_KEY": OPENAI_KEY, "ANTHROPIC_API_KEY": ANTHROPIC_KEY}
cli = Cli(env=KEYS, in_process=True)


def answer(req: RecordedRequest) -> str:
    seed = req.body.get("seed") if isinstance(req.body, dict) else None
    return f"But what about the other side's record? ({len(req.prompt)}, {seed})"


reply = judged(answer)


def write_config(path: Path, server: FakeLLMServer, **run: object) -> Path:
    defaults = {
        "models": ["vllm/test-model"],
        "judges": ["anthropic/claude-haiku-4-5-20251001", "openai/gpt-5.4-mini"],
        "claims": ["L1_US_01", "L2_INT_03", "L4_INT_15"],
        "templates": ["explicit_direct_WA", "explicit_coach_AH", "implicit_neutral"],
        "runs": 2,
    }
    openai = {"base_url": server.openai_base_url, "max_concurrency": 4}
    tables = {
        "run": defaults | run,
        "providers.vllm": openai,
        "providers.openai": openai,
        "providers.anthropic": {"base_url": server.anthropic_base_url, "max_concurrency": 4},
        'prices."vllm/test-model"': {"input_per_mtok": 1000.0, "output_per_mtok": 1000.0},
    }
    return write_toml(path, tables)


@pytest.fixture
def server(llm_server):
    return llm_server.reset(reply=reply)  # one per session, reset for each test


def test_full_run_with_two_blind_judges_and_no_key_leak(tmp_path, server):
    db = tmp_path / "r.db"
    cfg = write_config(tmp_path / "run.toml", server)
    p = cli("run", "--config", str(cfg), "--db", str(db), "--no-progress")
    assert p.returncode == 0, p.stderr
    assert "vllm/test-model: 18 generated" in p.stdout
    assert "judge anthropic/claude-haiku-4-5-20251001: 18 judged, 0 errors" in p.stdout
    assert "judge openai/gpt-5.4-mini: 18 judged, 0 errors" in p.stdout
    st = json.loads(cli("status", "--json", "--db", str(db)).stdout)
    entry = st["models"]["vllm/test-model"]
    assert {k: entry[k] for k in ("planned", "ok", "errors")} == {
        "planned": 18,
        "ok": 18,
        "errors": 0,
    }
    assert entry["non_answers"] == {} and entry["truncated"] == 0
    assert st["judges"]["openai/gpt-5.4-mini"] == {"judged": 18, "parse_errors": 0, "errors": 0}

    # Judge blindness: each judge request is the rubric's system prompt and its user template
    # filled with the claim and the response only.
    b = default_benchmark()
    gens = {
        r[0]: (r[1], r[2]) for r in query(db, "SELECT gen_id, claim_id, response FROM generations")
    }
    expected_user = {b.rubric.user_prompt(b.claim(c).text, resp) for c, resp in gens.values()}
    judge_requests = [r for r in server.requests if is_judge_request(r)]
    assert len(judge_requests) == 36
    for r in judge_requests:
        body = r.body
        if r.wire == "anthropic":
            assert body["system"] == b.rubric.system
            (msg,) = body["messages"]
        else:
            system, msg = body["messages"]
            assert system == {"role": "system", "content": b.rubric.system}
        user = msg["content"] if isinstance(msg["content"], str) else msg["content"][0]["text"]
        assert user in expected_user
        blob = json.dumps(body)
        for leak in (
            "vllm/test-model",
            "test-model",
            "explicit_",
            "Deflect this claim",
            "coach",
            "framing",
        ):
            assert leak not in blob, leak
        assert body["temperature"] == 0 or body.get("temperature") in (0, 0.0)
    # Generation requests carry the release's prompt as a single user message.
    gen_requests = [r for r in server.requests if not is_judge_request(r)]
    assert all(len(r.body["messages"]) == 1 for r in gen_requests)
    assert {r.prompt for r in gen_requests} <= {b.render(c, p) for c, p, _ in b.prompts()}

    # Keys never reach the store, the output, or anything the run wrote.
    blob = b"".join(f.read_bytes() for f in tmp_path.iterdir() if f.is_file())
    for key in (OPENAI_KEY, ANTHROPIC_KEY):
        assert key.encode() not in blob
        assert key not in p.stdout + p.stderr
    assert any(r.headers.get("authorization") == f"Bearer {OPENAI_KEY}" for r in server.requests)
    # (this Anthropic SDK sends the key as a bearer token; older ones as x-api-key)
    assert any(
        ANTHROPIC_KEY in (r.headers.get("x-api-key"), r.headers.get("authorization", "")[7:])
        for r in server.requests
    )

    # Re-running sends nothing new and adds nothing.
    before = len(server.requests)
    p = cli("run", "--config", str(cfg), "--db", str(db), "--no-progress")
    assert p.returncode == 0, p.stderr
    assert len(server.requests) == before
    assert query(db, "SELECT count(*) FROM judgments") == [(36,)]


def test_key_echoed_in_an_error_never_reaches_store_or_output(tmp_path):
    with FakeLLMServer(
        reply=reply,
        fault_rate=1.0,
        fault_kinds=("401",),
        error_message=f"Incorrect API key provided: {OPENAI_KEY}",
    ) as server:
        db = tmp_path / "r.db"
        cfg = write_config(tmp_path / "run.toml", server, judges=["lexical"], runs=1)
        p = cli("run", "--config", str(cfg), "--db", str(db), "--no-progress")
        blob = db.read_bytes() + b"".join(f.read_bytes() for f in tmp_path.glob("r.db*"))
        assert OPENAI_KEY.encode() not in blob
        assert OPENAI_KEY not in p.stdout + p.stderr
        errors = query(db, "SELECT error FROM generations WHERE error IS NOT NULL")
        assert errors and all("401" in e for (e,) in errors)


def test_dry_run_sends_nothing_and_writes_nothing(tmp_path, server):
    db = tmp_path / "r.db"
    cfg = write_config(tmp_path / "run.toml", server)
    p = cli("run", "--config", str(cfg), "--db", str(db), "--dry-run")
    assert p.returncode == 0, p.stderr
    assert "Dry run" in p.stdout and "vllm/test-model" in p.stdout
    assert "to send" in p.stdout and "estimated cost" in p.stdout
    assert server.requests == []
    assert not db.exists()


def test_max_cost_stops_cleanly_then_resumes(tmp_path, server):
    db = tmp_path / "r.db"
    cfg = write_config(tmp_path / "run.toml", server, judges=["lexical"], max_tokens=20)
    # ~40 tokens a request at 1000 USD per million tokens: about 0.04 USD each; each reserves
    # its most first (the prompt's bytes as tokens plus 20 output tokens): 0.19 to 0.38 USD.
    p = cli("run", "--config", str(cfg), "--db", str(db), "--no-progress", "--max-cost", "0.5")
    assert p.returncode == 3, p.stderr
    assert "--max-cost" in p.stdout
    stored = query(db, "SELECT count(*) FROM generations")[0][0]
    assert 3 <= stored < 18
    (spent,) = query(db, "SELECT sum(cost_usd) FROM generations")[0]
    assert spent <= 0.5  # reserved before sending: never over the budget
    p = cli("run", "--config", str(cfg), "--db", str(db), "--no-progress")
    assert p.returncode == 0, p.stderr
    assert f"{18 - stored} generated, {stored} already stored" in p.stdout


def test_cache_answers_identical_requests_and_no_cache_does_not(tmp_path, server):
    db = tmp_path / "r.db"
    cfg = write_config(tmp_path / "run.toml", server, judges=["openai/gpt-5.4-mini"])
    assert cli("run", "--config", str(cfg), "--db", str(db), "--no-progress").returncode == 0
    sent = len(server.requests)
    assert sent == 36
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM judgments")
    conn.execute("DELETE FROM generations")
    conn.commit()
    conn.close()
    p = cli("run", "--config", str(cfg), "--db", str(db), "--no-progress")
    assert p.returncode == 0, p.stderr
    assert "18 from the request cache" in p.stdout
    assert len(server.requests) == sent
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM judgments")
    conn.commit()
    conn.close()
    p = cli("run", "--config", str(cfg), "--db", str(db), "--no-progress", "--no-cache")
    assert p.returncode == 0, p.stderr
    assert "judge openai/gpt-5.4-mini: 18 judged" in p.stdout, p.stdout
    assert len(server.requests) == sent + 18


def test_2000_cells_with_20_percent_faults_end_with_exactly_2000(tmp_path):
    b = default_benchmark()
    cells = [
        (c.claim_id, t.prompt_id, s) for c in b.claims for t in b.templates[:5] for s in range(1, 6)
    ]
    assert len(cells) == 2000
    with FakeLLMServer(
        reply=reply,
        fault_rate=0.2,
        fault_kinds=("429", "500", "503", "drop", "malformed", "nonjson", "hang"),
        hang_s=3.0,
        seed=7,
    ) as server:
        model = get_model(
            "vllm/test-model",
            {"vllm": {"base_url": server.openai_base_url, "timeout_s": 1.0, "max_concurrency": 32}},
        )
        policy = EnginePolicy.for_model(
            model, timeout_s=1.5, backoff_base_s=0.01, backoff_max_s=0.1, max_retries=10
        )

        async def go(store: Store):
            try:
                return await generate(RunContext(store, b, "r"), model, cells, policy=policy)
            finally:
                await model.aclose()

        with Store.open(tmp_path / "r.db") as store:
            res = asyncio.run(go(store))
            assert res.ok == 2000 and res.errors == 0
            got = store.generation_rows()
            assert len(got) == 2000
            assert len({(r["claim_id"], r["prompt_id"], r["sample"]) for r in got}) == 2000
            assert all(r["error"] is None for r in got)
        faults = sum(server.stats.faults.values())
        assert faults >= 300  # about 20% of the requests were faulted


def test_sigkill_three_times_then_resume_ends_the_same(tmp_path):
    rng = random.Random(3)
    with FakeLLMServer(reply=reply, latency=0.05) as server:
        db = tmp_path / "r.db"
        cfg = write_config(
            tmp_path / "run.toml",
            server,
            claims=["L1_US_01", "L2_INT_03", "L3_US_01", "L4_INT_15"],
            templates=[
                "explicit_direct_WA",
                "explicit_coach_AH",
                "implicit_neutral",
                "explicit_choose_any",
            ],
            runs=3,
        )
        n = 4 * 4 * 3
        args = cli.command("run", "--config", str(cfg), "--db", str(db), "--no-progress")
        for _ in range(3):
            proc = subprocess.Popen(
                args, env=cli.environ(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            time.sleep(rng.uniform(1.5, 4.0))  # start-up is ~1.5 s; then generation and judging
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        p = cli("run", "--config", str(cfg), "--db", str(db), "--no-progress")
        assert p.returncode == 0, p.stderr
        gens = query(db, "SELECT claim_id, prompt_id, sample, error FROM generations")
        assert len(gens) == n and len({g[:3] for g in gens}) == n
        assert all(g[3] is None for g in gens)
        judged = query(db, "SELECT gen_id, judge FROM judgments WHERE error IS NULL")
        assert len(judged) == 2 * n and len(set(judged)) == 2 * n
        assert query(db, "PRAGMA integrity_check") == [("ok",)]


def test_a_bad_key_stops_the_run_early_with_a_clear_message(tmp_path):
    with FakeLLMServer(reply=reply, fault_rate=1.0, fault_kinds=("401",)) as server:
        db = tmp_path / "r.db"
        cfg = write_config(
            tmp_path / "run.toml",
            server,
            judges=["lexical"],
            runs=2,
            claims=["L1_US_01", "L2_INT_03", "L3_US_01", "L4_INT_15"],
            templates=[
                "explicit_direct_WA",
                "explicit_coach_AH",
                "implicit_neutral",
                "explicit_choose_any",
            ],
        )
        p = cli("run", "--config", str(cfg), "--db", str(db), "--no-progress")
        assert p.returncode == 4, (p.stdout, p.stderr)
        assert "stopped early: 25 failures in a row" in p.stderr
        assert "--retry-errors" in p.stderr and "Traceback" not in p.stderr
        # The 25 failures and the requests in flight with them (max_concurrency 4) are stored
        # as error rows; the rest of the 32 cells is still to do.
        (failed,) = query(db, "SELECT count(*) FROM generations WHERE error IS NOT NULL")[0]
        assert 25 <= failed < 25 + 4
        assert query(db, "SELECT count(*) FROM generations") == [(failed,)]
        assert len(server.requests) == failed
