"""Release files (or folders of them, any layout, gzipped or not) into the store.

Robustness policy: a garbled, truncated or non-UTF-8 line, or a record with a missing or
inconsistent field, is reported as ``path:line: message`` and skipped; every good record of a
file is written in one transaction, so a file is either imported (minus its reported lines) or,
if the process dies, not at all: nothing is ever half-written.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from deflectbench.benchmark import Benchmark, default_benchmark
from deflectbench.conditions import RELEASE
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


@dataclass
class ImportReport:
    """What an import did, file by file, and every problem it skipped (a CLI prints both)."""

    files: list[FileReport] = field(default_factory=list)
    #: ``path:line: message`` for every line or file skipped.
    problems: list[str] = field(default_factory=list)

    def total(self, kind: str, what: str) -> int:
        """Sum of one count (``read``, ``imported``, ...) over the files of one kind."""
        return sum(getattr(f, what) for f in self.files if f.kind == kind)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        parts = []
        for kind, noun in (("generations", "generations"), ("evals", "judge records")):
            if any(f.kind == kind for f in self.files):
                parts.append(
                    f"{noun}: {self.total(kind, 'imported')} new, "
                    f"{self.total(kind, 'already_present')} already present, "
                    f"{self.total(kind, 'skipped')} skipped"
                )
        return "; ".join(parts) or "nothing imported"


# -- reading files ------------------------------------------------------------------------------


def _collect(paths: Sequence[Path | str]) -> list[Path]:
    """Files to read: given files as they are, folders searched for ``*.jsonl[.gz]``."""
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
                raise InteropError(f"{p}: no .jsonl files in this folder")
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
        if path.name.endswith(".gz"):
            data = gzip.decompress(data)
    except (OSError, EOFError) as exc:
        raise InteropError(
            f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})"
        ) from None
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
        return out
    for i, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            out.append((i, line.rstrip("\r"), None))
    return out


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
    for path in _collect(paths):
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
    records = []
    for lineno, line, problem in lines if lines is not None else _lines(path):
        fr.read += 1
        try:
            if line is None:
                raise RecordError(problem or "unreadable line")
            records.append(decode(decode_line(line), line))
        except RecordError as exc:
            fr.skipped += 1
            report.problems.append(f"{path}:{lineno}: {exc}")
    if not records:
        return
    counter = "generations" if kind == "generations" else "judgments"
    before = store.counts()[counter]
    if kind == "generations":
        store.add_generations(records)
    else:
        store.add_judgments(records)
    fr.imported = store.counts()[counter] - before
    fr.already_present = len(records) - fr.imported
