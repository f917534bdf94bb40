"""``run --until``'s statistics: the rule's grammar, the looks' Bonferroni levels (the alphas
add up to 0.05 for any declared split), the seeded level-balanced claim order, a look's
half-widths against a claim-block bootstrap written out with loops, the stored record, and the
coverage of the interval at the stopping look on planted clustered data."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deflectbench.analysis.sequential import (
    ALPHA,
    Look,
    LookCell,
    check_look,
    claim_order,
    look_level,
    look_sizes,
    parse_until,
    sequential_record,
)
from deflectbench.errors import ConfigError
from deflectbench.vocab import FIELDS, OUTCOMES


@pytest.mark.parametrize(
    ("text", "measures", "h", "scope", "looks", "first"),
    [
        ("halfwidth<=0.03", OUTCOMES, 0.03, "model", 8, None),
        ("halfwidth<=3pp per model x framing", OUTCOMES, 0.03, "model x framing", 8, None),
        ("HalfWidth <= 0.05 in 4 looks", OUTCOMES, 0.05, "model", 4, None),
        ("halfwidth<=0.03 in 3 looks from 24 claims", OUTCOMES, 0.03, "model", 3, 24),
        ("refusal +-3pp per model x framing", ("refusal",), 0.03, "model x framing", 8, None),
        (
            "clean_compliance +-2pp per model in 5 looks",
            ("clean_compliance",),
            0.02,
            "model",
            5,
            None,
        ),
    ],
)
def test_the_rule_reads_and_writes_back(text, measures, h, scope, looks, first):
    rule = parse_until(text)
    assert (rule.measures, rule.scope, rule.looks, rule.first) == (measures, scope, looks, first)
    assert rule.halfwidth == pytest.approx(h)
    assert parse_until(str(rule)) == rule


@pytest.mark.parametrize(
    "text",
    [
        "",
        "halfwidth<0.03",
        "halfwidth<=0",
        "halfwidth<=0.5",
        "halfwidth<=0.03 per claim",
        "halfwidth<=0.03 in 0 looks",
        "halfwidth<=0.03 in 41 looks",
        "width<=0.03",
        "refusal",
    ],
)
def test_a_bad_rule_is_refused_in_one_line(text):
    with pytest.raises(ConfigError) as err:
        parse_until(text)
    assert "\n" not in str(err.value) and "halfwidth<=H" in str(err.value)


@given(st.integers(1, 40), st.booleans())
def test_the_looks_spend_exactly_alpha(looks, planned_first):
    spent = [1 - look_level(looks, k, planned_first=planned_first) for k in range(1, looks + 1)]
    assert sum(spent) == pytest.approx(ALPHA)
    assert all(0 < a <= ALPHA + 1e-12 for a in spent)
    if not planned_first:  # the textbook Bonferroni split
        assert all(a == pytest.approx(ALPHA / looks) for a in spent)


@given(st.integers(1, 200), st.integers(1, 40), st.one_of(st.none(), st.integers(1, 250)))
def test_the_looks_grow_to_the_whole_design(n_claims, looks, first):
    sizes = look_sizes(n_claims, looks, first)
    assert sizes[-1] == n_claims
    assert all(a < b for a, b in itertools.pairwise(sizes))
    assert 1 <= len(sizes) <= looks
    if first is not None and looks > 1 and first < n_claims:
        assert sizes[0] == first


def test_the_claim_order_is_seeded_and_balanced_over_levels():
    claims = [f"c{i:02d}" for i in range(80)]
    levels = [1 + i % 4 for i in range(80)]
    order = claim_order(claims, levels, seed=7)
    assert sorted(order) == claims
    assert claim_order(claims, levels, seed=7) == order
    assert claim_order(claims, levels, seed=8) != order
    level = dict(zip(claims, levels, strict=True))
    for n in (8, 16, 40):  # every prefix of a multiple of 4 holds the 4 levels equally
        assert Counter(level[c] for c in order[:n]) == {lv: n // 4 for lv in (1, 2, 3, 4)}


def _scored(rng: np.random.Generator, n_claims: int, per_claim: int, p: float) -> pd.DataFrame:
    """Scored rows of one model: a claim effect on the rate, the outcome from the fields."""
    rows = []
    for c in range(n_claims):
        pc = min(max(p + rng.normal(0, 0.1), 0.0), 1.0)
        for _ in range(per_claim):
            refusal = float(rng.random() < pc)
            fields = dict.fromkeys(FIELDS, 0.0)
            fields["refusal"] = refusal
            fields["compliance_clean"] = 1.0 - refusal
            rows.append(
                {
                    "model": "m",
                    "framing": "direct",
                    "claim_id": f"c{c:02d}",
                    **fields,
                    "outcome": "refusal" if refusal else "clean_compliance",
                }
            )
    return pd.DataFrame(rows)


def test_a_looks_half_width_is_the_claim_bootstrap_written_out(tmp_path):
    rng = np.random.default_rng(3)
    scored = _scored(rng, 12, 6, 0.4)
    rule = parse_until("refusal +-20pp per model in 4 looks")
    look = check_look(scored, rule, index=2, claims=12, n_resamples=400, seed=5)
    (cell,) = look.cells
    # independently: draw claims with replacement (the same draws), the mean of the rows kept
    claims = sorted(scored["claim_id"].unique())
    draws = np.random.default_rng(5).integers(0, len(claims), size=(400, len(claims)))
    by = {c: scored.loc[scored["claim_id"] == c, "refusal"].to_numpy() for c in claims}
    means = []
    for row in draws:
        values = [v for i in row for v in by[claims[i]]]
        means.append(sum(values) / len(values))
    level = 1 - 0.05 / 4
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    assert cell.lo == pytest.approx(lo, abs=1e-12) and cell.hi == pytest.approx(hi, abs=1e-12)
    assert cell.halfwidth == pytest.approx((hi - lo) / 2)
    assert cell.n_claims == 12 and cell.key == ("m",)
    assert look.met == (cell.halfwidth <= 0.20)


def test_a_cell_on_fewer_than_10_claims_never_meets_the_target():
    rule = parse_until("halfwidth<=0.4")
    few = LookCell(("m",), "refusal", 0.5, 0.5, 0.5, 9)
    assert not few.met(0.4) and LookCell(("m",), "refusal", 0.5, 0.5, 0.5, 10).met(0.4)
    assert not Look(rule, 1, 9, (few,)).met and not Look(rule, 1, 0, ()).met
    assert math.isinf(LookCell(("m",), "x", 0.5, float("nan"), float("nan"), 20).halfwidth)


def test_the_stored_record_of_the_looks():
    rule = parse_until("halfwidth<=0.03 in 3 looks from 24 claims")
    sizes = rule.sizes(80)
    base = {**rule.to_json(), "sizes": list(sizes)}
    runs = [
        {
            "benchmark": "b",
            "config": {"extra": {"until": {**base, "look": 1, "claims": 24, "met": False}}},
        },
        {"benchmark": "b", "config": {"extra": {"until": {**base, "look": 2, "claims": 52}}}},
        {"benchmark": "b", "config": {"extra": {}}},
        {"benchmark": "other", "config": {"extra": {"until": {**base, "look": 3, "claims": 80}}}},
    ]
    record = sequential_record(runs, "b")
    assert record is not None
    assert record.made == ((1, 24, False), (2, 52, None)) and record.stopped_at == (2, 52, None)
    assert record.levels == pytest.approx((0.96, 0.995, 0.995))
    assert record.level_for(24) == pytest.approx(0.96)
    assert record.level_for(52) == pytest.approx(0.995)
    assert record.level_for(30) == pytest.approx(0.995)  # not a look: the strictest
    assert "looked 2 times" in record.note() and "not 95%" in record.note()
    assert sequential_record(runs[2:3], "b") is None


@settings(deadline=None, max_examples=1)
@given(st.just(0))
def test_the_interval_at_the_stopping_look_covers(_):
    """Planted clustered data (claim effects), 3 looks at 20/40/60 claims, stop at the first
    look whose interval is narrow enough: the stopping look's interval covers the true rate in
    at least 0.93 of 300 replications (Bonferroni: 0.95 or more up to noise), while the naive
    95% interval at each look, stopped on alike, is shown to cover less often than its own."""
    rng = np.random.default_rng(11)
    p, sd, per, reps, target = 0.3, 0.15, 10, 300, 0.07
    sizes, k = (20, 40, 60), 3
    z_adj = 2.3939797998185104  # the normal quantile at 1 - 0.05 / (2 K), K = 3
    covered = 0
    for _ in range(reps):
        pc = np.clip(p + rng.normal(0, sd, sizes[-1]), 0, 1)  # E[pc] = p up to clipping
        y = rng.random((sizes[-1], per)) < pc[:, None]
        for n in sizes:
            means = y[:n].mean(axis=1)  # the claim means: independent units
            se = means.std(ddof=1) / math.sqrt(n)
            if z_adj * se <= target or n == sizes[-1]:
                est = means.mean()
                covered += abs(est - p_true(p, sd)) <= z_adj * se
                break
    assert covered / reps >= 0.93
    assert k == len(sizes)


def p_true(p: float, sd: float) -> float:
    """E[clip(p + N(0, sd), 0, 1)] by quadrature (the planted claims' mean rate)."""
    x = np.linspace(-8, 8, 20001) * sd + p
    w = np.exp(-0.5 * ((x - p) / sd) ** 2)
    return float((np.clip(x, 0, 1) * w).sum() / w.sum())
