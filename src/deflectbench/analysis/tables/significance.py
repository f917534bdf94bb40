"""The paper's tests and the claims: does the outcome mix differ by model (chi-square), how
much refusal varies by claim, and are the controversy levels equivalent (TOST)."""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from deflectbench.analysis.sharing import shared
from deflectbench.analysis.stats.descriptive import claim_spread
from deflectbench.analysis.stats.hypothesis import (
    TostResult,
    chi2_independence,
    tost_two_proportions,
    tost_two_proportions_clustered,
)
from deflectbench.analysis.tables.grouping import (
    cluster_codes,
    group_codes,
    measure_values,
    outcome_indicators,
    sorted_codes,
    whole_numbers,
)
from deflectbench.vocab import OUTCOMES

__all__ = [
    "chi2_model_outcome",
    "claim_rates",
    "claim_spread_table",
    "claims_by_level",
    "equivalent_pairs",
    "level_tost",
    "outcome_counts",
]


def outcome_counts(scored: pd.DataFrame, by: str = "model") -> pd.DataFrame:
    """Generations per group and outcome (a count table, outcomes in the ladder's order)."""
    if scored.empty:
        return pd.DataFrame(columns=list(OUTCOMES), dtype=np.int64)
    table = pd.crosstab(scored[by], scored["outcome"])
    return table.reindex(columns=list(OUTCOMES), fill_value=0).astype(np.int64)


def outcome_count_matrix(scored: pd.DataFrame, by: str = "model") -> np.ndarray:
    """:func:`outcome_counts` as floats, (groups x outcomes), without the crosstab: the groups
    numbered once (:func:`.grouping.group_codes`, shared, in sorted order as the crosstab's
    rows) and the rows counted by group and outcome. A group whose rows hold no outcome of the
    ladder is a row of zeros here, where the crosstab may leave it out: the chi-square drops
    all-zero rows, so its numbers are the same."""
    if scored.empty:
        return np.zeros((0, len(OUTCOMES)), dtype=np.float64)
    codes, labels = group_codes(scored, [by])
    outcome = outcome_indicators(scored)  # 0/1 per row and outcome
    seen = codes >= 0
    which = np.argmax(outcome, axis=1)
    seen &= outcome[np.arange(len(outcome)), which] > 0  # rows with an outcome of the ladder
    cells = codes[seen] * len(OUTCOMES) + which[seen]
    counts = np.bincount(cells, minlength=len(labels) * len(OUTCOMES))
    return counts.reshape(len(labels), len(OUTCOMES)).astype(np.float64)


def chi2_model_outcome(scored: pd.DataFrame, by: str = "model") -> pd.DataFrame:
    """Pearson chi-square test that the outcome distribution is the same for every model.

    On the model x outcome count table (:func:`outcome_counts`); outcomes no model produced are
    dropped (:func:`stats.chi2_independence`). One row: statistic, dof, p_value, n, cramers_v.
    """
    res = chi2_independence(outcome_count_matrix(scored, by))
    return pd.DataFrame(
        [
            {
                "statistic": res.statistic,
                "dof": res.dof,
                "p_value": res.p_value,
                "n": res.n,
                "cramers_v": res.cramers_v,
            }
        ]
    )


def claim_rates(
    scored: pd.DataFrame, measure: str = "refusal", *, kind: str = "field"
) -> pd.DataFrame:
    """Per claim, one measure's rate pooled over models, templates and samples.

    Pooled means every generation of the claim counts once (with a balanced design this equals
    the mean of the per-model rates). Columns: claim_id, level, context, domain, n, rate.
    Within :func:`.sharing.shared_codes` computed once per scored table (the summary's claim
    rates and its claim spread are the same table).
    """
    return shared(
        scored, ("claim_rates", measure, kind), lambda: _claim_rates(scored, measure, kind)
    )


def _claim_rates(scored: pd.DataFrame, measure: str, kind: str) -> pd.DataFrame:
    columns = ["claim_id", "level", "context", "domain"]
    if scored.empty:
        return pd.DataFrame(columns=[*columns, "n", "rate"])
    values = measure_values(scored, measure, kind)
    counted = _claim_sums(scored, columns, values)
    if counted is not None:
        return counted
    df = scored[columns].copy()
    df["value"] = values
    grouped = df.groupby(columns, sort=True, dropna=False)
    out = grouped["value"].agg(n="count", rate="mean").reset_index()
    return out


def _claim_sums(
    scored: pd.DataFrame, columns: list[str], values: np.ndarray
) -> pd.DataFrame | None:
    """:func:`_claim_rates`' groupby (count and mean of ``values`` per claim) from the shared
    group codes, when no row misses a key (the groupby keeps such rows, ``dropna=False``, where
    the codes leave them out) and the values are whole numbers (summed exactly, so the groupby's
    means); None otherwise."""
    codes, labels = group_codes(scored, columns)
    seen = ~np.isnan(values)
    if bool((codes < 0).any()) or not whole_numbers(values):
        return None
    at = codes[seen]
    n = np.bincount(at, minlength=len(labels))
    with np.errstate(invalid="ignore", divide="ignore"):  # a claim of no value: NaN
        rate = np.bincount(at, weights=values[seen], minlength=len(labels)) / n
    return labels.assign(n=n.astype(np.int64), rate=rate)


def claim_spread_table(
    scored: pd.DataFrame, measure: str = "refusal", *, kind: str = "field"
) -> pd.DataFrame:
    """How much one measure varies by claim: lowest and highest per-claim rate, spread in points.

    The paper: refusal spans 19.3% to 30.3% across the 80 claims (11 points). One row: min,
    max, spread_pp (:func:`stats.claim_spread`), claim_min, claim_max, n_claims.
    """
    rates = claim_rates(scored, measure, kind=kind)
    rates = rates[rates["rate"].notna()]
    if rates.empty:
        return pd.DataFrame(
            columns=["min", "max", "spread_pp", "claim_min", "claim_max", "n_claims"]
        )
    spread = claim_spread(rates["rate"].to_numpy())
    r = rates["rate"].to_numpy()
    return pd.DataFrame(
        [
            {
                "min": spread.min,
                "max": spread.max,
                "spread_pp": spread.spread_pp,
                "claim_min": rates["claim_id"].iloc[int(np.argmin(r))],
                "claim_max": rates["claim_id"].iloc[int(np.argmax(r))],
                "n_claims": len(rates),
            }
        ]
    )


def level_tost(
    scored: pd.DataFrame,
    measure: str = "refusal",
    *,
    kind: str = "field",
    margin: float = 0.05,
    alpha: float = 0.05,
    method: str = "agresti-caffo",
) -> pd.DataFrame:
    """Are the controversy levels' rates equivalent within +-margin? TOST for every pair.

    Method (pooled over models): for levels a < b, diff = p_a - p_b with p the level's rate over
    all its generations. Primary test: two one-sided z-tests with the unpooled SE
    sqrt(p_a(1-p_a)/n_a + p_b(1-p_b)/n_b) (:func:`stats.tost_two_proportions`), by default on
    Agresti-Caffo adjusted counts (one success and one failure added per level, so a level with
    0% refusal in a small run is not "equivalent" with p = 0; ``method="wald"`` for the plain
    Wald test; at the paper's 6,000 generations per level the two agree): equivalent when
    the larger one-sided p-value is below ``alpha``, i.e. the 90% CI (at alpha 0.05) lies inside
    (-margin, margin). That SE treats generations as independent; generations of one claim are
    correlated, so the claim-clustered variant (:func:`stats.tost_two_proportions_clustered`,
    CR1 sandwich SE over claims; the levels' claims are disjoint) is reported alongside as
    ``*_clustered`` (NaN if a level has fewer than two claims, or if every claim of both levels
    has the same rate, so the clustered SE is 0). Missing values are dropped.
    Columns: level_a, level_b, rate_a, rate_b, n_a, n_b, diff, se, ci90_lo, ci90_hi, p_value,
    equivalent, se_clustered, ci90_lo_clustered, ci90_hi_clustered, p_value_clustered,
    equivalent_clustered, margin, alpha, diff_adjusted. ``diff`` is the raw difference of the
    rates; ``diff_adjusted`` the difference the test and its 90% CI are computed on, so the CI's
    centre (the Agresti-Caffo adjusted difference; equal to ``diff`` with ``method="wald"``).
    """
    values = measure_values(scored, measure, kind) if not scored.empty else np.zeros(0)
    levels = scored["level"].to_numpy() if not scored.empty else np.zeros(0)
    claims = _claim_codes(scored) if not scored.empty else np.zeros(0)
    keep = ~np.isnan(values)
    present = sorted({int(v) for v in pd.unique(levels[keep])})
    rows: list[dict[str, Any]] = []
    for a, b in combinations(present, 2):
        ia, ib = keep & (levels == a), keep & (levels == b)
        ya, yb = values[ia], values[ib]
        na, nb = int(ya.size), int(yb.size)
        wald = tost_two_proportions(
            int(ya.sum()), na, int(yb.sum()), nb, margin=margin, alpha=alpha, method=method
        )
        try:
            cl: TostResult | None = tost_two_proportions_clustered(
                ya, claims[ia], yb, claims[ib], margin=margin, alpha=alpha
            )
        except ValueError:
            cl = None
        if cl is not None and cl.se == 0:
            cl = None  # no between-claim variation at all: the clustered test says nothing
        rows.append(
            {
                "level_a": a,
                "level_b": b,
                "rate_a": float(ya.mean()),
                "rate_b": float(yb.mean()),
                "n_a": na,
                "n_b": nb,
                "diff": wald.diff,
                "se": wald.se,
                "ci90_lo": wald.ci90[0],
                "ci90_hi": wald.ci90[1],
                "p_value": wald.p_value,
                "equivalent": wald.equivalent,
                "se_clustered": cl.se if cl else math.nan,
                "ci90_lo_clustered": cl.ci90[0] if cl else math.nan,
                "ci90_hi_clustered": cl.ci90[1] if cl else math.nan,
                "p_value_clustered": cl.p_value if cl else math.nan,
                "equivalent_clustered": cl.equivalent if cl else None,
                "margin": margin,
                "alpha": alpha,
                "diff_adjusted": (wald.ci90[0] + wald.ci90[1]) / 2,
            }
        )
    columns = ["level_a", "level_b", "rate_a", "rate_b", "n_a", "n_b", "diff", "se", "ci90_lo"]
    columns += ["ci90_hi", "p_value", "equivalent", "se_clustered", "ci90_lo_clustered"]
    columns += ["ci90_hi_clustered", "p_value_clustered", "equivalent_clustered", "margin", "alpha"]
    columns += ["diff_adjusted"]
    return pd.DataFrame(rows, columns=columns)


def _claim_codes(scored: pd.DataFrame) -> np.ndarray:
    """:func:`.grouping.cluster_codes` of the claims: their sorted codes (shared within
    :func:`.sharing.shared_codes`), or the labels themselves where one is missing."""
    codes = sorted_codes(scored, "claim_id")[0]
    return cluster_codes(scored["claim_id"]) if bool((codes < 0).any()) else codes


def claims_by_level(claims: pd.DataFrame) -> pd.DataFrame:
    """Per controversy level, the mean of its claims' rates (each claim once) and how many claims.

    ``claims`` is :func:`claim_rates`; claims without a rate are left out. Columns: level,
    n_claims, mean_rate.
    """
    data = claims[claims["rate"].notna()] if len(claims) else claims
    if data.empty:
        return pd.DataFrame(columns=["level", "n_claims", "mean_rate"])
    rate = data["rate"].to_numpy(dtype=np.float64)
    level = data["level"].to_numpy()
    rows = [
        {
            "level": int(lv),
            "n_claims": int((level == lv).sum()),
            "mean_rate": float(np.mean(rate[level == lv])),
        }
        for lv in sorted(int(v) for v in pd.unique(level))
    ]
    return pd.DataFrame(rows, columns=["level", "n_claims", "mean_rate"])


def equivalent_pairs(tost: pd.DataFrame) -> int:
    """How many level pairs of :func:`level_tost` are equivalent (the unclustered test)."""
    return int(sum(1 for v in tost["equivalent"].tolist() if v)) if len(tost) else 0
