"""How the tables choose rows and groups: shared by every table module, so a group is formed
(and framings ordered) the same way everywhere.

Conventions: rates are fractions in [0, 1]; a field's rate is the mean of its consensus values
(NaN, a field no judge scored, is left out); an outcome's rate is its share of the group's
generations. Wide tables name outcome shares with an ``outcome_`` prefix (``outcome_refusal``),
since ``refusal`` and ``soft_refusal`` are both a field and an outcome.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from deflectbench.analysis.stats import descriptive
from deflectbench.vocab import FIELDS, FRAMINGS, OUTCOMES

__all__ = [
    "OUTCOME_COLUMNS",
    "cluster_codes",
    "cohens_h",
    "group_means",
    "keys_of",
    "measure_values",
    "outcome_indicators",
    "sort_framings",
    "with_outcomes",
]

#: The outcome-share columns of the wide tables, in the ladder's order.
OUTCOME_COLUMNS: tuple[str, ...] = tuple(f"outcome_{o}" for o in OUTCOMES)


def keys_of(by: str | Sequence[str] | None) -> list[str]:
    """Grouping columns as a list (one name, several, or none)."""
    if by is None:
        return []
    return [by] if isinstance(by, str) else list(by)


def outcome_indicators(scored: pd.DataFrame) -> np.ndarray:
    """(n x 5) 0/1 matrix: row i has a 1 in its outcome's column."""
    out = scored["outcome"].to_numpy()
    return np.stack([out == o for o in OUTCOMES], axis=1).astype(np.float64)


def with_outcomes(scored: pd.DataFrame) -> pd.DataFrame:
    """The scored table plus one 0/1 column per outcome (``outcome_<name>``)."""
    ind = pd.DataFrame(
        outcome_indicators(scored), columns=list(OUTCOME_COLUMNS), index=scored.index
    )
    return pd.concat([scored, ind], axis=1)


def sort_framings(df: pd.DataFrame) -> pd.DataFrame:
    """Order rows by the grouping columns, framings in the paper's order."""
    if df.empty:
        return df.reset_index(drop=True)
    keys = [c for c in ("model", "framing", "prompt_id", "fallacy_requested", "level") if c in df]
    if not keys:
        return df.reset_index(drop=True)
    rank = {f: i for i, f in enumerate(FRAMINGS)}

    def key(col: pd.Series) -> pd.Series:
        return col.map(lambda v: rank.get(v, len(rank))) if col.name == "framing" else col

    return df.sort_values(keys, key=key, kind="stable").reset_index(drop=True)


def group_means(df: pd.DataFrame, by: list[str], columns: list[str]) -> pd.DataFrame:
    """Per group: n (rows) and the mean of each column (NaN skipped)."""
    if not by:
        row = {"n": len(df), **{c: float(df[c].mean()) if len(df) else math.nan for c in columns}}
        return pd.DataFrame([row])
    grouped = df.groupby(by, sort=True, observed=True)
    out = grouped[columns].mean()
    out.insert(0, "n", grouped.size())
    return out.reset_index()


def cluster_codes(labels: pd.Series) -> np.ndarray:
    """Cluster labels (claim ids) as integers numbered in the labels' sorted order.

    The statistics number clusters in sorted label order (``stats.arrays.factorize``); integers in
    the same order give them the same clusters in the same order, so the same draws and sums,
    while sorting integers instead of strings is much faster. Labels with a missing value are
    passed through unchanged.
    """
    if labels.isna().any():
        return labels.to_numpy()
    return pd.factorize(labels, sort=True)[0]


def cohens_h(p1: float, p2: float) -> float:
    """Cohen's h between two rates, NaN when either is missing."""
    if any(isinstance(p, float) and math.isnan(p) for p in (p1, p2)):
        return math.nan
    return descriptive.cohens_h(float(p1), float(p2))


def measure_values(scored: pd.DataFrame, measure: str, kind: str) -> np.ndarray:
    """One measure's values per row: an outcome's 0/1 indicator, or a field (NaN kept)."""
    if kind == "outcome":
        if measure not in OUTCOMES:
            raise ValueError(f"unknown outcome {measure!r}; outcomes: {', '.join(OUTCOMES)}")
        return (scored["outcome"].to_numpy() == measure).astype(np.float64)
    if kind == "field":
        if measure not in FIELDS:
            raise ValueError(f"unknown field {measure!r}; fields: {', '.join(FIELDS)}")
        return scored[measure].to_numpy(dtype=np.float64, na_value=np.nan)
    raise ValueError(f"kind must be 'outcome' or 'field', got {kind!r}")
