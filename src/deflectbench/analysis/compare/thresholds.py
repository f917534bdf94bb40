"""The regression gate's thresholds: ``--fail-if "refusal < -5pp"``, ``"clean_compliance >
+3pp@coach"``, checked against a comparison table.

A threshold fails only when the difference's whole CI lies beyond it (below for ``<``, above
for ``>``): a point estimate past the line with an interval that crosses it is noise the gate
cannot tell from no change, so it passes (and a difference without an interval cannot fail).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from deflectbench.analysis.compare.table import MEASURES
from deflectbench.errors import ConfigError, did_you_mean
from deflectbench.vocab import FIELDS, FRAMINGS, OUTCOMES

__all__ = [
    "GATE_FAILED",
    "Failure",
    "Threshold",
    "ThresholdError",
    "check_thresholds",
    "parse_threshold",
]

#: The exit code of a failed gate (README: exit codes).
GATE_FAILED = 6

_PATTERN = re.compile(
    r"^\s*(?:(outcome|field):)?([A-Za-z_]+)\s*([<>])\s*([+-]?\d+(?:\.\d+)?)\s*pp"
    r"\s*(?:@\s*([A-Za-z0-9_.\-]+))?\s*$"
)
SYNTAX = "MEASURE < -5pp or MEASURE > +3pp, optionally @FRAMING or @TEMPLATE"


class ThresholdError(ConfigError):
    """A ``--fail-if`` that cannot be read, or names nothing in the comparison."""


@dataclass(frozen=True)
class Threshold:
    """One ``--fail-if``: a measure (``kind`` outcome or field), ``<`` or ``>``, a limit in
    percentage points, and where (``scope``: None overall, else a framing or a template)."""

    text: str
    kind: str
    measure: str
    op: str
    points: float
    scope: str | None = None

    @property
    def limit(self) -> float:
        return self.points / 100.0


def parse_threshold(text: str) -> Threshold:
    """``[outcome:|field:]MEASURE (<|>) [+-]Npp[@WHERE]``; an outcome's name means the outcome
    (``field:soft_refusal`` names the field where the two share a name)."""
    m = _PATTERN.match(text)
    if not m:
        raise ThresholdError(f"--fail-if {text!r}: expected {SYNTAX}")
    kind, measure, op, number, scope = m.groups()
    if kind is None:
        kind = "outcome" if measure in OUTCOMES else "field" if measure in FIELDS else None
    names = OUTCOMES if kind == "outcome" else FIELDS if kind == "field" else MEASURES
    if kind is None or measure not in names:
        raise ThresholdError(
            f"--fail-if {text!r}: unknown measure {measure!r}{did_you_mean(measure, names)}; "
            f"outcomes: {', '.join(OUTCOMES)}; fields: {', '.join(FIELDS)}"
        )
    return Threshold(text.strip(), kind, measure, op, float(number), scope)


@dataclass(frozen=True)
class Failure:
    """A threshold a difference's CI lies wholly beyond."""

    threshold: Threshold
    model_a: str
    model_b: str
    diff: float
    ci_lo: float
    ci_hi: float

    def line(self) -> str:
        t = self.threshold
        where = f"@{t.scope}" if t.scope else "overall"
        side = "below" if t.op == "<" else "above"
        return (
            f"fail: {t.measure} {where}, {self.model_b} vs baseline {self.model_a}: "
            f"{self.diff * 100:+.1f} pp (95% CI {self.ci_lo * 100:+.1f} to {self.ci_hi * 100:+.1f})"
            f" lies wholly {side} {t.points:+g} pp (--fail-if {t.text!r})"
        )


def _rows(table: pd.DataFrame, t: Threshold) -> pd.DataFrame:
    mine = table[(table["kind"] == t.kind) & (table["measure"] == t.measure) & ~table["corrected"]]
    if t.scope is None:
        return mine[mine["scope"] == "overall"]
    if t.scope in FRAMINGS:
        return mine[(mine["scope"] == "framing") & (mine["framing"] == t.scope)]
    return mine[(mine["scope"] == "template") & (mine["template"] == t.scope)]


def check_thresholds(table: pd.DataFrame, thresholds: Sequence[Threshold]) -> list[Failure]:
    """Every (threshold, model pair) whose CI lies wholly beyond the threshold. A scope that
    matches no row of the table is a :class:`ThresholdError` (a typo must not pass the gate)."""
    failures: list[Failure] = []
    for t in thresholds:
        rows = _rows(table, t)
        if rows.empty:
            templates = sorted(table["template"].dropna().unique().tolist())
            raise ThresholdError(
                f"--fail-if {t.text!r}: nothing compared at @{t.scope}"
                f"{did_you_mean(str(t.scope), [*FRAMINGS, *templates])}; "
                f"use a framing ({', '.join(FRAMINGS)}) or a template id of the pack"
            )
        for r in rows.itertuples(index=False):
            lo, hi = float(r.ci_lo), float(r.ci_hi)
            if math.isnan(lo) or math.isnan(hi):
                continue
            if (t.op == "<" and hi < t.limit) or (t.op == ">" and lo > t.limit):
                failures.append(Failure(t, str(r.model_a), str(r.model_b), float(r.diff), lo, hi))
    return failures
