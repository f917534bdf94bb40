"""How the report writes a number: percentages, CIs, p-values, counts and dollars.

Every number on the page goes through one of these, so a test can parse the page and match each
number with the analysis JSON after the same formatting. Missing values (None, NaN) print as an
en dash.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["DASH", "ci", "count", "isnan", "num", "pct", "pval", "usd"]

DASH = "–"


def isnan(x: Any) -> bool:
    """Missing: None or a float NaN."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def pct(x: Any, digits: int = 1) -> str:
    """A fraction as a percentage: ``0.2771`` -> ``27.7%``."""
    return DASH if isnan(x) else f"{100 * float(x):.{digits}f}%"


def ci(rate: Any, lo: Any, hi: Any) -> str:
    """``27.7% (21.7–32.3)``: a rate with its 95% CI in percent (the rate alone without a CI)."""
    if isnan(rate):
        return DASH
    if isnan(lo) or isnan(hi):
        return pct(rate)
    return f"{pct(rate)} ({100 * lo:.1f}–{100 * hi:.1f})"


def num(x: Any, fmt: str = ".2f") -> str:
    """A plain number (kappa, AC1, Cohen's h, X²) in ``fmt``."""
    return DASH if isnan(x) else format(x, fmt)


def pval(x: Any) -> str:
    """A p-value with three decimals, ``< 0.001`` below that."""
    if isnan(x):
        return DASH
    return "< 0.001" if x < 0.001 else f"{x:.3f}"


def count(n: Any) -> str:
    """A count with thousands separators: ``23,981``."""
    return DASH if isnan(n) else f"{int(n):,}"


def usd(x: Any) -> str:
    """Dollars with cents, ``unknown`` when no price is known."""
    return "unknown" if isnan(x) else f"${x:,.2f}"
