"""Hostile flags and run files: each gets one line naming the limit, exit 2, nothing sent.

And nothing that can hold a credential reaches the configuration stored with a run.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from deflectbench.config import RunFile, load_run_file, redacted, resolve_run
from support.in_process import run_cli


def cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return run_cli(*args, env=env, cwd=cwd)


def one_line(p: subprocess.CompletedProcess) -> str:
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    lines = [x for x in p.stderr.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--max-cost", "nan"], "--max-cost must be a finite number of USD above 0"),
        (["--max-cost", "inf"], "--max-cost must be a finite number of USD above 0"),
        (["--max-cost", "-1"], "--max-cost must be a finite number of USD above 0"),
        (["--max-cost", "0"], "--max-cost must be a finite number of USD above 0"),
        (["--max-cost", "1e12"], "--max-cost must be from 0 to 1e+06"),
        (["--runs", "1000000"], "runs must be from 1 to 100"),
        (["--runs", "0"], "runs must be at least 1"),
        (["--max-tokens", "1000000000"], "max_tokens must be from 1 to 200000"),
        (["--seed", "-1"], "seed must be from 0"),
        (["--label", "legacy"], "reserved"),
        (["--label", "has space"], "--label 'has space'"),
        (["--claims", "L9_XX_99"], "unknown claim 'L9_XX_99'"),
    ],
)
def test_hostile_run_flags_get_one_line(tmp_path, flags, expected):
    line = one_line(cli("run", "--dry-run", "--db", str(tmp_path / "x.db"), *flags))
    assert expected in line, line
    assert not (tmp_path / "x.db").exists()


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ("[run]\ntemperature = nan\n", "run.temperature"),
        ("[run]\nruns = 100000\n", "runs must be from 1 to 100"),
        ("[run]\nmax_cost = -5\n", "--max-cost must be a finite number of USD above 0"),
        ('[prices."openai/x"]\ninput_per_mtok = inf\noutput_per_mtok = 1\n', "input_per_mtok"),
        ('[run]\nlabel = "release"\n', "reserved"),
        ("[run]\nmodels = [" + ",".join(f'"p/m{i}"' for i in range(200)) + "]\n", "models must"),
    ],
)
def test_hostile_run_files_get_one_line(tmp_path, toml, expected):
    cfg = tmp_path / "run.toml"
    cfg.write_text(toml)
    line = one_line(cli("run", "--dry-run", "--config", str(cfg), "--db", str(tmp_path / "x.db")))
    assert expected in line, line


def test_a_huge_run_file_is_refused_before_parsing(tmp_path):
    cfg = tmp_path / "big.toml"
    cfg.write_text("# " + "x" * 2_000_000 + "\n[run]\n")
    line = one_line(cli("run", "--dry-run", "--config", str(cfg)))
    assert "larger than 1,000,000 bytes" in line


def test_the_stored_configuration_holds_no_credentials(tmp_path, benchmark):
    cfg = tmp_path / "run.toml"
    cfg.write_text(
        """
[run]
models = ["vllm/m"]
judges = ["lexical"]

[providers.vllm]
base_url = "http://alice:s3cret-pass@127.0.0.1:8000/v1"
headers = { "X-Tenant" = "tenant-token-123456" }
extra_body = { "reasoning_effort" = "low", "user_token" = "tok-abcdef123456" }
"""
    )
    settings = resolve_run(benchmark, load_run_file(cfg).config())
    stored = json.dumps(settings.file)
    for secret in ("s3cret-pass", "alice", "tenant-token-123456", "tok-abcdef123456", '"low"'):
        assert secret not in stored
    vllm = settings.file["providers"]["vllm"]
    assert vllm["base_url"] == "http://[redacted]@127.0.0.1:8000/v1"
    assert vllm["headers"] == ["X-Tenant"]
    assert vllm["extra_body"] == ["reasoning_effort", "user_token"]


def test_redaction_leaves_a_file_without_secrets_as_it_is():
    file = RunFile().model_dump(mode="json")
    assert redacted(file) == file
