"""Batch mode's manifest (issue 25, item 4): what the batch lines we write and the result lines we
read say, through the entry point and the official SDKs against the local batch emulators.

The served ids, fingerprints and tokens are checked against what the emulator put in its result
lines, the sent parameters against the request bodies the emulator received; a collect in a
later command updates the row of the run the results are stored under; a hostile id in a
result line is bounded by the gate's rule; no key reaches the store.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.batch_servers import BatchServer
from support.cli_runs import QUIET_RUN, Cli, query, write_toml
from support.in_process import run_cli
from support.replies import unique_reply as reply
from support.servers import FakeLLMServer

OPENAI_KEY = "sk-batchtest-0123456789abcdefSECRET"
ANTHROPIC_KEY = "sk-ant-batchtest-0123456789SECRET"
CLAIMS = ["L1_US_01", "L2_INT_03"]
TEMPLATES = ["explicit_direct_WA", "implicit_neutral"]
CELLS = len(CLAIMS) * len(TEMPLATES)
cli = Cli(
    env={
        "OPENAI_API_KEY": OPENAI_KEY,
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "DEFLECTBENCH_BATCH_POLL_S": "0.2",
    },
    run_flags=QUIET_RUN,
)


def served(asked: str) -> str:
    return f"{asked}-2099-01-01"


def config(path: Path, batch: BatchServer, *, models: list[str], judges: list[str]) -> Path:
    return write_toml(
        path,
        {
            "run": {"models": models, "judges": judges, "claims": CLAIMS, "templates": TEMPLATES},
            "providers.openai": {"base_url": batch.openai_base_url},
            "providers.anthropic": {"base_url": batch.anthropic_base_url},
        },
    )


def manifests(db: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(run_id, role, name) -> the stored manifest."""
    found = query(db, "SELECT run_id, role, name, manifest_json FROM manifests")
    return {(r, role, name): json.loads(body) for r, role, name, body in found}


def sent_by_hand(batch: BatchServer, wire: str, model: str) -> dict[str, set[str]]:
    """Each body parameter's distinct values over the lines the emulator received for
    ``model`` (the messages and the system prompt aside), as JSON."""
    out: dict[str, set[str]] = {}
    for b in batch.batches.values():
        for _, body in b.requests:
            if b.wire != wire or body.get("model") != model:
                continue
            for key, value in body.items():
                if key not in ("messages", "system", "tools", "response_format"):
                    out.setdefault(key, set()).add(json.dumps(value, sort_keys=True))
    return out


def sent_in(manifest: dict[str, Any]) -> dict[str, set[str]]:
    out = {}
    for key, value in manifest["sent"].items():
        if key in ("tools", "response_format"):
            continue
        values = value["values"] if isinstance(value, dict) and "distinct" in value else [value]
        out[key] = {json.dumps(v, sort_keys=True) for v in values}
    return out


def test_a_batch_runs_manifest_says_what_the_lines_said(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    llm = FakeLLMServer(reply=reply, record=False, served_as=served, fingerprint="fp_batch7")
    with BatchServer(llm=llm) as batch:
        cfg = config(
            tmp_path / "run.toml",
            batch,
            models=["openai/gpt-5-mini", "anthropic/claude-haiku-4-5"],
            judges=["openai/judge-test"],
        )
        first = cli("run", "--batch", "--config", str(cfg), "--db", str(db))
        assert first.returncode == 0, first.stderr
        (run_id,) = {r for r, _, _ in manifests(db)}
        m = manifests(db)[(run_id, "model", "openai/gpt-5-mini")]
        # submitted, not collected: the lines' parameters and count, no reply yet
        assert m["measured"] == "batch lines"
        assert m["requests"] == CELLS and m["replies"] == 0
        assert m["served_models"] == {}
        assert sent_in(m) == sent_by_hand(batch, "openai", "gpt-5-mini")
        assert any("provider's queue" in n for n in m["notes"])

        # collected by a later command (and the judge batch sent), then the judge's collected
        for _ in range(3):
            done = cli("status", "--db", str(db))
            assert done.returncode == 0, done.stderr
        rows = manifests(db)
        assert {r for r, _, _ in rows} == {run_id}  # the rows of the run the results are under
        m = rows[(run_id, "model", "openai/gpt-5-mini")]
        assert m["served_models"] == {"gpt-5-mini-2099-01-01": CELLS}
        assert m["system_fingerprints"] == {"fp_batch7": CELLS}
        assert m["requests"] == m["replies"] == CELLS and m["failed_requests"] == 0
        tokens = query(
            db,
            "SELECT sum(input_tokens), sum(output_tokens) FROM generations "
            "WHERE model = 'openai/gpt-5-mini'",
        )[0]
        assert (m["input_tokens"], m["output_tokens"]) == tokens
        assert m["wall_s"] > 0 and m["items_per_s"] == round(CELLS / m["wall_s"], 3)
        assert sent_in(m) == sent_by_hand(batch, "openai", "gpt-5-mini")

        a = rows[(run_id, "model", "anthropic/claude-haiku-4-5")]
        assert a["replies"] == CELLS and a["system_fingerprints"] == {}
        assert sent_in(a) == sent_by_hand(batch, "anthropic", "claude-haiku-4-5")

        j = rows[(run_id, "judge", "openai/judge-test")]
        assert j["requests"] == j["replies"] == 2 * CELLS
        assert j["served_models"] == {"judge-test-2099-01-01": 2 * CELLS}
        assert sent_in(j) == sent_by_hand(batch, "openai", "judge-test")
        assert j["sent"]["response_format"]["schema"].startswith("sha256:")

        shown = cli("status", "--db", str(db), "--json")
        assert "judge-test-2099-01-01" in shown.stdout
    data = db.read_bytes()
    assert OPENAI_KEY.encode() not in data and ANTHROPIC_KEY.encode() not in data


def test_a_hostile_served_id_in_a_result_line_is_bounded(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    llm = FakeLLMServer(
        reply=reply,
        record=False,
        served_as=lambda asked: "\x1b]0;pwned\x07" + asked,
        fingerprint="fp_" + "x" * 5000,
    )
    with BatchServer(llm=llm) as batch:
        cfg = config(tmp_path / "run.toml", batch, models=["openai/gpt-5-mini"], judges=["lexical"])
        assert cli("run", "--batch", "--config", str(cfg), "--db", str(db)).returncode == 0
        assert cli("status", "--db", str(db)).returncode == 0
    ((_, m),) = [(k, v) for k, v in manifests(db).items() if k[1] == "model"]
    assert m["replies"] == CELLS
    assert m["served_models"] == {}  # a control character: no id (gate.served_id)
    assert m["system_fingerprints"] == {}  # 5,003 characters: no id
    assert b"pwned" not in db.read_bytes()


def test_a_batch_file_and_its_import_have_a_manifest(tmp_path: Path) -> None:
    cfg = write_toml(
        tmp_path / "run.toml",
        {
            "run": {"models": ["eng/m1"], "judges": ["lexical"]},
            "providers.eng": {"base_url": "http://127.0.0.1:9/v1"},  # never contacted
        },
    )
    db, batch, out = tmp_path / "r.db", tmp_path / "batch.jsonl", tmp_path / "out.jsonl"
    args = ["--config", cfg, "--claims", ",".join(CLAIMS), "--templates", ",".join(TEMPLATES)]
    p = run_cli("run", *args, "--db", db, "--batch-file", batch, "--no-progress", "--no-report")
    assert p.returncode == 0, p.stdout + p.stderr
    requests = [json.loads(x) for x in batch.read_text().splitlines()]
    ((run_id, _, _), m), *_ = manifests(db).items()
    assert m["requests"] == len(requests) == CELLS and m["replies"] == 0
    by_hand: dict[str, set[str]] = {}
    for r in requests:
        for key, value in r["body"].items():
            if key != "messages":
                by_hand.setdefault(key, set()).add(json.dumps(value, sort_keys=True))
    assert sent_in(m) == by_hand

    lines = []
    for n, r in enumerate(requests):
        body = {
            "id": f"cmpl-{n}",
            "object": "chat.completion",
            "created": 0,
            "model": "m1-served-by-engine",
            "system_fingerprint": "fp_engine",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": f"no {n}"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 20, "completion_tokens": 3 + n, "total_tokens": 23 + n},
        }
        response = {"status_code": 200, "request_id": f"r{n}", "body": body}
        lines.append(json.dumps({"id": f"b{n}", "custom_id": r["custom_id"], "response": response}))
    out.write_text("\n".join(lines) + "\n")
    # the replies name another id than the lines carried: taken only when accepted
    accept = ("--accept-model", "m1-served-by-engine")
    p = run_cli("import-batch", out, "--config", cfg, "--db", db, *accept)
    assert p.returncode == 0, p.stdout + p.stderr
    m = manifests(db)[(run_id, "model", "eng/m1")]
    assert m["served_models"] == {"m1-served-by-engine": CELLS}
    assert m["system_fingerprints"] == {"fp_engine": CELLS}
    assert m["replies"] == CELLS and m["input_tokens"] == 20 * CELLS
    assert m["output_tokens"] == sum(3 + n for n in range(CELLS))
    assert sent_in(m) == by_hand


def test_judge_by_batch_has_a_run_and_a_manifest_of_its_own(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    llm = FakeLLMServer(reply=reply, record=False, served_as=served, fingerprint="fp_j")
    with BatchServer(llm=llm) as batch, FakeLLMServer(reply=reply) as engine:
        cfg = write_toml(
            tmp_path / "run.toml",
            {
                "run": {"models": ["srv/m1"], "judges": ["lexical"], "claims": CLAIMS},
                "providers.openai": {"base_url": batch.openai_base_url},
                "providers.srv": {"base_url": engine.openai_base_url},
            },
        )
        args = ["--templates", ",".join(TEMPLATES), "--config", str(cfg), "--db", str(db)]
        assert cli("run", *args).returncode == 0
        judge = ["judge", "--batch", "--judge", "openai/judge-test", "--config", str(cfg)]
        first = cli(*judge, "--db", str(db), "--no-progress")
        assert first.returncode in (0, 5), first.stderr
        runs = dict(query(db, "SELECT run_id, command FROM runs"))
        rows = manifests(db)
        (mine,) = [
            r
            for r, role, _ in rows
            if role == "judge"
            and runs[r] == "judge"
            and rows[(r, "judge", "openai/judge-test")]["requests"]
        ]
        j = rows[(mine, "judge", "openai/judge-test")]
        assert j["requests"] == CELLS and j["replies"] == 0
        assert sent_in(j) == sent_by_hand(batch, "openai", "judge-test")

        # the next judge --batch collects them first: recorded in its own run's row
        again = cli(*judge, "--db", str(db), "--no-progress")
        assert again.returncode == 0, again.stderr
        rows = manifests(db)
        (got,) = [
            m
            for (r, role, name), m in rows.items()
            if name == "openai/judge-test" and m.get("replies")
        ]
        assert got["served_models"] == {"judge-test-2099-01-01": CELLS}
        assert got["system_fingerprints"] == {"fp_j": CELLS}
    assert OPENAI_KEY.encode() not in db.read_bytes()


def test_a_later_run_that_collects_has_the_rows_with_what_was_sent(tmp_path: Path) -> None:
    """``run --batch`` again collects the first run's batch: its results are stored under the
    second run, whose row names the served ids and the first run's sent parameters."""
    db = tmp_path / "r.db"
    llm = FakeLLMServer(reply=reply, record=False, served_as=served, fingerprint="fp_2")
    with BatchServer(llm=llm) as batch:
        cfg = config(tmp_path / "run.toml", batch, models=["openai/gpt-5-mini"], judges=["lexical"])
        assert cli("run", "--batch", "--config", str(cfg), "--db", str(db)).returncode == 0
        again = cli("run", "--batch", "--config", str(cfg), "--db", str(db))
        assert again.returncode == 0, again.stderr
        by_hand = sent_by_hand(batch, "openai", "gpt-5-mini")
    (stored,) = {r for (r,) in query(db, "SELECT DISTINCT run_id FROM generations")}
    first, second = (r for (r,) in query(db, "SELECT run_id FROM runs ORDER BY created_at"))
    assert stored == second  # the collecting run's
    m = manifests(db)[(second, "model", "openai/gpt-5-mini")]
    assert m["served_models"] == {"gpt-5-mini-2099-01-01": CELLS}
    assert m["replies"] == CELLS and m["requests"] == 0  # it sent no line itself
    assert m["batch"]["submitted_by"] == [first]
    assert sent_in(m) == by_hand
    assert sent_in(manifests(db)[(first, "model", "openai/gpt-5-mini")]) == by_hand
