"""Store lookups one chunk of an import at a time, so an import holds what it is writing and
nothing of what is already stored (the whole store's texts and ids once cost gigabytes).

A streaming import writes each file in one transaction, chunk by chunk, and
:class:`FirstLines` remembers, on disk (a temporary table), the line each key first appeared on,
so a conflicting duplicate is still named with both lines, however far apart.
"""

from __future__ import annotations

import sqlite3
from bisect import bisect_right
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from itertools import chain
from typing import Any

#: Keys per lookup query (four parameters each: under SQLite's default limit of 32,766).
_PER_QUERY = 500


def _batches(keys: Sequence[Any]) -> Iterator[Sequence[Any]]:
    for start in range(0, len(keys), _PER_QUERY):
        yield keys[start : start + _PER_QUERY]


def _values(n: int, width: int) -> str:
    row = "(" + ", ".join("?" * width) + ")"
    return ", ".join([row] * n)


GenKey = tuple[str, str, str, int]


def generation_rows_of(
    conn: sqlite3.Connection, benchmark: str, condition: str, keys: Sequence[GenKey]
) -> dict[GenKey, tuple[int, str | None, str | None]]:
    """(model, claim_id, prompt_id, sample) -> (gen_id, response, error) for the given keys
    only (``Store.generation_contents`` for one chunk)."""
    out: dict[GenKey, tuple[int, str | None, str | None]] = {}
    for part in _batches(list(dict.fromkeys(keys))):
        for r in conn.execute(*_generations_of(benchmark, condition, part, "response, g.error")):
            out[(r[0], r[1], r[2], int(r[3]))] = (int(r[4]), r[5], r[6])
    return out


def _generations_of(
    benchmark: str, condition: str, keys: Sequence[GenKey], columns: str
) -> tuple[str, list[Any]]:
    """The query of the generations with these keys (a join on the constant rows, so each key
    is one search of the unique index), their key, gen_id and ``columns``."""
    sql = (
        f"WITH k(m, c, p, s) AS (VALUES {_values(len(keys), 4)}) "
        f"SELECT g.model, g.claim_id, g.prompt_id, g.sample, g.gen_id, g.{columns} "
        "FROM k JOIN generations g ON g.benchmark = ? AND g.model = k.m AND g.condition = ? "
        "AND g.claim_id = k.c AND g.prompt_id = k.p AND g.sample = k.s"
    )
    return sql, [*chain.from_iterable(keys), benchmark, condition]


def generation_ids_of(
    conn: sqlite3.Connection, benchmark: str, condition: str, keys: Sequence[GenKey]
) -> dict[GenKey, int]:
    """(model, claim_id, prompt_id, sample) -> gen_id for the given keys only
    (``Store.generation_ids`` for one chunk)."""
    out: dict[GenKey, int] = {}
    for part in _batches(list(dict.fromkeys(keys))):
        rows = conn.execute(*_generations_of(benchmark, condition, part, "gen_id"))
        rows.row_factory = None  # plain tuples: a row is made as it is read (imports: 1 a line)
        for model, claim, prompt, sample, gen_id, _ in rows:
            out[(model, claim, prompt, int(sample))] = int(gen_id)
    return out


def generation_ids_by_model(
    conn: sqlite3.Connection, benchmark: str, condition: str, keys: Sequence[GenKey], most: int
) -> dict[GenKey, int] | None:
    """:func:`generation_ids_of` read as each named model's rows of the named claims, in one
    pass of the unique index per model (a chunk of one model's records costs a read of its
    claims' rows, not a search per key); None when that would read more than ``most`` rows
    (then search per key)."""
    wanted = set(keys)
    out: dict[GenKey, int] = {}
    claims: dict[str, dict[str, None]] = {}
    for key in keys:
        claims.setdefault(key[0], {})[key[1]] = None
    if any(len(named) > _PER_QUERY for named in claims.values()):
        return None  # (parameters under SQLite's limit)
    for model, named in claims.items():
        rows = conn.execute(
            "SELECT claim_id, prompt_id, sample, gen_id FROM generations WHERE benchmark = ? "
            f"AND model = ? AND condition = ? AND claim_id IN ({', '.join('?' * len(named))}) "
            "LIMIT ?",
            (benchmark, model, condition, *named, most + 1),
        )
        rows.row_factory = None
        found = rows.fetchall()
        most -= len(found)
        if most < 0:
            return None
        keyed = [((model, c, p, int(s)), int(g)) for c, p, s, g in found]
        out.update(kv for kv in keyed if kv[0] in wanted)
    return out


def judgments_between(
    conn: sqlite3.Connection, keys: Sequence[tuple[int, str]], most: int
) -> set[tuple[int, str]] | None:
    """Which (gen_id, judge) keys are stored, read as the rows between the smallest and the
    largest gen_id in one pass of the unique index; None when that would read more than
    ``most`` rows (then :func:`judgment_rows_of`)."""
    if not keys:
        return set()
    wanted = set(keys)
    ids = [k[0] for k in keys]
    rows = conn.execute(
        "SELECT gen_id, judge FROM judgments WHERE gen_id BETWEEN ? AND ? LIMIT ?",
        (min(ids), max(ids), most + 1),
    )
    rows.row_factory = None
    found = rows.fetchall()
    if len(found) > most:
        return None
    return wanted.intersection(found)


def judgment_rows_of(
    conn: sqlite3.Connection, keys: Sequence[tuple[int, str]]
) -> dict[tuple[int, str], tuple[int, str | None, str | None]]:
    """(gen_id, judge) -> (judgment_id, raw reply, error) for the given keys only
    (``Store.judgment_contents`` for one chunk)."""
    out: dict[tuple[int, str], tuple[int, str | None, str | None]] = {}
    for part in _batches(list(dict.fromkeys(keys))):
        sql = (
            f"WITH k(g, j) AS (VALUES {_values(len(part), 2)}) "
            "SELECT x.gen_id, x.judge, x.judgment_id, x.raw, x.error "
            "FROM k JOIN judgments x ON x.gen_id = k.g AND x.judge = k.j"
        )
        for r in conn.execute(sql, list(chain.from_iterable(part))):
            out[(int(r[0]), r[1])] = (int(r[2]), r[3], r[4])
    return out


class FirstLines:
    """The line each key of one file first appeared on, kept in a temporary table (on disk, in
    SQLite's temporary file), emptied when made: one file at a time per connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        conn.execute(
            "CREATE TEMP TABLE IF NOT EXISTS import_first_lines (key TEXT PRIMARY KEY, line INTEGER)"
        )
        conn.execute("DELETE FROM temp.import_first_lines")
        #: Runs of new rows written together, as ``(first store id, its line, how many)``: the
        #: i-th row of a run took the id and the line after its first's i times (three numbers
        #: for a chunk, not a key each); ``_starts`` their first ids, in order.
        self.runs: list[tuple[int, int, int]] = []
        self._starts: list[int] = []

    def remember_run(self, first_id: int, first_line: int, count: int) -> None:
        """Rows new to the store, with the ids ``first_id``, ``first_id + 1``, ..., from the
        lines ``first_line``, ``first_line + 1``, ... (ids only grow within a file)."""
        self.runs.append((first_id, first_line, count))
        self._starts.append(first_id)

    def _run_line(self, store_id: int | None) -> int | None:
        if store_id is None or not self._starts:
            return None
        i = bisect_right(self._starts, store_id) - 1
        if i < 0:
            return None
        first_id, first_line, count = self.runs[i]
        return first_line + store_id - first_id if store_id < first_id + count else None

    @staticmethod
    def _text(key: Hashable) -> str:
        return repr(key)  # a tuple of strings and integers: one text per key

    def of(
        self, keys: Iterable[Hashable], ids: Mapping[Hashable, int] | None = None
    ) -> dict[Hashable, int]:
        """key -> its first line, for the keys already remembered; ``ids`` (key -> store id)
        finds those of a run first (a run's rows were new to the store: no line before theirs
        stored them)."""
        out: dict[Hashable, int] = {}
        if ids and self.runs:
            for k in keys:
                if (line := self._run_line(ids.get(k))) is not None:
                    out[k] = line
        by_text = {self._text(k): k for k in keys if k not in out}
        texts = list(by_text)
        for part in _batches(texts):
            sql = (
                "SELECT key, line FROM temp.import_first_lines "
                f"WHERE key IN ({', '.join('?' * len(part))})"
            )
            for text, line in self.conn.execute(sql, part):
                out[by_text[text]] = int(line)
        return out

    def remember(self, first: Mapping[Hashable, int]) -> None:
        """Remember keys with their first line (a key already remembered keeps its line)."""
        self.conn.executemany(
            "INSERT OR IGNORE INTO temp.import_first_lines VALUES (?, ?)",
            ((self._text(k), line) for k, line in first.items()),
        )
