"""The files ``compare`` and ``leaderboard`` write: JSON (``-``: standard output), CSV (every
text cell formula-safe) and any text (a page, a card); a file that cannot be written is one
line. What goes in them is the results' (``to_json``) and the views' (:mod:`deflectbench.views`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from deflectbench.cli.console import UserError


def write_text(path: Path, text: str, what: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write {what} {path}: {exc.strerror or exc}") from exc


def write_json_rows(path: Path, data: Mapping[str, Any]) -> None:
    """``data`` as JSON to ``path`` (``-``: standard output)."""
    import json
    import sys

    from deflectbench.escaping import json_line_safe

    text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if str(path) == "-":
        sys.stdout.write(json_line_safe(text))  # the same JSON, no character a terminal acts on
        return
    write_text(path, text, "--json")


def write_csv_rows(path: Path, rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> None:
    """JSON rows as CSV (a pair as ``lo to hi``), every text cell neutralised (a spreadsheet
    never runs a model's text)."""
    import csv
    import io

    from deflectbench.escaping import neutralise

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow([_cell(r[c], neutralise) for c in columns])
    write_text(path, buf.getvalue(), "--csv")


def _cell(value: Any, neutralise: Any) -> Any:
    if isinstance(value, list):
        value = " to ".join("" if v is None else str(v) for v in value)
    return "" if value is None else neutralise(value)
