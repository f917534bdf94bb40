"""The comparison of two results: the paired claim-block bootstrap against a plain loop, a
planted shift found with a CI that covers it, no difference found between two draws of the same
planted data, Holm, the flip table and the gate's thresholds."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from deflectbench.analysis.compare.flips import flip_table, majority_outcomes
from deflectbench.analysis.compare.holm import holm
from deflectbench.analysis.compare.paired import paired_bootstrap
from deflectbench.analysis.compare.table import compare_scored
from deflectbench.analysis.compare.thresholds import (
    ThresholdError,
    check_thresholds,
    parse_threshold,
)
from deflectbench.analysis.stats.bootstrap import block_bootstrap_many
from deflectbench.benchmark import default_benchmark
from deflectbench.vocab import FIELDS, OUTCOMES

TRUTH_FIELDS = {
    "refusal": {"refusal": 1},
    "soft_refusal": {"soft_refusal": 1, "any_fallacy_present": 1, "AH_present": 1},
    "labeled_compliance": {"fallacy_labeled": 1, "any_fallacy_present": 1, "WA_present": 1},
    "clean_compliance": {"compliance_clean": 1, "any_fallacy_present": 1, "RH_present": 1},
    "other": {},
}
BASE = (0.30, 0.15, 0.30, 0.15, 0.10)


def planted(
    seed: int,
    *,
    model: str = "m",
    n_claims: int = 40,
    samples: int = 2,
    refusal_shift: float = 0.0,
    coach_clean_shift: float = 0.0,
) -> pd.DataFrame:
    """A scored table drawn from planted outcome probabilities: a per-claim effect moves
    refusal (claims matter, as the block bootstrap assumes); ``refusal_shift`` moves refusal
    (from labeled compliance) everywhere, ``coach_clean_shift`` clean compliance under coach."""
    b = default_benchmark()
    claims = [c.claim_id for c in b.claims][:n_claims]
    effects = np.random.default_rng(99).normal(0, 0.05, size=len(claims))
    rng = np.random.default_rng(seed)
    rows = []
    gen = 0
    for ci, claim in enumerate(claims):
        for t in b.templates:
            p = np.array(BASE, dtype=float)
            p[0] += effects[ci] + refusal_shift
            p[2] -= effects[ci] + refusal_shift
            if t.framing == "coach":
                p[3] += coach_clean_shift
                p[2] -= coach_clean_shift
            for s in range(1, samples + 1):
                outcome = OUTCOMES[int(rng.choice(5, p=p))]
                gen += 1
                fields = dict.fromkeys(FIELDS, 0) | TRUTH_FIELDS[outcome]
                rows.append(
                    {
                        "gen_id": gen,
                        "model": model,
                        "claim_id": claim,
                        "prompt_id": t.prompt_id,
                        "sample": s,
                        "framing": t.framing,
                        **fields,
                        "outcome": outcome,
                    }
                )
    return pd.DataFrame(rows)


def plain_loop(a, ca, b, cb, n_resamples, seed, level=0.95):
    """The paired bootstrap written as the definition reads, one resample at a time."""
    labels = sorted(set(ca) | set(cb))
    draws = np.random.default_rng(seed).integers(0, len(labels), size=(n_resamples, len(labels)))
    rows_a = {c: [i for i, x in enumerate(ca) if x == c] for c in labels}
    rows_b = {c: [i for i, x in enumerate(cb) if x == c] for c in labels}
    diffs = []
    for r in range(n_resamples):
        sa = na = sb = nb = 0.0
        for j in draws[r]:
            for i in rows_a[labels[j]]:
                sa += a[i]
                na += 1
            for i in rows_b[labels[j]]:
                sb += b[i]
                nb += 1
        diffs.append(sb / nb - sa / na)
    d = np.array(diffs)
    tail = (1 - level) / 2
    lo, hi = np.quantile(d, [tail, 1 - tail])
    diff = float(np.mean(b) - np.mean(a))
    sd = math.sqrt(sum((x - d.mean()) ** 2 for x in d) / (n_resamples - 1))
    p = math.erfc(abs(diff / sd) / math.sqrt(2))
    return diff, float(lo), float(hi), p


def test_paired_bootstrap_equals_a_plain_loop():
    rng = np.random.default_rng(5)
    ca = [f"c{i}" for i in rng.integers(0, 12, size=90)]
    cb = [f"c{i}" for i in rng.integers(0, 12, size=70)]
    a = rng.random(90) < 0.3
    b = rng.random(70) < 0.5
    res = paired_bootstrap(a, ca, b, cb, n_resamples=300, seed=11)
    diff, lo, hi, p = plain_loop(a.astype(float), ca, b.astype(float), cb, 300, 11)
    assert res.diff[0] == pytest.approx(diff, abs=1e-9)
    assert res.lo[0] == pytest.approx(lo, abs=1e-9)
    assert res.hi[0] == pytest.approx(hi, abs=1e-9)
    assert res.p[0] == pytest.approx(p, abs=1e-9)


def test_each_side_uses_the_draws_analyze_uses():
    """On the same claims, the claim weights are block_bootstrap_many's: the difference of two
    identical sides is zero in every resample, and one side's CI is analyze's."""
    t = planted(3, n_claims=12, samples=1)
    m = t[["refusal", "soft_refusal"]].to_numpy(float)
    res = paired_bootstrap(m, t.claim_id, m, t.claim_id, n_resamples=200, seed=4)
    assert np.all(res.diff == 0) and np.all(res.lo == 0) and np.all(res.hi == 0)
    assert np.all(res.p == 1)
    alone = block_bootstrap_many(m, t.claim_id, n_resamples=200, seed=4)
    assert np.allclose(res.rate_a, alone.rate)


def test_one_shared_claim_has_no_interval():
    res = paired_bootstrap([1, 0], ["x", "x"], [1, 1], ["x", "x"], n_resamples=50)
    assert res.diff[0] == 0.5 and math.isnan(res.lo[0]) and math.isnan(res.p[0])


def test_a_planted_shift_is_found_with_a_ci_that_covers_it():
    a = planted(1, model="old")
    b = planted(2, model="new", refusal_shift=0.12)
    table = compare_scored(a, b, model_a="old", model_b="new", n_resamples=500)
    row = table[
        (table.kind == "outcome") & (table.measure == "refusal") & (table.scope == "overall")
    ]
    r = row.iloc[0]
    assert r.ci_lo <= 0.12 <= r.ci_hi
    assert r.ci_lo > 0  # found: the CI excludes no change
    assert r.p_holm < 0.05
    assert r.h > 0 and r["diff"] == pytest.approx(r.rate_b - r.rate_a)
    assert pd.isna(r.framing) and pd.isna(r.template)


def test_two_draws_of_the_same_planted_data_show_no_difference_after_holm():
    a = planted(1, model="run1")
    b = planted(2, model="run2")
    table = compare_scored(a, b, model_a="run1", model_b="run2", n_resamples=500, holm_family="all")
    # every outcome and field, overall, 7 framings, 15 templates
    assert len(table) == (5 + 8) * (1 + 7 + 15)
    assert table.p_holm.min() > 0.05  # one family of every row: no difference anywhere
    assert (table.p_holm >= table.p - 1e-12).all()
    assert not check_thresholds(table, [parse_threshold("refusal < -5pp")])


def test_holm_against_its_definition():
    p = [0.01, 0.04, 0.03, np.nan, 0.5]
    # sorted 0.01, 0.03, 0.04, 0.5 with m = 4: 0.04, 0.09, 0.09 (monotone), 0.5
    out = holm(p)
    assert out[0] == pytest.approx(0.04)
    assert out[2] == pytest.approx(0.09)
    assert out[1] == pytest.approx(0.09)
    assert math.isnan(out[3])
    assert out[4] == pytest.approx(0.5)


def test_the_gate_fails_only_when_the_whole_ci_is_beyond():
    a = planted(1, model="old")
    b = planted(2, model="new", refusal_shift=-0.10, coach_clean_shift=0.12)
    table = compare_scored(a, b, model_a="old", model_b="new", n_resamples=300)
    fails = check_thresholds(
        table,
        [
            parse_threshold("refusal < -5pp"),
            parse_threshold("clean_compliance > +3pp@coach"),
            parse_threshold("refusal < -40pp"),
        ],
    )
    assert [f.threshold.text for f in fails] == ["refusal < -5pp", "clean_compliance > +3pp@coach"]
    assert "lies wholly below -5 pp" in fails[0].line()
    assert fails[1].ci_lo > 0.03


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("refusal <= 5pp", "'<=' is not a comparison the gate reads"),
        ("refusl < -5pp", "did you mean 'refusal'"),
        ("refusal < -5", "expected --fail-if 'MEASURE < -5pp'"),
        ("field:labeled_compliance < 1pp", "unknown measure"),
    ],
)
def test_a_bad_threshold_is_one_line(text, message):
    with pytest.raises(ThresholdError, match=message) as e:
        parse_threshold(text)
    assert "\n" not in str(e.value)


def test_a_threshold_at_nothing_is_an_error():
    a = planted(1, n_claims=5, samples=1)
    table = compare_scored(a, a, model_a="x", model_b="y", n_resamples=20)
    with pytest.raises(ThresholdError, match="nothing compared at @coachh"):
        check_thresholds(table, [parse_threshold("refusal < -5pp@coachh")])
    t = parse_threshold("field:soft_refusal > 2pp@explicit_coach_WA")
    assert (t.kind, t.scope) == ("field", "explicit_coach_WA")
    assert check_thresholds(table, [t]) == []


def test_flip_table_names_cells_whose_majority_changed():
    a = planted(1, n_claims=6, samples=3)
    b = a.copy()
    cell = (b.claim_id == a.claim_id.iloc[0]) & (b.prompt_id == a.prompt_id.iloc[0])
    b.loc[cell, "outcome"] = "other"
    flips = flip_table(a, b, model_a="a", model_b="b", texts_b={g: "<b>x</b>" for g in b.gen_id})
    assert len(flips) == 1
    r = flips.iloc[0]
    assert r.outcome_b == "other" and r.share_b == 1.0 and r.example_b == "<b>x</b>"
    m = majority_outcomes(a)
    before = m[(m.claim_id == r.claim_id) & (m.prompt_id == r.prompt_id)].outcome.iloc[0]
    assert r.outcome_a == before != "other"
    assert flip_table(a, a, model_a="a", model_b="a").empty


def test_majority_ties_go_up_the_ladder():
    t = pd.DataFrame(
        {
            "gen_id": [1, 2],
            "claim_id": ["c", "c"],
            "prompt_id": ["p", "p"],
            "framing": ["coach", "coach"],
            "sample": [1, 2],
            "outcome": ["clean_compliance", "refusal"],
        }
    )
    m = majority_outcomes(t)
    assert m.iloc[0].outcome == "refusal" and m.iloc[0].share == 0.5 and m.iloc[0].gen_id == 2
