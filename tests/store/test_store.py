"""The results store: idempotent writes, resume, bad files left untouched."""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3

import pytest

from deflectbench.config import resolve_plan
from deflectbench.pipeline import RunContext, generate
from deflectbench.store import GenerationRecord, JudgmentRecord, Store, StoreError
from deflectbench.store.migrations import MIGRATIONS
from support.fakes import EchoModel


def _core(entry: dict) -> dict:
    """The counts every status entry has (status also reports non-answers and conditions)."""
    return {k: entry[k] for k in ("planned", "ok", "errors")}


def rec(**kw) -> GenerationRecord:
    base = dict(
        benchmark="b",
        model="m",
        claim_id="L1_US_01",
        prompt_id="p",
        sample=1,
        prompt="P",
        response="R",
    )
    base.update(kw)
    return GenerationRecord(**base)


def test_new_store_has_schema(tmp_path):
    with Store.open(tmp_path / "x.db") as s:
        assert s.schema_version == len(MIGRATIONS)
        assert s.status() == {"models": {}, "judges": {}, "spent_usd": 0.0}


def test_same_result_twice_leaves_one_row(tmp_path):
    with Store.open(tmp_path / "x.db") as s:
        s.add_generation(rec())
        s.add_generation(rec(response="different text"))
        rows = s.generation_rows()
        assert len(rows) == 1 and rows[0]["response"] == "R"
        gid = rows[0]["gen_id"]
        j = JudgmentRecord(gen_id=gid, judge="lexical", raw="{}", scores={"refusal": 1})
        s.add_judgment(j)
        s.add_judgment(j)
        assert len(s.judgment_rows()) == 1


def test_error_row_is_replaced_by_a_result_but_never_the_reverse(tmp_path):
    with Store.open(tmp_path / "x.db") as s:
        s.add_generation(rec(response=None, error="503 overloaded"))
        assert _core(s.status()["models"]["m"]) == {"planned": 1, "ok": 0, "errors": 1}
        assert s.missing_cells("b", "m", [("L1_US_01", "p", 1)]) == []
        assert s.missing_cells("b", "m", [("L1_US_01", "p", 1)], retry_errors=True) == [
            ("L1_US_01", "p", 1)
        ]
        s.add_generation(rec(response="ok now"))
        s.add_generation(rec(response=None, error="later failure"))
        (row,) = s.generation_rows()
        assert row["response"] == "ok now" and row["error"] is None


def test_exactly_one_of_response_and_error(tmp_path):
    with Store.open(tmp_path / "x.db") as s, pytest.raises(ValueError):
        s.add_generation(rec(response=None))


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_corrupt_file_is_refused_and_untouched(tmp_path):
    p = tmp_path / "results.db"
    p.write_bytes(b"this is not a database at all\n" * 100)
    before = digest(p)
    with pytest.raises(StoreError, match="not a SQLite database"):
        Store.open(p)
    assert digest(p) == before
    assert not (tmp_path / "results.db-wal").exists()


def test_truncated_sqlite_file_is_refused_and_untouched(tmp_path):
    good = tmp_path / "good.db"
    with Store.open(good) as s:
        s.add_generation(rec())
    data = good.read_bytes()
    bad = tmp_path / "bad.db"
    bad.write_bytes(data[:100] + b"\x00garbage" * 50)
    before = digest(bad)
    with pytest.raises(StoreError):
        Store.open(bad).status()
    assert digest(bad) == before


def test_foreign_sqlite_database_is_refused(tmp_path):
    p = tmp_path / "other.db"
    conn = sqlite3.connect(p)
    conn.execute("CREATE TABLE people (name TEXT)")
    conn.commit()
    conn.close()
    before = digest(p)
    with pytest.raises(StoreError, match="another program"):
        Store.open(p)
    assert digest(p) == before


def test_unwritable_locations(tmp_path):
    with pytest.raises(StoreError, match="does not exist"):
        Store.open(tmp_path / "no" / "such" / "dir.db")
    with pytest.raises(StoreError, match="is a directory"):
        Store.open(tmp_path)


def test_newer_schema_is_refused(tmp_path):
    p = tmp_path / "x.db"
    Store.open(p).close()
    conn = sqlite3.connect(p)
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="upgrade deflectbench"):
        Store.open(p)


def test_interrupted_run_resumes_with_exactly_the_rest(tmp_path, benchmark):
    plan = resolve_plan(benchmark, models=["test/echo"], judges=["lexical"], preset="quick")
    cells = plan.cells
    assert len(cells) == 120
    k = 37
    with Store.open(tmp_path / "x.db") as s:
        crashing = EchoModel(crash_after=k)
        with pytest.raises(KeyboardInterrupt):
            asyncio.run(generate(RunContext(s, benchmark, "r1"), crashing, cells))
        stored = len(s.generation_rows())
        assert k - crashing.max_concurrency <= stored <= k
        resumed = EchoModel()
        result = asyncio.run(generate(RunContext(s, benchmark, "r2"), resumed, cells))
        assert result.ok == len(cells) - stored == len(resumed.calls)
        done_first = {
            (r["claim_id"], r["prompt_id"], r["sample"])
            for r in s.generation_rows()
            if r["run_id"] == "r1"
        }
        asked_again = {(m[-1].content) for m in resumed.calls}
        assert not any(benchmark.render(c, p) in asked_again for c, p, _ in done_first)
        rows = s.generation_rows()
        assert len(rows) == 120
        assert len({(r["claim_id"], r["prompt_id"], r["sample"]) for r in rows}) == 120
        again = EchoModel()
        result = asyncio.run(generate(RunContext(s, benchmark, "r3"), again, cells))
        assert result.ok == 0 and result.skipped == 120 and again.calls == []
        assert _core(s.status()["models"]["test/echo"]) == {"planned": 120, "ok": 120, "errors": 0}


def test_failed_requests_become_error_rows_and_retry(tmp_path, benchmark):
    plan = resolve_plan(benchmark, models=["test/echo"], judges=["lexical"], preset="quick")
    with Store.open(tmp_path / "x.db") as s:
        bad = EchoModel(fail_if="ad hominem")
        res = asyncio.run(generate(RunContext(s, benchmark, "r1"), bad, plan.cells))
        assert res.errors == 8 * 5 and res.ok == 80
        assert "400" in res.error_samples[0]
        assert s.status()["models"]["test/echo"]["errors"] == 40
        res = asyncio.run(
            generate(RunContext(s, benchmark, "r2", retry_errors=True), EchoModel(), plan.cells)
        )
        assert res.ok == 40
        assert _core(s.status()["models"]["test/echo"]) == {"planned": 120, "ok": 120, "errors": 0}


def test_migrations_upgrade_an_old_store_in_place(tmp_path):
    from deflectbench.store import MIGRATIONS

    p = tmp_path / "old.db"
    conn = sqlite3.connect(p)
    conn.executescript(MIGRATIONS[0].sql)
    conn.execute("PRAGMA application_id = 1145457730")
    conn.execute("PRAGMA user_version = 1")
    conn.execute(
        "INSERT INTO generations (benchmark, model, claim_id, prompt_id, sample, prompt, response, created_at) "
        "VALUES ('b', 'm', 'c', 'p', 1, 'P', 'R', 'now')"
    )
    conn.commit()
    conn.close()
    with Store.open(p) as s:
        assert s.schema_version == len(MIGRATIONS)
        (row,) = s.generation_rows()
        assert row["response"] == "R" and row["extra_json"] is None
