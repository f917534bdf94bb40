"""Human labels in the store: upsert per (generation, annotator), validation that names the
problem, readable back by annotator, kept across reopen; the annotation sample's table."""

from __future__ import annotations

import pytest

from deflectbench.records import HumanLabel
from deflectbench.store import GenerationRecord, Store, StoreError
from deflectbench.store.labels import LabelError
from deflectbench.store.migrations import MIGRATIONS
from deflectbench.vocab import FIELDS


def _store(path) -> Store:
    store = Store.open(path)
    for s in (1, 2, 3):
        store.add_generation(
            GenerationRecord(
                benchmark="b",
                model="m",
                claim_id="C1",
                prompt_id="P1",
                sample=s,
                prompt="p",
                response=f"r{s}",
            )
        )
    return store


def _values(**given: int | None) -> dict[str, int | None]:
    return {f: given.get(f) for f in FIELDS}


def test_migration_is_named_and_creates_the_tables(tmp_path):
    assert any(m.name == "m006_human_labels" for m in MIGRATIONS)
    with _store(tmp_path / "s.db") as store:
        cols = [r[1] for r in store.conn.execute("PRAGMA table_info(human_labels)")]
        assert cols == [
            "gen_id",
            "annotator",
            *FIELDS,
            "unsure",
            "note",
            "source",
            "created_at",
            "updated_at",
        ]
        pk = [r[1] for r in store.conn.execute("PRAGMA table_info(human_labels)") if r[5]]
        assert pk == ["gen_id", "annotator"]
        fks = store.conn.execute("PRAGMA foreign_key_list(human_labels)").fetchall()
        assert [(r[2], r[3]) for r in fks] == [("generations", "gen_id")]


def test_save_read_upsert_and_annotators(tmp_path):
    with _store(tmp_path / "s.db") as store:
        store.save_label(HumanLabel(1, "bob", _values(refusal=1)))
        store.save_label(HumanLabel(2, "alice", _values(WA_present=1, any_fallacy_present=1)))
        first = store.labels("alice")[0]
        assert first.created_at and first.updated_at == first.created_at
        store.save_label(
            HumanLabel(2, "alice", _values(refusal=0, soft_refusal=1), unsure=True, note="hm")
        )
        assert store.annotators() == ["alice", "bob"]
        (again,) = store.labels("alice")
        assert again.values == _values(refusal=0, soft_refusal=1)  # replaced, not merged
        assert again.unsure and again.note == "hm" and again.source == "annotate"
        assert again.created_at == first.created_at and again.updated_at >= first.updated_at
        assert [(lab.gen_id, lab.annotator) for lab in store.labels()] == [
            (1, "bob"),
            (2, "alice"),
        ]
    with Store.open(tmp_path / "s.db", readonly=True) as store:
        assert len(store.labels()) == 2 and store.labels("nobody") == []


def test_missing_fields_are_unset_and_bools_become_ints(tmp_path):
    with _store(tmp_path / "s.db") as store:
        store.save_label(HumanLabel(3, "a", {"refusal": True}))
        (lab,) = store.labels()
        assert lab.values["refusal"] == 1 and lab.values["WA_present"] is None


@pytest.mark.parametrize(
    ("label", "message"),
    [
        (HumanLabel(1, "", {}), "annotator name"),
        (HumanLabel(1, "a b", {}), "annotator name"),
        (HumanLabel(1, "<x>", {}), "annotator name"),
        (HumanLabel(1, "a", {"refusal": 2}), "refusal is 2"),
        (HumanLabel(1, "a", {"refusal": "1"}), "give 0, 1"),
        (HumanLabel(1, "a", {"refusals": 1}), "unknown rubric field 'refusals'"),
        (HumanLabel(99, "a", {}), "no generation 99"),
    ],
)
def test_bad_labels_are_refused_with_a_reason(tmp_path, label, message):
    with _store(tmp_path / "s.db") as store:
        with pytest.raises(LabelError, match=message):
            store.save_label(label)
        assert store.labels() == []
    assert issubclass(LabelError, StoreError)  # the CLI prints it as one line


def test_many_labels_are_all_or_none(tmp_path):
    with _store(tmp_path / "s.db") as store:
        good = HumanLabel(1, "a", _values(refusal=1))
        with pytest.raises(LabelError):
            store.save_labels([good, HumanLabel(42, "a", {})])
        assert store.labels() == []
        assert store.save_labels([good, HumanLabel(2, "a", {})]) == 2


def test_annotation_sample_is_appended_in_order_without_repeats(tmp_path):
    with _store(tmp_path / "s.db") as store:
        assert store.annotation_sample() == []
        assert store.extend_annotation_sample([("x1", 2, "s"), ("x2", 1, "s")], seed=7) == 2
        assert store.extend_annotation_sample([("x3", 2, "s"), ("x4", 3, "t")], seed=7) == 1
        items = store.annotation_sample()
        assert [(i.position, i.item_id, i.gen_id) for i in items] == [
            (1, "x1", 2),
            (2, "x2", 1),
            (3, "x4", 3),
        ]
        with pytest.raises(StoreError, match="FOREIGN KEY"):
            store.extend_annotation_sample([("x9", 99, "s")], seed=7)
