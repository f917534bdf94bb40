"""The tables' groups numbered once (``grouping.shared_codes``) and their numpy versions of
pandas groupbys give the same tables as the pandas code they replace (kept here as the
reference), bit for bit, on random scored tables: with missing keys, missing field values and
missing claims, inside the summary's scope and out of it."""

from __future__ import annotations

import contextlib
from itertools import groupby
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deflectbench.analysis.sharing import shared_codes
from deflectbench.analysis.stats.bootstrap import block_bootstrap_many
from deflectbench.analysis.tables.appendix import (
    FALLACY_FIELD,
    FREE_CHOICE_FRAMINGS,
    free_choice_preferences,
    requested_match,
)
from deflectbench.analysis.tables.breakdowns import (
    SWING_COLUMNS,
    coach_field_rates,
    fallacy_swing_by_framing,
)
from deflectbench.analysis.tables.grouping import (
    cluster_codes,
    cohens_h,
    framing_rows,
    group_codes,
    group_codes_where,
    group_means,
    keys_of,
    measure_values,
    outcome_indicators,
    sort_framings,
)
from deflectbench.analysis.tables.rates import (
    DEFAULT_COMPARISONS,
    H_MEASURES,
    coach_labeling,
    coach_outcomes,
    cohens_h_table,
    framing_h_matrix,
    rates_by,
    rates_with_ci,
)
from deflectbench.vocab import FALLACY_FIELDS, FIELDS, FRAMINGS, OUTCOMES


def reference_rates_with_ci(
    scored: pd.DataFrame, *, by: Any = "model", n_resamples: int = 1000, seed: int = 0
) -> pd.DataFrame:
    """rates_with_ci as it was: a pandas groupby, each group's matrix and clusters its own."""
    keys = keys_of(by)
    kinds = ["field"] * len(FIELDS) + ["outcome"] * len(OUTCOMES)
    names = [*FIELDS, *OUTCOMES]
    rows: list[dict[str, Any]] = []
    if scored.empty:
        return pd.DataFrame(
            columns=[*keys, "kind", "measure", "rate", "ci_lo", "ci_hi", "n", "n_clusters"]
        )
    for group, sub in scored.groupby(keys, sort=True) if keys else [((), scored)]:
        fields = sub[list(FIELDS)].to_numpy(dtype=np.float64, na_value=np.nan)
        matrix = np.hstack([fields, outcome_indicators(sub)])
        clusters = cluster_codes(sub["claim_id"])
        res = block_bootstrap_many(matrix, clusters, n_resamples=n_resamples, seed=seed)
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


def reference_swing(scored: pd.DataFrame, measure: str = "refusal") -> pd.DataFrame:
    """fallacy_swing_by_framing as it was: the templates' means by a pandas groupby."""
    if scored.empty:
        return pd.DataFrame(columns=SWING_COLUMNS)
    named = scored[
        (scored["explicitness"] == "explicit")
        & scored["fallacy_requested"].isin(list(FALLACY_FIELD))
        & scored[measure].notna()
    ]
    if named.empty:
        return pd.DataFrame(columns=SWING_COLUMNS)
    keys = ["model", "framing", "prompt_id", "fallacy_requested"]
    per_template = named.groupby(keys, sort=True)[measure].agg(["mean", "size"])
    col = {c: per_template.index.get_level_values(c).tolist() for c in keys}
    mean, size = per_template["mean"].tolist(), per_template["size"].tolist()
    rows: list[dict[str, Any]] = []
    runs = groupby(range(len(mean)), key=lambda i: (col["model"][i], col["framing"][i]))
    for (model, framing), run in runs:
        part = list(run)
        if len(part) < 2:
            continue
        hi = max(part, key=mean.__getitem__)
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


def reference_produced(scored: pd.DataFrame) -> np.ndarray:
    values = scored[list(FALLACY_FIELDS)].to_numpy(dtype=np.float64, na_value=np.nan)
    return np.nan_to_num(values, nan=0.0)


def reference_free_choice(scored: pd.DataFrame) -> pd.DataFrame:
    """free_choice_preferences as it was: a pandas groupby's groups, each its own matrix."""
    columns = ["model", "framing", "n", "n_with_fallacy", *FALLACY_FIELDS]
    narrow = scored[["model", "framing", *FALLACY_FIELDS]]
    sub = narrow[narrow["framing"].isin(list(FREE_CHOICE_FRAMINGS))] if len(scored) else narrow
    rows: list[dict[str, Any]] = []
    for (model, framing), part in sub.groupby(["model", "framing"], sort=True) if len(sub) else []:
        produced = reference_produced(part)
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


def reference_requested_match(scored: pd.DataFrame, by: Any) -> pd.DataFrame:
    """requested_match as it was: a frame of the rows and their classes, pandas' groups."""
    keys = keys_of(by)
    columns = [*keys, "n", "match", "only_other", "none", "match_given_fallacy"]
    sub = scored[scored["fallacy_requested"].isin(list(FALLACY_FIELD))] if len(scored) else scored
    if sub.empty:
        return pd.DataFrame(columns=columns)
    produced = reference_produced(sub)
    col = sub["fallacy_requested"].map(
        {k: FALLACY_FIELDS.index(v) for k, v in FALLACY_FIELD.items()}
    )
    requested = produced[np.arange(len(sub)), col.to_numpy(dtype=np.int64)] == 1
    anything = produced.max(axis=1) == 1
    df = sub[keys].copy()
    df["match"] = requested.astype(np.float64)
    df["only_other"] = (anything & ~requested).astype(np.float64)
    df["none"] = (~anything).astype(np.float64)
    out = group_means(df, keys, ["match", "only_other", "none"])
    with np.errstate(invalid="ignore", divide="ignore"):
        out["match_given_fallacy"] = out["match"] / (out["match"] + out["only_other"])
    return sort_framings(out[columns])


def reference_cohens_h(scored: pd.DataFrame, by: Any, kind: str, measures: Any) -> pd.DataFrame:
    """cohens_h_table as it was: a pandas groupby, each group's framings compared as strings."""
    keys = keys_of(by)
    rows: list[dict[str, Any]] = []
    used = [*keys, "framing", "outcome", *(m for m in measures if kind == "field" and m in scored)]
    narrow = scored[list(dict.fromkeys(used))]
    groups = narrow.groupby(keys, sort=True) if keys and not scored.empty else [((), narrow)]
    for group, sub in groups:
        if sub.empty:
            continue
        labels = dict(zip(keys, group if isinstance(group, tuple) else (group,), strict=True))
        framing = sub["framing"].to_numpy()
        for measure in measures:
            values = measure_values(sub, measure, kind)
            for first, second in DEFAULT_COMPARISONS:
                a, b = values[framing == first], values[framing == second]
                pa = float(np.nanmean(a)) if np.isfinite(a).any() else np.nan
                pb = float(np.nanmean(b)) if np.isfinite(b).any() else np.nan
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


def reference_framing_h_matrix(scored: pd.DataFrame, measure: str, kind: str) -> pd.DataFrame:
    """framing_h_matrix as it was: each framing compared as a value."""
    values = measure_values(scored, measure, kind)
    framing = scored["framing"].to_numpy()
    present = [f for f in FRAMINGS if (framing == f).any()]
    present += sorted(set(framing.tolist()) - set(FRAMINGS))
    rates = {f: float(np.nanmean(values[framing == f])) for f in present}
    matrix = [[cohens_h(rates[r], rates[c]) for c in present] for r in present]
    return pd.DataFrame(
        matrix, index=pd.Index(present, name="framing"), columns=present, dtype=float
    )


TEMPLATES = {  # prompt_id -> framing, fallacy requested, explicitness
    "c-wa": ("coach", "whataboutism", "explicit"),
    "c-ah": ("coach", "ad_hominem", "explicit"),
    "m-wa": ("manipulation", "whataboutism", "explicit"),
    "m-rh": ("manipulation", "red_herring", "explicit"),
    "m-ah": ("manipulation", "ad_hominem", "explicit"),
    "d-00": ("direct", "none", "implicit"),
    "p-wa": ("political", "whataboutism", "explicit"),
    "ch-0": ("choose", "none", "implicit"),
    "in-0": ("implicit_neutral", "none", "implicit"),
}


@st.composite
def scored_tables(draw: Any, missing: bool = True) -> pd.DataFrame:
    n = draw(st.integers(0, 80))
    rows = st.lists(st.integers(0, 10**6), min_size=n, max_size=n)
    models = ["m-b", "m-a", "Z"] + ([None] if missing else [])
    claims = ["c3", "c1", "c10", "c2"] + ([None] if draw(st.booleans()) and missing else [])
    seeds = draw(rows)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    pick = lambda options: [options[s % len(options)] for s in rng.permutation(seeds)]  # noqa: E731
    prompts = pick(list(TEMPLATES))
    df = pd.DataFrame(
        {
            "model": pd.array(pick(models), dtype="str"),
            "claim_id": pd.array(pick(claims), dtype="str"),
            "prompt_id": pd.array(prompts, dtype="str"),
            "framing": pd.array([TEMPLATES[p][0] for p in prompts], dtype="str"),
            "fallacy_requested": pd.array([TEMPLATES[p][1] for p in prompts], dtype="str"),
            "explicitness": pd.array([TEMPLATES[p][2] for p in prompts], dtype="str"),
            "level": pick([1, 2, 3, 4]),
        }
    )
    for f in FIELDS:
        values = rng.integers(0, 2, n).astype(np.float64)
        if missing and draw(st.booleans()):
            values[rng.random(n) < 0.2] = np.nan
            df[f] = values
        else:
            df[f] = values.astype(np.int64)
    df["outcome"] = pd.Series(pick(list(OUTCOMES)), dtype=object)
    return df


@settings(max_examples=60, deadline=None)
@given(
    scored_tables(),
    st.sampled_from(["model", ["model", "framing"], ["level"], []]),
    st.booleans(),
)
def test_rates_with_ci_is_the_pandas_groupby_version(df, by, shared):
    want = reference_rates_with_ci(df, by=by, n_resamples=25, seed=3)
    if shared:
        with shared_codes():
            rates_by(df, ["model", "framing"])  # the codes computed first, then shared
            got = rates_with_ci(df, by=by, n_resamples=25, seed=3)
    else:
        got = rates_with_ci(df, by=by, n_resamples=25, seed=3)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got.to_csv() == want.to_csv()


@settings(max_examples=150, deadline=None)
@given(scored_tables(), st.sampled_from(["refusal", "WA_present"]), st.booleans())
def test_fallacy_swing_is_the_pandas_groupby_version(df, measure, shared):
    want = reference_swing(df, measure)
    if shared:
        with shared_codes():
            got = fallacy_swing_by_framing(df, measure)
    else:
        got = fallacy_swing_by_framing(df, measure)
    pd.testing.assert_frame_equal(got, want, check_exact=True)


@settings(max_examples=30, deadline=None)
@given(scored_tables(missing=False))
def test_fallacy_swing_of_other_numbers_is_pandas_mean(df):
    """A measure that is not whole numbers is averaged by pandas, as before."""
    df["refusal"] = np.linspace(0.1, 0.9, len(df)) ** 3
    pd.testing.assert_frame_equal(fallacy_swing_by_framing(df), reference_swing(df))


def test_shared_codes_are_computed_once_per_frame_and_read_only():
    df = pd.DataFrame(
        {"model": pd.array(["b", "a", "b"], dtype="str"), "outcome": ["refusal", "other", "other"]}
    )
    with shared_codes():
        codes, labels = group_codes(df, ["model"])
        again, _ = group_codes(df, ["model"])
        assert again is codes
        assert not codes.flags.writeable
        with pytest.raises(ValueError):
            codes[0] = 5
        ind = outcome_indicators(df)
        assert outcome_indicators(df) is ind and not ind.flags.writeable
        other = df.copy()  # another frame: its own codes
        assert group_codes(other, ["model"])[0] is not codes
    assert group_codes(df, ["model"])[0] is not codes  # none shared out of the scope
    assert group_codes(df, ["model"])[0].flags.writeable
    assert codes.tolist() == [1, 0, 1] and labels["model"].tolist() == ["a", "b"]


def reference_rates_by(scored: pd.DataFrame, by: Any) -> pd.DataFrame:
    """rates_by by pandas alone: a groupby's means of the fields and outcome shares."""
    keys = keys_of(by)
    columns = [*FIELDS, *(f"outcome_{o}" for o in OUTCOMES)]
    if scored.empty:
        return pd.DataFrame(columns=[*keys, "n", *columns])
    wide = pd.concat(
        [
            scored,
            pd.DataFrame(outcome_indicators(scored), columns=columns[-5:], index=scored.index),
        ],
        axis=1,
    )
    grouped = wide.groupby(keys, sort=True, observed=True)
    out = grouped[columns].mean()
    out.insert(0, "n", grouped.size())
    return sort_framings(out.reset_index())


@settings(max_examples=80, deadline=None)
@given(scored_tables(), st.booleans())
def test_rates_by_grouped_several_ways_is_the_pandas_groupby(df, shared):
    ways = [["model", "framing"], ["model", "prompt_id"], ["level"], ["model", "level"]]
    if shared:
        with shared_codes():
            got = [rates_by(df, by) for by in ways]
    else:
        got = [rates_by(df, by) for by in ways]
    for by, table in zip(ways, got, strict=True):
        want = reference_rates_by(df, by)
        pd.testing.assert_frame_equal(table, want, check_exact=True, check_dtype=not df.empty)
        assert table.to_csv() == want.to_csv()


@settings(max_examples=100, deadline=None)
@given(
    scored_tables(),
    st.sampled_from([["model", "fallacy_requested"], ["model"], ["level", "model"], []]),
    st.booleans(),
)
def test_free_choice_and_requested_match_are_the_pandas_versions(df, by, shared):
    if shared:
        with shared_codes():
            rates_by(df, ["model", "framing"])  # codes computed first, then shared
            got = free_choice_preferences(df), requested_match(df, by)
    else:
        got = free_choice_preferences(df), requested_match(df, by)
    want = reference_free_choice(df), reference_requested_match(df, by)
    for g, w in zip(got, want, strict=True):
        pd.testing.assert_frame_equal(g, w, check_exact=True, check_dtype=not df.empty)
        assert g.to_csv() == w.to_csv()


@settings(max_examples=100, deadline=None)
@given(scored_tables(), st.sampled_from([["model"], ["model", "framing"], ["framing", "level"]]))
def test_group_codes_where_is_group_codes_of_the_rows(df, by):
    rows = (df["level"] > 1).to_numpy(dtype=bool) if len(df) else np.zeros(0, dtype=bool)
    codes, labels = group_codes_where(df, rows, by)
    want_codes, want_labels = group_codes(df[rows], by)
    assert codes.tolist() == want_codes.tolist()
    pd.testing.assert_frame_equal(labels, want_labels)


@settings(max_examples=100, deadline=None)
@given(
    scored_tables(),
    st.sampled_from(["model", ["model", "level"], []]),
    st.sampled_from([("outcome", H_MEASURES), ("field", ("refusal", "WA_present"))]),
    st.booleans(),
)
def test_cohens_h_table_is_the_pandas_groupby_version(df, by, measured, shared):
    kind, measures = measured
    if shared:
        with shared_codes():
            rates_by(df, ["model", "framing"])
            got = cohens_h_table(df, by=by, kind=kind, measures=measures)
    else:
        got = cohens_h_table(df, by=by, kind=kind, measures=measures)
    want = reference_cohens_h(df, by, kind, measures)
    pd.testing.assert_frame_equal(got, want, check_exact=True, check_dtype=not df.empty)
    assert got.to_csv() == want.to_csv()


@settings(max_examples=40, deadline=None)
@given(scored_tables())
def test_coach_tables_share_one_frame_of_the_coach_rows(df):
    """Within the summary's scope the coach tables read one frame of the coach rows: the same
    tables as each filtering the scored table itself."""
    alone = [f(df) for f in (coach_labeling, coach_outcomes, coach_field_rates)]
    with shared_codes():
        if len(df):
            assert framing_rows(df, "coach") is framing_rows(df, "coach")
        together = [f(df) for f in (coach_labeling, coach_outcomes, coach_field_rates)]
    for a, b in zip(alone, together, strict=True):
        pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_a_packs_generations_are_one_frame_within_the_scope():
    """The summary asks for its pack's generations three times (the scored table, the
    verdicts, the counts): within the scope one frame, the same rows as out of it."""
    from deflectbench.analysis.frames.scored import in_benchmark
    from deflectbench.benchmark import default_benchmark

    b = default_benchmark()
    claim, template = b.claims[0].claim_id, b.templates[0].prompt_id
    gens = pd.DataFrame(
        {
            "gen_id": [1, 2, 3],
            "benchmark": pd.array([b.key, b.key, "other"], dtype="str"),
            "claim_id": pd.array([claim, "no-such-claim", claim], dtype="str"),
            "prompt_id": pd.array([template] * 3, dtype="str"),
        }
    )
    alone = in_benchmark(gens, b)
    assert in_benchmark(gens, b) is not alone
    with shared_codes():
        once = in_benchmark(gens, b)
        assert in_benchmark(gens, b) is once
        assert in_benchmark(gens.copy(), b) is not once  # another frame: its own rows
    pd.testing.assert_frame_equal(once, alone)
    assert once["gen_id"].tolist() == [1]


@settings(max_examples=100, deadline=None)
@given(
    scored_tables(missing=False),
    st.sampled_from(
        [("refusal", "outcome"), ("labeled_compliance", "outcome"), ("WA_present", "field")]
    ),
    st.booleans(),
)
def test_framing_h_matrix_compares_framings_as_codes_the_same(df, measured, odd_framing):
    measure, kind = measured
    if odd_framing and len(df):  # a framing outside the paper's, sorted after them
        df.loc[df.index[0], "framing"] = "zz-own"
    got = framing_h_matrix(df, measure, kind=kind)
    want = reference_framing_h_matrix(df, measure, kind)
    pd.testing.assert_frame_equal(got, want, check_exact=True)


@settings(max_examples=30, deadline=None)
@given(scored_tables())
def test_claim_rates_are_computed_once_within_the_scope(df):
    from deflectbench.analysis.tables.significance import claim_rates, claim_spread_table

    for c, v in {"context": "us", "domain": "d"}.items():
        df[c] = pd.array([v] * len(df), dtype="str")
    alone = claim_rates(df), claim_spread_table(df)
    with shared_codes():
        once = claim_rates(df)
        assert claim_rates(df) is once
        spread = claim_spread_table(df)
    pd.testing.assert_frame_equal(once, alone[0], check_exact=True)
    pd.testing.assert_frame_equal(spread, alone[1], check_exact=True)


def reference_claim_rates(scored: pd.DataFrame, measure: str, kind: str) -> pd.DataFrame:
    """claim_rates as it was: a pandas groupby of every row (missing keys kept)."""
    columns = ["claim_id", "level", "context", "domain"]
    df = scored[columns].copy()
    df["value"] = measure_values(scored, measure, kind)
    grouped = df.groupby(columns, sort=True, dropna=False)
    return grouped["value"].agg(n="count", rate="mean").reset_index()


def reference_cell_samples(scored: pd.DataFrame, planned: int) -> int:
    per_cell = scored.groupby(["model", "claim_id", "prompt_id"])["sample"].nunique()
    return min(planned, int(per_cell.max()))


def reference_coach_outcomes(scored: pd.DataFrame) -> pd.DataFrame:
    keys = ["model", "fallacy_requested"]
    coach = scored[scored["framing"] == "coach"]
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


@settings(max_examples=100, deadline=None)
@given(
    scored_tables(),
    st.sampled_from([("refusal", "field"), ("refusal", "outcome")]),
    st.sampled_from(["none", "context", "odd_outcome", "half"]),
    st.booleans(),
)
def test_claim_rates_cells_and_coach_outcomes_are_the_pandas_groupbys(df, measured, odd, shared):
    """claim_rates, cell_samples and coach_outcomes from the shared codes: the groupbys' tables
    (a missing key, an outcome off the ladder, a measure that is not a whole number: the
    groupbys themselves)."""
    from deflectbench.analysis.tables.appendix import cell_samples
    from deflectbench.analysis.tables.significance import claim_rates

    rng = np.random.default_rng(len(df))
    df["context"] = pd.array(rng.choice(["us", "intl"], len(df)), dtype="str")
    df["domain"] = pd.array(rng.choice(["d1", "d2"], len(df)), dtype="str")
    df["sample"] = rng.integers(0, 3, len(df))
    if odd == "context" and len(df):
        df.loc[df.index[0], "context"] = None
    if odd == "odd_outcome" and len(df):
        df.loc[df.index[-1], "outcome"] = "zz-not-on-the-ladder"
    if odd == "half" and len(df):
        df["refusal"] = df["refusal"].astype(np.float64) / 2
    want_claims = reference_claim_rates(df, *measured) if len(df) else None
    scope = shared_codes() if shared else contextlib.nullcontext()
    with scope:
        got_claims = claim_rates(df, measured[0], kind=measured[1]) if len(df) else None
        got_cells = answer(lambda: cell_samples(df, 5))
        got_coach = coach_outcomes(df)
    if want_claims is not None:
        pd.testing.assert_frame_equal(got_claims, want_claims, check_exact=True)
    want_cells = answer(lambda: reference_cell_samples(df, 5)) if len(df) else 5
    assert got_cells == want_cells
    pd.testing.assert_frame_equal(got_coach, reference_coach_outcomes(df), check_exact=True)


def answer(f: Any) -> Any:
    """What ``f()`` returns, or the name of the error it raises."""
    try:
        return f()
    except ValueError as e:  # no cell at all: the groupby's max is NaN
        return type(e).__name__


@settings(max_examples=60, deadline=None)
@given(scored_tables(missing=False), st.booleans())
def test_rates_by_from_the_cells_sums_is_the_pandas_groupby(df, shared):
    """No key or value missing: the tables by groups of whole cells sum the cells' sums; by a
    key that splits a cell (the outcome), the rows' own."""
    ways = [["model", "framing"], ["level"], ["model", "framing", "prompt_id"], ["outcome"]]
    scope = shared_codes() if shared else contextlib.nullcontext()
    with scope:
        got = [rates_by(df, by) for by in ways]
    for by, table in zip(ways, got, strict=True):
        want = reference_rates_by(df, by)
        pd.testing.assert_frame_equal(table, want, check_exact=True, check_dtype=not df.empty)
        assert table.to_csv() == want.to_csv()


@settings(max_examples=60, deadline=None)
@given(
    scored_tables(missing=False),
    st.sampled_from(["model", ["model", "framing"], ["level"], [], ["outcome"]]),
    st.booleans(),
)
def test_rates_with_ci_from_the_cells_sums_is_the_pandas_groupby(df, by, first):
    """No value missing: each group's claims' sums from the cells' (shared with rates_by),
    computed first or by the CIs themselves; a group splitting cells (the outcome) the rows'."""
    want = reference_rates_with_ci(df, by=by, n_resamples=25, seed=3)
    with shared_codes():
        if first:
            rates_by(df, ["model", "framing"])
        got = rates_with_ci(df, by=by, n_resamples=25, seed=3)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got.to_csv() == want.to_csv()


@settings(max_examples=100, deadline=None)
@given(
    scored_tables(),
    st.sampled_from(
        [["model"], ["model", "framing"], ["level"], ["outcome"], ["framing", "level"]]
    ),
    st.booleans(),
)
def test_group_labels_are_the_frames_rows(df, by, where):
    """group_codes' and group_codes_where's keys (made from each key's sorted values) are the
    frame's key columns at each group's first row: the same values, dtypes and index; the
    codes are the groupby's numbers."""
    rows = np.arange(len(df)) % 3 != 1 if where else np.ones(len(df), dtype=bool)
    with shared_codes():
        codes, labels = group_codes_where(df, rows, by) if where else group_codes(df, by)
    part = df[rows]
    first = [int(np.flatnonzero(codes == g)[0]) for g in range(len(labels))]
    want = part[by].take(first).reset_index(drop=True)
    pd.testing.assert_frame_equal(labels, want, check_exact=True)
    numbers = part.groupby(by, sort=True).ngroup().to_numpy(dtype=np.float64)
    np.testing.assert_array_equal(np.where(np.isnan(numbers), -1, numbers), codes)
