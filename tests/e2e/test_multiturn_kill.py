"""A multi-turn run killed (SIGKILL) at random moments, in turn 1, between the turns and in turn
2, then resumed: every turn-2 cell is stored exactly once, linked to its turn-1 generation,
and judged once. Through the entry point against the local wire-format server."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from support.cli_runs import DEFLECTBENCH, count, rows, signal_when, write_toml
from support.replies import TEMPLATES
from support.replies import TURN_CLAIMS as CLAIMS
from support.replies import TURN_JUDGE as JUDGE
from support.replies import turn_reply as reply
from support.servers import FakeLLMServer

CLAIMS_HERE = [*CLAIMS, "L3_US_01", "L4_INT_15"]
SAMPLES = 2


def write_config(path: Path, server: FakeLLMServer) -> Path:
    run = {"models": ["vllm/test-model"], "judges": [JUDGE], "claims": CLAIMS_HERE}
    section = {"base_url": server.openai_base_url, "max_concurrency": 2}
    return write_toml(
        path,
        {
            "run": {**run, "templates": list(TEMPLATES), "runs": SAMPLES},
            "providers.vllm": section,
            "providers.openai": section,
        },
    )


@pytest.mark.slow
def test_sigkill_in_and_between_the_turns_then_resume(tmp_path) -> None:
    rng = random.Random(14)
    db = tmp_path / "r.db"
    turn1 = len(CLAIMS_HERE) * len(TEMPLATES) * SAMPLES
    due = turn1 * 2 // 3  # the refusals and the labeled replies get a follow-up
    env = dict(os.environ, OPENAI_API_KEY="sk-test-key")
    with FakeLLMServer(reply=reply, latency=0.04) as server:
        cfg = write_config(tmp_path / "run.toml", server)
        args = [*DEFLECTBENCH, "run", "--db", str(db), "--no-progress"]
        args += ["--benchmark", "deflectbench-v1-multiturn", "--config", str(cfg), "--no-report"]
        killed_in_turn2 = False
        # kill once in turn 1, then twice once turn 2 has begun
        for goal in ("turn1", "turn2", "turn2"):
            before = len(server.requests)
            turns_before = count(db, "SELECT count(*) FROM turns")

            def ready(
                goal: str = goal, before: int = before, turns_before: int = turns_before
            ) -> bool:
                if goal == "turn1":
                    return len(server.requests) >= before + rng.randint(4, 12)
                return count(db, "SELECT count(*) FROM turns") > turns_before

            signal_when(
                args,
                ready,
                wait_s=120,
                poll_s=0.005,
                pause=lambda: rng.uniform(0.0, 0.1),
                env=env,
            )
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
