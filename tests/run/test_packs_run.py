"""Packs end to end: `run --benchmark` against a local OpenAI-wire server, what is stored per
pack, the one-pack rule of the analysis, and the comparison of packs (controlled vs v1 template
by template, language as a factor) in `analyze --json` and the report."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from deflectbench.analysis import AnalysisOptions
from deflectbench.analysis.frames.scored import generation_frame, judgment_frame
from deflectbench.analysis.summary.packs import compare_packs
from deflectbench.benchmark import default_benchmark, load_pack
from deflectbench.store import Store
from support.fakes import VERDICT, is_judge_request
from support.in_process import run_cli
from support.servers import FakeLLMServer, RecordedRequest

CLAIMS = ["L1_US_01", "L2_INT_03", "L3_US_02", "L4_INT_15"]
TEMPLATES = ["explicit_direct_WA", "explicit_direct_AH", "explicit_coach_RH"]
JUDGE = "vllm/test-judge"
PACKS = ["deflectbench-v1", "deflectbench-v1-controlled", "deflectbench-v1-es"]


REFUSAL = "I can't help with attacking a person."


def reply(req: RecordedRequest) -> str:
    """Refuse whenever the prompt names the fictional speaker: in v1 that is the ad hominem
    templates only, in the controlled pack every template (the confound, planted). The judge
    (a model: the lexical judge reads English only) scores a refusal as one."""
    if is_judge_request(req):
        refused = REFUSAL in req.prompt
        verdict = {**VERDICT, "refusal": int(refused)}
        if refused:
            verdict.update(WA_present=0, any_fallacy_present=0, compliance_clean=0)
        return json.dumps(verdict)
    if "Jordan Ivanov" in req.prompt:
        return REFUSAL
    return "But what about the other side's record? They did far worse."


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["COLUMNS"] = "200"
    return run_cli(*args, env=env, cwd=cwd)


@pytest.fixture(scope="module")
def three_packs(tmp_path_factory):
    """One store holding the same model's runs of v1, the controlled pack and the Spanish pack."""
    work = tmp_path_factory.mktemp("packs")
    with FakeLLMServer(reply=reply) as server:
        config = work / "run.toml"
        config.write_text(
            "[run]\n"
            'models = ["vllm/test-model"]\n'
            f'judges = ["{JUDGE}"]\n'
            f"claims = {json.dumps(CLAIMS)}\n"
            f"templates = {json.dumps(TEMPLATES)}\n"
            "runs = 2\n"
            "[providers.vllm]\n"
            f'base_url = "{server.openai_base_url}"\n'
        )
        for pack in PACKS:
            p = cli("run", "-c", "run.toml", "--benchmark", pack, "--no-report", "--no-progress",
                    cwd=work)  # fmt: skip
            assert p.returncode == 0, (pack, p.stdout, p.stderr)
    return work


def refused_for_language(p: subprocess.CompletedProcess) -> None:
    line = p.stderr.strip()
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "\n" not in line and "Traceback" not in line
    assert "lexical judge reads English only" in line and "'es'" in line, line
    assert "name a model judge instead" in line


def test_the_lexical_judge_is_refused_for_a_pack_not_in_english(tmp_path, three_packs):
    """It matches English phrases: on Spanish answers it would score nearly everything 0."""
    for args in (["run", "--dry-run"], ["run"]):
        refused_for_language(
            cli(*args, "--benchmark", "deflectbench-v1-es", "-j", "lexical", cwd=tmp_path)
        )
    assert not (tmp_path / "deflectbench.db").exists()  # refused before the store is made
    db = three_packs / "deflectbench.db"
    before = db.read_bytes()
    refused_for_language(
        cli("judge", "--judge", "lexical", "--benchmark", "deflectbench-v1-es", cwd=three_packs)
    )
    assert db.read_bytes() == before


def test_each_run_stores_its_pack_key_and_content_hash(three_packs):
    conn = sqlite3.connect(three_packs / "deflectbench.db")
    runs = conn.execute(
        "SELECT benchmark, benchmark_version, benchmark_sha256 FROM runs"
    ).fetchall()
    expected = [(load_pack(p).key, "1.0", load_pack(p).sha256) for p in PACKS]
    assert runs == expected
    assert runs[0][0] == "deflectbench-v1.0"
    per_key = dict(conn.execute("SELECT benchmark, count(*) FROM generations GROUP BY 1"))
    n = len(CLAIMS) * len(TEMPLATES) * 2
    assert per_key == {load_pack(p).key: n for p in PACKS}
    labels = [r[0] for r in conn.execute("SELECT label FROM conditions ORDER BY created_at")]
    assert labels == [
        "temp1-max2048-seed0",
        "temp1-max2048-seed0-deflectbench-v1-controlled",
        "temp1-max2048-seed0-deflectbench-v1-es",
    ]
    prompt = conn.execute(
        "SELECT prompt FROM generations WHERE benchmark = ? AND prompt_id = 'explicit_direct_WA'",
        (load_pack("deflectbench-v1-controlled").key,),
    ).fetchone()[0]
    assert "Your debate opponent Jordan Ivanov claims:" in prompt


def test_analysis_of_a_store_with_several_packs_needs_a_choice(three_packs):
    p = cli("analyze", cwd=three_packs)
    assert p.returncode == 2
    line = p.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert "holds results of 3 benchmark packs: deflectbench-v1 (24 generations)" in line
    assert "deflectbench-v1-controlled (24 generations)" in line
    assert "choose one with --benchmark NAME" in line
    for command in ("report", "audit", "judge", "export"):
        extra = ["--out", str(three_packs / "x")] if command in ("report", "export") else []
        p = cli(command, *extra, cwd=three_packs)
        assert p.returncode == 2 and "choose one with --benchmark" in p.stderr, (command, p.stderr)


def test_status_shows_the_packs_and_one_pack_on_request(three_packs):
    p = cli("status", "--json", "--benchmark", "deflectbench-v1-es", cwd=three_packs)
    assert p.returncode == 0, p.stderr
    st = json.loads(p.stdout)
    assert st["models"]["vllm/test-model"]["ok"] == 24
    assert st["judges"][JUDGE]["judged"] == 24
    assert len(st["benchmarks"]) == 3
    p = cli("status", cwd=three_packs)
    assert "benchmark packs: " in p.stdout and "deflectbench-v1-es-v1.0 (24 generations)" in (
        p.stdout
    )


def test_controlled_vs_v1_template_by_template(three_packs):
    p = cli("analyze", "--benchmark", "deflectbench-v1", "--json", "-", cwd=three_packs)
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["benchmark"]["pack"] == "deflectbench-v1"
    assert s["counts"]["attempted"] == 24  # v1's rows only: never pooled
    packs = s["packs"]
    assert [r["pack"] for r in packs["packs"]] == PACKS
    rows = {
        (r["pack"], r["prompt_id"]): r
        for r in packs["by_template"]
        if r["pack"] == "deflectbench-v1-controlled"
    }
    wa = rows[("deflectbench-v1-controlled", "explicit_direct_WA")]
    # v1's WA prompt names nobody (answered); the controlled one names the speaker (refused)
    assert (wa["refusal_base"], wa["refusal_pack"], wa["refusal_diff_pp"]) == (0.0, 1.0, 100.0)
    assert wa["h_refusal"] == pytest.approx(math.pi)  # 2 asin(1) - 2 asin(0)
    ah = rows[("deflectbench-v1-controlled", "explicit_direct_AH")]
    assert (ah["refusal_base"], ah["refusal_pack"], ah["h_refusal"]) == (1.0, 1.0, 0.0)
    swing = {(r["pack"], r["fallacy_requested"]): r["swing_pp"] for r in packs["by_fallacy"]}
    assert swing[("deflectbench-v1", "ad_hominem")] == 100.0  # the confound, planted
    assert swing[("deflectbench-v1-controlled", "ad_hominem")] == 0.0  # gone when controlled


def test_language_is_a_factor_with_a_table_and_a_figure(three_packs):
    out = three_packs / "report"
    p = cli("report", "--benchmark", "deflectbench-v1-es", "--out", str(out), cwd=three_packs)
    assert p.returncode == 0, p.stderr
    rows = list(
        csv_rows(out / "tables" / "packs_by_language.csv")
    )  # the paper's pack and its translation; the controlled pack is not a language
    assert [(r["language"], r["pack"]) for r in rows] == [
        ("en", "deflectbench-v1"),
        ("es", "deflectbench-v1-es"),
    ]
    assert all(
        float(r["refusal_lo"]) <= float(r["refusal"]) <= float(r["refusal_hi"]) for r in rows
    )
    assert (out / "figures" / "refusal_by_language.svg").exists()
    html = (out / "report.html").read_text()
    assert "Benchmark packs" in html and "Refusal by language" in html
    assert "These numbers are of the pack deflectbench-v1-es" in html
    md = (out / "report.md").read_text()
    assert "deflectbench-v1-controlled vs deflectbench-v1" in md


def csv_rows(path: Path):
    import csv

    with path.open(encoding="utf-8") as fh:
        yield from csv.DictReader(fh)


def test_compare_packs_matches_a_count_by_hand(three_packs):
    """The language table's refusal and Cohen's h, recomputed from the stored rows."""
    with Store.open(three_packs / "deflectbench.db", readonly=True) as store:
        gens, judg = generation_frame(store), judgment_frame(store)
        conn = store.conn
        by_key = {}
        for key, verdict in conn.execute(
            "SELECT g.benchmark, j.said_json FROM generations g JOIN judgments j USING (gen_id)"
        ):
            by_key.setdefault(key, []).append(json.loads(verdict)["refusal"])
    cmp = compare_packs(gens, judg, default_benchmark(), AnalysisOptions(n_resamples=200))
    assert cmp is not None
    lang = {r.pack: r for r in cmp.by_language.itertuples()}
    for pack in ("deflectbench-v1", "deflectbench-v1-es"):
        refusals = by_key[load_pack(pack).key]
        assert lang[pack].refusal == pytest.approx(sum(refusals) / len(refusals))
    p_en, p_es = lang["deflectbench-v1"].refusal, lang["deflectbench-v1-es"].refusal
    h = 2 * math.asin(math.sqrt(p_es)) - 2 * math.asin(math.sqrt(p_en))
    assert lang["deflectbench-v1-es"].h_refusal_vs_base == pytest.approx(h)
    assert math.isnan(lang["deflectbench-v1"].h_refusal_vs_base)


def test_a_store_of_one_other_pack_is_analysed_without_being_told(three_packs, tmp_path):
    src = sqlite3.connect(three_packs / "deflectbench.db")
    db = tmp_path / "one.db"
    src.execute(f"VACUUM INTO '{db}'")
    conn = sqlite3.connect(db)
    keep = load_pack("deflectbench-v1-controlled").key
    conn.execute(
        "DELETE FROM judgments WHERE gen_id IN (SELECT gen_id FROM generations WHERE benchmark != ?)",
        (keep,),
    )
    conn.execute("DELETE FROM generations WHERE benchmark != ?", (keep,))
    conn.commit()
    conn.close()
    p = cli("analyze", "--db", str(db), "--json", "-", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["benchmark"]["pack"] == "deflectbench-v1-controlled"
    assert s["packs"] is None
