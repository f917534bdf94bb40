"""A command starts at once: ``--version`` and every ``--help`` load none of the heavy modules
(the analysis stack, the report's, the API SDKs, llama.cpp), each command importing what it uses
inside its function. A property of ``sys.modules`` in a fresh interpreter, not a timing
(``bench/startup.py`` times it)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from deflectbench.cli.app import _USER_ERRORS, COMMANDS
from support.startup import HEAVY


def _fresh(code: str, tmp_path: Path) -> dict:
    """Run ``code`` in a new interpreter; it writes a JSON answer to the file ``OUT``."""
    out = tmp_path / "out.json"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(OUT=str(out), HEAVY=json.dumps(HEAVY), COLUMNS="100")
    p = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert p.returncode == 0, p.stderr
    return json.loads(out.read_text())


#: Runs ``python -m deflectbench ARGS`` (``__main__`` included) and records the heavy modules.
ENTRY_POINT = """
    import contextlib, io, json, os, runpy, sys

    sys.argv = ["deflectbench", *json.loads(os.environ["ARGS"])]
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            runpy.run_module("deflectbench", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        assert not exc.code, exc.code
    heavy = set(json.loads(os.environ["HEAVY"]))
    loaded = sorted({m.split(".")[0] for m in sys.modules} & heavy)
    with open(os.environ["OUT"], "w") as f:
        commands = sorted(m for m in sys.modules if m.startswith("deflectbench.cli."))
        ran = "deflectbench.cli.app" in sys.modules  # --version answers before the app
        ran = ran or printed.getvalue().startswith("deflectbench ")
        json.dump({"heavy": loaded, "ran": ran,
                   "cli": commands}, f)
"""


def _heavy(seen: dict) -> list[str]:
    """The heavy modules a run of :data:`ENTRY_POINT` loaded (after checking the CLI ran)."""
    assert seen["ran"], "the probe never reached the CLI"
    return seen["heavy"]


@pytest.mark.parametrize("args", [["--version"], ["run", "--help"], ["--help"]])
def test_the_entry_point_answers_without_heavy_modules(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARGS", json.dumps(args))
    assert _heavy(_fresh(ENTRY_POINT, tmp_path)) == []


@pytest.mark.parametrize(
    ("args", "commands"),
    [
        (["--version"], []),
        (["run", "--help"], ["run"]),
        (["batch", "cancel", "--help"], ["batch"]),
    ],
)
def test_a_command_module_is_imported_only_when_its_command_is_used(
    args: list[str], commands: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app registers its commands by name (``COMMANDS``): ``--version`` imports none of
    their modules, a command's help only its own (and what that module imports)."""
    monkeypatch.setenv("ARGS", json.dumps(args))
    loaded = {m.removeprefix("deflectbench.cli.") for m in _fresh(ENTRY_POINT, tmp_path)["cli"]}
    modules = {module for module, _ in COMMANDS.values()}
    assert loaded & modules == set(commands)


def test_every_command_help_loads_no_heavy_module(tmp_path: Path) -> None:
    """Every command and sub-app the entry point has (read from the app, so a command added
    later is covered), in one interpreter: what each help newly loaded."""
    code = """
        import contextlib, io, json, os, sys
        import typer
        from deflectbench.cli.app import app

        heavy = set(json.loads(os.environ["HEAVY"]))

        def walk(group, path=()):
            for name, command in group.commands.items():
                yield (*path, name)
                if getattr(command, "commands", None) is not None:
                    yield from walk(command, (*path, name))

        seen, new = set(), {}
        for words in [(), *walk(typer.main.get_command(app))]:
            with contextlib.redirect_stdout(io.StringIO()):
                app([*words, "--help"], standalone_mode=False, prog_name="deflectbench")
            now = {m.split(".")[0] for m in sys.modules} & heavy
            new[" ".join(words)] = sorted(now - seen)
            seen |= now
        with open(os.environ["OUT"], "w") as f:
            json.dump(new, f)
    """
    new = _fresh(code, tmp_path)
    assert {"run", "analyze", "report", "batch cancel"} <= set(new)  # the walk found them
    assert {command: mods for command, mods in new.items() if mods} == {}


def test_a_mistyped_command_is_answered_without_heavy_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The errors a user can fix are recognised without importing their modules."""
    code = ENTRY_POINT.replace("assert not exc.code, exc.code", "assert exc.code == 2, exc.code")
    monkeypatch.setenv("ARGS", json.dumps(["nosuchcommand"]))
    assert _heavy(_fresh(code, tmp_path)) == []


@pytest.mark.parametrize(("module", "name"), _USER_ERRORS)
def test_each_user_error_is_named_where_it_is_defined(module: str, name: str) -> None:
    """The table of one-line errors names each class by its defining module (only loaded
    modules are looked in, so a class moved elsewhere would turn into an internal error)."""
    error = getattr(importlib.import_module(module), name)
    assert issubclass(error, Exception)
    assert error.__module__ == module


def test_the_version_is_one_place_read_without_the_metadata(tmp_path: Path) -> None:
    """``--version`` prints ``_version.py``'s value, which the installed metadata (built from
    it) agrees with, and reads no importlib.metadata to do so (tens of milliseconds)."""
    from importlib import metadata

    from deflectbench._version import __version__

    assert metadata.version("deflectbench") == __version__  # else: reinstall (make setup)
    seen = _fresh(
        """
        import contextlib, io, json, os, sys
        from deflectbench.cli import main
        sys.argv = ["deflectbench", "--version"]
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            main()
        with open(os.environ["OUT"], "w") as f:
            json.dump({"printed": printed.getvalue(),
                       "metadata": "importlib.metadata" in sys.modules}, f)
        """,
        tmp_path,
    )
    assert seen == {"printed": f"deflectbench {__version__}\n", "metadata": False}


def test_the_command_collects_cycles_at_its_own_pace_and_the_library_at_its_hosts(
    tmp_path: Path,
) -> None:
    """The CLI's process raises the collector's first threshold (issue 36); importing the
    library, or calling it, leaves the host's as they were."""
    seen = _fresh(
        """
        import contextlib, gc, io, json, os, sys
        import deflectbench, deflectbench.api.results
        host = gc.get_threshold()
        from deflectbench.cli import main
        sys.argv = ["deflectbench", "--help"]
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                main()
            except SystemExit:
                pass
        with open(os.environ["OUT"], "w") as f:
            json.dump({"host": host, "cli": gc.get_threshold()}, f)
        """,
        tmp_path,
    )
    assert seen["host"][0] == 700  # the interpreter's default, untouched by the library
    assert seen["cli"][0] == 250_000
