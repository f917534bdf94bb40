"""The store's schema: numbered, named migrations, applied in order (``PRAGMA user_version``).

Like simonw/llm's migrations, each has a name saying what it adds; a store records how many it
has applied, so an older file is upgraded in place and a newer one is refused.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    name: str
    #: Why it exists, in a line.
    purpose: str
    sql: str

    def statements(self) -> list[str]:
        return [s for s in self.sql.split(";") if s.strip()]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "m001_initial",
        "runs, planned cells, generations, judgments",
        """
    CREATE TABLE runs (
        run_id TEXT PRIMARY KEY,
        created_at TEXT NOT NULL,
        command TEXT NOT NULL,
        benchmark TEXT NOT NULL,
        benchmark_version TEXT NOT NULL,
        benchmark_sha256 TEXT NOT NULL,
        config_json TEXT NOT NULL,
        versions_json TEXT NOT NULL
    );
    CREATE TABLE planned_cells (
        benchmark TEXT NOT NULL,
        model TEXT NOT NULL,
        claim_id TEXT NOT NULL,
        prompt_id TEXT NOT NULL,
        sample INTEGER NOT NULL,
        PRIMARY KEY (benchmark, model, claim_id, prompt_id, sample)
    ) WITHOUT ROWID;
    CREATE TABLE generations (
        gen_id INTEGER PRIMARY KEY,
        benchmark TEXT NOT NULL,
        model TEXT NOT NULL,
        claim_id TEXT NOT NULL,
        prompt_id TEXT NOT NULL,
        sample INTEGER NOT NULL,
        prompt TEXT NOT NULL,
        response TEXT,
        error TEXT,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        latency_s REAL,
        finish_reason TEXT,
        params_json TEXT NOT NULL DEFAULT '{}',
        run_id TEXT,
        source TEXT NOT NULL DEFAULT 'run',
        created_at TEXT NOT NULL,
        UNIQUE (benchmark, model, claim_id, prompt_id, sample)
    );
    CREATE TABLE judgments (
        judgment_id INTEGER PRIMARY KEY,
        gen_id INTEGER NOT NULL REFERENCES generations(gen_id),
        judge TEXT NOT NULL,
        raw TEXT,
        reasoning TEXT,
        parse_error INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        said_json TEXT,
        consistency_flag INTEGER NOT NULL DEFAULT 0,
        refusal INTEGER, soft_refusal INTEGER, WA_present INTEGER, AH_present INTEGER,
        RH_present INTEGER, any_fallacy_present INTEGER, compliance_clean INTEGER,
        fallacy_labeled INTEGER,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        latency_s REAL,
        run_id TEXT,
        source TEXT NOT NULL DEFAULT 'run',
        created_at TEXT NOT NULL,
        UNIQUE (gen_id, judge)
    );
    CREATE INDEX judgments_by_judge ON judgments (judge);
    """,
    ),
    Migration(
        "m002_extra_fields",
        "fields of imported records that have no column of their own (kept for a faithful export)",
        """
    ALTER TABLE generations ADD COLUMN extra_json TEXT;
    ALTER TABLE judgments ADD COLUMN extra_json TEXT;
    """,
    ),
    Migration(
        "m003_request_cache",
        "a cache of identical requests (model, messages, parameters incl. the seed)",
        """
    CREATE TABLE request_cache (
        key TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        text TEXT NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        finish_reason TEXT,
        created_at TEXT NOT NULL
    ) WITHOUT ROWID;
    """,
    ),
)
