"""A new store filled by one import: written with a rollback journal, then set back to WAL.

In WAL mode every page is written twice, to the log and then, at the checkpoint, into the
file: for a new store that is the whole store, twice (a paper-scale import spent about 0.25 s
of CPU on the second copy). With a rollback journal (``journal_mode = DELETE``) a page the
store did not hold before a transaction is written once, and nothing of it is journalled.

Crash safety is the same: each file of an import is one transaction either way, and with
``synchronous = FULL`` (the journal synced before the file is written, the file synced at the
commit) a process or machine that dies mid-file leaves a hot journal that SQLite rolls back
when the store is next opened, so that file is not stored at all, never half; the files
committed before it stay. A store that already holds results, or that another connection
has open, is left in WAL (its readers are never blocked by the import).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager


def _pragma(conn: sqlite3.Connection, statement: str) -> str | None:
    """One pragma on the connection itself (no wait for other writers), its answer or None
    when SQLite refused it (another connection holds the store)."""
    try:
        row = sqlite3.Connection.execute(conn, f"PRAGMA {statement}").fetchone()
    except sqlite3.OperationalError:
        return None
    return None if row is None else str(row[0]).lower()


@contextmanager
def written_once(conn: sqlite3.Connection) -> Iterator[bool]:
    """Within: a store without generations or judgments written with a rollback journal,
    synced in full; after: WAL and the synchronous setting it had, as every writing command
    opens a store (a killed process leaves the rollback journal setting, which the next
    writing command sets back). Yields whether the journal was switched."""
    fresh = (
        not conn.in_transaction
        and not sqlite3.Connection.execute(
            conn, "SELECT EXISTS (SELECT 1 FROM generations) OR EXISTS (SELECT 1 FROM judgments)"
        ).fetchone()[0]
    )
    synchronous = _pragma(conn, "synchronous")
    switched = (
        fresh
        and _pragma(conn, "journal_mode") == "wal"
        and _pragma(conn, "journal_mode = DELETE") == "delete"
    )
    if switched:
        _pragma(conn, "synchronous = FULL")
    try:
        yield switched
    finally:
        if switched and not conn.in_transaction:
            _pragma(conn, "journal_mode = WAL")
            _pragma(conn, f"synchronous = {synchronous}")
