"""Untrusted text made safe where it is written: model replies in CSV cells and on terminals.

Ground floor (imports nothing of the package), so the exporter, the report and the commands
share one rule. HTML escaping is Jinja's autoescape, in the report's templates.
"""

from __future__ import annotations

from typing import Any

#: A spreadsheet runs a cell starting with one of these as a formula (CSV injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value: Any) -> Any:
    """Text that a spreadsheet would run as a formula, prefixed with ``'`` so it shows as text
    (model replies are untrusted: ``=HYPERLINK(...)`` must not become a live link). Numbers,
    including negative ones, are left as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def csv_safe(frame: Any) -> Any:
    """A copy of a DataFrame with every text cell neutralised (numeric, boolean and time
    columns are left alone; text columns may be ``object`` or pandas' string dtype).

    The same result as ``frame.apply(lambda col: col.map(neutralise))`` over the non-numeric
    columns, without its cost: a string-dtype column holding some text is scanned once and
    mapped only when one of its cells starts like a formula (mapping it would change nothing
    else: the same dtype, the same missing values). Any other column is mapped as before,
    since the map may also change its dtype: an ``object`` column of numbers becomes
    ``float64`` (which the CSV then writes as ``1.0``), and so does a string column with no
    text at all."""
    from pandas import StringDtype  # lazily: the ground floor imports no pandas

    if not all(frame.shape):  # what DataFrame.apply returns for an empty frame
        return frame.copy()
    out = frame.copy(deep=False)
    for i, dtype in enumerate(frame.dtypes):
        if getattr(dtype, "kind", "O") in "biufcmM":
            continue
        col = frame.iloc[:, i]
        if isinstance(dtype, StringDtype):
            texts = [v for v in col.tolist() if isinstance(v, str)]
            if texts and not any(v.startswith(FORMULA_START) for v in texts):
                continue
        out.isetitem(i, col.map(neutralise))
    return out


#: Characters a terminal acts on rather than shows: C0 controls (ESC starts a sequence that can
#: retitle the window, clear the screen or recolour what follows), DEL, C1 controls (``\x9b``
#: is a one-byte CSI) and the bidirectional overrides that reorder what is shown. Tab and
#: newline are left to the caller's layout.
_TERMINAL_ACTIVE = frozenset(
    [
        *range(0x00, 0x09),
        *range(0x0B, 0x20),
        0x7F,
        *range(0x80, 0xA0),
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
    ]
)
_TERMINAL_ESCAPES = {c: (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in _TERMINAL_ACTIVE}
#: The same characters as JSON escapes (valid inside a JSON string, where they can only be).
_JSON_ESCAPES = {c: f"\\u{c:04x}" for c in _TERMINAL_ACTIVE}


def terminal_safe(text: str) -> str:
    """Model or file text as a terminal shows it, never acts on it: each control character
    written as a visible escape (``\\x1b``), every other character as it is."""
    return text.translate(_TERMINAL_ESCAPES)


def json_line_safe(line: str) -> str:
    """A JSON line (``json.dumps(..., ensure_ascii=False)``, which leaves DEL, C1 controls and
    bidi overrides raw) with those characters as ``\\uXXXX`` escapes: the same JSON value, safe
    to print."""
    return line.translate(_JSON_ESCAPES)
