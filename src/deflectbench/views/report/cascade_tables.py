"""The report's cascade section (a pack judged in cascade only): the estimand in words, the calls
each judge made, and per model and outcome the expensive judges' consensus estimated by PPI++
beside the cheap judge's rate and the sample's (and the truth with people's labels)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from deflectbench.views.format import DASH, ci, count, num
from deflectbench.views.report.tables import Table, make_table
from deflectbench.vocab import OUTCOMES

if TYPE_CHECKING:
    from deflectbench.analysis.calibration.estimate import Estimate
    from deflectbench.analysis.summary.build import Summary

__all__ = ["CASCADE_TABLES", "cascade_intro", "cascade_tables"]

CASCADE_TABLES = ["cascade", "cascade_calls"]


def _shown(e: Estimate) -> str:
    if e.rate is None:
        return e.note or DASH
    lo, hi = e.ci95 if e.ci95 is not None else (float("nan"), float("nan"))
    return ci(e.rate, lo, hi) + (" †" if e.flag else "")


def _row(e: Estimate, prefix: str) -> dict[str, Any]:
    lo, hi = e.ci95 if e.ci95 is not None else (None, None)
    return {prefix: e.rate, f"{prefix}_lo": lo, f"{prefix}_hi": hi}


def cascade_intro(s: Summary) -> str:
    c = s.cascade
    if c is None:
        return ""
    return (
        f"Estimand: {c.estimand}. The expensive judges saw {count(c.sampled)} of "
        f"{count(c.answers)} answers. The other sections score only answers every judge in "
        "the consensus scored (here: the sample). † thin sample: the cheap judge never "
        "disagreed with the consensus there; the interval is widened to the exact bound."
    )


def cascade_tables(s: Summary) -> list[Table]:
    """The section's two tables (none for a pack not judged in cascade)."""
    c = s.cascade
    if c is None:
        return []
    records, rows = [], []
    for i, g in enumerate(c.by_model):
        for k, outcome in enumerate(OUTCOMES):
            e = {m: g.estimates[m][k] for m in ("ppi++", "judged", "labels")}
            truth = c.truth[i][k] if c.truth else None
            records.append(
                {
                    "model": g.group[0],
                    "outcome": outcome,
                    **_row(e["ppi++"], "cascaded"),
                    "lambda": e["ppi++"].details.get("lam"),
                    **_row(e["judged"], "cheap"),
                    **_row(e["labels"], "sample"),
                    "with_consensus": g.labelled,
                    "answers": g.answers,
                    **(_row(truth, "truth") if truth is not None else {}),
                }
            )
            cells = [
                g.group[0],
                outcome,
                _shown(e["ppi++"]),
                num(e["ppi++"].details.get("lam")),
                _shown(e["judged"]),
                _shown(e["labels"]),
                f"{count(g.labelled)}/{count(g.answers)}",
            ]
            rows.append([*cells, *([_shown(truth)] if truth is not None else [])])
    header = ["model", "outcome", "cascaded (PPI++)", "lambda", "cheap judge", "sample only", "n"]
    header += ["truth (people)"] if c.truth else []
    main = make_table(
        "cascade",
        "The expensive judges' consensus over every answer",
        pd.DataFrame(records),
        header,
        rows,
        left=2,
    )
    calls = sorted(c.calls.items())
    frame = pd.DataFrame([{"judge": j, "calls": n} for j, n in calls])
    role = {c.design.cheap: "cheap (every answer)"} | {
        j: "expensive (sample)" for j in c.design.expensive
    }
    table = make_table(
        "cascade_calls",
        "Calls per judge",
        frame,
        ["judge", "role", "calls"],
        [[j, role.get(j, "other"), count(n)] for j, n in calls],
        left=2,
    )
    return [main, table]
