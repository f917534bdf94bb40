"""docs/configuration.md is what the code generates, and what it says about defaults is true."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from deflectbench.config import PRESETS, PriceEntry, RunConfig, resolve_run
from deflectbench.config.run_config import run_keys
from deflectbench.config_reference import REGENERATE, reference_markdown
from deflectbench.models.providers import PROVIDERS, ProviderConfig
from deflectbench.models.registry import DEFAULT_MODEL

DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_the_document_equals_what_the_code_generates():
    expected = reference_markdown()
    assert DOC.read_text(encoding="utf-8") == expected, f"regenerate it: {REGENERATE}"
    assert REGENERATE in expected.splitlines()[2]  # the way to regenerate it, at the top


def test_the_module_prints_the_document():
    p = subprocess.run(
        [sys.executable, "-m", "deflectbench.config_reference"],
        capture_output=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.decode("utf-8") == reference_markdown()


def test_every_key_is_documented_with_a_meaning():
    text = reference_markdown()
    for model, keys in ((RunConfig, run_keys()), (ProviderConfig, None), (PriceEntry, None)):
        for name, field in model.model_fields.items():
            if keys is not None and name not in keys:  # its tables: sections of their own
                continue
            assert field.description, f"{model.__name__}.{name} has no description"
            assert f"| `{name}` |" in text
    for name in PROVIDERS:
        assert f"| `{name}` |" in text
    assert '`"quick"`, `"full"`' in text and all(p in text for p in PRESETS)
    assert "| 1 to 100 |" in text  # runs: ge=1 from the model, the maximum from MAX_RUNS
    assert '`"openai"`, `"anthropic"`' in text  # a Literal's choices
    assert "| `input_per_mtok` | float | required | 0 to 10,000 |" in text


def test_the_documented_run_defaults_are_the_real_ones(benchmark):
    s = resolve_run(benchmark, RunConfig(), env={})
    fields = RunConfig.model_fields
    assert s.plan.models == (DEFAULT_MODEL,)
    assert f"Default: {DEFAULT_MODEL}." in fields["models"].description
    assert s.plan.judges == ("lexical",) and "else lexical" in fields["judges"].description
    assert s.plan.preset == "quick" and "Default: quick." in fields["preset"].description
    assert s.plan.runs == 1 and "quick 1" in fields["samples"].description
    assert s.plan.seed == 0 and "Default: 0." in fields["seed"].description
    assert s.config.cache is True and "Default: true." in fields["cache"].description
    assert (
        s.config.allow_unpriced is False
        and "Default: false." in fields["allow_unpriced"].description
    )
    assert s.config.max_cost is None and "no budget" in fields["max_cost"].description
    full = resolve_run(benchmark, RunConfig(preset="full"), env={})
    assert (
        full.plan.runs == benchmark.runs_per_cell == 5 and "full 5" in fields["samples"].description
    )
    assert f"({benchmark.generation_temperature:.1f} for v1)" in fields["temperature"].description
