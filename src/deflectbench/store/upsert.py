"""The one way results are written: an INSERT that replaces only a failed row.

Generations and judgments follow the same rule (a good result is never replaced, a failed
request is, and the cost of every attempt adds up), so the statement is built here once.
"""

from __future__ import annotations

from functools import cache

from deflectbench.vocab import FIELDS


@cache  # built once per table: imports write rows by the thousand
def keep_good_upsert(table: str, keys: tuple[str, ...], columns: tuple[str, ...]) -> str:
    """INSERT of ``keys`` + ``columns`` into ``table``; on a clash of ``keys`` it sets every
    column from the new row, only where the stored row has an error, summing ``cost_usd``."""
    sets = [f"{c} = excluded.{c}" for c in columns if c != "cost_usd"]
    if "cost_usd" in columns:
        sets.append(
            f"cost_usd = coalesce({table}.cost_usd + excluded.cost_usd, "
            f"{table}.cost_usd, excluded.cost_usd)"
        )
    names = [*keys, *columns]
    return (
        f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))}) "
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
