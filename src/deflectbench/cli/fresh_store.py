"""The --db results file for a command that may fail after opening it: a file the command
created is removed again when it fails (:func:`deflectbench.api._common.store_or_nothing`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from deflectbench.api._common import store_or_nothing as _store_or_nothing
from deflectbench.cli.options import said_busy

if TYPE_CHECKING:
    from deflectbench.store import Store


@contextmanager
def store_or_nothing(db: Path) -> Iterator[Store]:
    """The results file, removed again if the block fails and created it; lock waits on stderr."""
    with _store_or_nothing(db, on_busy=said_busy) as store:
        yield store
