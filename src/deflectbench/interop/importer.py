"""Release files (or folders of them, any layout, gzipped or not) into the store.

Robustness policy: a garbled, truncated or non-UTF-8 line, or a record with a missing or
inconsistent field, is reported as ``path:line: message`` and skipped; every good record of a
file is written in one transaction, so a file is either imported (minus its reported lines) or,
if the process dies, not at all: nothing is ever half-written.
"""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from deflectbench import gate
from deflectbench.benchmark import Benchmark, default_benchmark
from deflectbench.conditions import RELEASE
from deflectbench.gate import GateError
from deflectbench.interop.decode import decode_eval, decode_generation, decode_line
from deflectbench.interop.release import Catalog, InteropError, RecordError
from deflectbench.store import Store

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


def _lines(path: Path) -> list[Line]:
    """Each non-blank line; text is None when the line is not UTF-8. A bad byte costs its own
    line only."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InteropError(f"{path}: cannot read ({exc.strerror or exc})") from None
    truncated = None
    if path.name.endswith(".gz"):
        data, truncated = _gunzip(path, data)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    out: list[Line] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        for i, raw in enumerate(data.split(b"\n"), start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                out.append(
                    (i, None, f"not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})")
                )
                continue
            if line.strip():
                out.append((i, line.rstrip("\r"), None))
        return _mark_truncated(out, truncated, data.endswith(b"\n"))
    for i, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            out.append((i, line.rstrip("\r"), None))
    return _mark_truncated(out, truncated, data.endswith(b"\n"))


#: The most a compressed file may expand to (a release file is tens of MB).
MAX_GUNZIPPED_BYTES = 4 * 1024**3


def _gunzip(path: Path, data: bytes) -> tuple[bytes, str | None]:
    """The decompressed bytes, as far as they go: a truncated or damaged archive keeps every
    complete line before the damage (the last, partial one is reported, not lost silently)."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, MAX_GUNZIPPED_BYTES)
    except zlib.error as exc:
        return b"", f"not a readable gzip file ({exc})"
    if inflater.unconsumed_tail:
        raise InteropError(
            f"{path}: expands to more than {MAX_GUNZIPPED_BYTES:,} bytes; not a release file"
        )
    if not inflater.eof:
        return out, "the gzip file is truncated"
    return out, None


def _mark_truncated(lines: list[Line], truncated: str | None, whole_lines: bool) -> list[Line]:
    """When the archive ended early, a partial last line is a problem, not a record; the
    truncation itself is reported either way."""
    if truncated is None:
        return lines
    if not lines:
        return [(1, None, truncated)]
    last = lines[-1][0]
    if whole_lines:
        return [*lines, (last + 1, None, truncated)]
    return [*lines[:-1], (last, None, f"{truncated}: the last line is incomplete")]


def _kind_of(path: Path, lines: list[Line] | None) -> Kind | None:
    """By name prefix; for an unusual name, by the first record's keys."""
    name = path.name.lower()
    if name.startswith("generations"):
        return "generations"
    if name.startswith("evals"):
        return "evals"
    for _, line, _problem in lines or ():
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
    return None


def iter_release_records(path: Path) -> Iterator[dict[str, Any]]:
    """The records of one release file, for tests and quick looks (raises on a bad line)."""
    for lineno, line, problem in _lines(Path(path)):
        if line is None:
            raise InteropError(f"{path}:{lineno}: {problem}")
        try:
            yield decode_line(line)
        except RecordError as exc:
            raise InteropError(f"{path}:{lineno}: {exc}") from None


# -- import -------------------------------------------------------------------------------------


def import_paths(
    store: Store, paths: Sequence[Path | str], benchmark: Benchmark | None = None
) -> ImportReport:
    """Import release files (or folders of them, searched recursively) into ``store``.

    All generation files first, then all judge files, so a judge record finds its generation
    whatever the file order. Importing the same files again adds nothing. Problems are reported
    per line and skipped; the good records of each file are written in one transaction.
    """
    catalog = Catalog(benchmark or default_benchmark())
    report = ImportReport()
    queued: dict[Kind, list[tuple[Path, list[Line] | None]]] = {"generations": [], "evals": []}
    for path in collect_files(paths):
        lines = None if path.name.lower().startswith(("generations", "evals")) else _lines(path)
        kind = _kind_of(path, lines)
        if kind is None:
            report.problems.append(
                f"{path}: skipped: not a generations_ or evals_ file (name and first record do not "
                "say; a generation has 'model' and 'response', a judge record 'judge_model')"
            )
            continue
        queued[kind].append((path, lines))
    for path, lines in queued["generations"]:
        _import_file(
            store,
            path,
            "generations",
            lines,
            lambda obj, line: decode_generation(obj, line, catalog),
            report,
        )
    if queued["evals"]:
        ids = store.generation_ids(catalog.key, RELEASE)
        for path, lines in queued["evals"]:
            _import_file(
                store,
                path,
                "evals",
                lines,
                lambda obj, line: decode_eval(obj, line, catalog, ids),
                report,
            )
    return report


def _identity(kind: Kind, rec: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """A record's key in the store and the content a duplicate must repeat exactly."""
    if kind == "generations":
        return (rec.model, rec.claim_id, rec.prompt_id, rec.sample), (rec.response, rec.error)
    return (rec.gen_id, rec.judge), (rec.raw, rec.error)


def _import_file(
    store: Store,
    path: Path,
    kind: Kind,
    lines: list[Line] | None,
    decode: Callable[[dict[str, Any], str], Any],
    report: ImportReport,
) -> None:
    fr = FileReport(path=path, kind=kind)
    report.files.append(fr)
    decoded: list[tuple[int, Any, str]] = []
    id_key = "gen_id" if kind == "generations" else "eval_id"
    for lineno, line, problem in lines if lines is not None else _lines(path):
        fr.read += 1
        try:
            if line is None:
                raise RecordError(problem or "unreadable line")
            obj = decode_line(line)
            decoded.append((lineno, decode(obj, line), str(obj.get(id_key))))
        except (RecordError, GateError) as exc:
            fr.skipped += 1
            report.problems.append(f"{path}:{lineno}: {exc}")
    if not decoded:
        return
    records = _without_conflicts(store, path, kind, decoded, fr, report)
    counter = "generations" if kind == "generations" else "judgments"
    before = store.counts()[counter]
    refused = _write(store, path, kind, records, fr, report)
    fr.imported = store.counts()[counter] - before
    fr.already_present = len(records) - refused - fr.imported


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
    fr: FileReport,
    report: ImportReport,
) -> list[tuple[int, Any]]:
    """Drop (and report, line by line with both ids) records whose id is already taken by a
    record with other content, in the store or earlier in the same file (the gate's rule): a
    conflicting duplicate never replaces a stored result, and never passes for "already
    present"."""
    if kind == "generations":
        first = decoded[0][1]
        rows = store.generation_contents(first.benchmark, first.condition)
    else:
        rows = store.judgment_contents()
    duplicates = gate.Duplicates(stored_contents(rows))
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
) -> int:
    """One transaction for the file; if the store refuses a record, record by record, so one
    bad record costs its own line and never the file. Returns how many were refused."""
    add_many = store.add_generations if kind == "generations" else store.add_judgments
    add_one = store.add_generation if kind == "generations" else store.add_judgment
    try:
        add_many(rec for _, rec in records)
        return 0
    except (ValueError, OverflowError, sqlite3.IntegrityError):
        pass
    refused = 0
    for lineno, rec in records:
        try:
            add_one(rec)
        except (ValueError, OverflowError, sqlite3.IntegrityError) as exc:
            refused += 1
            fr.skipped += 1
            report.problems.append(f"{path}:{lineno}: not stored ({exc})")
    return refused
