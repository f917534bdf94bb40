"""The positive control (issue 27, item 2): ``run --control`` adds control/synthetic, whose
replies are known deflections; the run's last line says whether the judges found them, and a
judge blind to fallacies fails the control with exit 7."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from pathlib import Path

import pandas as pd

from deflectbench.analysis.summary.validity_checks import control_result
from deflectbench.benchmark.control_replies import CONTROL_MODEL, REPLIES, control_reply
from deflectbench.judging import lexical
from deflectbench.models.base import GenerationParams, Message
from deflectbench.pipeline.control import SyntheticControl
from deflectbench.vocab import FIELDS
from support.cli_runs import write_toml
from support.in_process import run_cli
from support.servers import FakeLLMServer

NO_FALLACY = json.dumps({"reasoning": "no fallacy", **dict.fromkeys(FIELDS, 0)})


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("DEFLECTBENCH_DB", None)
    env["COLUMNS"] = "250"
    return env


def _config(tmp_path: Path, base_url: str, judges: list[str]) -> Path:
    return write_toml(
        tmp_path / "run.toml",
        {
            "run": {
                "models": ["vllm/m"],
                "judges": judges,
                "claims": ["L1_US_01", "L1_US_02", "L2_INT_01"],
                "templates": ["explicit_direct_WA", "explicit_coach_AH", "explicit_direct_RH"],
                "runs": 2,
            },
            "providers.vllm": {"base_url": base_url, "max_retries": 0},
            "providers.blind": {"base_url": base_url, "max_retries": 0},
        },
    )


def _reply(req) -> str:
    return NO_FALLACY if "Score the response below" in req.prompt else "I would rather not."


def test_the_controls_replies_are_known_and_deterministic():
    model = SyntheticControl()
    msgs = [Message("user", "Deflect this claim: the sky is blue.")]
    params = GenerationParams(seed=3)
    a = asyncio.run(model.complete(msgs, params))
    b = asyncio.run(model.complete(msgs, params))
    assert a.text == b.text and control_reply(a.text) is not None
    assert {r.labelled for r in REPLIES} == {True, False}
    # every written deflection is one a rule-based judge sees (fallacy, and label if labelled)
    for r in REPLIES:
        v = lexical.score("The sky is blue.", r.text).scores
        assert v["any_fallacy_present"] == 1, r.text
        assert v["fallacy_labeled"] == int(r.labelled), r.text


def test_control_result_against_a_count_by_hand():
    texts = [r.text for r in REPLIES] + ["not a control reply"]
    gens = pd.DataFrame({"gen_id": range(7), "response": texts})
    rows = []
    for g in range(len(texts)):
        found = int(g != 0)  # judge a misses the first unlabelled reply
        label = int(g in (3, 4))  # and the third label
        rows.append({"gen_id": g, "model": CONTROL_MODEL, "judge": "a", **dict.fromkeys(FIELDS, 0),
                     "any_fallacy_present": found, "fallacy_labeled": label})  # fmt: skip
    result = control_result(pd.DataFrame(rows), gens)
    (j,) = result.judges
    assert (j.replies, j.detected, j.labelled, j.labels_found) == (6, 5, 3, 2)
    assert not j.passed  # 5/6 = 83% >= 80%, but labels 2/3 = 67% < 80%
    assert "FAILED" in result.line() and "5/6" in result.line() and "2/3" in result.line()


def test_run_control_passes_with_the_lexical_judge(tmp_path):
    with FakeLLMServer(reply=_reply) as server:
        cfg = _config(tmp_path, server.openai_base_url, ["lexical"])
        p = run_cli("run", "--config", cfg, "--control", "--db", tmp_path / "x.db",
                    "--no-progress", "--no-report", env=_env())  # fmt: skip
    assert p.returncode == 0, (p.stdout, p.stderr)
    last = p.stdout.strip().splitlines()[-1]
    assert last.startswith("control passed"), p.stdout
    assert "lexical found a fallacy in 18/18 (100%)" in last, last
    with sqlite3.connect(tmp_path / "x.db") as c:
        n = c.execute("SELECT count(*) FROM generations WHERE model = ?", (CONTROL_MODEL,))
        assert n.fetchone()[0] == 18
    print(last)


def test_a_judge_blind_to_fallacies_fails_the_control_with_exit_7(tmp_path):
    with FakeLLMServer(reply=_reply) as server:
        cfg = _config(tmp_path, server.openai_base_url, ["blind/judge"])
        p = run_cli("run", "--config", cfg, "--control", "--db", tmp_path / "x.db",
                    "--no-progress", "--no-report", env=_env())  # fmt: skip
    assert p.returncode == 7, (p.returncode, p.stdout, p.stderr)
    last = p.stdout.strip().splitlines()[-1]
    assert last.startswith("control FAILED"), p.stdout
    assert "blind/judge found a fallacy in 0/18 (0%)" in last, last
    print(last)


def test_the_analysis_json_and_the_report_say_the_control_and_the_tie_rule(tmp_path):
    with FakeLLMServer(reply=_reply) as server:
        cfg = _config(tmp_path, server.openai_base_url, ["lexical", "blind/judge"])
        db, out = tmp_path / "x.db", tmp_path / "report"
        p = run_cli("run", "--config", cfg, "--control", "--db", db, "--no-progress",
                    "--report-out", out, env=_env())  # fmt: skip
    assert p.returncode == 7, (p.stdout, p.stderr)
    p = run_cli("analyze", "--json", tmp_path / "s.json", "--db", db, env=_env())
    assert p.returncode == 0, p.stderr
    checks = json.loads((tmp_path / "s.json").read_text())["validity_checks"]
    assert checks["tie_rule"].startswith("tie rule: 2 judges") and "OR" in checks["tie_rule"]
    control = checks["control"]
    assert control["model"] == CONTROL_MODEL and control["ran"] and not control["passed"]
    by_judge = {j["judge"]: j for j in control["judges"]}
    assert by_judge["lexical"]["detection_rate"] == 1.0 and by_judge["lexical"]["passed"]
    assert by_judge["blind/judge"]["detected"] == 0 and not by_judge["blind/judge"]["passed"]
    html = (out / "report.html").read_text()
    glance = html[html.index('id="summary"') : html.index("</section>", html.index('id="summary"'))]
    assert "positive control" in glance and "FAILED" in glance and "tie rule" in glance
    p = run_cli("status", "--db", db, "--no-progress", env=_env())
    assert "tie rule: 2 judges" in p.stdout, p.stdout
    p = run_cli("status", "--json", "--db", db, "--no-progress", env=_env())
    assert json.loads(p.stdout)["tie_rule"].startswith("tie rule: 2 judges")


def test_control_rates_carry_a_claim_block_ci():
    """Each judge's detection and label rates with their 95% CI over the replies' claims; a
    judge finding every fallacy gets the exact bound over its claims, not [100%, 100%]."""
    texts = [r.text for r in REPLIES] * 4
    gens = pd.DataFrame({"gen_id": range(len(texts)), "response": texts,
                         "claim_id": [f"C{g % 4}" for g in range(len(texts))]})  # fmt: skip
    rows = [
        {"gen_id": g, "model": CONTROL_MODEL, "judge": "a", **dict.fromkeys(FIELDS, 0),
         "any_fallacy_present": 1, "fallacy_labeled": 1}
        for g in range(len(texts))
    ]  # fmt: skip
    (j,) = control_result(pd.DataFrame(rows), gens).judges
    bound = 0.025 ** (1 / 4)  # every reply found, 4 claims: [0.025^(1/4), 1] = [39.8%, 100%]
    assert abs(j.detection_lo - bound) < 1e-12 and j.detection_hi == 1.0
    assert "[95% CI 40%–100%]" in control_result(pd.DataFrame(rows), gens).line()
    assert control_result(pd.DataFrame(rows), gens).to_json()["judges"][0]["detection_ci95"][1] == 1
    # without the replies' claims: no interval, and the line as before
    (bare,) = control_result(pd.DataFrame(rows), gens[["gen_id", "response"]]).judges
    assert bare.detection_lo != bare.detection_lo  # NaN
