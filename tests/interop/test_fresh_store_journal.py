"""A new store filled by an import is written with a rollback journal (store/fresh.py), and that
changes nothing but the time: the store is back in WAL afterwards with the rows a WAL import
stores; a store that holds results, or that another connection has open, keeps WAL; and a
process killed in the middle of a file (a real kill, a hot journal left behind) leaves the
files before it stored and nothing of that file, which the next import then completes."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from deflectbench.interop import import_paths, importer
from deflectbench.store import Store
from support.fixtures import copy_of_release_fixture

MODELS = ("gpt-5.5", "grok-4.3")
JUDGES = ("claude-haiku-4-5-20251001", "gpt-5.4-mini")


def release(root: Path, benchmark) -> list[Path]:
    """Two models' generation files and two judges' files."""
    copy_of_release_fixture(
        root,
        models=MODELS,
        judges=JUDGES,
        claims=[c.claim_id for c in benchmark.claims[::12]],
        runs=2,
        seed=3,
        error_rate=0.05,
        parse_error_rate=0.05,
    )
    return sorted(root.rglob("*.jsonl"))


def rows(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    con = sqlite3.connect(db)
    try:
        tables = [t for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: sorted(con.execute(f'SELECT * FROM "{t}"'), key=repr) for t in tables}
    finally:
        con.close()


def journal_mode(db: Path) -> str:
    con = sqlite3.connect(db)
    try:
        return str(con.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        con.close()


@pytest.fixture
def modes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """(journal_mode, synchronous) of the store as each file's import starts."""
    seen: list[tuple[str, int]] = []
    import_file = importer._import_file

    def noted(store: Store, *args: Any, **kwargs: Any) -> None:
        mode = store.conn.execute("PRAGMA journal_mode").fetchone()[0]
        seen.append((mode, store.conn.execute("PRAGMA synchronous").fetchone()[0]))
        import_file(store, *args, **kwargs)

    monkeypatch.setattr(importer, "_import_file", noted)
    return seen


def test_a_new_store_is_written_with_a_synced_rollback_journal_then_back_to_wal(
    tmp_path, benchmark, modes
):
    files = release(tmp_path / "rel", benchmark)
    with Store.open(tmp_path / "new.db") as store:
        report = import_paths(store, files)
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL, as opened
    assert report.ok, report.problems
    assert modes == [("delete", 2)] * len(files)  # FULL: synced before and at each commit
    assert journal_mode(tmp_path / "new.db") == "wal"
    assert not (tmp_path / "new.db-journal").exists()


def test_the_rows_are_those_of_an_import_in_wal(tmp_path, benchmark, monkeypatch):
    files = release(tmp_path / "rel", benchmark)
    with Store.open(tmp_path / "new.db") as store:
        import_paths(store, files)
    monkeypatch.setattr(importer, "written_once", _never)
    with Store.open(tmp_path / "wal.db") as store:
        import_paths(store, files)
    assert rows(tmp_path / "new.db") == rows(tmp_path / "wal.db")


class _never:
    def __init__(self, conn: Any) -> None:
        pass

    def __enter__(self) -> bool:
        return False

    def __exit__(self, *exc: object) -> None:
        return None


def test_a_store_holding_results_keeps_wal(tmp_path, benchmark, modes):
    files = release(tmp_path / "rel", benchmark)
    gens = [f for f in files if f.name.startswith("generations")]
    with Store.open(tmp_path / "x.db") as store:
        import_paths(store, gens[:1])
        assert store.counts()["generations"] > 0
        modes.clear()
        import_paths(store, [f for f in files if f != gens[0]])
    assert modes == [("wal", 1)] * (len(files) - 1)


def test_a_store_another_connection_has_open_keeps_wal(tmp_path, benchmark, modes):
    files = release(tmp_path / "rel", benchmark)
    with Store.open(tmp_path / "x.db") as store, Store.open(tmp_path / "x.db") as reader:
        reader.conn.execute("BEGIN")
        reader.conn.execute("SELECT count(*) FROM generations").fetchone()  # a read under way
        report = import_paths(store, files)
        reader.conn.execute("COMMIT")
    assert report.ok, report.problems
    assert {mode for mode, _ in modes} == {"wal"}


#: A child that imports ``files`` into ``db`` and is killed (os._exit: no cleanup, no rollback)
#: while the rows of the second chunk of file ``stop`` are written.
_KILLED = """
import os, sys
from pathlib import Path
from deflectbench.interop import import_paths, importer
from deflectbench.store import Store
db, stop, *files = sys.argv[1:]
write, seen = importer._write_rows, []
def dying(store, kind, rows):
    done = write(store, kind, rows)
    seen.append(kind)
    if len(seen) == int(stop):
        os._exit(9)
    return done
importer._write_rows = dying
with Store.open(Path(db)) as store:
    import_paths(store, [Path(f) for f in files], chunk_records=20)
"""


def test_a_process_killed_mid_file_leaves_the_files_before_it_and_none_of_that_file(
    tmp_path, benchmark
):
    files = release(tmp_path / "rel", benchmark)
    gens = [f for f in files if f.name.startswith("generations")]
    first = len(gens[0].read_text().splitlines())
    chunks = -(-first // 20)
    db = tmp_path / "killed.db"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.run(
        [sys.executable, "-c", _KILLED, str(db), str(chunks + 2), *map(str, gens)],
        env=env,
        capture_output=True,
        check=False,
    )
    assert child.returncode == 9, child.stderr.decode()[-2000:]
    assert (tmp_path / "killed.db-journal").exists()  # hot: the second file's transaction
    with Store.open(db) as store:  # rolled back as it opens
        assert store.counts()["generations"] == first
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        again = import_paths(store, files)
    assert again.ok, again.problems
    assert again.total("generations", "already_present") == first
    with Store.open(tmp_path / "clean.db") as store:
        import_paths(store, files)
    assert rows(db) == rows(tmp_path / "clean.db")
