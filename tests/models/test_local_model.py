"""The embedded model: a real generation through llama.cpp with the bundled SmolLM2 (no mock)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from deflectbench.models.base import GenerationParams, Message
from deflectbench.models.registry import get_model

pytestmark = pytest.mark.llama


@pytest.fixture(scope="module")
def smollm2():
    model = get_model("local/smollm2")
    yield model
    asyncio.run(model.aclose())


def complete(model, text: str, **params):
    async def go():
        return await model.complete([Message("user", text)], GenerationParams(**params))

    return asyncio.run(go())


def test_real_generation_with_usage(smollm2):
    out = complete(smollm2, "Name a colour.", temperature=1.0, max_tokens=8, seed=1)
    assert isinstance(out.text, str) and out.text.strip()
    # llama-cpp-python may count one extra token when a multi-byte character is cut at the cap
    assert 0 < out.usage.output_tokens <= 10
    assert out.usage.input_tokens > 5  # the chat template's system turn plus the question
    assert out.finish_reason in ("stop", "length")
    assert out.latency_s > 0


def test_same_seed_same_text_other_seed_differs(smollm2):
    a = complete(
        smollm2, "Write one sentence about rivers.", temperature=1.0, max_tokens=24, seed=11
    )
    b = complete(
        smollm2, "Write one sentence about rivers.", temperature=1.0, max_tokens=24, seed=11
    )
    assert a.text == b.text
    others = {
        complete(
            smollm2, "Write one sentence about rivers.", temperature=1.0, max_tokens=24, seed=s
        ).text
        for s in (12, 13, 14)
    }
    assert others - {a.text}


def test_default_max_tokens_is_256():
    assert get_model("local/smollm2").default_max_tokens == 256


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "deflectbench", *args]


def count_rows(db) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT count(*) FROM generations").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


def test_run_end_to_end_then_rerun_adds_nothing(tmp_path):
    db = tmp_path / "r.db"
    args = [
        "run",
        "--claims",
        "L1_US_01,L4_INT_15",
        "--templates",
        "explicit_direct_WA,explicit_coach_AH",
        "--max-tokens",
        "12",
        "--db",
        str(db),
        "--no-progress",
    ]
    p = subprocess.run(cli(*args), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "local/smollm2: 4 generated, 0 already stored, 0 errors" in p.stdout
    assert "judge lexical: 4 judged" in p.stdout
    assert "outcome by framing" in p.stdout and "coach" in p.stdout
    st = json.loads(
        subprocess.run(
            cli("status", "--json", "--db", str(db)), capture_output=True, text=True
        ).stdout
    )
    model = st["models"]["local/smollm2"]
    assert {k: model[k] for k in ("planned", "ok", "errors")} == {
        "planned": 4,
        "ok": 4,
        "errors": 0,
    }
    assert model["non_answers"] == {} and list(model["conditions"]) == ["temp1-max12-seed0"]
    assert st["judges"] == {"lexical": {"judged": 4, "parse_errors": 0, "errors": 0}}
    assert st["spent_usd"] == 0.0
    # The re-run adds nothing; the first run wrote the report already.
    p = subprocess.run(cli(*args, "--no-report"), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "local/smollm2: 0 generated, 4 already stored, 0 errors" in p.stdout
    assert "judge lexical: 0 judged" in p.stdout
    assert count_rows(db) == 4
    conn = sqlite3.connect(db)
    (cfg,) = conn.execute("SELECT config_json FROM runs ORDER BY created_at LIMIT 1").fetchone()
    conn.close()
    cfg = json.loads(cfg)
    assert cfg["max_tokens"] == 12 and cfg["model_defaults"]["local/smollm2"]["max_tokens"] == 256


def test_ctrl_c_stops_cleanly_and_rerun_resumes(tmp_path):
    db = tmp_path / "r.db"
    # No report: this test is about stopping and resuming (tests/report covers the report).
    args = ["run", "--claims", "L2_US_05", "--max-tokens", "16", "--db", str(db), "--no-progress"]
    args.append("--no-report")
    proc = subprocess.Popen(cli(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while count_rows(db) < 2 and time.time() < deadline:
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, errtext = proc.communicate(timeout=120)
    assert proc.returncode == 130, errtext
    assert "Traceback" not in errtext
    kept = count_rows(db)
    assert 2 <= kept < 15
    p = subprocess.run(cli(*args), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert f"local/smollm2: {15 - kept} generated, {kept} already stored, 0 errors" in p.stdout
    assert count_rows(db) == 15


@pytest.mark.skipif(os.name != "posix", reason="signals")
def test_sigkill_mid_run_loses_nothing_stored(tmp_path):
    db = tmp_path / "r.db"
    args = ["run", "--claims", "L3_US_01", "--max-tokens", "16", "--db", str(db), "--no-progress"]
    args.append("--no-report")
    proc = subprocess.Popen(cli(*args), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while count_rows(db) < 3 and time.time() < deadline:
        time.sleep(0.1)
    proc.kill()
    proc.wait()
    kept = count_rows(db)
    p = subprocess.run(cli(*args), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert f"{15 - kept} generated, {kept} already stored" in p.stdout
    assert count_rows(db) == 15
