"""compare and leaderboard read the runs' manifests (issue 25, item 4): results whose judge was
served by another model, or sent other parameters, are refused unless --allow-judge-change
(then marked); a judge's system fingerprint changing alone is a note, never a refusal. The
stores are made by real runs against a local OpenAI-wire server naming the served ids."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from deflectbench.analysis.compare.manifest import (
    judge_fingerprint_notes,
    judge_manifest_mismatch,
    judge_mismatch,
)
from deflectbench.analysis.compare.select import Side
from support.cli_runs import Cli, write_toml
from support.replies import unique_reply

cli = Cli(env={"OPENAI_API_KEY": "sk-test-SECRET123"}, in_process=True)
MODEL, JUDGE = "vllm/test-model", "openai/gpt-5.4-mini"


def make_store(path: Path, server, served: str, fingerprint: str = "fp_a") -> Path:
    """A store whose judge (and model) replies name ``<asked>-<served>``."""
    server.reset(
        reply=unique_reply, served_as=lambda asked: f"{asked}-{served}", fingerprint=fingerprint
    )
    section = {"base_url": server.openai_base_url, "max_concurrency": 4}
    cfg = write_toml(
        path.with_suffix(".toml"),
        {
            "run": {
                "models": [MODEL],
                "judges": [JUDGE],
                "claims": ["L1_US_01", "L2_INT_03", "L4_INT_15"],
                "templates": ["explicit_direct_WA", "explicit_coach_AH"],
                "runs": 1,
            },
            "providers.vllm": section,
            "providers.openai": section,
        },
    )
    p = cli("run", "--config", cfg, "--db", path, "--no-progress", "--no-report")
    assert p.returncode == 0, p.stderr
    return path


@pytest.fixture
def stores(tmp_path, llm_server):
    return {
        "may": make_store(tmp_path / "may.db", llm_server, "2026-05-01"),
        "may2": make_store(tmp_path / "may2.db", llm_server, "2026-05-01"),
        "june": make_store(tmp_path / "june.db", llm_server, "2026-06-01"),
        "refit": make_store(tmp_path / "refit.db", llm_server, "2026-05-01", fingerprint="fp_b"),
    }


def test_a_judge_served_by_another_model_is_refused_then_marked(stores, tmp_path):
    p = cli("compare", stores["may"], stores["june"])
    assert p.returncode == 2, (p.returncode, p.stdout[-1500:], p.stderr[-1500:])
    line = p.stderr.strip().splitlines()[-1]
    assert f"judge {JUDGE} was served by gpt-5.4-mini-2026-05-01" in line
    assert "gpt-5.4-mini-2026-06-01" in line and "--allow-judge-change" in line
    out = tmp_path / "c.json"
    p = cli("compare", stores["may"], stores["june"], "--allow-judge-change", "--json", out)
    assert p.returncode == 0, p.stderr
    data = json.loads(out.read_text())
    assert data["rows"] and all(r["judges_differ"] for r in data["rows"])
    assert any("gpt-5.4-mini-2026-06-01" in n for n in data["judge_notes"])
    assert "flagged:" in p.stderr and "gpt-5.4-mini-2026-06-01" in p.stderr
    # the recorded manifests are in the sides and the terminal's run-manifest table
    sides = data["sides"][0]
    served = sides["b"]["recorded"]["judges"][JUDGE][0]["served_models"]
    assert served == {"gpt-5.4-mini-2026-06-01": 6}
    assert "Run manifests" in p.stdout


def test_the_same_judge_manifest_compares_without_a_flag(stores, tmp_path):
    out = tmp_path / "c.json"
    p = cli("compare", stores["may"], stores["may2"], "--json", out)
    assert p.returncode == 0, p.stderr
    data = json.loads(out.read_text())
    assert not any(r["judges_differ"] for r in data["rows"]) and data["judge_notes"] == []


def test_a_fingerprint_alone_is_a_note_not_a_refusal(stores, tmp_path):
    out = tmp_path / "c.json"
    p = cli("compare", stores["may"], stores["refit"], "--json", out)
    assert p.returncode == 0, p.stderr
    data = json.loads(out.read_text())
    assert not any(r["judges_differ"] for r in data["rows"])
    note = next(n for n in data["manifest_notes"] if "fingerprint" in n)
    assert "fp_a" in note and "fp_b" in note and "not refused" in note


def test_the_leaderboard_marks_a_row_judged_under_another_manifest(stores, tmp_path):
    out = tmp_path / "board.json"
    p = cli("leaderboard", stores["may"], stores["may2"], stores["june"], "--json", out)
    assert p.returncode == 0, p.stderr
    rows = {Path(r["store"]).name: r for r in json.loads(out.read_text())["rows"]}
    assert rows["may.db"]["judges_match"] and rows["may2.db"]["judges_match"]
    assert not rows["june.db"]["judges_match"] and rows["june.db"]["rank"] is None
    assert rows["june.db"]["judges"] == f"{JUDGE} (another judge manifest)"
    assert "flagged:" in p.stderr


def side(label: str, **judge: object) -> Side:
    """A side whose one judge's recorded manifest is ``judge``."""
    return Side(
        name=label,
        store=f"{label}.db",
        pack="deflectbench-v1.0",
        model=MODEL,
        condition=None,
        scored=pd.DataFrame(),
        judges=(JUDGE,),
        manifest={"recorded": {"model": [], "judges": {JUDGE: [judge]} if judge else {}}},
    )


SENT = {"temperature": 0.0, "max_completion_tokens": 512, "seed": 0,
        "response_format": {"type": "json_schema", "schema": "sha256:aaaa"}}  # fmt: skip


@pytest.mark.parametrize(
    ("change", "word"),
    [
        ({"temperature": 0.7}, "temperature 0.0 vs 0.7"),
        ({"max_completion_tokens": 256}, "max_completion_tokens 512 vs 256"),
        ({"seed": 1}, "seed 0 vs 1"),
        ({"response_format": {"type": "json_schema", "schema": "sha256:bbbb"}}, "response_format"),
    ],
)
def test_other_parameters_sent_to_the_judge_are_a_mismatch(change, word):
    a = side("a", served_models={"j-1": 3}, sent=SENT)
    b = side("b", served_models={"j-1": 3}, sent=SENT | change)
    line = judge_mismatch(a, b)
    assert line is not None and "other parameters" in line and word in line


def test_what_one_side_did_not_record_is_no_reason_to_refuse():
    a = side("a", served_models={"j-1": 3}, sent=SENT, system_fingerprints={"fp_1": 3})
    assert judge_mismatch(a, side("b")) is None  # an import, an older store
    nothing = side("c", served_models="not recorded", sent="not recorded")
    assert judge_manifest_mismatch(a, nothing) is None
    refit = side("d", served_models={"j-1": 3}, sent=SENT, system_fingerprints={"fp_2": 3})
    assert judge_mismatch(a, refit) is None
    assert judge_fingerprint_notes(a, refit) and "fp_2" in judge_fingerprint_notes(a, refit)[0]


def test_a_judge_only_run_has_a_manifest_and_a_changed_judge_is_refused(tmp_path, llm_server):
    """The judge command is a run of its own (command "judge"): its verdicts carry it, and its
    manifest says which model served the judge, so re-judging with a retired judge's
    successor under the same name is caught."""
    import sqlite3

    made = {}
    for month in ("05", "06"):
        db = tmp_path / f"{month}.db"
        llm_server.reset(reply=unique_reply, served_as=lambda asked, m=month: f"{asked}-{m}")
        section = {"base_url": llm_server.openai_base_url, "max_concurrency": 4}
        cfg = write_toml(
            tmp_path / f"{month}.toml",
            {
                "run": {
                    "models": [MODEL],
                    "judges": ["lexical"],
                    "claims": ["L1_US_01", "L2_INT_03"],
                    "templates": ["explicit_direct_WA"],
                    "runs": 1,
                },
                "providers.vllm": section,
                "providers.openai": section,
            },
        )
        p = cli("run", "--config", cfg, "--db", db, "--no-progress", "--no-report")
        assert p.returncode == 0, p.stderr
        p = cli("judge", "--config", cfg, "--db", db, "--judge", JUDGE, "--no-progress")
        assert p.returncode == 0, p.stderr
        conn = sqlite3.connect(db)
        (run_id,) = conn.execute("SELECT run_id FROM runs WHERE command = 'judge'").fetchone()
        judged = conn.execute("SELECT DISTINCT run_id FROM judgments WHERE judge = ?", (JUDGE,))
        assert judged.fetchall() == [(run_id,)]
        (body,) = conn.execute(
            "SELECT manifest_json FROM manifests WHERE run_id = ? AND role = 'judge'", (run_id,)
        ).fetchone()
        conn.close()
        assert json.loads(body)["served_models"] == {f"gpt-5.4-mini-{month}": 2}
        made[month] = db
    p = cli("compare", made["05"], made["06"], "--judge", JUDGE)
    assert p.returncode == 2 and "gpt-5.4-mini-06" in p.stderr, (p.returncode, p.stderr)
