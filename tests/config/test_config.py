"""Presets, plans, the TOML run file, prices and secret scrubbing."""

from __future__ import annotations

import pytest

from deflectbench.config import (
    ConfigError,
    RunConfig,
    build_models,
    load_run_file,
    quick_claims,
    resolve_plan,
    resolve_run,
)
from deflectbench.cost import CostMeter, Price, price_for
from deflectbench.pipeline import cell_seed
from deflectbench.secrets import REDACTED, scrub


def test_quick_preset_is_2_claims_per_level_one_us_one_international(benchmark):
    claims = quick_claims(benchmark)
    assert [c.claim_id for c in claims] == [
        "L1_US_01",
        "L1_INT_01",
        "L2_US_01",
        "L2_INT_01",
        "L3_US_01",
        "L3_INT_01",
        "L4_US_01",
        "L4_INT_01",
    ]
    plan = resolve_plan(benchmark, models=["local/smollm2"], judges=["lexical"])
    assert plan.preset == "quick" and plan.runs == 1 and len(plan.cells) == 120


def test_full_preset_is_80_x_15_x_5(benchmark):
    plan = resolve_plan(benchmark, models=["m/x"], judges=["lexical"], preset="full")
    assert len(plan.cells) == 6000 and len(set(plan.cells)) == 6000
    assert {s for _, _, s in plan.cells} == {1, 2, 3, 4, 5}


def test_overrides_and_errors(benchmark):
    plan = resolve_plan(
        benchmark,
        models=["m/x"],
        judges=["lexical"],
        claims=["L3_US_01"],
        runs=3,
        templates=["explicit_coach_WA"],
    )
    assert plan.cells == [("L3_US_01", "explicit_coach_WA", s) for s in (1, 2, 3)]
    with pytest.raises(ConfigError, match="unknown preset 'big'; valid: quick, full"):
        resolve_plan(benchmark, models=["m/x"], judges=[], preset="big")
    with pytest.raises(ConfigError, match="runs must be at least 1"):
        resolve_plan(benchmark, models=["m/x"], judges=[], runs=0)


def test_cell_seed_is_stable_and_distinct():
    a = cell_seed(0, "local/smollm2", "L1_US_01", "explicit_direct_WA", 1)
    assert a == cell_seed(0, "local/smollm2", "L1_US_01", "explicit_direct_WA", 1)
    assert a != cell_seed(0, "local/smollm2", "L1_US_01", "explicit_direct_WA", 2)
    assert a != cell_seed(1, "local/smollm2", "L1_US_01", "explicit_direct_WA", 1)
    assert 0 <= a < 2**31


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[run]\nmodelz = []", "unknown key 'run.modelz'; allowed: models, judges"),
        ("[run]\nruns = 0", "key 'run.runs'"),
        ('[run]\npreset = "huge"', "'huge' is not one of quick, full"),
        ("[runn]\nx = 1", "unknown key 'runn'; allowed: run, providers, prices"),
        ('[providers.openai]\napi_key = "sk-1"', "API keys never go in files"),
        ('[providers.openai]\nmax_concurrency = "lots"', "key 'providers.openai.max_concurrency'"),
        (
            '[prices."a/b"]\ninput_per_mtok = -1\noutput_per_mtok = 1',
            "key 'prices.a/b.input_per_mtok'",
        ),
        ("[run\n", "not valid TOML"),
    ],
)
def test_bad_run_file_is_one_line_naming_the_key(tmp_path, text, message):
    p = tmp_path / "run.toml"
    p.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_run_file(p)
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_good_run_file(tmp_path):
    p = tmp_path / "run.toml"
    p.write_text(
        '[run]\nmodels = ["openai/gpt-5.5"]\npreset = "full"\nmax_cost = 20.5\n'
        "[providers.openai]\nmax_concurrency = 64\nrequests_per_minute = 500\n"
        '[prices."openai/gpt-5.5"]\ninput_per_mtok = 1.25\noutput_per_mtok = 10\n'
    )
    f = load_run_file(p)
    assert f.run.models == ["openai/gpt-5.5"] and f.run.max_cost == 20.5
    assert f.providers["openai"]["max_concurrency"] == 64
    assert f.prices["openai/gpt-5.5"].output_per_mtok == 10


def test_flags_win_over_the_run_file_over_the_defaults(benchmark, tmp_path):
    p = tmp_path / "run.toml"
    p.write_text(
        '[run]\nmodels = ["a/b"]\njudges = ["lexical"]\nruns = 2\nseed = 7\ncache = true\n'
        "max_cost = 3.0\ntemperature = 0.5\n"
        '[prices."a/b"]\ninput_per_mtok = 1\noutput_per_mtok = 2\n'
    )
    file = load_run_file(p)
    s = resolve_run(benchmark, file.config())
    assert s.plan.models == ("a/b",) and s.plan.judges == ("lexical",)
    assert (s.plan.runs, s.plan.seed, s.plan.temperature) == (2, 7, 0.5)
    assert s.config.cache is True and s.config.max_cost == 3.0
    assert s.prices == {"a/b": Price(1.0, 2.0)} and s.file["run"]["models"] == ["a/b"]
    flags = RunConfig.given(dict(models=["c/d"], samples=1, seed=0, cache=False, max_cost=0.5))
    s = resolve_run(benchmark, file.config().merged(flags))
    assert s.plan.models == ("c/d",) and s.plan.runs == 1 and s.plan.seed == 0
    assert s.config.cache is False and s.config.max_cost == 0.5


def test_run_defaults_without_a_file(benchmark):
    s = resolve_run(benchmark, RunConfig.given(dict(models=[], judges=())), env={})
    assert s.plan.models == ("local/smollm2",) and s.plan.judges == ("lexical",)
    assert s.plan.preset == "quick" and len(s.plan.cells) == 120
    assert s.config.cache is True and s.config.max_cost is None and s.prices == {}
    keys = {"ANTHROPIC_API_KEY": "x", "OPENAI_API_KEY": "y"}
    assert len(resolve_run(benchmark, RunConfig(), env=keys).plan.judges) == 2
    with pytest.raises(ConfigError, match="unknown preset 'huge'"):
        resolve_run(benchmark, RunConfig.given(dict(preset="huge")))


def test_a_dry_run_builds_api_models_without_keys(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        build_models(["openai/gpt-5.5"], ["lexical"])
    built = build_models(["openai/gpt-5.5"], ["lexical", "openai/gpt-5.5"], dry_run=True)
    assert list(built) == ["openai/gpt-5.5"]


def test_prices_exact_override_then_wildcard_and_unknown():
    assert price_for("anthropic/claude-haiku-4-5-20251001") == Price(
        1.0, 5.0, batch_discount=0.5
    )  # the batch API costs half
    assert price_for("local/smollm2") == Price(0.0, 0.0)
    assert price_for("openai/some-new-model") is None  # never silently free
    assert price_for("openai/gpt-5.5", {"openai/gpt-5.5": Price(2, 3)}) == Price(2, 3)  # overridden
    assert Price(1.0, 5.0).cost(1_000_000, 200_000) == pytest.approx(2.0)


def test_cost_meter_budget():
    meter = CostMeter(1.0, {"x/y": Price(100.0, 100.0)})
    meter.add("x/y", 5_000, 4_000)
    assert meter.spent_usd == pytest.approx(0.9) and not meter.exceeded
    meter.add("x/y", 1_000, 0)
    assert meter.exceeded
    meter.add("unpriced/model", 10, 10)
    assert meter.unpriced_tokens == 20


def test_scrub_removes_credentials_from_text():
    env = {"OPENAI_API_KEY": "sk-live-abcdefghijkl", "HOME": "/root", "SHORT_KEY": "abc"}
    text = "401: Incorrect API key provided: sk-live-abcdefghijkl (home /root, abc)"
    assert scrub(text, env) == f"401: Incorrect API key provided: {REDACTED} (home /root, abc)"
