"""Human labels in and out (CSV or JSON Lines), and the blind sample for annotators elsewhere.

Labels made on another machine, in a spreadsheet or on a crowd platform come in here; the
columns are documented in docs/annotation.md. A row names its generation portably, by
``benchmark, model, condition, claim_id, prompt_id, sample`` (the store's key; ``condition``
may be left out when the model has one condition with that cell), or by the opaque
``item_id`` of the blind sample (:func:`write_blind_sample`), which does not reveal the model.
An import is all or none: every row is checked first and any problem is reported as
``file:line: problem`` with nothing stored, so a file is fixed and imported again as a whole.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from deflectbench import gate
from deflectbench.benchmark import Benchmark
from deflectbench.escaping import FORMULA_START, neutralise
from deflectbench.gate import GateError
from deflectbench.interop.release import InteropError
from deflectbench.interop.tables import KEY_COLUMNS
from deflectbench.records import HumanLabel
from deflectbench.store import Store
from deflectbench.store.labels import LabelError, check_annotator, check_values
from deflectbench.vocab import FIELDS

__all__ = [
    "BLIND_COLUMNS",
    "KEY_COLUMNS",
    "LABEL_COLUMNS",
    "LabelImport",
    "check_output",
    "export_labels",
    "import_labels",
    "write_blind_sample",
]

#: An exported label: the generation's key, the annotator, the 8 fields, the annotator's doubt.
LABEL_COLUMNS: tuple[str, ...] = (
    *KEY_COLUMNS,
    "item_id",
    "annotator",
    *FIELDS,
    "unsure",
    "note",
    "source",
    "created_at",
    "updated_at",
)
#: The blind sample: what an annotator sees, and empty columns to fill in (imports back as is).
BLIND_COLUMNS: tuple[str, ...] = (
    "item_id",
    "position",
    "claim",
    "response",
    "annotator",
    *FIELDS,
    "unsure",
    "note",
)
#: The longest line a label file may hold (a label is a few hundred characters).
MAX_LINE_CHARS = 1_000_000
#: Most problems listed in one error message.
SHOWN = 10

_TRUE = {"1", "true", "yes", "y"}
_FALSE = {"0", "false", "no", "n"}


def _format(path: Path) -> str:
    name = path.name.lower().removesuffix(".gz")
    if name.endswith(".csv"):
        return "csv"
    if name.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    raise InteropError(f"{path}: give a .csv or .jsonl file (the format follows the extension)")


def check_output(path: Path) -> None:
    """Refuse an output file that cannot be written (wrong extension, missing folder) before
    any work is done: ``--export-sample`` draws and stores the sample first."""
    _format(path)
    if not path.parent.is_dir():
        raise InteropError(f"cannot write {path}: no folder {path.parent}; create it first")


def _write(path: Path, columns: tuple[str, ...], rows: list[dict[str, Any]]) -> None:
    fmt = _format(path)
    try:
        with path.open("w", encoding="utf-8", newline="") as fh:
            if fmt == "csv":
                writer = csv.DictWriter(fh, fieldnames=list(columns))
                writer.writeheader()
                for row in rows:
                    writer.writerow({k: neutralise(_cell(row.get(k))) for k in columns})
            else:
                for row in rows:
                    fh.write(json.dumps({k: row.get(k) for k in columns}, ensure_ascii=False))
                    fh.write("\n")
    except OSError as exc:
        raise InteropError(f"cannot write {path}: {exc.strerror or exc}") from None


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return int(value)
    return value


def export_labels(store: Store, path: Path, annotator: str | None = None) -> int:
    """Every human label (or one annotator's) to ``path`` (.csv or .jsonl); returns how many."""
    keys = {int(r["gen_id"]): r for r in store.generation_rows(columns=["gen_id", *KEY_COLUMNS])}
    items = {i.gen_id: i.item_id for i in store.annotation_sample()}
    rows = []
    for lab in store.labels(annotator):
        key = keys.get(lab.gen_id, {})
        rows.append(
            {k: key.get(k) for k in KEY_COLUMNS}
            | {"item_id": items.get(lab.gen_id), "annotator": lab.annotator}
            | lab.values
            | {
                "unsure": int(lab.unsure),
                "note": lab.note,
                "source": lab.source,
                "created_at": lab.created_at,
                "updated_at": lab.updated_at,
            }
        )
    _write(path, LABEL_COLUMNS, rows)
    return len(rows)


def write_blind_sample(store: Store, benchmark: Benchmark, path: Path) -> int:
    """The stored annotation sample as annotators elsewhere see it: claim and response under an
    opaque item id, never the model, template, framing or judges; returns how many items."""
    claims = {c.claim_id: c.text for c in benchmark.claims}
    rows = []
    for item in store.annotation_sample(benchmark.key):
        gen = store.generation_row(item.gen_id) or {}
        rows.append(
            {
                "item_id": item.item_id,
                "position": item.position,
                "claim": claims.get(gen.get("claim_id", ""), gen.get("claim_id")),
                "response": gen.get("response") or "",
            }
        )
    _write(path, BLIND_COLUMNS, rows)
    return len(rows)


# -- import ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelImport:
    """What an import stored: labels per annotator."""

    path: Path
    labels: int
    annotators: dict[str, int]


#: Every column an import understands: the label columns and the blind sample's (whose
#: ``position``, ``claim`` and ``response`` are read back but ignored).
KNOWN_COLUMNS = frozenset((*LABEL_COLUMNS, *BLIND_COLUMNS))


def _check_columns(path: Path, line: int, names: Iterable[Any]) -> None:
    """A misspelt column (``refusl``) would be silently dropped, and its labels with it."""
    unknown = [str(n) for n in names if n not in KNOWN_COLUMNS]
    if unknown:
        raise InteropError(
            f"{path}:{line}: unknown column {unknown[0]!r}; the columns are "
            f"{', '.join(LABEL_COLUMNS)} (docs/annotation.md)"
        )


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, row) of a CSV (header on line 1) or JSON Lines file; unknown columns refused."""
    fmt = _format(path)
    if not path.is_file():
        raise InteropError(f"no file {path}: give the path of a .csv or .jsonl file of labels")
    opener = _gzip_open if path.name.lower().endswith(".gz") else _text_open
    try:
        with opener(path) as fh:
            if fmt == "csv":
                reader = csv.DictReader(fh)
                _check_columns(path, 1, [n for n in reader.fieldnames or [] if n])
                for row in reader:
                    if None in row:  # more cells than the header names
                        raise InteropError(
                            f"{path}:{reader.line_num}: more cells than the header has columns; "
                            "quote cells that hold commas"
                        )
                    yield reader.line_num, {k: _unneutralise(k, v) for k, v in row.items()}
            else:
                for n, line in enumerate(fh, start=1):
                    if len(line) > MAX_LINE_CHARS:  # a label is a few hundred characters
                        raise InteropError(
                            f"{path}:{n}: a line of {len(line):,} characters, over the limit "
                            f"of {MAX_LINE_CHARS:,}; not a label file"
                        )
                    if not line.strip():
                        continue
                    try:
                        obj = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise InteropError(f"{path}:{n}: not JSON ({exc.msg})") from None
                    if not isinstance(obj, dict):
                        raise InteropError(f"{path}:{n}: each line must be a JSON object")
                    _check_columns(path, n, obj)
                    yield n, obj
    except UnicodeDecodeError:
        raise InteropError(f"{path}: not UTF-8 text; save it as UTF-8 and import again") from None
    except csv.Error as exc:  # e.g. a cell over the csv module's field size limit
        raise InteropError(f"{path}: not a readable CSV file ({exc})") from None
    except (OSError, EOFError) as exc:  # a damaged or truncated .gz
        raise InteropError(f"{path}: cannot read ({exc})") from None


def _unneutralise(column: str, value: Any) -> Any:
    """Undo the ``'`` that export put before a note starting like a formula, so a label file
    exported and imported again keeps its notes as they were."""
    if (
        column == "note"
        and isinstance(value, str)
        and value.startswith("'")
        and value[1:].startswith(FORMULA_START)
    ):
        return value[1:]
    return value


def _text_open(path: Path) -> Any:
    return path.open(encoding="utf-8-sig", newline="")


def _gzip_open(path: Path) -> Any:
    import gzip

    return gzip.open(path, "rt", encoding="utf-8-sig", newline="")


def _flag(value: Any, name: str) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float) and value in (0, 1):
        return int(value)
    text = str(value).strip().lower()
    if text in _TRUE:
        return 1
    if text in _FALSE:
        return 0
    raise LabelError(f"{name} is {value!r}: give 0, 1 (or yes/no, true/false) or leave it empty")


def _is_iso(text: str) -> bool:
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _blank(row: dict[str, Any]) -> bool:
    """No field, no doubt and no note: not a label (an untouched row of the blind sample)."""
    return all(
        str(row.get(k) if row.get(k) is not None else "").strip() == ""
        for k in (*FIELDS, "unsure", "note")
    )


class _Resolver:
    """Row -> gen_id, by item_id or by the generation's key columns."""

    def __init__(self, store: Store) -> None:
        self.items = {i.item_id: i.gen_id for i in store.annotation_sample()}
        self.keys: dict[tuple[str, ...], int] = {}
        self.without_condition: dict[tuple[str, ...], list[int]] = {}
        for r in store.generation_rows(columns=["gen_id", *KEY_COLUMNS]):
            key = tuple(str(r[k]) for k in KEY_COLUMNS)
            self.keys[key] = int(r["gen_id"])
            short = key[:2] + key[3:]
            self.without_condition.setdefault(short, []).append(int(r["gen_id"]))

    def __call__(self, row: dict[str, Any]) -> int:
        item = str(row.get("item_id") or "").strip()
        if item:
            if item not in self.items:
                raise LabelError(f"item_id {item!r} is not in this store's annotation sample")
            return self.items[item]
        need = [k for k in KEY_COLUMNS if k != "condition" and str(row.get(k) or "").strip() == ""]
        if need:
            raise LabelError(
                f"no item_id and no {need[0]}: name the generation by item_id or by "
                f"{', '.join(KEY_COLUMNS)}"
            )
        key = tuple(str(row.get(k) or "").strip() for k in KEY_COLUMNS)
        try:
            key = (*key[:5], str(gate.sample(row.get("sample"))))
        except GateError:
            raise LabelError(
                f"sample is {row.get('sample')!r}: give a whole number from 0 "
                f"to {gate.MAX_SAMPLE:,}"
            ) from None
        if key[2]:
            if key not in self.keys:
                raise LabelError(f"no generation {'/'.join(key)} in this store")
            return self.keys[key]
        found = self.without_condition.get(key[:2] + key[3:], [])
        if len(found) != 1:
            what = "no generation" if not found else f"{len(found)} generations (conditions)"
            raise LabelError(f"{what} match {'/'.join(k for k in key if k)}: give its condition")
        return found[0]


def import_labels(store: Store, path: Path, *, annotator: str | None = None) -> LabelImport:
    """Labels from ``path`` into the store (upserted per generation and annotator). The
    ``annotator`` column names who labelled each row; ``annotator`` fills it where it is empty.
    All or none: any bad row is an :class:`InteropError` listing the problems, nothing stored."""
    resolve = _Resolver(store)
    labels: list[HumanLabel] = []
    problems: list[str] = []
    seen: dict[tuple[int, str], int] = {}
    for line, row in _rows(path):
        if _blank(row):
            continue  # an item of the blind sample nobody labelled
        try:
            name = str(row.get("annotator") or annotator or "").strip()
            if not name:
                raise LabelError("no annotator: fill the annotator column or pass --annotator NAME")
            check_annotator(name)
            stamps = {k: str(row.get(k) or "").strip() for k in ("created_at", "updated_at")}
            for k, v in stamps.items():
                if v and not _is_iso(v):
                    raise LabelError(f"{k} is {v!r}: give an ISO time such as 2026-05-01T12:00:00Z")
            gid = resolve(row)
            values = check_values({f: _flag(row.get(f), f) for f in FIELDS})
            note = str(row.get("note") or "")
            gate.text(note, "note", limit=gate.MAX_NOTE_CHARS)
            unsure = _flag(row.get("unsure"), "unsure") or 0
            if (gid, name) in seen:
                raise LabelError(f"a second label by {name} of the item on line {seen[gid, name]}")
            seen[gid, name] = line
            labels.append(
                HumanLabel(
                    gen_id=gid,
                    annotator=name,
                    values=values,
                    unsure=bool(unsure),
                    note=note,
                    source=f"import:{path.name}",
                    created_at=stamps["created_at"],
                    updated_at=stamps["updated_at"],
                )
            )
        except (LabelError, GateError) as exc:
            problems.append(f"{path}:{line}: {exc}")
    if problems:
        more = f" (and {len(problems) - SHOWN} more)" if len(problems) > SHOWN else ""
        raise InteropError(
            f"nothing imported, {len(problems)} bad row(s): " + "; ".join(problems[:SHOWN]) + more
        )
    if not labels:
        raise InteropError(f"{path} holds no labels (an empty file, or only a header)")
    try:
        store.save_labels(labels)
    except LabelError as exc:
        raise InteropError(f"{path}: {exc}") from None
    per: dict[str, int] = {}
    for lab in labels:
        per[lab.annotator] = per.get(lab.annotator, 0) + 1
    return LabelImport(path, len(labels), dict(sorted(per.items())))
