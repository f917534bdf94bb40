"""The run manifest (issue 25, item 4): recorded at the client for every model and judge, from
what the official SDKs really sent to and heard from a local server speaking the OpenAI wire
(a served id other than the one asked, a system fingerprint, vLLM's /version and /v1/models);
checked against the requests the server recorded, never against the configuration. Shown in
status, status --json, the report and exports; bounded by the gate; never holds a key."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from pathlib import Path

import pytest

from deflectbench import gate
from deflectbench.models.anthropic_api import AnthropicModel
from deflectbench.models.openai_compat import OpenAICompatModel
from deflectbench.models.server_report import NOT_AVAILABLE, self_hosted
from deflectbench.models.wire_log import WireLog, sent_parameters
from support.cli_runs import Cli, write_toml
from support.fakes import is_judge_request
from support.replies import unique_reply

KEY = "sk-test-SECRET123"
cli = Cli(env={"OPENAI_API_KEY": KEY, "VLLM_API_KEY": KEY}, in_process=True)
wide = Cli(env={"COLUMNS": "200"}, in_process=True)  # no cell folded across lines
MODEL, JUDGE = "vllm/test-model", "openai/gpt-5.4-mini"
VERSION = {"version": "0.11.0"}
SERVED = [{"id": "test-model", "object": "model", "owned_by": "vllm", "max_model_len": 4096,
           "root": "/models/test-model-2026-05-01"}]  # fmt: skip


def dated(asked: str) -> str:
    return f"{asked}-2026-05-01"


def config(path: Path, server, **run: object) -> Path:
    section = {"base_url": server.openai_base_url, "max_concurrency": 4}
    plan = {
        "models": [MODEL],
        "judges": [JUDGE],
        "claims": ["L1_US_01", "L2_INT_03"],
        "templates": ["explicit_direct_WA", "explicit_coach_AH"],
        "runs": 2,
    }
    return write_toml(
        path,
        {
            "run": plan | run,
            "providers.vllm": section,
            "providers.openai": section,
            f'prices."{MODEL}"': {"input_per_mtok": 1000.0, "output_per_mtok": 1000.0},
        },
    )


def manifests(db: Path) -> dict[tuple[str, str], dict]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT role, name, manifest_json FROM manifests").fetchall()
    finally:
        conn.close()
    return {(role, name): json.loads(body) for role, name, body in rows}


def run(tmp_path: Path, server, *flags: str, **plan: object):
    db = tmp_path / "r.db"
    cfg = config(tmp_path / "run.toml", server, **plan)
    p = cli("run", "--config", cfg, "--db", db, "--no-progress", "--no-report", *flags)
    return db, p


@pytest.fixture
def server(llm_server):
    return llm_server.reset(
        reply=unique_reply, served_as=dated, version=VERSION, models=SERVED, fingerprint="fp_9"
    )


def test_the_manifest_holds_what_the_wire_carried(tmp_path, server):
    db, p = run(tmp_path, server)
    assert p.returncode == 0, p.stderr
    sent = [r for r in server.requests if r.path.endswith("/chat/completions")]
    gens = [r.body for r in sent if not is_judge_request(r)]
    judged = [r.body for r in sent if is_judge_request(r)]
    assert len(gens) == 8 and len(judged) == 8  # every request sent: no cache hit
    found = manifests(db)
    m, j = found[("model", MODEL)], found[("judge", JUDGE)]
    # the ids and fingerprints the replies named, counted per reply
    assert m["served_models"] == {"test-model-2026-05-01": 8}
    assert j["served_models"] == {"gpt-5.4-mini-2026-05-01": 8}
    assert m["system_fingerprints"] == j["system_fingerprints"] == {"fp_9": 8}
    assert m["asked"] == "test-model" and m["wire"] == "openai"
    # the parameters as the bodies held them (not the configuration)
    assert m["sent"]["temperature"] == gens[0]["temperature"]
    assert m["sent"]["max_tokens"] == gens[0]["max_tokens"]
    seeds = sorted({b["seed"] for b in gens})  # a seed per cell: 8 cells, 8 seeds
    assert m["sent"]["seed"] == {"distinct": 8, "values": seeds}
    assert {j["sent"]["temperature"], j["sent"]["seed"]} == {judged[0]["temperature"], 0}
    assert j["sent"]["max_completion_tokens"] == judged[0]["max_completion_tokens"]
    assert j["sent"]["response_format"]["type"] == judged[0]["response_format"]["type"]
    # what the server said it serves
    assert m["server"]["version"] == VERSION
    assert m["server"]["models"] == [{k: SERVED[0][k] for k in
                                      ("id", "owned_by", "max_model_len", "root")}]  # fmt: skip
    # counts and throughput at the client, against the store's own columns
    conn = sqlite3.connect(db)
    tokens = conn.execute(
        "SELECT sum(input_tokens), sum(output_tokens) FROM generations"
    ).fetchone()
    conn.close()
    assert (m["requests"], m["replies"], m["failed_requests"]) == (8, 8, 0)
    assert (m["input_tokens"], m["output_tokens"]) == tokens
    assert m["wall_s"] > 0 and m["wall_s"] <= m["run_wall_s"]
    # the rates are of the unrounded wall time; wall_s is kept to the millisecond
    lo, hi = m["wall_s"] - 5e-4, m["wall_s"] + 5e-4
    assert 8 / hi * 0.999 <= m["items_per_s"] <= 8 / lo * 1.001
    assert tokens[1] / hi * 0.999 <= m["output_tokens_per_s"] <= tokens[1] / lo * 1.001
    assert m["spent_usd"] == pytest.approx((tokens[0] + tokens[1]) * 1000 / 1e6)
    assert m["stopped"] is None


def test_status_report_and_export_show_it_and_no_key_anywhere(tmp_path, server):
    db, p = run(tmp_path, server)
    assert p.returncode == 0, p.stderr
    st = cli("status", "--json", "--db", db)
    assert st.returncode == 0, st.stderr
    rows = {(r["role"], r["name"]): r for r in json.loads(st.stdout)["manifest"]}
    m = rows[("model", MODEL)]
    assert m["served_models"] == {"test-model-2026-05-01": 8} and m["items_per_s"] > 0
    assert m["output_tokens_per_s"] > 0 and m["run_id"]
    table = wide("status", "--db", db)
    assert "Manifest" in table.stdout and "test-model-2026-05-01" in table.stdout
    assert "items/s" in table.stdout
    report = tmp_path / "rep"
    r = cli("report", "--db", db, "--out", report)
    assert r.returncode == 0, r.stderr
    html = (report / "report.html").read_text()
    assert '<section id="manifest">' in html and "test-model-2026-05-01 (8)" in html
    assert f"{m['items_per_s']:,.2f}" in html  # the client-side throughput, as measured
    csv = (report / "tables" / "manifest.csv").read_text()
    assert "items_per_s" in csv and "fp_9" in csv
    out = tmp_path / "export"
    e = cli("export", "--db", db, "--format", "jsonl", "--out", out)
    assert e.returncode == 0, e.stderr
    exported = json.loads((out / "manifest.json").read_text())["runs"]
    assert {r["name"] for r in exported} == {MODEL, JUDGE}
    stored = b"".join(f.read_bytes() for f in tmp_path.glob("r.db*"))
    for text in (stored, st.stdout.encode(), table.stdout.encode(), html.encode(),
                 (out / "manifest.json").read_bytes(), csv.encode()):  # fmt: skip
        assert KEY.encode() not in text and b"SECRET123" not in text
    assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in server.requests)


def test_a_server_that_says_nothing_is_not_available_and_the_run_goes_on(tmp_path, llm_server):
    llm_server.reset(reply=unique_reply)  # /version and /v1/models: 404, as a hosted API
    db, p = run(tmp_path, llm_server)
    assert p.returncode == 0, p.stderr
    m = manifests(db)[("model", MODEL)]
    assert m["server"]["version"] == m["server"]["models"] == NOT_AVAILABLE
    assert m["served_models"] == {"test-model": 8}  # the asked id, as this server names it


def test_a_run_stopped_at_its_budget_keeps_what_it_measured(tmp_path, server):
    db, p = run(tmp_path, server, "--max-cost", "0.3", "--max-tokens", "20")
    assert p.returncode == 3, (p.returncode, p.stderr)
    m = manifests(db)[("model", MODEL)]
    conn = sqlite3.connect(db)
    stored = conn.execute("SELECT count(*) FROM generations WHERE error IS NULL").fetchone()[0]
    conn.close()
    assert m["stopped"] == "budget" and 0 < m["replies"] == stored < 8
    assert m["sent"]["max_tokens"] == 20  # the flag, as it went on the wire


def test_hostile_served_ids_are_bounded_by_the_gate(tmp_path, server):
    server.served_as = lambda asked: "\x1b]0;pwned\x07" + asked
    server.fingerprint = "fp_" + "x" * 5000
    server.version = {"version": "v" * 5000, "build": "\u202egnp.exe"}
    db, p = run(tmp_path, server)
    assert p.returncode == 0, p.stderr
    m = manifests(db)[("model", MODEL)]
    assert m["served_models"] == {}  # an id with control characters is dropped, not shown
    assert m["system_fingerprints"] == {}  # a 5,003-character key: no id, dropped
    version = m["server"]["version"]
    assert len(version["version"]) == gate.MANIFEST_TEXT_CHARS and version["build"] is None
    table = wide("status", "--db", db)
    assert "\x1b" not in table.stdout and "pwned" not in table.stdout


def test_the_gate_bounds_what_a_manifest_may_hold():
    hostile = {
        "ok": "vllm 0.11",
        "bidi": "a\u202eb",
        "nan": float("nan"),
        "big": 2**80,
        "long": "y" * 10_000,
        "many": list(range(1000)),
        "deep": {"a": {"b": {"c": {"d": {"e": {"f": 1}}}}}},
        "obj": object(),
        "\x1bkey": 1,
    }
    out = gate.manifest(hostile)
    assert out["ok"] == "vllm 0.11" and out["bidi"] is None and out["nan"] is None
    assert out["big"] is None and out["obj"] is None and "\x1bkey" not in out
    assert len(out["long"]) == gate.MANIFEST_TEXT_CHARS
    assert out["many"] == list(range(gate.MANIFEST_ENTRIES))
    assert out["deep"] == {"a": {"b": {"c": {"d": None}}}}
    flood = gate.manifest({str(i): list(range(64)) for i in range(64)})
    assert sum(len(v) for v in flood.values()) < gate.MANIFEST_VALUES
    assert json.dumps(out)  # storable as it is


def test_sent_parameters_keep_the_parameters_not_the_messages():
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "secret prompt"}],
        "temperature": 0.0,
        "response_format": {"type": "json_schema", "json_schema": {"schema": {"a": 1}}},
    }
    got = sent_parameters(body, {"top_p": 0.9})
    assert "messages" not in got and got["top_p"] == 0.9 and got["temperature"] == 0.0
    assert got["response_format"]["type"] == "json_schema"
    assert got["response_format"]["schema"].startswith("sha256:")
    log = WireLog()
    for seed in range(20):
        log.note_sent({**body, "seed": seed})
    summary = log.sent_summary()
    assert summary["seed"]["distinct"] == "more than 8" and summary["temperature"] == 0.0


def test_only_configured_servers_are_asked():
    own = OpenAICompatModel("vllm/m", "m", base_url="http://127.0.0.1:9/v1", api_key="k")
    hosted = OpenAICompatModel("openai/m", "m", base_url="https://api.openai.com/v1", api_key="k")
    proxy = OpenAICompatModel("openai/m", "m", base_url="http://127.0.0.1:9/v1", api_key="k")
    claude = AnthropicModel("anthropic/c", "c", api_key="k")
    assert self_hosted(own) and self_hosted(proxy)
    assert not self_hosted(hosted) and not self_hosted(claude)


def test_a_server_echoing_the_key_leaves_no_key_in_the_manifest(tmp_path, server):
    server.version = {"version": "0.11.0", "seen": f"Bearer {KEY}", KEY: "header", "part": KEY[:12]}
    db, p = run(tmp_path, server)
    assert p.returncode == 0, p.stderr
    version = manifests(db)[("model", MODEL)]["server"]["version"]
    assert version["version"] == "0.11.0" and "[redacted]" in version["seen"]
    stored = b"".join(f.read_bytes() for f in tmp_path.glob("r.db*"))
    assert b"SECRET123" not in stored and KEY[:12].encode() not in stored


def test_an_interrupted_run_keeps_what_it_measured(tmp_path, server, benchmark):
    from deflectbench.execute import execute
    from deflectbench.store import Store
    from support.fakes import build, plan_for, sections

    server.reset(reply=unique_reply, latency=0.05)
    plan = plan_for(benchmark, runs=2)
    models = build([*plan.models, *plan.judges], sections(server, max_concurrency=1))
    stop = lambda: len(server.requests) >= 3  # noqa: E731 - Ctrl-C after the third request
    with Store.open(tmp_path / "r.db") as store:
        report = asyncio.run(execute(store, benchmark, plan, models, should_stop=stop))
        stored = sum(r["error"] is None for r in store.generation_rows(columns=["error"]))
    assert report.stop_reason == "interrupted"
    m = manifests(tmp_path / "r.db")[("model", MODEL)]
    assert m["stopped"] == "interrupted" and m["replies"] == stored and 0 < stored < 8
    assert m["requests"] == len(server.requests) and m["served_models"]


def test_a_model_without_a_wire_log_has_what_the_store_counted():
    from deflectbench.pipeline import StageResult
    from deflectbench.pipeline.manifest import NOT_RECORDED, one_manifest

    class Plugin:  # a model of a plugin: no wire log, no SDK
        name = "acme/local"

    res = StageResult(ok=6, errors=2, cached=2, input_tokens=300, output_tokens=120, cost_usd=0.5)
    m = one_manifest(
        Plugin(), [res], server=None, run_wall_s=4.0, stop_reason=None,
        batched=False, shared=False,
    )  # fmt: skip
    assert m["sent"] == m["served_models"] == m["requests"] == NOT_RECORDED
    assert (m["input_tokens"], m["output_tokens"], m["spent_usd"]) == (300, 120, 0.5)
    assert m["items_per_s"] == (6 + 2 - 2) / 4.0 and m["output_tokens_per_s"] == 120 / 4.0
    assert m["measured"] == "stored results" and m["notes"]
    nothing = one_manifest(
        None, [], server=None, run_wall_s=1.0, stop_reason="budget",
        batched=True, shared=False,
    )  # fmt: skip
    assert nothing["measured"] == nothing["spent_usd"] == NOT_RECORDED
    assert "batch mode" in nothing["notes"][0]


def test_a_manifest_that_cannot_be_written_never_hides_the_runs_own_error(tmp_path):
    from types import SimpleNamespace

    from deflectbench.pipeline.manifest import Clock, record

    report = SimpleNamespace(run_id="r", generation={}, judging={}, conditions={}, stop_reason=None)
    plan = SimpleNamespace(models=[MODEL], judges=[])
    broken = SimpleNamespace(transaction=None)  # writing raises
    try:
        raise KeyboardInterrupt  # the run is ending by its own error
    except KeyboardInterrupt:
        record(broken, report, plan, {}, {}, Clock())  # dropped, not raised
    with pytest.raises(TypeError):  # with no error of its own, the failure is the run's
        record(broken, report, plan, {}, {}, Clock())


def test_an_anthropic_judge_has_its_own_wire_in_the_manifest(tmp_path, server):
    claude = "anthropic/claude-haiku-4-5-20251001"
    section = {"base_url": server.anthropic_base_url, "max_concurrency": 4}
    cfg = config(tmp_path / "run.toml", server, judges=[claude])
    cfg.write_text(cfg.read_text() + "[providers.anthropic]\n" + "".join(
        f"{k} = {json.dumps(v)}\n" for k, v in section.items()
    ))  # fmt: skip
    db = tmp_path / "r.db"
    env = Cli(env={"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY + "-ant"}, in_process=True)
    p = env("run", "--config", cfg, "--db", db, "--no-progress", "--no-report")
    assert p.returncode == 0, p.stderr
    bodies = [r.body for r in server.requests if r.path.endswith("/messages")]
    j = manifests(db)[("judge", claude)]
    assert j["wire"] == "anthropic" and j["sdk"].startswith("anthropic ")
    assert j["served_models"] == {bodies[0]["model"]: len(bodies)} and j["requests"] == 8
    assert j["system_fingerprints"] == {}  # the Messages API gives none
    tool = bodies[0]["tools"][0]["name"]
    assert j["sent"]["tools"][0]["name"] == tool and j["sent"]["tools"][0]["schema"]
    assert j["sent"]["tool_choice"] == bodies[0]["tool_choice"]
    assert j["sent"]["max_tokens"] == bodies[0]["max_tokens"]
    assert j["sent"].get("temperature") == bodies[0].get("temperature")  # sent or not alike
    assert j["server"] == "not asked (not a self-hosted server)"


def test_served_ids_are_escaped_in_the_report_and_neutralised_in_its_csv(tmp_path, server):
    payload = '=HYPERLINK("http://x")<img src=x onerror=alert(1)>'
    server.served_as = lambda asked: payload
    db, p = run(tmp_path, server)
    assert p.returncode == 0, p.stderr
    assert manifests(db)[("model", MODEL)]["served_models"] == {payload: 8}  # printable: kept
    report = tmp_path / "rep"
    r = cli("report", "--db", db, "--out", report)
    assert r.returncode == 0, r.stderr
    html = (report / "report.html").read_text()
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    csv = (report / "tables" / "manifest.csv").read_text()
    assert "'=HYPERLINK" in csv and ",=HYPERLINK" not in csv
    md = (report / "report.md").read_text()
    assert "\\<img" in md and not re.search(r"(?<!\\)<img", md)  # CommonMark's escape


def test_a_servers_url_is_stored_without_credentials():
    from deflectbench.models.server_report import _root, public_url

    assert public_url("http://user:pw@10.0.0.2:8000/v1?key=k") == "http://10.0.0.2:8000/v1"
    assert _root("http://user:pw@10.0.0.2:8000/v1") == "http://10.0.0.2:8000"  # GET /version
    assert _root("https://gw.example/api/v1/") == "https://gw.example/api"
