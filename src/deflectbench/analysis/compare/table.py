"""Every difference between two scored tables: each outcome of the signature and each of the 8
fields, overall, per framing and per template, with its paired CI, p-value, Holm-adjusted
p-value (within a family the user can see and choose) and Cohen's h.

Holm's families (:data:`HOLM_FAMILIES`, ``--holm-family``): a family is the set of tests a
reader reads as one question. ``measure`` (the default): per pair, the outcomes overall (5
rows), the fields overall (8), and each measure across the framings (7) and across the
templates (15): "did refusal move in some framing?" is one question, and the overall rows the
gate reads are adjusted only against each other. ``scope``: per pair, the outcomes (or the
fields) at one scope together (outcomes by framing: 35 rows; fields by template: 120).
``all``: every row of the comparison (the former default: about 300 rows per pair, so an
effect the size of one framing's sample, +8 pp at h 0.24, never survives). ``none``: no
adjustment (``p_holm`` is ``p``). The corrected rows are always families of their own. Each
row carries its family's name (``holm_family``) and size (``holm_m``: its tests with a
p-value).

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
from deflectbench.analysis.compare.paired import paired_bootstrap_cuts
from deflectbench.analysis.stats.descriptive import cohens_h
from deflectbench.analysis.tables.grouping import outcome_indicators
from deflectbench.vocab import FIELDS, FRAMINGS, OUTCOMES

__all__ = ["COLUMNS", "HOLM_FAMILIES", "KINDS", "MEASURES", "compare_scored", "with_holm"]

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
    "holm_family",
    "holm_m",
    "a_lo",
    "a_hi",
)
#: A cut of the rows: (scope, framing, template).
Cut = tuple[str, str | None, str | None]
#: The Holm families a comparison may use (the module's docstring), the default first.
HOLM_FAMILIES: tuple[str, ...] = ("measure", "scope", "all", "none")


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


def _cuts(a: pd.DataFrame, b: pd.DataFrame) -> list[Cut]:
    """(scope, framing, template): overall, each framing and each template both sides have
    (two packs of the same claims may differ in their templates)."""
    cuts: list[Cut] = [("overall", None, None)]
    rank = {f: i for i, f in enumerate(FRAMINGS)}
    present = set(a["framing"].dropna().unique()) & set(b["framing"].dropna().unique())
    framings = sorted(present, key=lambda f: (rank.get(f, len(rank)), str(f)))
    cuts += [("framing", f, None) for f in framings]
    last = a[["prompt_id", "framing"]].drop_duplicates("prompt_id", keep="last")  # as a dict
    of = dict(zip(last["prompt_id"].tolist(), last["framing"].tolist(), strict=True))
    shared = set(of) & set(b["prompt_id"].unique())
    cuts += [("template", of[t], t) for t in sorted(shared)]
    return cuts


def _cut_codes(scored: pd.DataFrame, cuts: Sequence[Cut]) -> list[np.ndarray]:
    """Each row's cut, per grouping (overall, framings, templates; -1: in none of them)."""
    out = []
    for scope, column in (("overall", None), ("framing", "framing"), ("template", "prompt_id")):
        at = [i for i, c in enumerate(cuts) if c[0] == scope]
        if not at:
            continue
        if column is None:
            out.append(np.full(len(scored), at[0], dtype=np.int64))
            continue
        keys = [cuts[i][1] if scope == "framing" else cuts[i][2] for i in at]
        found = pd.Index(keys).get_indexer(scored[column])
        out.append(np.where(found >= 0, np.asarray(at, dtype=np.int64)[found], -1))
    return out


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
    holm_family: str | None = "measure",
) -> pd.DataFrame:
    """B minus A for every measure and cut (``scopes``), one paired bootstrap per cut shared by
    its 13 measures (every cut uses ``seed``: the same claim draws), all cuts in one pass over
    each side (:func:`~.paired.paired_bootstrap_cuts`). ``p_holm`` is adjusted within
    ``holm_family``'s families of this table's rows (None: not yet, for a caller that adjusts
    several tables put together with :func:`with_holm`). ``a_lo``/``a_hi`` are A's own interval
    (the gate's reach)."""
    cuts = [c for c in _cuts(a, b) if c[0] in scopes]
    ma, mb = _matrix(a), _matrix(b)
    cut = paired_bootstrap_cuts(
        ma, a["claim_id"].to_numpy(), _cut_codes(a, cuts),
        mb, b["claim_id"].to_numpy(), _cut_codes(b, cuts), len(cuts),
        n_resamples=n_resamples, seed=seed, level=level,
    )  # fmt: skip
    res = cut.diffs
    k = len(MEASURES)
    each = len(cuts) * k  # row i * k + j: cut i, measure j

    def per_cut(at: int) -> list[Any]:
        return [c[at] for c in cuts for _ in range(k)]

    rows = {  # column by column: the same values, dtypes and order as a dict per row
        "model_a": [model_a] * each,
        "model_b": [model_b] * each,
        "kind": list(KINDS) * len(cuts),
        "measure": list(MEASURES) * len(cuts),
        "scope": per_cut(0),
        "framing": per_cut(1),
        "template": per_cut(2),
        "corrected": [False] * each,
        "rate_a": res.rate_a.reshape(-1),
        "rate_b": res.rate_b.reshape(-1),
        "diff": res.diff.reshape(-1),
        "ci_lo": res.lo.reshape(-1),
        "ci_hi": res.hi.reshape(-1),
        "p": res.p.reshape(-1),
        "p_holm": np.full(each, math.nan),
        "h": [
            _h(float(rb), float(ra))
            for ra, rb in zip(res.rate_a.flat, res.rate_b.flat, strict=True)
        ],
        "n_a": cut.n_a.reshape(-1).astype(np.int64),
        "n_b": cut.n_b.reshape(-1).astype(np.int64),
        "n_claims": res.n_claims.reshape(-1).astype(np.int64),
        "holm_family": [None] * each,
        "holm_m": [None] * each,
        "a_lo": res.lo_a.reshape(-1),
        "a_hi": res.hi_a.reshape(-1),
    }
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    return table if holm_family is None else with_holm(table, holm_family)


def _family(row: Any, family: str) -> tuple[tuple[Any, ...], str]:
    """The row's Holm family: its key, and its name as the tables print it."""
    kinds = "outcomes" if row.kind == "outcome" else "fields"
    name = row.measure if row.kind == "outcome" else f"field {row.measure}"
    at = "overall" if row.scope == "overall" else f"by {row.scope}"
    fixed = "corrected " if row.corrected else ""
    pair = (row.model_a, row.model_b, bool(row.corrected))
    if family == "all":
        return (bool(row.corrected),), f"{fixed}every row"
    if family == "scope" or row.scope == "overall":
        return (*pair, row.kind, row.scope), f"{fixed}{kinds} {at}"
    return (*pair, row.kind, row.measure, row.scope), f"{fixed}{name} {at}"


def with_holm(table: pd.DataFrame, family: str = "measure") -> pd.DataFrame:
    """``p_holm`` within each Holm family (``family``: one of :data:`HOLM_FAMILIES`; see the
    module's docstring), with the family's name (``holm_family``) and its size (``holm_m``:
    the rows with a p-value). ``none`` copies ``p`` (families of one row)."""
    if family not in HOLM_FAMILIES:
        raise ValueError(f"unknown Holm family {family!r}; valid: {', '.join(HOLM_FAMILIES)}")
    out = table.copy()
    if out.empty:
        return out
    p = out["p"].to_numpy(dtype=np.float64)
    adjusted = np.full(len(out), np.nan)
    names: list[Any] = [None] * len(out)
    sizes: list[Any] = [None] * len(out)
    if family == "none":
        for i in range(len(out)):
            names[i], sizes[i] = "none (unadjusted)", 1 if not math.isnan(p[i]) else 0
        out["p_holm"] = p
    else:
        groups: dict[tuple[Any, ...], list[int]] = {}
        labels: dict[tuple[Any, ...], str] = {}
        for i, row in enumerate(out.itertuples(index=False)):
            key, name = _family(row, family)
            groups.setdefault(key, []).append(i)
            labels[key] = name
        for key, members in groups.items():
            idx = np.asarray(members)
            adjusted[idx] = holm(p[idx])
            m = int((~np.isnan(p[idx])).sum())
            for i in members:
                names[i], sizes[i] = labels[key], m
        out["p_holm"] = adjusted
    out["holm_family"] = names
    out["holm_m"] = pd.array(sizes, dtype="Int64")
    return out
