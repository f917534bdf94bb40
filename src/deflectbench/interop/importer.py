"""Release files (or folders of them, any layout, gzipped or not) into the store.

Robustness policy: a garbled, truncated or non-UTF-8 line, or a record with a missing or
inconsistent field, is reported as ``path:line: message`` and skipped; every good record of a
file is written in one transaction, so a file is either imported (minus its reported lines) or,
if the process dies, not at all: nothing is ever half-written.

Bounded memory: a file is read as it comes and checked and written :data:`CHUNK_RECORDS` at a
time, and the store is asked only about the chunk's keys, so an import's memory does not grow
with its files' lines or with what the store already holds.
"""

from __future__ import annotations

import gc
import sqlite3
import zlib
from collections.abc import Collection, Generator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import Any, BinaryIO, Literal, cast

from deflectbench import gate
from deflectbench.benchmark import Benchmark, default_benchmark
from deflectbench.conditions import RELEASE
from deflectbench.gate import GateError
from deflectbench.interop.bulk import EVAL_FIXED, GEN_FIXED, BulkRows, bound
from deflectbench.interop.decode import decode_eval, decode_generation, decode_line
from deflectbench.interop.release import EVAL_KEYS, Catalog, InteropError, RecordError
from deflectbench.store import Store
from deflectbench.store.chunked import (
    FirstLines,
    GenKey,
    generation_ids_by_model,
    generation_ids_of,
    generation_rows_of,
    judgment_rows_of,
    judgments_between,
)
from deflectbench.store.fresh import written_once
from deflectbench.store.upsert import (
    GENERATION_COLUMNS,
    GENERATION_KEYS,
    JUDGMENT_COLUMNS,
    JUDGMENT_KEYS,
    Fixed,
    keep_good_upsert,
)

Kind = Literal["generations", "evals"]
#: ``(line number, text, problem)``: text is None when the line could not be read.
Line = tuple[int, str | None, str | None]


@dataclass
class FileReport:
    """What happened to one file: lines read, records new to the store, records it already
    held, lines skipped (each skipped line has a problem in the report)."""

    path: Path
    kind: str
    read: int = 0
    imported: int = 0
    already_present: int = 0
    skipped: int = 0
    #: How many records the source says it holds (an Inspect log's sample list, a folder's
    #: rows), when it says.
    declared: int | None = None

    def unbalanced(self) -> str | None:
        """None when new + already present + skipped = read (= declared); else what is
        missing or unaccounted for, in one line."""
        return gate.balance(
            self.imported,
            self.already_present,
            self.skipped,
            self.read,
            self.declared,
            f"{self.path} ({self.kind})",
        )


@dataclass
class ImportReport:
    """What an import did, file by file, and every problem it skipped (a CLI prints both)."""

    files: list[FileReport] = field(default_factory=list)
    #: ``path:line: message`` for every line or file skipped.
    problems: list[str] = field(default_factory=list)
    #: What a reader should know that skipped nothing (e.g. an Inspect run that stopped early:
    #: what it holds is imported); printed, never an exit code of its own.
    notes: list[str] = field(default_factory=list)

    def total(self, kind: str, what: str) -> int:
        """Sum of one count (``read``, ``imported``, ...) over the files of one kind."""
        return sum(getattr(f, what) for f in self.files if f.kind == kind)

    @property
    def ok(self) -> bool:
        return not self.problems and not any(f.unbalanced() for f in self.files)

    def summary(self) -> str:
        parts = []
        for kind, noun in (("generations", "generations"), ("evals", "judge records")):
            if any(f.kind == kind for f in self.files):
                parts.append(
                    f"{noun}: {self.total(kind, 'imported')} new, "
                    f"{self.total(kind, 'already_present')} already present, "
                    f"{self.total(kind, 'skipped')} skipped"
                )
        parts += [line for f in self.files if (line := f.unbalanced())]
        return "; ".join(parts) or "nothing imported"


# -- reading files ------------------------------------------------------------------------------


#: The error for a folder holding nothing ``deflectbench import`` reads: by the time a folder
#: gets here, Inspect logs and Hugging Face folders have been looked for too.
NOTHING_TO_IMPORT = (
    "{path}: nothing to import: this folder (searched recursively) holds no release files "
    "(generations_*.jsonl, evals_*.jsonl, or gzipped .jsonl.gz) and no Inspect logs of the "
    "deflectbench task (*.eval, *.json), and is not a folder written by `export --format hf` "
    "(a README.md card beside data/*/*.parquet: pass that folder itself); pass a folder or "
    "files holding one of these (docs/exports.md, docs/inspect.md)"
)


def collect_files(paths: Sequence[Path | str]) -> list[Path]:
    """Files to read: given files as they are, folders searched for ``*.jsonl[.gz]``; a
    missing path or a folder without one is refused before anything is read."""
    out: list[Path] = []
    seen: set[Path] = set()
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(
                f
                for f in p.rglob("*")
                if f.is_file()
                and f.name.endswith((".jsonl", ".jsonl.gz"))
                and not f.name.startswith(".")
            )
            if not found:
                raise InteropError(NOTHING_TO_IMPORT.format(path=p))
        elif p.is_file():
            found = [p]
        else:
            raise InteropError(f"{p}: no such file or folder")
        for f in found:
            key = f.resolve()
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out


#: Bytes read (or inflated) at a time.
BLOCK_BYTES = 1 << 20


#: A line's bytes, exactly its text encoded as UTF-8 (orjson reads them without encoding the
#: text again), None for a line that could not be read; in step with the lines they go with.
Raw = bytes | None
#: Lines and their bytes, in step.
Run = tuple[list[Line], list[Raw]]

_BOM = b"\xef\xbb\xbf"


def _lines(path: Path) -> Generator[Line, None, None]:
    """Each non-blank line, read as it comes (never the whole file at once); text is None when
    the line is not UTF-8. A bad byte costs its own line only."""
    for lines, _ in _runs(path):
        yield from lines


def _runs(path: Path) -> Iterator[Run]:
    """:func:`_lines` a few at a time: runs of at most :data:`RUN_LINES` lines (and their
    bytes), the last line of the file held back until the file ends (a damaged archive may
    cut it)."""
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise InteropError(f"{path}: cannot read ({exc.strerror or exc})") from None
    with fh:
        blocks = _Blocks(path, fh)
        held: tuple[Line, Raw] | None = None  # the last line so far, and its bytes
        lineno = 0  # lines split off so far
        pending: list[bytes] = []  # the line begun and not ended yet
        for block in blocks:
            parts = block.split(b"\n")
            if len(parts) == 1:
                pending.append(block)
                continue
            pending.append(parts[0])
            parts[0] = b"".join(pending)
            pending = [parts.pop()]
            crlf = b"\r" in block or b"\r" in parts[0]
            for start in range(0, len(parts), RUN_LINES):
                lines, raws = _region(parts[start : start + RUN_LINES], lineno, crlf)
                lineno += min(RUN_LINES, len(parts) - start)
                if lines:
                    if held is not None:
                        lines.insert(0, held[0])
                        raws.insert(0, held[1])
                    held = lines.pop(), raws.pop()
                    if lines:
                        yield lines, raws
        tail = b"".join(pending)  # after the last newline: a line (if not empty) without one
        lines, raws = _region([tail], lineno, b"\r" in tail)
        if lines and held is not None:
            lines.insert(0, held[0])
            raws.insert(0, held[1])
        if lines:
            held = lines.pop(), raws.pop()
        line, raw = held if held is not None else (None, None)
        for found in _last(line, blocks.damage, whole_lines=tail == b""):
            lines.append(found)
            raws.append(raw if found is line else None)
        if lines:
            yield lines, raws


#: Lines decoded at a time (a block holds hundreds: decoded all at once, they would cost
#: several times the block's bytes).
RUN_LINES = 64


def _region(raws: list[bytes], before: int, crlf: bool) -> tuple[list[Line], list[Raw]]:
    """The non-blank lines of ``raws`` (the first is line ``before`` + 1) and their bytes
    (``crlf``: some may end with a carriage return): decoded in one pass, or one by one when a
    bad byte is among them (each bad line its own problem)."""
    if before == 0 and raws[0].startswith(_BOM):
        raws[0] = raws[0][3:]
    try:
        texts = [raw.decode("utf-8") for raw in raws]
    except UnicodeDecodeError:
        return _line_by_line(raws, before)
    if crlf:  # every \r is one byte: the texts and their bytes stay in step
        texts = [t.rstrip("\r") for t in texts]
        raws = [r.rstrip(b"\r") for r in raws]
    if all(map(str.strip, texts)):  # no blank line: the common case, at C speed
        lines = zip(range(before + 1, before + len(texts) + 1), texts, repeat(None))
        return list[Line](lines), cast(list[Raw], raws)
    kept = [i for i, text in enumerate(texts) if text.strip()]
    return [(before + 1 + i, texts[i], None) for i in kept], [raws[i] for i in kept]


def _line_by_line(raws: list[bytes], before: int) -> tuple[list[Line], list[Raw]]:
    lines: list[Line] = []
    out: list[Raw] = []
    for lineno, raw in enumerate(raws, start=before + 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problem = f"not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
            lines.append((lineno, None, problem))
            out.append(None)
            continue
        if line.strip():
            lines.append((lineno, line.rstrip("\r"), None))
            out.append(raw.rstrip(b"\r"))
    return lines, out


#: The most a compressed file may expand to (a release file is tens of MB).
MAX_GUNZIPPED_BYTES = 4 * 1024**3


class Unreadable(Exception):
    """An archive that fails its own checks (a bad header, a wrong CRC): what was read of it
    before is not trusted either, so the file is one problem, nothing of it stored."""


class _Blocks:
    """A file's bytes block by block, gunzipped as they come for ``.gz``. A truncated archive
    ends the blocks early, ``damage`` saying why (every complete line before the cut is kept;
    the last, partial one is reported, not lost silently); a damaged one raises
    :class:`Unreadable`."""

    def __init__(self, path: Path, fh: BinaryIO) -> None:
        self.path = path
        self.fh = fh
        self.damage: str | None = None

    def _read(self) -> bytes:
        try:
            return self.fh.read(BLOCK_BYTES)
        except OSError as exc:
            raise InteropError(f"{self.path}: cannot read ({exc.strerror or exc})") from None

    def __iter__(self) -> Iterator[bytes]:
        if not self.path.name.endswith(".gz"):
            while block := self._read():
                yield block
            return
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        total = 0
        while not inflater.eof and (data := self._read()):
            while True:
                try:
                    out = inflater.decompress(data, BLOCK_BYTES)
                except zlib.error as exc:
                    raise Unreadable(f"not a readable gzip file ({exc})") from None
                total += len(out)
                if total > MAX_GUNZIPPED_BYTES:
                    raise InteropError(
                        f"{self.path}: expands to more than {MAX_GUNZIPPED_BYTES:,} bytes; "
                        "not a release file"
                    )
                if out:
                    yield out
                data = inflater.unconsumed_tail
                # a full block may leave output inside the inflater: drain it
                if inflater.eof or (not data and len(out) < BLOCK_BYTES):
                    break
        if not inflater.eof:
            self.damage = "the gzip file is truncated"


def _last(held: Line | None, damage: str | None, *, whole_lines: bool) -> Iterator[Line]:
    """The held-back last line; when the archive ended early, a partial last line is a
    problem, not a record, and the damage itself is reported either way."""
    if damage is None:
        if held is not None:
            yield held
        return
    if held is None:
        yield (1, None, damage)
    elif whole_lines:
        yield held
        yield (held[0] + 1, None, damage)
    else:
        yield (held[0], None, f"{damage}: the last line is incomplete")


def _kind_of(path: Path) -> Kind | None:
    """By name prefix; for an unusual name, by the first record's keys."""
    name = path.name.lower()
    if name.startswith("generations"):
        return "generations"
    if name.startswith("evals"):
        return "evals"
    lines = _lines(path)
    try:
        for _, line, _problem in _readable(lines):
            if line is None:
                continue
            try:
                obj = decode_line(line)
            except RecordError:
                continue
            if "judge_model" in obj or "eval_id" in obj:
                return "evals"
            if "response" in obj and "model" in obj:
                return "generations"
            return None
    finally:
        lines.close()
    return None


def _readable(lines: Iterator[Line]) -> Iterator[Line]:
    """``lines``, an unreadable archive ending them (its problem as line 1's)."""
    try:
        yield from lines
    except Unreadable as exc:
        yield (1, None, str(exc))


def iter_release_records(path: Path) -> Iterator[dict[str, Any]]:
    """The records of one release file, for tests and quick looks (raises on a bad line)."""
    for lineno, line, problem in _readable(_lines(Path(path))):
        if line is None:
            raise InteropError(f"{path}:{lineno}: {problem}")
        try:
            yield decode_line(line)
        except RecordError as exc:
            raise InteropError(f"{path}:{lineno}: {exc}") from None


# -- import -------------------------------------------------------------------------------------

#: Records read, checked and written at a time: an import holds this many records (and the
#: store's rows for them), however long its files and however large the store.
CHUNK_RECORDS = 2_000
#: Whether a chunk of common records is written in bulk (:mod:`.bulk`); off, every chunk is
#: read the careful way (the tests compare both).
BULK = True


def import_paths(
    store: Store,
    paths: Sequence[Path | str],
    benchmark: Benchmark | None = None,
    *,
    chunk_records: int = CHUNK_RECORDS,
) -> ImportReport:
    """Import release files (or folders of them, searched recursively) into ``store``.

    All generation files first, then all judge files, so a judge record finds its generation
    whatever the file order. Importing the same files again adds nothing. Problems are reported
    per line and skipped. Each file is read and written ``chunk_records`` records at a time,
    all in one transaction: a file is imported (minus its reported lines) or not at all.
    """
    catalog = Catalog(benchmark or default_benchmark())
    report = ImportReport()
    queued: dict[Kind, list[Path]] = {"generations": [], "evals": []}
    for path in collect_files(paths):
        kind = _kind_of(path)
        if kind is None:
            report.problems.append(
                f"{path}: skipped: not a generations_ or evals_ file (name and first record do not "
                "say; a generation has 'model' and 'response', a judge record 'judge_model')"
            )
            continue
        queued[kind].append(path)
    bulk = BulkRows(catalog) if BULK else None
    with written_once(store.conn), _fewer_collections():
        for queued_kind, files in queued.items():  # generations first, then evals
            for path in files:
                chunk = max(1, chunk_records)
                _import_file(store, path, queued_kind, catalog, report, chunk, bulk)
    return report


#: Allocations between two young collections of the garbage collector during an import
#: (Python's default is 700).
_GC_YOUNG = 10_000


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """The garbage collector run less often while importing: each record makes several
    containers that live for one chunk, so at the default threshold they are traversed again
    and again, and promoted, and every promotion brings a full collection nearer (a walk of
    every object the process holds): 10-15% of a paper-scale import's CPU. They hold no
    cycles; what cyclic garbage there is is still collected, less often."""
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], _GC_YOUNG), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)


def _chunks(path: Path, n: int) -> Iterator[Run]:
    """A file's lines (:func:`_lines`) ``n`` at a time (the last chunk shorter), with their
    bytes, read as they are needed."""
    lines: list[Line] = []
    raws: list[Raw] = []
    for got, got_raws in _runs(path):
        lines += got
        raws += got_raws
        while len(lines) >= n:
            yield lines[:n], raws[:n]
            del lines[:n], raws[:n]
    if lines:
        yield lines, raws


#: The fields a duplicate must repeat exactly (the gate's duplicate rule): the reply and its
#: error, a record's attributes and the store's columns alike.
_CONTENT: dict[str, tuple[str, str]] = {
    "generations": ("response", "error"),
    "evals": ("raw", "error"),
}


def _identity(kind: Kind, rec: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """A record's key in the store and the content a duplicate must repeat exactly."""
    content = tuple(getattr(rec, name) for name in _CONTENT[kind])
    if kind == "generations":
        return (rec.model, rec.claim_id, rec.prompt_id, rec.sample), content
    return (rec.gen_id, rec.judge), content


def _import_file(
    store: Store,
    path: Path,
    kind: Kind,
    catalog: Catalog,
    report: ImportReport,
    chunk: int,
    bulk: BulkRows | None = None,
) -> None:
    """One file in one transaction, ``chunk`` records at a time: whatever stops it midway
    (an unreadable block, an archive that expands too far, a killed process) leaves nothing of
    it stored. A chunk of common records new to the store is written in bulk; any other is
    read the careful way."""
    fr = FileReport(path=path, kind=kind)
    report.files.append(fr)
    table = "generations" if kind == "generations" else "judgments"
    # the rows of this file's table, counted on its smallest index (Store.counts also sums
    # the good generations: a scan of every row, twice a file)
    count = f"SELECT count(*) FROM {table}"
    before = store.conn.execute(count).fetchone()[0]
    kept = refused = 0
    # a file's problems in the whole-file order: bad lines, then conflicts, then refusals
    bad, conflicts, refusals = ImportReport(), ImportReport(), ImportReport()
    try:
        with store.transaction():
            first_lines = FirstLines(store.conn)
            for lines, raws in _chunks(path, chunk):
                if bulk is not None and (
                    n := _in_bulk(store, kind, bulk, lines, raws, first_lines)
                ):
                    fr.read += n
                    kept += n
                    continue
                decoded = _decoded(store, path, kind, catalog, lines, fr, bad)
                if not decoded:
                    continue
                records = _without_conflicts(store, path, kind, decoded, first_lines, fr, conflicts)
                not_stored = _write(store, path, kind, records, fr, refusals)
                kept += len(records)
                refused += len(not_stored)
                first: dict[Any, int] = {}
                for lineno, rec in records:
                    if lineno not in not_stored:
                        first.setdefault(_identity(kind, rec)[0], lineno)
                first_lines.remember(first)
    except Unreadable as exc:  # rolled back: the file is its one problem
        fr.read, fr.skipped, kept, refused = 1, 1, 0, 0
        bad.problems, conflicts.problems, refusals.problems = [f"{path}:1: {exc}"], [], []
    report.problems += bad.problems + conflicts.problems + refusals.problems
    fr.imported = store.conn.execute(count).fetchone()[0] - before
    fr.already_present = kept - refused - fr.imported


#: How many stored rows a lookup may read, per key it looks for, in one pass of an index
#: before it searches key by key instead.
_READ_PER_KEY = 4


def _in_bulk(
    store: Store,
    kind: Kind,
    bulk: BulkRows,
    lines: Sequence[Line],
    raws: Sequence[Raw],
    first_lines: FirstLines,
) -> int:
    """The chunk written in one statement when every record in it is common (:mod:`.bulk`),
    new to the store and to the rest of the chunk: how many; else 0, nothing written (a record
    the store refuses undoes the chunk), and the careful way reads it."""
    conn = store.conn
    found: tuple[list[Any], list[Any]] | None = None
    if kind == "generations":
        found = bulk.generations(lines, raws)
    elif (parsed := bulk.objects(lines, EVAL_KEYS, raws, floats=True)) is not None:

        def generation_ids(named: list[GenKey]) -> dict[GenKey, int]:
            most = _READ_PER_KEY * len(named)  # rows a pass may read before searching per key
            ids = generation_ids_by_model(conn, bulk.benchmark, RELEASE, named, most)
            return generation_ids_of(conn, bulk.benchmark, RELEASE, named) if ids is None else ids

        found = bulk.evals(parsed, generation_ids)
    if found is None:
        return 0
    rows, keys = found
    if len(set(keys)) != len(keys):
        return 0
    most = _READ_PER_KEY * len(keys)
    stored: Collection[Any] | None
    if kind == "generations":
        stored = generation_ids_by_model(conn, bulk.benchmark, RELEASE, keys, most)
        if stored is None:
            stored = generation_rows_of(conn, bulk.benchmark, RELEASE, keys)
    else:
        stored = judgments_between(conn, keys, most)
        if stored is None:
            stored = judgment_rows_of(conn, keys)
    table, column = (
        ("generations", "gen_id") if kind == "generations" else ("judgments", "judgment_id")
    )
    if stored:
        return _already_stored(store, kind, bulk, rows, keys, lines, first_lines)
    last_id = f"SELECT coalesce(max({column}), 0) FROM {table}"
    before = conn.execute(last_id).fetchone()[0]
    if not _write_rows(store, kind, rows):
        return 0
    n, first_line = len(rows), lines[0][0]
    if conn.execute(last_id).fetchone()[0] == before + n and lines[-1][0] == first_line + n - 1:
        first_lines.remember_run(before + 1, first_line, n)  # ids and lines in step
    else:
        first_lines.remember({key: line[0] for key, line in zip(keys, lines, strict=True)})
    return n


#: What :func:`_write_rows` writes for each kind: the table, its key and columns, and the
#: columns every row written in bulk holds the same value in (:mod:`.bulk`).
_BULK: dict[Kind, tuple[str, tuple[str, ...], tuple[str, ...], Fixed]] = {
    "generations": ("generations", GENERATION_KEYS, GENERATION_COLUMNS, GEN_FIXED),
    "evals": ("judgments", JUDGMENT_KEYS, JUDGMENT_COLUMNS, EVAL_FIXED),
}
#: Where :data:`_CONTENT`'s fields stand in the rows :func:`_write_rows` writes (None for a
#: fixed column), and the value of each fixed one.
_CONTENT_AT = {
    kind: tuple(
        (names.index(name), None) if name in names else (None, dict(fixed)[name])
        for name in _CONTENT[kind]
    )
    for kind, (_, keys, columns, fixed) in _BULK.items()
    for names in [bound(keys, columns, fixed)]
}


def _already_stored(
    store: Store,
    kind: Kind,
    bulk: BulkRows,
    rows: list[Any],
    keys: list[Any],
    lines: Sequence[Line],
    first_lines: FirstLines,
) -> int:
    """A re-import's chunk in one look, when every record in it is stored already: as the
    careful way would, a stored good result with the same content is left as it is, a stored
    failed request is written over by the record (the one upsert), each counted as already
    present, and their first lines remembered. Any other chunk is left to the careful way (0,
    nothing written): a record new to the store, one whose content differs from a stored good
    result (a conflict to report), or a failed one this file already had on an earlier line
    (the gate holds it to that line's content)."""
    conn = store.conn
    have: dict[Any, tuple[int, str | None, str | None]]
    if kind == "generations":
        have = generation_rows_of(conn, bulk.benchmark, RELEASE, keys)
    else:
        have = judgment_rows_of(conn, keys)
    (text_at, _), (error_at, error) = _CONTENT_AT[kind]
    failed: list[Any] = []
    for key, row in zip(keys, rows, strict=True):
        got = have.get(key)
        if got is None:
            return 0
        if got[2] is not None:
            failed.append((key, row))
        elif (row[error_at] if error_at is not None else error) is not None or (
            text_at is None or got[1] != row[text_at]
        ):
            return 0
    if failed:
        ids = {key: have[key][0] for key, _ in failed}
        if first_lines.of(list(ids), ids) or not _write_rows(store, kind, [r for _, r in failed]):
            return 0
    first_lines.remember({key: line[0] for key, line in zip(keys, lines, strict=True)})
    return len(rows)


def _write_rows(store: Store, kind: Kind, rows: list[Any]) -> bool:
    """Rows as ``Store.add_generation`` / ``add_judgment`` write them, in one statement:
    all or (the store refusing one) none."""
    sql = keep_good_upsert(*_BULK[kind])
    store.conn.execute("SAVEPOINT bulk")
    try:
        store.conn.executemany(sql, rows)
    except (ValueError, OverflowError, sqlite3.IntegrityError):  # as _write: one line's own
        store.conn.execute("ROLLBACK TO bulk")
        store.conn.execute("RELEASE bulk")
        return False
    store.conn.execute("RELEASE bulk")
    return True


def _decoded(
    store: Store,
    path: Path,
    kind: Kind,
    catalog: Catalog,
    lines: Sequence[Line],
    fr: FileReport,
    report: ImportReport,
) -> list[tuple[int, Any, str]]:
    """The chunk's records, ``(line, record, release id)``; each bad line reported (in line
    order) and skipped. A judge record's generation is looked up for this chunk only."""
    objects: list[tuple[int, str, dict[str, Any]]] = []
    problems: list[tuple[int, str]] = []
    for lineno, line, problem in lines:
        fr.read += 1
        try:
            if line is None:
                raise RecordError(problem or "unreadable line")
            objects.append((lineno, line, decode_line(line)))
        except RecordError as exc:
            problems.append((lineno, str(exc)))
    if kind == "generations":
        id_key = "gen_id"

        def decode(obj: dict[str, Any], line: str) -> Any:
            return decode_generation(obj, line, catalog)
    else:
        id_key = "eval_id"
        ids = generation_ids_of(store.conn, catalog.key, RELEASE, _generation_keys(objects))

        def decode(obj: dict[str, Any], line: str) -> Any:
            return decode_eval(obj, line, catalog, ids)

    decoded = []
    for lineno, line, obj in objects:
        try:
            decoded.append((lineno, decode(obj, line), str(obj.get(id_key))))
        except (RecordError, GateError) as exc:
            problems.append((lineno, str(exc)))
    fr.skipped += len(problems)
    problems.sort(key=lambda p: p[0])
    report.problems.extend(f"{path}:{lineno}: {message}" for lineno, message in problems)
    return decoded


def _generation_keys(objects: Sequence[tuple[int, str, dict[str, Any]]]) -> list[GenKey]:
    """The (model, claim_id, prompt_id, run) each judge record names, where well typed and the
    run in range (a record naming it otherwise is refused by the decoder before it looks; a
    run too large for SQLite once ended the import with a traceback)."""
    keys = []
    for _, _, obj in objects:
        model, claim, prompt, run = map(obj.get, ("gen_model", "claim_id", "prompt_id", "run"))
        if (
            type(model) is str
            and type(claim) is str
            and type(prompt) is str
            and type(run) is int
            and 0 <= run <= gate.MAX_SAMPLE
        ):
            keys.append((model, claim, prompt, run))
    return keys


def stored_contents(
    rows: dict[Any, tuple[int, str | None, str | None]],
) -> dict[Any, tuple[Any, bool, int]]:
    """The store's ``key -> (id, text, error)`` as the gate's ``key -> (content, good, id)``."""
    return {k: ((text, error), error is None, rid) for k, (rid, text, error) in rows.items()}


def _without_conflicts(
    store: Store,
    path: Path,
    kind: Kind,
    decoded: list[tuple[int, Any, str]],
    first_lines: FirstLines,
    fr: FileReport,
    report: ImportReport,
) -> list[tuple[int, Any]]:
    """Drop (and report, line by line with both ids) records whose id is already taken by a
    record with other content, in the store or earlier in the same file (the gate's rule): a
    conflicting duplicate never replaces a stored result, and never passes for "already
    present".

    Only this chunk's keys are looked up. A key an earlier chunk of the file stored is the
    gate's "earlier in the same file" (its first line, with the content that chunk stored),
    never "already stored"."""
    keys = [_identity(kind, rec)[0] for _, rec, _ in decoded]
    rows: dict[Any, tuple[int, str | None, str | None]]
    if kind == "generations":
        first = decoded[0][1]
        rows = generation_rows_of(store.conn, first.benchmark, first.condition, keys)
    else:
        rows = judgment_rows_of(store.conn, keys)
    stored = stored_contents(rows)
    earlier = first_lines.of([k for k in keys if k in stored], {k: v[2] for k, v in stored.items()})
    duplicates = gate.Duplicates({k: v for k, v in stored.items() if k not in earlier})
    for key, line in earlier.items():
        duplicates.check(key, stored[key][0], f"line {line}")  # as the gate saw it then
    kept = []
    what = "gen_id" if kind == "generations" else "eval_id"
    for lineno, rec, rid in decoded:
        key, content = _identity(kind, rec)
        try:
            duplicates.check(key, content, f"line {lineno}", f"{what} {rid!r}")
        except GateError as exc:
            fr.skipped += 1
            report.problems.append(f"{path}:{lineno}: {exc}")
            continue
        kept.append((lineno, rec))
    return kept


def _write(
    store: Store,
    path: Path,
    kind: Kind,
    records: list[tuple[int, Any]],
    fr: FileReport,
    report: ImportReport,
) -> set[int]:
    """The chunk, in the file's transaction; a record the store refuses costs its own line
    (its one statement is undone, the transaction goes on), never the file. Returns the lines
    refused."""
    add = store.add_generation if kind == "generations" else store.add_judgment
    refused = set()
    for lineno, rec in records:
        try:
            add(rec)
        except (ValueError, OverflowError, sqlite3.IntegrityError) as exc:
            refused.add(lineno)
            fr.skipped += 1
            report.problems.append(f"{path}:{lineno}: not stored ({exc})")
    return refused
