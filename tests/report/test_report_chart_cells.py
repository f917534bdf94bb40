"""The charts pick their cells from whole columns (``row_positions`` + ``pick``): the same
values as filtering the frame per model and reindexing it, which they replace."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from deflectbench.views.report.chart import pick, row_positions

MODELS = ["a/x", "b", "c-1", "d"]
OUTCOMES = ["refusal", "clean", "other"]


@st.composite
def frames(draw: st.DrawFn) -> tuple[pd.DataFrame, list[str]]:
    keys = draw(
        st.lists(st.tuples(st.sampled_from(OUTCOMES), st.sampled_from(MODELS)), unique=True)
    )
    values = draw(st.lists(st.floats(allow_infinity=False), min_size=len(keys), max_size=len(keys)))
    frame = pd.DataFrame(
        {
            "outcome": pd.Series([o for o, _ in keys], dtype="str"),
            "model": pd.Series([m for _, m in keys], dtype="str"),
            "v": pd.Series(values, dtype=float),
        }
    )
    present = draw(st.lists(st.sampled_from(MODELS), unique=True))
    return frame, present


@given(frames())
def test_pick_equals_filter_and_reindex(case):
    frame, present = case
    rows = row_positions([frame["outcome"], frame["model"]])
    values = frame["v"].to_numpy(dtype=float)
    for o in OUTCOMES:
        want = frame[frame["outcome"] == o].set_index("model").reindex(present)["v"]
        got = pick(values, [rows.get((o, m)) for m in present])
        np.testing.assert_array_equal(got, want.to_numpy(dtype=float))


def test_a_key_on_two_rows_raises_as_the_reindex_did():
    frame = pd.DataFrame({"model": ["a", "a"], "outcome": ["x", "x"]})
    with pytest.raises(ValueError, match="duplicate labels"):
        row_positions([frame["model"], frame["outcome"]])
