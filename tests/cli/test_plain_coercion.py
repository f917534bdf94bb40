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


#: Several values of a list option or argument (``import A B``, ``--judges x --judges y``).
LISTS = ((), ("paper.db",), ("paper.db", "a/b/"), ("x", "0", "5"), ["-", "05"], ("x", 7), "x")


def _outcome(coerce, value):
    """What coercing ``value`` gives: the value and its type (each item's, for a list), or the
    error's type and message."""
    from click.exceptions import BadParameter

    try:
        got = coerce(value)
    except BadParameter as exc:
        return ("error", type(exc).__name__, exc.format_message())
    kinds = [type(v) for v in got] if isinstance(got, list) else None
    return (got, type(got), kinds)


@pytest.mark.parametrize("command", ["analyze", "compare", "report", "import", "export"])
def test_a_plain_value_is_what_typer_makes_of_it(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # some values name files that exist, some none
    (tmp_path / "paper.db").write_bytes(b"")
    (tmp_path / "a" / "b").mkdir(parents=True)
    click_command = build_command(command)
    ctx = click_command.make_context(command, [], resilient_parsing=True)
    params = click_command.get_params(ctx)
    checked = 0
    for p in params:
        typer_runtime = p.get_runtime_param._typer_runtime
        multi = p.multiple or p.nargs == -1
        for value in (None, *(LISTS if multi else VALUES)):
            plain = _outcome(lambda v, p=p: _plain_value(p, v, ctx), value)
            if plain[0] is _UNDECIDED:
                continue
            typed = _outcome(lambda v, p=p, t=typer_runtime: t().coerce(v, param=p, ctx=ctx), value)
            assert plain == typed, (p.name, value)
            checked += 1
    assert checked > 10


@pytest.mark.parametrize("command", ["analyze", "import"])
def test_a_command_of_plain_values_does_not_import_pydantic(command: str, tmp_path: Path) -> None:
    code = """
        import contextlib, io, json, os, runpy, sys

        argv = {"analyze": ["analyze", "--db", os.environ["DB"], "--seed", "3"],
                "import": ["import", os.environ["DIR"], os.environ["DIR"], "--db", os.environ["DB"]]}
        sys.argv = ["deflectbench", *argv[os.environ["COMMAND"]]]
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
    env.update(OUT=str(out), DB=str(tmp_path / "missing.db"), DIR=str(tmp_path), COMMAND=command)
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
