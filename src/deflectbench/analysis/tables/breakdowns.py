"""The paper's breakdowns beyond the signature: appendix E.3 as field rates, each model's rates by
controversy level and by context, the fallacy-type swing within explicit framings, appendix G's
fallacy density by model and outcome, and which CIs rest on too few claims.

Inputs are scored tables (:mod:`.scored`); rates are fractions in [0, 1] (:mod:`.grouping`):
a field's rate is the mean of its consensus values (a missing value left out), not an outcome
share, since the paper reports these breakdowns as field rates ("labeled 93.5%").
"""

from __future__ import annotations

from itertools import groupby
from typing import Any

import numpy as np
import pandas as pd

from deflectbench.analysis.stats.descriptive import fallacy_density
from deflectbench.analysis.tables.appendix import FALLACY_FIELD
from deflectbench.analysis.tables.grouping import (
    framing_rows,
    group_codes_where,
    group_means,
    model_outcome_codes,
    rows_of_groups,
    sort_framings,
    sums_by_codes,
    whole_numbers,
)
from deflectbench.analysis.tables.rates import rates_by
from deflectbench.vocab import CONTEXTS, FALLACY_FIELDS, FRAMINGS, OUTCOMES

__all__ = [
    "COACH_FIELDS",
    "ONE_CLAIM",
    "SWING_COLUMNS",
    "claims",
    "coach_field_rates",
    "fallacy_density_by_outcome",
    "fallacy_swing",
    "fallacy_swing_by_framing",
    "few_claims",
    "few_claims_note",
    "rates_by_context",
    "rates_by_level",
    "small_sample",
    "small_sample_note",
]

#: The fields appendix E.3 reports under coach framing.
COACH_FIELDS: tuple[str, ...] = (
    "refusal",
    "soft_refusal",
    "any_fallacy_present",
    "fallacy_labeled",
    "compliance_clean",
)


def coach_field_rates(scored: pd.DataFrame) -> pd.DataFrame:
    """Appendix E.3 as the paper reports it: under coach framing, per model and requested
    fallacy, the rate of each field in :data:`COACH_FIELDS` (``fallacy_labeled``: the labeled
    rate, ``compliance_clean``: the clean rate). Field rates, not outcome shares: a response the
    consensus calls both labeled and refused counts in both rates. Columns: model,
    fallacy_requested, n, then the fields."""
    keys = ["model", "fallacy_requested"]
    coach = framing_rows(scored, "coach") if len(scored) else scored
    if coach.empty:
        return pd.DataFrame(columns=[*keys, "n", *COACH_FIELDS])
    out = group_means(coach, keys, list(COACH_FIELDS))
    return out.sort_values(keys, kind="stable").reset_index(drop=True)


def rates_by_level(scored: pd.DataFrame) -> pd.DataFrame:
    """Per model and controversy level (1-4): n, each field's rate and each outcome's share
    (:func:`.rates.rates_by`), levels in order within each model."""
    return rates_by(scored, ["model", "level"])


def rates_by_context(scored: pd.DataFrame) -> pd.DataFrame:
    """Per model and claim context (``us``, ``international``, in that order): n, each field's
    rate and each outcome's share (:func:`.rates.rates_by`)."""
    out = rates_by(scored, ["model", "context"])
    if out.empty:
        return out
    rank = {c: i for i, c in enumerate(CONTEXTS)}
    return out.sort_values(
        ["model", "context"],
        key=lambda c: c.map(lambda v: rank.get(v, len(rank))) if c.name == "context" else c,
        kind="stable",
    ).reset_index(drop=True)


#: Columns of the fallacy-type swing tables.
SWING_COLUMNS = [
    "model",
    "framing",
    "measure",
    "template_high",
    "fallacy_high",
    "rate_high",
    "n_high",
    "template_low",
    "fallacy_low",
    "rate_low",
    "n_low",
    "swing",
]


def fallacy_swing_by_framing(scored: pd.DataFrame, measure: str = "refusal") -> pd.DataFrame:
    """How much one field's rate (refusal by default) moves with the requested fallacy alone.

    Within each explicit framing, the templates differ only in the fallacy they request
    (whataboutism, ad hominem, red herring); per model and framing, the template with the
    highest and the lowest rate, and the difference (``swing``, a fraction; the paper: "over
    80 points"). Framings with fewer than two such templates are left out; framings in the
    paper's order. Columns: :data:`SWING_COLUMNS`.
    """
    if scored.empty:
        return pd.DataFrame(columns=SWING_COLUMNS)
    rows_of = (
        (scored["explicitness"] == "explicit")
        & scored["fallacy_requested"].isin(list(FALLACY_FIELD))
        & scored[measure].notna()
    ).to_numpy(dtype=bool)
    if not rows_of.any():
        return pd.DataFrame(columns=SWING_COLUMNS)
    keys = ["model", "framing", "prompt_id", "fallacy_requested"]
    # the templates' groups from the scored table's shared codes, the rows never made a frame
    x = scored[measure].to_numpy(dtype=np.float64, na_value=np.nan)[rows_of]
    table = sums_by_codes(
        *group_codes_where(scored, rows_of, keys), {measure: (x, whole_numbers(x))}
    )
    if table is not None:  # whole numbers: np.bincount's sums are exact
        col = {c: table[c].tolist() for c in keys}
        mean, size = table[measure].tolist(), table["n"].tolist()
    else:
        named = scored[rows_of]
        per_template = named.groupby(keys, sort=True)[measure].agg(["mean", "size"])
        col = {c: per_template.index.get_level_values(c).tolist() for c in keys}
        mean, size = per_template["mean"].tolist(), per_template["size"].tolist()
    rows: list[dict[str, Any]] = []
    # the templates sorted by model and framing: each (model, framing) is one run of rows
    runs = groupby(range(len(mean)), key=lambda i: (col["model"][i], col["framing"][i]))
    for (model, framing), run in runs:
        part = list(run)
        if len(part) < 2:
            continue
        hi = max(part, key=mean.__getitem__)  # the first of equal rates, as idxmax
        lo = min(part, key=mean.__getitem__)
        rows.append(
            {
                "model": model,
                "framing": framing,
                "measure": measure,
                "template_high": col["prompt_id"][hi],
                "fallacy_high": col["fallacy_requested"][hi],
                "rate_high": float(mean[hi]),
                "n_high": int(size[hi]),
                "template_low": col["prompt_id"][lo],
                "fallacy_low": col["fallacy_requested"][lo],
                "rate_low": float(mean[lo]),
                "n_low": int(size[lo]),
                "swing": float(mean[hi] - mean[lo]),
            }
        )
    return sort_framings(pd.DataFrame(rows, columns=SWING_COLUMNS))


def fallacy_swing(by_framing: pd.DataFrame) -> pd.DataFrame:
    """Per model, the explicit framing with the largest fallacy-type swing (the first in the
    paper's framing order on a tie), from :func:`fallacy_swing_by_framing`."""
    if by_framing.empty:
        return pd.DataFrame(columns=SWING_COLUMNS)
    rank = {f: i for i, f in enumerate(FRAMINGS)}
    best: dict[str, dict[str, Any]] = {}
    for r in by_framing.to_dict(orient="records"):
        mine = best.get(r["model"])
        key = (r["swing"], -rank.get(r["framing"], len(rank)))
        if mine is None or key > (mine["swing"], -rank.get(mine["framing"], len(rank))):
            best[r["model"]] = r
    return pd.DataFrame([best[m] for m in sorted(best)], columns=SWING_COLUMNS)


def fallacy_density_by_outcome(scored: pd.DataFrame) -> pd.DataFrame:
    """Appendix G by outcome: fallacies per 100 output tokens per model and outcome category
    (:func:`stats.fallacy_density`: the per-generation ratio, averaged), outcomes in the
    ladder's order. A refusal has few fallacies and few tokens, so a model's overall density
    mixes its outcome shares. Generations with no tokens or a missing fallacy field are left
    out; n counts those used. Columns: model, outcome, n, fallacy_density."""
    columns = ["model", "outcome", "n", "fallacy_density"]
    if scored.empty:
        return pd.DataFrame(columns=columns)
    parts = model_outcome_codes(scored)
    if parts is not None:  # each cell's rows from the shared codes: the same arrays, in order
        codes, labels, which = parts
        values = scored[[*FALLACY_FIELDS, "output_tokens"]]
        fields = values[list(FALLACY_FIELDS)].to_numpy(dtype=np.float64, na_value=np.nan)
        tokens = values["output_tokens"].to_numpy(dtype=np.float64, na_value=np.nan)
        used = ~np.isnan(fields).any(axis=1) & (np.nan_to_num(tokens, nan=0.0) > 0)
        k = len(OUTCOMES)
        cells = np.where(used, codes * k + which, -1)  # model by model, in the ladder's order
        models = labels["model"].tolist()
        found = []
        for c, part in enumerate(rows_of_groups(cells, len(labels) * k)):
            if len(part):
                density = fallacy_density(
                    fields[part, 0], fields[part, 1], fields[part, 2], tokens[part]
                )
                model, outcome = models[c // k], OUTCOMES[c % k]
                found.append(
                    {"model": model, "outcome": outcome, "n": len(part)}
                    | {"fallacy_density": density}
                )
        if found:  # (none: the groupby's empty table, its columns of no type)
            return pd.DataFrame(found, columns=columns)
    data = scored[["model", "outcome", *FALLACY_FIELDS, "output_tokens"]]  # a group is these only
    data = data.dropna(subset=list(FALLACY_FIELDS))
    data = data[data["output_tokens"].fillna(0) > 0]
    rows = []
    for (model, outcome), sub in data.groupby(["model", "outcome"], sort=True):
        wa, ah, rh = (sub[f].to_numpy(dtype=np.float64) for f in FALLACY_FIELDS)
        density = fallacy_density(wa, ah, rh, sub["output_tokens"].to_numpy(dtype=np.float64))
        rows.append({"model": model, "outcome": outcome, "n": len(sub), "fallacy_density": density})
    out = pd.DataFrame(rows, columns=columns)
    rank = {o: i for i, o in enumerate(OUTCOMES)}
    out = out.sort_values(
        ["model", "outcome"], key=lambda c: c.map(rank) if c.name == "outcome" else c
    )
    return out.reset_index(drop=True)


def small_sample(rates_ci: pd.DataFrame, min_claims: int) -> pd.DataFrame:
    """The groups (models) whose bootstrap CIs rest on fewer than ``min_claims`` claims: the
    claims are what the block bootstrap resamples, so with few of them a percentile interval is
    too narrow and unstable. From :func:`.rates.rates_with_ci`; columns: model, n_claims."""
    if rates_ci.empty:
        return pd.DataFrame(columns=["model", "n_claims"])
    per = rates_ci.groupby("model", sort=True)["n_clusters"].min().reset_index()
    per.columns = ["model", "n_claims"]
    return per[per["n_claims"] < min_claims].reset_index(drop=True)


def small_sample_note(flagged: pd.DataFrame, min_claims: int) -> str | None:
    """The sentence every view shows under the CIs when :func:`small_sample` flagged a model
    (None when none is flagged)."""
    if flagged.empty:
        return None
    who = ", ".join(
        f"{r['model']} ({claims(int(r['n_claims']))})" for r in flagged.to_dict("records")
    )
    text = (
        f"Small sample: the 95% CIs of {who} rest on fewer than {min_claims} claims; the "
        "bootstrap resamples claims, so these intervals are rough."
    )
    return text + (f" {ONE_CLAIM}" if (flagged["n_claims"] < 2).any() else "")


def claims(n: int) -> str:
    """``1 claim``, ``4 claims``."""
    return f"{n:,} claim{'' if n == 1 else 's'}"


#: Why a CI over one claim is shown as ``-`` / null.
ONE_CLAIM = (
    "A CI over one claim is undefined (shown as -, null in JSON): the bootstrap resamples "
    "claims, and one claim has one resample."
)


def few_claims(rows: pd.DataFrame, min_claims: int) -> pd.DataFrame:
    """The rows of a table of CIs (``section``, ``pack``, ``model``, ``n_claims``) resting on
    fewer than ``min_claims`` claims, one per section, pack and model (its fewest claims)."""
    cols = ["section", "pack", "model", "n_claims"]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    few = rows[rows["n_claims"] < min_claims]
    if few.empty:
        return pd.DataFrame(columns=cols)
    out = few.groupby(["section", "pack", "model"], sort=False)["n_claims"].min().reset_index()
    out["n_claims"] = out["n_claims"].astype(int)
    return out[cols]


def few_claims_note(flagged: pd.DataFrame, min_claims: int) -> str | None:
    """The sentence for :func:`few_claims`' rows (None when none), and why a CI over one
    claim is left out."""
    if flagged.empty:
        return None
    parts = []
    for section, sub in flagged.groupby("section", sort=False):
        who = ", ".join(
            r["model"] + (f" in {r['pack']}" if r["pack"] else "") + f" ({claims(r['n_claims'])})"
            for r in sub.to_dict("records")
        )
        parts.append(f"{section}: {who}")
    text = (
        f"Small sample: these 95% CIs rest on fewer than {min_claims} claims, so they are rough: "
        + "; ".join(parts)
        + "."
    )
    if (flagged["n_claims"] < 2).any():
        text += " " + ONE_CLAIM
    return text
