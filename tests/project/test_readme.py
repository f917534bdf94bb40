"""Every `deflectbench ...` command and every Python block in the README runs as written.

Commands run through the real entry point in a folder holding what the README assumes: a
`deflectbench.db` with results, the release's files under `release/data/`, and the `run.toml`
shown in the README (its providers pointed at a local test server). A `run` that would send
requests runs with `--dry-run` appended (it prints what it would send and spends nothing); the
embedded-model run itself is covered by tests/models/test_local_model.py. A README example that stops
working fails here.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from deflectbench.benchmark import default_benchmark
from deflectbench.interop import import_paths
from deflectbench.store import Store
from support.fixtures import write_release_fixture

README = Path(__file__).resolve().parents[2] / "README.md"
FENCE = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)


def blocks(kind: str) -> list[str]:
    return [body for lang, body in FENCE.findall(README.read_text()) if lang == kind]


def commands() -> list[str]:
    out = []
    for body in blocks("bash"):
        for line in body.splitlines():
            line = line.split("  #")[0].strip()  # drop trailing comments
            if line.startswith("deflectbench "):
                out.append(line)
    return out


def toml_config() -> str:
    (config,) = [b for b in blocks("toml") if "[run]" in b]
    return config


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    b = default_benchmark()
    work = tmp_path_factory.mktemp("readme")
    release = work / "release" / "data"
    write_release_fixture(
        release,
        models=("gpt-5.5", "claude-opus-4-7"),
        claims=[c.claim_id for c in b.claims[::10]],
        runs=1,
        seed=11,
    )
    # paper.db too, as the README's `import ... --db paper.db` writes it: under pytest-xdist the
    # commands that read it may run on a worker that never ran that import (its own workdir)
    for db in ("deflectbench.db", "paper.db"):
        with Store.open(work / db) as store:
            import_paths(store, [release], b)
    config = toml_config()
    # the README's own server for `vllm`: point it at a port nothing listens on (dry run only)
    (work / "run.toml").write_text(config)
    return work


def test_the_readme_has_examples_to_run():
    assert len(commands()) >= 10 and blocks("python")


@pytest.mark.parametrize("command", commands())
def test_readme_command_runs(workdir, command):
    argv = shlex.split(command)[1:]
    if argv[0] == "run" and "--dry-run" not in argv:
        argv.append("--dry-run")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(OPENAI_API_KEY="sk-readme-test-key-0000", ANTHROPIC_API_KEY="sk-ant-readme-0000")
    p = subprocess.run(
        [sys.executable, "-m", "deflectbench", *argv],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert p.returncode == 0, (command, p.stdout[-2000:], p.stderr[-2000:])


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_readme_python_block_runs(workdir, index):
    code = blocks("python")[index]
    p = subprocess.run(
        [sys.executable, "-c", code], cwd=workdir, capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, (code, p.stdout[-2000:], p.stderr[-2000:])
