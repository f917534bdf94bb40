"""The cascade design in the store (migration m011): saved and read back, a hostile row refused
in one line, carried by a merge of parts (a different design said, the first kept); the sample
it draws monotone in the share and blind to other answers (hypothesis)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deflectbench.interop.merge import merge_stores
from deflectbench.store import Store
from deflectbench.store.cascade import (
    CascadeDesign,
    answer_key,
    load_cascade,
    save_cascade,
    uniform,
)
from deflectbench.store.files import StoreError

PACK = "deflectbench-v1.0"
DESIGN = CascadeDesign("lexical", ("a/j1", "b/j2"), 7, "model", 0.2, {"m [c]": 0.4})


def test_saved_and_read_back(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.db") as store:
        assert load_cascade(store, PACK) is None
        save_cascade(store, PACK, DESIGN)
        assert load_cascade(store, PACK) == DESIGN
        grown = CascadeDesign("lexical", ("a/j1", "b/j2"), 7, "model", 0.3)
        save_cascade(store, PACK, grown)  # replaced, one row per pack
        assert load_cascade(store, PACK) == grown


@pytest.mark.parametrize(
    "column,value",
    [
        ("shares_json", "not json"),
        ("shares_json", '{"default": 1.5}'),
        ("shares_json", '{"default": "x"}'),
        ("expensive_json", "[]"),
        ("stratify", "claim"),
    ],
)
def test_a_hostile_row_is_one_line(tmp_path: Path, column: str, value: str) -> None:
    db = tmp_path / "s.db"
    with Store.open(db) as store:
        save_cascade(store, PACK, DESIGN)
    conn = sqlite3.connect(db)
    conn.execute(f"UPDATE cascades SET {column} = ?", (value,))
    conn.commit()
    conn.close()
    with Store.open(db) as store, pytest.raises(StoreError, match="cannot be read") as err:
        load_cascade(store, PACK)
    assert "\n" not in str(err.value)


def test_a_merge_carries_the_design(tmp_path: Path) -> None:
    other = CascadeDesign("lexical", ("a/j1",), 8, "none", 0.5)
    for name, design in (("a", DESIGN), ("b", DESIGN), ("c", other)):
        with Store.open(tmp_path / f"{name}.db") as store:
            save_cascade(store, PACK, design)
    with Store.open(tmp_path / "out.db") as out:
        same = merge_stores(out, [tmp_path / "a.db", tmp_path / "b.db"])
        assert load_cascade(out, PACK) == DESIGN and same.ok
        assert not any("cascade" in n for n in same.notes)
    with Store.open(tmp_path / "out2.db") as out:
        mixed = merge_stores(out, [tmp_path / "a.db", tmp_path / "c.db"])
        assert load_cascade(out, PACK) == DESIGN
        assert any("another cascade design" in n for n in mixed.notes), mixed.notes


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    cells=st.lists(st.tuples(st.text(min_size=1, max_size=8), st.integers(0, 9)), max_size=40),
    small=st.floats(0.01, 1.0),
    grow=st.floats(0.0, 1.0),
)
def test_the_sample_is_monotone_and_per_answer(seed, cells, small, grow) -> None:
    """A larger share keeps every answer a smaller one held; an answer's membership depends on
    its own key only (adding answers moves none in or out)."""
    keys = [answer_key(PACK, "m", "c", claim, "t", sample) for claim, sample in cells]
    large = small + (1.0 - small) * grow
    a = CascadeDesign("lexical", ("j",), seed, "none", small)
    b = CascadeDesign("lexical", ("j",), seed, "none", large)
    in_a = {k for k in keys if a.sampled(k, "*")}
    in_b = {k for k in keys if b.sampled(k, "*")}
    assert in_a <= in_b
    assert in_a == {k for k in keys if uniform(seed, k) < small}  # nothing else enters
