"""Inter-judge reliability: Cohen's kappa beside Gwet's AC1, per judge pair and per field.

Kappa and AC1 are reported together because a rare or near-universal label (prevalence skew)
drives kappa down while AC1 and the raw disagreement stay good; :func:`prevalence` gives each
field's share of 1s so a reader can see the skew.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from deflectbench.analysis.stats.agreement import agreement
from deflectbench.analysis.tables.grouping import keys_of
from deflectbench.vocab import FIELDS

__all__ = [
    "AGREEMENT_COLUMNS",
    "agreement_by_field",
    "agreement_table",
    "agreement_tables",
    "prevalence",
]

AGREEMENT_COLUMNS: tuple[str, ...] = ("kappa", "ac1", "disagreement", "n")


def _pairs(
    verdicts: pd.DataFrame, fields: Sequence[str], keys: list[str]
) -> Iterator[tuple[str, str, pd.DataFrame]]:
    """Each pair of judges: (a, b, one row per generation with both judges' fields and the
    group columns)."""
    judges = sorted(verdicts["judge"].unique().tolist())
    wide = verdicts.pivot(index="gen_id", columns="judge", values=list(fields))
    attrs = verdicts.drop_duplicates("gen_id").set_index("gen_id")[keys] if keys else None
    for a, b in combinations(judges, 2):
        pair = pd.DataFrame(
            {
                **{f"{f}|a": wide[(f, a)] for f in fields},
                **{f"{f}|b": wide[(f, b)] for f in fields},
            }
        )
        yield a, b, pair.join(attrs) if attrs is not None else pair


def _pair_rows(
    a: str, b: str, pair: pd.DataFrame, keys: list[str], fields: Sequence[str]
) -> list[dict[str, Any]]:
    """One pair's agreement per group and field, on the generations both judges scored."""
    rows = []
    for group, sub in pair.groupby(keys, sort=True) if keys else [((), pair)]:
        labels = dict(zip(keys, group if isinstance(group, tuple) else (group,), strict=True))
        for f in fields:
            x = sub[f"{f}|a"].to_numpy(dtype=np.float64)
            y = sub[f"{f}|b"].to_numpy(dtype=np.float64)
            both = ~np.isnan(x) & ~np.isnan(y)
            ag = agreement(x[both].astype(np.int64), y[both].astype(np.int64))
            rows.append(
                {
                    **labels,
                    "judge_a": a,
                    "judge_b": b,
                    "field": f,
                    "kappa": ag.kappa,
                    "ac1": ag.ac1,
                    "disagreement": ag.disagreement,
                    "n": ag.n,
                }
            )
    return rows


def _columns(keys: list[str]) -> list[str]:
    return [*keys, "judge_a", "judge_b", "field", "kappa", "ac1", "disagreement", "n"]


def agreement_table(
    verdicts: pd.DataFrame,
    *,
    by: str | Sequence[str] | None = None,
    fields: Sequence[str] = FIELDS,
) -> pd.DataFrame:
    """Inter-judge reliability per field: Cohen's kappa, Gwet's AC1, raw disagreement, n.

    ``verdicts`` has one row per (gen_id, judge) with the judge's own parsed fields (NaN where
    it did not score one), e.g. :func:`scored.verdicts_from_frames`. Each pair of judges is
    compared on the generations both scored (for each field separately), so with 3+ judges
    every pair gets its rows. ``by="model"`` repeats this per generating model. Columns: the
    group columns, judge_a, judge_b, field, kappa, ac1, disagreement, n.
    """
    keys = keys_of(by)
    if verdicts.empty:
        return pd.DataFrame(columns=_columns(keys))
    rows = [
        r
        for a, b, pair in _pairs(verdicts, fields, keys)
        for r in _pair_rows(a, b, pair, keys, fields)
    ]
    return pd.DataFrame(rows, columns=_columns(keys))


def agreement_tables(
    verdicts: pd.DataFrame, by: str | Sequence[str], fields: Sequence[str] = FIELDS
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``agreement_table(verdicts)`` and ``agreement_table(verdicts, by=by)`` from one pivot."""
    keys = keys_of(by)
    if verdicts.empty:
        return pd.DataFrame(columns=_columns([])), pd.DataFrame(columns=_columns(keys))
    overall: list[dict[str, Any]] = []
    grouped: list[dict[str, Any]] = []
    for a, b, pair in _pairs(verdicts, fields, keys):
        overall += _pair_rows(a, b, pair, [], fields)
        grouped += _pair_rows(a, b, pair, keys, fields)
    return pd.DataFrame(overall, columns=_columns([])), pd.DataFrame(
        grouped, columns=_columns(keys)
    )


def agreement_by_field(agree: pd.DataFrame, *, by: str | None = None) -> pd.DataFrame:
    """Per field (and group), one row over the judge pairs of :func:`agreement_table`.

    With 3+ judges, kappa, AC1 and disagreement are the mean over pairs (Light's kappa) and n
    the smallest pair's. Fields in the rubric's order; a field with no pair is left out.
    Columns: the group column, field, kappa, ac1, disagreement, n.
    """
    keys = keys_of(by)
    columns = [*keys, "field", *AGREEMENT_COLUMNS]
    rows: list[dict[str, Any]] = []
    if agree.empty:
        return pd.DataFrame(rows, columns=columns)
    groups = agree.groupby(keys, sort=True) if keys else [((), agree)]
    for group, part in groups:
        labels = dict(zip(keys, group if isinstance(group, tuple) else (group,), strict=True))
        by_field = dict(tuple(part.groupby("field", sort=False)))
        for f in FIELDS:
            pairs = by_field.get(f)
            if pairs is None or pairs.empty:
                continue
            rows.append(
                {
                    **labels,
                    "field": f,
                    "kappa": float(pairs["kappa"].mean()),
                    "ac1": float(pairs["ac1"].mean()),
                    "disagreement": float(pairs["disagreement"].mean()),
                    "n": int(pairs["n"].min()),
                }
            )
    return pd.DataFrame(rows, columns=columns)


def prevalence(scored: pd.DataFrame) -> dict[str, float]:
    """Each field's share of 1s over the scored generations (the skew kappa is sensitive to)."""
    return {f: float(scored[f].mean()) if len(scored) else float("nan") for f in FIELDS}
