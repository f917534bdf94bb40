"""Every difference between two scored tables: each outcome of the signature and each of the 8
fields, overall, per framing and per template, with its paired CI, p-value, Holm-adjusted
p-value and Cohen's h.

Inputs are scored tables (:func:`deflectbench.analysis.frames.scored.scored_from_frames`) of
one side each; rates are fractions. Rows are long format (:data:`COLUMNS`); ``scope`` says
which cut a row is (``overall``, ``framing``, ``template``); ``framing`` is None overall and a
template row carries its template's framing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from deflectbench.analysis.compare.holm import holm
from deflectbench.analysis.compare.paired import paired_bootstrap
from deflectbench.analysis.stats.descriptive import cohens_h
from deflectbench.analysis.tables.grouping import outcome_indicators
from deflectbench.vocab import FIELDS, FRAMINGS, OUTCOMES

__all__ = ["COLUMNS", "KINDS", "MEASURES", "compare_scored", "with_holm"]

#: The measures compared, outcomes first (an outcome and a field may share a name: ``kind``
#: tells them apart).
MEASURES: tuple[str, ...] = (*OUTCOMES, *FIELDS)
KINDS: tuple[str, ...] = ("outcome",) * len(OUTCOMES) + ("field",) * len(FIELDS)
COLUMNS: tuple[str, ...] = (
    "model_a",
    "model_b",
    "kind",
    "measure",
    "scope",
    "framing",
    "template",
    "corrected",
    "rate_a",
    "rate_b",
    "diff",
    "ci_lo",
    "ci_hi",
    "p",
    "p_holm",
    "h",
    "n_a",
    "n_b",
    "n_claims",
)


def _matrix(scored: pd.DataFrame) -> np.ndarray:
    """(n x 13): the 5 outcome indicators, then the 8 fields (NaN where missing)."""
    if scored.empty:
        return np.zeros((0, len(MEASURES)))
    fields = scored[list(FIELDS)].to_numpy(dtype=np.float64, na_value=np.nan)
    return np.hstack([outcome_indicators(scored), fields])


def _h(rate_b: float, rate_a: float) -> float:
    if not (0.0 <= rate_a <= 1.0 and 0.0 <= rate_b <= 1.0):  # NaN too
        return math.nan
    return cohens_h(rate_b, rate_a)


def _cuts(a: pd.DataFrame, b: pd.DataFrame) -> list[tuple[str, str | None, str | None]]:
    """(scope, framing, template): overall, each framing and each template both sides have
    (two packs of the same claims may differ in their templates)."""
    cuts: list[tuple[str, str | None, str | None]] = [("overall", None, None)]
    rank = {f: i for i, f in enumerate(FRAMINGS)}
    present = set(a["framing"].dropna()) & set(b["framing"].dropna())
    framings = sorted(present, key=lambda f: (rank.get(f, len(rank)), str(f)))
    cuts += [("framing", f, None) for f in framings]
    of = dict(zip(a["prompt_id"], a["framing"], strict=True))
    shared = set(of) & set(b["prompt_id"])
    cuts += [("template", of[t], t) for t in sorted(shared)]
    return cuts


def compare_scored(
    a: pd.DataFrame,
    b: pd.DataFrame,
    *,
    model_a: str,
    model_b: str,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    scopes: Sequence[str] = ("overall", "framing", "template"),
) -> pd.DataFrame:
    """B minus A for every measure and cut (``scopes``), one paired bootstrap per cut shared by
    its 13 measures (every cut uses ``seed``: the same claim draws). ``p_holm`` is adjusted
    over this table's rows; :func:`with_holm` re-adjusts over several tables put together."""
    rows: list[dict[str, Any]] = []
    for scope, framing, template in _cuts(a, b):
        if scope not in scopes:
            continue
        if scope == "overall":
            sa, sb = a, b
        elif scope == "framing":
            sa, sb = a[a["framing"] == framing], b[b["framing"] == framing]
        else:
            sa, sb = a[a["prompt_id"] == template], b[b["prompt_id"] == template]
        ma, mb = _matrix(sa), _matrix(sb)
        res = paired_bootstrap(
            ma,
            sa["claim_id"].to_numpy(),
            mb,
            sb["claim_id"].to_numpy(),
            n_resamples=n_resamples,
            seed=seed,
            level=level,
        )
        n_a, n_b = (~np.isnan(ma)).sum(axis=0), (~np.isnan(mb)).sum(axis=0)
        for j, (kind, measure) in enumerate(zip(KINDS, MEASURES, strict=True)):
            rows.append(
                {
                    "model_a": model_a,
                    "model_b": model_b,
                    "kind": kind,
                    "measure": measure,
                    "scope": scope,
                    "framing": framing,
                    "template": template,
                    "corrected": False,
                    "rate_a": float(res.rate_a[j]),
                    "rate_b": float(res.rate_b[j]),
                    "diff": float(res.diff[j]),
                    "ci_lo": float(res.lo[j]),
                    "ci_hi": float(res.hi[j]),
                    "p": float(res.p[j]),
                    "p_holm": math.nan,
                    "h": _h(float(res.rate_b[j]), float(res.rate_a[j])),
                    "n_a": int(n_a[j]),
                    "n_b": int(n_b[j]),
                    "n_claims": int(res.n_claims[j]),
                }
            )
    return with_holm(pd.DataFrame(rows, columns=list(COLUMNS)))


def with_holm(table: pd.DataFrame) -> pd.DataFrame:
    """``p_holm`` over the whole table, one family per value of ``corrected`` (the judged
    rates are one family, the corrected ones, when there are any, another)."""
    out = table.copy()
    if out.empty:
        return out
    adjusted = np.full(len(out), np.nan)
    flags = out["corrected"].to_numpy(dtype=bool)
    for flag in (False, True):
        rows = np.flatnonzero(flags == flag)
        if rows.size:
            adjusted[rows] = holm(out["p"].to_numpy(dtype=np.float64)[rows])
    out["p_holm"] = adjusted
    return out
