"""What ``deflectbench merge`` reads from a part's store and writes into the merged one.

Results go in through :meth:`Store.add_generation` and :meth:`Store.add_judgment` (the gate's
rules, the keep-good upsert); this module holds only the SQL that has no record type: the rows
streamed out of a part, its runs, its conditions and its planned cells copied over unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deflectbench.store import Store


def stream_rows(store: Store, table: str, order: str) -> Iterator[dict[str, Any]]:
    """Every row of ``generations`` or ``judgments``, one at a time (a cursor, not a list)."""
    if table not in {"generations", "judgments"} or order not in {"gen_id", "judgment_id"}:
        raise ValueError(f"no streamed rows of {table!r} by {order!r}")
    cursor = store.conn.execute(f"SELECT * FROM {table} ORDER BY {order}")
    for row in cursor:
        yield dict(row)


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


def generation_cells(store: Store) -> set[tuple[str, str, str, str, int]]:
    """(model, condition, claim_id, prompt_id, sample) of every stored generation (a failed
    request's too): what a part's completeness is checked against."""
    return {
        (r[0], r[1], r[2], r[3], int(r[4]))
        for r in store.conn.execute(
            "SELECT DISTINCT model, condition, claim_id, prompt_id, sample FROM generations"
        )
    }
