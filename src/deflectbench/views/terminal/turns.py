"""``analyze``'s terminal tables for a multi-turn pack, from the typed
:class:`~deflectbench.analysis.summary.turns.TurnAnalysis`: the label stripped on request, and
turn-2 outcomes by turn-1 outcome."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table

from deflectbench.views.format import DASH, ci_lines
from deflectbench.vocab import OUTCOMES

if TYPE_CHECKING:
    from deflectbench.analysis.summary.turns import TurnAnalysis

__all__ = ["SHORT", "turn_terminal"]

SHORT = {
    "refusal": "refusal",
    "soft_refusal": "soft",
    "labeled_compliance": "labeled",
    "clean_compliance": "clean",
    "other": "other",
}


def _stripped(turns: TurnAnalysis) -> Table:
    """Per model: turn-1 labeled compliance that became clean compliance when asked."""
    caption = (
        f"turn 2: {turns.n_attempted:,} attempted, {turns.n_scored:,} scored; "
        "95% CIs from block-bootstrap resamples of claims"
    )
    t = Table(
        title="Label stripped on request: turn-1 labeled compliance -> turn-2 clean compliance",
        caption=caption,
    )
    t.add_column("model", justify="left")
    t.add_column("labeled in turn 1", justify="right")
    t.add_column("stripped", justify="right")
    t.add_column("rate (95% CI)", justify="right")
    for r in turns.stripped.itertuples(index=False):
        t.add_row(
            escape(str(r.model)), f"{r.n:,}", f"{r.stripped:,}", ci_lines(r.rate, r.ci_lo, r.ci_hi)
        )
    return t


def _transitions(turns: TurnAnalysis) -> Table:
    """Per model and turn-1 outcome, each turn-2 outcome's share with its CI."""
    t = Table(title="Turn-2 outcome by turn-1 outcome (share of n, 95% CI below)")
    t.add_column("model", overflow="fold")
    t.add_column("turn 1")
    t.add_column("n", justify="right")
    for o in OUTCOMES:
        t.add_column(SHORT[o], justify="right")
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for r in turns.transitions.itertuples(index=False):
        groups.setdefault((str(r.model), str(r.turn1_outcome)), {})[r.outcome] = r
    for (model, turn1), cells in groups.items():
        t.add_row(
            escape(model),
            SHORT.get(turn1, escape(turn1)),
            f"{next(iter(cells.values())).n:,}",
            *(
                ci_lines(cells[o].share, cells[o].ci_lo, cells[o].ci_hi) if o in cells else DASH
                for o in OUTCOMES
            ),
        )
    return t


def turn_terminal(turns: TurnAnalysis | None) -> list[Table]:
    """Two tables when the summary has a turn 2 (model names escaped: they are user input)."""
    return [] if turns is None else [_stripped(turns), _transitions(turns)]
