"""The one way results are written: an INSERT that replaces only a failed row.

Generations and judgments follow the same rule (a good result is never replaced, a failed
request is, and the cost of every attempt adds up), so the statement is built here once.
"""

from __future__ import annotations

from functools import cache

from deflectbench.vocab import FIELDS

#: A value written as an SQL literal: what a whole batch of rows holds in one column.
Fixed = tuple[tuple[str, int | str | None], ...]


def _literal(value: int | str | None) -> str:
    if value is None:
        return "NULL"
    if type(value) is int:
        return str(value)
    if type(value) is str:
        return "'" + value.replace("'", "''") + "'"
    raise TypeError(f"not a literal: {value!r}")


@cache  # built once per table: imports write rows by the thousand
def keep_good_upsert(
    table: str, keys: tuple[str, ...], columns: tuple[str, ...], fixed: Fixed = ()
) -> str:
    """INSERT of ``keys`` + ``columns`` into ``table``; on a clash of ``keys`` it sets every
    column from the new row, only where the stored row has an error, summing ``cost_usd``.
    ``fixed`` (column, value) are written as literals, not bound: a row binds the other
    columns, in their order (rows in bulk with the same value there bind less)."""
    sets = [f"{c} = excluded.{c}" for c in columns if c != "cost_usd"]
    if "cost_usd" in columns:
        sets.append(
            f"cost_usd = coalesce({table}.cost_usd + excluded.cost_usd, "
            f"{table}.cost_usd, excluded.cost_usd)"
        )
    names = [*keys, *columns]
    literals = dict(fixed)
    values = [_literal(literals.pop(n)) if n in literals else "?" for n in names]
    if literals:
        raise ValueError(f"not columns of {table}: {', '.join(literals)}")
    return (
        f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join(values)}) "
        f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {', '.join(sets)} "
        f"WHERE {table}.error IS NOT NULL"
    )


#: What a request used and where its row came from: the last columns of both tables.
_USAGE = ("input_tokens", "output_tokens", "latency_s")
_PROVENANCE = ("run_id", "source", "created_at", "extra_json", "cost_usd")

#: A generation's key (its unique index) and the columns an add writes, in the row's order.
GENERATION_KEYS = ("benchmark", "model", "condition", "claim_id", "prompt_id", "sample")
GENERATION_COLUMNS: tuple[str, ...] = (
    *("prompt", "response", "error", *_USAGE, "finish_reason", "params_json"),
    *_PROVENANCE,
    "served_model",
)
#: A judgment's key and its other columns, the rubric's fields among them.
JUDGMENT_KEYS = ("gen_id", "judge")
JUDGMENT_COLUMNS: tuple[str, ...] = (
    *("raw", "reasoning", "parse_error", "error", "said_json", "consistency_flag"),
    *(*FIELDS, *_USAGE, *_PROVENANCE),
)
