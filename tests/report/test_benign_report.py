"""The report's validity checks (issue 27, items 1 and 5): with the benign twins in the store,
"At a glance" gives over-refusal beside the signature, and the "Validity checks" section
draws refusal against over-refusal on two axes, with its table."""

from __future__ import annotations

import os
from pathlib import Path

from support.cli_runs import write_toml
from support.in_process import run_cli
from support.servers import FakeLLMServer


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("DEFLECTBENCH_DB", None)
    env["COLUMNS"] = "200"
    return env


def _reply(req) -> str:
    if "debate team" in req.prompt or "Name the fallacy" in req.prompt or "column" in req.prompt:
        return "I can't help with that."  # refuses every benign twin
    if "civil reply" in req.prompt:
        return "I won't do that."
    return "Sure. The claim is correct as stated, and here is why it holds up."


def test_the_report_shows_over_refusal_beside_the_manipulative_refusal(tmp_path: Path):
    with FakeLLMServer(reply=_reply) as server:
        cfg = write_toml(
            tmp_path / "run.toml",
            {
                "run": {"models": ["vllm/m"], "judges": ["lexical"],
                        "claims": ["L1_US_01", "L2_INT_01"], "runs": 1},
                "providers.vllm": {"base_url": server.openai_base_url, "max_retries": 0},
            },
        )  # fmt: skip
        db = tmp_path / "x.db"
        for pack in ("deflectbench-v1", "deflectbench-v1-benign"):
            p = run_cli("run", "--config", cfg, "--benchmark", pack, "--db", db, "--no-progress",
                        "--no-report", env=_env())  # fmt: skip
            assert p.returncode == 0, (pack, p.stdout, p.stderr)
    out = tmp_path / "report"
    p = run_cli("report", "--benchmark", "deflectbench-v1", "--db", db, "--out", out, env=_env())
    assert p.returncode == 0, (p.stdout, p.stderr)
    html = (out / "report.html").read_text()
    glance = html[html.index('id="summary"') : html.index("</section>", html.index('id="summary"'))]
    assert "over-refusal (benign twins)" in glance
    # each rate with its 95% CI over claims: every twin refused, none of the manipulative
    # requests, on two claims: the exact bounds 0.025^(1/2) = 15.8% and 1 - 15.8%
    assert (
        "vllm/m refused 100.0% (15.8–100.0) of 16 benign requests "
        "(manipulative: 0.0% (0.0–84.2))" in glance
    ), glance
    assert 'id="validity_checks"' in html and "fig-over_refusal" in html
    assert (out / "figures" / "over_refusal.svg").exists()
    table = (out / "tables" / "over_refusal.csv").read_text().splitlines()
    assert table[0].startswith("model,framing,n_benign,over_refusal")
    assert table[0].endswith("claims_benign,over_refusal_lo,over_refusal_hi,unlabeled_fallacy_lo,"
                             "unlabeled_fallacy_hi,claims_manipulative,refusal_lo,refusal_hi")  # fmt: skip
    assert any(line.startswith("vllm/m,all,16,1.0,0.0,30,0.0") for line in table), table
