"""``deflectbench.compare`` and ``deflectbench.leaderboard`` from Python: typed results holding
DataFrames (the same numbers the commands print), whose ``to_json()`` equals the commands'
``--json`` on the same stores, whose ``exit_code`` is the command's (the gate's 6), and whose
bad settings raise the one-line error the command prints (exit 2)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import deflectbench
from deflectbench.analysis.compare.api import Comparison
from deflectbench.analysis.compare.leaderboard import Leaderboard
from deflectbench.analysis.compare.select import CompareError
from deflectbench.analysis.compare.thresholds import ThresholdError
from support.compare_store import refusal_store
from support.in_process import run_cli


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    root = tmp_path_factory.mktemp("api")
    a = refusal_store(root / "a.db", {"acme/m": 0.5, "acme/n": 0.3}, n_claims=6)
    b = refusal_store(root / "b.db", {"acme/m": 0.1}, n_claims=6, seed=1, response="<b>x</b>")
    return a, b


@pytest.fixture(scope="module")
def other(tmp_path_factory):
    root = tmp_path_factory.mktemp("api-judges")
    return refusal_store(root / "o.db", {"acme/m": 0.5}, n_claims=6, judges=("judge-a", "judge-z"))


def _cli_json(tmp_path, *args):
    out = tmp_path / "out.json"
    p = run_cli(*args, "--json", out)
    return p, json.loads(out.read_text())


def test_compare_returns_dataframes(stores):
    a, b = stores
    c = deflectbench.compare(str(a), str(b), resamples=200)
    assert isinstance(c, Comparison)
    assert isinstance(c.table, pd.DataFrame) and isinstance(c.flips, pd.DataFrame)
    assert set(c.table.model_a) == {"a.db:acme/m"}  # the model both stores hold
    r = c.table[(c.table.kind == "outcome") & (c.table.measure == "refusal")]
    overall = r[r.scope == "overall"].iloc[0]
    assert overall.ci_hi < 0 < overall.rate_a
    assert len(c.flips) > 0 and set(c.flips.columns) >= {"claim_id", "outcome_a", "outcome_b"}
    assert len(c.rows) == len(c.table) and c.rows[0].model_a == "a.db:acme/m"
    assert c.exit_code == 0 and c.passed and not c.rules


def test_two_models_of_one_store(stores):
    a, _ = stores
    c = deflectbench.compare(f"{a}:acme/m", f"{a}:acme/n", resamples=50)
    assert set(c.table.model_b) == {"a.db:acme/n"}
    with pytest.raises(CompareError, match="no model 'acme/z'"):
        deflectbench.compare(f"{a}:acme/z", f"{a}:acme/n")


def test_compare_to_json_is_the_commands_json(stores, tmp_path):
    a, b = stores
    p, cli = _cli_json(tmp_path, "compare", a, b, "--resamples", "100", "--seed", "3")
    assert p.returncode == 0, p.stderr
    c = deflectbench.compare(a, b, resamples=100, seed=3)  # paths as Path objects too
    assert c.to_json() == cli
    assert json.dumps(c.to_json()) == json.dumps(cli)  # the same keys in the same order


@pytest.mark.parametrize(
    ("rules", "code"),
    [
        (["refusal < -5pp"], 6),
        (["refusal > +5pp", "|refusal| > 48pp"], 0),
        (["refusal < -90pp"], 6),  # a 50% baseline cannot fall 90 points: not tested
        ([], 0),
    ],
)
def test_the_gates_exit_code_is_the_commands(stores, tmp_path, rules, code):
    a, b = stores  # a holds acme/n, b does not: allowed to be absent here
    flags = [x for rule in rules for x in ("--fail-if", rule)]
    p, cli = _cli_json(tmp_path, "compare", b, "--baseline", a, *flags, "--resamples", "100",
                       "--allow-missing", "acme/n")  # fmt: skip
    c = deflectbench.compare(b, baseline=a, fail_if=rules, resamples=100, allow_missing=["acme/n"])
    assert p.returncode == c.exit_code == code, p.stderr
    assert c.to_json() == cli
    assert [f.line() for f in c.failures] == cli["gate"]["failures"]
    assert [x for x in p.stderr.splitlines() if x.startswith("fail: ")] == cli["gate"]["failures"]
    assert cli["method"]["diff"] == "new minus baseline"


def test_bad_settings_raise_what_the_command_says(stores, other):
    a, b = stores
    cases = [
        (CompareError, dict(a=a, b=other), "judged by judge-a, judge-b"),  # the command's exit 2
        (ThresholdError, dict(a=b, baseline=a, fail_if=["refusal <= 5"]), "--fail-if"),
        (CompareError, dict(a=b, b=a, baseline=a), "not both"),
        (CompareError, dict(a=b), "needs two sides"),
    ]
    for error, kwargs, message in cases:
        with pytest.raises(error, match=message):
            deflectbench.compare(**kwargs, resamples=20)
        argv = [str(kwargs["a"]), *([str(kwargs["b"])] if "b" in kwargs else [])]
        argv += ["--baseline", str(kwargs["baseline"])] if "baseline" in kwargs else []
        argv += [x for rule in kwargs.get("fail_if", []) for x in ("--fail-if", rule)]
        p = run_cli("compare", *argv, "--resamples", "20")
        assert p.returncode == 2 and message in p.stderr, p.stderr
    allowed = deflectbench.compare(a, other, allow_judge_change=True, resamples=20)
    assert allowed.judge_notes and all(r.judges_differ for r in allowed.rows)


def test_leaderboard_returns_a_dataframe(stores):
    lb = deflectbench.leaderboard([str(s) for s in stores], resamples=100)
    assert isinstance(lb, Leaderboard) and lb.exit_code == 0
    board = lb.board
    assert list(board.model) == ["acme/m", "acme/n", "acme/m"]
    assert list(board["rank"]) == [1, 2, 3]
    assert board.rate.is_monotonic_decreasing
    assert [r.rank for r in lb.rows] == [1, 2, 3] and not lb.notes


def test_leaderboard_to_json_is_the_commands_json(stores, other, tmp_path):
    args = [*stores, other]
    p, cli = _cli_json(tmp_path, "leaderboard", *args, "--by", "clean_compliance",
                       "--resamples", "100")  # fmt: skip
    assert p.returncode == 0, p.stderr
    lb = deflectbench.leaderboard(args, by="clean_compliance", resamples=100)
    assert json.dumps(lb.to_json()) == json.dumps(cli)
    assert lb.notes and cli["notes"] == lb.notes and lb.judges == "judge-a, judge-b"
