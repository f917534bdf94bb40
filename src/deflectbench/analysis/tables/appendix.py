"""Appendix F and G and which fallacy a model produces: refusals per cell across its samples,
output length by outcome, fallacy density, free-choice preferences, requested vs produced."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from deflectbench.analysis.sharing import shared
from deflectbench.analysis.stats.descriptive import (
    fallacy_density,
    incomplete_cells,
    run_count_distribution,
)
from deflectbench.analysis.tables.grouping import (
    group_codes,
    group_codes_where,
    group_means,
    keys_of,
    model_outcome_codes,
    rows_of_groups,
    sort_framings,
    sorted_codes,
    sums_by_codes,
    whole_columns,
    whole_numbers,
)
from deflectbench.vocab import FALLACY_FIELDS, OUTCOMES

__all__ = [
    "FALLACY_FIELD",
    "FREE_CHOICE_FRAMINGS",
    "cell_samples",
    "fallacy_density_by_model",
    "free_choice_preferences",
    "output_tokens_by_outcome",
    "requested_match",
    "run_refusal_counts",
    "sample_refusal_counts",
    "tokens_by_outcome",
]

#: The rubric field that says a requested fallacy was produced.
FALLACY_FIELD: dict[str, str] = {
    "whataboutism": "WA_present",
    "ad_hominem": "AH_present",
    "red_herring": "RH_present",
}
#: Framings where the model picks the fallacy itself.
FREE_CHOICE_FRAMINGS: tuple[str, ...] = ("choose", "implicit_neutral", "implicit_political")


def sample_refusal_counts(scored: pd.DataFrame, samples_per_cell: int = 5) -> pd.DataFrame:
    """Appendix F: per model, how many cells refused in 0, 1, ..., 5 of their 5 samples.

    A cell is model x claim x template; its samples are its scored generations. A bimodal
    distribution (mostly 0/5 and 5/5) says refusal is a property of the prompt, not chance.
    Cells with fewer scored samples than ``samples_per_cell`` count under the refusals they have
    and are also counted in ``incomplete_cells`` (:func:`stats.run_count_distribution`).
    Generations whose refusal consensus is missing are left out. Columns: model, "0".."5",
    cells, incomplete_cells.
    """
    labels = [str(i) for i in range(samples_per_cell + 1)]
    rows: list[dict[str, Any]] = []
    cells_of = group_codes(scored, ["model", "claim_id", "prompt_id"])[0] if len(scored) else None
    if cells_of is not None and bool((cells_of >= 0).all()):
        # the cells numbered once (shared): a model's cells are its rows' cell codes, counted
        # alike whatever their numbers (the counts per cell do not depend on the order)
        models, names = group_codes(scored, ["model"])
        refusal = scored["refusal"].to_numpy(dtype=np.float64, na_value=np.nan)
        seen = ~np.isnan(refusal)
        for g, part in enumerate(rows_of_groups(np.where(seen, models, -1), len(names))):
            cells = cells_of[part]
            dist = run_count_distribution(
                refusal[part].astype(np.int64), cells, runs_per_cell=samples_per_cell
            )
            rows.append(
                {
                    "model": names["model"].iloc[g],
                    **dist,
                    "cells": sum(dist.values()),
                    "incomplete_cells": incomplete_cells(cells, runs_per_cell=samples_per_cell),
                }
            )
    elif not scored.empty:  # a key missing in a row: the groupbys leave it out their ways
        narrow = scored[["model", "claim_id", "prompt_id", "refusal"]]  # a group is these only
        for model, sub in narrow.groupby("model", sort=True):
            sub = sub[sub["refusal"].notna()]
            cells = sub.groupby(["claim_id", "prompt_id"], sort=False).ngroup().to_numpy()
            refusal = sub["refusal"].to_numpy(dtype=np.int64)
            dist = run_count_distribution(refusal, cells, runs_per_cell=samples_per_cell)
            incomplete = incomplete_cells(cells, runs_per_cell=samples_per_cell)
            rows.append(
                {
                    "model": model,
                    **dist,
                    "cells": sum(dist.values()),
                    "incomplete_cells": incomplete,
                }
            )
    return pd.DataFrame(rows, columns=["model", *labels, "cells", "incomplete_cells"])


#: The name this table had before samples were called samples (kept for callers).
run_refusal_counts = sample_refusal_counts


def cell_samples(scored: pd.DataFrame, planned: int) -> int:
    """Samples a cell holds: the benchmark's ``planned`` count, or fewer when no scored cell
    reached it (a quick run with one sample per cell)."""
    if scored.empty:
        return planned
    cells, labels = group_codes(scored, ["model", "claim_id", "prompt_id"])  # shared
    if len(labels):  # each cell's distinct samples counted from the shared codes
        samples, values = sorted_codes(scored, "sample")
        kept = (cells >= 0) & (samples >= 0)  # a groupby's cells, nunique's values
        pairs = np.unique(cells[kept] * len(values) + samples[kept])
        per_cell = np.bincount(pairs // max(len(values), 1), minlength=len(labels))
        return min(planned, int(per_cell.max()))
    per_cell = scored.groupby(["model", "claim_id", "prompt_id"])["sample"].nunique()
    return min(planned, int(per_cell.max()))


def output_tokens_by_outcome(scored: pd.DataFrame) -> pd.DataFrame:
    """Appendix G: mean output tokens per model (``all``) and per model and outcome.

    Length differs by outcome (a refusal is short), so a model's mean length partly reflects
    its outcome mix. NaN where a model has no generation with that outcome. Columns: model,
    n, all, then the 5 outcomes.
    """
    columns = ["model", "n", "all", *OUTCOMES]
    if scored.empty:
        return pd.DataFrame(columns=columns)
    counted = _token_sums(scored)
    if counted is not None:  # whole numbers: sums exact, so the means are the groupby's
        labels, n, total, cell_n, cell_sum = counted
        with np.errstate(invalid="ignore", divide="ignore"):
            means = cell_sum / cell_n  # NaN where a model has no such outcome
        table = {"model": labels["model"].array, "n": n, "all": total / n}
        return pd.DataFrame(table | {o: means[:, j] for j, o in enumerate(OUTCOMES)})
    tokens = scored["output_tokens"].astype(np.float64)
    by_outcome = tokens.groupby([scored["model"], scored["outcome"]]).mean().unstack("outcome")
    by_outcome = by_outcome.reindex(columns=list(OUTCOMES))
    overall = tokens.groupby(scored["model"]).agg(n="size", all="mean")
    out = overall.join(by_outcome).reset_index()
    out.columns.name = None
    return out[columns]


def tokens_by_outcome(scored: pd.DataFrame) -> pd.DataFrame:
    """Appendix G in long form: per model and outcome, n and the mean and median output tokens.

    Outcomes in the ladder's order within each model. Columns: model, outcome, n, mean_tokens,
    median_tokens.
    """
    columns = ["model", "outcome", "n", "mean_tokens", "median_tokens"]
    if scored.empty:
        return pd.DataFrame(columns=columns)
    counted = _token_sums(scored)
    parts = model_outcome_codes(scored)
    if counted is not None and parts is not None:  # whole numbers: the groupby's numbers
        _, _, _, cell_n, cell_sum = counted
        codes, _, which = parts
        cells = codes * len(OUTCOMES) + which  # model by model, outcomes in the ladder's order
        present = np.flatnonzero(cell_n.reshape(-1) > 0)
        rows_of = rows_of_groups(cells, cell_n.size)
        tokens = scored["output_tokens"].to_numpy(dtype=np.float64)
        first = np.array([rows_of[c][0] for c in present], dtype=np.intp)
        out = scored[["model"]].take(first).reset_index(drop=True)
        out["outcome"] = pd.Index([OUTCOMES[c % len(OUTCOMES)] for c in present])  # inferred
        out["n"] = cell_n.reshape(-1)[present]
        out["mean_tokens"] = cell_sum.reshape(-1)[present] / out["n"].to_numpy()
        # a median of whole numbers (|sum| < 2**53): the middle one, or two halved, exactly
        out["median_tokens"] = [float(np.median(tokens[rows_of[c]])) for c in present]
        return out
    tokens = scored["output_tokens"].astype(np.float64)
    g = tokens.groupby([scored["model"], scored["outcome"]], sort=True)
    out = g.agg(n="size", mean_tokens="mean", median_tokens="median").reset_index()
    rank = {o: i for i, o in enumerate(OUTCOMES)}
    out = out.sort_values(
        ["model", "outcome"], key=lambda c: c.map(rank) if c.name == "outcome" else c
    )
    return out[columns].reset_index(drop=True)


def _token_sums(
    scored: pd.DataFrame,
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Output tokens per model and per model and outcome, counted and summed from the shared
    codes: the models, n per model, their sums, and (models x outcomes) counts and sums. None
    when the groupbys must do it: a row without a model or with an outcome off the ladder, or
    token counts that are missing or not whole numbers (whose sums depend on the order)."""

    def compute() -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        parts = model_outcome_codes(scored)
        tokens = scored["output_tokens"].to_numpy(dtype=np.float64, na_value=np.nan)
        if parts is None or bool(np.isnan(tokens).any()) or not whole_numbers(tokens):
            return None
        codes, labels, which = parts
        m, k = len(labels), len(OUTCOMES)
        n = np.bincount(codes, minlength=m).astype(np.int64)
        total = np.bincount(codes, weights=tokens, minlength=m)
        cells = codes * k + which
        cell_n = np.bincount(cells, minlength=m * k).astype(np.int64).reshape(m, k)
        cell_sum = np.bincount(cells, weights=tokens, minlength=m * k).reshape(m, k)
        return labels, n, total, cell_n, cell_sum

    return shared(scored, "token_sums", compute)


def fallacy_density_by_model(scored: pd.DataFrame) -> pd.DataFrame:
    """Appendix G: fallacies per 100 output tokens per model (:func:`stats.fallacy_density`).

    The per-generation ratio (WA + AH + RH) / output_tokens * 100, averaged; generations with no
    reported tokens or a missing fallacy field are left out. Columns: model, n, fallacy_density.
    """
    rows = []
    if len(scored):  # each model's rows from the shared codes, the same arrays in its order
        codes, labels = group_codes(scored, ["model"])
        values = scored[[*FALLACY_FIELDS, "output_tokens"]]
        fields = values[list(FALLACY_FIELDS)].to_numpy(dtype=np.float64, na_value=np.nan)
        tokens = values["output_tokens"].to_numpy(dtype=np.float64, na_value=np.nan)
        scored_fields = ~np.isnan(fields).any(axis=1)
        for g, part in enumerate(rows_of_groups(np.where(scored_fields, codes, -1), len(labels))):
            tok = tokens[part]
            density = fallacy_density(fields[part, 0], fields[part, 1], fields[part, 2], tok)
            rows.append(
                {
                    "model": labels["model"].iloc[g],
                    "n": int((tok > 0).sum()),
                    "fallacy_density": density,
                }
            )
        return pd.DataFrame(rows, columns=["model", "n", "fallacy_density"])
    narrow = scored[["model", *FALLACY_FIELDS, "output_tokens"]]  # a group is these only
    for model, sub in narrow.groupby("model", sort=True) if not scored.empty else []:
        sub = sub.dropna(subset=list(FALLACY_FIELDS))
        density = fallacy_density(
            sub["WA_present"].to_numpy(dtype=np.float64),
            sub["AH_present"].to_numpy(dtype=np.float64),
            sub["RH_present"].to_numpy(dtype=np.float64),
            sub["output_tokens"].to_numpy(dtype=np.float64),
        )
        rows.append(
            {"model": model, "n": int((sub["output_tokens"] > 0).sum()), "fallacy_density": density}
        )
    return pd.DataFrame(rows, columns=["model", "n", "fallacy_density"])


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
    rows: list[dict[str, Any]] = []
    if not scored.empty:  # a groupby's groups and their rows, from the shared codes
        rows_of = scored["framing"].isin(list(framings)).to_numpy(dtype=bool)
        codes, labels = group_codes_where(scored, rows_of, ["model", "framing"])
        produced_of = _shared_produced(scored)[rows_of]
        parts = rows_of_groups(codes, len(labels))
        names = zip(labels["model"].tolist(), labels["framing"].tolist(), strict=True)
        for g, (model, framing) in enumerate(names):
            part = parts[g]  # the group's rows in the table's order
            produced = produced_of[part]
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
    return sort_framings(pd.DataFrame(rows, columns=columns))


def _shared_produced(scored: pd.DataFrame) -> np.ndarray:
    """:func:`_produced` of the whole table, once within :func:`.grouping.shared_codes`."""
    return shared(scored, "produced", lambda: _produced(scored))


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
    keys = keys_of(by)
    columns = [*keys, "n", "match", "only_other", "none", "match_given_fallacy"]
    if scored.empty:
        return pd.DataFrame(columns=columns)
    rows_of = scored["fallacy_requested"].isin(list(FALLACY_FIELD)).to_numpy(dtype=bool)
    if not rows_of.any():
        return pd.DataFrame(columns=columns)
    produced = _shared_produced(scored)[rows_of]
    codes, requested_names = sorted_codes(scored, "fallacy_requested")  # the column (shared)
    field_of = [
        FALLACY_FIELDS.index(FALLACY_FIELD[r]) if r in FALLACY_FIELD else -1
        for r in requested_names.tolist()
    ]
    col = np.asarray(field_of, dtype=np.int64)[codes[rows_of]]
    requested = produced[np.arange(len(col)), col] == 1
    anything = produced.max(axis=1) == 1
    shares = {
        "match": requested.astype(np.float64),
        "only_other": (anything & ~requested).astype(np.float64),
        "none": (~anything).astype(np.float64),
    }
    out = (
        sums_by_codes(*group_codes_where(scored, rows_of, keys), whole_columns(shares))
        if keys
        else None
    )
    if out is None:  # no groups: pandas' means of the rows
        df = scored[rows_of][keys].copy()
        for c, v in shares.items():
            df[c] = v
        out = group_means(df, keys, list(shares))
    with np.errstate(invalid="ignore", divide="ignore"):
        out["match_given_fallacy"] = out["match"] / (out["match"] + out["only_other"])
    return sort_framings(out[columns])
