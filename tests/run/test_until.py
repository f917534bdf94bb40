"""``run --until``: a run in rounds that stops at the first look where every model's intervals
reach the target, records its looks, and resumes like any run: a run stopped by ``--until``
and resumed, and a run stopped by a kill and resumed, end with the rows of one uninterrupted
run. Against a local server on the OpenAI wire through the real SDK; the lexical judge."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

import deflectbench as dfb
from deflectbench.analysis.sequential import claim_order, parse_until
from deflectbench.benchmark import default_benchmark
from deflectbench.errors import ConfigError
from support.cli_runs import DEFLECTBENCH, QUIET_RUN, rows, signal_when, write_toml
from support.servers import FakeLLMServer, RecordedRequest

BENCH = default_benchmark()
CLAIMS = [c.claim_id for c in BENCH.claims][:24]
TEMPLATES = ["explicit_direct_WA"]
MODELS = ["srv/m1", "srv/m2"]


def answer(req: RecordedRequest) -> str:
    seed = req.body.get("seed") if isinstance(req.body, dict) else None
    return f"But what about the other side's record? ({len(req.prompt)}, {seed})"


def settings(server: FakeLLMServer, **run: object) -> dict[str, object]:
    return {
        "models": MODELS,
        "judges": ["lexical"],
        "claims": CLAIMS,
        "templates": TEMPLATES,
        "samples": 1,
        "providers": {"srv": {"base_url": server.openai_base_url, "max_concurrency": 4}},
        **run,
    }


def stored(db: Path) -> list[tuple]:
    """What a run leaves, run ids aside: every answer and every verdict."""
    with sqlite3.connect(db) as conn:
        gens = conn.execute(
            "SELECT model, claim_id, prompt_id, sample, response, error FROM generations "
            "ORDER BY model, claim_id, prompt_id, sample"
        ).fetchall()
        verdicts = conn.execute(
            "SELECT g.model, g.claim_id, g.sample, j.judge, j.said_json FROM judgments j "
            "JOIN generations g USING (gen_id) ORDER BY 1, 2, 3, 4"
        ).fetchall()
    return [*gens, *verdicts]


def looks(db: Path) -> list[dict]:
    with sqlite3.connect(db) as conn:
        configs = [
            json.loads(r[0])
            for r in conn.execute("SELECT config_json FROM runs ORDER BY created_at")
        ]
    return [c["extra"]["until"] for c in configs if "until" in c.get("extra", {})]


@pytest.fixture
def server(llm_server):
    return llm_server.reset(reply=answer)


def test_until_stops_at_the_first_look_that_meets_the_target_then_resumes(tmp_path, server):
    db = tmp_path / "r.db"
    rule = "halfwidth<=0.03 in 3 looks"
    result = dfb.run(db=db, until=rule, **settings(server))
    # looks at 8, 16, 24 claims; the lexical judge says the same of every reply, so every
    # interval is a point, but look 1 rests on 8 claims (< 10): the run stops at look 2
    assert result.exit_code == 0, result.account
    assert result.until is not None and result.until.met
    assert result.until.stopped == {"srv/m1": 2, "srv/m2": 2}
    assert [look.claims for look in result.until.looks] == [8, 16]
    assert "target met at look 2 of 3 (16 of 24 claims)" in result.account
    order = claim_order(CLAIMS, [c.level for c in BENCH.claims if c.claim_id in CLAIMS], 0)
    gens = rows(db, "SELECT DISTINCT claim_id FROM generations")
    assert sorted(g[0] for g in gens) == sorted(order[:16])
    assert [(x["look"], x["claims"], x["met"]) for x in looks(db)] == [(1, 8, False), (2, 16, True)]
    levels = parse_until(rule).levels
    assert looks(db)[0]["levels"] == list(levels) and levels[0] == pytest.approx(1 - 0.05 / 3)
    assert result.to_json()["until"]["reason"] == "target met"

    # analyze prints the adjusted intervals and says why
    summary = dfb.analyze(db)
    assert "run --until" in summary.to_json()["sequential"]["note"]
    assert summary.to_json()["sequential"]["levels"] == list(levels)

    # resumed without --until: the rest of the design, no request sent again
    sent = len(server.requests)
    again = dfb.run(db=db, **settings(server))
    assert again.exit_code == 0, again.account
    assert len(server.requests) - sent == 2 * 8  # the 8 claims left, for both models

    # the same rows as one uninterrupted run
    whole = tmp_path / "whole.db"
    assert dfb.run(db=whole, **settings(server)).exit_code == 0
    assert stored(db) == stored(whole)


def mixed(req: RecordedRequest) -> str:
    """A deflection for some claims, a plain answer for the others: rates with a spread."""
    if sum(map(ord, req.prompt)) % 2:
        return "But what about the other side's record? They did worse."
    return "The claim is contested; the evidence on both sides is summarised here."


def test_a_tighter_target_continues_from_the_looks_done(tmp_path, llm_server):
    server = llm_server.reset(reply=mixed)
    db = tmp_path / "r.db"
    first = dfb.run(db=db, until="halfwidth<=0.49 in 3 looks", **settings(server))
    assert first.until is not None and first.until.met, first.account
    assert [look.claims for look in first.until.looks] == [8, 16]
    widest = first.until.looks[-1].widest
    assert widest is not None and 0 < widest.halfwidth <= 0.49
    sent = len(server.requests)
    # a target no look meets: looks 1 and 2 again (nothing to send), then the last round
    again = dfb.run(db=db, until="halfwidth<=0.01 in 3 looks", **settings(server))
    assert len(server.requests) - sent == 2 * 8
    assert again.until is not None and not again.until.met
    assert again.until.reason == "design exhausted" and again.exit_code == 0
    assert "design exhausted at look 3 of 3 (24 of 24 claims)" in again.account
    assert [(x["look"], x["met"]) for x in looks(db)][-1] == (3, False)
    whole = tmp_path / "whole.db"
    assert dfb.run(db=whole, **settings(server)).exit_code == 0
    assert stored(db) == stored(whole)
    # the analysis: each model's answers cover all 24 claims, the last look's: its level
    record = dfb.analyze(db).sequential
    assert record is not None and record.level_for(24) == pytest.approx(1 - 0.05 / 3)


def test_other_looks_than_declared_are_refused(tmp_path, server):
    db = tmp_path / "r.db"
    dfb.run(db=db, until="halfwidth<=0.03 in 3 looks", **settings(server))
    with pytest.raises(ConfigError, match="looks are declared once"):
        dfb.run(db=db, until="halfwidth<=0.03 in 4 looks", **settings(server))
    with pytest.raises(ConfigError, match="another order of claims"):
        dfb.run(db=db, until="halfwidth<=0.03 in 3 looks", **settings(server, seed=5))


@pytest.mark.parametrize(
    ("until", "extra", "match"),
    [
        ("halfwidth<0.03", {}, "cannot read the stopping rule"),
        ("halfwidth<=0.03", {"batch": True}, "--until with --batch"),
        ("halfwidth<=0.03", {"shard": "1/2"}, "--until with --shard"),
    ],
)
def test_refused_before_any_request(tmp_path, server, until, extra, match):
    with pytest.raises(ConfigError, match=match):
        dfb.run(db=tmp_path / "r.db", until=until, **settings(server, **extra))
    assert not server.requests
    assert not (tmp_path / "r.db").exists()


@pytest.mark.slow
def test_a_run_under_until_killed_and_resumed_ends_as_one_uninterrupted_run(tmp_path):
    db = tmp_path / "r.db"
    with FakeLLMServer(reply=answer, latency=0.05) as server:
        run = settings(server, until="halfwidth<=0.03 in 3 looks")
        providers = run.pop("providers")
        cfg = write_toml(
            tmp_path / "run.toml",
            {"run": run, "providers.srv": providers["srv"]},  # type: ignore[index]
        )
        args = [*DEFLECTBENCH, "run", "--db", str(db), "--config", str(cfg), *QUIET_RUN]
        signal_when(args, lambda: len(server.requests) >= 20)  # killed in round 2
        assert 0 < rows(db, "SELECT count(*) FROM generations")[0][0] < 2 * 16
        p = subprocess.run(args, capture_output=True, text=True, timeout=240)
        assert p.returncode == 0, (p.stdout, p.stderr)
        assert "target met at look 2 of 3" in p.stdout
        whole = tmp_path / "whole.db"
        args_whole = [*DEFLECTBENCH, "run", "--db", str(whole), "--config", str(cfg), *QUIET_RUN]
        assert subprocess.run(args_whole, capture_output=True, timeout=240).returncode == 0
    assert stored(db) == stored(whole)
    made = [(x["look"], x.get("met")) for x in looks(db)]
    assert (2, None) in made  # the round killed before its look
    assert made[-1] == (2, True)


def test_the_command_line_says_the_looks_and_analyze_the_levels(tmp_path, server):
    from support.cli_runs import Cli

    cli = Cli(in_process=True)
    run = settings(server)
    providers = run.pop("providers")
    cfg = write_toml(tmp_path / "run.toml", {"run": run, "providers.srv": providers["srv"]})  # type: ignore[index]
    db = tmp_path / "r.db"
    p = cli(
        "run",
        "--config",
        str(cfg),
        "--db",
        str(db),
        "--until",
        "halfwidth<=3pp in 3 looks",
        *QUIET_RUN,
    )
    assert p.returncode == 0, p.stderr
    flat = " ".join(p.stdout.split())
    assert "--until halfwidth<=0.03 per model in 3 looks: target met at look 2 of 3" in flat
    a = cli("analyze", "--db", str(db))
    assert a.returncode == 0, a.stderr
    flat = " ".join(a.stdout.split())
    assert "run --until (halfwidth<=0.03 per model in 3 looks) looked 2 times" in flat
    assert "at 98.33%" in flat
    bad = cli("run", "--config", str(cfg), "--db", str(db), "--until", "halfwidth=3", *QUIET_RUN)
    assert bad.returncode == 2 and "cannot read the stopping rule" in bad.stderr + bad.stdout
