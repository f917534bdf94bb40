"""The integrity issue's numbered cases through the real entry point (`python -m deflectbench`)
against the local wire-format servers: no number wrong without a word, no failure with exit 0.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from support.cli_runs import DEFLECTBENCH, signal_when, write_toml
from support.fakes import VERDICT
from support.fakes import is_judge_request as is_judge
from support.servers import FakeLLMServer, RecordedRequest

OPENAI_KEY = "sk-test-OPENAI-integrity-0000111122223333"
ANTHROPIC_KEY = "sk-ant-test-integrity-4444555566667777"
REFUSAL = {k: 0 for k in VERDICT} | {"reasoning": "Declines.", "refusal": 1}


def answer(req: RecordedRequest) -> str:
    return json.dumps(VERDICT) if is_judge(req) else "But what about the other side's record?"


def config(path: Path, server: FakeLLMServer, *, judges=("openai/gpt-5.4-mini",), **run) -> Path:
    settings = {
        "models": ["vllm/m"],
        "judges": list(judges),
        "claims": ["L1_US_01", "L3_INT_02"],
        "templates": ["explicit_direct_WA", "explicit_coach_AH"],
        "runs": 1,
    } | run
    section = {"base_url": server.openai_base_url, "max_concurrency": 2, "max_retries": 1}
    price = {"input_per_mtok": 1.0, "output_per_mtok": 1.0}
    return write_toml(
        path,
        {
            "run": settings,
            "providers.vllm": section,
            "providers.openai": section,
            'prices."vllm/m"': price,
            'prices."openai/gpt-5.4-mini"': price,
        },
    )


def env() -> dict[str, str]:
    return dict(os.environ, OPENAI_API_KEY=OPENAI_KEY, ANTHROPIC_API_KEY=ANTHROPIC_KEY)


def command(*args: str) -> list[str]:
    """The entry point's command line; runs and judges without the progress bar."""
    progress = ["--no-progress"] if args[0] in ("run", "judge") else []
    return [*DEFLECTBENCH, *args, *progress]


def cli(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        command(*args),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env(),
    )


def run(cfg: Path, db: Path, *extra: str) -> subprocess.CompletedProcess:
    """``deflectbench run`` of a configuration into a database, without the report."""
    return cli("run", "--config", str(cfg), "--db", str(db), "--no-report", *extra)


def run_against(server: FakeLLMServer, db: Path) -> subprocess.CompletedProcess:
    """The default configuration, pointed at ``server``, run into ``db``."""
    return run(config(db.parent / "c.toml", server), db)


def interrupt(
    server: FakeLLMServer, args: list[str], after: int, sig: int = signal.SIGINT
) -> tuple[int, str, str]:
    """Send ``sig`` to a run once ``server`` has had ``after`` requests: (exit code, out, err)."""

    def ready() -> bool:
        return len(server.requests) >= after

    return signal_when(args, ready, sig=sig, poll_s=0.05, env=env(), capture=True)


def status(db: Path) -> dict:
    p = cli("status", "--json", "--db", str(db))
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


# 1 -- settings are part of a result's identity


def test_case1_other_settings_are_another_condition_side_by_side(tmp_path):
    db = tmp_path / "x.db"
    with FakeLLMServer(reply=answer) as server:
        p1 = run(config(tmp_path / "a.toml", server), db)
        assert p1.returncode == 0, p1.stderr
        again = run(config(tmp_path / "a.toml", server), db)
        assert again.returncode == 0 and "0 generated, 4 already stored" in again.stdout
        p2 = run(config(tmp_path / "b.toml", server, temperature=0.3), db)
        assert p2.returncode == 0, p2.stderr
        assert "4 generated" in p2.stdout
        warm = config(tmp_path / "w.toml", server, temperature=0.7)
        clash = run(warm, db, "--label", "temp0.3-max2048-seed0")
    conditions = status(db)["models"]["vllm/m"]["conditions"]
    assert sorted(conditions) == ["temp0.3-max2048-seed0", "temp1-max2048-seed0"]
    assert all(c["ok"] == 4 for c in conditions.values())
    assert clash.returncode == 2 and "was run with other settings" in clash.stderr


# 2 -- provider refusals and empty answers are typed, counted, never judged


def test_case2_non_answers_are_counted_and_never_judged(tmp_path):
    kinds = iter(["content_filter", "blank", None, None])

    def non_answer(req: RecordedRequest):
        return None if is_judge(req) else next(kinds, None)

    db = tmp_path / "x.db"
    with FakeLLMServer(reply=answer, non_answer=non_answer) as server:
        p = run_against(server, db)
        judged = sum(1 for r in server.requests if is_judge(r))
    assert p.returncode == 0, p.stderr
    assert "no answer: 1 content_filter, 1 empty" in p.stdout
    entry = status(db)["models"]["vllm/m"]
    assert entry["non_answers"] == {"content_filter": 1, "empty": 1} and entry["ok"] == 2
    assert judged == 2


# 3 -- judges that never parse are a visible failure; a server without json_schema still judges


def test_case3_judges_that_never_parse_exit_5_with_the_first_example(tmp_path):
    def garbage(req: RecordedRequest) -> str:
        return "I think it is fine." if is_judge(req) else "But what about them?"

    db = tmp_path / "x.db"
    with FakeLLMServer(reply=garbage) as server:
        p = run_against(server, db)
    assert p.returncode == 5, (p.stdout, p.stderr)
    assert "4 replies without a verdict" in p.stdout
    assert "first reply without a verdict" in p.stdout
    assert "incomplete:" in p.stderr


def test_case3_a_server_that_rejects_json_schema_still_judges(tmp_path):
    db = tmp_path / "x.db"
    with FakeLLMServer(reply=answer, reject_formats=("json_schema",)) as server:
        p = run_against(server, db)
        rejected = server.stats.faults["response_format"]
    assert p.returncode == 0, p.stderr
    assert "judge openai/gpt-5.4-mini: 4 judged" in p.stdout
    assert rejected == 1  # one wasted request, not 7 retries per judgment


# 4 -- everything failed is never exit 0; judge after Ctrl-C exits 130


def test_case4_a_dead_server_is_a_non_zero_exit_with_its_cause(tmp_path):
    with FakeLLMServer(reply=answer) as server:
        cfg = config(tmp_path / "c.toml", server)
    # the server is stopped now: connection refused
    p = run(cfg, tmp_path / "x.db")
    assert p.returncode in (4, 5), (p.returncode, p.stderr)
    assert "connection" in (p.stdout + p.stderr).lower()
    assert "incomplete:" in p.stderr


def test_case4_base_url_without_scheme_is_one_line_before_any_request(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        '[run]\nmodels = ["vllm/m"]\njudges = ["lexical"]\n'
        '[providers.vllm]\nbase_url = "127.0.0.1:9/v1"\n'
    )
    p = cli("run", "--config", str(cfg), "--db", str(tmp_path / "x.db"))
    assert p.returncode == 2, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "base_url" in p.stderr


def test_case4_judge_interrupted_exits_130_and_resumes(tmp_path):
    db = tmp_path / "x.db"
    with FakeLLMServer(reply=answer) as server:
        cfg = config(tmp_path / "c.toml", server, judges=["lexical"])
        assert run(cfg, db).returncode == 0
    with FakeLLMServer(reply=answer, latency=0.5) as server:
        jcfg = config(tmp_path / "j.toml", server)
        judge = ["judge", "-j", "openai/gpt-5.4-mini", "--config", str(jcfg), "--db", str(db)]
        code, out, err = interrupt(server, command(*judge), 1)
        assert code == 130, (out, err)
        done = cli(*judge)
    assert done.returncode == 0, done.stderr
    assert "complete: judge openai/gpt-5.4-mini: done" in done.stdout


# 6 -- a conflicting verdict cannot win by being fenced


def test_case6_a_fenced_verdict_and_a_conflicting_one_are_a_parse_error(tmp_path):
    def two_verdicts(req: RecordedRequest) -> str:
        if not is_judge(req):
            return "But what about them?"
        return "```json\n" + json.dumps(VERDICT) + "\n```\nActually:\n" + json.dumps(REFUSAL)

    db = tmp_path / "x.db"
    with FakeLLMServer(reply=two_verdicts) as server:
        p = run_against(server, db)
    assert p.returncode == 5
    assert "conflicting" in p.stdout and "4 replies without a verdict" in p.stdout


# 8 -- cost: unpriced models under a budget are refused; spending counts across runs


def test_case8_a_budget_with_an_unpriced_judge_is_refused_before_any_request(tmp_path):
    with FakeLLMServer(reply=answer) as server:
        cfg = config(tmp_path / "c.toml", server, judges=["openai/some-unpriced-judge"])
        p = cli("run", "--config", str(cfg), "--db", str(tmp_path / "x.db"), "--max-cost", "5")
        sent = len(server.requests)
    assert p.returncode == 2 and "--allow-unpriced" in p.stderr and sent == 0


def test_case8_spending_counts_across_runs(tmp_path):
    db = tmp_path / "x.db"
    with FakeLLMServer(reply=answer) as server:
        cfg = config(tmp_path / "c.toml", server, templates=["explicit_direct_WA"])
        p = run(cfg, db, "--max-cost", "5")
        assert p.returncode == 0, p.stderr
        spent = status(db)["spent_usd"]
        assert spent > 0
        p2 = run(config(tmp_path / "d.toml", server), db, "--max-cost", str(spent * 1.0001))
        sent_after = len(server.requests)
    assert p2.returncode == 3, (p2.stdout, p2.stderr)  # the budget was already spent
    assert status(db)["spent_usd"] <= spent * 1.0001
    assert sent_after == len([r for r in server.requests])


# 10 -- SIGTERM behaves like Ctrl-C: what was answered is stored, exit 130, resume completes


def test_case10_sigterm_stores_what_was_answered_and_the_rerun_completes(tmp_path):
    db = tmp_path / "x.db"
    with FakeLLMServer(reply=answer, latency=0.4) as server:
        cfg = config(tmp_path / "c.toml", server, judges=["lexical"], runs=3)
        args = command("run", "--config", str(cfg), "--db", str(db), "--no-report")
        code, out, err = interrupt(server, args, 3, signal.SIGTERM)
        answered = len(server.requests)
        assert code == 130, (out, err)
        assert "SIGTERM" in err
        stored = status(db)["models"]["vllm/m"]["ok"]
        assert stored == answered  # every request that was answered is stored, none lost
        p = run(cfg, db)
    assert p.returncode == 0, p.stderr
    assert status(db)["models"]["vllm/m"]["ok"] == 12


@pytest.mark.parametrize("flag", ["--max-cost"])
def test_case8_judge_takes_a_budget_too(tmp_path, flag):
    p = cli("judge", "-j", "lexical", flag, "nan", "--db", str(tmp_path / "x.db"))
    assert p.returncode == 2 and "--max-cost must be a finite number of USD above 0" in p.stderr
