"""The write statement with some columns as literals (the import's rows in bulk bind only the
columns that vary) stores exactly what binding every column stores: the same values, the same
types, the same upsert (a failed row replaced, a good one kept, costs summed)."""

from __future__ import annotations

import pytest

from deflectbench.interop.bulk import EVAL_FIXED, GEN_FIXED, bound
from deflectbench.store import Store
from deflectbench.store.upsert import (
    GENERATION_COLUMNS,
    GENERATION_KEYS,
    JUDGMENT_COLUMNS,
    JUDGMENT_KEYS,
    keep_good_upsert,
)

#: (column, value) written as literals in these tests: every kind of value, a quote in a text.
ODD = (("finish_reason", "it's 'quoted'"), ("input_tokens", 7), ("latency_s", None))


def _generation(sample: int, **kw: object) -> dict[str, object]:
    row: dict[str, object] = dict.fromkeys((*GENERATION_KEYS, *GENERATION_COLUMNS))
    row.update(
        benchmark="b", model="m", condition="release", claim_id="c", prompt_id="p",
        sample=sample, prompt="P", response="R", input_tokens=0, output_tokens=0,
        params_json="{}", source="import", created_at="t",
    )  # fmt: skip
    row.update(kw)
    return row


def _contents(store: Store, table: str) -> list[tuple[object, ...]]:
    columns = [r[1] for r in store.conn.execute(f"PRAGMA table_info({table})")]
    typed = ", ".join(f"{c}, typeof({c})" for c in columns)
    return [tuple(r) for r in store.conn.execute(f"SELECT {typed} FROM {table} ORDER BY 1")]


def _write(store: Store, rows: list[dict[str, object]], fixed: tuple) -> None:
    keys, columns = GENERATION_KEYS, GENERATION_COLUMNS
    names = bound(keys, columns, fixed)
    sql = keep_good_upsert("generations", keys, columns, fixed)
    store.conn.executemany(sql, [tuple(row[n] for n in names) for row in rows])


@pytest.mark.parametrize("fixed", [GEN_FIXED, ODD])
def test_literal_columns_store_what_bound_ones_store(tmp_path, fixed):
    values = dict(fixed)
    rows = [
        _generation(1, **values),
        _generation(2, **values, response=None, error="503"),
        _generation(2, **values, response="ok now"),  # replaces the failed row
        _generation(1, **values, response="other"),  # a good row is kept
    ]
    with Store.open(tmp_path / "a.db") as a, Store.open(tmp_path / "b.db") as b:
        _write(a, rows, ())
        _write(b, rows, fixed)
        assert _contents(a, "generations") == _contents(b, "generations")
        assert len(_contents(a, "generations")) == 2


def test_without_literals_the_statement_is_the_one_every_write_uses():
    sql = keep_good_upsert("judgments", JUDGMENT_KEYS, JUDGMENT_COLUMNS)
    assert sql == keep_good_upsert("judgments", JUDGMENT_KEYS, JUDGMENT_COLUMNS, ())
    assert sql.count("?") == len(JUDGMENT_KEYS) + len(JUDGMENT_COLUMNS)
    fixed = keep_good_upsert("judgments", JUDGMENT_KEYS, JUDGMENT_COLUMNS, EVAL_FIXED)
    assert fixed.count("?") == len(bound(JUDGMENT_KEYS, JUDGMENT_COLUMNS, EVAL_FIXED))
    assert "'import'" in fixed and "NULL" in fixed


def test_a_literal_of_no_column_is_refused():
    with pytest.raises(ValueError, match="not columns of generations: nope"):
        keep_good_upsert("generations", GENERATION_KEYS, GENERATION_COLUMNS, (("nope", 1),))
