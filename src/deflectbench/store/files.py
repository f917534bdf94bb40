"""What a store file may be before SQLite touches it: ours, new, or refused untouched."""

from __future__ import annotations

import os
from pathlib import Path

SQLITE_MAGIC = b"SQLite format 3\x00"
APPLICATION_ID = 0x44464C42  # "DFLB": marks the file as ours


class StoreError(Exception):
    """The store cannot be opened or written; the message says what to do."""


def check_file(path: Path) -> None:
    """Refuse, without touching it, a file that is not a DeflectBench SQLite store."""
    if str(path) in ("", ":memory:") or str(path).startswith("file:"):
        raise StoreError(
            f"--db {str(path)!r} would keep nothing: give a file path such as deflectbench.db"
        )
    if path.is_dir():
        raise StoreError(
            f"--db {path} is a directory; give a file path such as {path / 'deflectbench.db'}"
        )
    if path.exists():
        try:
            with path.open("rb") as fh:
                head = fh.read(100)
        except OSError as exc:
            raise StoreError(f"cannot read --db {path}: {exc.strerror}") from None
        if len(head) == 0:
            return  # an empty file is a new store
        if not head.startswith(SQLITE_MAGIC):
            raise StoreError(
                f"--db {path} is not a SQLite database (corrupt or another kind of file); "
                "it was left untouched: pass another --db path"
            )
    else:
        parent = path.parent if str(path.parent) else Path(".")
        if not parent.exists():
            raise StoreError(f"cannot create --db {path}: folder {parent} does not exist")
        if not os.access(parent, os.W_OK):
            raise StoreError(f"cannot create --db {path}: folder {parent} is not writable")
