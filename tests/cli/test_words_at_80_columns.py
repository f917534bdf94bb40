"""Words a newcomer reads (issue 23, item 13), at 80 terminal columns: no help text renders a
line as a block quote (">= 0.5" read as "= 0.5"), and `spec --list` never cuts a pack id a
user must type after --benchmark."""

from __future__ import annotations

import os

import pytest

from deflectbench.benchmark import shipped_packs
from support.in_process import run_cli

COMMANDS = ["run", "judge", "status", "analyze", "report", "audit", "validate", "calibrate",
            "annotate", "view", "import", "export", "spec", "batch"]  # fmt: skip


def cli(*args: str):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return run_cli(*args, env=env | {"COLUMNS": "80"})


@pytest.mark.parametrize("command", COMMANDS)
def test_no_help_line_is_a_block_quote(command):
    p = cli(command, "--help")
    assert p.returncode == 0, p.stderr
    assert "▌" not in p.stdout, p.stdout  # rich's block quote: a docstring line began with ">"


def test_analyze_help_says_at_least_one_half():
    text = " ".join(cli("analyze", "--help").stdout.split())
    assert "at least 0.5" in text


def test_spec_list_never_cuts_a_pack_id_at_80_columns():
    p = cli("spec", "--list")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    for name in shipped_packs():
        assert any(line.split()[:1] == [name] for line in lines), (name, p.stdout)
    assert "…" not in p.stdout
    assert all(len(line) <= 80 for line in lines[:-1])
    print(p.stdout)
