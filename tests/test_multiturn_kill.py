"""A multi-turn run killed (SIGKILL) at random moments, in turn 1, between the turns and in turn
2, then resumed: every turn-2 cell is stored exactly once, linked to its turn-1 generation,
and judged once. Through the entry point against the local wire-format server."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from support.servers import FakeLLMServer
from test_multiturn import CLAIMS, JUDGE, TEMPLATES, reply

CLAIMS_HERE = [*CLAIMS, "L3_US_01", "L4_INT_15"]
SAMPLES = 2


def write_config(path: Path, server: FakeLLMServer) -> Path:
    lines = [
        "[run]",
        'models = ["vllm/test-model"]',
        f'judges = ["{JUDGE}"]',
        "claims = [" + ", ".join(f'"{c}"' for c in CLAIMS_HERE) + "]",
        "templates = [" + ", ".join(f'"{t}"' for t in TEMPLATES) + "]",
        f"runs = {SAMPLES}",
        "[providers.vllm]",
        f'base_url = "{server.openai_base_url}"',
        "max_concurrency = 2",
        "[providers.openai]",
        f'base_url = "{server.openai_base_url}"',
        "max_concurrency = 2",
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def rows(db: Path, sql: str) -> list[tuple]:
    if not db.exists():
        return []
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        conn.close()


def count(db: Path, sql: str) -> int:
    got = rows(db, sql)
    return int(got[0][0]) if got else 0


def test_sigkill_in_and_between_the_turns_then_resume(tmp_path) -> None:
    rng = random.Random(14)
    db = tmp_path / "r.db"
    turn1 = len(CLAIMS_HERE) * len(TEMPLATES) * SAMPLES
    due = turn1 * 2 // 3  # the refusals and the labeled replies get a follow-up
    env = dict(os.environ, OPENAI_API_KEY="sk-test-key")
    with FakeLLMServer(reply=reply, latency=0.04) as server:
        cfg = write_config(tmp_path / "run.toml", server)
        args = [sys.executable, "-m", "deflectbench", "run", "--db", str(db), "--no-progress"]
        args += ["--benchmark", "deflectbench-v1-multiturn", "--config", str(cfg), "--no-report"]
        killed_in_turn2 = False
        # kill once in turn 1, then twice once turn 2 has begun
        for goal in ("turn1", "turn2", "turn2"):
            proc = subprocess.Popen(
                args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
            )
            before = len(server.requests)
            deadline = time.monotonic() + 120
            turns_before = count(db, "SELECT count(*) FROM turns")
            while time.monotonic() < deadline and proc.poll() is None:
                if goal == "turn1" and len(server.requests) >= before + rng.randint(4, 12):
                    break
                if goal == "turn2" and count(db, "SELECT count(*) FROM turns") > turns_before:
                    break
                time.sleep(0.005)
            time.sleep(rng.uniform(0.0, 0.1))  # a random moment: mid-request, mid-write
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            stored = count(db, "SELECT count(*) FROM turns")
            killed_in_turn2 |= 0 < stored < due
        p = subprocess.run(args, capture_output=True, text=True, timeout=240, env=env)
    assert p.returncode == 0, p.stdout[-1500:]
    assert killed_in_turn2, "no kill landed while turn 2 was half done"

    assert rows(db, "SELECT count(*), count(DISTINCT parent_gen_id) FROM turns") == [(due, due)]
    assert count(db, "SELECT count(*) FROM generations") == turn1 + due
    # every turn-2 row has its link, every link a turn-1 parent of the same cell
    assert (
        count(
            db,
            "SELECT count(*) FROM generations g LEFT JOIN turns t ON t.gen_id = g.gen_id "
            "WHERE g.prompt_id LIKE '%#turn2' AND t.gen_id IS NULL",
        )
        == 0
    )
    assert (
        count(
            db,
            "SELECT count(*) FROM turns t JOIN generations g ON g.gen_id = t.gen_id "
            "JOIN generations p ON p.gen_id = t.parent_gen_id "
            "WHERE g.prompt_id = p.prompt_id || '#turn2' AND g.claim_id = p.claim_id "
            "AND g.sample = p.sample AND g.error IS NULL AND p.error IS NULL",
        )
        == due
    )
    assert rows(
        db, "SELECT count(*), count(DISTINCT gen_id) FROM judgments WHERE error IS NULL"
    ) == [(turn1 + due, turn1 + due)]
    assert rows(db, "PRAGMA integrity_check") == [("ok",)]
