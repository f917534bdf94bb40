"""views.records gives what DataFrame.to_dict(orient="records") gives: the same keys, the same
values of the same Python types, for every dtype the views read (and the rest by to_dict)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deflectbench.views.records import records

_DTYPES = ["str", "string", "string[python]", "int64", "float64", "bool", "object", "Int64"]


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return type(a) is type(b)
    return type(a) is type(b) and (a is b or a == b)


@st.composite
def frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(0, 5))
    names = draw(st.lists(st.sampled_from(["a", "b", "c", 1]), max_size=4))  # repeats allowed
    data = []
    for _ in names:
        dtype = draw(st.sampled_from(_DTYPES))
        if dtype in ("str", "string", "string[python]", "object"):
            cell = st.one_of(st.text(st.characters(blacklist_categories=("Cs",)), max_size=4),
                             st.none(), st.just(np.nan))  # fmt: skip
        elif dtype == "int64":
            cell = st.integers(-(2**40), 2**40)
        elif dtype == "Int64":
            cell = st.one_of(st.integers(-9, 9), st.none())
        elif dtype == "float64":
            cell = st.floats(allow_infinity=True, allow_nan=True)
        else:
            cell = st.booleans()
        data.append(pd.Series(draw(st.lists(cell, min_size=n, max_size=n)), dtype=dtype))
    if not names:
        return pd.DataFrame(index=range(n))
    frame = pd.concat(data, axis=1, ignore_index=True)
    frame.columns = names
    return frame


@pytest.mark.filterwarnings("ignore:DataFrame columns are not unique")
@settings(max_examples=400)
@given(frames())
def test_records_equal_to_dict(frame):
    want, got = frame.to_dict(orient="records"), records(frame)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert list(g) == list(w)
        assert all(_same(g[k], w[k]) for k in w), (g, w)
