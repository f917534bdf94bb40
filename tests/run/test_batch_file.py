"""``run --batch-file`` and ``import-batch``: a round trip through a tiny local runner that
answers OpenAI batch JSONL as an engine does (vLLM's run_batch), with an error line, a
non-answer and a missing result; each cell once, whatever is imported twice."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from deflectbench.store import Store
from support.cli_runs import write_toml
from support.in_process import run_cli

CLAIMS = "L1_US_01,L2_INT_02"
TEMPLATES = "explicit_direct_WA,explicit_coach_AH,implicit_neutral"


def runner(batch: Path, out: Path, *, error: str, length: str, missing: str) -> None:
    """Answer every line of ``batch`` into ``out`` like an offline engine: one output line per
    request (a 500 for ``error``, a cut-off reply for ``length``, nothing for ``missing``)."""
    lines = []
    for n, raw in enumerate(batch.read_text().splitlines()):
        req = json.loads(raw)
        cid, body = req["custom_id"], req["body"]
        if cid == missing:
            continue
        if cid == error:
            response = {"status_code": 500, "body": {"error": {"message": "engine fell over"}}}
        else:
            text = "But what about their record? " + body["messages"][-1]["content"][-20:]
            response = {
                "status_code": 200,
                "request_id": f"r{n}",
                "body": {
                    "id": f"cmpl-{n}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "length" if cid == length else "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29},
                },
            }
        lines.append(json.dumps({"id": f"b{n}", "custom_id": cid, "response": response}))
    out.write_text("\n".join(lines) + "\n")


def test_a_batch_file_round_trip(tmp_path: Path) -> None:
    cfg = write_toml(
        tmp_path / "run.toml",
        {
            "run": {"models": ["eng/m1"], "judges": ["lexical"]},
            "providers.eng": {"base_url": "http://127.0.0.1:9/v1"},  # never contacted
        },
    )
    db, batch = tmp_path / "r.db", tmp_path / "batch.jsonl"
    args = ["--config", cfg, "--claims", CLAIMS, "--templates", TEMPLATES, "--db", db]
    p = run_cli("run", *args, "--batch-file", batch, "--no-progress", "--no-report")
    assert p.returncode == 0, p.stdout + p.stderr
    requests = [json.loads(x) for x in batch.read_text().splitlines()]
    assert len(requests) == 6
    ids = [r["custom_id"] for r in requests]
    assert len(set(ids)) == 6 and all(i.startswith("g-") for i in ids)
    assert {r["url"] for r in requests} == {"/v1/chat/completions"}
    assert {r["body"]["model"] for r in requests} == {"m1"}
    assert all(r["body"]["max_tokens"] and r["body"]["messages"] for r in requests)
    con = sqlite3.connect(db)
    # stored as submitted before written, and nothing generated yet
    assert con.execute("SELECT count(*) FROM batch_items WHERE state = 'open'").fetchone() == (6,)
    assert con.execute("SELECT count(*) FROM generations").fetchone() == (0,)

    # the file lost: written again, the same cells under the same ids, nothing stored twice
    again = tmp_path / "again.jsonl"
    p = run_cli("run", *args, "--batch-file", again, "--no-progress", "--no-report")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "6 written before and not imported yet" in p.stdout
    rewritten = [json.loads(x) for x in again.read_text().splitlines()]
    assert sorted(rewritten, key=lambda r: r["custom_id"]) == sorted(
        requests, key=lambda r: r["custom_id"]
    )
    assert con.execute("SELECT count(*) FROM batch_items").fetchone() == (6,)

    results = tmp_path / "results.jsonl"
    runner(batch, results, error=ids[1], length=ids[2], missing=ids[3])
    p = run_cli("import-batch", results, "--config", cfg, "--db", db)
    assert p.returncode == 0, p.stdout + p.stderr
    rows = {
        r[0]: r[1:]
        for r in con.execute(
            "SELECT claim_id || '/' || prompt_id, response IS NOT NULL, error, finish_reason "
            "FROM generations"
        )
    }
    assert len(rows) == 6  # every cell once: answered, cut off, or an error row
    errors = [r[1] for r in rows.values() if r[1] is not None]
    assert len(errors) == 2
    assert any("HTTP 500" in e and "engine fell over" in e for e in errors)
    assert any("no readable result line" in e for e in errors)
    assert sorted(r[2] or "" for r in rows.values() if r[0]) == ["length", "stop", "stop", "stop"]
    # the lexical judge (the run's) judged every answer as it was imported
    with Store.open(db, readonly=True) as store:
        assert store.pending_judgments("lexical") == []
    assert con.execute("SELECT count(*) FROM judgments").fetchone() == (4,)
    assert con.execute("SELECT count(*) FROM batch_items WHERE state = 'open'").fetchone() == (0,)

    p = run_cli("import-batch", results, "--config", cfg, "--db", db)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "5 duplicates" in p.stdout
    assert con.execute("SELECT count(*) FROM generations").fetchone() == (6,)

    # the failed cells go again with --retry-errors, the answered ones never
    retry = tmp_path / "retry.jsonl"
    p = run_cli(
        "run", *args, "--batch-file", retry, "--retry-errors", "--no-progress", "--no-report"
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert sorted(json.loads(x)["custom_id"] for x in retry.read_text().splitlines()) == sorted(
        [ids[1], ids[3]]
    )


def test_batch_file_refusals_are_one_line(tmp_path: Path) -> None:
    cfg = write_toml(
        tmp_path / "run.toml",
        {"run": {"models": ["eng/m1", "eng/m2"]}, "providers.eng": {"base_url": "http://x/v1"}},
    )
    p = run_cli(
        "run",
        "--config",
        cfg,
        "--batch-file",
        tmp_path / "b.jsonl",
        "--db",
        tmp_path / "r.db",
        "--no-progress",
    )
    assert p.returncode == 2 and "--batch-file takes one model" in p.stderr
    assert not (tmp_path / "r.db").exists()
    p = run_cli("import-batch", tmp_path / "nothing.jsonl", "--db", tmp_path / "r.db")
    assert p.returncode == 2
