"""Human labels in the store: each annotator's labels of a generation on the rubric's fields,
and the seeded annotation sample they label (mixed into :class:`deflectbench.store.Store`).

Labels are kept as the annotator gave them (no rubric rules applied): comparing them with the
judges is the point, so they must not be bent towards the judges' rules first.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from deflectbench import gate
from deflectbench.records import HumanLabel, now_iso
from deflectbench.store.files import StoreError
from deflectbench.vocab import FIELDS

__all__ = ["ANNOTATOR_PATTERN", "LabelError", "SampleItem", "check_annotator", "check_values"]

#: An annotator's name: a letter or digit, then letters, digits, ``._@-`` (up to 64 characters),
#: so it is safe in a URL, a file name and a CSV cell.
ANNOTATOR_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")


class LabelError(StoreError):
    """A human label that cannot be stored (bad annotator name, field or value, unknown
    generation); the message says what to fix."""


@dataclass(frozen=True)
class SampleItem:
    """One generation in the annotation sample: its place (1-based, in its pack's sample when
    read for one pack), its opaque id, its stratum."""

    position: int
    item_id: str
    gen_id: int
    stratum: str
    seed: int


def check_annotator(name: str) -> str:
    if not isinstance(name, str) or not ANNOTATOR_PATTERN.fullmatch(name):
        raise LabelError(
            f"annotator name {name!r} is not allowed: use 1-64 letters, digits or ._@- "
            "(starting with a letter or digit), e.g. --annotator alice"
        )
    return name


def check_values(values: dict[str, Any]) -> dict[str, int | None]:
    """Every rubric field as 0, 1 or None (unset); unknown fields and other values refused."""
    unknown = [k for k in values if k not in FIELDS]
    if unknown:
        raise LabelError(
            f"unknown rubric field {unknown[0]!r} in a human label; fields: {', '.join(FIELDS)}"
        )
    out: dict[str, int | None] = {}
    for f in FIELDS:
        v = values.get(f)
        if isinstance(v, bool):
            v = int(v)
        try:
            out[f] = gate.verdict(v, f)  # the gate's rule: 0, 1 or missing
        except gate.GateError:
            raise LabelError(
                f"human label field {f} is {v!r}: give 0, 1 or leave it unset"
            ) from None
    return out


_COLUMNS = ("gen_id", "annotator", *FIELDS, "unsure", "note", "source", "created_at", "updated_at")


def _label(row: Sequence[Any]) -> HumanLabel:
    r = dict(zip(_COLUMNS, row, strict=True))
    return HumanLabel(
        gen_id=int(r["gen_id"]),
        annotator=r["annotator"],
        values={f: r[f] for f in FIELDS},
        unsure=bool(r["unsure"]),
        note=r["note"],
        source=r["source"],
        created_at=r["created_at"],
        updated_at=r["updated_at"],
    )


class Labels:
    """Human-label queries over a store's connection (mixed into :class:`Store`)."""

    conn: sqlite3.Connection

    def transaction(self) -> AbstractContextManager[None]:  # defined on Store
        raise NotImplementedError

    # -- labels ----------------------------------------------------------------------------

    def save_label(self, label: HumanLabel) -> None:
        """Store one label at once, replacing this annotator's earlier label of the generation
        (its first ``created_at`` is kept; ``updated_at`` is now, unless the label brings one)."""
        check_annotator(label.annotator)
        values = check_values(label.values)
        if not isinstance(label.note, str) or len(label.note) > 10_000:
            raise LabelError("a label's note must be text of at most 10,000 characters")
        exists = self.conn.execute(
            "SELECT 1 FROM generations WHERE gen_id = ?", (label.gen_id,)
        ).fetchone()
        if exists is None:
            raise LabelError(f"no generation {label.gen_id} in this store: label another one")
        now = now_iso()
        self.conn.execute(
            f"""
            INSERT INTO human_labels ({", ".join(_COLUMNS)})
            VALUES ({", ".join("?" * len(_COLUMNS))})
            ON CONFLICT (gen_id, annotator) DO UPDATE SET
                {", ".join(f"{f} = excluded.{f}" for f in FIELDS)},
                unsure = excluded.unsure, note = excluded.note, source = excluded.source,
                updated_at = excluded.updated_at
            """,
            (
                label.gen_id,
                label.annotator,
                *(values[f] for f in FIELDS),
                int(bool(label.unsure)),
                label.note,
                label.source,
                label.created_at or now,
                label.updated_at or now,
            ),
        )

    def save_labels(self, labels: Iterable[HumanLabel]) -> int:
        """Many at once, in one transaction (imports): all or none. Returns how many."""
        n = 0
        with self.transaction():
            for label in labels:
                self.save_label(label)
                n += 1
        return n

    def labels(self, annotator: str | None = None) -> list[HumanLabel]:
        """Every stored human label (or one annotator's), by generation then annotator."""
        where, args = ("WHERE annotator = ?", (annotator,)) if annotator is not None else ("", ())
        return [
            _label(r)
            for r in self.conn.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM human_labels {where} "
                "ORDER BY gen_id, annotator",
                args,
            )
        ]

    def annotators(self) -> list[str]:
        """The names of everyone who has labelled, sorted."""
        return [
            r[0]
            for r in self.conn.execute(
                "SELECT DISTINCT annotator FROM human_labels ORDER BY annotator"
            )
        ]

    def generation_row(self, gen_id: int) -> dict[str, Any] | None:
        """One stored generation with its texts (what a labelling page shows), or None."""
        row = self.conn.execute("SELECT * FROM generations WHERE gen_id = ?", (gen_id,)).fetchone()
        return None if row is None else dict(row)

    # -- the annotation sample ---------------------------------------------------------------

    def annotation_sample(self, benchmark: str | None = None) -> list[SampleItem]:
        """The stored annotation sample, in the order annotators see it: of one pack (its
        stored ``benchmark`` key; positions then count 1, 2, ... within that pack), or every
        item of every pack (None). Each pack has its own sample, drawn from its own
        generations, so a pack's judges are validated on that pack's answers only."""
        if benchmark is None:
            rows = self.conn.execute(
                "SELECT position, item_id, gen_id, stratum, seed FROM annotation_samples "
                "ORDER BY position"
            )
            return [SampleItem(int(r[0]), r[1], int(r[2]), r[3], int(r[4])) for r in rows]
        rows = self.conn.execute(
            "SELECT s.item_id, s.gen_id, s.stratum, s.seed FROM annotation_samples AS s "
            "JOIN generations AS g ON g.gen_id = s.gen_id WHERE g.benchmark = ? "
            "ORDER BY s.position",
            (benchmark,),
        )
        return [
            SampleItem(i, r[0], int(r[1]), r[2], int(r[3])) for i, r in enumerate(rows, start=1)
        ]

    def extend_annotation_sample(self, items: Iterable[tuple[str, int, str]], seed: int) -> int:
        """Append (item_id, gen_id, stratum) items after the stored ones, in one transaction;
        generations already in the sample are skipped. Returns how many were added."""
        with self.transaction():
            start = self.conn.execute(
                "SELECT coalesce(max(position), 0) FROM annotation_samples"
            ).fetchone()[0]
            added = 0
            now = now_iso()
            for item_id, gen_id, stratum in items:
                cur = self.conn.execute(
                    "INSERT OR IGNORE INTO annotation_samples VALUES (?, ?, ?, ?, ?, ?)",
                    (start + added + 1, item_id, gen_id, stratum, seed, now),
                )
                added += cur.rowcount
        return added
