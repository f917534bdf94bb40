"""A SQLite connection that turns every database failure into one clear StoreError.

Another process holding the write lock is waited for (the wait is announced once through
``on_busy``), then given up cleanly; a read-only or corrupt file is named as such, so a command
prints one line and nothing stored is damaged.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from deflectbench.store.files import StoreError

#: How long a write waits for another process's lock before giving up (seconds;
#: ``DEFLECTBENCH_LOCK_WAIT`` overrides it).
LOCK_WAIT_S = 60.0
#: SQLite's own wait per attempt; between attempts the wait may be announced.
_ATTEMPT_MS = 1000


def describe(exc: sqlite3.Error, path: Path) -> StoreError:
    """The one line a user reads for a database failure on ``path``."""
    text = str(exc)
    if "readonly" in text or "read-only" in text:
        return StoreError(
            f"--db {path} is read-only (file or folder permissions): make it writable, or "
            "copy it somewhere writable and pass that --db"
        )
    if "malformed" in text or "not a database" in text or "corrupt" in text:
        return StoreError(
            f"--db {path} is corrupt ({text}); it was left as it is: restore a copy or pass "
            "another --db"
        )
    if "locked" in text or "busy" in text:
        return StoreError(
            f"--db {path} is locked by another process: let it finish (or stop it), then run "
            "the same command again"
        )
    if "disk" in text or "full" in text:
        return StoreError(f"cannot write to --db {path}: {text}; free space and run again")
    return StoreError(f"--db {path}: {text}")


def _busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc)
    return "locked" in text or "busy" in text


class Connection(sqlite3.Connection):
    """``sqlite3.Connection`` whose ``execute`` waits out other writers and raises StoreError."""

    path: Path = Path("?")
    on_busy: Callable[[str], None] | None = None
    lock_wait_s: float = LOCK_WAIT_S

    def _retry(self, call: Callable[[], Any]) -> Any:
        deadline = time.monotonic() + self.lock_wait_s
        announced = False
        while True:
            try:
                return call()
            except sqlite3.OperationalError as exc:
                if not _busy(exc) or self.in_transaction or time.monotonic() >= deadline:
                    raise describe(exc, self.path) from None
                if not announced and self.on_busy is not None:
                    self.on_busy(
                        f"waiting for --db {self.path}: another process holds its write lock "
                        f"(giving up after {self.lock_wait_s:.0f} s)"
                    )
                    announced = True
            except sqlite3.DatabaseError as exc:
                raise describe(exc, self.path) from None

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        return self._retry(lambda: super(Connection, self).execute(sql, parameters))

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        rows = list(parameters)
        return self._retry(lambda: super(Connection, self).executemany(sql, rows))


def _lock_wait() -> float:
    raw = os.environ.get("DEFLECTBENCH_LOCK_WAIT")
    if raw is None:
        return LOCK_WAIT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not (0 <= value <= 86_400):
        raise StoreError(f"DEFLECTBENCH_LOCK_WAIT={raw!r}: give seconds from 0 to 86400 (a day)")
    return value


def connect(path: Path, *, readonly: bool) -> Connection:
    target = f"file:{path}?mode=ro" if readonly else str(path)
    conn = sqlite3.connect(
        target, uri=readonly, isolation_level=None, factory=Connection, check_same_thread=True
    )
    assert isinstance(conn, Connection)
    conn.path = path
    conn.lock_wait_s = _lock_wait()
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {_ATTEMPT_MS}")
    return conn
