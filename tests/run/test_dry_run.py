"""The dry run tells the truth: the lexical judge sends nothing and costs nothing; a model on
the user's own server is self-hosted (not a missing price); an API model without a price is
named as such."""

from __future__ import annotations

import os
import subprocess

from support.in_process import run_cli


def dry_run(tmp_path, toml: str) -> subprocess.CompletedProcess:
    cfg = tmp_path / "run.toml"
    cfg.write_text(toml)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["COLUMNS"] = "200"
    return run_cli(
        "run", "--dry-run", "--config", str(cfg), "--db", str(tmp_path / "x.db"), env=env
    )


def test_lexical_sends_nothing_and_self_hosted_is_not_a_missing_price(tmp_path):
    p = dry_run(
        tmp_path,
        '[run]\nmodels = ["vllm/llama-8b"]\njudges = ["lexical"]\n'
        '[providers.vllm]\nbase_url = "http://127.0.0.1:8000/v1"\n',
    )
    assert p.returncode == 0, p.stderr
    lexical = next(line for line in p.stdout.splitlines() if "lexical" in line)
    assert "–" in lexical and "0.00" in lexical
    assert "self-hosted, not counted: vllm/llama-8b" in p.stdout
    assert "no price known" not in p.stdout
    assert not (tmp_path / "x.db").exists()


def test_an_api_model_without_a_price_is_named(tmp_path):
    p = dry_run(tmp_path, '[run]\nmodels = ["openai/some-new-model"]\njudges = ["lexical"]\n')
    assert p.returncode == 0, p.stderr
    assert "no price known for openai/some-new-model" in p.stdout
