"""``jsonable`` takes the common exact types first (issue 36: a summary holds ~10,000 values);
its output is the rule's, written plainly here, for any nesting of the values a summary holds."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from deflectbench.analysis.jsonable import jsonable


def plain(value: Any) -> Any:
    """The rule: mappings (keys to str) and sequences recursively, numpy scalars to Python,
    NaN/inf, pd.NA and pd.NaT to None, anything else as it is."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is pd.NA or value is pd.NaT:
        return None
    return value


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(max_size=5),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(allow_nan=True, allow_infinity=True).map(np.float64),
    st.integers(-(2**31), 2**31 - 1).map(np.int64),
    st.booleans().map(np.bool_),
    st.sampled_from([pd.NA, pd.NaT]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.one_of(st.text(max_size=3), st.integers()), inner, max_size=4),
        st.dictionaries(st.text(max_size=3), inner, max_size=3).map(OrderedDict),
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(values)
def test_jsonable_is_the_plain_rule(value):
    got, want = jsonable(value), plain(value)
    assert repr(got) == repr(want)
    assert type(got) is type(want)


def test_numpy_arrays_and_floats():
    assert jsonable(np.array([1.0, np.inf, np.nan])) == [1.0, None, None]
    assert jsonable({1: np.float32(2.5)}) == {"1": 2.5}
    assert jsonable(float("-inf")) is None
