"""Runs of the real entry point (``python -m deflectbench``) for tests that stop them midway.

The kill-and-resume tests and the interrupt tests all write a configuration file, start a run
in a child process, signal it at a chosen moment and read the database it left; the steps
are the same whatever moment a test waits for, so they are written once here.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

#: The command line of the entry point, before its arguments.
DEFLECTBENCH = (sys.executable, "-m", "deflectbench")


def write_toml(path: Path, tables: Mapping[str, Mapping[str, Any]]) -> Path:
    """A configuration file of flat tables (``{"run": {...}, "providers.x": {...}}``).

    Values are written as JSON, which TOML reads the same for strings, numbers, booleans and
    lists of them."""
    lines: list[str] = []
    for table, values in tables.items():
        lines += [f"[{table}]", *(f"{k} = {json.dumps(v)}" for k, v in values.items())]
    path.write_text("\n".join(lines) + "\n")
    return path


def rows(db: Path, sql: str) -> list[tuple]:
    """The query's rows, or none while the database or its tables do not exist yet."""
    if not db.exists():
        return []
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        conn.close()


def count(db: Path, sql: str) -> int:
    """The first column of the query's first row (0 if none)."""
    got = rows(db, sql)
    return int(got[0][0]) if got else 0


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
