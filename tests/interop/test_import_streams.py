"""Import streams (issue 26, item 4): a file is read, checked and written a chunk at a time, so
the importer holds at most one chunk of records whatever the file's length, and a file stopped
in its last chunk leaves nothing of itself stored. Shown structurally (counted records, traced
allocations at two sizes), never by timing."""

from __future__ import annotations

import gzip
import json
import tracemalloc
from pathlib import Path

import pytest

from deflectbench.interop import import_paths, importer
from deflectbench.interop.bulk import BulkRows
from deflectbench.interop.release import InteropError
from deflectbench.store import Store
from support.fixtures import copy_of_release_fixture

MODEL = "gpt-5.5"
JUDGES = ("claude-haiku-4-5-20251001", "gpt-5.4-mini")
CHUNK = 100


def release(root: Path, benchmark, runs: int) -> tuple[Path, list[Path]]:
    """One model's generations (10 claims x 15 templates x ``runs``) and each judge's file."""
    copy_of_release_fixture(
        root,
        models=(MODEL,),
        judges=JUDGES,
        claims=[c.claim_id for c in benchmark.claims[::8]],
        runs=runs,
        seed=5,
        error_rate=0.0,
        parse_error_rate=0.0,
    )
    return next(root.rglob("generations_*.jsonl")), sorted(root.rglob("evals_*.jsonl"))


class Held:
    """Records decoded and not yet handed to the store: the most the importer ever held (a
    record the careful way, or a chunk's rows in bulk)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = self.most = self.written = 0
        for name in ("decode_generation", "decode_eval"):
            decode = getattr(importer, name)
            monkeypatch.setattr(importer, name, self._counting(decode))
        for name in ("add_generation", "add_judgment"):
            add = getattr(Store, name)
            monkeypatch.setattr(Store, name, self._writing(add))
        for name in ("generations", "evals"):
            monkeypatch.setattr(BulkRows, name, self._rows(getattr(BulkRows, name)))
        monkeypatch.setattr(importer, "_write_rows", self._bulk(importer._write_rows))

    def _rows(self, rows_of):
        def counted(*args, **kwargs):
            found = rows_of(*args, **kwargs)
            if found is not None:  # a chunk's rows, held until written together
                self.most = max(self.most, self.now + len(found[0]))
            return found

        return counted

    def _bulk(self, write):
        def written(store, kind, rows):
            done = write(store, kind, rows)
            self.written += len(rows) if done else 0
            return done

        return written

    def _counting(self, decode):
        def counted(*args, **kwargs):
            rec = decode(*args, **kwargs)
            self.now += 1
            self.most = max(self.most, self.now)
            return rec

        return counted

    def _writing(self, add):
        def written(store, rec):
            add(store, rec)
            self.now -= 1
            self.written += 1

        return written


@pytest.fixture(params=[True, False], ids=["bulk", "careful"])
def bulk(request, monkeypatch) -> bool:
    """Each test both ways: common chunks written in bulk, and every chunk the careful way."""
    monkeypatch.setattr(importer, "BULK", request.param)
    return request.param


@pytest.mark.parametrize("runs", [4, 20])
def test_the_importer_never_holds_more_than_one_chunk_of_records(
    tmp_path, benchmark, monkeypatch, runs, bulk
):
    gens, evals = release(tmp_path / "rel", benchmark, runs)
    n_gens = len(gens.read_text().splitlines())
    n_evals = sum(len(e.read_text().splitlines()) for e in evals)
    assert n_gens == 150 * runs and n_evals == 2 * n_gens  # 600 and 3,000 generations
    held = Held(monkeypatch)
    with Store.open(tmp_path / "x.db") as store:
        report = import_paths(store, [tmp_path / "rel"], chunk_records=CHUNK)
        counts = store.counts()
    assert report.ok, report.problems
    assert counts["generations"] == n_gens and counts["judgments"] == n_evals
    assert held.written == n_gens + n_evals
    assert held.most == CHUNK  # one chunk at a time, at 600 lines as at 3,000


def _peak_import(root: Path, db: Path) -> int:
    """Peak bytes the import allocated (Python's allocations; SQLite's page cache is bounded
    by its own setting)."""
    with Store.open(db) as store:
        tracemalloc.start()
        try:
            report = import_paths(store, [root], chunk_records=CHUNK)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert report.ok, report.problems
    return peak


def test_peak_memory_does_not_grow_with_the_lines(tmp_path, benchmark):
    release(tmp_path / "small", benchmark, 2)  # 300 generations, 600 judge records
    release(tmp_path / "large", benchmark, 10)  # five times as many lines
    small = _peak_import(tmp_path / "small", tmp_path / "small.db")
    large = _peak_import(tmp_path / "large", tmp_path / "large.db")
    # holding the lines or records would cost five times as much; one chunk costs the same
    assert large < small * 1.5, (small, large)


def _cut_gzip(path: Path, out: Path) -> int:
    out.write_bytes(gzip.compress(path.read_bytes()))
    return len(path.read_bytes())


def test_a_file_refused_in_its_last_chunk_leaves_nothing_of_itself(
    tmp_path, benchmark, monkeypatch, bulk
):
    gens, _ = release(tmp_path / "rel", benchmark, 4)
    n = len(gens.read_text().splitlines())
    other = tmp_path / "other"
    other.mkdir()
    # an archive that expands past the limit only in its last chunk: refused midway
    size = _cut_gzip(gens, other / "generations_big.jsonl.gz")
    monkeypatch.setattr(importer, "BLOCK_BYTES", 4096)
    monkeypatch.setattr(importer, "MAX_GUNZIPPED_BYTES", size - 200)
    held = Held(monkeypatch)
    with Store.open(tmp_path / "x.db") as store:
        with pytest.raises(InteropError, match="expands to more than"):
            import_paths(store, [other], chunk_records=CHUNK)
        assert held.written >= n - CHUNK  # every chunk before the last was written ...
        assert store.counts()["generations"] == 0  # ... and none of it is stored


def test_a_process_stopped_in_the_last_chunk_leaves_nothing_of_the_file(
    tmp_path, benchmark, monkeypatch, bulk
):
    gens, evals = release(tmp_path / "rel", benchmark, 4)
    n = len(gens.read_text().splitlines())
    with Store.open(tmp_path / "x.db") as store:
        import_paths(store, [gens, evals[0]], chunk_records=CHUNK)  # one judge's file, stored
        before = store.judgment_rows()
        assert len(before) == n
        add, write = Store.add_judgment, importer._write_rows
        calls = 0

        def stop_near_the_end(self, rec):
            nonlocal calls
            calls += 1
            if calls == n - 3:
                raise KeyboardInterrupt  # as a Ctrl-C in the last chunk
            add(self, rec)

        def stop_in_the_last_chunk(store, kind, rows):
            nonlocal calls
            calls += len(rows)
            if calls == n:
                raise KeyboardInterrupt  # as a Ctrl-C while the last chunk is written
            return write(store, kind, rows)

        monkeypatch.setattr(Store, "add_judgment", stop_near_the_end)
        monkeypatch.setattr(importer, "_write_rows", stop_in_the_last_chunk)
        with pytest.raises(KeyboardInterrupt):
            import_paths(store, [evals[1]], chunk_records=CHUNK)
        assert store.judgment_rows() == before
        assert store.counts()["generations"] == n


def _edited(gens: Path, out: Path) -> list[str]:
    """The file with, in its last chunk, a garbled line, a conflicting duplicate of line 1 and
    an identical repeat of line 2 (far from the lines they repeat)."""
    lines = gens.read_text().splitlines()
    twin = json.loads(lines[0])
    twin["response"] = "Another reply under the same id."
    lines += ["{not json", json.dumps(twin), lines[1]]
    out.write_text("\n".join(lines) + "\n")
    return lines


@pytest.mark.parametrize("chunk", [1, 7, CHUNK, 100_000])
def test_any_chunk_size_imports_and_reports_as_one_pass(tmp_path, benchmark, chunk, bulk):
    gens, _ = release(tmp_path / "rel", benchmark, 4)
    path = tmp_path / "generations_edited.jsonl"
    lines = _edited(gens, path)
    n = len(lines)
    with Store.open(tmp_path / "x.db") as store:
        report = import_paths(store, [path], chunk_records=chunk)
        rows = store.generation_rows(columns=["claim_id", "prompt_id", "sample", "response"])
    assert report.problems == [
        f"{path}:{n - 2}: not valid JSON, garbled or truncated line (Expecting property name "
        "enclosed in double quotes at column 2)",
        f"{path}:{n - 1}: conflicting duplicate: gen_id {json.loads(lines[0])['gen_id']!r} is "
        "also at line 1 with other content; kept line 1, skipped this one",
    ]
    (fr,) = report.files
    assert (fr.read, fr.imported, fr.already_present, fr.skipped) == (n, n - 3, 1, 2)
    assert len(rows) == n - 3
    assert "Another reply" not in "".join(r["response"] or "" for r in rows)


@pytest.mark.parametrize("block", [7, 4096, 1 << 20])
def test_a_gzip_read_block_by_block_gives_every_line(tmp_path, benchmark, monkeypatch, block):
    """Small blocks leave output inside the inflater after a full block: it is drained."""
    gens, _ = release(tmp_path / "rel", benchmark, 2)
    n = len(gens.read_text().splitlines())
    gz = tmp_path / "generations_packed.jsonl.gz"
    gz.write_bytes(gzip.compress(gens.read_bytes()))
    monkeypatch.setattr(importer, "BLOCK_BYTES", block)
    with Store.open(tmp_path / "x.db") as store:
        report = import_paths(store, [gz], chunk_records=CHUNK)
        assert report.ok and store.counts()["generations"] == n


def test_an_archive_failing_its_check_after_chunks_were_written_stores_nothing(
    tmp_path, benchmark, monkeypatch, bulk
):
    """A wrong CRC is found at the archive's end, after its chunks were written: what was read
    is not trusted, the file is rolled back and reported as one problem (line 1)."""
    gens, _ = release(tmp_path / "rel", benchmark, 4)
    packed = bytearray(gzip.compress(gens.read_bytes()))
    packed[-8] ^= 0xFF  # the CRC-32 in the trailer
    gz = tmp_path / "generations_crc.jsonl.gz"
    gz.write_bytes(bytes(packed))
    monkeypatch.setattr(importer, "BLOCK_BYTES", 4096)
    held = Held(monkeypatch)
    with Store.open(tmp_path / "x.db") as store:
        report = import_paths(store, [gz], chunk_records=CHUNK)
        assert held.written > CHUNK  # chunks were written before the check failed ...
        assert store.counts()["generations"] == 0  # ... and rolled back
    assert report.problems == [
        f"{gz}:1: not a readable gzip file (Error -3 while decompressing data: incorrect data "
        "check)"
    ]
    (fr,) = report.files
    assert (fr.read, fr.imported, fr.already_present, fr.skipped) == (1, 0, 0, 1)
