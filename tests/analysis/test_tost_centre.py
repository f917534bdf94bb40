"""TOST prints the difference its 90% interval is centred on (issue 23, item 5): the interval
comes from Agresti-Caffo adjusted counts, so it is centred on the adjusted difference, which is
printed beside the raw one (terminal, report) and given in the JSON (``diff_adjusted``)."""

from __future__ import annotations

import pandas as pd
import pytest
from rich.console import Console

from deflectbench.analysis.stats.hypothesis import tost_two_proportions
from deflectbench.analysis.tables.significance import level_tost
from deflectbench.views.terminal.tables import tost_interval


def _scored(rates: dict[int, tuple[int, int]]) -> pd.DataFrame:
    rows = []
    for level, (refused, n) in rates.items():
        for i in range(n):
            rows.append({"level": level, "claim_id": f"L{level}_{i % 4}", "refusal": int(i < refused),
                         "outcome": "refusal" if i < refused else "other"})  # fmt: skip
    return pd.DataFrame(rows)


def test_the_interval_is_centred_on_the_adjusted_difference():
    # small levels: 2/20 vs 3/20, raw diff -0.05, adjusted (3/22 - 4/22) = -0.04545...
    t = level_tost(_scored({1: (2, 20), 2: (3, 20)}))
    r = t.iloc[0]
    assert r["diff"] == pytest.approx(-0.05)
    assert r["diff_adjusted"] == pytest.approx(3 / 22 - 4 / 22)
    assert (r["ci90_lo"] + r["ci90_hi"]) / 2 == pytest.approx(r["diff_adjusted"])
    assert r["diff_adjusted"] != pytest.approx(r["diff"])
    wald = tost_two_proportions(2, 20, 3, 20, method="wald")
    assert (wald.ci90[0] + wald.ci90[1]) / 2 == pytest.approx(wald.diff)
    line = tost_interval(r["ci90_lo"], r["ci90_hi"], r["diff_adjusted"])
    console = Console(record=True, width=80)
    console.print(line)
    text = console.export_text()
    assert "centred on the adjusted -4.5" in text and "90% CI" in text
    print(f"diff {100 * r['diff']:+.1f} pp" + text.strip())


def test_the_report_shows_the_interval_and_its_centre():
    from deflectbench.views.report.tables import _tost_ci

    r = level_tost(_scored({1: (2, 20), 2: (3, 20)})).iloc[0].to_dict()
    assert _tost_ci(r) == (
        f"{100 * r['ci90_lo']:+.1f} to {100 * r['ci90_hi']:+.1f} ({100 * r['diff_adjusted']:+.1f})"
    )
    assert _tost_ci(r).endswith("(-4.5)")
