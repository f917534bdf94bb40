"""Columns read as codes (issue 36): a column of repeated values read as its distinct values and
each row's index into them makes the same frame, dtype for dtype and value for value, as the
row dicts do (the independent reading: ``pd.DataFrame.from_records``), whatever a hostile store
holds: a number in a text column, text in a number column, a column of nothing but NULLs."""

from __future__ import annotations

import shutil
import sqlite3
from array import array

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deflectbench.analysis.frames import scored
from deflectbench.benchmark import default_benchmark
from deflectbench.interop import import_paths
from deflectbench.store import Store
from deflectbench.store.reading import Coded
from support.fixtures import copy_of_release_fixture

GEN = [*scored.GEN_COLUMNS, "condition", "finish_reason", "run_id", "served_model", "source"]
JUDG = [*scored.JUDGMENT_COLUMNS, "said_json", "run_id", "input_tokens"]


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A small imported store (every 20th claim, one run)."""
    path = tmp_path_factory.mktemp("coded") / "x.db"
    ids = [c.claim_id for c in default_benchmark().claims[::20]]
    copy_of_release_fixture(path.parent / "rel", claims=ids, runs=1, seed=3)
    with Store.open(path) as s:
        assert import_paths(s, [path.parent / "rel"]).ok
    return path


def _expected(store: Store, table: str, columns: list[str]) -> pd.DataFrame:
    rows = store.generation_rows if table == "generations" else store.judgment_rows
    return pd.DataFrame.from_records(rows(columns=columns), columns=columns)


#: Hostile edits: each leaves some column holding what a well-made store never does.
EDITS = [
    "UPDATE generations SET served_model = 7 WHERE gen_id % 3 = 0",  # text column, an int
    "UPDATE generations SET sample = 'x' WHERE gen_id = (SELECT min(gen_id) FROM generations)",
    "UPDATE generations SET run_id = NULL",  # nothing but NULLs
    "UPDATE generations SET finish_reason = 'stop' WHERE gen_id % 2 = 0",  # some NULLs
    "UPDATE generations SET served_model = x'00ff' WHERE gen_id % 5 = 1",  # a blob
    "UPDATE judgments SET said_json = NULL WHERE judgment_id % 4 = 0",
    "UPDATE judgments SET run_id = 1.5 WHERE judgment_id % 7 = 0",  # a float among texts
    "UPDATE judgments SET judge = 'j\u00e9' WHERE judgment_id % 9 = 0",
    # integer columns read as int64 arrays until a value of another kind, then coded
    "UPDATE judgments SET refusal = NULL WHERE judgment_id % 3 = 2",
    "UPDATE generations SET sample = 'x' WHERE gen_id = (SELECT max(gen_id) FROM generations)",
    "UPDATE judgments SET consistency_flag = 0.5 WHERE judgment_id % 5 = 3",
    "UPDATE judgments SET input_tokens = 1e30 WHERE judgment_id = 2",  # beyond int64: a REAL
]


@pytest.mark.parametrize("edit", [None, *EDITS])
def test_coded_frames_equal_frames_from_row_dicts(made, tmp_path, edit):
    path = tmp_path / "x.db"
    shutil.copy(made, path)
    if edit is not None:
        con = sqlite3.connect(path)
        with con:
            con.execute(edit)
        con.close()
    with Store.open(path) as store:
        for table, columns in (("generations", GEN), ("judgments", JUDG)):
            got = scored._read(store, table, columns)
            pd.testing.assert_frame_equal(got, _expected(store, table, columns), check_exact=True)
        said = scored._read(store, "judgments", JUDG, said=True)
        slow = scored.use_said_values(_expected(store, "judgments", JUDG))
        pd.testing.assert_frame_equal(said, slow, check_exact=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "é"]), st.integers(-3, 3),
                          st.floats(allow_nan=False, allow_infinity=False)), max_size=40))  # fmt: skip
def test_a_coded_column_is_the_column_pandas_infers(values):
    distinct: list = []
    index: dict = {}
    for v in values:
        if v not in index:  # 1 == 1.0: one value, as a dict keys it (and the store's reading)
            index[v] = len(distinct)
            distinct.append(v)
    codes = array("q", [index[v] for v in values])
    got = scored._column(Coded(codes, distinct))
    expected = pd.Series([distinct[index[v]] for v in values], dtype=None)
    pd.testing.assert_series_equal(got, expected, check_exact=True)


def test_column_lists_hold_each_repeated_value_once(made):
    with Store.open(made) as store:
        data = store.column_lists("generations", ["gen_id", "model"], repeated=["model"])
        plain = store.column_lists("generations", ["gen_id", "model"])
        assert data == plain
        assert len({id(v) for v in data["model"]}) == len(set(data["model"]))
        coded = store.column_codes("generations", ["gen_id", "model"], coded=["model"])
        model = coded["model"]
        assert isinstance(model, Coded) and len(model.values) == len(set(plain["model"]))
        assert [model.values[c] for c in model.codes] == plain["model"]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(-(2**63), 2**63 - 1),
            st.integers(2**63, 2**65),  # beyond int64
            st.none(),
            st.floats(allow_nan=False),
            st.sampled_from(["a", "7", b"\x00\xff"]),
        ),
        max_size=30,
    )
    | st.lists(st.integers(-(2**63), 2**63 - 1), max_size=30)
)
def test_a_plain_column_is_the_column_pandas_infers(values):
    """A column read as a plain list (the ids): an int64 array when SQLite gave ints only, else
    inferred, the same Series as ``pd.Series(values)`` either way."""
    try:
        expected = pd.Series(values, dtype=None)
    except (OverflowError, TypeError, ValueError) as e:  # what pandas refuses, refused alike
        with pytest.raises(type(e)):
            scored._plain_column(values)
        return
    got = scored._plain_column(values)
    pd.testing.assert_series_equal(got, expected, check_exact=True)
    got.iloc[:1] = got.iloc[:1]  # a column of its own, writable like the inferred one


@pytest.mark.parametrize("other", [None, "x", 1.5, 2**62])
def test_an_integer_column_turns_coded_at_its_first_other_value_in_any_batch(other):
    """``_coded`` keeps a column of integers as an int64 array (no dict per value) until a value
    of another kind: from there the column is coded, the integers before it first, in the order
    read, across the 20,000-row batches; the rows' values are the same either way."""
    from deflectbench.store.reading import _as_list, _coded

    n = 45_000
    values = [i % 7 for i in range(n)]
    values[30_000] = other  # in the second batch
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v)")
    con.executemany("INSERT INTO t VALUES (?, ?)", enumerate(values))
    data = _coded(con.execute("SELECT v, k FROM t ORDER BY k"), ["v", "k"], coded={"v"})
    assert _as_list(data["v"]) == values
    assert _as_list(data["k"]) == list(range(n))
    assert isinstance(data["v"], array) == (type(other) is int)
    if type(other) is not int:
        assert isinstance(data["v"], Coded)
        assert data["v"].values[:7] == list(range(7))  # in the order first read
    pd.testing.assert_series_equal(scored._column(data["v"]), pd.Series(values, dtype=None))
