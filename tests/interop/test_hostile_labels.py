"""Hostile label files (issue 22): a row's sample must be a whole number in range (1.9 is not
sample 1, inf is not an internal error), its fields 0/1/empty; any bad row is listed with its
``file:line`` and nothing is stored."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from deflectbench.benchmark import default_benchmark
from deflectbench.interop import InteropError
from deflectbench.interop.labels import KEY_COLUMNS, import_labels
from deflectbench.store import Store
from support.report_store import make_store

B = default_benchmark()


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return make_store(tmp_path_factory.mktemp("labels") / "deflectbench.db", B)


@pytest.fixture
def db(base, tmp_path) -> Path:
    (tmp_path / "deflectbench.db").write_bytes(base.read_bytes())
    return tmp_path / "deflectbench.db"


def a_row(db: Path) -> dict:
    with Store.open(db) as store:
        gen = store.generation_rows(columns=list(KEY_COLUMNS))[0]
    return {**gen, "annotator": "alice", "refusal": 0}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("sample", [1.9, "1.9", "inf", float("inf"), -1, True, "\u00b2", "1e400"])
def test_a_sample_that_is_not_a_whole_number_in_range_is_refused(db, tmp_path, sample):
    path = write_jsonl(tmp_path / "in.jsonl", [a_row(db) | {"sample": sample}])  # inf: Infinity
    with Store.open(db) as store, pytest.raises(InteropError) as exc:
        import_labels(store, path)
    with Store.open(db) as store:
        assert store.labels() == []
    assert f"{path}:1: sample is" in str(exc.value)


def test_a_sample_of_1_9_in_a_csv_is_refused_not_read_as_1(db, tmp_path):
    row = a_row(db) | {"sample": "1.9"}
    path = tmp_path / "in.csv"
    header = ",".join(row)
    path.write_text(header + "\n" + ",".join(str(v) for v in row.values()) + "\n")
    with Store.open(db) as store, pytest.raises(InteropError, match=re.escape("sample is '1.9'")):
        import_labels(store, path)


@pytest.mark.parametrize("value", [7, -3, 0.5, "maybe"])
def test_a_field_other_than_0_1_empty_is_refused(db, tmp_path, value):
    path = write_jsonl(tmp_path / "in.jsonl", [a_row(db) | {"refusal": value}])
    with Store.open(db) as store, pytest.raises(InteropError, match=f"{path}:1: "):
        import_labels(store, path)


def test_a_note_over_the_bound_is_refused(db, tmp_path):
    path = write_jsonl(tmp_path / "in.jsonl", [a_row(db) | {"note": "x" * 100_001}])
    with Store.open(db) as store, pytest.raises(InteropError, match="note is 100,001 characters"):
        import_labels(store, path)


def test_a_monster_line_or_cell_is_one_line_not_an_internal_error(db, tmp_path):
    import gzip

    big = tmp_path / "in.jsonl.gz"
    with gzip.open(big, "wt", encoding="utf-8") as fh:
        fh.write(" " * 2_000_000 + "\n")
    cell = tmp_path / "in.csv"
    cell.write_text("annotator,note\nalice," + "x" * 200_000 + "\n")
    broken = tmp_path / "cut.jsonl.gz"
    broken.write_bytes(gzip.compress(b'{"annotator": "alice"}\n' * 50)[:40])
    with Store.open(db) as store:
        with pytest.raises(InteropError, match="over the limit"):
            import_labels(store, big)
        with pytest.raises(InteropError, match="not a readable CSV file"):
            import_labels(store, cell)
        with pytest.raises(InteropError, match="cannot read"):
            import_labels(store, broken)
