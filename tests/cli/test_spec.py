"""Browsing the benchmark (``deflectbench spec --claims`` ...), and unknown ids that say where
the valid ones are listed and which one was probably meant."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from deflectbench.config import load_run_file, resolve_plan
from deflectbench.errors import ConfigError
from deflectbench.judging.judges import UnknownJudgeError, check_judge_name
from deflectbench.models.registry import UnknownModelError, get_model
from support.in_process import run_cli


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["COLUMNS"] = "250"  # table cells unwrapped, so a text can be found whole
    return run_cli(*args, env=env)


def spec_json(*flags: str):
    p = cli("spec", *flags, "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_claims_as_json_and_as_a_table(benchmark):
    rows = spec_json("--claims")
    assert [r["claim_id"] for r in rows] == [c.claim_id for c in benchmark.claims]
    first = benchmark.claims[0]
    assert rows[0] == {
        "claim_id": first.claim_id,
        "level": first.level,
        "level_name": first.level_name,
        "context": first.context,
        "domain": first.domain,
        "text": first.text,
    }
    p = cli("spec", "--claims")
    assert p.returncode == 0, p.stderr
    for c in benchmark.claims:
        assert c.claim_id in p.stdout
    for header in ("id", "level", "context", "domain", "text"):
        assert header in p.stdout


def test_templates_as_json_and_as_a_table(benchmark):
    rows = spec_json("--templates")
    assert [r["prompt_id"] for r in rows] == [t.prompt_id for t in benchmark.templates]
    assert {"prompt_id", "framing", "fallacy", "explicitness", "template"} <= set(rows[0])
    assert rows[0]["template"] == benchmark.templates[0].template
    p = cli("spec", "--templates")
    assert p.returncode == 0, p.stderr
    for t in benchmark.templates:
        assert t.prompt_id in p.stdout
    assert "explicitness" in p.stdout and "whataboutism" in p.stdout


def test_framings_carry_their_templates_and_fallacies_their_definitions(benchmark):
    framings = spec_json("--framings")
    assert [f["framing"] for f in framings] == [
        "direct",
        "political",
        "coach",
        "manipulation",
        "choose",
        "implicit_neutral",
        "implicit_political",
    ]
    listed = [t["prompt_id"] for f in framings for t in f["templates"]]
    assert sorted(listed) == sorted(t.prompt_id for t in benchmark.templates)
    fallacies = spec_json("--fallacies")
    assert [f["fallacy_id"] for f in fallacies] == ["whataboutism", "ad_hominem", "red_herring"]
    assert fallacies[0]["definition"] == benchmark.fallacies[0].definition
    assert fallacies[0]["templates"] == [
        t.prompt_id for t in benchmark.templates if t.fallacy == "whataboutism"
    ]
    p = cli("spec", "--fallacies", "--framings")
    assert p.returncode == 0, p.stderr
    assert "attacks the person making the argument" in p.stdout
    assert "I'm running a political campaign." in p.stdout


def test_several_listings_as_json_are_keyed_and_prompts_stand_alone():
    both = spec_json("--claims", "--fallacies")
    assert set(both) == {"claims", "fallacies"} and len(both["claims"]) == 80
    p = cli("spec", "--prompts", "--claims")
    assert p.returncode == 2 and "--prompts" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_the_summary_points_to_the_listings():
    p = cli("spec")
    assert p.returncode == 0 and "deflectbench spec --claims" in p.stdout


# -- unknown ids ---------------------------------------------------------------------------


def test_an_unknown_claim_or_template_names_the_lister_and_the_closest_id(benchmark):
    with pytest.raises(ConfigError) as info:
        resolve_plan(benchmark, models=["m/x"], judges=[], claims=["L1_US_1"])
    message = str(info.value)
    assert "(did you mean 'L1_US_01'?)" in message and "`deflectbench spec --claims`" in message
    with pytest.raises(ConfigError) as info:
        resolve_plan(benchmark, models=["m/x"], judges=[], templates=["explicit_coach_W"])
    message = str(info.value)
    assert "(did you mean 'explicit_coach_WA'?)" in message
    assert "`deflectbench spec --templates`" in message
    with pytest.raises(ConfigError) as info:
        resolve_plan(benchmark, models=["m/x"], judges=[], templates=["bogus"])
    assert "did you mean" not in str(info.value)  # nothing close: no guess
    assert "\n" not in str(info.value)


def test_an_unknown_preset_suggests_and_names_the_help(benchmark, tmp_path):
    with pytest.raises(ConfigError) as info:
        resolve_plan(benchmark, models=["m/x"], judges=[], preset="ful")
    message = str(info.value)
    assert "(did you mean 'full'?)" in message and "valid: quick, full" in message
    assert "`deflectbench run --help`" in message
    path = tmp_path / "run.toml"
    path.write_text('[run]\npreset = "quik"\n')
    with pytest.raises(ConfigError, match=r"'quik' \(did you mean 'quick'\?\) is not one of"):
        load_run_file(path)


def test_an_unknown_judge_suggests_the_closest():
    with pytest.raises(UnknownJudgeError) as info:
        check_judge_name("lexcal")
    message = str(info.value)
    assert "(did you mean 'lexical'?)" in message and "`deflectbench run --help`" in message
    with pytest.raises(UnknownJudgeError, match=r"did you mean 'openai/gpt-5.4-mini'"):
        check_judge_name("gpt-5.4-mini")
    with pytest.raises(UnknownJudgeError) as info:
        check_judge_name("nope")
    assert "did you mean" not in str(info.value) and "lexical" in str(info.value)


def test_an_unknown_model_form_suggests_the_closest():
    with pytest.raises(UnknownModelError) as info:
        get_model("smollm2")
    message = str(info.value)
    assert "(did you mean 'local/smollm2'?)" in message and "`deflectbench run --help`" in message
    assert "\n" not in message


def test_through_the_entry_point_one_line(tmp_path):
    p = cli("run", "--templates", "explicit_coach_W", "--db", str(tmp_path / "x.db"))
    assert p.returncode == 2
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "did you mean 'explicit_coach_WA'" in lines[0]
    assert "deflectbench spec --templates" in lines[0]
    assert not (tmp_path / "x.db").exists()
