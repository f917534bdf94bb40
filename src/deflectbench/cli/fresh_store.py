"""The --db results file for a command that may fail after opening it: a file the command
created is removed again when it fails, so a failure never leaves an empty store behind."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

from deflectbench.cli.options import open_store

if TYPE_CHECKING:
    from deflectbench.store import Store

#: The files SQLite keeps beside a database while it is open (WAL, shared memory, rollback).
SIDECARS = ("-wal", "-shm", "-journal")


@contextmanager
def store_or_nothing(db: Path) -> Iterator[Store]:
    """:func:`open_store`, closed on exit; if ``db`` did not exist and the block raises, the
    file (and any SQLite sidecar it created) is deleted. An interrupt keeps it: what finished
    is stored, and the same command resumes."""
    files = [db, *(db.with_name(db.name + suffix) for suffix in SIDECARS)]
    created = [f for f in files if not f.exists()]
    store = open_store(db)
    failed = False
    try:
        yield store
    except Exception:
        failed = True
        raise
    finally:
        store.close()
        if failed and db in created:
            for f in created:
                with suppress(OSError):
                    f.unlink(missing_ok=True)
