"""Corrected rates compared where both sides have them: each side's rates corrected for judge
error (:mod:`deflectbench.analysis.calibration`, from the human labels its store holds), B minus
A, as rows of the comparison table with ``corrected`` True.

The correction's CI comes from its own claim bootstrap per side, whose replicates the
comparison does not see; so the difference's interval here is the normal combination of the two
sides' intervals (each SE = CI width / 3.92), an *unpaired* interval: wider than a paired one
when the sides share claims (it ignores their positive correlation), so conservative. Its
p-value is the same normal test; Holm adjusts the corrected rows as a family of their own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pandas as pd

from deflectbench.analysis.calibration.corrected import corrected_as
from deflectbench.analysis.calibration.load import has_labels, read_calibration_inputs
from deflectbench.analysis.compare.select import Side
from deflectbench.analysis.compare.table import COLUMNS, KINDS, MEASURES
from deflectbench.analysis.options import AnalysisOptions
from deflectbench.analysis.stats.descriptive import cohens_h
from deflectbench.benchmark import Benchmark

__all__ = ["corrected_rows", "with_corrected"]

Z95 = 1.959963984540054


def with_corrected(store: Any, side: Side, pack: Benchmark, options: AnalysisOptions) -> Side:
    """The side with its corrected cells (``None``: overall, else a framing), when its store
    holds human labels of the pack and a correction is asked for; else unchanged."""
    if options.correction == "none" or side.scored.empty or not has_labels(store):
        return side
    inputs = read_calibration_inputs(store, pack, options, scored=side.scored)
    found = corrected_as(inputs, options)
    if found is None or side.name not in found.models:
        return side
    cells: dict[str | None, Any] = {None: found.models[side.name]}
    cells.update(found.by_framing.get(side.name, {}))
    return replace(side, corrected=cells)


def _rate(e: Any) -> float:
    return math.nan if e is None or e.rate is None else float(e.rate)


def _se(e: Any) -> float:
    if e is None or e.ci95 is None or None in e.ci95:
        return math.nan
    lo, hi = e.ci95
    return (float(hi) - float(lo)) / (2 * Z95)


def corrected_rows(a: Side, b: Side) -> pd.DataFrame:
    """The corrected rows of one pair (overall and per framing both sides have), or none."""
    ca: Mapping[str | None, Any] = a.corrected or {}
    cb: Mapping[str | None, Any] = b.corrected or {}
    rows = []
    for cut in [c for c in ca if c in cb]:
        for kind, measure in zip(KINDS, MEASURES, strict=True):
            ea, eb = (
                ca[cut].get("corrected", kind, measure),
                cb[cut].get("corrected", kind, measure),
            )
            ra, rb = _rate(ea), _rate(eb)
            se = math.hypot(_se(ea), _se(eb))
            diff = rb - ra
            ok = math.isfinite(diff) and math.isfinite(se)
            if ok and se > 0:
                p = math.erfc(abs(diff / se) / math.sqrt(2.0))
            else:
                p = (1.0 if diff == 0 else 0.0) if ok else math.nan
            in_range = 0 <= ra <= 1 and 0 <= rb <= 1
            rows.append(
                {
                    "model_a": a.label,
                    "model_b": b.label,
                    "kind": kind,
                    "measure": measure,
                    "scope": "overall" if cut is None else "framing",
                    "framing": cut,
                    "template": None,
                    "corrected": True,
                    "rate_a": ra,
                    "rate_b": rb,
                    "diff": diff,
                    "ci_lo": diff - Z95 * se if ok else math.nan,
                    "ci_hi": diff + Z95 * se if ok else math.nan,
                    "p": p,
                    "p_holm": math.nan,
                    "h": cohens_h(rb, ra) if in_range else math.nan,
                    "n_a": int(ea.n) if ea is not None else 0,
                    "n_b": int(eb.n) if eb is not None else 0,
                    "n_claims": 0,
                }
            )
    return pd.DataFrame(rows, columns=list(COLUMNS))
