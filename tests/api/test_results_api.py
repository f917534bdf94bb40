"""``deflectbench.analyze``, ``report``, ``audit``, ``import_``, ``export``, ``merge`` and ``spec``
from Python: each typed result's ``to_json()`` (or the files it wrote) equals what the command
prints or writes on the same store, its tables are DataFrames, its exit code the command's, and a
bad setting raises the one-line error the command prints."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import deflectbench
import deflectbench.api.results
from deflectbench.analysis.summary.build import Summary
from deflectbench.errors import ConfigError
from deflectbench.store import StoreError
from deflectbench.vocab import ConsensusError
from support.fixtures import write_release_fixture
from support.in_process import run_cli

CLAIMS = ["L1_INT_01", "L1_US_02", "L2_INT_05", "L3_INT_09", "L3_US_02", "L4_INT_13"]


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("results-api")
    write_release_fixture(
        root / "release", models=("gpt-5.5", "claude-opus-4-7"), claims=CLAIMS, runs=2, seed=5
    )
    return root / "release"


@pytest.fixture(scope="module")
def db(release, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("results-api-db") / "deflectbench.db"
    result = deflectbench.import_(release, db=path)
    assert result.exit_code == 0 and not result.problems
    return path


def _cli(*args) -> str:
    p = run_cli(*args)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_analyze_returns_the_typed_summary_whose_json_is_the_commands(db):
    s = deflectbench.analyze(db, resamples=60, seed=3)
    assert isinstance(s, Summary)
    assert isinstance(s.rates, pd.DataFrame) and set(s.models) == {"gpt-5.5", "claude-opus-4-7"}
    assert s.n_scored == s.to_json()["counts"]["scored"] > 0
    assert s.to_json() == json.loads(
        _cli("analyze", "--db", db, "--resamples", "60", "--seed", "3", "--json", "-")
    )


def test_analyze_settings_are_the_flags(db):
    judge = deflectbench.analyze(db, resamples=20).judges_in_store[-1]
    s = deflectbench.analyze(db, compat="release", judges=judge, resamples=40)
    cli = _cli("analyze", "--db", db, "--compat", "release", "--judge", judge,
               "--resamples", "40", "--json", "-")  # fmt: skip
    assert s.to_json() == json.loads(cli)
    assert s.options.compat == "release" and s.judges == (judge,)


def test_analyze_refuses_what_the_command_refuses(db, tmp_path):
    with pytest.raises(StoreError, match="no results at --db"):
        deflectbench.analyze(tmp_path / "missing.db")
    with pytest.raises(ConsensusError, match="--compat release reproduces"):
        deflectbench.analyze(db, compat="release", consensus="all")
    with pytest.raises(ConfigError, match="unknown mutation kind"):
        deflectbench.api.results.mutate("deflectbench-v1", kinds="nonsense")


def test_audit_json_is_the_commands(db):
    a = deflectbench.audit(db)
    assert not a.empty and isinstance(a.release.moves, pd.DataFrame)
    assert a.to_json() == json.loads(_cli("audit", "--db", db, "--json", "-"))


def test_report_writes_the_commands_files(db, tmp_path):
    paths = deflectbench.report(db, tmp_path / "py", resamples=40)
    _cli("report", "--db", db, "--out", tmp_path / "cli", "--resamples", "40")
    assert paths.html == tmp_path / "py" / "report.html" and paths.html.is_file()
    for name in ("report.md", "report.html", *(f"tables/{p.name}" for p in paths.tables)):
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    assert paths.tables and all(p.parent == tmp_path / "py" / "tables" for p in paths.tables)


def test_import_is_the_commands_and_says_what_was_skipped(release, tmp_path):
    py = deflectbench.import_([release], db=tmp_path / "py.db")
    p = run_cli("import", release, "--db", tmp_path / "cli.db")
    assert p.returncode == py.exit_code == 0
    assert py.summary() in p.stdout and py.db == tmp_path / "py.db"
    assert list(py.table.columns[:3]) == ["path", "kind", "read"] and len(py.table) == len(py.files)
    again = deflectbench.import_(release, db=tmp_path / "py.db")
    assert again.report.total("generations", "imported") == 0  # importing again adds nothing
    bad = tmp_path / "bad" / "generations_x.jsonl"
    bad.parent.mkdir()
    bad.write_text("{not json\n")
    broken = deflectbench.import_(bad, db=tmp_path / "bad.db")
    p = run_cli("import", bad, "--db", tmp_path / "bad-cli.db")
    assert broken.exit_code == p.returncode == 1 and broken.problems
    assert broken.problems[0] in p.stderr


def test_export_writes_the_commands_files(db, tmp_path):
    for fmt in ("release", "csv"):
        py = deflectbench.export(db, tmp_path / f"py-{fmt}", format=fmt)
        out = _cli("export", "--db", db, "--out", tmp_path / f"cli-{fmt}", "--format", fmt)
        assert py.summary() == f"{len(py.files)} files written to {tmp_path / f'py-{fmt}'}"
        assert f"{len(py.files)} files written" in out
        for f in py.files:
            twin = tmp_path / f"cli-{fmt}" / f.relative_to(tmp_path / f"py-{fmt}")
            assert f.read_bytes() == twin.read_bytes(), f


def test_merge_is_the_commands(db, tmp_path):
    py = deflectbench.merge([db], db=tmp_path / "py.db")
    p = run_cli("merge", tmp_path / "cli.db", db)
    assert py.exit_code == p.returncode == 0 and py.summary() in p.stdout
    with pytest.raises(Exception, match="no such results file"):
        deflectbench.merge([tmp_path / "nothing.db"], db=tmp_path / "x.db")


def test_spec_is_the_commands():
    s = deflectbench.spec()
    assert s.to_json() == json.loads(_cli("spec", "--json"))
    for names in (["claims"], ["templates", "fallacies"], ["framings"]):
        flags = [f"--{n}" for n in names]
        assert s.listings_json(names) == json.loads(_cli("spec", *flags, "--json"))
    assert isinstance(s.table("claims"), pd.DataFrame) and len(s.table("claims")) == s.n_claims
    lines = _cli("spec", "--prompts").splitlines()
    assert [json.dumps(x, ensure_ascii=False) for x in s.prompts()] == lines
    from deflectbench.api.results import packs

    assert packs().to_json() == json.loads(_cli("spec", "--list", "--json"))


def test_the_results_terminal_is_rendered_from_the_typed_summary(db):
    """analyze's terminal tables are the typed summary's (the command prints exactly them)."""
    from rich.console import Console

    from deflectbench.views.terminal.tables import render_terminal

    s = deflectbench.analyze(db, resamples=60, correction="none")
    console = Console(record=True, width=200, soft_wrap=True, color_system=None)
    for t in render_terminal(s):
        console.print(t)
    p = run_cli("analyze", "--db", db, "--resamples", "60", "--correction", "none",
                env={**__import__("os").environ, "COLUMNS": "200"})  # fmt: skip
    assert p.returncode == 0, p.stderr

    def lines(text: str) -> str:  # the CLI's console neither centres titles nor pads lines
        return "\n".join(x.strip() for x in text.splitlines())

    assert lines(console.export_text()) in lines(p.stdout)
