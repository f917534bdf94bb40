"""How every view writes a number: percentages, points, intervals, p-values, counts and dollars.

The one set of formatters: the terminal tables, the HTML and Markdown report, the compare and
leaderboard pages and the Hugging Face card all write numbers through these, so a number reads
the same wherever it is shown and a test can parse a page and match each number with the JSON
after the same formatting. Missing values (None, NaN, pandas' NA) print as ``missing`` (an en
dash unless a view asks for another mark).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "DASH",
    "ci",
    "ci_lines",
    "compact",
    "count",
    "interval",
    "isnan",
    "num",
    "pct",
    "points",
    "pval",
    "usd",
]

DASH = "–"


def isnan(x: Any) -> bool:
    """Missing: None, a float NaN, or pandas' NA/NaT (anything that is not equal to itself)."""
    if x is None:
        return True
    try:
        return bool(x != x)
    except (TypeError, ValueError):  # pandas.NA refuses bool()
        return True


def pct(
    x: Any,
    digits: int = 1,
    *,
    missing: str = DASH,
    sign: bool = True,
    plain_zero: bool = False,
    scale: float = 100,
) -> str:
    """A fraction as a percentage: ``0.2771`` -> ``27.7%`` (``27.7`` when not ``sign``);
    ``plain_zero`` writes a negative value that rounds to zero as ``0.0``, not ``-0.0``;
    ``scale=1`` takes a value already in percent (a figure's label: ``27.71`` -> ``27.7%``)."""
    if isnan(x):
        return missing
    text = f"{scale * float(x):.{digits}f}"
    if plain_zero and text.startswith("-") and float(text) == 0:
        text = text[1:]
    return text + ("%" if sign else "")


def points(x: Any, digits: int = 1, *, missing: str = DASH) -> str:
    """A difference of fractions in signed percentage points: ``0.012`` -> ``+1.2``."""
    return missing if isnan(x) else f"{100 * float(x):+.{digits}f}"


def interval(
    lo: Any,
    hi: Any,
    *,
    sep: str = "–",
    digits: int = 1,
    signed: bool = False,
    sign: bool = False,
    missing: str = DASH,
) -> str:
    """An interval of fractions in percent: ``21.7–32.3`` (``sep`` between the ends; ``signed``
    writes each end as points, ``+2.9``; ``sign`` adds ``%`` to each end); ``missing`` when an
    end is missing."""
    if isnan(lo) or isnan(hi):
        return missing
    if signed:
        return f"{points(lo, digits)}{sep}{points(hi, digits)}"
    return f"{pct(lo, digits, sign=sign)}{sep}{pct(hi, digits, sign=sign)}"


def ci(rate: Any, lo: Any, hi: Any) -> str:
    """``27.7% (21.7–32.3)``: a rate with its 95% CI in percent (the rate alone without a CI)."""
    if isnan(rate):
        return DASH
    if isnan(lo) or isnan(hi):
        return pct(rate)
    return f"{pct(rate)} ({interval(lo, hi)})"


def ci_lines(rate: Any, lo: Any, hi: Any) -> str:
    """A rate over its CI on a second, dimmed line (rich markup): narrow enough for an
    80-column terminal."""
    if isnan(rate):
        return DASH
    if isnan(lo) or isnan(hi):
        return pct(rate)
    return f"{pct(rate)}\n[dim]{interval(lo, hi)}[/]"


def num(x: Any, fmt: str = ".2f", *, missing: str = DASH, zero_below: float = 0.0) -> str:
    """A plain number (kappa, AC1, Cohen's h, X²) in ``fmt``; one smaller in size than
    ``zero_below`` is written as 0 (so a tiny move never reads ``-0.00``)."""
    if isnan(x):
        return missing
    return format(0.0 if zero_below and abs(x) < zero_below else x, fmt)


def pval(x: Any, *, missing: str = DASH) -> str:
    """A p-value with three decimals, ``< 0.001`` below that."""
    if isnan(x):
        return missing
    return "< 0.001" if x < 0.001 else f"{x:.3f}"


def count(n: Any) -> str:
    """A count with thousands separators: ``23,981``."""
    return DASH if isnan(n) else f"{int(n):,}"


def usd(x: Any) -> str:
    """Dollars with cents, ``unknown`` when no price is known."""
    return "unknown" if isnan(x) else f"${x:,.2f}"


def compact(n: float) -> str:
    """A large number in three characters or so: ``1.2M``, ``34.5k``, ``812``."""
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return f"{n:.0f}"
