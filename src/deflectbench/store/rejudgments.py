"""Judge self-consistency rows: a seeded sample of answers judged again, kept apart.

A re-judgment is never a verdict: it lives in its own table (migration ``m009_rejudgments``),
so the analysis' consensus, rates and agreement never see it; only the self-consistency check
reads it, beside the judge's first verdict on the same answer.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from deflectbench.vocab import FIELDS

_COLUMNS = ("gen_id", "judge", "seed", "raw", "error", "parse_error", *FIELDS, "cost_usd")


def add_rejudgment(
    store: Any,
    gen_id: int,
    judge: str,
    seed: int,
    *,
    said: Mapping[str, int] | None,
    raw: str | None,
    error: str | None = None,
    cost_usd: float | None = None,
) -> None:
    """Store one re-judgment (``said``: what the judge said, None when it gave no verdict); a
    second one for the same answer, judge and seed replaces the first only if that failed."""
    values = [None if said is None else int(said[f]) for f in FIELDS]
    parse_error = int(error is None and said is None)
    row = (gen_id, judge, seed, raw, error, parse_error, *values, cost_usd)
    cols = ", ".join((*_COLUMNS, "created_at"))
    marks = ", ".join("?" * (len(_COLUMNS) + 1))
    with store.transaction():
        store.conn.execute(
            f"INSERT INTO rejudgments ({cols}) VALUES ({marks}) "
            "ON CONFLICT (gen_id, judge, seed) DO UPDATE SET "
            + ", ".join(f"{c} = excluded.{c}" for c in (*_COLUMNS[3:], "created_at"))
            + " WHERE rejudgments.error IS NOT NULL",
            (*row, datetime.now(UTC).isoformat()),
        )


def rejudged(store: Any, judge: str, seed: int) -> set[int]:
    """The answers ``judge`` has re-judged under ``seed`` (a failed request is not one)."""
    rows = store.conn.execute(
        "SELECT gen_id FROM rejudgments WHERE judge = ? AND seed = ? AND error IS NULL",
        (judge, seed),
    )
    return {int(r[0]) for r in rows}


def rejudgment_rows(store: Any, judges: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Every parsed re-judgment (gen_id, judge, seed and the fields), oldest first."""
    try:
        rows = store.conn.execute(
            f"SELECT {', '.join(_COLUMNS[:3])}, {', '.join(FIELDS)} FROM rejudgments "
            "WHERE error IS NULL AND parse_error = 0 ORDER BY created_at, gen_id"
        ).fetchall()
    except sqlite3.OperationalError:  # a store before the migration: no re-judgments
        return []
    out = [dict(zip((*_COLUMNS[:3], *FIELDS), r, strict=True)) for r in rows]
    return [r for r in out if judges is None or r["judge"] in judges]
