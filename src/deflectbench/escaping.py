"""Untrusted text made safe where it is written: model replies in CSV cells.

Ground floor (imports nothing of the package), so the exporter and the report share one rule.
HTML escaping is Jinja's autoescape, in the report's templates.
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
    columns are left alone; text columns may be ``object`` or pandas' string dtype)."""
    return frame.apply(
        lambda col: col if getattr(col.dtype, "kind", "O") in "biufcmM" else col.map(neutralise)
    )
