"""Runs of the real entry point (``python -m deflectbench``) in a child process, and reads of
the database a run left.

The end-to-end tests write a configuration file, start runs (some they signal at a chosen
moment: the kill-and-resume and interrupt tests) and count what the store holds; the steps
are the same whatever a test checks, so they are written once here.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The command line of the entry point, before its arguments.
DEFLECTBENCH = (sys.executable, "-m", "deflectbench")
#: A ``run`` that a test reads through its store: no live board, no report to build.
QUIET_RUN = ("--no-progress", "--no-report")


def _toml_value(value: Any) -> str:
    if not isinstance(value, Mapping):
        return json.dumps(value)
    pairs = ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items())
    return f"{{ {pairs} }}"


def write_toml(path: Path, tables: Mapping[str, Mapping[str, Any]]) -> Path:
    """A configuration file of flat tables (``{"run": {...}, "providers.x": {...}}``).

    Values are written as JSON, which TOML reads the same for strings, numbers, booleans and
    lists of them; a mapping value is an inline table (``headers = { "X-Team" = "a" }``)."""
    lines: list[str] = []
    for table, values in tables.items():
        lines += [f"[{table}]", *(f"{k} = {_toml_value(v)}" for k, v in values.items())]
    path.write_text("\n".join(lines) + "\n")
    return path


@dataclass(frozen=True)
class Cli:
    """The entry point with the same added environment (keys, poll interval) and the same
    flags on every ``run``, so a test names only what it checks.

    ``env`` is added to this process's environment for each call. A call starts a real
    ``python -m deflectbench`` (:meth:`command` is its command line, also for
    :func:`signal_when`); with ``in_process`` it runs in this process instead
    (:func:`support.in_process.run_cli`: the same exit code and output without a child's
    start-up), for tests that read only those and set no variable a module reads on import
    (``DEFLECTBENCH_BATCH_POLL_S`` is one)."""

    env: Mapping[str, str] = field(default_factory=dict)
    run_flags: Sequence[str] = ()
    timeout: float = 240
    in_process: bool = False

    def environ(self) -> dict[str, str]:
        return dict(os.environ, **self.env)

    def command(self, *args: str | Path) -> list[str]:
        extra = list(self.run_flags) if args[0] == "run" else []
        return [*DEFLECTBENCH, *map(str, args), *extra]

    def __call__(
        self, *args: str | Path, timeout: float | None = None
    ) -> subprocess.CompletedProcess[str]:
        if self.in_process:
            from support.in_process import run_cli

            return run_cli(*self.command(*args)[len(DEFLECTBENCH) :], env=self.environ())
        return subprocess.run(
            self.command(*args),
            capture_output=True,
            text=True,
            timeout=self.timeout if timeout is None else timeout,
            env=self.environ(),
        )


def query(db: Path, sql: str) -> list[tuple]:
    """The query's rows; a missing table is an error (a finished run's store has them all, so
    reading nothing there must not pass for "nothing stored")."""
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def rows(db: Path, sql: str) -> list[tuple]:
    """The query's rows, or none while the database or its tables do not exist yet."""
    if not db.exists():
        return []
    try:
        return query(db, sql)
    except sqlite3.OperationalError:
        return []


def count(db: Path, sql: str) -> int:
    """The first column of the query's first row (0 if none)."""
    got = rows(db, sql)
    return int(got[0][0]) if got else 0


def generations(db: Path) -> dict[str, int]:
    """Answers stored without an error, by model."""
    return dict(query(db, "SELECT model, count(*) FROM generations WHERE error IS NULL GROUP BY 1"))


def judgments(db: Path, *, ok: bool = True) -> dict[str, int]:
    """Verdicts by judge: those stored without an error, or with ``ok=False`` the failures."""
    where = "error IS NULL" if ok else "error IS NOT NULL"
    return dict(query(db, f"SELECT judge, count(*) FROM judgments WHERE {where} GROUP BY 1"))


def signal_when(
    args: Sequence[str],
    ready: Callable[[], bool],
    *,
    sig: int = signal.SIGKILL,
    wait_s: float = 60,
    poll_s: float = 0.01,
    pause: Callable[[], float] = lambda: 0.0,
    env: Mapping[str, str] | None = None,
    capture: bool = False,
) -> tuple[int, str, str]:
    """Start ``args``; once ``ready()`` (or the child ended, or ``wait_s`` passed), wait
    ``pause()`` seconds (a random moment: mid-request, mid-write) and send ``sig``.

    Returns the exit code and, with ``capture``, what the child printed ("" otherwise: an
    unread pipe could block a child that prints much)."""
    out = subprocess.PIPE if capture else subprocess.DEVNULL
    proc = subprocess.Popen(args, stdout=out, stderr=out, text=True, env=env)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and proc.poll() is None and not ready():
        time.sleep(poll_s)
    time.sleep(pause())
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=120)
    return proc.returncode, stdout or "", stderr or ""
