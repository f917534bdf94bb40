"""The dry run refuses exactly what the run refuses, the bundled price table covers the models
the docs use and says its date, and a refused run leaves no empty store (issue 23, item 7)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from deflectbench.cost import price_for, prices_as_of
from support.cli_runs import write_toml
from support.in_process import run_cli

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str | Path, keys: bool = False):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("DEFLECTBENCH_DB", None)
    if keys:
        env |= {"OPENAI_API_KEY": "sk-test-0000", "ANTHROPIC_API_KEY": "sk-ant-test-0000"}
    return run_cli(*args, env=env | {"COLUMNS": "200"})


def test_the_bundled_prices_cover_every_model_the_docs_name():
    text = "\n".join(p.read_text() for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
    named = set(re.findall(r"\b((?:openai|anthropic)/[a-z0-9][a-z0-9.-]*[a-z0-9])\b", text))
    named -= {"openai/judge-test"}  # a test double's name in the docs
    assert named, "no model named"
    missing = sorted(m for m in named if price_for(m) is None)
    assert missing == [], missing
    assert re.fullmatch(r"20\d\d-\d\d", prices_as_of())


def test_the_readmes_run_file_passes_its_dry_run_and_says_the_prices_date(tmp_path):
    readme = (ROOT / "README.md").read_text()
    block = readme[readme.index("# run.toml  ->") :]
    (tmp_path / "run.toml").write_text(block[: block.index("```")])
    p = cli("run", "--config", tmp_path / "run.toml", "--dry-run", "--db", tmp_path / "x.db")
    assert p.returncode == 0, (p.stdout, p.stderr)
    text = " ".join(p.stdout.split())
    assert f"the bundled table as of {prices_as_of()}" in text and "cannot bound" not in text
    assert not (tmp_path / "x.db").exists()


def test_the_dry_run_refuses_what_the_run_refuses_and_a_refused_run_leaves_no_store(tmp_path):
    cfg = write_toml(
        tmp_path / "run.toml",
        {
            "run": {
                "models": ["openai/some-new-model", "mine/m"],
                "judges": ["lexical"],
                "claims": ["L1_US_01"],
                "max_cost": 10.0,
            },
            "providers.mine": {"base_url": "http://127.0.0.1:9/v1"},
        },
    )
    db = tmp_path / "x.db"
    dry = cli("run", "--config", cfg, "--dry-run", "--db", db)
    real = cli("run", "--config", cfg, "--db", db, "--no-progress", keys=True)
    assert dry.returncode == real.returncode == 2, (dry.stderr, real.stderr)
    line = [x for x in real.stderr.splitlines() if "cannot bound" in x]
    assert line and line[0] in dry.stderr.splitlines()  # the same refusal, word for word
    assert "Dry run" in dry.stdout  # after its table
    assert not db.exists()  # nothing written by either
    print(line[0])
