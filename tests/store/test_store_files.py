"""Hostile stores through the real entry point: corrupt, locked, read-only, in memory, mistyped.

Each gets one line that names the problem and what to do, exit 2, and the file is left as it
was; a lock that clears in time is waited out with a visible message.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deflectbench.benchmark import default_benchmark
from deflectbench.store import GenerationRecord, Store
from support.in_process import run_cli


def cli(*args: str, env_extra: dict | None = None, **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(env_extra or {})
    return run_cli(*args, env=env, **kw)


def one_line(p: subprocess.CompletedProcess, code: int = 2) -> str:
    assert p.returncode == code, (p.returncode, p.stdout, p.stderr)
    lines = [line for line in p.stderr.strip().splitlines() if line.strip()]
    assert lines and "Traceback" not in p.stderr, p.stderr
    return lines[-1]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_store(path: Path, n: int = 60) -> None:
    b = default_benchmark()
    with Store.open(path) as s:
        s.add_generations(
            GenerationRecord(
                benchmark=b.key,
                model="test/echo",
                claim_id=b.claims[i % 80].claim_id,
                prompt_id=b.templates[i % 15].prompt_id,
                sample=1 + i // 1200,
                prompt="p" * 200,
                response="I can't help with that. " * 20,
            )
            for i in range(n)
        )
    # fold the WAL into the main file so the file alone is the store
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()


def test_memory_and_empty_db_paths_are_refused(tmp_path):
    for bad in (":memory:", "file::memory:?cache=shared"):
        line = one_line(cli("judge", "--judge", "lexical", "--db", bad, cwd=tmp_path))
        assert "would keep nothing" in line
    assert list(tmp_path.iterdir()) == []


def test_a_store_corrupted_mid_file_gets_one_line_and_is_left_as_it_was(tmp_path):
    db = tmp_path / "c.db"
    make_store(db, n=300)
    con = sqlite3.connect(db)
    (root,) = con.execute(
        "SELECT rootpage FROM sqlite_master WHERE name = 'generations'"
    ).fetchone()
    con.close()
    data = bytearray(db.read_bytes())
    assert len(data) > (root + 3) * 4096
    # the generations table's pages, which every command reads (pages are 1-based)
    start = (root - 1) * 4096
    data[start : start + 3 * 4096] = b"\xff\x13garbage" * (3 * 4096 // 9) + b"\x00" * (3 * 4096 % 9)
    db.write_bytes(bytes(data))
    before = sha(db)
    for args in (("status",), ("analyze",), ("judge", "--judge", "lexical")):
        line = one_line(cli(*args, "--db", str(db)))
        assert "corrupt" in line or "malformed" in line, line
    assert sha(db) == before


def _hold_lock(db: Path, seconds: float) -> subprocess.Popen:
    code = (
        "import sqlite3, sys, time\n"
        f"c = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
        "c.execute('BEGIN IMMEDIATE')\n"
        "print('locked', flush=True)\n"
        f"time.sleep({seconds})\n"
        "c.execute('COMMIT')\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def test_a_store_locked_by_another_process_is_waited_for_then_given_up(tmp_path):
    db = tmp_path / "l.db"
    make_store(db)
    holder = _hold_lock(db, 30)
    try:
        t0 = time.monotonic()
        p = cli(
            "judge",
            "--judge",
            "lexical",
            "--db",
            str(db),
            "--no-progress",
            env_extra={"DEFLECTBENCH_LOCK_WAIT": "2"},
        )
        waited = time.monotonic() - t0
        line = one_line(p)
        assert "locked by another process" in line and "run the same command again" in line
        assert "waiting for --db" in p.stderr
        assert waited < 25
    finally:
        holder.kill()
        holder.wait()
    with Store.open(db) as s:  # nothing half-written
        assert s.status()["judges"] == {}


def test_a_lock_that_clears_in_time_is_waited_out(tmp_path):
    db = tmp_path / "w.db"
    make_store(db)
    holder = _hold_lock(db, 8)  # longer than the command takes to start
    try:
        p = cli(
            "judge",
            "--judge",
            "lexical",
            "--db",
            str(db),
            "--no-progress",
            env_extra={"DEFLECTBENCH_LOCK_WAIT": "30"},
        )
    finally:
        holder.wait()
    assert p.returncode == 0, p.stderr
    assert "judge lexical: 60 judged" in p.stdout
    assert "waiting for --db" in p.stderr


def test_a_bad_lock_wait_setting_is_one_line(tmp_path):
    db = tmp_path / "x.db"
    make_store(db)
    line = one_line(cli("status", "--db", str(db), env_extra={"DEFLECTBENCH_LOCK_WAIT": "nan"}))
    assert "DEFLECTBENCH_LOCK_WAIT" in line


def test_a_read_only_store_gets_one_line_and_is_left_as_it_was(tmp_path):
    db = tmp_path / "r.db"
    make_store(db)
    before = sha(db)
    # root ignores permission bits: make the file immutable for real (ext4 and most others)
    lock = subprocess.run(["chattr", "+i", str(db)], capture_output=True, text=True)
    if lock.returncode != 0:
        pytest.skip(f"chattr +i is not possible here: {lock.stderr.strip()}")
    try:
        line = one_line(cli("judge", "--judge", "lexical", "--db", str(db), "--no-progress"))
        assert "read-only" in line, line
        assert sha(db) == before
    finally:
        subprocess.run(["chattr", "-i", str(db)], check=True)
