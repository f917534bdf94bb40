"""One look of ``run --until``: each scope cell's interval at the look's level, and whether
every one has reached the target.

A cell's half-width is half its interval's width, (hi - lo) / 2 (the claim-block percentile
interval need not be symmetric about the rate). A cell resting on fewer than
:data:`~deflectbench.analysis.options.MIN_CI_CLAIMS` claims never meets the target (its
bootstrap interval is too rough to stop on), nor does one without an interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from deflectbench.analysis.options import MIN_CI_CLAIMS
from deflectbench.analysis.sequential.rule import UntilRule
from deflectbench.analysis.tables.rates import rates_with_ci
from deflectbench.vocab import OUTCOMES

__all__ = ["Look", "LookCell", "check_look"]


@dataclass(frozen=True)
class LookCell:
    """One cell's rate of one measure at a look."""

    key: tuple[str, ...]
    measure: str
    rate: float
    lo: float
    hi: float
    n_claims: int

    @property
    def halfwidth(self) -> float:
        return (self.hi - self.lo) / 2.0 if math.isfinite(self.hi - self.lo) else math.inf

    def met(self, target: float) -> bool:
        return self.n_claims >= MIN_CI_CLAIMS and self.halfwidth <= target


@dataclass(frozen=True)
class Look:
    """Look ``index`` (1-based) of ``rule.looks``, after ``claims`` claims: every cell."""

    rule: UntilRule
    index: int
    claims: int
    cells: tuple[LookCell, ...]

    @property
    def met(self) -> bool:
        """Every cell reached the target (a look with no cell has not)."""
        return bool(self.cells) and all(c.met(self.rule.halfwidth) for c in self.cells)

    @property
    def widest(self) -> LookCell | None:
        return max(self.cells, key=lambda c: c.halfwidth, default=None)

    def to_json(self) -> dict[str, Any]:
        w = self.widest
        return {
            "look": self.index,
            "claims": self.claims,
            "met": self.met,
            "max_halfwidth": None if w is None or not math.isfinite(w.halfwidth) else w.halfwidth,
            "widest": None if w is None else [*w.key, w.measure],
        }


def check_look(
    scored: pd.DataFrame,
    rule: UntilRule,
    *,
    index: int,
    claims: int,
    n_resamples: int = 1000,
    seed: int = 0,
) -> Look:
    """The look on ``scored`` (the analysis' scored table of the run's models and the claims
        run so far): each cell's rate of each of the rule's measures at the look's level (a measure
    that is an outcome of the ladder is that outcome's share, else the rubric field's rate)."""
    if not len(scored):
        return Look(rule, index, claims, ())
    rates = rates_with_ci(
        scored,
        by=list(rule.columns),
        n_resamples=n_resamples,
        seed=seed,
        level=rule.levels[index - 1],
    )
    kind = rates["measure"].map(lambda m: "outcome" if m in OUTCOMES else "field")
    keep = rates[rates["measure"].isin(rule.measures) & (rates["kind"] == kind)]
    cells = tuple(
        LookCell(
            tuple(str(r[c]) for c in rule.columns),
            str(r["measure"]),
            float(r["rate"]),
            float(r["ci_lo"]),
            float(r["ci_hi"]),
            int(r["n_clusters"]),
        )
        for r in keep.to_dict(orient="records")
    )
    return Look(rule, index, claims, cells)
