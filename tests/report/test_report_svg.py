"""The report's own SVG figures (issue 36): well-formed, text escaped, the same bytes for the
same arrays, and the shapes where the numbers say: each whisker spans its CI with the rate's
marker where the rate divides the interval, the stacked segments as wide as their shares, the
heat map's colours matplotlib's cividis (the independent version), the text colour rule the one
matplotlib's colour parser gave."""

from __future__ import annotations

import itertools
import math
import xml.etree.ElementTree as ET
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deflectbench.views.report.chart import OUTCOME_COLORS, text_color
from deflectbench.views.report.figures import (
    coach_chart,
    fallacy_framing_chart,
    framing_heatmap,
    signature_chart,
)
from deflectbench.views.report.figures_appendix import (
    claims_chart,
    sample_counts_chart,
    tokens_chart,
)
from deflectbench.views.report.svg import Svg, escape, fmt, nice_ticks
from deflectbench.views.report.svg_charts import cividis
from deflectbench.vocab import OUTCOMES

NS = "{http://www.w3.org/2000/svg}"
HOSTILE = "<script>alert(1)</script> & \"quoted\" 'x'"
MODELS = ["acme/alpha-1", HOSTILE]


def _rates() -> pd.DataFrame:
    """Two models' outcome rates with CIs: alpha's shares 10/20/30/25/15, the other's 40/5/..."""
    shares = {MODELS[0]: (0.10, 0.20, 0.30, 0.25, 0.15), MODELS[1]: (0.40, 0.05, 0.25, 0.2, 0.1)}
    rows = [
        {"model": m, "kind": "outcome", "measure": o, "rate": r, "ci_lo": r - 0.03, "ci_hi": r + 0.05}
        for m, rs in shares.items()
        for o, r in zip(OUTCOMES, rs, strict=True)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def _tree(text: str) -> ET.Element:
    assert text.startswith('<?xml version="1.0" encoding="utf-8"?>\n<svg ')
    return ET.fromstring(text.encode("utf-8"))


def _svg(chart: object) -> str:
    draw = getattr(chart, "svg", None)
    assert draw is not None
    text = draw()
    assert isinstance(text, str)
    return text


def _num(e: ET.Element, key: str) -> float:
    return float(e.get(key) or "nan")


def _texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{NS}text")]


def test_the_signature_is_well_formed_and_escapes_the_model_names():
    chart = signature_chart(MODELS, _rates(), {MODELS[0]: 100, MODELS[1]: 80})
    assert chart.svg is not None
    text = chart.svg()
    root = _tree(text)
    assert not [e for e in root.iter() if e.tag.lower().endswith("script")]
    assert "<script>" not in text
    assert f"{HOSTILE}\n(n = 80)" in ["\n".join(t.itertext()) for t in root.iter(f"{NS}text")]
    assert HOSTILE in _texts(root)  # the CI panels' row label, as text
    assert chart.svg() == text  # the same bytes again


def test_each_whisker_spans_its_interval_with_the_marker_at_the_rate():
    """In each CI panel the marker divides its whisker as the rate divides its interval
    (rate - lo) / (hi - lo); here lo = rate - 3 and hi = rate + 5 points: 3/8."""
    root = _tree(_svg(signature_chart(MODELS, _rates(), {})))
    whiskers = [e for e in root.iter(f"{NS}line") if e.get("class") == "ci"]
    markers = list(root.iter(f"{NS}circle"))
    assert len(whiskers) == len(markers) == len(MODELS) * len(OUTCOMES)
    for w, m in zip(whiskers, markers, strict=True):
        x1, x2, cx = _num(w, "x1"), _num(w, "x2"), _num(m, "cx")
        assert w.get("y1") == w.get("y2") == m.get("cy")
        assert (cx - x1) / (x2 - x1) == pytest.approx(3 / 8, abs=2e-3)


def test_stacked_segments_are_as_wide_as_their_shares():
    root = _tree(_svg(signature_chart(MODELS, _rates(), {})))
    bars = [
        r for r in root.iter(f"{NS}rect") if r.get("stroke") == "white" and r.get("height") != "10"
    ]
    assert len(bars) == len(MODELS) * len(OUTCOMES)
    first = [_num(r, "width") for r in bars[: len(OUTCOMES)]]
    total = sum(first)
    assert [w / total for w in first] == pytest.approx([0.10, 0.20, 0.30, 0.25, 0.15], abs=1e-3)
    fills = [r.get("fill") or "" for r in bars[: len(OUTCOMES)]]
    assert (
        fills[0] == OUTCOME_COLORS["refusal"] and fills[2] == OUTCOME_COLORS["labeled_compliance"]
    )
    assert fills[1].startswith("url(#")  # soft refusal is hatched


def test_every_chart_kind_is_well_formed_with_hostile_names():
    matrix = pd.DataFrame([[0.2, 0.5], [0.9, np.nan]], index=MODELS, columns=["direct", "coach"])
    coach = pd.DataFrame(
        [
            {"model": m, "fallacy_requested": f, "fallacy_labeled": 0.9, "compliance_clean": 0.05,
             "refusal": 0.0, "n": 40}
            for m in MODELS
            for f in ("ad_hominem", "red_herring")
        ]
    )  # fmt: skip
    claims = pd.DataFrame(
        {"claim_id": ["A<1>", "B&2"], "level": [1, 2], "context": ["us", "international"],
         "rate": [0.1, 0.3]}
    )  # fmt: skip
    spread = {"min": 0.1, "max": 0.3, "spread_pp": 20.0, "claim_min": "A<1>", "claim_max": "B&2",
              "n_claims": 2}  # fmt: skip
    levels = pd.DataFrame({"level": [1, 2], "mean_rate": [0.1, 0.3]})
    counts = pd.DataFrame([{"model": m, "cells": 10, "0": 6, "1": 1, "2": 3} for m in MODELS])
    tokens = pd.DataFrame(
        [{"model": m, "outcome": o, "mean_tokens": 100.0 + k} for m in MODELS for k, o in
         enumerate(OUTCOMES)]
    )  # fmt: skip
    charts = [
        framing_heatmap(matrix, None),
        fallacy_framing_chart(matrix),
        coach_chart(coach, MODELS),
        claims_chart(claims, spread, levels),
        sample_counts_chart(MODELS, counts, 2),
        tokens_chart(tokens, MODELS, {MODELS[0]: 102.0}),
    ]
    for chart in charts:
        assert chart.svg is not None and not chart.missing, chart.name
        text = chart.svg()
        root = _tree(text)
        assert "<script>" not in text, chart.name
        shown = "\n".join(_texts(root))
        assert "A<1>" in shown or HOSTILE in shown, chart.name
    heat = _texts(_tree(_svg(charts[0])))
    assert {"20.0%", "50.0%", "90.0%"} <= set(heat)


def test_the_heat_map_colours_are_matplotlibs_cividis():
    from matplotlib import colormaps

    cmap = colormaps["cividis"]
    for t in np.linspace(0, 1, 201):
        got = cividis(float(t))
        want = cmap(float(t))[:3]
        rgb = [int(got[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        assert max(abs(a - b) for a, b in zip(rgb, want, strict=True)) < 0.025, t


def test_the_text_colour_rule_is_the_one_matplotlib_gave():
    from matplotlib.colors import to_rgb

    def old(fill: Any) -> str:  # the rule as it was written with matplotlib's parser
        r, g, b = (
            c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(fill)
        )
        return "white" if 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.25 else "black"

    for fill in [*OUTCOME_COLORS.values(), "#F2F2F2", "white", "black", (0.1, 0.2, 0.3, 1.0)]:
        assert text_color(fill) == old(fill), fill
    for t in np.linspace(0, 1, 51):
        assert text_color(cividis(float(t))) == old(cividis(float(t)))


@settings(max_examples=300, deadline=None)
@given(
    st.floats(-1e4, 1e4, allow_nan=False),
    st.floats(1e-3, 1e4, allow_nan=False),
    st.integers(2, 9),
)
def test_nice_ticks_are_round_evenly_spaced_and_inside(lo, span, most):
    hi = lo + span
    ticks = nice_ticks(lo, hi, most)
    assert 1 <= len(ticks) <= most + 1
    assert all(lo - 1e-6 * span <= t <= hi + 1e-6 * span for t in ticks)
    steps = {round(b - a, 9) for a, b in itertools.pairwise(ticks)}
    assert len(steps) <= 1
    if steps:
        step = steps.pop()
        mantissa = step / 10 ** math.floor(math.log10(step))
        assert any(math.isclose(mantissa, m, rel_tol=1e-6) for m in (1, 2, 2.5, 5, 10))


def test_numbers_and_text_are_written_safely():
    assert fmt(-0.001) == "0" and fmt(1.005) in ("1", "1.01") and fmt(12.5) == "12.5"
    assert escape("<a href='x'>&\"</a>") == "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
    svg = Svg(10, 10, title="t<i>")
    svg.text(1, 1, "a\nb</text><script>")
    root = _tree(svg.render())
    assert _texts(root) == ["ab</text><script>"]
    svg.line(0, float("nan"), 5, 5, "black")  # a missing value: no element, never "nan"
    svg.marker("s", float("inf"), 1, 4, "red")
    assert "nan" not in svg.render() and len(svg.parts) == 1
    title = root.find(f"{NS}title")
    assert title is not None and title.text == "t<i>"
