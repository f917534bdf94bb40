"""The paper's tables as pure functions: a scored (or verdict) DataFrame in, a DataFrame out.

Inputs are the frames of :mod:`deflectbench.analysis.scored`: the *scored* table (one row per
scored generation: model, claim_id, prompt_id, sample, level, framing, fallacy_requested,
output_tokens, the 8 consensus fields, outcome) and, for agreement, the *verdict* table (one row
per generation and judge). The statistics themselves live in :mod:`.stats`; this module only
chooses the rows and groups, so each table can be checked against a hand count.

Conventions: rates are fractions in [0, 1]; a field's rate is the mean of its consensus values
(NaN, a field no judge scored, is left out); an outcome's rate is its share of the group's
generations. Wide tables name fields by the release's names (``refusal``, ``WA_present``, ...)
and outcome shares with an ``outcome_`` prefix (``outcome_refusal``), since ``refusal`` and
``soft_refusal`` are both a field and an outcome (equal for refusal, not for soft refusal: the
soft-refusal outcome excludes refusals). Grouping columns come first, as plain columns; framings
are ordered as in the paper (direct ... implicit_political).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from deflectbench.analysis import stats
from deflectbench.vocab import FALLACY_FIELDS, FIELDS, FRAMINGS, OUTCOMES

__all__ = [
    "DEFAULT_COMPARISONS",
    "FALLACY_FIELD",
    "FREE_CHOICE_FRAMINGS",
    "H_MEASURES",
    "agreement_table",
    "chi2_model_outcome",
    "claim_rates",
    "claim_spread_table",
    "coach_labeling",
    "cohens_h_table",
    "fallacy_by_framing",
    "fallacy_density_by_model",
    "framing_h_matrix",
    "framing_outcomes",
    "free_choice_preferences",
    "level_tost",
    "outcome_counts",
    "output_tokens_by_outcome",
    "rates_by",
    "rates_with_ci",
    "requested_match",
    "run_refusal_counts",
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
#: The rubric field that says a requested fallacy was produced.
FALLACY_FIELD: dict[str, str] = {
    "whataboutism": "WA_present",
    "ad_hominem": "AH_present",
    "red_herring": "RH_present",
}
#: Framings where the model picks the fallacy itself.
FREE_CHOICE_FRAMINGS: tuple[str, ...] = ("choose", "implicit_neutral", "implicit_political")
OUTCOME_COLUMNS: tuple[str, ...] = tuple(f"outcome_{o}" for o in OUTCOMES)


# --------------------------------------------------------------------------- helpers


def _keys(by: str | Sequence[str] | None) -> list[str]:
    if by is None:
        return []
    return [by] if isinstance(by, str) else list(by)


def _outcome_indicators(scored: pd.DataFrame) -> np.ndarray:
    """(n x 5) 0/1 matrix: row i has a 1 in its outcome's column."""
    out = scored["outcome"].to_numpy()
    return np.stack([out == o for o in OUTCOMES], axis=1).astype(np.float64)


def _with_outcomes(scored: pd.DataFrame) -> pd.DataFrame:
    """The scored table plus one 0/1 column per outcome (``outcome_<name>``)."""
    ind = pd.DataFrame(
        _outcome_indicators(scored), columns=list(OUTCOME_COLUMNS), index=scored.index
    )
    return pd.concat([scored, ind], axis=1)


def _sort_framings(df: pd.DataFrame) -> pd.DataFrame:
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


def _group_means(df: pd.DataFrame, by: list[str], columns: list[str]) -> pd.DataFrame:
    """Per group: n (rows) and the mean of each column (NaN skipped)."""
    if not by:
        row = {"n": len(df), **{c: float(df[c].mean()) if len(df) else math.nan for c in columns}}
        return pd.DataFrame([row])
    grouped = df.groupby(by, sort=True, observed=True)
    out = grouped[columns].mean()
    out.insert(0, "n", grouped.size())
    return out.reset_index()


def _h(p1: float, p2: float) -> float:
    if any(isinstance(p, float) and math.isnan(p) for p in (p1, p2)):
        return math.nan
    return stats.cohens_h(float(p1), float(p2))


def _measure_values(scored: pd.DataFrame, measure: str, kind: str) -> np.ndarray:
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


# --------------------------------------------------------------------------- rates


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
    keys = _keys(by)
    kinds = ["field"] * len(FIELDS) + ["outcome"] * len(OUTCOMES)
    names = [*FIELDS, *OUTCOMES]
    rows: list[dict[str, Any]] = []
    if scored.empty:
        return pd.DataFrame(
            columns=[*keys, "kind", "measure", "rate", "ci_lo", "ci_hi", "n", "n_clusters"]
        )
    for group, sub in scored.groupby(keys, sort=True) if keys else [((), scored)]:
        fields = sub[list(FIELDS)].to_numpy(dtype=np.float64, na_value=np.nan)
        matrix = np.hstack([fields, _outcome_indicators(sub)])
        clusters = sub[cluster].to_numpy()
        res = stats.block_bootstrap_many(
            matrix, clusters, n_resamples=n_resamples, seed=seed, level=level
        )
        n_obs = (~np.isnan(matrix)).sum(axis=0)
        n_clusters = int(pd.unique(clusters).size)
        labels = dict(zip(keys, group if isinstance(group, tuple) else (group,), strict=True))
        for j, (kind, name) in enumerate(zip(kinds, names, strict=True)):
            rows.append(
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
            )
    return pd.DataFrame(rows)


def rates_by(scored: pd.DataFrame, by: str | Sequence[str]) -> pd.DataFrame:
    """Per group: n, the rate of each field, and each outcome's share (``outcome_<name>``).

    E.g. ``rates_by(scored, ["model", "framing"])`` is the per-framing signature of each model.
    """
    keys = _keys(by)
    columns = [*FIELDS, *OUTCOME_COLUMNS]
    if scored.empty:
        return pd.DataFrame(columns=[*keys, "n", *columns])
    return _sort_framings(_group_means(_with_outcomes(scored), keys, columns))


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
    return _sort_framings(_group_means(scored, ["model", "framing"], columns))


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
    coach = scored[scored["framing"] == "coach"]
    if coach.empty:
        return pd.DataFrame(columns=["model", "fallacy_requested", "n", *columns])
    return _sort_framings(
        _group_means(_with_outcomes(coach), ["model", "fallacy_requested"], columns)
    )


# --------------------------------------------------------------------------- agreement


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
    every pair gets its rows. ``by="model"`` repeats this per generating model. Kappa and AC1
    are reported together because a rare or near-universal label (prevalence skew) drives
    kappa down while AC1 and disagreement stay good. Columns: the group columns, judge_a,
    judge_b, field, kappa, ac1, disagreement, n.
    """
    keys = _keys(by)
    columns = [*keys, "judge_a", "judge_b", "field", "kappa", "ac1", "disagreement", "n"]
    if verdicts.empty:
        return pd.DataFrame(columns=columns)
    judges = sorted(verdicts["judge"].unique().tolist())
    wide = verdicts.pivot(index="gen_id", columns="judge", values=list(fields))
    attrs = verdicts.drop_duplicates("gen_id").set_index("gen_id")[keys] if keys else None
    rows: list[dict[str, Any]] = []
    for a, b in combinations(judges, 2):
        pair = pd.DataFrame(
            {
                **{f"{f}|a": wide[(f, a)] for f in fields},
                **{f"{f}|b": wide[(f, b)] for f in fields},
            }
        )
        if attrs is not None:
            pair = pair.join(attrs)
        groups = pair.groupby(keys, sort=True) if keys else [((), pair)]
        for group, sub in groups:
            labels = dict(zip(keys, group if isinstance(group, tuple) else (group,), strict=True))
            for f in fields:
                x = sub[f"{f}|a"].to_numpy(dtype=np.float64)
                y = sub[f"{f}|b"].to_numpy(dtype=np.float64)
                both = ~np.isnan(x) & ~np.isnan(y)
                ag = stats.agreement(x[both].astype(np.int64), y[both].astype(np.int64))
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
    return pd.DataFrame(rows, columns=columns)


# --------------------------------------------------------------------------- framing effects


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
    keys = _keys(by)
    rows: list[dict[str, Any]] = []
    groups = scored.groupby(keys, sort=True) if keys and not scored.empty else [((), scored)]
    for group, sub in groups:
        if sub.empty:
            continue
        labels = dict(zip(keys, group if isinstance(group, tuple) else (group,), strict=True))
        framing = sub["framing"].to_numpy()
        for measure in measures:
            values = _measure_values(sub, measure, kind)
            for first, second in comparisons:
                a, b = values[framing == first], values[framing == second]
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
                        "h": _h(pa, pb),
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
    values = _measure_values(scored, measure, kind)
    framing = scored["framing"].to_numpy()
    present = [f for f in FRAMINGS if (framing == f).any()]
    present += sorted(set(framing.tolist()) - set(FRAMINGS))
    rates = {f: float(np.nanmean(values[framing == f])) for f in present}
    matrix = [[_h(rates[r], rates[c]) for c in present] for r in present]
    out = pd.DataFrame(
        matrix, index=pd.Index(present, name="framing"), columns=present, dtype=float
    )
    return out


# --------------------------------------------------------------------------- tests


def outcome_counts(scored: pd.DataFrame, by: str = "model") -> pd.DataFrame:
    """Generations per group and outcome (a count table, outcomes in the ladder's order)."""
    if scored.empty:
        return pd.DataFrame(columns=list(OUTCOMES), dtype=np.int64)
    table = pd.crosstab(scored[by], scored["outcome"])
    return table.reindex(columns=list(OUTCOMES), fill_value=0).astype(np.int64)


def chi2_model_outcome(scored: pd.DataFrame, by: str = "model") -> pd.DataFrame:
    """Pearson chi-square test that the outcome distribution is the same for every model.

    On the model x outcome count table (:func:`outcome_counts`); outcomes no model produced are
    dropped (:func:`stats.chi2_independence`). One row: statistic, dof, p_value, n, cramers_v.
    """
    counts = outcome_counts(scored, by).to_numpy(dtype=np.float64).reshape(-1, len(OUTCOMES))
    res = stats.chi2_independence(counts)
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
    """
    columns = ["claim_id", "level", "context", "domain"]
    if scored.empty:
        return pd.DataFrame(columns=[*columns, "n", "rate"])
    df = scored[columns].copy()
    df["value"] = _measure_values(scored, measure, kind)
    grouped = df.groupby(columns, sort=True, dropna=False)
    out = grouped["value"].agg(n="count", rate="mean").reset_index()
    return out


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
    spread = stats.claim_spread(rates["rate"].to_numpy())
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
    equivalent_clustered, margin, alpha.
    """
    values = _measure_values(scored, measure, kind) if not scored.empty else np.zeros(0)
    levels = scored["level"].to_numpy() if not scored.empty else np.zeros(0)
    claims = scored["claim_id"].to_numpy() if not scored.empty else np.zeros(0)
    keep = ~np.isnan(values)
    present = sorted({int(v) for v in pd.unique(levels[keep])})
    rows: list[dict[str, Any]] = []
    for a, b in combinations(present, 2):
        ia, ib = keep & (levels == a), keep & (levels == b)
        ya, yb = values[ia], values[ib]
        na, nb = int(ya.size), int(yb.size)
        wald = stats.tost_two_proportions(
            int(ya.sum()), na, int(yb.sum()), nb, margin=margin, alpha=alpha, method=method
        )
        try:
            cl: stats.TostResult | None = stats.tost_two_proportions_clustered(
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
            }
        )
    columns = ["level_a", "level_b", "rate_a", "rate_b", "n_a", "n_b", "diff", "se", "ci90_lo"]
    columns += ["ci90_hi", "p_value", "equivalent", "se_clustered", "ci90_lo_clustered"]
    columns += ["ci90_hi_clustered", "p_value_clustered", "equivalent_clustered", "margin", "alpha"]
    return pd.DataFrame(rows, columns=columns)


# --------------------------------------------------------------------------- appendix F, G


def run_refusal_counts(scored: pd.DataFrame, runs_per_cell: int = 5) -> pd.DataFrame:
    """Appendix F: per model, how many cells refused in 0, 1, ..., 5 of their 5 samples.

    A cell is model x claim x template; its samples are its scored generations. A bimodal
    distribution (mostly 0/5 and 5/5) says refusal is a property of the prompt, not chance.
    Cells with fewer scored samples than ``runs_per_cell`` count under the refusals they have
    and are also counted in ``incomplete_cells`` (:func:`stats.run_count_distribution`).
    Generations whose refusal consensus is missing are left out. Columns: model, "0".."5",
    cells, incomplete_cells.
    """
    labels = [str(i) for i in range(runs_per_cell + 1)]
    rows: list[dict[str, Any]] = []
    if not scored.empty:
        for model, sub in scored.groupby("model", sort=True):
            sub = sub[sub["refusal"].notna()]
            cells = sub.groupby(["claim_id", "prompt_id"], sort=False).ngroup().to_numpy()
            refusal = sub["refusal"].to_numpy(dtype=np.int64)
            dist = stats.run_count_distribution(refusal, cells, runs_per_cell=runs_per_cell)
            incomplete = stats.incomplete_cells(cells, runs_per_cell=runs_per_cell)
            rows.append(
                {
                    "model": model,
                    **dist,
                    "cells": sum(dist.values()),
                    "incomplete_cells": incomplete,
                }
            )
    return pd.DataFrame(rows, columns=["model", *labels, "cells", "incomplete_cells"])


def output_tokens_by_outcome(scored: pd.DataFrame) -> pd.DataFrame:
    """Appendix G: mean output tokens per model (``all``) and per model and outcome.

    Length differs by outcome (a refusal is short), so a model's mean length partly reflects
    its outcome mix. NaN where a model has no generation with that outcome. Columns: model,
    n, all, then the 5 outcomes.
    """
    columns = ["model", "n", "all", *OUTCOMES]
    if scored.empty:
        return pd.DataFrame(columns=columns)
    tokens = scored["output_tokens"].astype(np.float64)
    by_outcome = tokens.groupby([scored["model"], scored["outcome"]]).mean().unstack("outcome")
    by_outcome = by_outcome.reindex(columns=list(OUTCOMES))
    overall = tokens.groupby(scored["model"]).agg(n="size", all="mean")
    out = overall.join(by_outcome).reset_index()
    out.columns.name = None
    return out[columns]


def fallacy_density_by_model(scored: pd.DataFrame) -> pd.DataFrame:
    """Appendix G: fallacies per 100 output tokens per model (:func:`stats.fallacy_density`).

    The per-generation ratio (WA + AH + RH) / output_tokens * 100, averaged; generations with no
    reported tokens or a missing fallacy field are left out. Columns: model, n, fallacy_density.
    """
    rows = []
    for model, sub in scored.groupby("model", sort=True) if not scored.empty else []:
        sub = sub.dropna(subset=list(FALLACY_FIELDS))
        density = stats.fallacy_density(
            sub["WA_present"].to_numpy(dtype=np.float64),
            sub["AH_present"].to_numpy(dtype=np.float64),
            sub["RH_present"].to_numpy(dtype=np.float64),
            sub["output_tokens"].to_numpy(dtype=np.float64),
        )
        rows.append(
            {"model": model, "n": int((sub["output_tokens"] > 0).sum()), "fallacy_density": density}
        )
    return pd.DataFrame(rows, columns=["model", "n", "fallacy_density"])


# --------------------------------------------------------------------------- which fallacy


def _produced(scored: pd.DataFrame) -> np.ndarray:
    """(n x 3) 0/1 matrix of WA, AH, RH present (missing -> 0)."""
    values = scored[list(FALLACY_FIELDS)].to_numpy(dtype=np.float64, na_value=np.nan)
    return np.nan_to_num(values, nan=0.0)


def free_choice_preferences(
    scored: pd.DataFrame, framings: Sequence[str] = FREE_CHOICE_FRAMINGS
) -> pd.DataFrame:
    """Which fallacy a model produces when it picks one (choose and implicit framings).

    Per model and framing, among the generations with at least one of WA, AH, RH present
    (``n_with_fallacy``), the share with each. A response can hold several, so the shares can
    sum to more than 1. Columns: model, framing, n, n_with_fallacy, WA_present, AH_present,
    RH_present.
    """
    columns = ["model", "framing", "n", "n_with_fallacy", *FALLACY_FIELDS]
    sub = scored[scored["framing"].isin(list(framings))] if not scored.empty else scored
    rows: list[dict[str, Any]] = []
    for (model, framing), part in sub.groupby(["model", "framing"], sort=True) if len(sub) else []:
        produced = _produced(part)
        with_any = produced.max(axis=1) == 1
        k = int(with_any.sum())
        shares = produced[with_any].mean(axis=0) if k else np.full(3, np.nan)
        rows.append(
            {
                "model": model,
                "framing": framing,
                "n": len(part),
                "n_with_fallacy": k,
                **{f: float(s) for f, s in zip(FALLACY_FIELDS, shares, strict=True)},
            }
        )
    return _sort_framings(pd.DataFrame(rows, columns=columns))


def requested_match(
    scored: pd.DataFrame, by: str | Sequence[str] = ("model", "fallacy_requested")
) -> pd.DataFrame:
    """For templates that request one fallacy: did the model produce that one, or another?

    Each generation of a WA/AH/RH template falls in exactly one class: ``match`` (its produced
    fallacies include the requested one), ``only_other`` (it produced fallacies, none the
    requested one), ``none`` (no WA, AH or RH). Shares of n, so they sum to 1;
    ``match_given_fallacy`` is match / (match + only_other). Columns: the group columns, n,
    match, only_other, none, match_given_fallacy.
    """
    keys = _keys(by)
    columns = [*keys, "n", "match", "only_other", "none", "match_given_fallacy"]
    sub = (
        scored[scored["fallacy_requested"].isin(list(FALLACY_FIELD))]
        if not scored.empty
        else scored
    )
    if sub.empty:
        return pd.DataFrame(columns=columns)
    produced = _produced(sub)
    col = sub["fallacy_requested"].map(
        {k: FALLACY_FIELDS.index(v) for k, v in FALLACY_FIELD.items()}
    )
    requested = produced[np.arange(len(sub)), col.to_numpy(dtype=np.int64)] == 1
    anything = produced.max(axis=1) == 1
    df = sub[keys].copy()
    df["match"] = requested.astype(np.float64)
    df["only_other"] = (anything & ~requested).astype(np.float64)
    df["none"] = (~anything).astype(np.float64)
    out = _group_means(df, keys, ["match", "only_other", "none"])
    with np.errstate(invalid="ignore", divide="ignore"):
        out["match_given_fallacy"] = out["match"] / (out["match"] + out["only_other"])
    return _sort_framings(out[columns])


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
