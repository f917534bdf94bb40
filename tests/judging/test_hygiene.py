"""Judge hygiene (issue 27, item 4): a judge that is the subject model is refused unless
allowed, with one line saying why; an even number of judges states its tie rule."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from deflectbench.analysis.summary.validity_checks import tie_rule
from deflectbench.errors import ConfigError
from deflectbench.judging.hygiene import check_self_judging, model_id, same_model, self_judges
from support.cli_runs import write_toml
from support.in_process import run_cli
from support.servers import FakeLLMServer


def test_provider_prefix_and_snapshot_date_are_the_same_model():
    assert model_id("openai/gpt-5.4-mini") == "gpt-5.4-mini"
    assert same_model("openai/gpt-5.4-mini", "openrouter/openai/gpt-5.4-mini")
    assert same_model("anthropic/claude-haiku-4-5-20251001", "openrouter/claude-haiku-4-5")
    assert same_model("openai/gpt-4o", "azure/gpt-4o-2024-08-06")
    assert not same_model("openai/gpt-5.4-mini", "openai/gpt-5.4")
    assert not same_model("openai/gpt-5.5", "openai/gpt-5.5-mini")


def test_a_self_judge_is_refused_in_one_line_unless_allowed():
    with pytest.raises(ConfigError) as e:
        check_self_judging(
            ["openai/gpt-5.5", "local/smollm2"], ["openrouter/openai/gpt-5.5"], False
        )
    text = str(e.value)
    assert "\n" not in text
    assert "openrouter/openai/gpt-5.5" in text and "openai/gpt-5.5" in text
    assert "--allow-self-judging" in text
    check_self_judging(["openai/gpt-5.5"], ["openai/gpt-5.5"], True)  # allowed: no error
    check_self_judging(["local/smollm2"], ["lexical", "openai/gpt-5.5"], False)
    assert self_judges(["lexical"], ["lexical"]) == []  # the rule-based judge is no model


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("DEFLECTBENCH_DB", None)
    env["COLUMNS"] = "200"
    return env


def _config(tmp_path: Path, base_url: str) -> Path:
    return write_toml(
        tmp_path / "run.toml",
        {
            "run": {
                "models": ["vllm/m"],
                "judges": ["other/m"],
                "claims": ["L1_US_01"],
                "templates": ["explicit_direct_WA"],
                "runs": 1,
            },
            "providers.vllm": {"base_url": base_url, "max_retries": 0},
            "providers.other": {"base_url": base_url, "max_retries": 0},
        },
    )


def test_run_dry_run_and_judge_refuse_a_self_judge(tmp_path):
    with FakeLLMServer(reply=lambda req: "x") as server:
        cfg = _config(tmp_path, server.openai_base_url)
        db = tmp_path / "x.db"
        for extra in ((), ("--dry-run",)):
            p = run_cli("run", "--config", cfg, "--db", db, "--no-progress", *extra, env=_env())
            assert p.returncode == 2, (extra, p.stdout, p.stderr)
            line = " ".join(p.stderr.split())
            assert "is the subject model" in line and "--allow-self-judging" in line, line
            assert "Traceback" not in p.stderr
        assert not db.exists() or server.stats.requests == 0
        # a lexical run stores the model's answers; then judging them with the same model
        p = run_cli("run", "--config", cfg, "-j", "lexical", "--db", db, "--no-progress",
                    "--no-report", env=_env())  # fmt: skip
        assert p.returncode == 0, (p.stdout, p.stderr)
        p = run_cli(
            "judge", "-j", "other/m", "--config", cfg, "--db", db, "--no-progress", env=_env()
        )
        assert p.returncode == 2, (p.stdout, p.stderr)
        assert "judge other/m is the subject model vllm/m" in " ".join(p.stderr.split())


def test_allow_self_judging_lets_it_run(tmp_path):
    verdict = json.dumps({"reasoning": "r", **dict.fromkeys(
        ["refusal", "soft_refusal", "WA_present", "AH_present", "RH_present",
         "any_fallacy_present", "compliance_clean", "fallacy_labeled"], 0)})  # fmt: skip
    with FakeLLMServer(reply=lambda req: verdict) as server:
        cfg = _config(tmp_path, server.openai_base_url)
        p = run_cli("run", "--config", cfg, "--db", tmp_path / "x.db", "--no-progress",
                    "--no-report", "--allow-self-judging", env=_env())  # fmt: skip
    assert p.returncode == 0, (p.stdout, p.stderr)


def test_an_even_number_of_judges_states_its_tie_rule():
    two = tie_rule(["a/x", "b/y"])
    assert two is not None and "OR" in two and "either" in two
    assert "2-2" in (tie_rule(["a", "b", "c", "d"]) or "")
    assert tie_rule(["a", "b", "c"]) is None
    assert tie_rule(["a"]) is None
    assert tie_rule(["a", "b"], "all") is None
