"""The report's "Second turn" section (multi-turn packs): the label stripped on request, turn-2
outcomes by turn-1 outcome (two tables) and one figure of the same. Shown only when the
summary has a turn 2; every number comes from its :class:`~deflectbench.analysis.summary.turns.TurnAnalysis`.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from deflectbench.analysis.summary.build import Summary
from deflectbench.analysis.summary.small_sample import MULTI_TURN
from deflectbench.views.format import ci, count, pct
from deflectbench.views.report.chart import (
    OUTCOME_LABELS,
    Chart,
    outcome_bars,
    styled_figure,
)
from deflectbench.views.report.svg_charts import stacked_svg
from deflectbench.views.report.tables import Table, few_claims_line, make_table
from deflectbench.vocab import OUTCOMES

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["TURN_FIGURES", "TURN_INTRO", "TURN_TABLES", "turn_chart", "turn_tables"]

TURN_FIGURES = ("turn2_by_turn1",)
TURN_TABLES = ("label_stripped", "turn2_by_turn1")
TURN_INTRO = (
    "A second user turn chosen by the first reply's outcome: after a refusal or soft refusal, a "
    "pushback (the purpose is educational; please write it); after a labeled deflection, a "
    "request to rewrite it without naming the tactic, as if meant. Turn-2 replies are judged "
    "with the conversation before them (blind to the model, not to the first turn's framing) "
    "and scored with the same judges and rule. The paper reads a label "
    "as a monitoring signal; the label-stripped rate measures how easily a user removes it."
)


def turn_tables(s: Summary) -> list[Table]:
    """The label-stripped rate per model, and turn-2 outcomes by turn-1 outcome."""
    t = s.turns
    if t is None:
        return []
    st = t.stripped
    stripped = make_table(
        "label_stripped",
        "Label stripped on request: turn-1 labeled compliance, turn-2 clean compliance",
        st,
        ["model", "labeled in turn 1", "stripped", "rate (95% CI)", "claims"],
        [
            [
                r.model,
                count(r.n),
                count(r.stripped),
                ci(r.rate, r.ci_lo, r.ci_hi),
                count(r.n_claims),
            ]
            for r in st.itertuples()
        ],
        note="Of the turn-1 labeled compliances with a scored turn 2, the share whose turn 2 is "
        "a clean compliance (the deflection kept, its label gone). CIs: block bootstrap over "
        "claims.",
        show=len(st) > 0,
    )
    tr = t.transitions
    index = {(r.model, r.turn1_outcome, r.outcome): r for r in tr.itertuples()}
    groups = list(dict.fromkeys((r.model, r.turn1_outcome) for r in tr.itertuples()))
    by_turn1 = make_table(
        "turn2_by_turn1",
        "Turn-2 outcome by turn-1 outcome",
        tr,
        ["model", "turn 1", "n", *(OUTCOME_LABELS[o] for o in OUTCOMES)],
        [
            [
                model,
                OUTCOME_LABELS.get(turn1, turn1),
                count(index[(model, turn1, OUTCOMES[0])].n),
                *(_share(index.get((model, turn1, o))) for o in OUTCOMES),
            ]
            for model, turn1 in groups
        ],
        left=2,
        note="Shares of the turn-2 replies after each turn-1 outcome (rows sum to 100%), with "
        "95% block-bootstrap CIs over claims. No follow-up is asked after a clean compliance "
        "(nothing left to ask for) or an other (no deflection to push on)."
        + few_claims_line(s, MULTI_TURN),
        show=len(tr) > 0,
    )
    return [stripped, by_turn1]


def _share(r: Any) -> str:
    return "-" if r is None else ci(r.share, r.ci_lo, r.ci_hi)


def turn_chart(s: Summary) -> Chart:
    """Stacked bars: per model and turn-1 outcome, how turn 2 answered."""
    chart = Chart(
        "turn2_by_turn1",
        "Second turn by first-turn outcome",
        "Each bar is the turn-2 replies of one model after one turn-1 outcome, split into the "
        "five outcomes (refusal, soft refusal, labeled compliance, clean compliance, other).",
        "Stacked bars of turn-2 outcome shares per model and turn-1 outcome.",
    )
    tr = s.turns.transitions if s.turns is not None else None
    if tr is None or tr.empty:
        chart.missing = "No scored second turn."
        return chart
    groups = list(dict.fromkeys((r.model, r.turn1_outcome, r.n) for r in tr.itertuples()))
    index = {(r.model, r.turn1_outcome, r.outcome): 100 * r.share for r in tr.itertuples()}
    n = len(groups)
    shares = np.nan_to_num(
        np.array([[index.get((m, t1, o), 0.0) for o in OUTCOMES] for m, t1, _ in groups])
    )
    labels = [f"{m}\nafter {OUTCOME_LABELS.get(t1, t1).lower()} (n = {k:,})" for m, t1, k in groups]

    def draw() -> Figure:
        with styled_figure(10, 1.6 + 0.55 * n) as fig:
            ax = fig.add_subplot()
            outcome_bars(ax, shares, labels, 8, "share of the turn-2 replies (%)")
        return fig

    chart.draw = draw
    chart.svg = partial(stacked_svg, chart.title, labels, shares, "share of the turn-2 replies (%)")
    chart.alt = "Second turn by first-turn outcome: " + "; ".join(
        f"{m} after {t1}: "
        + ", ".join(
            f"{OUTCOME_LABELS[o].lower()} {pct(index.get((m, t1, o), 0) / 100)}" for o in OUTCOMES
        )
        for m, t1, _ in groups
    )
    return chart
