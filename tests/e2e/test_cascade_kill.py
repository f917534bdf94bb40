"""Cascaded judging end to end: answers judged by the lexical judge (cheap) on all and two model
judges (expensive, both wires of a local server) on a seeded 30% sample, killed twice and
resumed: every sampled answer judged exactly once by each expensive judge, no other answer
sent to them, the same verdict rows as one uninterrupted judging, and ``analyze`` reporting
the cascade (estimand, calls per judge, PPI++ estimates)."""

from __future__ import annotations

import collections
import hashlib
import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from support.cli_runs import DEFLECTBENCH, QUIET_RUN, rows, signal_when, write_toml
from support.fakes import VERDICT, is_judge_request
from support.servers import FakeLLMServer, RecordedRequest

MODELS = ["srva/m1", "srvb/m2"]
EXPENSIVE = ["srva/j1", "srvb/j2"]
CLAIMS = ["L1_US_01", "L2_INT_03", "L3_US_01", "L4_INT_15", "L1_INT_01", "L2_US_02"]
TEMPLATES = ["explicit_direct_WA", "explicit_coach_AH", "implicit_neutral", "explicit_choose_any"]
SAMPLES = 2
SHARE, SEED = 0.3, 5
CONCURRENCY = 2


def reply(req: RecordedRequest) -> str:
    if is_judge_request(req):
        return json.dumps(VERDICT)
    return (
        f"I cannot help with that, but what about them? ({len(req.prompt)}, {req.body.get('seed')})"
    )


def _config(path: Path, server: FakeLLMServer) -> Path:
    run = {"models": MODELS, "judges": ["lexical"], "claims": CLAIMS, "templates": TEMPLATES}
    return write_toml(
        path,
        {
            "run": {**run, "samples": SAMPLES},
            "providers.srva": {"base_url": server.openai_base_url, "max_concurrency": CONCURRENCY},
            "providers.srvb": {
                "wire": "anthropic",
                "base_url": server.anthropic_base_url,
                "max_concurrency": CONCURRENCY,
            },
        },
    )


def _sampled(db: Path) -> set[int]:
    """The sample, drawn here plainly: u = first 8 bytes of sha256("seed\\x1fkey") / 2^64 < share,
    the key the answer's cell (benchmark, model, condition, claim, template, sample)."""
    out = set()
    for gen_id, *cell in rows(
        db,
        "SELECT gen_id, benchmark, model, condition, claim_id, prompt_id, sample FROM generations",
    ):
        key = "\x1f".join(str(x) for x in cell)
        u = int.from_bytes(hashlib.sha256(f"{SEED}\x1f{key}".encode()).digest()[:8], "big")
        if u / 2.0**64 < SHARE:
            out.add(gen_id)
    return out


def _verdicts(db: Path) -> set[tuple[int, str]]:
    return {(g, j) for g, j in rows(db, "SELECT gen_id, judge FROM judgments WHERE error IS NULL")}


@pytest.mark.slow
def test_cascade_killed_twice_then_resumed(tmp_path: Path) -> None:
    rng = random.Random(35)
    db, fresh = tmp_path / "r.db", tmp_path / "fresh.db"
    with FakeLLMServer(reply=reply, latency=0.05) as server:
        cfg = _config(tmp_path / "run.toml", server)
        made = subprocess.run(
            [*DEFLECTBENCH, "run", "--db", str(db), "--config", str(cfg), *QUIET_RUN],
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert made.returncode == 0, (made.stdout, made.stderr)
        shutil.copy(db, fresh)
        before = len(server.requests)
        judge = [*DEFLECTBENCH, "judge", "--config", str(cfg), "--no-progress"]
        judge += ["--judge", EXPENSIVE[0], "--judge", EXPENSIVE[1], "--cheap-judge", "lexical"]
        judge += ["--expensive-share", str(SHARE), "--seed", str(SEED)]
        kills = 0
        for _ in range(2):
            target = len(server.requests) + rng.randint(4, 12)
            signal_when(
                [*judge, "--db", str(db)],
                lambda target=target: len(server.requests) >= target,
                pause=lambda: rng.uniform(0.0, 0.1),
            )
            kills += 1
        done = subprocess.run(
            [*judge, "--db", str(db)], capture_output=True, text=True, timeout=240
        )
        sent = [r for r in server.requests[before:] if isinstance(r.body, dict)]
        once = subprocess.run(
            [*judge, "--db", str(fresh)], capture_output=True, text=True, timeout=240
        )
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert once.returncode == 0, (once.stdout, once.stderr)
    sample = _sampled(db)
    answers = {g for (g,) in rows(db, "SELECT gen_id FROM generations")}
    assert 0 < len(sample) < len(answers)
    verdicts = _verdicts(db)
    for j in EXPENSIVE:
        assert {g for g, jj in verdicts if jj == j} == sample, j  # the sample, all of it, only
    assert {g for g, jj in verdicts if jj == "lexical"} == answers
    # a verdict per (answer, judge) is a unique row; and nothing beyond the sample was asked:
    # repeats are only the requests in flight at a kill (at most the limit, per kill)
    asked = collections.Counter(r.body.get("model") for r in sent if is_judge_request(r))
    for name in ("j1", "j2"):
        assert asked[name] <= len(sample) + kills * CONCURRENCY, (name, asked)
    # killed and resumed: the same rows as one uninterrupted judging of the same answers
    assert verdicts == _verdicts(fresh)
    print(
        f"cascade kill/resume: {len(answers)} answers, {len(sample)} sampled, {kills} kills, "
        f"requests per judge {dict(asked)}"
    )

    out = tmp_path / "a.json"
    analyzed = subprocess.run(
        [*DEFLECTBENCH, "analyze", "--db", str(db), "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert analyzed.returncode == 0, analyzed.stderr
    cascade = json.loads(out.read_text())["cascade"]
    assert cascade["design"]["expensive_judges"] == EXPENSIVE
    assert cascade["sampled"] == len(sample) and cascade["answers"] == len(answers)
    assert cascade["calls"]["lexical"] == len(answers)
    assert cascade["calls"]["srva/j1"] == len(sample)
    assert "consensus" in cascade["estimand"]
    one = cascade["by_model"][0]["measures"]["outcome:refusal"]
    assert set(one) == {"cheap", "sample", "cascaded"}


@pytest.mark.slow
def test_a_cascaded_run_killed_then_resumed_ends_as_one_uninterrupted(tmp_path: Path) -> None:
    """``run`` with the cascade in the run file ([run] cheap_judge, expensive_share): the run
    judges with lexical as it generates, then the judges see the sample; killed once during
    the judges' pass and resumed, it ends with the rows of one uninterrupted run."""
    db, once = tmp_path / "r.db", tmp_path / "once.db"
    with FakeLLMServer(reply=reply, latency=0.05) as server:
        cfg = _config(tmp_path / "run.toml", server)
        text = cfg.read_text().replace(
            'judges = ["lexical"]',
            f'judges = {json.dumps(EXPENSIVE)}\ncheap_judge = "lexical"\n'
            f"expensive_share = {SHARE}\nseed = {SEED}",
        )
        cfg.write_text(text)
        args = [*DEFLECTBENCH, "run", "--config", str(cfg), *QUIET_RUN]
        judge_requests = lambda: sum(1 for r in server.requests if is_judge_request(r))  # noqa: E731
        signal_when([*args, "--db", str(db)], lambda: judge_requests() >= 6)
        p = subprocess.run([*args, "--db", str(db)], capture_output=True, text=True, timeout=240)
        q = subprocess.run([*args, "--db", str(once)], capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert q.returncode == 0, (q.stdout, q.stderr)
    assert "cascade: complete" in p.stdout, p.stdout
    sample = _sampled(db)
    verdicts = _verdicts(db)
    for j in EXPENSIVE:
        assert {g for g, jj in verdicts if jj == j} == sample, j
    cells = "SELECT model, claim_id, prompt_id, sample FROM generations ORDER BY 1, 2, 3, 4"
    assert rows(db, cells) == rows(once, cells)
    keyed = (
        "SELECT g.model, g.claim_id, g.prompt_id, g.sample, j.judge FROM judgments j "
        "JOIN generations g USING (gen_id) WHERE j.error IS NULL ORDER BY 1, 2, 3, 4, 5"
    )
    assert rows(db, keyed) == rows(once, keyed)
