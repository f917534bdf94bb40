"""The report writes each table's CSV without pandas' set-up where it can: the same text as
``csv_safe(frame).to_csv(index=False, lineterminator="\\n")`` (the reference) for every frame,
written here (float64, integer, boolean and ``str`` columns) or left to pandas (any other)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deflectbench.escaping import FORMULA_START, csv_safe
from deflectbench.views.report.build import _csv_cells, _csv_text


def reference(frame: pd.DataFrame) -> str:
    return csv_safe(frame).to_csv(index=False, lineterminator="\n")


_text = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=8),
    st.builds(
        str.__add__,
        st.sampled_from([*FORMULA_START, "'", " ", '"', ",", "\n", "\r", "1", "-1", ""]),
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=6),
    ),
)
_floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1e16, 9.999999999999998e15, 1e-4, 9.99e-5, 0.1, 1 / 3, 5e-324]),
)
_KINDS = ["str", "int", "uint", "float", "bool", "object", "float32", "Int64", "category"]


@st.composite
def frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(0, 6))
    columns: dict[object, object] = {}
    int_names = draw(st.booleans())
    for j in range(draw(st.integers(1, 5))):
        name: object = j if int_names else draw(st.sampled_from([f"c{j}", f"c,{j}", f'"{j}']))
        kind = draw(st.sampled_from(_KINDS))
        if kind in ("str", "category"):
            cells = draw(st.lists(st.one_of(_text, st.none()), min_size=n, max_size=n))
            columns[name] = pd.Series(cells, dtype=kind)
        elif kind == "object":
            cell = st.one_of(_text, st.none(), st.integers(-5, 5), st.floats(-2, 2))
            columns[name] = pd.Series(draw(st.lists(cell, min_size=n, max_size=n)), dtype=object)
        elif kind in ("int", "uint", "Int64"):
            lo = 0 if kind == "uint" else -(2**62)
            ints = draw(st.lists(st.integers(lo, 2**62), min_size=n, max_size=n))
            dtype = {"int": np.int64, "uint": np.uint64, "Int64": "Int64"}[kind]
            columns[name] = pd.Series(ints, dtype=dtype)
        elif kind == "float":
            columns[name] = pd.Series(draw(st.lists(_floats, min_size=n, max_size=n)))
        elif kind == "float32":
            values = draw(st.lists(st.floats(width=32), min_size=n, max_size=n))
            columns[name] = pd.Series(values, dtype=np.float32)
        else:
            columns[name] = pd.Series(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    return pd.DataFrame(columns)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames())
def test_csv_text_is_csv_safe_then_to_csv(frame):
    assert _csv_text(frame) == reference(frame)


def test_the_kinds_written_here_and_left_to_pandas():
    frame = pd.DataFrame(
        {
            "model": pd.Series(["=cmd", None, 'a "b", c', "x\ny"], dtype="str"),
            "n": [1, 2, 3, 4],
            "rate": [0.1, math.nan, 1e16, -0.0],
            "ok": [True, False, True, False],
        }
    )
    assert _csv_cells(frame) is not None
    assert _csv_text(frame) == reference(frame)
    assert "'=cmd" in _csv_text(frame)
    for other in (
        frame.astype({"n": "Int64"}),
        frame.astype({"rate": np.float32}),
        frame.assign(cost=pd.Series([None] * 4, dtype=object)),
        frame.rename(columns={"n": 1.5}),
        pd.DataFrame(index=range(3)),
    ):
        assert _csv_cells(other) is None
        assert _csv_text(other) == reference(other)
    nothing = pd.DataFrame({"text": pd.Series([None, None], dtype="str"), "k": [1, 2]})
    assert _csv_text(nothing) == reference(nothing) == "text,k\n,1\n,2\n"
    empty = frame.iloc[:0]
    assert _csv_text(empty) == reference(empty) == "model,n,rate,ok\n"
