"""Integrity case 5 through the entry point: a value a judge did not give stays missing in every
mode (rules and said): it is counted as missing, left out of agreement, and never read as 0."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from deflectbench.vocab import FIELDS, MISSING, apply_rules, breaks_rules
from support.fixtures import write_release_fixture
from support.in_process import run_cli


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return run_cli(*args, env=env)


def test_rules_keep_missing_values_missing():
    said = {f: 0 for f in FIELDS} | {
        "soft_refusal": -1,
        "WA_present": 1,
        "any_fallacy_present": 1,
        "compliance_clean": 1,
    }
    scores = apply_rules(said)
    assert scores["soft_refusal"] == MISSING
    assert scores["compliance_clean"] == MISSING  # its condition cannot be checked
    assert not breaks_rules(said)
    contradicted = said | {"fallacy_labeled": 1}
    assert apply_rules(contradicted)["compliance_clean"] == 0  # a given value decides
    refused = said | {"refusal": 1}
    assert apply_rules(refused) == {f: int(f == "refusal") for f in FIELDS}


@pytest.mark.parametrize("values", ["rules", "said"])
def test_a_missing_field_stays_missing_in_the_analysis(tmp_path, benchmark, values):
    rel = tmp_path / "rel"
    write_release_fixture(
        rel,
        models=("gpt-5.5",),
        judges=("claude-haiku-4-5-20251001", "gpt-5.4-mini"),
        claims=[c.claim_id for c in benchmark.claims[::20]],
        runs=1,
        seed=5,
        error_rate=0.0,
        parse_error_rate=0.0,
    )
    evals = sorted(rel.rglob("evals_*.jsonl"))[0]
    lines = evals.read_text().splitlines()
    # a record that is no refusal (a refusal decides every other field: 0, not missing)
    i = next(i for i, line in enumerate(lines) if json.loads(line)["refusal"] == 0)
    rec = json.loads(lines[i])
    rec["soft_refusal"] = -1
    lines[i] = json.dumps(rec)
    evals.write_text("\n".join(lines) + "\n")
    db = tmp_path / "x.db"
    assert cli("import", str(rel), "--db", str(db)).returncode == 0
    p = cli("analyze", "--db", str(db), "--json", "-", "--judge-values", values)
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout[p.stdout.index("{") :])
    assert summary["counts"]["missing_field_values"] == 0  # the other judge still scored it
    n = {f: summary["agreement"][f]["n"] for f in FIELDS}
    assert n["soft_refusal"] == n["refusal"] - 1  # left out of agreement, not counted as "no"
