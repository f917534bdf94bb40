"""How the tables choose rows and groups: shared by every table module, so a group is formed
(and framings ordered) the same way everywhere.

Conventions: rates are fractions in [0, 1]; a field's rate is the mean of its consensus values
(NaN, a field no judge scored, is left out); an outcome's rate is its share of the group's
generations. Wide tables name outcome shares with an ``outcome_`` prefix (``outcome_refusal``),
since ``refusal`` and ``soft_refusal`` are both a field and an outcome.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from deflectbench.analysis.sharing import SORTED_CODES, shared
from deflectbench.analysis.stats import descriptive
from deflectbench.vocab import FIELDS, FRAMINGS, OUTCOMES

__all__ = [
    "OUTCOME_COLUMNS",
    "cluster_codes",
    "cohens_h",
    "framing_rows",
    "group_codes",
    "group_codes_where",
    "group_means",
    "group_sums",
    "group_table",
    "keys_of",
    "means_table",
    "measure_values",
    "model_outcome_codes",
    "outcome_indicators",
    "rows_of_groups",
    "sort_framings",
    "sorted_codes",
    "sums_by_codes",
    "whole_columns",
    "whole_numbers",
    "with_outcomes",
]

#: The outcome-share columns of the wide tables, in the ladder's order.
OUTCOME_COLUMNS: tuple[str, ...] = tuple(f"outcome_{o}" for o in OUTCOMES)


def framing_rows(scored: pd.DataFrame, framing: str) -> pd.DataFrame:
    """``scored[scored["framing"] == framing]``: within :func:`.sharing.shared_codes` one frame, so the
    tables of one framing (the coach tables) share its rows and their codes."""
    return shared(scored, ("framing_rows", framing), lambda: scored[scored["framing"] == framing])


def keys_of(by: str | Sequence[str] | None) -> list[str]:
    """Grouping columns as a list (one name, several, or none)."""
    if by is None:
        return []
    return [by] if isinstance(by, str) else list(by)


def outcome_indicators(scored: pd.DataFrame) -> np.ndarray:
    """(n x 5) 0/1 matrix: row i has a 1 in its outcome's column."""

    def compute() -> np.ndarray:
        out = scored["outcome"].to_numpy()
        return np.stack([out == o for o in OUTCOMES], axis=1).astype(np.float64)

    return shared(scored, "outcome_indicators", compute)


def model_outcome_codes(
    scored: pd.DataFrame,
) -> tuple[NDArray[np.intp], pd.DataFrame, NDArray[np.intp]] | None:
    """Each row's model (its group, :func:`group_codes`), the models (one row each, sorted),
    and each row's outcome (its index in the ladder): what the tables by model and outcome
    group by. None when a row has no model or an outcome off the ladder (those tables then
    keep their pandas groupbys, which leave such rows out or sort such outcomes last)."""

    def compute() -> tuple[NDArray[np.intp], pd.DataFrame, NDArray[np.intp]] | None:
        codes, labels = group_codes(scored, ["model"])
        indicators = outcome_indicators(scored)
        which = np.argmax(indicators, axis=1) if len(scored) else np.zeros(0, dtype=np.intp)
        on_ladder = indicators[np.arange(len(which)), which] == 1
        if bool((codes < 0).any()) or not bool(on_ladder.all()):
            return None
        return codes, labels, which.astype(np.intp)

    return shared(scored, "model_outcome_codes", compute)


def rows_of_groups(codes: NDArray[np.intp], n_groups: int) -> list[NDArray[np.intp]]:
    """The rows of each group ``0 .. n_groups - 1`` (``codes``: each row's group, -1 none), each
    group's rows in the table's order, as a groupby's groups hold them."""
    order = np.argsort(codes, kind="stable")
    ends = np.searchsorted(codes[order], np.arange(n_groups + 1), side="left")
    return [order[ends[g] : ends[g + 1]] for g in range(n_groups)]


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
    order = _framing_order(df, keys, rank)
    if order is not None:
        in_order = bool((order == np.arange(len(order))).all())  # (the usual: none taken)
        return (df if in_order else df.take(order)).reset_index(drop=True)

    def key(col: pd.Series) -> pd.Series:
        return col.map(lambda v: rank.get(v, len(rank))) if col.name == "framing" else col

    return df.sort_values(keys, key=key, kind="stable").reset_index(drop=True)


def _framing_order(
    df: pd.DataFrame, keys: list[str], rank: Mapping[str, int]
) -> NDArray[np.intp] | None:
    """The rows' order :func:`sort_framings`' ``sort_values`` gives (stable; a missing value
    last, a framing by its rank, an unknown or missing framing after the known), by Python's
    stable sort of each row's keys: a text by its code points (the sorted order of the
    column's values), an integer by its value, a float by its number in sorted order. The
    tables are small (tens of rows), and numbering each column costs more than sorting
    them. None for a key of another type than text or numbers."""
    columns: list[list[Any]] = []
    for k in keys:
        column = df[k]
        if k == "framing":
            if not (isinstance(column.dtype, pd.StringDtype) or column.dtype == object):
                return None
            columns.append([rank.get(v, len(rank)) for v in column.tolist()])
            continue
        if column.dtype.kind == "f":  # numbered, as sort_values orders -0.0 and 0.0
            numbers, uniques = pd.factorize(column, sort=True)
            columns.append(np.where(numbers < 0, len(uniques), numbers).tolist())
            continue
        if not (isinstance(column.dtype, pd.StringDtype) or column.dtype.kind in "iu"):
            return None
        missing = column.isna().to_numpy()
        values = column.tolist()
        columns.append([(1, 0) if m else (0, v) for v, m in zip(values, missing, strict=True)])
    rows = list(zip(*columns, strict=True))
    return np.asarray(sorted(range(len(rows)), key=rows.__getitem__), dtype=np.intp)


def group_means(df: pd.DataFrame, by: list[str], columns: list[str]) -> pd.DataFrame:
    """Per group: n (rows) and the mean of each column (NaN skipped)."""
    if not by:
        row = {"n": len(df), **{c: float(df[c].mean()) if len(df) else math.nan for c in columns}}
        return pd.DataFrame([row])
    table = group_table(df, by, {c: df[c] for c in columns})
    if table is not None:
        return table
    grouped = df.groupby(by, sort=True, observed=True)
    out = grouped[columns].mean()
    out.insert(0, "n", grouped.size())
    return out.reset_index()


def group_table(df: pd.DataFrame, by: list[str], values: Mapping[str, Any]) -> pd.DataFrame | None:
    """:func:`group_means` of ``values`` (columns of ``df``'s length, named), when every value
    is a whole number (0/1 flags, counts; NaN left out): a groupby's table, groups in sorted
    order and a key missing in a row leaving it out, the same numbers. None otherwise.

    The groups are numbered once (:func:`group_codes`) and every column summed with
    ``np.bincount``: whole numbers sum exactly in any order, so the means are pandas' bits.
    Other values are pandas' to average: its sums of them depend on the frame's layout
    (compensated, or plain when a block of columns has no NaN and the rows come sorted).
    """
    return group_sums(df, by, whole_columns(values))


def whole_columns(values: Mapping[str, Any]) -> dict[str, tuple[NDArray[np.float64], bool]]:
    """Each of ``values`` as :func:`group_sums` takes it: its floats (NaN for a missing value)
    and whether those it holds are whole numbers whose sum is exact (|sum| < 2**53)."""
    out = {}
    for name, column in values.items():
        x = (
            column.to_numpy(dtype=np.float64, na_value=np.nan)
            if isinstance(column, pd.Series)
            else np.asarray(column, dtype=np.float64)
        )
        out[name] = (x, whole_numbers(x))
    return out


def whole_numbers(x: NDArray[np.float64]) -> bool:
    """Whether the values ``x`` holds (NaN left out) are whole numbers summing exactly."""
    xs = x[~np.isnan(x)]
    return bool(np.array_equal(xs, np.floor(xs)) and float(np.abs(xs).sum()) < 2.0**53)


def group_sums(
    df: pd.DataFrame, by: list[str], columns: Mapping[str, tuple[NDArray[np.float64], bool]]
) -> pd.DataFrame | None:
    """:func:`group_table` of columns already made floats (:func:`whole_columns`), so a table
    grouped several ways converts and checks its columns once."""
    return sums_by_codes(*group_codes(df, by), columns)


def sums_by_codes(
    codes: NDArray[np.intp],
    labels: pd.DataFrame,
    columns: Mapping[str, tuple[NDArray[np.float64], bool]],
) -> pd.DataFrame | None:
    """:func:`group_sums` by groups already numbered (:func:`group_codes`,
    :func:`group_codes_where`): the key columns are ``labels``'."""
    kept = codes >= 0
    every = bool(kept.all())
    groups = codes if every else codes[kept]
    size = len(labels)
    n = np.bincount(groups, minlength=size)
    means: dict[str, tuple[NDArray[Any], NDArray[Any] | None]] = {}
    for name, (x, whole) in columns.items():
        if not every:  # whole numbers among the kept rows: checked on those
            x = x[kept]
            whole = whole_numbers(x)
        if not whole:
            return None
        seen = ~np.isnan(x)
        full = bool(seen.all())
        at, xs = (groups, x) if full else (groups[seen], x[seen])
        sums = np.bincount(at, weights=xs, minlength=size)
        means[name] = (sums, None if full else np.bincount(at, minlength=size))
    return means_table(labels, n, means)


def means_table(
    labels: pd.DataFrame,
    n: NDArray[np.intp],
    sums: Mapping[str, NDArray[Any] | tuple[NDArray[Any], NDArray[Any] | None]],
) -> pd.DataFrame:
    """The groups' table of :func:`sums_by_codes`: the key columns (``labels``), ``n`` (rows per
    group) and each column's mean, its sum over its count (``(sums, counts)``; counts None or
    sums alone: ``n``)."""
    table: dict[str, Any] = {k: labels[k].array for k in labels.columns}
    table["n"] = n.astype(np.int64)
    for name, summed in sums.items():
        total, counts = summed if isinstance(summed, tuple) else (summed, None)
        with np.errstate(invalid="ignore", divide="ignore"):
            table[name] = total / (n if counts is None else counts)
    return pd.DataFrame(table)


def group_codes(df: pd.DataFrame, by: list[str]) -> tuple[NDArray[np.intp], pd.DataFrame]:
    """Each row's group (-1 where one of its keys is missing, as a groupby leaves it out) and
    the groups' keys, one row per group in sorted order (a groupby's), with the key columns'
    dtypes. Each key column is factorised once, in sorted order; the groups are the distinct
    combinations of those codes, numbered in lexicographic order."""
    return shared(df, ("group_codes", tuple(by)), lambda: _group_codes(df, by))


def sorted_codes(df: pd.DataFrame, k: str) -> tuple[np.ndarray, Any]:
    """``pd.factorize(df[k], sort=True)``, once per frame and column within
    :func:`.sharing.shared_codes`."""
    return shared(df, (SORTED_CODES, k), lambda: pd.factorize(df[k], sort=True))


def group_codes_where(
    df: pd.DataFrame, rows: NDArray[np.bool_], by: list[str]
) -> tuple[NDArray[np.intp], pd.DataFrame]:
    """``group_codes(df[rows], by)`` (``rows`` a boolean mask) without making that frame: from
    ``df``'s own sorted codes of each key column (shared), taken at the rows. A code's order
    among the rows' codes is its value's among the rows' values, so the groups are the same
    and numbered the same."""
    return _group_codes(df, by, np.flatnonzero(rows))


def _group_codes(
    df: pd.DataFrame, by: list[str], where: NDArray[np.intp] | None = None
) -> tuple[NDArray[np.intp], pd.DataFrame]:
    n = len(df) if where is None else len(where)
    combined = np.zeros(n, dtype=np.int64)
    missing = np.zeros(n, dtype=bool)
    bound = 1
    numbered = []
    for k in by:
        codes, uniques = sorted_codes(df, k)
        if where is not None:
            codes = codes[where]
        numbered.append((codes, uniques))
        missing |= codes < 0
        width = max(len(uniques), 1)
        if bound * width > 2**62:  # renumber densely (order kept) so the numbers cannot overflow
            distinct, inverse = np.unique(combined, return_inverse=True)
            combined, bound = inverse.reshape(-1).astype(np.int64), len(distinct)
        combined = combined * width + np.maximum(codes, 0)
        bound *= width
    rows = np.flatnonzero(~missing)
    first, inverse = _distinct(combined[rows], bound)
    out = np.full(n, -1, dtype=np.intp)
    out[rows] = inverse
    labels = _labels(df, by, numbered, rows[first])
    if labels is not None:
        return out, labels
    at = rows[first] if where is None else where[rows[first]]
    return out, df[by].take(at).reset_index(drop=True)


def _labels(
    df: pd.DataFrame, by: list[str], numbered: list[tuple[np.ndarray, Any]], at: np.ndarray
) -> pd.DataFrame | None:
    """The groups' keys, ``df[by]`` at each group's first row (``at``, among the rows
    numbered), from each key's few sorted values at that row's code rather than the frame's
    columns. None where those would be another frame (no key or one twice, another type)."""
    if not by or len(set(by)) != len(by):
        return None
    columns = {
        k: uniques.array.take(codes[at]) for k, (codes, uniques) in zip(by, numbered, strict=True)
    }
    labels = pd.DataFrame(columns)
    if any(labels[k].dtype != df[k].dtype for k in by):
        return None
    return labels


def _distinct(values: NDArray[np.int64], bound: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """``np.unique(values, return_index=True, return_inverse=True)``'s index and inverse:
    each distinct value's first position and each value's rank among them. For values below
    a ``bound`` near their number (the groups' codes), by counting instead of sorting."""
    if bound > 4 * len(values) + 4096:
        _, first, inverse = np.unique(values, return_index=True, return_inverse=True)
        return first, inverse.reshape(-1)
    present = np.bincount(values, minlength=bound) > 0
    rank = np.cumsum(present) - 1
    first = np.full(bound, len(values), dtype=np.intp)
    np.minimum.at(first, values, np.arange(len(values), dtype=np.intp))
    return first[present], rank[values].astype(np.intp, copy=False)


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
