"""The multi-turn pack end to end on the bundled model (SmolLM2 through llama.cpp, no mock) with
the lexical judge, through the command line: turn 2 follows exactly the turn-1 outcomes that
call for one, carries the conversation, is judged, and a second run adds nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from deflectbench.benchmark.packs import load_pack
from deflectbench.vocab import FIELDS, outcome
from support.cli_runs import Cli
from support.cli_runs import query as rows

pytestmark = [pytest.mark.llama, pytest.mark.slow]

PACK = "deflectbench-v1-multiturn"
#: SmolLM2 labels its deflection on the first (seeded, so every time) and not on the second.
ARGS = [
    "--benchmark",
    PACK,
    "--model",
    "local/smollm2",
    "--judge",
    "lexical",
    "--claims",
    "L1_US_01",
    "--templates",
    "explicit_direct_WA,implicit_neutral",
    "--runs",
    "1",
    "--max-tokens",
    "128",
    "--no-progress",
    "--no-report",
]


#: The entry point, its tables wide; a run on the bundled model takes minutes.
_cli = Cli(env={"COLUMNS": "200"}, timeout=1800)


def cli(db: Path) -> subprocess.CompletedProcess:
    return _cli("run", "--db", str(db), *ARGS)


def test_a_small_multi_turn_run_on_the_local_model(tmp_path) -> None:
    db = tmp_path / "mt.db"
    p = cli(db)
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert "complete:" in p.stdout and "+ turn 2:" in p.stdout
    pack = load_pack(PACK)

    # Turn 2 exactly where the lexical verdict on turn 1 has a follow-up.
    turn1 = rows(
        db,
        f"SELECT g.gen_id, g.claim_id, g.prompt_id, {', '.join('j.' + f for f in FIELDS)} "
        "FROM generations g JOIN judgments j ON j.gen_id = g.gen_id "
        "WHERE g.prompt_id NOT LIKE '%#turn2'",
    )
    assert len(turn1) == 2
    due = {}
    for gen_id, claim, pid, *values in turn1:
        after = outcome(dict(zip(FIELDS, values, strict=True)))
        if pack.followup_for(after) is not None:
            due[gen_id] = (claim, pid, after)
    assert due, "SmolLM2's seeded reply to the first cell is a labeled deflection"
    links = rows(
        db,
        "SELECT t.parent_gen_id, t.after_outcome, t.followup_id, g.prompt, g.prompt_id, "
        "g.response IS NOT NULL FROM turns t JOIN generations g ON g.gen_id = t.gen_id",
    )
    assert {r[0] for r in links} == set(due)
    for parent, after, followup_id, prompt, pid, answered in links:
        claim, base, expected = due[parent]
        followup = pack.followup_for(expected)
        assert (after, followup_id, pid) == (expected, followup.followup_id, f"{base}#turn2")
        assert prompt == pack.render_followup(followup, claim, base) and answered
    # every answer, turn 2 included, has its lexical verdict
    ((gens, judged),) = rows(
        db,
        "SELECT (SELECT count(*) FROM generations WHERE error IS NULL), "
        "(SELECT count(*) FROM judgments WHERE judge = 'lexical')",
    )
    assert gens == judged == 2 + len(due)

    # A second run asks for nothing more.
    before = rows(db, "SELECT count(*) FROM generations")
    p = cli(db)
    assert p.returncode == 0, p.stderr
    assert rows(db, "SELECT count(*) FROM generations") == before

    # analyze shows the turn-2 tables
    a = subprocess.run(
        [sys.executable, "-m", "deflectbench", "analyze", "--db", str(db), "--json", "-"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert a.returncode == 0, a.stderr
    turns = json.loads(a.stdout)["turns"]
    assert turns["counts"]["scored"] == len(due)
