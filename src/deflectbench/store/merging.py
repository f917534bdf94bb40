"""What ``deflectbench merge`` reads from a part's store and writes into the merged one.

Results go in through :meth:`Store.add_generation` and :meth:`Store.add_judgment` (the gate's
rules, the keep-good upsert); this module holds only the SQL that has no record type: the rows
streamed out of a part chunk by chunk, its runs, its conditions and its planned cells copied
over unchanged, and the part's generation ids against OUT's, kept on disk (a temporary table)
rather than in memory, so a merge holds one chunk of what it adds and nothing of OUT.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deflectbench.store import Store

#: Rows read, compared and written at a time: what a merge holds of a part, whatever its size.
CHUNK = 2000
#: Ids per lookup query (under SQLite's default limit of 32,766 parameters).
_PER_QUERY = 500


def stream_chunks(store: Store, table: str, order: str) -> Iterator[list[dict[str, Any]]]:
    """Every row of ``generations`` or ``judgments`` in order, :data:`CHUNK` rows at a time
    (a cursor read in chunks, never the whole table)."""
    if table not in {"generations", "judgments"} or order not in {"gen_id", "judgment_id"}:
        raise ValueError(f"no streamed rows of {table!r} by {order!r}")
    cursor = store.conn.execute(f"SELECT * FROM {table} ORDER BY {order}")
    while rows := cursor.fetchmany(CHUNK):
        yield [dict(r) for r in rows]


def stream_rows(store: Store, table: str, order: str) -> Iterator[dict[str, Any]]:
    """Every row of ``generations`` or ``judgments``, one at a time (a cursor, not a list)."""
    for chunk in stream_chunks(store, table, order):
        yield from chunk


def start_id_map(store: Store) -> None:
    """An empty map of a part's gen_id to OUT's (a temporary table of OUT's connection, on
    disk): one part at a time."""
    store.conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS merge_gen_ids "
        "(src_id INTEGER PRIMARY KEY, out_id INTEGER NOT NULL)"
    )
    store.conn.execute("DELETE FROM temp.merge_gen_ids")


def remember_ids(store: Store, pairs: Sequence[tuple[int, int]]) -> None:
    """(part's gen_id, OUT's gen_id) of generations whose content OUT now holds."""
    store.conn.executemany("INSERT OR REPLACE INTO temp.merge_gen_ids VALUES (?, ?)", pairs)


def mapped_ids(store: Store, src_ids: Sequence[int]) -> dict[int, int]:
    """The part's gen_id -> OUT's for the given ids only (those remembered)."""
    out: dict[int, int] = {}
    unique = list(dict.fromkeys(src_ids))
    for start in range(0, len(unique), _PER_QUERY):
        part = unique[start : start + _PER_QUERY]
        sql = (
            "SELECT src_id, out_id FROM temp.merge_gen_ids "
            f"WHERE src_id IN ({', '.join('?' * len(part))})"
        )
        out.update((int(a), int(b)) for a, b in store.conn.execute(sql, part))
    return out


def condition_rows(store: Store) -> list[dict[str, Any]]:
    """Every condition as stored: model, label, settings_json, settings_sha256, created_at."""
    return [
        dict(r)
        for r in store.conn.execute(
            "SELECT model, label, settings_json, settings_sha256, created_at FROM conditions "
            "ORDER BY created_at, model, label"
        )
    ]


def add_condition_row(store: Store, row: dict[str, Any]) -> None:
    """A condition of another store, as it is (the caller has checked it mixes nothing)."""
    store.conn.execute(
        "INSERT OR IGNORE INTO conditions (model, label, settings_json, settings_sha256, "
        "created_at) VALUES (?, ?, ?, ?, ?)",
        (
            row["model"],
            row["label"],
            row["settings_json"],
            row["settings_sha256"],
            row["created_at"],
        ),
    )


def add_run_row(store: Store, run: dict[str, Any]) -> bool:
    """A run of another store under its own id (as :meth:`Store.runs` gives it); False when
    the store already holds that run."""
    cur = store.conn.execute(
        "INSERT OR IGNORE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            run["run_id"],
            run["created_at"],
            run["command"],
            run["benchmark"],
            run["benchmark_version"],
            run["benchmark_sha256"],
            json.dumps(run["config"], sort_keys=True),
            json.dumps(run["versions"], sort_keys=True),
        ),
    )
    return cur.rowcount > 0


def planned_rows(store: Store) -> Iterator[tuple[Any, ...]]:
    """Every planned cell: (benchmark, model, condition, claim_id, prompt_id, sample)."""
    yield from store.conn.execute(
        "SELECT benchmark, model, condition, claim_id, prompt_id, sample FROM planned_cells"
    )


def add_planned_rows(store: Store, rows: Iterator[tuple[Any, ...]]) -> None:
    store.conn.executemany(
        "INSERT OR IGNORE INTO planned_cells (benchmark, model, condition, claim_id, prompt_id, "
        "sample) VALUES (?, ?, ?, ?, ?, ?)",
        rows,
    )


def held_elsewhere(store: Store) -> dict[str, int]:
    """What a merge does not carry, by what it is (second turns, human labels, open batch
    items), with how many; empty when there is nothing of these."""
    out = {}
    for name, sql in (
        ("second-turn links", "SELECT count(*) FROM turns"),
        ("human labels", "SELECT count(*) FROM human_labels"),
        ("open batch items", "SELECT count(*) FROM batch_items WHERE state = 'open'"),
    ):
        n = int(store.conn.execute(sql).fetchone()[0])
        if n:
            out[name] = n
    return out


def generation_cells(store: Store, model: str, condition: str) -> set[tuple[str, str, int]]:
    """(claim_id, prompt_id, sample) of every stored generation of one model and condition (a
    failed request's too): what a part's completeness is checked against, one model's cells
    at a time."""
    return {
        (r[0], r[1], int(r[2]))
        for r in store.conn.execute(
            "SELECT DISTINCT claim_id, prompt_id, sample FROM generations "
            "WHERE model = ? AND condition = ?",
            (model, condition),
        )
    }
