"""The dry run, tried as a new user would (issue 33, point 7): it refuses a condition label the
run refuses (the store's one check, word for word), names the API keys the run would ask for,
warns when the expected cost runs past --max-cost, and says where its expected tokens come
from."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from deflectbench.dry_run import Estimate, EstimateRow
from support.cli_runs import write_toml
from support.fakes import CLAIMS, TEMPLATES, reply
from support.in_process import run_cli

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str | Path, keys: bool = False):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("DEFLECTBENCH_DB", None)
    if keys:
        env |= {"OPENAI_API_KEY": "sk-test-0000", "ANTHROPIC_API_KEY": "sk-ant-test-0000"}
    return run_cli(*args, env=env | {"COLUMNS": "200"})


@pytest.fixture
def server(llm_server):
    return llm_server.reset(reply=reply)


def run_file(tmp_path: Path, server, **run: object) -> Path:
    return write_toml(
        tmp_path / "run.toml",
        {
            "run": {
                "models": ["vllm/test-model"],
                "judges": ["lexical"],
                "claims": CLAIMS,
                "templates": TEMPLATES,
                "samples": 1,
                "max_tokens": 32,
                **run,
            },
            "providers.vllm": {"base_url": server.openai_base_url, "max_retries": 0},
        },
    )


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--label", "first", "--max-tokens", "40"], "was run with other settings"),
        (["--label", "second"], "already stored as condition 'first'"),
    ],
)
def test_the_dry_run_refuses_a_label_the_run_refuses(tmp_path, server, flags, words):
    db = tmp_path / "x.db"
    cfg = run_file(tmp_path, server)
    first = cli(
        "run", "--config", cfg, "--db", db, "--label", "first", "--no-progress", "--no-report"
    )
    assert first.returncode == 0, first.stderr
    sent = len(server.requests)

    dry = cli("run", "--config", cfg, "--db", db, "--dry-run", *flags)
    real = cli("run", "--config", cfg, "--db", db, "--no-progress", "--no-report", *flags)
    assert dry.returncode == real.returncode == 2, (dry.stdout, real.stdout)
    refusal = [x for x in real.stderr.splitlines() if words in x]
    assert refusal and refusal[0] in dry.stderr.splitlines(), (dry.stderr, real.stderr)
    assert "to send" not in dry.stdout  # no table of counts under a label the run refuses
    assert len(server.requests) == sent  # neither sent anything
    # The same settings under their own label: the dry run shows all done, nothing to send.
    again = cli("run", "--config", cfg, "--db", db, "--dry-run", "--label", "first")
    assert again.returncode == 0, again.stderr
    row = next(x for x in again.stdout.splitlines() if "vllm/test-model" in x).split()
    assert "4" in row and "0" in row


def readme_run_file(tmp_path: Path) -> Path:
    readme = (ROOT / "README.md").read_text()
    block = readme[readme.index("# run.toml  ->") :]
    (tmp_path / "run.toml").write_text(block[: block.index("```")])
    return tmp_path / "run.toml"


def test_the_dry_run_names_missing_keys_as_the_run_does(tmp_path):
    cfg = readme_run_file(tmp_path)
    dry = cli("run", "--config", cfg, "--dry-run", "--db", tmp_path / "x.db")
    real = cli("run", "--config", cfg, "--db", tmp_path / "x.db", "--no-progress", "--no-report")
    assert dry.returncode == 0 and real.returncode == 2, (dry.stderr, real.stderr)
    said = " ".join(real.stderr.split())
    assert "API keys missing" in said and "OPENAI_API_KEY" in said
    dry_text = " ".join(dry.stdout.split())
    message = said[said.index("2 API keys missing") :].rstrip(".")
    assert f"the run would be refused: {message}" in dry_text
    assert not (tmp_path / "x.db").exists()
    # With the keys set nothing is said of them.
    keyed = cli("run", "--config", cfg, "--dry-run", "--db", tmp_path / "x.db", keys=True)
    assert keyed.returncode == 0 and "API key" not in keyed.stdout


def test_the_dry_run_warns_when_the_expected_cost_runs_past_the_budget(tmp_path):
    cfg = readme_run_file(tmp_path)
    over = cli("run", "--config", cfg, "--dry-run", "--max-cost", "150", keys=True)
    text = " ".join(over.stdout.split())
    assert over.returncode == 0, over.stderr
    expected = text[text.index("estimated cost: ") :].split()[2]
    assert float(expected.replace(",", "")) > 150
    assert f"expected cost {expected} USD exceeds --max-cost 150.00 USD" in text
    under = cli("run", "--config", cfg, "--dry-run", "--max-cost", "1000", keys=True)
    assert "exceeds --max-cost" not in under.stdout
    # And it says where the expected output tokens come from.
    assert "a typical reply (400 tokens: none stored yet)" in text
    assert "a JSON verdict (90 tokens a request)" in text


def test_expected_tokens_come_from_the_stored_replies_once_there_are_some(tmp_path, server):
    db = tmp_path / "x.db"
    cfg = run_file(tmp_path, server, claims=CLAIMS[:1])
    assert cli("run", "--config", cfg, "--db", db, "--no-progress", "--no-report").returncode == 0
    more = cli("run", "--config", run_file(tmp_path, server), "--db", db, "--dry-run")
    assert more.returncode == 0, more.stderr
    assert "expected output tokens of vllm/test-model: the mean of its stored replies" in (
        " ".join(more.stdout.split())
    )


def test_the_budget_warning_counts_what_the_store_has_spent():
    row = EstimateRow("model", "openai/x", 0, 10, 100, 100, 200, 6.0, 12.0)
    assert Estimate((row,), 10, max_cost=10.0).warnings == ()
    (said,) = Estimate((row,), 10, max_cost=10.0, spent_usd=5.0).warnings
    assert "expected cost 6.00 USD plus 5.00 USD this store has spent exceeds --max-cost" in said
    assert Estimate((row,), 10).warnings == ()  # no budget, nothing to run past
