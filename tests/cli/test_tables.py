"""The paper's tables on hand-made scored data, each checked against a hand count or an
independent computation (scipy, statsmodels, or a loop written out here)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import tost_proportions_2indep

from deflectbench.analysis import stats, tables
from deflectbench.analysis.frames.scored import outcome_codes
from deflectbench.vocab import FIELDS, OUTCOMES

FRAMING_OF = {
    "explicit_direct_WA": ("direct", "whataboutism"),
    "explicit_direct_AH": ("direct", "ad_hominem"),
    "explicit_coach_WA": ("coach", "whataboutism"),
    "explicit_coach_RH": ("coach", "red_herring"),
    "explicit_manipulation_WA": ("manipulation", "whataboutism"),
    "explicit_political_WA": ("political", "whataboutism"),
    "explicit_choose_any": ("choose", "model_choice"),
    "implicit_neutral": ("implicit_neutral", "any"),
}

REFUSE = {"refusal": 1}
SOFT = {"soft_refusal": 1, "any_fallacy_present": 1, "WA_present": 1}
LABELED = {"any_fallacy_present": 1, "WA_present": 1, "fallacy_labeled": 1}
CLEAN = {"any_fallacy_present": 1, "WA_present": 1, "compliance_clean": 1}
OTHER: dict[str, int] = {}


def row(
    model: str, claim: str, prompt: str, sample: int = 1, tokens: int = 100, **fields: int
) -> dict:
    framing, fallacy = FRAMING_OF[prompt]
    level = int(claim[1])
    return {
        "gen_id": hash((model, claim, prompt, sample)) & 0xFFFFFFF,
        "model": model,
        "claim_id": claim,
        "prompt_id": prompt,
        "sample": sample,
        "level": level,
        "context": "us",
        "domain": "politics",
        "framing": framing,
        "fallacy_requested": fallacy,
        "output_tokens": tokens,
        **{f: fields.get(f, 0) for f in FIELDS},
    }


def frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    df["outcome"] = outcome_codes(df)
    return df


# --------------------------------------------------------------------------- rates with CIs


def bootstrap_by_hand(
    values: np.ndarray, claims: np.ndarray, n_resamples: int, seed: int
) -> tuple[float, float]:
    """The block bootstrap written out as a loop: draw claims, keep all their rows."""
    labels = sorted(set(claims.tolist()))
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(labels), size=(n_resamples, len(labels)))
    rates = []
    for d in draws:
        picked = np.concatenate([values[claims == labels[i]] for i in d])
        rates.append(picked.mean())
    lo, hi = np.quantile(rates, [0.025, 0.975])
    return float(lo), float(hi)


@pytest.fixture
def two_models() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = []
    kinds = [REFUSE, SOFT, LABELED, CLEAN, OTHER]
    for model, weights in (("a", [0.3, 0.1, 0.3, 0.2, 0.1]), ("b", [0.05, 0.05, 0.1, 0.7, 0.1])):
        for c in range(8):
            for prompt in ("explicit_direct_WA", "explicit_coach_WA", "explicit_choose_any"):
                for s in (1, 2):
                    kind = kinds[rng.choice(5, p=weights)]
                    rows.append(row(model, f"L{c % 4 + 1}_US_{c:02d}", prompt, s, **kind))
    return frame(rows)


def test_rates_with_ci_match_hand_counts_and_an_independent_bootstrap(two_models):
    out = tables.rates_with_ci(two_models, n_resamples=300, seed=5)
    assert len(out) == 2 * 13
    assert set(out["kind"]) == {"field", "outcome"}
    for model, sub in two_models.groupby("model"):
        mine = out[out["model"] == model].set_index(["kind", "measure"])
        for f in FIELDS:
            assert mine.loc[("field", f), "rate"] == pytest.approx(sub[f].mean())
            assert mine.loc[("field", f), "n"] == len(sub)
        for o in OUTCOMES:
            assert mine.loc[("outcome", o), "rate"] == pytest.approx((sub["outcome"] == o).mean())
        assert mine.xs("outcome")["rate"].sum() == pytest.approx(1.0)
        # the CI of one column against a loop over resamples, and against stats directly
        values = sub["any_fallacy_present"].to_numpy(dtype=float)
        claims = sub["claim_id"].to_numpy()
        lo, hi = bootstrap_by_hand(values, claims, 300, 5)
        assert mine.loc[("field", "any_fallacy_present"), "ci_lo"] == pytest.approx(lo)
        assert mine.loc[("field", "any_fallacy_present"), "ci_hi"] == pytest.approx(hi)
        direct = stats.block_bootstrap_ci(
            (sub["outcome"] == "clean_compliance").to_numpy(), claims, 300, 5
        )
        assert mine.loc[("outcome", "clean_compliance"), "ci_lo"] == pytest.approx(direct.lo)
        assert mine.loc[("outcome", "clean_compliance"), "ci_hi"] == pytest.approx(direct.hi)
        assert mine.loc[("field", "refusal"), "n_clusters"] == 8


def test_rates_with_ci_skip_missing_field_values():
    df = frame(
        [
            row("a", "L1_US_01", "explicit_direct_WA", **REFUSE),
            row("a", "L2_US_01", "explicit_direct_WA"),
        ]
    )
    df["WA_present"] = df["WA_present"].astype(float)
    df.loc[0, "WA_present"] = np.nan
    out = tables.rates_with_ci(df, n_resamples=50).set_index(["kind", "measure"])
    assert out.loc[("field", "WA_present"), "n"] == 1
    assert out.loc[("field", "refusal"), "rate"] == 0.5


def test_rates_by_and_template_table(two_models):
    out = tables.rates_by(two_models, ["model", "framing"])
    assert list(out["framing"].iloc[:3]) == ["direct", "coach", "choose"]  # the paper's order
    sub = two_models[(two_models["model"] == "a") & (two_models["framing"] == "coach")]
    got = out[(out["model"] == "a") & (out["framing"] == "coach")].iloc[0]
    assert got["n"] == len(sub)
    assert got["fallacy_labeled"] == pytest.approx(sub["fallacy_labeled"].mean())
    assert got["outcome_soft_refusal"] == pytest.approx((sub["outcome"] == "soft_refusal").mean())
    shares = out[[f"outcome_{o}" for o in OUTCOMES]].sum(axis=1)
    assert np.allclose(shares, 1.0)
    e1 = tables.template_table(two_models)
    assert len(e1) == 2 * 3 and {"prompt_id", "framing", "fallacy_requested"} <= set(e1)


# --------------------------------------------------------------------------- agreement


def verdict_rows(
    judge: str, values: list[int], field: str = "refusal", model: str = "m"
) -> list[dict]:
    return [
        {
            "gen_id": i,
            "model": model,
            "judge": judge,
            **{f: (v if f == field else 0) for f in FIELDS},
        }
        for i, v in enumerate(values)
    ]


def test_agreement_known_kappa_and_ac1():
    a = [1, 1, 0, 0, 1, 0, 1, 0]
    b = [1, 0, 0, 0, 1, 0, 1, 1]
    # po = 6/8, both raters at 1/2 -> pe = 1/2 for kappa and for AC1 -> 0.5 each
    verdicts = pd.DataFrame(verdict_rows("j1", a) + verdict_rows("j2", b))
    out = tables.agreement_table(verdicts).set_index("field")
    assert out.loc["refusal", "kappa"] == pytest.approx(0.5)
    assert out.loc["refusal", "ac1"] == pytest.approx(0.5)
    assert out.loc["refusal", "disagreement"] == pytest.approx(0.25)
    assert out.loc["refusal", "n"] == 8
    # statsmodels from the 2x2 table, independently
    table = pd.crosstab(pd.Series(a), pd.Series(b)).to_numpy()
    assert out.loc["refusal", "kappa"] == pytest.approx(cohens_kappa(table).kappa)
    # a field both judges always leave 0: kappa undefined, AC1 1
    assert math.isnan(out.loc["WA_present", "kappa"]) and out.loc["WA_present", "ac1"] == 1.0


def test_agreement_uses_only_generations_both_judges_scored_per_pair_and_model():
    rng = np.random.default_rng(0)
    rows = []
    for gid in range(60):
        model = "m1" if gid < 30 else "m2"
        base = int(rng.integers(0, 2))
        for judge in ("j1", "j2", "j3"):
            if judge == "j3" and gid % 3 == 0:
                continue  # j3 never parsed these
            v = base if rng.random() > 0.2 else 1 - base
            rows.append({"gen_id": gid, "model": model, "judge": judge, **{f: v for f in FIELDS}})
    verdicts = pd.DataFrame(rows)
    verdicts["soft_refusal"] = verdicts["soft_refusal"].astype(float)
    verdicts.loc[(verdicts["gen_id"] == 1) & (verdicts["judge"] == "j1"), "soft_refusal"] = np.nan
    out = tables.agreement_table(verdicts)
    pairs = set(zip(out["judge_a"], out["judge_b"], strict=True))
    assert pairs == {("j1", "j2"), ("j1", "j3"), ("j2", "j3")}
    ref = out[out["field"] == "refusal"].set_index(["judge_a", "judge_b"])
    assert ref.loc[("j1", "j2"), "n"] == 60
    assert ref.loc[("j1", "j3"), "n"] == 40
    soft = out[out["field"] == "soft_refusal"].set_index(["judge_a", "judge_b"])
    assert soft.loc[("j1", "j2"), "n"] == 59  # the NaN is left out for that field only
    # against a direct computation on the aligned pair
    w = verdicts.pivot(index="gen_id", columns="judge", values="refusal").dropna(
        subset=["j1", "j3"]
    )
    direct = stats.agreement(w["j1"].astype(int), w["j3"].astype(int))
    assert ref.loc[("j1", "j3"), "kappa"] == pytest.approx(direct.kappa)
    assert ref.loc[("j1", "j3"), "ac1"] == pytest.approx(direct.ac1)
    per_model = tables.agreement_table(verdicts, by="model")
    m1 = per_model[(per_model["model"] == "m1") & (per_model["field"] == "refusal")]
    assert m1.set_index(["judge_a", "judge_b"]).loc[("j1", "j2"), "n"] == 30
    w1 = w[w.index < 30]
    assert m1.set_index(["judge_a", "judge_b"]).loc[("j1", "j3"), "kappa"] == pytest.approx(
        stats.cohen_kappa(w1["j1"].astype(int), w1["j3"].astype(int))
    )


# --------------------------------------------------------------------------- framing effects


def framing_data() -> pd.DataFrame:
    rows = []
    # model a: coach 0/4 refusals, direct 2/4, manipulation 1/4, political 4/4
    plan = {
        "explicit_coach_WA": [LABELED, LABELED, CLEAN, LABELED],
        "explicit_direct_WA": [REFUSE, REFUSE, CLEAN, CLEAN],
        "explicit_manipulation_WA": [REFUSE, CLEAN, CLEAN, CLEAN],
        "explicit_political_WA": [REFUSE, REFUSE, REFUSE, REFUSE],
    }
    for prompt, kinds in plan.items():
        for i, kind in enumerate(kinds):
            rows.append(row("a", f"L1_US_0{i}", prompt, **kind))
    return frame(rows)


def h(p1: float, p2: float) -> float:
    return 2 * math.asin(math.sqrt(p1)) - 2 * math.asin(math.sqrt(p2))


def test_cohens_h_table_known_values():
    out = tables.cohens_h_table(framing_data()).set_index(["comparison", "measure"])
    assert out.loc[("coach_vs_direct", "refusal"), "h"] == pytest.approx(-math.pi / 2)
    assert out.loc[("coach_vs_manipulation", "refusal"), "h"] == pytest.approx(h(0, 0.25))
    assert out.loc[("political_vs_direct", "refusal"), "h"] == pytest.approx(math.pi / 2)
    assert out.loc[("coach_vs_direct", "labeled_compliance"), "h"] == pytest.approx(h(0.75, 0))
    assert out.loc[("coach_vs_direct", "clean_compliance"), "h"] == pytest.approx(h(0.25, 0.5))
    assert out.loc[("coach_vs_direct", "refusal"), "n_first"] == 4


def test_cohens_h_is_nan_for_a_missing_framing():
    df = framing_data()
    out = tables.cohens_h_table(df[df["framing"] != "manipulation"]).set_index(
        ["comparison", "measure"]
    )
    assert math.isnan(out.loc[("coach_vs_manipulation", "refusal"), "h"])


def test_framing_h_matrix_is_antisymmetric_with_known_cells():
    m = tables.framing_h_matrix(framing_data(), "refusal")
    assert list(m.index) == ["direct", "political", "coach", "manipulation"]
    assert np.allclose(m.to_numpy(), -m.to_numpy().T)
    assert m.loc["political", "coach"] == pytest.approx(math.pi)
    assert m.loc["direct", "manipulation"] == pytest.approx(h(0.5, 0.25))


# --------------------------------------------------------------------------- tests


def test_chi2_model_outcome_matches_scipy(two_models):
    out = tables.chi2_model_outcome(two_models).iloc[0]
    counts = tables.outcome_counts(two_models)
    assert counts.to_numpy().sum() == len(two_models)
    assert list(counts.columns) == list(OUTCOMES)
    kept = counts.loc[:, counts.sum() > 0].to_numpy()
    ref = sps.chi2_contingency(kept, correction=False)
    assert out["statistic"] == pytest.approx(ref.statistic)
    assert out["p_value"] == pytest.approx(ref.pvalue)
    assert out["dof"] == ref.dof


def test_claim_rates_and_spread():
    rows = []
    for c, refusals in (("L1_US_01", 1), ("L2_US_02", 3), ("L3_US_03", 2)):
        for i in range(4):
            rows.append(
                row(
                    "a" if i % 2 else "b",
                    c,
                    "explicit_direct_WA",
                    i,
                    **(REFUSE if i < refusals else CLEAN),
                )
            )
    df = frame(rows)
    rates = tables.claim_rates(df).set_index("claim_id")
    assert rates.loc["L2_US_02", "rate"] == 0.75 and rates.loc["L1_US_01", "n"] == 4
    spread = tables.claim_spread_table(df).iloc[0]
    assert spread["min"] == 0.25 and spread["max"] == 0.75
    assert spread["spread_pp"] == pytest.approx(50.0)
    assert (spread["claim_min"], spread["claim_max"]) == ("L1_US_01", "L2_US_02")


def test_level_tost_matches_statsmodels_and_a_clustered_ols():
    import statsmodels.api as sm

    rng = np.random.default_rng(1)
    rows = []
    for level, p in ((1, 0.25), (2, 0.26), (3, 0.40)):
        for c in range(6):
            pc = p + rng.normal(0, 0.03)
            for i in range(300):
                rows.append(
                    row(
                        "a",
                        f"L{level}_US_{c:02d}",
                        "explicit_direct_WA",
                        i,
                        **(REFUSE if rng.random() < pc else CLEAN),
                    )
                )
    df = frame(rows)
    out = tables.level_tost(df)
    wald = tables.level_tost(df, method="wald")
    assert [(r.level_a, r.level_b) for r in out.itertuples()] == [(1, 2), (1, 3), (2, 3)]
    for r, w in zip(out.itertuples(), wald.itertuples(), strict=True):
        ya = df.loc[df["level"] == r.level_a, "refusal"].to_numpy()
        yb = df.loc[df["level"] == r.level_b, "refusal"].to_numpy()
        ref_w = tost_proportions_2indep(
            ya.sum(), ya.size, yb.sum(), yb.size, -0.05, 0.05, method="wald", compare="diff"
        )
        assert w.p_value == pytest.approx(ref_w.pvalue)
        ref = tost_proportions_2indep(
            ya.sum(),
            ya.size,
            yb.sum(),
            yb.size,
            -0.05,
            0.05,
            method="agresti-caffo",
            compare="diff",
        )
        assert r.p_value == pytest.approx(ref.pvalue)
        assert r.diff == pytest.approx(ya.mean() - yb.mean())
        assert r.equivalent == (ref.pvalue < 0.05)
        # clustered SE: each level's variance from an intercept-only OLS with claim clusters
        var = 0.0
        for level in (r.level_a, r.level_b):
            sub = df[df["level"] == level]
            groups = pd.factorize(sub["claim_id"])[0]
            fit = sm.OLS(sub["refusal"].to_numpy(float), np.ones(len(sub))).fit(
                cov_type="cluster", cov_kwds={"groups": groups}
            )
            var += float(fit.bse[0]) ** 2
        assert r.se_clustered == pytest.approx(math.sqrt(var))
    assert bool(out.iloc[0]["equivalent"]) and not bool(out.iloc[1]["equivalent"])


def test_level_tost_clustered_is_nan_with_one_claim_per_level():
    df = frame(
        [
            row("a", f"L{lv}_US_01", "explicit_direct_WA", i, **(REFUSE if i == 0 else CLEAN))
            for lv in (1, 2)
            for i in range(30)
        ]
    )
    out = tables.level_tost(df).iloc[0]
    assert out["diff"] == 0.0 and math.isnan(out["p_value_clustered"])


# --------------------------------------------------------------------------- appendix


def test_sample_refusal_counts_per_cell():
    rows = []
    # cell 1 refuses 5/5, cell 2 0/5, cell 3 2/5, cell 4 (other model) 3 of 3 scored samples
    for s in range(1, 6):
        rows.append(row("a", "L1_US_01", "explicit_direct_WA", s, **REFUSE))
        rows.append(row("a", "L1_US_01", "explicit_coach_WA", s, **LABELED))
        rows.append(row("a", "L2_US_01", "explicit_direct_WA", s, **(REFUSE if s <= 2 else CLEAN)))
    for s in range(1, 4):
        rows.append(row("b", "L1_US_01", "explicit_direct_WA", s, **REFUSE))
    out = tables.sample_refusal_counts(frame(rows)).set_index("model")
    assert out.loc["a", ["0", "1", "2", "3", "4", "5"]].tolist() == [1, 0, 1, 0, 0, 1]
    assert out.loc["a", "cells"] == 3 and out.loc["a", "incomplete_cells"] == 0
    assert out.loc["b", "3"] == 1 and out.loc["b", "incomplete_cells"] == 1


def test_output_tokens_and_fallacy_density():
    rows = [
        row("a", "L1_US_01", "explicit_direct_WA", 1, tokens=10, **REFUSE),
        row("a", "L1_US_01", "explicit_direct_WA", 2, tokens=200, **LABELED),
        row("a", "L1_US_01", "explicit_direct_WA", 3, tokens=100, **CLEAN, AH_present=1),
        row("a", "L1_US_01", "explicit_direct_WA", 4, tokens=0, **CLEAN),  # no tokens reported
        row("b", "L1_US_01", "explicit_direct_WA", 1, tokens=50, **OTHER),
    ]
    df = frame(rows)
    tok = tables.output_tokens_by_outcome(df).set_index("model")
    assert tok.loc["a", "all"] == pytest.approx(310 / 4)
    assert tok.loc["a", "refusal"] == 10 and tok.loc["a", "clean_compliance"] == 50
    assert math.isnan(tok.loc["a", "other"]) and tok.loc["b", "other"] == 50
    dens = tables.fallacy_density_by_model(df).set_index("model")
    # per generation with tokens: 0/10, 1/200, 2/100 -> mean of (0, 0.5, 2.0) per 100 tokens
    assert dens.loc["a", "fallacy_density"] == pytest.approx((0 + 0.5 + 2.0) / 3)
    assert dens.loc["a", "n"] == 3 and dens.loc["b", "fallacy_density"] == 0.0


def test_fallacy_by_framing_and_coach_labeling():
    rows = [
        row("a", "L1_US_01", "explicit_coach_WA", 1, **LABELED),
        row("a", "L1_US_01", "explicit_coach_WA", 2, **LABELED),
        row("a", "L1_US_01", "explicit_coach_WA", 3, **CLEAN),
        row("a", "L1_US_01", "explicit_coach_RH", 1, **REFUSE),
        row("a", "L1_US_01", "explicit_direct_WA", 1, **OTHER),
    ]
    df = frame(rows)
    e2 = tables.fallacy_by_framing(df).set_index("framing")
    assert e2.loc["coach", "any_fallacy_present"] == 0.75 and e2.loc["direct", "n"] == 1
    e3 = tables.coach_labeling(df).set_index("fallacy_requested")
    assert e3.loc["whataboutism", "outcome_labeled_compliance"] == pytest.approx(2 / 3)
    assert e3.loc["whataboutism", "outcome_clean_compliance"] == pytest.approx(1 / 3)
    assert e3.loc["red_herring", "outcome_refusal"] == 1.0
    assert set(e3.index) == {"whataboutism", "red_herring"}


def test_free_choice_preferences():
    rows = [
        row("a", "L1_US_01", "explicit_choose_any", 1, WA_present=1, any_fallacy_present=1),
        row(
            "a",
            "L1_US_01",
            "explicit_choose_any",
            2,
            WA_present=1,
            AH_present=1,
            any_fallacy_present=1,
        ),
        row("a", "L1_US_01", "explicit_choose_any", 3, RH_present=1, any_fallacy_present=1),
        row("a", "L1_US_01", "explicit_choose_any", 4, **REFUSE),
        row("a", "L1_US_01", "implicit_neutral", 1, AH_present=1, any_fallacy_present=1),
        row("a", "L1_US_01", "explicit_direct_WA", 1, WA_present=1),  # not a free-choice framing
    ]
    out = tables.free_choice_preferences(frame(rows)).set_index("framing")
    assert list(out.index) == ["choose", "implicit_neutral"]
    assert out.loc["choose", "n"] == 4 and out.loc["choose", "n_with_fallacy"] == 3
    assert out.loc["choose", "WA_present"] == pytest.approx(2 / 3)
    assert out.loc["choose", "AH_present"] == pytest.approx(1 / 3)
    assert out.loc["implicit_neutral", "AH_present"] == 1.0


def test_requested_match():
    rows = [
        row("a", "L1_US_01", "explicit_direct_WA", 1, WA_present=1),  # match
        row("a", "L1_US_01", "explicit_direct_WA", 2, WA_present=1, RH_present=1),  # match
        row("a", "L1_US_01", "explicit_direct_WA", 3, RH_present=1),  # only other
        row("a", "L1_US_01", "explicit_direct_WA", 4, **REFUSE),  # none
        row("a", "L1_US_01", "explicit_direct_AH", 1, WA_present=1),  # only other
        row("a", "L1_US_01", "explicit_choose_any", 1, WA_present=1),  # not a specific request
    ]
    out = tables.requested_match(frame(rows)).set_index("fallacy_requested")
    assert set(out.index) == {"whataboutism", "ad_hominem"}
    wa = out.loc["whataboutism"]
    assert (wa["n"], wa["match"], wa["only_other"], wa["none"]) == (4, 0.5, 0.25, 0.25)
    assert wa["match_given_fallacy"] == pytest.approx(2 / 3)
    assert out.loc["ad_hominem", "only_other"] == 1.0
    overall = tables.requested_match(frame(rows), by=[]).iloc[0]
    assert overall["n"] == 5 and overall["match"] == pytest.approx(2 / 5)


def test_tables_accept_an_empty_scored_frame():
    empty = frame([row("a", "L1_US_01", "explicit_direct_WA")]).iloc[:0]
    for fn in (
        tables.rates_with_ci,
        tables.fallacy_by_framing,
        tables.coach_labeling,
        tables.sample_refusal_counts,
        tables.output_tokens_by_outcome,
        tables.fallacy_density_by_model,
        tables.free_choice_preferences,
        tables.requested_match,
        tables.level_tost,
        tables.claim_spread_table,
        tables.cohens_h_table,
    ):
        assert fn(empty).empty, fn.__name__
    assert tables.rates_by(empty, "model").empty
    assert tables.chi2_model_outcome(empty).iloc[0]["dof"] == 0
