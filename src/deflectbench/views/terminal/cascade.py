"""``analyze``'s cascade block: what the numbers of a pack judged in cascade estimate, the calls
each judge made, and per model the expensive judges' consensus estimated over every answer
(PPI++) beside the cheap judge's rate and the sample's alone."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from deflectbench.views.format import DASH, ci, count, num
from deflectbench.views.terminal.labels import THIN, THIN_LINE
from deflectbench.views.terminal.style import titled_table
from deflectbench.vocab import OUTCOMES

if TYPE_CHECKING:
    from deflectbench.analysis.calibration.estimate import Estimate
    from deflectbench.analysis.summary.build import Summary

__all__ = ["cascade_terminal"]


def _shown(e: Estimate) -> str:
    if e.rate is None:
        return escape(e.note or DASH)
    lo, hi = e.ci95 if e.ci95 is not None else (float("nan"), float("nan"))
    return ci(e.rate, lo, hi) + (f" {THIN}" if e.flag else "")


def cascade_terminal(summary: Summary) -> list[Table | Text]:
    """The block (nothing for a pack not judged in cascade)."""
    c = summary.cascade
    if c is None:
        return []
    d = c.design
    calls = ", ".join(f"{escape(j)} {count(n)}" for j, n in sorted(c.calls.items()))
    out: list[Table | Text] = [
        Text(f"Cascaded judging: estimand {c.estimand}.", style="bold"),
        Text(
            f"The expensive judges saw {count(c.sampled)} of {count(c.answers)} answers "
            f"(seed {d.seed}, stratified {d.stratify}"
            + (f", sized for {d.target}" if d.target else f", share {num(d.default, 'g')}")
            + f"). Calls per judge: {calls}."
        ),
    ]
    out.extend(Text(f"note: {n}", style="yellow") for n in c.notes)
    t = titled_table("Expensive judges' consensus per model: cascaded (PPI++), cheap judge, sample")
    columns = ["model", "outcome", "cascaded", "lambda", "cheap (all)", "sample only", "n"]
    for col in [*columns, *(["truth (people)"] if c.truth else [])]:
        t.add_column(col, overflow="fold")
    flagged = False
    for i, g in enumerate(c.by_model):
        for k, outcome in enumerate(OUTCOMES):
            cascaded = g.estimates["ppi++"][k]
            flagged |= bool(cascaded.flag)
            truth = [_shown(c.truth[i][k])] if c.truth else []
            t.add_row(
                escape(" x ".join(g.group)),
                outcome,
                _shown(cascaded),
                num(cascaded.details.get("lam")),
                _shown(g.estimates["judged"][k]),
                _shown(g.estimates["labels"][k]),
                f"{count(g.labelled)}/{count(g.answers)}",
                *truth,
            )
    out.append(t)
    if flagged:
        out.append(Text(THIN_LINE, style="yellow"))
    return out
