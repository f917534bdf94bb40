"""The multi-turn pack in batch mode, end to end through the entry point: turn 1 of an
``openai/`` model goes out in a batch and is judged by a batch judge (both against the batch
emulator); ``status`` then never says "done" while turn-2 cells are due and unsent: one line
per model and exit 5 (``--json`` carries the counts). The next ``run --batch`` sends turn 2 by
ordinary requests, ``status`` has the batch judge judge those replies, and then exits 0.
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from deflectbench.benchmark.packs import load_pack
from deflectbench.vocab import FIELDS
from support.batch_servers import BatchServer
from support.fakes import is_judge_request
from support.servers import RecordedRequest

PACK = "deflectbench-v1-multiturn"
MODEL = "openai/gpt-5-mini"
JUDGE = "openai/judge-test"
CLAIMS = ["L1_US_01", "L2_INT_03"]
#: Turn-1 reply by template: a refusal, a labeled deflection, a clean one (no follow-up).
TEMPLATES = {
    "explicit_direct_WA": "REFUSE: I will not write that.",
    "explicit_coach_AH": "LABELED: this is an ad hominem: who is Jordan to talk?",
    "implicit_neutral": "CLEAN: but what about the other side's record?",
}
VERDICTS = {
    "REFUSE": {"refusal": 1},
    "LABELED": {"AH_present": 1, "any_fallacy_present": 1, "fallacy_labeled": 1},
    "CLEAN": {"WA_present": 1, "any_fallacy_present": 1, "compliance_clean": 1},
}
TURN1 = len(CLAIMS) * len(TEMPLATES)
#: The refusals and the labeled deflections call for a turn 2; the clean ones do not.
DUE = len(CLAIMS) * 2
ENV = dict(
    os.environ,
    OPENAI_API_KEY="sk-batchturns-0123456789abcdef",
    DEFLECTBENCH_BATCH_POLL_S="0.2",
)
LINE = (
    f"{MODEL}: {DUE} turn-2 cells due, not sent yet: run the same `deflectbench run --batch "
    "...` again (turn 2 goes by ordinary requests)"
)
_replies = itertools.count()
_rendered: dict[str, str] = {}


def reply(req: RecordedRequest) -> str:
    """A judge reads the reply's kind; turn 1 answers by template; a pushback gets a labeled
    deflection, the request to strip the label a clean one. Each reply unique (no cache hits)."""
    if is_judge_request(req):
        kind = next(k for k in VERDICTS if k in req.prompt)
        return json.dumps({"reasoning": kind, **{f: VERDICTS[kind].get(f, 0) for f in FIELDS}})
    messages = req.body["messages"]
    if len(messages) == 1:
        text = TEMPLATES[_template_of(req.prompt)]
    else:
        kind = "explicit_coach_AH" if "educational" in req.prompt else "implicit_neutral"
        text = TEMPLATES[kind]
    return f"{text} ({next(_replies)})"


def _template_of(prompt: str) -> str:
    if not _rendered:
        b = load_pack(PACK)
        _rendered.update({b.render(c, p): p for c in CLAIMS for p in TEMPLATES})
    return _rendered[prompt]


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    extra = ["--no-progress", "--no-report"] if args[0] == "run" else []
    cmd = [sys.executable, "-m", "deflectbench", *map(str, args), *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=ENV)


def rows(db: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def turn2_rows(db: Path) -> int:
    return rows(db, "SELECT count(*) FROM generations WHERE prompt_id LIKE '%#turn2'")[0][0]


def test_status_says_turn_2_is_due_until_a_run_sends_it_then_completes(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    cfg = tmp_path / "run.toml"
    with BatchServer(reply=reply) as batch:
        run = {"benchmark": PACK, "models": [MODEL], "judges": [JUDGE], "claims": CLAIMS}
        run |= {"templates": list(TEMPLATES), "runs": 1}
        lines = ["[run]", *(f"{k} = {json.dumps(v)}" for k, v in run.items())]
        lines += ["[providers.openai]", f'base_url = "{batch.openai_base_url}"']
        cfg.write_text("\n".join(lines) + "\n")
        direct = "POST /v1/chat/completions"

        first = cli("run", "--batch", "--config", cfg, "--db", db)
        assert first.returncode == 0, first.stderr
        assert "submitted 1 batches" in first.stderr

        due = cli("status", "--wait", "--db", db)  # turn 1 collected and judged: turn 2 due
        assert due.returncode == 5, due.stderr
        assert rows(db, "SELECT judge, count(*) FROM judgments GROUP BY 1") == [(JUDGE, TURN1)]
        assert [x for x in due.stderr.splitlines() if "turn-2" in x] == [LINE]
        assert "Traceback" not in due.stderr
        assert turn2_rows(db) == 0 and batch.http_requests[direct] == 0

        shown = cli("status", "--json", "--db", db)  # says it again, with the counts
        assert shown.returncode == 5, shown.stderr
        [turn2] = json.loads(shown.stdout)["turn2"]
        assert turn2["model"] == MODEL and (turn2["due"], turn2["not_sent"]) == (DUE, DUE)
        assert turn2["benchmark"] == load_pack(PACK).key

        again = cli("run", "--batch", "--config", cfg, "--db", db)  # turn 2, ordinary requests
        # the batch judge takes the turn-2 replies in a batch this run sends (as for turn 1)
        assert again.returncode == 0, again.stderr
        assert f"submitted 1 batches ({DUE} {JUDGE})" in again.stderr, again.stderr
        assert "Traceback" not in again.stderr
        assert turn2_rows(db) == DUE and batch.http_requests[direct] == DUE
        assert rows(db, "SELECT count(*) FROM turns") == [(DUE,)]
        kinds = rows(db, "SELECT kind, count(*) FROM batches GROUP BY 1")
        assert kinds == [("generation", 1), ("judgment", 2)]  # turn 2's replies: a judge batch

        done = cli("status", "--wait", "--db", db)  # the batch judge takes the turn-2 replies
        assert done.returncode == 0, done.stderr
        assert "turn-2" not in done.stderr
        assert rows(db, "SELECT count(*) FROM judgments WHERE error IS NULL") == [(TURN1 + DUE,)]
        assert rows(db, "SELECT count(*) FROM generations") == [(TURN1 + DUE,)]
        assert batch.twice() == [] and batch.http_requests[direct] == DUE
        [turn2] = json.loads(cli("status", "--json", "--db", db).stdout)["turn2"]
        assert (turn2["due"], turn2["not_sent"]) == (DUE, 0)
