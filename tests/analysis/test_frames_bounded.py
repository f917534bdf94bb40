"""Frames in bounded memory (issue 26, item 4): built from one list per column, they equal the
frames built from the store's row dicts (the independent reading); the report's frames hold no
text for every row, and the texts it shows are read for the shown generations only."""

from __future__ import annotations

import pandas as pd
import pytest

from deflectbench.analysis import summarize
from deflectbench.analysis.frames import scored
from deflectbench.analysis.frames.load import StoreTexts, read_store
from deflectbench.benchmark import default_benchmark
from deflectbench.interop import import_paths
from deflectbench.store import Store
from support.fixtures import copy_of_release_fixture

GEN = [*scored.GEN_COLUMNS, "condition", "finish_reason", "created_at", "served_model", "response"]
JUDG = [*scored.JUDGMENT_COLUMNS, "said_json", "input_tokens", "reasoning", "latency_s"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    benchmark = default_benchmark()
    root = tmp_path_factory.mktemp("bounded")
    copy_of_release_fixture(
        root / "rel", claims=[c.claim_id for c in benchmark.claims[::10]], runs=2, seed=4
    )
    with Store.open(root / "x.db") as s:
        assert import_paths(s, [root / "rel"]).ok
    s = Store.open(root / "x.db")
    yield s
    s.close()


class RowsOnly:
    """The store without ``column_lists`` and ``column_codes``: what it reads, it reads through
    row dicts."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def __getattr__(self, name: str):
        if name in ("column_lists", "column_codes"):
            raise AttributeError(name)
        return getattr(self.store, name)


@pytest.mark.parametrize(("table", "columns"), [("generations", GEN), ("judgments", JUDG)])
def test_frames_from_column_lists_equal_frames_from_rows(store, table, columns):
    rows = store.generation_rows if table == "generations" else store.judgment_rows
    expected = pd.DataFrame.from_records(rows(columns=columns), columns=columns)
    got = scored._read(store, table, columns)
    pd.testing.assert_frame_equal(got, expected, check_dtype=True, check_exact=True)
    assert (got["error"].isna() == expected["error"].isna()).all()


def test_repeated_values_are_one_object_each(store):
    data = store.column_lists("judgments", ["judge", "said_json"], repeated=["judge", "said_json"])
    assert len(data["judge"]) == store.counts()["judgments"]
    assert len({id(v) for v in data["judge"]}) == len(set(data["judge"]))
    assert len({id(v) for v in data["said_json"]}) == len(set(data["said_json"]))


def test_the_reports_frames_hold_no_texts(store):
    frames = read_store(store, detail=True)
    assert "response" not in frames.generations and "reasoning" not in frames.judgments
    ids = frames.generations["gen_id"].head(3).tolist()
    texts = frames.texts
    assert texts is not None
    rows = {
        r["gen_id"]: r["response"] for r in store.generation_rows(columns=["gen_id", "response"])
    }
    assert texts.responses(ids) == {i: rows[i] for i in ids}
    reasons = {
        (r["gen_id"], r["judge"]): r["reasoning"]
        for r in store.judgment_rows(columns=["gen_id", "judge", "reasoning"])
        if r["gen_id"] in ids
    }
    assert texts.reasonings(ids) == reasons and len(reasons) == 2 * len(ids)


def test_examples_read_through_column_lists_or_rows_are_the_same(store, benchmark):
    fast = summarize(store, benchmark, detail=True).examples
    slow = summarize(RowsOnly(store), benchmark, detail=True).examples
    assert fast and fast == slow
    shown = {e.gen_id: e.response for e in fast}
    rows = {
        r["gen_id"]: r["response"] for r in store.generation_rows(columns=["gen_id", "response"])
    }
    assert all(rows[gid].startswith(text) for gid, text in shown.items())
    assert all(j.reasoning for e in fast for j in e.judges if not j.parse_error)
    assert StoreTexts(RowsOnly(store)).responses(list(shown)) == {g: rows[g] for g in shown}
