"""Rates and framing effects: each model's signature with CIs, rates by any grouping, the
appendix E tables, Cohen's h between framings, and the model x framing matrices.

Inputs are scored tables (:mod:`.scored`); rates are fractions in [0, 1] (:mod:`.grouping`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, partial
from typing import Any

import numpy as np
import pandas as pd

from deflectbench.analysis.sharing import shared
from deflectbench.analysis.stats.bootstrap import (
    BootstrapCIs,
    block_bootstrap_many,
    check_draws,
    cluster_bootstrap,
    resample_weights,
)
from deflectbench.analysis.tables.grouping import (
    OUTCOME_COLUMNS,
    cluster_codes,
    cohens_h,
    framing_rows,
    group_codes,
    group_means,
    group_table,
    keys_of,
    means_table,
    measure_values,
    outcome_indicators,
    rows_of_groups,
    sort_framings,
    sorted_codes,
    sums_by_codes,
    whole_columns,
    with_outcomes,
)
from deflectbench.vocab import FALLACY_FIELDS, FIELDS, FRAMINGS, OUTCOMES

__all__ = [
    "DEFAULT_COMPARISONS",
    "H_MEASURES",
    "FramingSwing",
    "coach_labeling",
    "coach_outcomes",
    "cohens_h_table",
    "fallacy_by_framing",
    "framing_h_matrix",
    "framing_matrix",
    "framing_outcomes",
    "largest_swing",
    "present_framings",
    "rates_by",
    "rates_with_ci",
    "template_table",
]

#: Framing comparisons reported as Cohen's h (first minus second).
DEFAULT_COMPARISONS: tuple[tuple[str, str], ...] = (
    ("coach", "manipulation"),
    ("coach", "direct"),
    ("political", "direct"),
)
#: Outcomes whose shares the framing effects are reported for.
H_MEASURES: tuple[str, ...] = ("refusal", "labeled_compliance", "clean_compliance")


def rates_with_ci(
    scored: pd.DataFrame,
    *,
    by: str | Sequence[str] = "model",
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    cluster: str = "claim_id",
) -> pd.DataFrame:
    """Per group, the rate of each of the 8 fields and 5 outcomes with a block-bootstrap CI.

    Claims are the resampled units (:func:`stats.block_bootstrap_many`, percentile interval),
    because a claim's 75 generations per model are not independent. One call per group covers
    all 13 columns, so they share the draws; every group uses the same ``seed``, hence the same
    claim draws when groups share claims (a paired design). Long format: the group columns,
    ``kind`` (field / outcome), ``measure``, ``rate``, ``ci_lo``, ``ci_hi``, ``n`` (rows with a
    value), ``n_clusters``.
    """
    keys = keys_of(by)
    kinds = ["field"] * len(FIELDS) + ["outcome"] * len(OUTCOMES)
    names = [*FIELDS, *OUTCOMES]
    rows: list[dict[str, Any]] = []
    if scored.empty:
        return pd.DataFrame(
            columns=[*keys, "kind", "measure", "rate", "ci_lo", "ci_hi", "n", "n_clusters"]
        )
    # A groupby's groups (sorted, a missing key leaving its row out), each group's rows in the
    # table's order: numbered once (shared with the other tables), the matrix built once.
    codes, labels_of = group_codes(scored, keys) if keys else (np.zeros(len(scored), np.intp), None)
    groups = labels_of.to_dict(orient="records") if labels_of is not None else [{}]
    parts = rows_of_groups(codes, len(groups))
    fields = scored[list(FIELDS)].to_numpy(dtype=np.float64, na_value=np.nan)
    whole = np.hstack([fields, outcome_indicators(scored)])
    claims = scored[cluster]
    # a claim's number among the group's claims, in sorted order (as cluster_codes numbers the
    # group's own labels): its rank among all claims (shared), renumbered densely within the group
    numbered = sorted_codes(scored, cluster)[0]
    ranked = None if bool((numbered < 0).any()) else numbered  # None: a label missing
    summed = (
        _claim_sums(scored, codes, len(groups), numbered, cluster) if ranked is not None else None
    )
    if summed is not None:
        check_draws(n_resamples, level)
        # every group draws from the same seed: as many claims, the same draws' weights
        weights_of = cache(partial(resample_weights, n_resamples=n_resamples, seed=seed))
    for g, labels in enumerate(groups):
        if summed is not None:  # the group's claims' sums, in sorted order: the bootstrap's
            per_cluster = summed[g]
            res = cluster_bootstrap(per_cluster, weights_of(len(per_cluster)), level)
            n_obs = per_cluster[:, res.rate.size :].sum(axis=0)
            rows.extend(_ci_rows(labels, kinds, names, res, n_obs, len(per_cluster)))
            continue
        rows_g = parts[g]
        matrix = whole[rows_g]
        if ranked is not None:
            clusters = np.unique(ranked[rows_g], return_inverse=True)[1].reshape(-1)
        else:
            clusters = cluster_codes(claims.iloc[rows_g])
        res = block_bootstrap_many(
            matrix, clusters, n_resamples=n_resamples, seed=seed, level=level
        )
        n_obs = (~np.isnan(matrix)).sum(axis=0)
        n_clusters = int(pd.unique(clusters).size)
        rows.extend(_ci_rows(labels, kinds, names, res, n_obs, n_clusters))
    return pd.DataFrame(rows)


def _ci_rows(
    labels: dict[str, Any],
    kinds: list[str],
    names: list[str],
    res: BootstrapCIs,
    n_obs: np.ndarray,
    n_clusters: int,
) -> list[dict[str, Any]]:
    """A group's rows of :func:`rates_with_ci`, one per measure."""
    return [
        {
            **labels,
            "kind": kind,
            "measure": name,
            "rate": float(res.rate[j]),
            "ci_lo": float(res.lo[j]),
            "ci_hi": float(res.hi[j]),
            "n": int(n_obs[j]),
            "n_clusters": n_clusters,
        }
        for j, (kind, name) in enumerate(zip(kinds, names, strict=True))
    ]


def _claim_sums(
    scored: pd.DataFrame, codes: np.ndarray, n_groups: int, claims: np.ndarray, cluster: str
) -> list[np.ndarray] | None:
    """Per group, its claims' sums of the 13 rate columns and their rows, [sums | counts]
    (claims x 26, the group's claims in sorted order): the bootstrap's per-cluster sums, from
    the cells' sums (:func:`_cell_sums`, shared with :func:`rates_by`) where each group and
    claim is whole cells, where the rows, their matrix and their claims' numbering were made
    again for each group. Whole numbers with none missing, so the same exact sums; None
    otherwise (a claim or key missing, a group splitting a cell)."""
    cells = _cell_sums(scored, [*FIELDS, *OUTCOME_COLUMNS]) if cluster in CELL_KEYS else None
    if cells is None or not len(claims):
        return None
    cell_of, member, sums = cells
    group_of = codes[member]  # each cell's group, by one of its rows
    if not (bool((group_of >= 0).all()) and np.array_equal(group_of[cell_of], codes)):
        return None
    n_claims = int(claims.max()) + 1
    pair = group_of * n_claims + claims[member]  # each cell's group and claim
    size, k = n_groups * n_claims, sums.shape[1]
    flat = (pair[:, None] * k + np.arange(k)).ravel()
    totals = np.bincount(flat, weights=sums.ravel(), minlength=size * k)
    per_cell = np.bincount(cell_of, minlength=len(member))
    n_rows = np.bincount(pair, weights=per_cell, minlength=size).reshape(n_groups, n_claims)
    totals = totals.reshape(n_groups, n_claims, k)
    out = []
    for g in range(n_groups):
        held = n_rows[g] > 0
        counts = np.repeat(n_rows[g][held][:, None], k, axis=1)
        out.append(np.hstack([totals[g][held], counts]))
    return out


def rates_by(scored: pd.DataFrame, by: str | Sequence[str]) -> pd.DataFrame:
    """Per group: n, the rate of each field, and each outcome's share (``outcome_<name>``).

    E.g. ``rates_by(scored, ["model", "framing"])`` is the per-framing signature of each model.
    """
    keys = keys_of(by)
    columns = [*FIELDS, *OUTCOME_COLUMNS]
    if scored.empty:
        return pd.DataFrame(columns=[*keys, "n", *columns])
    table = _rates_table(scored, keys, columns) if keys else None
    if table is None:  # no groups, or values not whole numbers: pandas' means
        table = group_means(with_outcomes(scored), keys, columns)
    return sort_framings(table)


#: The cells of the scored table: each table by model, framing, template, level or context
#: groups whole cells (a template's framing and a claim's level are the cell's).
CELL_KEYS = ["model", "claim_id", "prompt_id"]


def _rates_table(scored: pd.DataFrame, keys: list[str], columns: list[str]) -> pd.DataFrame | None:
    """:func:`.grouping.group_sums` of the rate columns. When every cell's rows lie in one
    group, the groups' sums are their cells' (:func:`_cell_sums`, once per scored table), a
    few thousand rows instead of every generation: whole numbers, so the same exact sums."""
    values = _rate_columns(scored, columns)
    codes, labels = group_codes(scored, keys)
    cells = _cell_sums(scored, columns)
    if cells is not None:
        cell_of, member, sums = cells
        group_of = codes[member]  # each cell's group, by one of its rows
        if bool((group_of >= 0).all()) and np.array_equal(group_of[cell_of], codes):
            m = sums.shape[1]
            flat = (group_of[:, None] * m + np.arange(m)).ravel()
            size = len(labels)
            totals = np.bincount(flat, weights=sums.ravel(), minlength=size * m).reshape(size, m)
            n = np.bincount(codes, minlength=size)
            return means_table(labels, n, dict(zip(columns, totals.T, strict=True)))
    return sums_by_codes(codes, labels, values)


def _cell_sums(
    scored: pd.DataFrame, columns: list[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Each row's cell (:data:`CELL_KEYS`), one row of each cell, and each cell's sums of the
    rate columns (cells x columns); once per scored table within
    :func:`.sharing.shared_codes`. None when a cell key is missing (as a column or in a row)
    or a column is not whole numbers without NaN."""

    def compute() -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        values = _rate_columns(scored, columns)
        if any(k not in scored for k in CELL_KEYS):
            return None
        if not all(whole and not np.isnan(x).any() for x, whole in values.values()):
            return None
        cell_of, cells = group_codes(scored, CELL_KEYS)
        if bool((cell_of < 0).any()):
            return None
        member = np.zeros(len(cells), dtype=np.intp)
        member[cell_of] = np.arange(len(cell_of))  # a row of each cell, whichever
        x = np.column_stack([x for x, _ in values.values()])
        m = x.shape[1]
        flat = (cell_of[:, None] * m + np.arange(m)).ravel()
        sums = np.bincount(flat, weights=x.ravel(), minlength=len(cells) * m)
        return cell_of, member, sums.reshape(len(cells), m)

    return shared(scored, ("cell_sums", tuple(columns)), compute)


def _rate_columns(
    scored: pd.DataFrame, columns: Sequence[str]
) -> dict[str, tuple[np.ndarray, bool]]:
    """:func:`_rate_values` as floats, checked (:func:`.grouping.whole_columns`): once per
    scored table within :func:`.grouping.shared_codes` however many ways it is grouped."""
    return shared(
        scored,
        ("rate_columns", tuple(columns)),
        lambda: whole_columns(_rate_values(scored, columns)),
    )


def _rate_values(scored: pd.DataFrame, columns: Sequence[str]) -> dict[str, Any]:
    """``columns`` of :func:`.grouping.with_outcomes` (fields and ``outcome_<name>`` shares),
    without copying the scored table."""
    shares = outcome_indicators(scored)
    outcomes = {c: shares[:, i] for i, c in enumerate(OUTCOME_COLUMNS)}
    return {c: outcomes[c] if c in outcomes else scored[c] for c in columns}


def template_table(scored: pd.DataFrame) -> pd.DataFrame:
    """Appendix E.1: per model and template (prompt_id), field rates and outcome shares.

    Templates are listed in the paper's framing order, then by id.
    """
    keys = ["model", "framing", "prompt_id", "fallacy_requested"]
    return rates_by(scored, keys)


def fallacy_by_framing(scored: pd.DataFrame) -> pd.DataFrame:
    """Appendix E.2: per model and framing, the rate of any fallacy and of each of WA, AH, RH."""
    columns = ["any_fallacy_present", *FALLACY_FIELDS]
    if scored.empty:
        return pd.DataFrame(columns=["model", "framing", "n", *columns])
    return sort_framings(group_means(scored, ["model", "framing"], columns))


def coach_labeling(scored: pd.DataFrame) -> pd.DataFrame:
    """Appendix E.3: coach framing, per model and requested fallacy: labeled vs clean.

    Columns: n, ``fallacy_labeled`` and ``compliance_clean`` (field rates), and the outcome
    shares ``outcome_labeled_compliance``, ``outcome_clean_compliance``, ``outcome_refusal``
    (the paper's "refusal at most 0.6%, labeled 89.2% to 99.1%" under coaching).
    """
    columns = [
        "fallacy_labeled",
        "compliance_clean",
        "outcome_labeled_compliance",
        "outcome_clean_compliance",
        "outcome_refusal",
    ]
    coach = framing_rows(scored, "coach")
    if coach.empty:
        return pd.DataFrame(columns=["model", "fallacy_requested", "n", *columns])
    keys = ["model", "fallacy_requested"]
    table = group_table(coach, keys, _rate_values(coach, columns))
    return sort_framings(
        table if table is not None else group_means(with_outcomes(coach), keys, columns)
    )


def coach_outcomes(scored: pd.DataFrame) -> pd.DataFrame:
    """Appendix E.3 in full: coach framing, per model and requested fallacy, n and all five
    outcome shares (columns named by the outcomes), for the coach figure and its table."""
    keys = ["model", "fallacy_requested"]
    coach = framing_rows(scored, "coach") if len(scored) else scored
    counted = _outcome_shares(coach, keys) if len(coach) else None
    if counted is not None:
        return counted
    if coach.empty:
        out = pd.DataFrame(columns=[*keys, "n", *OUTCOMES])
    else:
        counts = coach.groupby([*keys, "outcome"], sort=True).size().unstack(fill_value=0)
        counts = counts.reindex(columns=list(OUTCOMES), fill_value=0)
        n = counts.sum(axis=1)
        out = counts.div(n, axis=0)
        out.insert(0, "n", n)
        out.columns.name = None
        out = out.reset_index()
    return out.sort_values(keys, kind="stable").reset_index(drop=True)


def _outcome_shares(coach: pd.DataFrame, keys: list[str]) -> pd.DataFrame | None:
    """:func:`coach_outcomes`' table (its groupby's counts by keys and outcome, shares of the
    group's) from the shared group codes (:func:`coach_labeling`'s) and outcome indicators:
    its groups are in sorted order already. None when a row misses a key or has an outcome off
    the ladder (the groupby's groups and columns differ for those)."""
    codes, labels = group_codes(coach, keys)
    indicators = outcome_indicators(coach)
    which = np.argmax(indicators, axis=1)
    on_ladder = indicators[np.arange(len(which)), which] == 1
    if bool((codes < 0).any()) or not bool(on_ladder.all()):
        return None
    k = len(OUTCOMES)
    counts = np.bincount(codes * k + which, minlength=len(labels) * k).reshape(-1, k)
    n = counts.sum(axis=1)
    table: dict[str, Any] = {c: labels[c].array for c in keys}
    table["n"] = n
    for j, o in enumerate(OUTCOMES):
        table[o] = counts[:, j] / n
    return pd.DataFrame(table)


def cohens_h_table(
    scored: pd.DataFrame,
    *,
    comparisons: Sequence[tuple[str, str]] = DEFAULT_COMPARISONS,
    measures: Sequence[str] = H_MEASURES,
    kind: str = "outcome",
    by: str | Sequence[str] = "model",
) -> pd.DataFrame:
    """Framing effects: Cohen's h between two framings' rates, per model.

    h = 2 asin sqrt(p_first) - 2 asin sqrt(p_second) (:func:`stats.cohens_h`), so a positive h
    means the first framing has the higher rate. ``measures`` are outcome shares by default
    (refusal, labeled compliance, clean compliance); ``kind="field"`` uses field rates. A
    framing absent from a model's data gives NaN. Columns: the group columns, comparison
    (``first_vs_second``), first, second, measure, p_first, p_second, n_first, n_second, h.
    """
    keys = keys_of(by)
    rows: list[dict[str, Any]] = []
    used = [*keys, "framing", "outcome", *(m for m in measures if kind == "field" and m in scored)]
    scored[list(dict.fromkeys(used))]  # a KeyError as before when a column is missing
    if scored.empty:
        groups: list[dict[str, Any]] = []
    elif keys:  # a groupby's groups, numbered once (shared with the other tables)
        codes, labels_of = group_codes(scored, keys)
        groups = labels_of.to_dict(orient="records")
    else:
        codes, groups = np.zeros(len(scored), dtype=np.intp), [{}]
    if groups:
        parts = rows_of_groups(codes, len(groups))
        framing_codes, framing_names = sorted_codes(scored, "framing")
        code_of = {f: i for i, f in enumerate(framing_names.tolist())}
        values_of = {m: measure_values(scored, m, kind) for m in measures}
    for g, labels in enumerate(groups):
        part = parts[g]  # the group's rows in the table's order
        framing = framing_codes[part]  # each framing by its code: -1 (missing) is none of them
        for measure in measures:
            values = values_of[measure][part]
            for first, second in comparisons:
                a = values[framing == code_of.get(first, -2)]
                b = values[framing == code_of.get(second, -2)]
                pa = float(np.nanmean(a)) if np.isfinite(a).any() else math.nan
                pb = float(np.nanmean(b)) if np.isfinite(b).any() else math.nan
                rows.append(
                    {
                        **labels,
                        "comparison": f"{first}_vs_{second}",
                        "first": first,
                        "second": second,
                        "measure": measure,
                        "p_first": pa,
                        "p_second": pb,
                        "n_first": int(np.isfinite(a).sum()),
                        "n_second": int(np.isfinite(b).sum()),
                        "h": cohens_h(pa, pb),
                    }
                )
    columns = [*keys, "comparison", "first", "second", "measure", "p_first", "p_second"]
    return pd.DataFrame(rows, columns=[*columns, "n_first", "n_second", "h"])


def framing_h_matrix(
    scored: pd.DataFrame, measure: str = "refusal", *, kind: str = "outcome"
) -> pd.DataFrame:
    """Cohen's h for every pair of framings: cell (row, col) = h(p_row) - h(p_col).

    Pools whatever rows it is given: filter ``scored`` to one model for that model's matrix.
    Framings in the paper's order, only those present. Antisymmetric with a zero diagonal.
    """
    values = measure_values(scored, measure, kind)
    codes, names = pd.factorize(scored["framing"])  # each framing compared once, as a code
    if (codes < 0).any():  # a missing framing: compared as values, as it always was
        framing = scored["framing"].to_numpy()
        present = [f for f in FRAMINGS if (framing == f).any()]
        present += sorted(set(framing.tolist()) - set(FRAMINGS))
        rates = {f: float(np.nanmean(values[framing == f])) for f in present}
    else:
        code_of = {f: i for i, f in enumerate(names.tolist())}
        present = [f for f in FRAMINGS if f in code_of]
        present += sorted(set(code_of) - set(FRAMINGS))
        rates = {f: float(np.nanmean(values[codes == code_of[f]])) for f in present}
    matrix = [[cohens_h(rates[r], rates[c]) for c in present] for r in present]
    return pd.DataFrame(
        matrix, index=pd.Index(present, name="framing"), columns=present, dtype=float
    )


def present_framings(scored: pd.DataFrame) -> list[str]:
    """The framings the scored table holds: the paper's order, then any others by name."""
    seen = set(scored["framing"].dropna().unique().tolist()) if len(scored) else set()
    return [f for f in FRAMINGS if f in seen] + sorted(seen - set(FRAMINGS))


def framing_matrix(
    by_framing: pd.DataFrame, models: Sequence[str], framings: Sequence[str], measure: str
) -> pd.DataFrame:
    """Model x framing rate of one measure, from ``rates_by(scored, ["model", "framing"])``
    (NaN where a model has no generation under a framing)."""
    lookup = {
        (r["model"], r["framing"]): r[measure]
        for r in by_framing[["model", "framing", measure]].to_dict(orient="records")
    }
    data = {f: [_num(lookup.get((m, f))) for m in models] for f in framings}
    return pd.DataFrame(data, index=pd.Index(list(models), name="model"), dtype=float)


@dataclass(frozen=True)
class FramingSwing:
    """The model whose rate moves most between two framings: from ``low`` to ``high``."""

    model: str
    high: str
    low: str
    rate_high: float
    rate_low: float
    swing: float


def largest_swing(matrix: pd.DataFrame) -> FramingSwing | None:
    """The model whose rate moves most between two framings (max minus min), or None."""
    best: FramingSwing | None = None
    for model, row in matrix.iterrows():
        row = row.dropna()
        if len(row) < 2:
            continue
        hi, lo = str(row.idxmax()), str(row.idxmin())
        swing = float(row[hi] - row[lo])
        if best is None or swing > best.swing:
            best = FramingSwing(str(model), hi, lo, float(row[hi]), float(row[lo]), swing)
    return best


def framing_outcomes(scored: pd.DataFrame | None) -> dict[str, list[dict[str, Any]]]:
    """Per model, one row per framing (in the paper's order) with outcome shares and n."""
    if scored is None or scored.empty:
        return {}
    out: dict[str, list[dict[str, Any]]] = {}
    for model, sub in scored.groupby("model", sort=True):
        rows = []
        for framing in [*FRAMINGS, "all"]:
            part = sub if framing == "all" else sub[sub["framing"] == framing]
            if part.empty:
                continue
            shares = part["outcome"].value_counts(normalize=True)
            rows.append(
                {
                    "framing": framing,
                    "n": len(part),
                    **{o: float(shares.get(o, 0.0)) for o in OUTCOMES},
                }
            )
        out[str(model)] = rows
    return out


def _num(x: Any) -> float:
    return math.nan if x is None else float(x)
