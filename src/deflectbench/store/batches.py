"""The store's register of provider batches (batch mode): each batch and what it carries.

A batch is written here, with every item it carries, before its request leaves this machine,
and its provider id the moment the provider answers; its results are stored with the items'
states in one transaction. So a process killed at any point loses nothing, and an item that
is in an open batch is never put in another (:meth:`Batches.batched_cells`).

States of a batch: ``submitting`` (written, the provider's id not yet known), ``open`` (the
provider holds it), ``collected`` (its results are stored), ``discarded`` (the provider refused
it: nothing was sent). States of an item: ``open``, ``done`` (its result is stored),
``resubmitted`` (failed, expired or lost, and put in a newer batch), ``given_up`` (failed past
the retry limit: an error row is stored), ``cancelled``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from deflectbench.records import Cell, now_iso

#: Batch states that the provider may still be working on (or that may be there unknown).
OPEN_STATES = ("submitting", "open")


@dataclass(frozen=True)
class BatchItem:
    """One request in a batch: a generation's cell, or an answer (``gen_id``) for a judge."""

    custom_id: str
    claim_id: str | None = None
    prompt_id: str | None = None
    sample: int | None = None
    gen_id: int | None = None
    attempt: int = 1
    #: Its request's key in the request cache (computed once, at submit).
    cache_key: str | None = None

    @property
    def cell(self) -> Cell:
        assert self.claim_id is not None and self.prompt_id is not None
        assert self.sample is not None
        return Cell(self.claim_id, self.prompt_id, self.sample)


@dataclass(frozen=True)
class BatchRow:
    """A batch as stored."""

    batch_key: str
    wire: str
    model: str
    kind: str
    state: str
    remote_status: str | None
    remote_id: str | None
    input_file_id: str | None
    run_id: str | None
    benchmark: str
    condition: str | None
    settings: dict[str, Any]
    items: int
    counts: dict[str, int]
    reserved_usd: float
    error: str | None
    created_at: str
    updated_at: str

    @classmethod
    def from_row(cls, row: sqlite3.Row | dict[str, Any]) -> BatchRow:
        d = dict(row)
        d["settings"] = json.loads(d.pop("settings_json"))
        d["counts"] = json.loads(d.pop("counts_json"))
        return cls(**d)


@dataclass(frozen=True)
class NewBatch:
    """A batch about to be sent: what the store keeps of it besides its items."""

    batch_key: str
    wire: str
    model: str
    kind: str
    run_id: str | None
    benchmark: str
    condition: str | None
    settings: dict[str, Any]
    reserved_usd: float


class Batches:
    """Batch queries over a store's connection (mixed into :class:`Store`)."""

    conn: sqlite3.Connection
    #: Store's own (BEGIN IMMEDIATE ... COMMIT).
    transaction: Callable[[], AbstractContextManager[None]]

    def batch_begin(
        self,
        batch: NewBatch,
        items: Sequence[BatchItem],
        resubmits: Sequence[tuple[str, str]] = (),
    ) -> None:
        """Write a batch and its items before anything is sent (state ``submitting``);
        ``resubmits`` are (batch_key, custom_id) of older items this batch carries again."""
        now = now_iso()
        with self.transaction():
            self.conn.execute(
                "INSERT INTO batches (batch_key, wire, model, kind, state, run_id, benchmark, "
                "condition, settings_json, items, reserved_usd, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, 'submitting', ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    batch.batch_key,
                    batch.wire,
                    batch.model,
                    batch.kind,
                    batch.run_id,
                    batch.benchmark,
                    batch.condition,
                    json.dumps(batch.settings, sort_keys=True),
                    len(items),
                    batch.reserved_usd,
                    now,
                    now,
                ),
            )
            self.conn.executemany(
                "INSERT INTO batch_items (batch_key, custom_id, claim_id, prompt_id, sample, "
                "gen_id, attempt, cache_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    (
                        batch.batch_key,
                        i.custom_id,
                        i.claim_id,
                        i.prompt_id,
                        i.sample,
                        i.gen_id,
                        i.attempt,
                        i.cache_key,
                    )
                    for i in items
                ),
            )
            self.conn.executemany(
                "UPDATE batch_items SET state = 'resubmitted' WHERE batch_key = ? AND custom_id = ?",
                resubmits,
            )

    def batch_submitted(
        self, batch_key: str, remote_id: str, remote_status: str, input_file_id: str | None
    ) -> None:
        """The provider holds the batch: keep its id at once."""
        self.conn.execute(
            "UPDATE batches SET state = 'open', remote_id = ?, remote_status = ?, "
            "input_file_id = ?, updated_at = ? WHERE batch_key = ?",
            (remote_id, remote_status, input_file_id, now_iso(), batch_key),
        )

    def batch_discard(self, batch_key: str, error: str) -> None:
        """The provider refused the batch (nothing was sent): its items are free again."""
        with self.transaction():
            self.conn.execute(
                "UPDATE batches SET state = 'discarded', error = ?, reserved_usd = 0, "
                "updated_at = ? WHERE batch_key = ?",
                (error, now_iso(), batch_key),
            )
            self.conn.execute(
                "UPDATE batch_items SET state = 'cancelled', error = ? WHERE batch_key = ?",
                (error, batch_key),
            )

    def batch_progress(self, batch_key: str, remote_status: str, counts: dict[str, int]) -> None:
        self.conn.execute(
            "UPDATE batches SET remote_status = ?, counts_json = ?, updated_at = ? "
            "WHERE batch_key = ?",
            (remote_status, json.dumps(counts, sort_keys=True), now_iso(), batch_key),
        )

    def batch_close(
        self,
        batch_key: str,
        states: Iterable[tuple[str, str | None, str]],
        *,
        error: str | None = None,
    ) -> None:
        """Mark the batch collected and each item's state ((state, error, custom_id)); call
        inside the transaction that stores the results."""
        self.conn.executemany(
            "UPDATE batch_items SET state = ?, error = ? WHERE batch_key = ? AND custom_id = ?",
            ((s, e, batch_key, c) for s, e, c in states),
        )
        self.conn.execute(
            "UPDATE batches SET state = 'collected', reserved_usd = 0, error = ?, updated_at = ? "
            "WHERE batch_key = ?",
            (error, now_iso(), batch_key),
        )

    def batch_items_update(
        self, batch_key: str, states: Iterable[tuple[str, str | None, str]]
    ) -> None:
        """Set items' states ((state, error, custom_id)) in a batch already collected (a
        batch file's cell whose line came in a later file); call inside the transaction that
        stores their results."""
        self.conn.executemany(
            "UPDATE batch_items SET state = ?, error = ? WHERE batch_key = ? AND custom_id = ?",
            ((s, e, batch_key, c) for s, e, c in states),
        )
        self.conn.execute(
            "UPDATE batches SET updated_at = ? WHERE batch_key = ?", (now_iso(), batch_key)
        )

    def wire_items(self, wire: str) -> list[WireItem]:
        """Every item of the generation batches of ``wire`` (none discarded), with its state,
        its error and its cell's stored row (whether one exists, and its error): what an
        engine's output lines are matched against."""
        fields = ", ".join(f"i.{f}" for f in BATCH_ITEM_FIELDS)
        rows = self.conn.execute(
            f"""SELECT b.batch_key, i.state, i.error, g.gen_id IS NOT NULL, g.error, {fields}
            FROM batch_items i JOIN batches b ON b.batch_key = i.batch_key
            LEFT JOIN generations g ON g.benchmark = b.benchmark AND g.model = b.model
                AND g.condition = b.condition AND g.claim_id = i.claim_id
                AND g.prompt_id = i.prompt_id AND g.sample = i.sample
            WHERE b.wire = ? AND b.kind = 'generation' AND b.state != 'discarded'
            ORDER BY b.created_at, b.rowid""",
            (wire,),
        )
        return [WireItem(r[0], r[1], r[2], bool(r[3]), r[4], BatchItem(*r[5:])) for r in rows]

    def cell_errors(
        self, benchmark: str, model: str, condition: str, cells: Iterable[Cell]
    ) -> dict[Cell, str | None]:
        """Each of ``cells`` that has a stored row: its error (None: an answer)."""
        wanted = set(cells)
        out: dict[Cell, str | None] = {}
        for r in self.conn.execute(
            "SELECT claim_id, prompt_id, sample, error FROM generations "
            "WHERE benchmark = ? AND model = ? AND condition = ?",
            (benchmark, model, condition),
        ):
            cell = Cell(r[0], r[1], int(r[2]))
            if cell in wanted:
                out[cell] = r[3]
        return out

    def batch(self, batch_key: str) -> BatchRow | None:
        row = self.conn.execute(
            "SELECT * FROM batches WHERE batch_key = ?", (batch_key,)
        ).fetchone()
        return None if row is None else BatchRow.from_row(row)

    def batch_list(self, *, open_only: bool = False) -> list[BatchRow]:
        """Batches oldest first (``open_only``: those a provider may still hold)."""
        where = f"WHERE state IN {OPEN_STATES!r}" if open_only else ""
        rows = self.conn.execute(f"SELECT * FROM batches {where} ORDER BY created_at, rowid")
        return [BatchRow.from_row(r) for r in rows]

    def batch_items(self, batch_key: str, state: str | None = None) -> list[BatchItem]:
        sql = f"SELECT {', '.join(BATCH_ITEM_FIELDS)} FROM batch_items WHERE batch_key = ?"
        args: tuple[Any, ...] = (batch_key,)
        if state is not None:
            sql += " AND state = ?"
            args += (state,)
        return [BatchItem(*r) for r in self.conn.execute(sql, args)]

    def batch_item_states(self, batch_key: str) -> dict[str, int]:
        return {
            r[0]: int(r[1])
            for r in self.conn.execute(
                "SELECT state, count(*) FROM batch_items WHERE batch_key = ? GROUP BY state",
                (batch_key,),
            )
        }

    def batched_cells(
        self, benchmark: str, model: str, condition: str
    ) -> set[tuple[str, str, int]]:
        """Cells of a model's condition that an open batch carries (never sent again)."""
        return {
            (r[0], r[1], int(r[2]))
            for r in self.conn.execute(
                f"""SELECT i.claim_id, i.prompt_id, i.sample FROM batch_items i
                JOIN batches b ON b.batch_key = i.batch_key
                WHERE b.state IN {OPEN_STATES!r} AND i.state = 'open' AND b.kind = 'generation'
                AND b.benchmark = ? AND b.model = ? AND b.condition = ?""",
                (benchmark, model, condition),
            )
        }

    def batched_answers(self, judge: str) -> set[int]:
        """Generations an open batch of this judge carries (never sent again)."""
        return {
            int(r[0])
            for r in self.conn.execute(
                f"""SELECT i.gen_id FROM batch_items i
                JOIN batches b ON b.batch_key = i.batch_key
                WHERE b.state IN {OPEN_STATES!r} AND i.state = 'open' AND b.kind = 'judgment'
                AND b.model = ?""",
                (judge,),
            )
        }

    def batch_reserved_usd(self) -> float:
        """What open batches hold reserved against the budget (their results are not stored
        yet, so :meth:`spent_usd` does not count them)."""
        row = self.conn.execute(
            f"SELECT coalesce(sum(reserved_usd), 0) FROM batches WHERE state IN {OPEN_STATES!r}"
        ).fetchone()
        return float(row[0])

    def committed_usd(self) -> float:
        """What counts against a budget now: every stored request's cost, and what open
        batches hold reserved (a run's meter and batch mode's both start from this)."""
        return self.spent_usd() + self.batch_reserved_usd()

    def spent_usd(self) -> float:  # defined on Store; declared for the type checker
        raise NotImplementedError

    def batch_failures(self) -> Iterator[tuple[str, str, int]]:
        """(model, kind, items) still to do after a failure: items resubmitted whose newest
        attempt is not done yet (the visible failure a status exits non-zero for)."""
        yield from (
            (r[0], r[1], int(r[2]))
            for r in self.conn.execute(
                f"""SELECT b.model, b.kind, count(*) FROM batch_items i
                JOIN batches b ON b.batch_key = i.batch_key
                WHERE i.attempt > 1 AND i.state = 'open' AND b.state IN {OPEN_STATES!r}
                GROUP BY 1, 2"""
            )
        )

    def batch_retries(self) -> list[tuple[BatchRow, BatchItem]]:
        """Items of collected batches waiting to be sent again (failed, expired or lost)."""
        rows = self.conn.execute(
            """SELECT b.*, i.custom_id AS i_custom_id, i.claim_id AS i_claim_id,
            i.prompt_id AS i_prompt_id, i.sample AS i_sample, i.gen_id AS i_gen_id,
            i.attempt AS i_attempt, i.cache_key AS i_cache_key
            FROM batch_items i JOIN batches b ON b.batch_key = i.batch_key
            WHERE i.state = 'retry' ORDER BY b.created_at, b.rowid"""
        ).fetchall()
        out = []
        for r in rows:
            d = dict(r)
            item = BatchItem(*(d.pop(f"i_{k}") for k in BATCH_ITEM_FIELDS))
            out.append((BatchRow.from_row(d), item))
        return out

    def batch_items_superseded(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Items waiting to be sent again whose result came meanwhile ((batch_key, custom_id))."""
        self.conn.executemany(
            "UPDATE batch_items SET state = 'done' WHERE batch_key = ? AND custom_id = ? "
            "AND state = 'retry'",
            pairs,
        )

    def batch_cancel_requested(self, batch_key: str, note: str) -> None:
        """The user cancelled the batch: its unfinished items are not sent again."""
        self.conn.execute(
            "UPDATE batches SET error = ?, updated_at = ? WHERE batch_key = ?",
            (note, now_iso(), batch_key),
        )

    def answers(self, gen_ids: Iterable[int]) -> dict[int, tuple[str, str]]:
        """gen_id -> (claim_id, response) of stored answers (what a blind judge is shown)."""
        ids = list(gen_ids)
        out: dict[int, tuple[str, str]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            for r in self.conn.execute(
                "SELECT gen_id, claim_id, response FROM generations WHERE response IS NOT NULL "
                f"AND gen_id IN ({','.join('?' * len(chunk))})",
                chunk,
            ):
                out[int(r[0])] = (r[1], r[2])
        return out

    def batch_judges(self) -> dict[str, set[str]]:
        """judge -> the models whose generation batches named it (judged as answers come)."""
        out: dict[str, set[str]] = {}
        for model, settings in self.conn.execute(
            "SELECT DISTINCT model, settings_json FROM batches WHERE kind = 'generation' "
            "AND state != 'discarded'"
        ):
            for judge in json.loads(settings).get("judges", []):
                out.setdefault(judge, set()).add(model)
        return out


@dataclass(frozen=True)
class WireItem:
    """An item of a batch (:meth:`Batches.wire_items`): its state and error, and whether its
    cell has a stored row and that row's error."""

    batch_key: str
    state: str
    error: str | None
    stored: bool
    row_error: str | None
    item: BatchItem


BATCH_ITEM_FIELDS = (
    "custom_id",
    "claim_id",
    "prompt_id",
    "sample",
    "gen_id",
    "attempt",
    "cache_key",
)
