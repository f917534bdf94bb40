"""csv_safe neutralises exactly what the per-cell rule did: the same frame, the same CSV bytes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deflectbench.escaping import FORMULA_START, csv_safe, neutralise


def reference(frame: pd.DataFrame) -> pd.DataFrame:
    """The rule as it was first written, one cell at a time through DataFrame.apply."""
    return frame.apply(
        lambda col: col if getattr(col.dtype, "kind", "O") in "biufcmM" else col.map(neutralise)
    )


def same(frame: pd.DataFrame) -> None:
    want, got = reference(frame), csv_safe(frame)
    pd.testing.assert_frame_equal(got, want)
    assert got.to_csv(index=False, lineterminator="\n") == want.to_csv(
        index=False, lineterminator="\n"
    )


# Arrow-backed strings hold UTF-8 only, so no lone surrogates; formula starts and ``'`` are
# made likely, at the start and alone.
_text = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=8),
    st.builds(
        str.__add__,
        st.sampled_from([*FORMULA_START, "'", " ", "1", "-1"]),
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=6),
    ),
)
_missing = st.sampled_from([None, np.nan])
_STRING_DTYPES = ["str", "string", "string[python]", "string[pyarrow]", "category"]


@st.composite
def frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(0, 6))
    columns: dict[str, object] = {}
    for j in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from([*_STRING_DTYPES, "object", "int", "float", "bool"]))
        if kind in _STRING_DTYPES:
            cells = draw(st.lists(st.one_of(_text, _missing), min_size=n, max_size=n))
            columns[f"c{j}"] = pd.Series(cells, dtype=kind)
        elif kind == "object":  # text mixed with numbers and missing values, as exported
            cell = st.one_of(_text, _missing, st.integers(-5, 5), st.floats(-2, 2))
            columns[f"c{j}"] = pd.Series(draw(st.lists(cell, min_size=n, max_size=n)), dtype=object)
        elif kind == "int":
            columns[f"c{j}"] = pd.Series(draw(st.lists(st.integers(-9, 9), min_size=n, max_size=n)))
        elif kind == "float":
            floats = st.floats(allow_nan=True, allow_infinity=False, width=32)
            columns[f"c{j}"] = pd.Series(draw(st.lists(floats, min_size=n, max_size=n)))
        else:
            columns[f"c{j}"] = pd.Series(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    return pd.DataFrame(columns, index=pd.RangeIndex(n))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames())
def test_csv_safe_equals_the_per_cell_rule(frame):
    same(frame)


@pytest.mark.parametrize("dtype", [*_STRING_DTYPES, object])
def test_formula_cells_are_prefixed_and_nothing_else(dtype):
    frame = pd.DataFrame(
        {
            "reply": pd.Series(["=HYPERLINK(1)", "ok", None, "-2", "@x", "\tq"], dtype=dtype),
            "n": [-1, 2, 3, 4, 5, 6],
        }
    )
    same(frame)
    got = csv_safe(frame)
    assert [got["reply"][i] for i in (0, 1, 3, 4, 5)] == [
        "'=HYPERLINK(1)",
        "ok",
        "'-2",
        "'@x",
        "'\tq",
    ]
    assert got["n"].tolist() == [-1, 2, 3, 4, 5, 6]
    assert frame["reply"][0] == "=HYPERLINK(1)"  # the input is left as it was


def test_object_numbers_are_converted_as_before():
    # the old map turned an object column of numbers into float64 (written 1.0): kept
    same(pd.DataFrame({"x": pd.Series([1, np.nan], dtype=object)}))
    same(pd.DataFrame({"x": pd.Series([None, None], dtype=object), "y": ["a", "b"]}))


def test_duplicate_column_names_and_empty_frames():
    same(pd.DataFrame([["=a", "b", 1]], columns=["t", "t", "n"]))
    same(pd.DataFrame({"t": pd.Series([], dtype="str")}))
    same(pd.DataFrame(index=range(3)))
