"""docs/exports.md lists the generations table's columns in the order they are written
(issue 23, item 13)."""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path

from deflectbench.benchmark import default_benchmark
from support.in_process import run_cli
from support.report_store import make_store

DOC = Path(__file__).resolve().parents[2] / "docs" / "exports.md"


def _documented() -> list[str]:
    """The column names of the doc's first table, in order, each judge column as <judge>."""
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("| column | type | meaning |") :].split("\n\n")[0]
    names: list[str] = []
    for line in table.splitlines()[2:]:
        first = line.split("|")[1]
        for name in re.findall(r"`([^`]+)`", first):
            names.append("<judge>" if name.startswith("<judge>__") else name)
    return names


def _collapse(names: list[str]) -> list[str]:
    out: list[str] = []
    for n in names:
        if not out or out[-1] != n:
            out.append(n)
    return out


def test_the_documented_order_is_the_written_order(tmp_path):
    db = make_store(tmp_path / "s.db", default_benchmark(), hostile=False)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    p = run_cli("export", "--format", "csv", "--out", tmp_path / "out", "--db", db, env=env)
    assert p.returncode == 0, p.stderr
    with (tmp_path / "out" / "generations.csv").open(encoding="utf-8", newline="") as fh:
        header = next(csv.reader(fh))
    written = _collapse(["<judge>" if "__" in c else c for c in header])
    assert _collapse(_documented()) == written


def test_the_inspect_doc_says_how_to_reach_ones_own_server_and_what_mockllm_needs():
    text = (DOC.parent / "inspect.md").read_text(encoding="utf-8")
    assert "VLLM_BASE_URL" in text and "vllm/" in text
    assert "mockllm" in text and "tiktoken" in text and "network once" in text
