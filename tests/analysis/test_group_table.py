"""The tables' grouped means (issue 36): groups numbered once and summed with ``np.bincount``
give pandas' groupby table bit for bit (the independent version, written plainly here), with
missing keys left out, groups in sorted order, the key columns' dtypes, and pandas' own sums
for any column that is not whole numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from deflectbench.analysis.tables.grouping import group_codes, group_means


def pandas_group_means(df: pd.DataFrame, by: list[str], columns: list[str]) -> pd.DataFrame:
    grouped = df.groupby(by, sort=True, observed=True)
    out = grouped[columns].mean()
    out.insert(0, "n", grouped.size())
    return out.reset_index()


@st.composite
def frames(draw):
    n = draw(st.integers(1, 60))
    models = st.one_of(st.none(), st.sampled_from(["m-b", "m-a", "é", "Z"]))
    df = pd.DataFrame(
        {
            "model": pd.array(draw(st.lists(models, min_size=n, max_size=n)), dtype="str"),
            "level": draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)),
            "framing": pd.array(
                draw(
                    st.lists(st.sampled_from(["coach", "direct", "choose"]), min_size=n, max_size=n)
                ),
                dtype="str",
            ),
            "flag": draw(st.lists(st.sampled_from([0.0, 1.0, np.nan]), min_size=n, max_size=n)),
            "count": draw(st.lists(st.integers(0, 5000), min_size=n, max_size=n)),
            "real": draw(
                st.lists(
                    st.one_of(st.just(np.nan), st.floats(-1e6, 1e6, allow_nan=False)),
                    min_size=n,
                    max_size=n,
                )
            ),
        }
    )
    return df


@settings(max_examples=300, deadline=None)
@given(
    frames(),
    st.sampled_from([["model"], ["level"], ["model", "framing"], ["framing", "level", "model"]]),
)
def test_group_means_are_pandas_groupby_means_bit_for_bit(df, by):
    columns = ["flag", "count", "real"]
    got = group_means(df, by, columns)
    want = pandas_group_means(df, by, columns)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got.to_csv() == want.to_csv()


def test_groups_are_numbered_in_sorted_order_and_missing_keys_left_out():
    df = pd.DataFrame(
        {"model": pd.array(["b", None, "a", "b", "a"], dtype="str"), "level": [2, 1, 3, 1, 3]}
    )
    codes, labels = group_codes(df, ["model", "level"])
    assert codes.tolist() == [2, -1, 0, 1, 0]
    assert labels.to_dict("list") == {"model": ["a", "b", "b"], "level": [3, 1, 2]}
    assert labels["model"].dtype == df["model"].dtype


def test_other_numbers_are_averaged_by_pandas_on_the_frame_as_laid_out():
    """pandas sums a block of columns plainly when it has no NaN and the rows come sorted by
    group, else with compensation: the same numbers without their NaN average differently in
    the last bit, so such a column is pandas' to average (hypothesis found it)."""
    real = [np.nan] * 41 + [0.0, -48577.0, -999999.430611, 1.0]
    df = pd.DataFrame({"level": [1] * 45, "flag": [0.0] * 45, "real": real})
    got = group_means(df, ["level"], ["flag", "real"])
    pd.testing.assert_frame_equal(
        got, pandas_group_means(df, ["level"], ["flag", "real"]), check_exact=True
    )


def test_whole_numbers_too_large_to_sum_exactly_are_averaged_by_pandas():
    df = pd.DataFrame({"k": ["a", "a", "b"], "big": [2.0**53, 1.0, 3.0]})
    got = group_means(df, ["k"], ["big"])
    pd.testing.assert_frame_equal(got, pandas_group_means(df, ["k"], ["big"]), check_exact=True)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=60), st.integers(0, 10**7))
def test_distinct_by_counting_is_np_unique(values, extra):
    """grouping._distinct (counting for codes below a small bound, np.unique above it):
    np.unique's first positions and inverse, the same numbers and types."""
    from deflectbench.analysis.tables.grouping import _distinct

    x = np.asarray(values, dtype=np.int64)
    _, want_first, want_inverse = np.unique(x, return_index=True, return_inverse=True)
    for bound in (41, 41 + extra):
        first, inverse = _distinct(x, bound)
        np.testing.assert_array_equal(first, want_first)
        np.testing.assert_array_equal(inverse, want_inverse.reshape(-1))
        assert first.dtype == want_first.dtype and inverse.dtype == want_inverse.dtype


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 30), st.integers(0, 2**32 - 1), st.sampled_from(["int", "float", "none"]))
def test_sort_framings_is_the_stable_sort_values(n, seed, level):
    """sort_framings (a Python sort of each row's keys) gives sort_values' order: stable, a
    missing key last, framings in the paper's order, an unknown or missing framing after."""
    from deflectbench.analysis.tables.grouping import sort_framings
    from deflectbench.vocab import FRAMINGS

    rng = np.random.default_rng(seed)
    pick = lambda options: [options[i] for i in rng.integers(0, len(options), n)]  # noqa: E731
    df = pd.DataFrame(
        {
            "model": pd.array(pick(["m-b", "m-a", "M", "é", None]), dtype="str"),
            "framing": pd.array(pick([*FRAMINGS[:4], "zz-own", None]), dtype="str"),
            "prompt_id": pd.array(pick(["p2", "p10", "p1"]), dtype="str"),
            "value": np.arange(n),
        }
    )
    if level == "int":
        df["level"] = rng.integers(1, 4, n)
    elif level == "float":
        df["level"] = np.asarray(pick([1.0, 2.0, -0.0, 0.0, np.nan]), dtype=np.float64)
    rank = {f: i for i, f in enumerate(FRAMINGS)}
    keys = [c for c in ("model", "framing", "prompt_id", "level") if c in df]

    def key(col: pd.Series) -> pd.Series:
        return col.map(lambda v: rank.get(v, len(rank))) if col.name == "framing" else col

    want = df.sort_values(keys, key=key, kind="stable").reset_index(drop=True)
    pd.testing.assert_frame_equal(sort_framings(df), want, check_exact=True)
