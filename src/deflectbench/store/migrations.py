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


#: A generation's columns from its cell's claim on, as m001 made them; m004 rebuilds the table
#: with the same ones (a condition before them, the extra fields and the cost after).
_GENERATION_COLUMNS = """\
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
"""


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "m001_initial",
        "runs, planned cells, generations, judgments",
        f"""
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
{_GENERATION_COLUMNS}        UNIQUE (benchmark, model, claim_id, prompt_id, sample)
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
    Migration(
        "m004_conditions_and_costs",
        "settings are part of a result's identity (conditions); each request's cost is kept",
        f"""
    CREATE TABLE conditions (
        model TEXT NOT NULL,
        label TEXT NOT NULL,
        settings_json TEXT NOT NULL,
        settings_sha256 TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (model, label),
        UNIQUE (model, settings_sha256)
    ) WITHOUT ROWID;
    INSERT INTO conditions
        SELECT DISTINCT model, 'legacy', '{{"recorded": false}}', 'legacy', strftime('%Y-%m-%dT%H:%M:%fZ')
        FROM generations WHERE source = 'run';
    INSERT INTO conditions
        SELECT DISTINCT model, 'release', '{{"source": "imported files"}}', 'release',
            strftime('%Y-%m-%dT%H:%M:%fZ')
        FROM generations WHERE source != 'run';
    CREATE TABLE generations_v4 (
        gen_id INTEGER PRIMARY KEY,
        benchmark TEXT NOT NULL,
        model TEXT NOT NULL,
        condition TEXT NOT NULL,
{_GENERATION_COLUMNS}        extra_json TEXT,
        cost_usd REAL,
        UNIQUE (benchmark, model, condition, claim_id, prompt_id, sample)
    );
    INSERT INTO generations_v4 (gen_id, benchmark, model, condition, claim_id, prompt_id, sample,
        prompt, response, error, input_tokens, output_tokens, latency_s, finish_reason,
        params_json, run_id, source, created_at, extra_json)
        SELECT gen_id, benchmark, model, CASE WHEN source = 'run' THEN 'legacy' ELSE 'release' END,
            claim_id, prompt_id, sample, prompt, response, error, input_tokens, output_tokens,
            latency_s, finish_reason, params_json, run_id, source, created_at, extra_json
        FROM generations;
    DROP TABLE generations;
    ALTER TABLE generations_v4 RENAME TO generations;
    CREATE TABLE planned_cells_v4 (
        benchmark TEXT NOT NULL,
        model TEXT NOT NULL,
        condition TEXT NOT NULL,
        claim_id TEXT NOT NULL,
        prompt_id TEXT NOT NULL,
        sample INTEGER NOT NULL,
        PRIMARY KEY (benchmark, model, condition, claim_id, prompt_id, sample)
    ) WITHOUT ROWID;
    INSERT INTO planned_cells_v4
        SELECT benchmark, model, 'legacy', claim_id, prompt_id, sample FROM planned_cells;
    DROP TABLE planned_cells;
    ALTER TABLE planned_cells_v4 RENAME TO planned_cells;
    ALTER TABLE judgments ADD COLUMN cost_usd REAL;
    """,
    ),
    Migration(
        "m005_batches",
        "batch mode: each provider batch (id, state, counts) and the cells or answers it carries",
        """
    CREATE TABLE batches (
        batch_key TEXT PRIMARY KEY,
        wire TEXT NOT NULL,
        model TEXT NOT NULL,
        kind TEXT NOT NULL,
        state TEXT NOT NULL,
        remote_status TEXT,
        remote_id TEXT UNIQUE,
        input_file_id TEXT,
        run_id TEXT,
        benchmark TEXT NOT NULL,
        condition TEXT,
        settings_json TEXT NOT NULL,
        items INTEGER NOT NULL,
        counts_json TEXT NOT NULL DEFAULT '{}',
        reserved_usd REAL NOT NULL DEFAULT 0,
        error TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX batches_by_state ON batches (state);
    CREATE TABLE batch_items (
        batch_key TEXT NOT NULL REFERENCES batches(batch_key),
        custom_id TEXT NOT NULL,
        claim_id TEXT,
        prompt_id TEXT,
        sample INTEGER,
        gen_id INTEGER,
        state TEXT NOT NULL DEFAULT 'open',
        attempt INTEGER NOT NULL DEFAULT 1,
        error TEXT,
        cache_key TEXT,
        PRIMARY KEY (batch_key, custom_id)
    ) WITHOUT ROWID;
    CREATE INDEX batch_items_by_state ON batch_items (state, batch_key);
    """,
    ),
    Migration(
        "m006_human_labels",
        "human labels of generations on the rubric's fields, and the seeded annotation sample",
        """
    CREATE TABLE human_labels (
        gen_id INTEGER NOT NULL REFERENCES generations(gen_id),
        annotator TEXT NOT NULL,
        refusal INTEGER NULL, soft_refusal INTEGER NULL, WA_present INTEGER NULL,
        AH_present INTEGER NULL, RH_present INTEGER NULL, any_fallacy_present INTEGER NULL,
        compliance_clean INTEGER NULL, fallacy_labeled INTEGER NULL,
        unsure INTEGER NOT NULL DEFAULT 0,
        note TEXT NOT NULL DEFAULT '',
        source TEXT NOT NULL DEFAULT 'annotate',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (gen_id, annotator)
    ) WITHOUT ROWID;
    CREATE INDEX human_labels_by_annotator ON human_labels (annotator);
    CREATE TABLE annotation_samples (
        position INTEGER PRIMARY KEY,
        item_id TEXT NOT NULL UNIQUE,
        gen_id INTEGER NOT NULL UNIQUE REFERENCES generations(gen_id),
        stratum TEXT NOT NULL,
        seed INTEGER NOT NULL,
        created_at TEXT NOT NULL
    );
    """,
    ),
    Migration(
        "m007_turns",
        "multi-turn packs: which generation continues which, after what outcome, with what turn",
        """
    CREATE TABLE turns (
        gen_id INTEGER PRIMARY KEY REFERENCES generations(gen_id),
        parent_gen_id INTEGER NOT NULL UNIQUE REFERENCES generations(gen_id),
        turn INTEGER NOT NULL,
        followup_id TEXT NOT NULL,
        after_outcome TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    """,
    ),
    Migration(
        "m008_served_model",
        "the model id each reply says served it, kept beside the model that was asked",
        """
    ALTER TABLE generations ADD COLUMN served_model TEXT;
    """,
    ),
    Migration(
        "m009_rejudgments",
        "judge self-consistency: a seeded sample re-judged, kept apart from the verdicts",
        """
    CREATE TABLE rejudgments (
        gen_id INTEGER NOT NULL REFERENCES generations(gen_id),
        judge TEXT NOT NULL,
        seed INTEGER NOT NULL,
        raw TEXT,
        error TEXT,
        parse_error INTEGER NOT NULL DEFAULT 0,
        refusal INTEGER NULL, soft_refusal INTEGER NULL, WA_present INTEGER NULL,
        AH_present INTEGER NULL, RH_present INTEGER NULL, any_fallacy_present INTEGER NULL,
        compliance_clean INTEGER NULL, fallacy_labeled INTEGER NULL,
        cost_usd REAL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (gen_id, judge, seed)
    );
    """,
    ),
    Migration(
        "m010_manifests",
        "what each run really ran, per model and judge: served ids, parameters sent, throughput",
        """
    CREATE TABLE manifests (
        run_id TEXT NOT NULL REFERENCES runs(run_id),
        role TEXT NOT NULL CHECK (role IN ('model', 'judge')),
        name TEXT NOT NULL,
        condition TEXT NOT NULL DEFAULT '',
        manifest_json TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (run_id, role, name, condition)
    );
    """,
    ),
    Migration(
        "m011_cascades",
        "cascaded judging: per pack, which judge is the cheap one, which are the expensive "
        "ones and the seeded share of the answers they see (the verdicts' provenance)",
        """
    CREATE TABLE IF NOT EXISTS cascades (
        benchmark TEXT PRIMARY KEY,
        cheap_judge TEXT NOT NULL,
        expensive_json TEXT NOT NULL,
        seed INTEGER NOT NULL,
        stratify TEXT NOT NULL,
        target TEXT,
        shares_json TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    """,
    ),
)
