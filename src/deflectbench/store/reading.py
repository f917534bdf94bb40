"""The store's read queries: status, row dumps and counts (no writes)."""

from __future__ import annotations

import gc
import json
import sqlite3
from array import array
from collections.abc import Collection, Sequence
from typing import Any, NamedTuple

from deflectbench.vocab import NON_ANSWERS, TRUNCATED


class Coded(NamedTuple):
    """A column as codes: row i holds ``values[codes[i]]`` (each distinct value once, ``None``
    among them when a row holds none)."""

    codes: array[int]
    values: list[Any]


class _Codes(dict[Any, int]):
    """Value -> its index in ``distinct``, a new value appended to ``distinct`` as it is met."""

    def __init__(self, distinct: list[Any]) -> None:
        super().__init__()
        self.distinct = distinct

    def __missing__(self, value: Any) -> int:
        code = self[value] = len(self.distinct)
        self.distinct.append(value)
        return code


class Reads:
    """Read-only queries over a store's connection (mixed into :class:`Store`)."""

    conn: sqlite3.Connection

    def spent_usd(self) -> float:  # defined on Store; declared for the type checker
        raise NotImplementedError

    def status(self, benchmark: str | None = None) -> dict[str, Any]:
        """Per model: planned / ok / errors / non-answers by type / truncated, in total and per
        condition; per judge: judged / parse errors / errors; spending. ``benchmark``: only
        that pack's rows (its key)."""
        only = "WHERE benchmark = ?" if benchmark is not None else ""
        args: tuple[str, ...] = (benchmark,) if benchmark is not None else ()

        def blank() -> dict[str, Any]:
            return {"planned": 0, "ok": 0, "errors": 0, "non_answers": {}, "truncated": 0}

        models: dict[str, dict[str, Any]] = {}
        for model, cond, n in self.conn.execute(
            f"SELECT model, condition, count(*) FROM planned_cells {only} "
            "GROUP BY model, condition ORDER BY model, condition",
            args,
        ):
            m = models.setdefault(model, blank() | {"conditions": {}})
            m["conditions"].setdefault(cond, blank())["planned"] = n
        for model, cond, err, reason, n in self.conn.execute(
            "SELECT model, condition, error IS NOT NULL, finish_reason, count(*) "
            f"FROM generations {only} GROUP BY 1, 2, 3, 4 ORDER BY 1, 2",
            args,
        ):
            m = models.setdefault(model, blank() | {"conditions": {}})
            c = m["conditions"].setdefault(cond, blank())
            if err:
                c["errors"] += n
            elif reason in NON_ANSWERS:
                c["non_answers"][reason] = c["non_answers"].get(reason, 0) + n
            else:
                c["ok"] += n
                c["truncated"] += n if reason == TRUNCATED else 0
        for m in models.values():
            for c in m["conditions"].values():
                done = c["ok"] + c["errors"] + sum(c["non_answers"].values())
                c["planned"] = max(c["planned"], done)
                for key in ("planned", "ok", "errors", "truncated"):
                    m[key] += c[key]
                for reason, n in c["non_answers"].items():
                    m["non_answers"][reason] = m["non_answers"].get(reason, 0) + n
        judges: dict[str, dict[str, int]] = {}
        for r in self.conn.execute(
            "SELECT judge, sum(error IS NULL), sum(parse_error), sum(error IS NOT NULL) "
            "FROM judgments "
            + (
                "WHERE gen_id IN (SELECT gen_id FROM generations WHERE benchmark = ?) "
                if benchmark is not None
                else ""
            )
            + "GROUP BY judge ORDER BY judge",
            args,
        ):
            judges[r[0]] = {"judged": int(r[1]), "parse_errors": int(r[2]), "errors": int(r[3])}
        return {"models": models, "judges": judges, "spent_usd": self.spent_usd()}

    def served_counts(self, benchmark: str | None = None) -> dict[tuple[str, str], dict[str, Any]]:
        """(model, condition) -> {"replies": n, "served": {served id: n}}: the model ids each
        model's stored replies say served them (``benchmark``: only that pack's rows)."""
        only = "AND benchmark = ?" if benchmark is not None else ""
        args: tuple[str, ...] = (benchmark,) if benchmark is not None else ()
        out: dict[tuple[str, str], dict[str, Any]] = {}
        for model, cond, served, n in self.conn.execute(
            "SELECT model, condition, served_model, count(*) FROM generations "
            f"WHERE error IS NULL {only} GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
            args,
        ):
            entry = out.setdefault((model, cond), {"replies": 0, "served": {}})
            entry["replies"] += int(n)
            if served is not None:
                entry["served"][str(served)] = int(n)
        return out

    def benchmark_counts(self) -> dict[str, int]:
        """Generations per benchmark pack (its key), most first."""
        return {
            str(k): int(n)
            for k, n in self.conn.execute(
                "SELECT benchmark, count(*) FROM generations GROUP BY benchmark ORDER BY 2 DESC, 1"
            )
        }

    def pack_counts(self) -> dict[str, int]:
        """Generations per benchmark pack (its key), most first, ties in the order the packs
        first appear (as a frame's ``value_counts`` of the column): one ``GROUP BY``, not a
        read of every row."""
        return {
            str(k): int(n)
            for k, n in self.conn.execute(
                "SELECT benchmark, count(*) FROM generations GROUP BY benchmark "
                "ORDER BY 2 DESC, min(gen_id)"
            )
        }

    def _columns(self, table: str, columns: Sequence[str] | None) -> str:
        """A safe column list: only names the table really has."""
        if columns is None:
            return "*"
        known = {r[1] for r in self.conn.execute(f"PRAGMA table_info({table})")}
        bad = [c for c in columns if c not in known]
        if bad:
            raise ValueError(f"{table} has no column {bad[0]!r}")
        return ", ".join(columns)

    def generation_rows(
        self, *, include_errors: bool = True, columns: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """Stored generations (all columns, or only ``columns``, which is much faster)."""
        where = "" if include_errors else "WHERE error IS NULL"
        cols = self._columns("generations", columns)
        return self._dicts(f"SELECT {cols} FROM generations {where} ORDER BY gen_id")

    def row_tuples(
        self, table: str, columns: Sequence[str], *, include_errors: bool = True
    ) -> list[tuple[Any, ...]]:
        """``columns`` of ``table``'s rows as plain tuples, in :meth:`generation_rows` and
        :meth:`judgment_rows` order (``include_errors=False``: generations without an error)."""
        order = {"generations": "gen_id", "judgments": "judgment_id"}[table]
        where = "" if include_errors or table != "generations" else "WHERE error IS NULL"
        cur = self.conn.cursor()
        cur.row_factory = None
        cur.execute(f"SELECT {self._columns(table, columns)} FROM {table} {where} ORDER BY {order}")
        return cur.fetchall()

    def distinct_rows(self, table: str, columns: Sequence[str]) -> list[tuple[Any, ...]]:
        """The distinct ``columns`` tuples of ``table`` (``SELECT DISTINCT``: over an index's
        leading columns SQLite reads the index, not the rows)."""
        cur = self.conn.cursor()
        cur.row_factory = None
        cur.execute(f"SELECT DISTINCT {self._columns(table, columns)} FROM {table}")
        return cur.fetchall()

    def _dicts(self, sql: str) -> list[dict[str, Any]]:
        """The rows of ``sql`` as dicts (from plain tuples: a ``sqlite3.Row`` per row made a
        dict costs several times the read)."""
        cur = self.conn.cursor()
        cur.row_factory = None
        cur.execute(sql)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur]

    def _ordered(
        self, table: str, columns: Sequence[str], gen_ids: Sequence[int] | None
    ) -> sqlite3.Cursor:
        """A cursor over ``columns`` of ``table``'s rows as plain tuples, in
        :meth:`generation_rows` and :meth:`judgment_rows` order; ``gen_ids``: only those
        generations' rows."""
        order = {"generations": "gen_id", "judgments": "judgment_id"}[table]
        cols = self._columns(table, columns)
        where, args = "", []
        if gen_ids is not None:
            where = "WHERE gen_id IN (SELECT value FROM json_each(?))"
            args = [json.dumps([int(i) for i in gen_ids])]
        cur = self.conn.cursor()
        cur.row_factory = None  # plain tuples
        cur.execute(f"SELECT {cols} FROM {table} {where} ORDER BY {order}", args)
        return cur

    def column_lists(
        self,
        table: str,
        columns: Sequence[str],
        *,
        gen_ids: Sequence[int] | None = None,
        repeated: Collection[str] = (),
    ) -> dict[str, list[Any]]:
        """``columns`` of every row of ``table`` (``generations`` by gen_id, ``judgments`` by
        judgment_id, as :meth:`generation_rows` and :meth:`judgment_rows` order them), one list
        per column: what a frame is built from, without a dict per row (those cost ten times
        the frame). ``gen_ids``: only those generations' rows. Each value of a ``repeated``
        column (a model, a verdict) is one object however many rows hold it."""
        data = _coded(self._ordered(table, columns, gen_ids), columns, repeated)
        return {c: _as_list(v) for c, v in data.items()}

    def column_codes(
        self, table: str, columns: Sequence[str], coded: Collection[str]
    ) -> dict[str, list[Any] | Coded | array[int]]:
        """:meth:`column_lists`, each ``coded`` column (one whose values repeat: a model, a
        judge, a verdict) as :class:`Coded`: its distinct values, in the order first read, and
        each row's index into them; one holding only integers (a count, a flag) as an
        ``array("q")`` of them. No Python code runs per value: the codes are looked up by
        ``map`` over a dict (a new value alone calls back), so a column of a few distinct
        values costs a dict lookup a row, and holds each value once."""
        return _coded(self._ordered(table, columns, None), columns, coded)

    def judgment_rows(self, *, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
        cols = self._columns("judgments", columns)
        return self._dicts(f"SELECT {cols} FROM judgments ORDER BY judgment_id")

    def counts(self) -> dict[str, int]:
        g = self.conn.execute(
            "SELECT count(*), coalesce(sum(error IS NULL), 0) FROM generations"
        ).fetchone()
        j = self.conn.execute("SELECT count(*) FROM judgments").fetchone()
        return {"generations": int(g[0]), "valid_generations": int(g[1]), "judgments": int(j[0])}


def _as_list(values: list[Any] | Coded | array[int]) -> list[Any]:
    """A column :func:`_coded` read, as the list of its rows' values."""
    if isinstance(values, Coded):
        return list(map(values.values.__getitem__, values.codes))
    return values.tolist() if isinstance(values, array) else values


def _coded(
    cur: sqlite3.Cursor, columns: Sequence[str], coded: Collection[str]
) -> dict[str, list[Any] | Coded | array[int]]:
    """The cursor's rows as columns, each of ``coded`` as :class:`Coded` (the others lists),
    or, while every value it holds is an integer within 64 bits (a count, a flag, a sample),
    as those integers in an ``array("q")``: copied in C, where coding looks each one up in a
    dict. A value of another kind (a None, a text, a float) makes the column :class:`Coded`
    from there on, the integers before it coded first, in the order read."""
    out: dict[str, list[Any] | Coded | array[int]] = {
        c: array("q") if c in coded else [] for c in columns
    }
    lookups: dict[str, Any] = {}
    collecting = gc.isenabled()
    gc.disable()  # rows of plain values make no cycle; the collections their allocations
    try:  # set off cost a quarter of the read
        while batch := cur.fetchmany(20_000):
            for name, column in zip(columns, zip(*batch, strict=True), strict=True):
                sink = out[name]
                if isinstance(sink, array):
                    before = len(sink)
                    try:
                        sink.extend(column)
                        continue
                    except (TypeError, OverflowError):  # a value that is no int64
                        del sink[before:]
                    as_codes = Coded(array("q"), [])
                    lookups[name] = _Codes(as_codes.values).__getitem__
                    as_codes.codes.extend(map(lookups[name], sink))
                    sink = out[name] = as_codes
                if isinstance(sink, Coded):
                    sink.codes.extend(map(lookups[name], column))
                else:
                    sink.extend(column)
    finally:
        if collecting:
            gc.enable()
    return out
