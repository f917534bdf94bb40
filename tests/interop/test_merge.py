"""``merge``: every record once through the gate; conflicts refused and reported as an import
does; other settings never mixed under one label."""

from __future__ import annotations

from pathlib import Path

import pytest

from deflectbench.conditions import Settings
from deflectbench.interop.merge import merge_stores
from deflectbench.interop.release import InteropError
from deflectbench.records import GenerationRecord, JudgmentRecord
from deflectbench.store import Store
from deflectbench.vocab import FIELDS

VERDICT = dict.fromkeys(FIELDS, 0)


def settings(temperature: float = 1.0) -> Settings:
    return Settings(temperature=temperature, max_tokens=256, seed=0, benchmark_sha256="x" * 64)


def write(
    path: Path,
    cells: dict[tuple[str, str, int], str | None],
    *,
    label: str = "c1",
    temperature: float = 1.0,
    judge: bool = True,
) -> Path:
    """A store of one model's cells (None: an error row), each good one judged by lexical."""
    with Store.open(path) as store:
        store.register_condition("m", settings(temperature), label)
        for (claim, prompt, sample), response in cells.items():
            store.add_generation(
                GenerationRecord(
                    benchmark="b",
                    model="m",
                    claim_id=claim,
                    prompt_id=prompt,
                    sample=sample,
                    prompt=f"{claim} {prompt}",
                    response=response,
                    error=None if response is not None else "HTTP 500",
                    condition=label,
                )
            )
            gid = store.generation_id("b", "m", claim, prompt, sample, label)
            if judge and response is not None and gid is not None:
                store.add_judgment(JudgmentRecord(gid, "lexical", response, VERDICT))
    return path


def rows(path: Path, sql: str) -> list[tuple]:
    with Store.open(path, readonly=True) as store:
        return [tuple(r) for r in store.conn.execute(sql)]


def test_every_record_once_and_an_error_row_replaced_by_a_result(tmp_path: Path) -> None:
    a = write(tmp_path / "a.db", {("c1", "p", 1): "A", ("c2", "p", 1): None})
    b = write(tmp_path / "b.db", {("c2", "p", 1): "B", ("c3", "p", 1): "C"})
    with Store.open(tmp_path / "out.db") as out:
        report = merge_stores(out, [a, b])
        again = merge_stores(out, [a, b])
    assert report.ok and again.ok, (report.problems, again.problems)
    got = rows(tmp_path / "out.db", "SELECT claim_id, response, error FROM generations")
    assert sorted(got) == [("c1", "A", None), ("c2", "B", None), ("c3", "C", None)]
    judged = rows(
        tmp_path / "out.db",
        "SELECT g.claim_id, j.raw FROM judgments j JOIN generations g USING (gen_id)",
    )
    assert sorted(judged) == [("c1", "A"), ("c2", "B"), ("c3", "C")]
    assert sum(s.generations_new for s in again.stores) == 0
    assert sum(s.judgments_new for s in again.stores) == 0
    assert rows(tmp_path / "out.db", "SELECT model, label FROM conditions") == [("m", "c1")]


def test_a_conflicting_duplicate_is_refused_and_named(tmp_path: Path) -> None:
    a = write(tmp_path / "a.db", {("c1", "p", 1): "first"})
    b = write(tmp_path / "b.db", {("c1", "p", 1): "other", ("c2", "p", 1): "fine"})
    with Store.open(tmp_path / "out.db") as out:
        report = merge_stores(out, [a, b])
    assert not report.ok
    assert any("conflicting duplicate" in p and "c1/p/1" in p for p in report.problems)
    # its verdict is not carried onto the answer kept
    assert any("its generation was not merged" in p for p in report.problems)
    got = rows(tmp_path / "out.db", "SELECT claim_id, response FROM generations")
    assert sorted(got) == [("c1", "first"), ("c2", "fine")]
    judged = rows(tmp_path / "out.db", "SELECT raw FROM judgments")
    assert sorted(judged) == [("fine",), ("first",)]


def test_one_label_for_other_settings_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    a = write(tmp_path / "a.db", {("c1", "p", 1): "A"})
    b = write(tmp_path / "b.db", {("c2", "p", 1): "B"}, temperature=0.7)
    refused = pytest.raises(InteropError, match=r"condition 'c1' has other settings.*temp")
    with Store.open(tmp_path / "out.db") as out, refused:
        merge_stores(out, [a, b])
    assert rows(tmp_path / "out.db", "SELECT count(*) FROM generations") == [(0,)]


def test_other_settings_under_other_labels_stay_apart(tmp_path: Path) -> None:
    a = write(tmp_path / "a.db", {("c1", "p", 1): "A"})
    b = write(tmp_path / "b.db", {("c1", "p", 1): "B"}, label="t07", temperature=0.7)
    with Store.open(tmp_path / "out.db") as out:
        assert merge_stores(out, [a, b]).ok
    got = rows(tmp_path / "out.db", "SELECT condition, response FROM generations")
    assert sorted(got) == [("c1", "A"), ("t07", "B")]


def test_out_among_the_inputs_is_refused(tmp_path: Path) -> None:
    a = write(tmp_path / "a.db", {("c1", "p", 1): "A"})
    with Store.open(a) as out, pytest.raises(InteropError, match="OUT is also an input"):
        merge_stores(out, [a])
