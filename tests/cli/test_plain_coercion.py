"""The CLI coerces plain values (a string, an in-bounds integer, a path in its normal form,
a missing value) itself and leaves every other to typer, which builds a pydantic adapter: the
same value either way, and a command given plain values never imports pydantic (~80 ms)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from deflectbench.cli.app import _UNDECIDED, _plain_value, build_command

VALUES = ("paper.db", "./paper.db", "a/b/", "-", "", "0", "5", "05", "+5", " 5", "1_000", "x", 7)


@pytest.mark.parametrize("command", ["analyze", "compare", "report"])
def test_a_plain_value_is_what_typer_makes_of_it(command: str) -> None:
    click_command = build_command(command)
    ctx = click_command.make_context(command, [], resilient_parsing=True)
    params = click_command.get_params(ctx)
    checked = 0
    for p in params:
        typer_runtime = p.get_runtime_param._typer_runtime
        for value in (None, *VALUES):
            plain = _plain_value(p, value, ctx)
            if plain is _UNDECIDED:
                continue
            assert plain == typer_runtime().coerce(value, param=p, ctx=ctx), (p.name, value)
            assert type(plain) is type(typer_runtime().coerce(value, param=p, ctx=ctx))
            checked += 1
    assert checked > 20


def test_analyze_does_not_import_pydantic(tmp_path: Path) -> None:
    code = """
        import contextlib, io, json, os, runpy, sys

        sys.argv = ["deflectbench", "analyze", "--db", os.environ["DB"], "--seed", "3"]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                runpy.run_module("deflectbench", run_name="__main__", alter_sys=True)
            except SystemExit:
                pass
        with open(os.environ["OUT"], "w") as f:
            json.dump(sorted({m.split(".")[0] for m in sys.modules}), f)
    """
    out = tmp_path / "out.json"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(OUT=str(out), DB=str(tmp_path / "missing.db"))
    p = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env
    )
    assert p.returncode == 0, p.stderr
    loaded = set(json.loads(out.read_text()))
    assert "deflectbench" in loaded
    assert "pydantic" not in loaded


def test_a_typer_whose_internals_moved_still_coerces_its_own_way(monkeypatch) -> None:
    """The shortcut reads typer's private parameter descriptions: when a typer release renames
    them, every value goes to typer's own coercion (slower), never an error."""
    import deflectbench.cli.app as app_module

    def moved(param, value, ctx):  # what a renamed attribute gives
        raise AttributeError("'TypeDescriptor' object has no attribute 'parameter_info'")

    monkeypatch.setattr(app_module, "_plain_value", moved)
    click_command = build_command("analyze")
    ctx = click_command.make_context("analyze", [], resilient_parsing=True)
    seed = next(p for p in click_command.get_params(ctx) if p.name == "seed")
    assert seed.get_runtime_param().coerce("5", param=seed, ctx=ctx) == 5
