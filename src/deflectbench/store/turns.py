"""The store's later turns (multi-turn packs): a turn-2 generation and its link to turn 1.

A turn-2 generation is a row of ``generations`` like any other (so the judges, the request
cache, ``status`` and the budget treat it as one), under the same benchmark, claim and sample
as the turn-1 generation it continues, with the prompt id ``<prompt_id>#turn2``: the unique key
of ``generations`` then allows one turn 2 per turn-1 generation, and the turn-1 analysis, which
keeps only the pack's own prompt ids, never sees it. The ``turns`` table records the link:
which generation it continues, the follow-up asked and the turn-1 outcome that chose it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from deflectbench.records import GenerationRecord, now_iso
from deflectbench.vocab import NON_ANSWERS

#: Between a template's prompt id and the turn number, in a later turn's prompt id.
TURN_MARK = "#turn"


def turn_prompt_id(prompt_id: str, turn: int) -> str:
    """The prompt id of turn ``turn`` (2 or more) of a template's conversation."""
    return f"{prompt_id}{TURN_MARK}{turn}"


def split_prompt_id(prompt_id: str) -> tuple[str, int]:
    """(template prompt id, turn) of a stored prompt id; turn 1 has no mark."""
    base, mark, turn = prompt_id.rpartition(TURN_MARK)
    if mark and turn.isdigit():
        return base, int(turn)
    return prompt_id, 1


class Turns:
    """Multi-turn queries over a store's connection (mixed into :class:`Store`)."""

    conn: sqlite3.Connection

    def add_generation(self, rec: GenerationRecord) -> None:  # defined on Store
        raise NotImplementedError

    def add_turn(
        self,
        rec: GenerationRecord,
        *,
        parent_gen_id: int,
        turn: int,
        followup_id: str,
        after_outcome: str,
    ) -> None:
        """Store a later turn's result and its link to the generation it continues, together
        (one transaction, so a kill never leaves a turn without its link). Like every
        generation, a good result is never replaced and an error row is."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self.add_generation(rec)
            row = self.conn.execute(
                "SELECT gen_id FROM generations WHERE benchmark=? AND model=? AND condition=? "
                "AND claim_id=? AND prompt_id=? AND sample=?",
                (rec.benchmark, rec.model, rec.condition, rec.claim_id, rec.prompt_id, rec.sample),
            ).fetchone()
            self.conn.execute(
                "INSERT INTO turns VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (int(row[0]), parent_gen_id, turn, followup_id, after_outcome, now_iso()),
            )
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def turn1_verdicts(
        self, benchmark: str, model: str, condition: str, judges: Sequence[str]
    ) -> list[dict[str, Any]]:
        """Every turn-1 answer of one model and condition with each parsed verdict of
        ``judges`` on it: one row per (generation, judge), ``said_json`` and the 8 field
        columns as stored. Answers without a verdict are left out (they have no outcome yet)."""
        if not judges:
            return []
        rows = self.conn.execute(
            f"""
            SELECT g.gen_id, g.claim_id, g.prompt_id, g.sample, g.prompt, g.response,
                j.judge, j.said_json
            FROM generations g JOIN judgments j ON j.gen_id = g.gen_id
            WHERE g.benchmark = ? AND g.model = ? AND g.condition = ?
                AND g.error IS NULL
                AND coalesce(g.finish_reason, '') NOT IN ({",".join("?" * len(NON_ANSWERS))})
                AND instr(g.prompt_id, ?) = 0
                AND j.error IS NULL AND j.parse_error = 0
                AND j.judge IN ({",".join("?" * len(judges))})
            ORDER BY g.gen_id, j.judge
            """,
            (benchmark, model, condition, *NON_ANSWERS, TURN_MARK, *judges),
        ).fetchall()
        return [dict(r) for r in rows]

    def turn_links(self) -> list[dict[str, Any]]:
        """Every later turn: its gen_id, the parent's gen_id, turn, follow-up and turn-1
        outcome, with the generation's benchmark, model and condition."""
        rows = self.conn.execute(
            """
            SELECT t.gen_id, t.parent_gen_id, t.turn, t.followup_id, t.after_outcome,
                g.benchmark, g.model, g.condition
            FROM turns t JOIN generations g ON g.gen_id = t.gen_id
            ORDER BY t.gen_id
            """
        ).fetchall()
        return [dict(r) for r in rows]

    def turn_count(self) -> int:
        """How many later turns are stored (0 in a store without multi-turn runs)."""
        return int(self.conn.execute("SELECT count(*) FROM turns").fetchone()[0])
