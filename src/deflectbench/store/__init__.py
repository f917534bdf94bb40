"""The results store: one SQLite file, the only module that writes SQL.

Every stage reads from and writes to the store, so each stage can run alone, be resumed and be
re-run. Writes are idempotent (unique keys, upserts that never replace a good result), and each
result is committed the moment it arrives, so a process killed at any point loses at most the
requests in flight. Schema changes go through numbered migrations.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from deflectbench import gate
from deflectbench.conditions import RELEASE
from deflectbench.records import GenerationRecord, JudgmentRecord, PendingGeneration, now_iso
from deflectbench.store.batches import Batches
from deflectbench.store.conditions import Conditions
from deflectbench.store.connection import Connection, connect, describe
from deflectbench.store.files import APPLICATION_ID, StoreError, check_file
from deflectbench.store.labels import Labels
from deflectbench.store.migrations import MIGRATIONS
from deflectbench.store.reading import Reads
from deflectbench.store.turns import Turns
from deflectbench.store.upsert import (
    GENERATION_COLUMNS,
    GENERATION_KEYS,
    JUDGMENT_COLUMNS,
    JUDGMENT_KEYS,
    keep_good_upsert,
)
from deflectbench.vocab import FIELDS, NON_ANSWERS

__all__ = [
    "GenerationRecord",
    "JudgmentRecord",
    "PendingGeneration",
    "Store",
    "StoreError",
    "now_iso",
]


#: A cell as the caller holds it (a plain tuple or a :class:`~deflectbench.records.Cell`).
C = TypeVar("C", bound=tuple[str, str, int])


def _json_or_none(value: dict[str, Any] | None) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True, ensure_ascii=False)


class Store(Reads, Conditions, Labels, Turns, Batches):
    """A DeflectBench results file. Use :meth:`open`; close with :meth:`close` or ``with``."""

    #: The rooms' mixins read a plain sqlite3 connection; the store holds the waiting one.
    conn: Connection

    def __init__(self, conn: Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    # -- opening -----------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path = "deflectbench.db", *, readonly: bool = False) -> Store:
        path = Path(path)
        check_file(path)
        if readonly and not path.exists():
            raise StoreError(f"no results at --db {path}: run `deflectbench run` first")
        try:
            conn = connect(path, readonly=readonly)
        except sqlite3.DatabaseError as exc:
            raise describe(exc, path) from None
        store = cls(conn, path)
        try:
            store._check_schema(readonly=readonly)
        except BaseException:
            conn.close()
            raise
        return store

    @property
    def on_busy(self) -> Callable[[str], None] | None:
        """Called once per wait when another process holds the write lock (to say so)."""
        return self.conn.on_busy

    @on_busy.setter
    def on_busy(self, callback: Callable[[str], None] | None) -> None:
        self.conn.on_busy = callback

    def _check_schema(self, *, readonly: bool) -> None:
        app_id = self.conn.execute("PRAGMA application_id").fetchone()[0]
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        tables = self.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if app_id != APPLICATION_ID and tables:
            raise StoreError(
                f"--db {self.path} is a SQLite database of another program; it was left "
                "untouched: pass another --db path"
            )
        if version > len(MIGRATIONS):
            raise StoreError(
                f"--db {self.path} has schema version {version}, newer than this DeflectBench "
                f"knows ({len(MIGRATIONS)}): upgrade deflectbench"
            )
        if readonly:
            if version < len(MIGRATIONS):
                raise StoreError(
                    f"--db {self.path} needs a schema upgrade: run any writing command"
                )
            return
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self._migrate(version)  # foreign keys off: a migration may rebuild a table
        self.conn.execute("PRAGMA foreign_keys = ON")

    def _migrate(self, version: int) -> None:
        for number, migration in enumerate(MIGRATIONS[version:], start=version + 1):
            with self.transaction():
                for statement in migration.statements():
                    self.conn.execute(statement)
                self.conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                self.conn.execute(f"PRAGMA user_version = {number}")

    @property
    def schema_version(self) -> int:
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")

    # -- runs and plans ----------------------------------------------------------------------

    def create_run(
        self,
        *,
        command: str,
        benchmark: str,
        benchmark_version: str,
        benchmark_sha256: str,
        config: dict[str, Any],
        versions: dict[str, str],
    ) -> str:
        run_id = f"{datetime.now(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"
        self.conn.execute(
            "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                now_iso(),
                command,
                benchmark,
                benchmark_version,
                benchmark_sha256,
                json.dumps(config, sort_keys=True),
                json.dumps(versions, sort_keys=True),
            ),
        )
        return run_id

    def runs(self) -> list[dict[str, Any]]:
        rows = self.conn.execute("SELECT * FROM runs ORDER BY created_at").fetchall()
        out = []
        for r in rows:
            d = dict(r)
            d["config"] = json.loads(d.pop("config_json"))
            d["versions"] = json.loads(d.pop("versions_json"))
            out.append(d)
        return out

    def plan(
        self,
        benchmark: str,
        model: str,
        cells: Iterable[tuple[str, str, int]],
        condition: str = "default",
    ) -> None:
        """Record cells as planned for a model under a condition (idempotent)."""
        with self.transaction():
            self.conn.executemany(
                "INSERT OR IGNORE INTO planned_cells VALUES (?, ?, ?, ?, ?, ?)",
                ((benchmark, model, condition, c, p, s) for c, p, s in cells),
            )

    def missing_cells(
        self,
        benchmark: str,
        model: str,
        cells: Sequence[C],
        *,
        retry_errors: bool = False,
        condition: str = "default",
    ) -> list[C]:
        """The cells among ``cells`` that have no stored generation under ``condition`` (or
        only an error row when ``retry_errors``), in the order given, as given."""
        only_ok = "error IS NULL" if retry_errors else "1"
        done = {
            (r[0], r[1], r[2])
            for r in self.conn.execute(
                f"SELECT claim_id, prompt_id, sample FROM generations "
                f"WHERE benchmark = ? AND model = ? AND condition = ? AND {only_ok}",
                (benchmark, model, condition),
            )
        }
        return [c for c in cells if c not in done]

    # -- generations -------------------------------------------------------------------------

    def add_generation(self, rec: GenerationRecord) -> None:
        """Store one result at once. A good result is never replaced; an error row is replaced
        by the next attempt's result."""
        gate.generation(rec)  # refused (GateError, a ValueError) before anything is written
        self.conn.execute(
            keep_good_upsert("generations", GENERATION_KEYS, GENERATION_COLUMNS),
            (
                rec.benchmark,
                rec.model,
                rec.condition,
                rec.claim_id,
                rec.prompt_id,
                rec.sample,
                rec.prompt,
                rec.response,
                rec.error,
                rec.input_tokens,
                rec.output_tokens,
                rec.latency_s,
                rec.finish_reason,
                json.dumps(rec.params, sort_keys=True),
                rec.run_id,
                rec.source,
                rec.created_at,
                _json_or_none(rec.extra),
                rec.cost_usd,
                rec.served_model,
            ),
        )

    def add_generations(self, recs: Iterable[GenerationRecord]) -> None:
        """Many at once, in one transaction (imports)."""
        with self.transaction():
            for rec in recs:
                self.add_generation(rec)

    def generation_id(
        self,
        benchmark: str,
        model: str,
        claim_id: str,
        prompt_id: str,
        sample: int,
        condition: str = "default",
    ) -> int | None:
        row = self.conn.execute(
            "SELECT gen_id FROM generations WHERE benchmark=? AND model=? AND condition=? "
            "AND claim_id=? AND prompt_id=? AND sample=?",
            (benchmark, model, condition, claim_id, prompt_id, sample),
        ).fetchone()
        return None if row is None else int(row[0])

    def pending_judgments(
        self,
        judge: str,
        *,
        benchmark: str | None = None,
        models: Sequence[str] | None = None,
        retry_errors: bool = False,
    ) -> list[PendingGeneration]:
        """Valid generations this judge has not judged yet (or only failed to, with
        ``retry_errors``), oldest first."""
        where = [
            "g.error IS NULL",
            f"coalesce(g.finish_reason, '') NOT IN ({','.join(repr(r) for r in NON_ANSWERS)})",
        ]
        args: list[Any] = [judge]
        if benchmark is not None:
            where.append("g.benchmark = ?")
            args.append(benchmark)
        if models:
            where.append(f"g.model IN ({','.join('?' * len(models))})")
            args.extend(models)
        done = "j.gen_id IS NULL" + (" OR j.error IS NOT NULL" if retry_errors else "")
        rows = self.conn.execute(
            f"""
            SELECT g.gen_id, g.claim_id, g.response FROM generations g
            LEFT JOIN judgments j ON j.gen_id = g.gen_id AND j.judge = ?
            WHERE {" AND ".join(where)} AND ({done})
            ORDER BY g.gen_id
            """,
            args,
        ).fetchall()
        talks = self.conversations(int(r[0]) for r in rows)  # a later turn's judge sees it
        return [PendingGeneration(int(r[0]), r[1], r[2], talks.get(int(r[0]), ())) for r in rows]

    # -- judgments ---------------------------------------------------------------------------

    def add_judgment(self, rec: JudgmentRecord) -> None:
        """Store one verdict at once; a verdict is never replaced, a failed request is."""
        gate.judgment(rec, FIELDS)
        scores = rec.scores or {}
        values = [scores.get(f) for f in FIELDS]
        self.conn.execute(
            keep_good_upsert("judgments", JUDGMENT_KEYS, JUDGMENT_COLUMNS),
            (
                rec.gen_id,
                rec.judge,
                rec.raw,
                rec.reasoning,
                int(rec.parse_error),
                rec.error,
                None if rec.said is None else json.dumps(rec.said, sort_keys=True),
                int(rec.consistency_flag),
                *values,
                rec.input_tokens,
                rec.output_tokens,
                rec.latency_s,
                rec.run_id,
                rec.source,
                rec.created_at,
                _json_or_none(rec.extra),
                rec.cost_usd,
            ),
        )

    def add_judgments(self, recs: Iterable[JudgmentRecord]) -> None:
        with self.transaction():
            for rec in recs:
                self.add_judgment(rec)

    def mean_output_tokens(self, model: str) -> float | None:
        row = self.conn.execute(
            "SELECT avg(output_tokens) FROM generations WHERE model = ? AND error IS NULL", (model,)
        ).fetchone()
        return None if row[0] is None else float(row[0])

    def judged_count(self, judge: str, benchmark: str, models: Sequence[str]) -> int:
        row = self.conn.execute(
            f"""SELECT count(*) FROM judgments j JOIN generations g ON g.gen_id = j.gen_id
            WHERE j.judge = ? AND j.error IS NULL AND g.benchmark = ?
            AND g.model IN ({",".join("?" * len(models))})""",
            (judge, benchmark, *models),
        ).fetchone()
        return int(row[0])

    # -- request cache ---------------------------------------------------------------------

    def cache_get(self, key: str) -> dict[str, Any] | None:
        row = self.conn.execute(
            "SELECT text, input_tokens, output_tokens, finish_reason FROM request_cache WHERE key = ?",
            (key,),
        ).fetchone()
        return None if row is None else dict(row)

    def cache_put(
        self,
        key: str,
        model: str,
        text: str,
        input_tokens: int,
        output_tokens: int,
        finish_reason: str | None,
    ) -> None:
        self.conn.execute(
            "INSERT OR IGNORE INTO request_cache VALUES (?, ?, ?, ?, ?, ?, ?)",
            (key, model, text, input_tokens, output_tokens, finish_reason, now_iso()),
        )

    # -- bulk lookup for imports (added for interop.py; read-only) -------------------------------

    def generation_ids(
        self, benchmark: str, condition: str = RELEASE
    ) -> dict[tuple[str, str, str, int], int]:
        """(model, claim_id, prompt_id, sample) -> gen_id for one benchmark and condition (the
        imported rows by default), in one query, so an import resolves tens of thousands of
        judge records without a SELECT each."""
        return {
            (r[0], r[1], r[2], int(r[3])): int(r[4])
            for r in self.conn.execute(
                "SELECT model, claim_id, prompt_id, sample, gen_id FROM generations "
                "WHERE benchmark = ? AND condition = ?",
                (benchmark, condition),
            )
        }

    def generation_contents(
        self, benchmark: str, condition: str = RELEASE
    ) -> dict[tuple[str, str, str, int], tuple[int, str | None, str | None]]:
        """(model, claim_id, prompt_id, sample) -> (gen_id, response, error): what an import
        compares a record with, to tell a repeat from a conflicting duplicate."""
        return {
            (r[0], r[1], r[2], int(r[3])): (int(r[4]), r[5], r[6])
            for r in self.conn.execute(
                "SELECT model, claim_id, prompt_id, sample, gen_id, response, error "
                "FROM generations WHERE benchmark = ? AND condition = ?",
                (benchmark, condition),
            )
        }

    def served_models(self, benchmark: str, model: str, condition: str) -> dict[str, int]:
        """The model ids ``model``'s stored replies say served them, with how many replies
        (a proxy or replica may serve another checkpoint than the one asked for)."""
        return {
            str(r[0]): int(r[1])
            for r in self.conn.execute(
                "SELECT served_model, count(*) FROM generations WHERE benchmark = ? AND "
                "model = ? AND condition = ? AND served_model IS NOT NULL GROUP BY served_model",
                (benchmark, model, condition),
            )
        }

    def judgment_contents(self) -> dict[tuple[int, str], tuple[int, str | None, str | None]]:
        """(gen_id, judge) -> (judgment_id, raw reply, error), for the same comparison."""
        return {
            (int(r[0]), r[1]): (int(r[2]), r[3], r[4])
            for r in self.conn.execute(
                "SELECT gen_id, judge, judgment_id, raw, error FROM judgments"
            )
        }

    # -- spending ------------------------------------------------------------------------------

    def spent_usd(self) -> float:
        """What every priced request stored here has cost, across all runs (the budget's meter
        starts from this, so raising ``--max-cost`` never spends the same budget twice), the
        self-consistency re-judgments included."""
        row = self.conn.execute(
            "SELECT (SELECT coalesce(sum(cost_usd), 0) FROM generations) + "
            "(SELECT coalesce(sum(cost_usd), 0) FROM judgments) + "
            "(SELECT coalesce(sum(cost_usd), 0) FROM rejudgments)"
        ).fetchone()
        return float(row[0])
