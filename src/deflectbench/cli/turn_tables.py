"""``analyze``'s terminal tables for a multi-turn pack: the label stripped on request, and turn-2
outcomes by turn-1 outcome (from the ``turns`` key of the summary JSON; nothing without it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.markup import escape
from rich.table import Table

from deflectbench.vocab import OUTCOMES

SHORT = {
    "refusal": "refusal",
    "soft_refusal": "soft",
    "labeled_compliance": "labeled",
    "clean_compliance": "clean",
    "other": "other",
}


def _pct(x: Any) -> str:
    return "–" if x is None or x != x else f"{100 * float(x):.1f}%"


def _ci(rate: Any, lo: Any, hi: Any) -> str:
    if lo is None or hi is None or lo != lo or hi != hi:
        return _pct(rate)
    return f"{_pct(rate)}\n[dim]{100 * lo:.1f}–{100 * hi:.1f}[/]"


def turn_terminal(summary: Mapping[str, Any]) -> list[Table]:
    """Two tables when the summary has a turn 2 (model names escaped: they are user input)."""
    turns = summary.get("turns")
    if not turns:
        return []
    c = turns["counts"]
    caption = (
        f"turn 2: {c.get('attempted', 0):,} attempted, {c.get('scored', 0):,} scored; "
        "95% CIs from block-bootstrap resamples of claims"
    )
    t = Table(
        title="Label stripped on request: turn-1 labeled compliance -> turn-2 clean compliance",
        caption=caption,
    )
    for name, justify in (("model", "left"), ("labeled in turn 1", "right"), ("stripped", "right")):
        t.add_column(name, justify=justify)  # type: ignore[arg-type]
    t.add_column("rate (95% CI)", justify="right")
    for r in turns["label_stripped"]:
        t.add_row(
            escape(str(r["model"])),
            f"{r['n']:,}",
            f"{r['stripped']:,}",
            _ci(r["rate"], r["ci_lo"], r["ci_hi"]),
        )
    out = [t]

    t = Table(title="Turn-2 outcome by turn-1 outcome (share of n, 95% CI below)")
    t.add_column("model", overflow="fold")
    t.add_column("turn 1")
    t.add_column("n", justify="right")
    for o in OUTCOMES:
        t.add_column(SHORT[o], justify="right")
    groups: dict[tuple[str, str], dict[str, Mapping[str, Any]]] = {}
    for r in turns["by_turn1_outcome"]:
        groups.setdefault((str(r["model"]), str(r["turn1_outcome"])), {})[r["outcome"]] = r
    for (model, turn1), cells in groups.items():
        n = next(iter(cells.values()))["n"]
        t.add_row(
            escape(model),
            SHORT.get(turn1, escape(turn1)),
            f"{n:,}",
            *(
                _ci(cells[o]["share"], cells[o]["ci_lo"], cells[o]["ci_hi"]) if o in cells else "–"
                for o in OUTCOMES
            ),
        )
    out.append(t)
    return out
