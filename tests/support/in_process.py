"""The command line run inside the test process: ``deflectbench.cli.main`` with its arguments,
what it printed and its exit code, shaped like the ``subprocess.run`` result it replaces.

A child process costs the interpreter's and the CLI's start-up on every call; most tests only
read the exit code and the output, which this process observes just as well. Tests about what
only a process shows (signals, kill and resume, ``python -m``, the installed script, a clean
import) keep :mod:`support.cli_runs`.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

from deflectbench.cli import main
from deflectbench.cli.console import console, err


@contextlib.contextmanager
def _environment(env: Mapping[str, str] | None) -> Iterator[None]:
    """``os.environ`` replaced by ``env`` (as a child would get it) and restored after."""
    if env is None:
        yield
        return
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _width(columns: str | None) -> Iterator[None]:
    """The consoles' width as ``COLUMNS`` would set it in a child (they read it on import)."""
    saved = console._width, err._width
    if columns and columns.isdigit():
        console.width = err.width = int(columns)
    try:
        yield
    finally:
        console._width, err._width = saved


def run_cli(
    *args: str | Path,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    stdin: str = "",
) -> subprocess.CompletedProcess[str]:
    """Run ``deflectbench ARGS`` here; ``env`` is the whole environment a child would get."""
    argv = ["deflectbench", *map(str, args)]
    out, error = io.StringIO(), io.StringIO()
    here = os.getcwd()
    code = 0
    saved = sys.argv, sys.stdin
    columns = (env if env is not None else os.environ).get("COLUMNS")
    try:
        sys.argv, sys.stdin = argv, io.StringIO(stdin)
        if cwd is not None:
            os.chdir(cwd)
        with (
            _environment(env),
            _width(columns),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(error),
        ):
            main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, int | None):
            error.write(f"{exc.code}\n")
    finally:
        sys.argv, sys.stdin = saved
        os.chdir(here)
    return subprocess.CompletedProcess(argv, code, out.getvalue(), error.getvalue())
