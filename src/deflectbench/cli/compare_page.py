"""The files ``compare`` and ``leaderboard`` write: JSON rows, CSV (formula-safe) and one
self-contained HTML page in the report's style (every value escaped, no scripts, nothing
fetched: the same Content-Security-Policy as the report)."""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from deflectbench.cli.console import UserError

#: The report's look, cut to what a page of tables needs.
_STYLE = """
:root { --ink: #1f2328; --muted: #57606a; --line: #d0d7de; --bg-soft: #f6f8fa; --accent: #332288; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", "Liberation Sans", sans-serif; }
header, main { max-width: 1180px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 28px; border-bottom: 1px solid var(--line); }
h1 { font-size: 1.7rem; margin: 0 0 4px; }
h2 { font-size: 1.3rem; margin: 40px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
.sub { color: var(--muted); margin: 0 0 14px; }
.warn { background: #ffebe9; border: 1px solid #ff8182; padding: 10px 14px; border-radius: 6px; margin: 16px 0; }
.note { color: var(--muted); font-size: 0.92rem; }
.table-wrap { overflow-x: auto; margin: 12px 0 24px; }
table { border-collapse: collapse; font-size: 0.9rem; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: var(--bg-soft); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.marked td { background: #fff8c5; }
"""
_CSP = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; "
    "form-action 'none'"
)


def clean(value: Any) -> Any:
    """A value as JSON has it: NaN and numpy scalars to None or Python numbers."""
    if value is None:
        return None
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def pct(x: Any, signed: bool = False) -> str:
    """A fraction in percent (points when ``signed``); ``-`` for none."""
    x = clean(x)
    if x is None:
        return "-"
    return f"{100 * x:+.1f}" if signed else f"{100 * x:.1f}%"


def interval(lo: Any, hi: Any) -> str:
    lo, hi = clean(lo), clean(hi)
    if lo is None or hi is None:
        return "-"
    return f"{100 * lo:+.1f} to {100 * hi:+.1f}"


def p_text(p: Any) -> str:
    p = clean(p)
    if p is None:
        return "-"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def write_text(path: Path, text: str, what: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write {what} {path}: {exc.strerror or exc}") from exc


def write_json_rows(path: Path, data: Mapping[str, Any]) -> None:
    """``data`` as JSON to ``path`` (``-``: standard output)."""
    text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if str(path) == "-":
        import sys

        from deflectbench.escaping import json_line_safe

        sys.stdout.write(json_line_safe(text))  # the same JSON, no character a terminal acts on
        return
    write_text(path, text, "--json")


def write_csv_rows(path: Path, rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> None:
    """Rows as CSV, every text cell neutralised (a spreadsheet never runs a model's text)."""
    import csv
    import io

    from deflectbench.escaping import neutralise

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow(
            ["" if clean(r.get(c)) is None else neutralise(_cell_text(r.get(c))) for c in columns]
        )
    write_text(path, buf.getvalue(), "--csv")


def _cell_text(value: Any) -> Any:
    value = clean(value)
    if isinstance(value, list | tuple):
        return " to ".join("" if clean(v) is None else str(clean(v)) for v in value)
    return value


def html_table(
    header: Sequence[str],
    rows: Sequence[Sequence[Any]],
    numeric: Sequence[bool] | None = None,
    marked: Sequence[bool] | None = None,
) -> str:
    """One escaped table; ``marked`` rows are highlighted (other judges)."""
    numeric = numeric or [False] * len(header)
    e = html.escape
    head = "".join(
        f'<th scope="col"{" class=num" if n else ""}>{e(str(h))}</th>'
        for h, n in zip(header, numeric, strict=True)
    )
    body = []
    for i, row in enumerate(rows):
        cls = ' class="marked"' if marked and marked[i] else ""
        cells = "".join(
            f"<td{' class=num' if n else ''}>{e(str(c))}</td>"
            for c, n in zip(row, numeric, strict=True)
        )
        body.append(f"<tr{cls}>{cells}</tr>")
    return (
        f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def html_page(
    title: str, subtitle: str, sections: Sequence[tuple[str, str]], warnings: Sequence[str] = ()
) -> str:
    """The page: a title, a subtitle, warnings, then (heading, already-escaped body) sections."""
    e = html.escape
    warn = "".join(f'<p class="warn">{e(w)}</p>' for w in warnings)
    parts = "".join(f"<h2>{e(h)}</h2>{body}" for h, body in sections)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{e(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        f'<header><h1>{e(title)}</h1><p class="sub">{e(subtitle)}</p></header>\n'
        f"<main>{warn}{parts}</main>\n</body>\n</html>\n"
    )


def note(text: str) -> str:
    return f'<p class="note">{html.escape(text)}</p>'
