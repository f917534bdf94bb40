"""The tables grouped by outcome, by numpy codes, give the numbers the pandas code they replace
gave (kept here as the reference), bit for bit: on random scored tables with missing groups,
missing outcomes and values off the ladder, inside the summary's scope and out of it."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from deflectbench.analysis.sharing import shared_codes
from deflectbench.analysis.stats.descriptive import (
    fallacy_density,
    incomplete_cells,
    run_count_distribution,
)
from deflectbench.analysis.stats.hypothesis import chi2_independence
from deflectbench.analysis.tables.appendix import (
    fallacy_density_by_model,
    output_tokens_by_outcome,
    sample_refusal_counts,
    tokens_by_outcome,
)
from deflectbench.analysis.tables.breakdowns import fallacy_density_by_outcome
from deflectbench.analysis.tables.grouping import sort_framings
from deflectbench.analysis.tables.significance import (
    chi2_model_outcome,
    outcome_count_matrix,
    outcome_counts,
)
from deflectbench.vocab import FALLACY_FIELDS, FRAMINGS, OUTCOMES


def reference_chi2_model_outcome(scored: pd.DataFrame, by: str = "model") -> pd.DataFrame:
    """chi2_model_outcome as it was: on the crosstab's count table."""
    counts = outcome_counts(scored, by).to_numpy(dtype=np.float64).reshape(-1, len(OUTCOMES))
    res = chi2_independence(counts)
    row = {"statistic": res.statistic, "dof": res.dof, "p_value": res.p_value, "n": res.n}
    return pd.DataFrame([row | {"cramers_v": res.cramers_v}])


@st.composite
def scored_tables(draw: Any) -> pd.DataFrame:
    n = draw(st.integers(0, 120))
    models = draw(st.lists(st.sampled_from(["m-b", "m-a", "Z", None]), min_size=1, max_size=4))
    outcomes = draw(st.lists(st.sampled_from([*OUTCOMES, None, "odd"]), min_size=1, max_size=7))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    pick = lambda options: [options[i] for i in rng.integers(0, len(options), n)]  # noqa: E731
    return pd.DataFrame(
        {
            "model": pd.array(pick(models), dtype="str"),
            "level": pick([3, 1, 2]),
            "outcome": pd.Series(pick(outcomes), dtype=object),
        }
    )


def _nonzero(t: np.ndarray) -> np.ndarray:
    return t[t.sum(axis=1) > 0]


@settings(max_examples=200, deadline=None)
@given(scored_tables(), st.sampled_from(["model", "level"]), st.booleans())
def test_chi2_model_outcome_is_the_crosstab_version(df, by, shared):
    want = reference_chi2_model_outcome(df, by)
    with shared_codes() if shared else contextlib.nullcontext():
        got = chi2_model_outcome(df, by)
        matrix = outcome_count_matrix(df, by)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    counts = outcome_counts(df, by).to_numpy(dtype=np.float64).reshape(-1, len(OUTCOMES))
    np.testing.assert_array_equal(_nonzero(matrix), _nonzero(counts))  # the same rows, in order


# ---------------------------------------------------------------- the tables by model and outcome


def reference_output_tokens_by_outcome(scored: pd.DataFrame) -> pd.DataFrame:
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


def reference_tokens_by_outcome(scored: pd.DataFrame) -> pd.DataFrame:
    columns = ["model", "outcome", "n", "mean_tokens", "median_tokens"]
    if scored.empty:
        return pd.DataFrame(columns=columns)
    tokens = scored["output_tokens"].astype(np.float64)
    g = tokens.groupby([scored["model"], scored["outcome"]], sort=True)
    out = g.agg(n="size", mean_tokens="mean", median_tokens="median").reset_index()
    rank = {o: i for i, o in enumerate(OUTCOMES)}
    out = out.sort_values(
        ["model", "outcome"], key=lambda c: c.map(rank) if c.name == "outcome" else c
    )
    return out[columns].reset_index(drop=True)


def reference_fallacy_density_by_model(scored: pd.DataFrame) -> pd.DataFrame:
    rows = []
    narrow = scored[["model", *FALLACY_FIELDS, "output_tokens"]]
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


def reference_fallacy_density_by_outcome(scored: pd.DataFrame) -> pd.DataFrame:
    columns = ["model", "outcome", "n", "fallacy_density"]
    if scored.empty:
        return pd.DataFrame(columns=columns)
    data = scored[["model", "outcome", *FALLACY_FIELDS, "output_tokens"]]
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


def reference_sample_refusal_counts(scored: pd.DataFrame, samples_per_cell: int) -> pd.DataFrame:
    labels = [str(i) for i in range(samples_per_cell + 1)]
    rows: list[dict[str, Any]] = []
    if not scored.empty:
        narrow = scored[["model", "claim_id", "prompt_id", "refusal"]]
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


@st.composite
def model_outcome_tables(draw: Any) -> pd.DataFrame:
    """Scored tables as the tables by outcome read them: models, outcomes (some off the ladder
    or missing), cells of up to 5 samples, fallacy fields (some missing), token counts (some 0,
    missing or not whole)."""
    n = draw(st.integers(0, 150))
    odd = draw(st.booleans())
    models = ["m-b", "m-a", "Z"] + ([None] if odd and draw(st.booleans()) else [])
    outcomes = [*OUTCOMES] + ([None, "odd"] if odd and draw(st.booleans()) else [])
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    pick = lambda options: [options[i] for i in rng.integers(0, len(options), n)]  # noqa: E731
    claims = pick(["c1", "c2", "c3"])
    prompts = pick(["p1", "p2"])
    df = pd.DataFrame(
        {
            "model": pd.array(pick(models), dtype="str"),
            "claim_id": pd.array(claims, dtype="str"),
            "prompt_id": pd.array(prompts, dtype="str"),
        }
    )
    tokens = rng.integers(0, 900, n).astype(np.int64)
    tokens[rng.random(n) < 0.1] = 0
    if draw(st.booleans()):
        df["output_tokens"] = tokens
    else:
        values = tokens.astype(np.float64)
        values[rng.random(n) < 0.1] = np.nan if draw(st.booleans()) else 0.5
        df["output_tokens"] = values
    for f in ("refusal", *FALLACY_FIELDS):
        values = rng.integers(0, 2, n).astype(np.float64)
        if draw(st.booleans()):
            values[rng.random(n) < 0.2] = np.nan
            df[f] = values
        else:
            df[f] = values.astype(np.int64)
    df["outcome"] = pd.Series(pick(outcomes), dtype=object)
    return df


def _five_samples_at_most(df: pd.DataFrame) -> pd.DataFrame:
    return df[df.groupby(["model", "claim_id", "prompt_id"], dropna=False).cumcount() < 5]


@settings(max_examples=200, deadline=None)
@given(model_outcome_tables(), st.booleans())
def test_the_tables_by_model_and_outcome_are_the_groupby_versions(df, shared):
    df = _five_samples_at_most(df).reset_index(drop=True)
    cases = [
        (output_tokens_by_outcome, reference_output_tokens_by_outcome),
        (tokens_by_outcome, reference_tokens_by_outcome),
        (fallacy_density_by_model, reference_fallacy_density_by_model),
        (fallacy_density_by_outcome, reference_fallacy_density_by_outcome),
        (lambda d: sample_refusal_counts(d, 5), lambda d: reference_sample_refusal_counts(d, 5)),
    ]
    for table, reference in cases:
        want = reference(df)
        with shared_codes() if shared else contextlib.nullcontext():
            got = table(df)
            again = table(df)  # from what the first call shared
        for g in (got, again):
            pd.testing.assert_frame_equal(g, want, check_exact=True)
            assert list(g.dtypes) == list(want.dtypes)
            assert g.columns.dtype == want.columns.dtype


# ---------------------------------------------------------------- the framings' order


def reference_sort_framings(df: pd.DataFrame) -> pd.DataFrame:
    """sort_framings as it was: pandas' stable sort, framings by their rank."""
    if df.empty:
        return df.reset_index(drop=True)
    keys = [c for c in ("model", "framing", "prompt_id", "fallacy_requested", "level") if c in df]
    if not keys:
        return df.reset_index(drop=True)
    rank = {f: i for i, f in enumerate(FRAMINGS)}

    def key(col: pd.Series) -> pd.Series:
        return col.map(lambda v: rank.get(v, len(rank))) if col.name == "framing" else col

    return df.sort_values(keys, key=key, kind="stable").reset_index(drop=True)


@st.composite
def grouped_tables(draw: Any) -> pd.DataFrame:
    n = draw(st.integers(0, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    pick = lambda options: [options[i] for i in rng.integers(0, len(options), n)]  # noqa: E731
    columns: dict[str, Any] = {}
    keys = draw(
        st.lists(
            st.sampled_from(["model", "framing", "prompt_id", "fallacy_requested", "level"]),
            unique=True,
        )
    )
    for k in keys:
        if k == "level":
            kind = draw(st.sampled_from(["int", "float", "object"]))
            values = pick([3, 1, 2, np.nan] if kind == "float" else [3, 1, 2])
            columns[k] = pd.Series(values, dtype=object if kind == "object" else None)
        elif k == "framing":
            values = pick([*FRAMINGS[:4], "other", None])
            columns[k] = pd.array(values, dtype=draw(st.sampled_from(["str", object])))
        else:
            columns[k] = pd.array(pick(["b", "a", "é", None, "B"]), dtype="str")
    columns["n"] = np.arange(n)  # the rows' first order, to see the sort is stable
    columns["rate"] = rng.random(n)
    return pd.DataFrame(columns, index=rng.permutation(n))


@settings(max_examples=300, deadline=None)
@given(grouped_tables())
def test_sort_framings_is_the_pandas_sort(df):
    want = reference_sort_framings(df)
    got = sort_framings(df)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
