"""Inter-judge reliability: Cohen's kappa beside Gwet's AC1, per judge pair and per field.

Kappa and AC1 are reported together because a rare or near-universal label (prevalence skew)
drives kappa down while AC1 and the raw disagreement stay good; :func:`prevalence` gives each
field's share of 1s so a reader can see the skew.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from deflectbench.analysis.stats.agreement import chance_corrected
from deflectbench.analysis.stats.arrays import binary
from deflectbench.analysis.tables.grouping import group_codes, keys_of
from deflectbench.vocab import FIELDS

__all__ = [
    "AGREEMENT_COLUMNS",
    "agreement_by_field",
    "agreement_table",
    "agreement_tables",
    "prevalence",
]

AGREEMENT_COLUMNS: tuple[str, ...] = ("kappa", "ac1", "disagreement", "n")
#: In a cube of int8 labels (:func:`_wide`): a field the judge did not score.
NONE = 2


def _wide(
    verdicts: pd.DataFrame, fields: Sequence[str]
) -> tuple[list[str], NDArray[Any], NDArray[np.intp]]:
    """The judges (sorted), their fields as a (judge x generation x field) cube (NaN where a
    judge did not score a generation; generations in sorted ``gen_id`` order, a pivot's) and
    each verdict's generation in that order. When every value is 0, 1 or NaN (the verdicts'
    own), the cube holds them as int8 labels, 0, 1 and :data:`NONE` for NaN: an eighth of the
    floats' memory to fill and count (:func:`_pair_counts`), the same counts."""
    gen_codes, gen_ids = pd.factorize(verdicts["gen_id"], sort=True)
    judge_codes, judges = pd.factorize(verdicts["judge"], sort=True)
    cell = judge_codes.astype(np.int64) * len(gen_ids) + gen_codes
    if cell.size and np.bincount(cell).max() > 1:
        raise ValueError("Index contains duplicate entries, cannot reshape")  # as a pivot says
    values = np.stack(
        [verdicts[f].to_numpy(dtype=np.float64, na_value=np.nan) for f in fields], axis=1
    )
    missing = np.isnan(values)
    shape = (len(judges), len(gen_ids), len(fields))
    if bool(((values == 0) | (values == 1) | missing).all()):
        cube = np.full(shape, NONE, dtype=np.int8)
        cube[judge_codes, gen_codes] = np.where(missing, NONE, values).astype(np.int8)
    else:
        cube = np.full(shape, np.nan)
        cube[judge_codes, gen_codes] = values
    return judges.tolist(), cube, gen_codes


def _groups(
    verdicts: pd.DataFrame, keys: list[str], gen_codes: NDArray[np.intp], n_gens: int
) -> tuple[NDArray[np.intp], list[tuple[Any, ...]]]:
    """Each generation's group (by its first verdict's ``keys``; -1 where a key is missing, as
    a groupby drops it), generations numbered by ``gen_codes`` (:func:`_wide`'s), and the
    groups' labels in sorted order."""
    codes = np.full(n_gens, -1, dtype=np.intp)
    if not keys:
        codes[:] = 0
        return codes, [()]
    first = ~verdicts["gen_id"].duplicated().to_numpy()
    grouped = verdicts.loc[first, keys].groupby(keys, sort=True)
    numbers = grouped.ngroup().to_numpy(dtype=np.float64)
    kept = ~np.isnan(numbers)
    codes[gen_codes[first][kept]] = numbers[kept].astype(np.intp)
    labels = [k if isinstance(k, tuple) else (k,) for k in grouped.size().index.tolist()]
    return codes, labels


def _pair_rows(
    judges: tuple[str, str],
    values: tuple[NDArray[Any], NDArray[Any]],
    groups: tuple[NDArray[np.intp], list[tuple[Any, ...]]],
    keys: list[str],
    fields: Sequence[str],
    counts: tuple[NDArray[np.int64], ...] | None = None,
) -> list[dict[str, Any]]:
    """One pair's agreement per group and field, on the generations both judges scored: the
    2x2 counts of every group at once (:func:`stats.agreement.chance_corrected`; ``counts``:
    :func:`_pair_counts`' already taken)."""
    codes, labels = groups
    size = len(labels)
    per_field = []
    counted = _pair_counts(values, codes, size) if counts is None else counts
    for j in range(len(fields)):
        if counted is not None:
            n, n_a, n_b, tp, differ = (c[:, j] for c in counted)
            kappa, ac1 = chance_corrected(tp, n_a - tp, n_b - tp, n - n_a - n_b + tp)
            per_field.append((n, differ, kappa, ac1))
            continue
        x, y = values[0][:, j], values[1][:, j]  # a value not 0 or 1: binary's, field by field
        both = ~np.isnan(x) & ~np.isnan(y) & (codes >= 0)
        xi = binary(x[both].astype(np.int64), "a")
        yi = binary(y[both].astype(np.int64), "b")
        c = codes[both]
        n = np.bincount(c, minlength=size)
        n_a = np.bincount(c[xi == 1], minlength=size)
        n_b = np.bincount(c[yi == 1], minlength=size)
        tp = np.bincount(c[(xi & yi) == 1], minlength=size)
        differ = np.bincount(c[xi != yi], minlength=size)
        kappa, ac1 = chance_corrected(tp, n_a - tp, n_b - tp, n - n_a - n_b + tp)
        per_field.append((n, differ, kappa, ac1))
    rows = []
    for g, label in enumerate(labels):
        for f, (n, differ, kappa, ac1) in zip(fields, per_field, strict=True):
            rows.append(
                {
                    **dict(zip(keys, label, strict=True)),
                    "judge_a": judges[0],
                    "judge_b": judges[1],
                    "field": f,
                    "kappa": float(kappa[g]),
                    "ac1": float(ac1[g]),
                    "disagreement": float(differ[g]) / int(n[g]) if n[g] else math.nan,
                    "n": int(n[g]),
                }
            )
    return rows


def _pair_counts(
    values: tuple[NDArray[Any], NDArray[Any]], codes: NDArray[np.intp], size: int
) -> tuple[NDArray[np.int64], ...] | None:
    """Per group and field (groups x fields arrays), on the generations both judges scored:
    n, the first judge's 1s, the second's, both 1s, and the disagreements; every field and
    group counted by one ``np.bincount`` of (group, field, the two labels). None when a value
    scored is not 0 or 1 (then :func:`binary` refuses it, field by field)."""
    x, y = values
    k = x.shape[1]
    first = (codes[:, None] * k + np.arange(k)) * 4  # each (group, field)'s 2x2 table
    if x.dtype == np.int8:  # labels 0, 1, NONE (:func:`_wide`)
        both = (x != NONE) & (y != NONE) & (codes >= 0)[:, None]
        cell = np.where(both, first + x * 2 + y, size * k * 4)  # the rest: one bin, dropped
    else:
        xa, ya = x == 1, y == 1
        both = ((x == 0) | xa) & ((y == 0) | ya)  # both scored (NaN is neither)
        if bool(((~both) & ~np.isnan(x) & ~np.isnan(y)).any()):
            return None
        both &= (codes >= 0)[:, None]
        cell = np.where(both, first + xa * 2 + ya, size * k * 4)  # the rest: one bin, dropped
    table = np.bincount(cell.ravel(), minlength=size * k * 4 + 1)[:-1].reshape(size, k, 2, 2)
    only_a, only_b, tp = table[:, :, 1, 0], table[:, :, 0, 1], table[:, :, 1, 1]
    n = table.sum(axis=(2, 3))
    return n, only_a + tp, only_b + tp, tp, only_a + only_b


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
    judges, cube, gen_codes = _wide(verdicts, fields)
    groups = _groups(verdicts, keys, gen_codes, cube.shape[1])
    rows = [
        r
        for a, b in combinations(range(len(judges)), 2)
        for r in _pair_rows((judges[a], judges[b]), (cube[a], cube[b]), groups, keys, fields)
    ]
    return pd.DataFrame(rows, columns=_columns(keys))


def agreement_tables(
    verdicts: pd.DataFrame, by: str | Sequence[str], fields: Sequence[str] = FIELDS
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``agreement_table(verdicts)`` and ``agreement_table(verdicts, by=by)`` from one array of
    the judges' fields (:func:`_wide`)."""
    keys = keys_of(by)
    if verdicts.empty:
        return pd.DataFrame(columns=_columns([])), pd.DataFrame(columns=_columns(keys))
    judges, cube, gen_codes = _wide(verdicts, fields)
    everything = _groups(verdicts, [], gen_codes, cube.shape[1])
    groups = _groups(verdicts, keys, gen_codes, cube.shape[1])
    overall: list[dict[str, Any]] = []
    grouped: list[dict[str, Any]] = []
    every_gen = bool((groups[0] >= 0).all())  # no generation left out of the groups
    for a, b in combinations(range(len(judges)), 2):
        pair, values = (judges[a], judges[b]), (cube[a], cube[b])
        counts = _pair_counts(values, groups[0], len(groups[1]))
        total = None  # all generations' counts: the groups' summed, exact, when they hold all
        if counts is not None and every_gen:
            total = tuple(c.sum(axis=0, keepdims=True) for c in counts)
        overall += _pair_rows(pair, values, everything, [], fields, total)
        grouped += _pair_rows(pair, values, groups, keys, fields, counts)
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
    if keys:
        codes, labels = group_codes(agree, keys)
        groups = labels.to_dict(orient="records")
    else:
        codes, groups = np.zeros(len(agree), dtype=np.intp), [{}]
    fields = agree["field"].tolist()
    values = {c: agree[c].to_numpy(dtype=np.float64) for c in AGREEMENT_COLUMNS}
    for g, group in enumerate(groups):
        mine = np.flatnonzero(codes == g)
        for f in FIELDS:
            pairs = mine[[fields[i] == f for i in mine]] if mine.size else mine
            if not pairs.size:
                continue
            rows.append(
                {
                    **group,
                    "field": f,
                    "kappa": _mean(values["kappa"][pairs]),
                    "ac1": _mean(values["ac1"][pairs]),
                    "disagreement": _mean(values["disagreement"][pairs]),
                    "n": int(values["n"][pairs].min()),
                }
            )
    return pd.DataFrame(rows, columns=columns)


def _mean(x: NDArray[np.float64]) -> float:
    """A Series' mean (NaN left out; NaN when none is left), as pandas computes it: the sum of
    the values with NaN as 0, over the count of the others."""
    seen = ~np.isnan(x)
    count = int(seen.sum())
    return float(np.where(seen, x, 0.0).sum() / float(count)) if count else math.nan


def prevalence(scored: pd.DataFrame) -> dict[str, float]:
    """Each field's share of 1s over the scored generations (the skew kappa is sensitive to)."""
    return {f: float(scored[f].mean()) if len(scored) else float("nan") for f in FIELDS}
