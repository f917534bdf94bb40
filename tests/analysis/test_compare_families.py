"""Holm's families (issue 33): the family a row is adjusted in is named with its size, the
choice is the user's, and a planted +8 pp effect in one framing is found within its family
(refusal-like measure across the 7 framings) where the all-rows family of about 300 rows loses
it. Plus the rule grammar: every accepted form read in one documented direction, identical
sides passing every requirement-style rule, and spellings that read both ways refused."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from deflectbench.analysis.compare.holm import holm
from deflectbench.analysis.compare.table import HOLM_FAMILIES, compare_scored, with_holm
from deflectbench.analysis.compare.thresholds import (
    FAIL_IF,
    REQUIRE,
    ThresholdError,
    check_rules,
    parse_threshold,
)
from deflectbench.analysis.stats.descriptive import cohens_h
from deflectbench.benchmark import default_benchmark
from deflectbench.vocab import FIELDS, OUTCOMES

CLEAN = {"compliance_clean": 1, "any_fallacy_present": 1, "RH_present": 1}
REFUSE = {"refusal": 1}


def planted(seed: int, *, n_claims: int = 80, samples: int = 2, coach_shift: float = 0.0):
    """Refusal 30% (a per-claim effect), else clean compliance; ``coach_shift`` moves refusal
    under the coach framing only."""
    b = default_benchmark()
    claims = [c.claim_id for c in b.claims][:n_claims]
    effects = np.random.default_rng(99).normal(0, 0.05, size=len(claims))
    rng = np.random.default_rng(seed)
    rows, gen = [], 0
    for ci, claim in enumerate(claims):
        for t in b.templates:
            p = 0.30 + effects[ci] + (coach_shift if t.framing == "coach" else 0.0)
            for s in range(1, samples + 1):
                refused = rng.random() < p
                gen += 1
                fields = dict.fromkeys(FIELDS, 0) | (REFUSE if refused else CLEAN)
                rows.append({"gen_id": gen, "claim_id": claim, "prompt_id": t.prompt_id,
                             "sample": s, "framing": t.framing, **fields,
                             "outcome": "refusal" if refused else "clean_compliance"})  # fmt: skip
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def shifted():
    # the case: +8 pp planted under coach (drawn: +9.6 pp, CI +3.3 to +14.6, h 0.20)
    a, b = planted(21), planted(22, coach_shift=0.08)
    return compare_scored(a, b, model_a="old", model_b="new", n_resamples=400, seed=3)


def _row(table, measure="refusal", scope="framing", framing="coach"):
    t = table[(table.kind == "outcome") & (table.measure == measure) & (table.scope == scope)]
    return t[t.framing == framing].iloc[0] if scope == "framing" else t.iloc[0]


def test_a_planted_framing_effect_is_found_within_its_family_not_among_all_rows(shifted):
    r = _row(shifted)
    assert r.ci_lo <= 0.08 <= r.ci_hi and r.ci_lo > 0  # its own CI finds it
    assert 0.15 < cohens_h(r.rate_b, r.rate_a) < 0.35 and r.h == pytest.approx(
        cohens_h(r.rate_b, r.rate_a)
    )
    # default family: refusal across the 7 framings (independently: Holm over those 7 rows)
    assert r.holm_family == "refusal by framing" and r.holm_m == 7
    seven = shifted[(shifted.kind == "outcome") & (shifted.measure == "refusal")
                    & (shifted.scope == "framing")]  # fmt: skip
    by_hand = holm(seven.p.to_numpy())
    assert r.p_holm == pytest.approx(by_hand[list(seven.framing).index("coach")])
    assert r.p_holm < 0.05
    every = with_holm(shifted, "all")
    r_all = _row(every)
    assert r_all.holm_family == "every row" and r_all.holm_m == (5 + 8) * (1 + 7 + 15)
    assert r_all.p_holm > 0.05  # lost among every row
    # Bonferroni's bound, written plainly: Holm's adjusted p is at most m * p and at least p
    assert r.p <= r.p_holm <= 7 * r.p + 1e-12


def test_family_names_and_sizes_for_each_choice(shifted):
    sizes = {}
    for family in HOLM_FAMILIES:
        t = with_holm(shifted, family)
        assert t.holm_family.notna().all() and t.holm_m.notna().all()
        sizes[family] = {name: int(m) for name, m in zip(t.holm_family, t.holm_m, strict=True)}
    assert sizes["measure"]["outcomes overall"] == len(OUTCOMES)
    assert sizes["measure"]["fields overall"] == len(FIELDS)
    assert sizes["measure"]["clean_compliance by template"] == 15
    assert sizes["measure"]["field refusal by framing"] == 7
    assert sizes["scope"] == {
        "outcomes overall": 5, "fields overall": 8, "outcomes by framing": 35,
        "fields by framing": 56, "outcomes by template": 75, "fields by template": 120,
    }  # fmt: skip
    assert sizes["all"] == {"every row": 299}
    none = with_holm(shifted, "none")
    assert np.allclose(none.p_holm, none.p, equal_nan=True)
    with pytest.raises(ValueError, match="unknown Holm family"):
        with_holm(shifted, "rows")


def test_holm_within_a_family_against_its_definition(shifted):
    """Each family's adjusted p-values equal the step-down written plainly over its rows."""
    t = with_holm(shifted, "scope")
    fam = t[t.holm_family == "outcomes by framing"]
    p = fam.p.to_numpy()
    order = np.argsort(p, kind="stable")
    m, running, expected = len(p), 0.0, np.empty(len(p))
    for i, j in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[j]))
        expected[j] = running
    assert np.allclose(fam.p_holm.to_numpy(), expected)


# -- the rules ----------------------------------------------------------------------------------

FORMS = [
    # (flag, text, fails, points)
    (FAIL_IF, "refusal < -5pp", "below", 5),
    (FAIL_IF, "refusal drop > 5pp", "below", 5),
    (FAIL_IF, "refusal > +3pp", "above", 3),
    (FAIL_IF, "refusal > 3pp", "above", 3),
    (FAIL_IF, "refusal rise > 3pp", "above", 3),
    (FAIL_IF, "|refusal| > 5pp", "either", 5),
    (FAIL_IF, "field:soft_refusal > 2pp@explicit_coach_WA", "above", 2),
    (REQUIRE, "refusal < 5pp", "above", 5),
    (REQUIRE, "refusal < +5pp", "above", 5),
    (REQUIRE, "refusal > -5pp", "below", 5),
    (REQUIRE, "refusal drop < 5pp", "below", 5),
    (REQUIRE, "refusal rise < 5pp", "above", 5),
    (REQUIRE, "|refusal| < 5pp", "either", 5),
]


@pytest.mark.parametrize(("flag", "text", "fails", "points"), FORMS)
def test_every_form_reads_one_way(flag, text, fails, points):
    t = parse_threshold(text, flag)
    assert (t.fails, t.points, t.flag) == (fails, points, flag)


@pytest.mark.parametrize(
    ("flag", "text", "message"),
    [
        (FAIL_IF, "refusal < 5pp", "would fail on no change at all"),
        (FAIL_IF, "refusal > -5pp", "would fail on no change at all"),
        (FAIL_IF, "refusal drop < 5pp", "would fail on no change at all"),
        (FAIL_IF, "|refusal| < 5pp", "would fail on no change at all"),
        (REQUIRE, "refusal < -5pp", "no change at all would break this"),
        (REQUIRE, "refusal drop > 5pp", "no change at all would break this"),
        (FAIL_IF, "refusal drop > -5pp", "without a sign"),
        (FAIL_IF, "|refusal > 5pp", "unclosed"),
        (FAIL_IF, "refusal >= 5pp", "not a comparison"),
    ],
)
def test_a_rule_that_reads_both_ways_is_refused_in_one_line(flag, text, message):
    with pytest.raises(ThresholdError, match=message) as e:
        parse_threshold(text, flag)
    line = str(e.value)
    assert ("\n" not in line and "accepted forms" in line) or "expected" in line
    assert "'MEASURE drop > 5pp'" in line  # the forms are shown


def test_identical_sides_pass_every_rule_and_a_change_fails_the_right_side():
    a = planted(1, n_claims=30, samples=2)
    same = compare_scored(a, a, model_a="x", model_b="x", n_resamples=200)
    rules = [parse_threshold(text, flag) for flag, text, _, _ in FORMS]
    failures, untested = check_rules(same, rules)
    assert failures == [] and untested == []
    # a fall of 30 points in refusal: fails the "below" rules only
    b = a.copy()
    b["outcome"] = "clean_compliance"
    b["refusal"] = 0
    fell = compare_scored(a, b, model_a="x", model_b="y", n_resamples=200)
    failures, _ = check_rules(fell, rules)
    failed = {(f.threshold.flag, f.threshold.text) for f in failures}
    below = {(flag, text) for flag, text, fails, _ in FORMS if fails in ("below", "either")}
    assert failed == {x for x in below if "explicit_coach_WA" not in x[1]}
    assert all("lies wholly below -5 pp" in f.line() for f in failures)


def test_a_rule_no_result_could_fail_is_not_tested():
    low = planted(1, n_claims=30, samples=2)
    low["outcome"], low["refusal"] = "clean_compliance", 0  # a baseline refusing 0%
    low.loc[low.index[:20], ["outcome", "refusal"]] = ["refusal", 1]  # 20 of 1,800: 1.1%
    t = compare_scored(low, low, model_a="x", model_b="y", n_resamples=200)
    failures, untested = check_rules(t, [parse_threshold("refusal drop > 5pp")])
    assert failures == [] and len(untested) == 1
    assert "even a fall to 0% would leave the CI above -5 pp" in untested[0].line()
    assert untested[0].line().startswith("not tested: refusal overall, y vs baseline x:")
    one = planted(1, n_claims=1, samples=2)
    t = compare_scored(one, one.assign(outcome="other", refusal=0), model_a="x", model_b="y",
                       n_resamples=50)  # fmt: skip
    failures, untested = check_rules(t, [parse_threshold("refusal drop > 5pp")])
    assert failures == [] and "no 95% CI (1 claim on both sides" in untested[0].why
    assert math.isnan(float(t.ci_lo.iloc[0]))
