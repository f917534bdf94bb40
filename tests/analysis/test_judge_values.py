"""``--judge-values``: ``said`` (the default, the paper's definition) combines what each judge
replied; ``rules`` each verdict after the rubric's rules."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from deflectbench.analysis import AnalysisOptions, analyze, scored_table, verdict_table
from deflectbench.judging.rubric import parse_reply
from deflectbench.store import GenerationRecord, JudgmentRecord, Store
from deflectbench.views.report import build_report
from deflectbench.vocab import ConsensusError

BROKE_RULES = {  # refusal together with a fallacy: the rules turn it into a pure refusal
    "refusal": 1,
    "soft_refusal": 0,
    "WA_present": 1,
    "AH_present": 0,
    "RH_present": 0,
    "any_fallacy_present": 1,
    "compliance_clean": 0,
    "fallacy_labeled": 0,
}
CLEAN = {
    "refusal": 0,
    "soft_refusal": 0,
    "WA_present": 0,
    "AH_present": 1,
    "RH_present": 0,
    "any_fallacy_present": 1,
    "compliance_clean": 1,
    "fallacy_labeled": 0,
}


@pytest.fixture
def store(tmp_path, benchmark):
    s = Store.open(tmp_path / "v.db")
    claims = ["L1_US_01", "L2_US_01", "L3_US_01", "L4_US_01"]
    for i, claim in enumerate(claims):
        s.add_generation(
            GenerationRecord(
                benchmark.key, "m/x", claim, "explicit_direct_WA", 1, "p", f"response {i}"
            )
        )
    for row in s.generation_rows():
        said = BROKE_RULES if row["claim_id"] == "L1_US_01" else CLEAN
        for judge in ("j/a", "j/b"):
            parsed = parse_reply(json.dumps({"reasoning": "r", **said}))
            s.add_judgment(
                JudgmentRecord(
                    gen_id=row["gen_id"],
                    judge=judge,
                    raw="{}",
                    scores=parsed.scores,
                    said=parsed.said,
                    consistency_flag=parsed.consistency_flag,
                )
            )
    yield s
    s.close()


def test_rules_and_said_differ_where_the_rules_change_a_value(store, benchmark):
    rules = scored_table(store, benchmark, values="rules").set_index("claim_id")
    said = scored_table(store, benchmark, values="said").set_index("claim_id")
    assert scored_table(store, benchmark).equals(scored_table(store, benchmark, values="said"))
    assert rules.loc["L1_US_01", "WA_present"] == 0 and said.loc["L1_US_01", "WA_present"] == 1
    assert rules.loc["L1_US_01", "outcome"] == said.loc["L1_US_01", "outcome"] == "refusal"
    others = ["L2_US_01", "L3_US_01", "L4_US_01"]
    cols = ["WA_present", "AH_present", "any_fallacy_present", "compliance_clean", "outcome"]
    assert rules.loc[others, cols].equals(said.loc[others, cols])
    v = verdict_table(store, benchmark)  # the default: what each judge said
    assert (v[v["gen_id"] == 1]["WA_present"] == 1).all()


def test_analyze_and_report_take_values(store, benchmark, tmp_path):
    a = analyze(store, benchmark, AnalysisOptions(n_resamples=50, values="said"))
    b = analyze(store, benchmark, AnalysisOptions(n_resamples=50, values="rules"))
    assert a["judge_values"] == "said" and b["judge_values"] == "rules"
    assert analyze(store, benchmark, AnalysisOptions(n_resamples=50)) == a  # said: the default
    assert a["models"]["m/x"]["rates"]["WA_present"]["rate"] == 0.25
    assert b["models"]["m/x"]["rates"]["WA_present"]["rate"] == 0.0
    with pytest.raises(ConsensusError, match="valid: rules, said"):
        analyze(store, benchmark, AnalysisOptions(values="raw"))
    paths = build_report(
        store,
        benchmark,
        tmp_path / "rep",
        AnalysisOptions(n_resamples=50, values="said"),
        formats=("svg",),
    )
    assert paths.html.exists()


def test_cli_judge_values(store, tmp_path):
    out = tmp_path / "s.json"
    cmd = [
        sys.executable,
        "-m",
        "deflectbench",
        "analyze",
        "--judge-values",
        "said",
        "--resamples",
        "50",
        "--json",
        str(out),
        "--db",
        str(store.path),
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert json.loads(out.read_text())["judge_values"] == "said"
    p = subprocess.run([*cmd[:5], "nope", *cmd[6:]], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "unknown judge values 'nope'" in p.stderr
