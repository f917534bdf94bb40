"""One claim gives no interval, and the small-sample flag covers every CI the tool prints
(issue 23, item 2): turn 1's rates, the multi-turn shares, the other packs' refusal and
``validate``'s statistics."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
from rich.console import Console

from deflectbench.analysis import AnalysisOptions, analyze, summarize
from deflectbench.analysis.stats.bootstrap import block_bootstrap_ci, block_bootstrap_many
from deflectbench.analysis.summary.small_sample import MULTI_TURN, small_sample_elsewhere
from deflectbench.analysis.validity.measures import compare
from deflectbench.benchmark import default_benchmark, load_pack
from deflectbench.store import Store
from deflectbench.views.terminal.tables import render_terminal
from support.report_store import claims_per_level, make_store

V1 = default_benchmark()
OPTIONS = AnalysisOptions(n_resamples=50)


def test_one_claim_has_a_rate_but_no_interval():
    one = block_bootstrap_ci([1, 0, 1, 1], ["c1"] * 4, n_resamples=200)
    assert one.rate == 0.75 and np.isnan(one.lo) and np.isnan(one.hi)
    two = block_bootstrap_ci([1, 0, 1, 1], ["c1", "c1", "c2", "c2"], n_resamples=200)
    assert two.lo < two.hi
    # per column: a column observed in one claim only has no interval, the others do
    m = np.array([[1, np.nan], [0, np.nan], [1, 1.0], [1, 0.0]])
    res = block_bootstrap_many(m, ["c1", "c1", "c2", "c2"], n_resamples=200)
    assert not np.isnan(res.lo[0]) and np.isnan(res.lo[1]) and res.rate[1] == 0.5
    # validate's statistics too
    v = compare([1, 0, 1, 1], [1, 0, 0, 1], ["c1"] * 4, n_resamples=100)
    assert v["accuracy"].value == 0.75 and np.isnan(v["accuracy"].lo)
    print("one claim:", one, "two claims:", two)


def test_a_one_claim_store_shows_a_dash_and_says_why(tmp_path):
    db = make_store(tmp_path / "one.db", V1, models=("acme/alpha-1",), claims=["L1_US_01"],
                    hostile=False)  # fmt: skip
    with Store.open(db, readonly=True) as s:
        typed = summarize(s, V1, OPTIONS)
    j = typed.to_json()
    refusal = j["models"]["acme/alpha-1"]["outcomes"]["refusal"]
    assert refusal["rate"] is not None and refusal["ci95"] == [None, None]
    small = j["small_sample"]
    assert small["any"] and small["flagged"] == [{"model": "acme/alpha-1", "n_claims": 1}]
    assert "acme/alpha-1 (1 claim)" in small["note"] and "(1 claims)" not in small["note"]
    assert "A CI over one claim is undefined" in small["note"]
    console = Console(record=True, width=200)
    for table in render_terminal(typed):
        console.print(table)
    text = console.export_text()
    assert "20.0-20.0" not in text and "A CI over one claim is undefined" in " ".join(text.split())
    print(small["note"])


def test_multi_turn_cis_are_flagged():
    transitions = pd.DataFrame(
        {"model": ["m/a", "m/a"], "turn1_outcome": ["refusal"] * 2, "n_claims": [9, 9]}
    )
    stripped = pd.DataFrame({"model": ["m/a"], "n": [4], "n_claims": [1]})
    turns = SimpleNamespace(transitions=transitions, stripped=stripped)
    flagged = small_sample_elsewhere(turns, None, V1.pack, 10)  # type: ignore[arg-type]
    assert flagged.to_dict("records") == [
        {"section": MULTI_TURN, "pack": "", "model": "m/a", "n_claims": 1}
    ]
    enough = small_sample_elsewhere(
        SimpleNamespace(transitions=transitions.assign(n_claims=12), stripped=stripped.iloc[:0]),
        None,
        V1.pack,
        10,
    )
    assert enough.empty


def test_other_packs_cis_are_flagged(tmp_path):
    """v1 on 12 claims (not flagged), the Spanish pack beside it on 8: its CIs are flagged."""
    db = tmp_path / "two.db"
    es = load_pack("deflectbench-v1-es")
    for b, per_level in ((V1, 3), (es, 2)):
        make_store(db, b, models=("acme/alpha-1",), claims=claims_per_level(b, per_level),
                   templates=["explicit_direct_WA", "implicit_neutral"], hostile=False)  # fmt: skip
    with Store.open(db, readonly=True) as s:
        j = analyze(s, V1, OPTIONS)
    small = j["small_sample"]
    assert small["any"] and small["flagged"] == [] and small["note"] is None
    assert small["elsewhere"] == [
        {"section": "other packs", "pack": es.pack, "model": "acme/alpha-1", "n_claims": 8}
    ]
    assert f"other packs: acme/alpha-1 in {es.pack} (8 claims)" in small["elsewhere_note"]
    print(small["elsewhere_note"])


def test_validate_flags_its_cis(tmp_path):
    from deflectbench.analysis.validity.load import Validity

    raters = pd.DataFrame({"rater": ["j"], "field": ["refusal"], "n": [8], "claims": [3]})
    empty = pd.DataFrame(columns=["n", "claims"])
    v = Validity(raters, empty, empty, {"used": 8})
    flag = v.to_json()["small_sample"]
    assert flag["any"] and flag["fewest_claims"] == 3 and "3 claims" in flag["note"]
    ok = Validity(raters.assign(claims=40), empty, empty, {"used": 8}).to_json()["small_sample"]
    assert ok == {"min_claims": 10, "any": False, "fewest_claims": 40, "note": None}
