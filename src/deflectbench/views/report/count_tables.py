"""The report's counts and cost tables: what became of the generations at each step, per model
and per judge, and the tokens and dollars each model and judge used (from the Summary)."""

from __future__ import annotations

from dataclasses import asdict

import pandas as pd

from deflectbench.analysis.summary.build import Summary
from deflectbench.analysis.summary.counts import CostRow
from deflectbench.views.format import count, usd
from deflectbench.views.report.tables import Table, make_table

__all__ = ["count_tables"]

COST_COLUMNS = ["role", "name", "input_tokens", "output_tokens", "cost_usd", "price_known"]


def _cost_cell(row: CostRow) -> str:
    if not (row.input_tokens or row.output_tokens):
        return "– (no tokens recorded)"
    return usd(row.cost_usd) if row.price_known else "unknown (no price)"


def count_tables(s: Summary) -> list[Table]:
    """Counts at each step, generations per model, judgments per judge, tokens and cost."""
    c = s.steps
    steps = make_table(
        "counts",
        "Counts at each step",
        pd.DataFrame([asdict(x) for x in c.steps], columns=["step", "meaning", "n"]),
        ["step", "meaning", "n"],
        [[x.step, x.meaning, count(x.n)] for x in c.steps],
        left=2,
    )
    model_cols = ["model", "attempted", "errors", "valid", "scored"]
    by_model = make_table(
        "counts_by_model",
        "Generations per model",
        pd.DataFrame([asdict(x) for x in c.by_model], columns=model_cols),
        model_cols,
        [
            [x.model, *(count(getattr(x, k)) for k in ("attempted", "errors", "valid", "scored"))]
            for x in c.by_model
        ],
        show=bool(c.by_model),
    )
    jcols = ["judge", "used", "judged", "parsed", "parse_errors", "errors", "missing"]
    by_judge = make_table(
        "counts_by_judge",
        "Judgments per judge (on valid generations)",
        pd.DataFrame([asdict(x) for x in c.by_judge], columns=jcols),
        ["judge", "in consensus", "judged", "parsed", "parse errors", "request errors", "missing"],
        [
            [
                x.judge,
                "yes" if x.used else "no",
                *(
                    count(getattr(x, k))
                    for k in ("judged", "parsed", "parse_errors", "errors", "missing")
                ),
            ]
            for x in c.by_judge
        ],
        left=2,
        show=bool(c.by_judge),
    )
    rows = s.cost.rows
    note = "Tokens as reported by the providers and stored with each request."
    if s.cost.total_usd is not None:
        note += f" Known cost in total: {usd(s.cost.total_usd)}"
        unpriced = s.cost.unpriced
        note += f" (no price known for {', '.join(unpriced)})." if unpriced else "."
    elif rows:
        note += " No cost: no price is known for these models, or no tokens were recorded."
    cost = make_table(
        "cost",
        "Tokens and cost",
        pd.DataFrame([asdict(r) for r in rows], columns=COST_COLUMNS),
        ["role", "name", "input tokens", "output tokens", "cost"],
        [
            [r.role, r.name, count(r.input_tokens), count(r.output_tokens), _cost_cell(r)]
            for r in rows
        ],
        left=2,
        note=note,
        show=bool(rows),
    )
    return [steps, by_model, by_judge, cost]
