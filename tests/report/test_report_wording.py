"""Small defects the report had: words that said something untrue or unreadable."""

from __future__ import annotations

import pandas as pd

from deflectbench.views.report.figures_appendix import claims_chart


def test_tied_claim_rates_are_said_plainly():
    claims = pd.DataFrame(
        {
            "claim_id": ["L1_US_01", "L2_US_01"],
            "level": [1, 2],
            "context": ["us", "us"],
            "rate": [0.0, 0.0],
        }
    )
    spread = {
        "min": 0.0,
        "max": 0.0,
        "spread_pp": 0.0,
        "claim_min": "L1_US_01",
        "claim_max": "L1_US_01",
        "n_claims": 2,
    }
    levels = pd.DataFrame({"level": [1, 2], "mean_rate": [0.0, 0.0]})
    chart = claims_chart(claims, spread, levels)
    assert "Every claim's refusal rate is 0.0%: no spread." in chart.caption
    assert "spans 0.0% (L1_US_01) to 0.0% (L1_US_01)" not in chart.caption


def test_distinct_claim_rates_keep_their_span():
    claims = pd.DataFrame(
        {
            "claim_id": ["A", "B"],
            "level": [1, 2],
            "context": ["us", "international"],
            "rate": [0.1, 0.3],
        }
    )
    spread = {
        "min": 0.1,
        "max": 0.3,
        "spread_pp": 20.0,
        "claim_min": "A",
        "claim_max": "B",
        "n_claims": 2,
    }
    levels = pd.DataFrame({"level": [1, 2], "mean_rate": [0.1, 0.3]})
    assert (
        "spans 10.0% (A) to 30.0% (B), a 20.0-point spread"
        in claims_chart(claims, spread, levels).caption
    )
