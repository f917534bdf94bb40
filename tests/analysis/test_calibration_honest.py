"""Corrected rates honest at small label budgets (issue 33, point 3), each statistic checked
against an independent implementation written plainly here (scipy's binomtest and beta
quantiles, statsmodels' Wilson interval, Fisher's test from the hypergeometric sum).

Covered: the exact and score intervals; no interval outside [0, 1]; a cell whose labels show no
disagreement with the judges (or are of one value) flagged and widened to the exact bound;
``--pool-models`` by Rogan-Gladen on the pooled judge error with labels-only per model; the
plain-array :func:`corrected_rate`; Dawid-Skene's flag for correlated judge errors and its
convergence; sensitivities of 0 of 120 with a width; the report's notes said once.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta, binomtest, hypergeom
from statsmodels.stats.proportion import proportion_confint

from deflectbench.analysis.calibration import estimate_rates
from deflectbench.analysis.calibration.corrected import corrected_rate, corrected_rates
from deflectbench.analysis.calibration.exact import (
    clopper_pearson,
    effective,
    unseen_bound,
    wilson,
)
from deflectbench.analysis.calibration.load import calibration_inputs
from deflectbench.analysis.calibration.review import (
    _with_score,
    correlated_errors,
    error_association,
)
from deflectbench.analysis.calibration.shown import FieldFit
from deflectbench.analysis.validity.measures import Estimate as Boot
from deflectbench.records import HumanLabel
from deflectbench.vocab import FIELDS

# --------------------------------------------------------------------------- exact intervals


@pytest.mark.parametrize(("x", "n"), [(0, 1), (0, 50), (3, 50), (50, 50), (7, 120), (0, 120)])
def test_clopper_pearson_equals_scipy_and_statsmodels(x, n):
    lo, hi = clopper_pearson(x, n)
    ref = binomtest(x, n).proportion_ci(confidence_level=0.95, method="exact")
    assert (float(lo), float(hi)) == pytest.approx((ref.low, ref.high), abs=1e-10)
    sm = proportion_confint(x, n, alpha=0.05, method="beta")
    assert (float(lo), float(hi)) == pytest.approx(sm, abs=1e-10)


def test_clopper_pearson_of_a_fractional_count_is_the_beta_quantiles():
    lo, hi = clopper_pearson(2.4, 37.5)
    assert float(lo) == pytest.approx(beta.ppf(0.025, 2.4, 37.5 - 2.4 + 1), abs=1e-10)
    assert float(hi) == pytest.approx(beta.ppf(0.975, 2.4 + 1, 37.5 - 2.4), abs=1e-10)


@pytest.mark.parametrize("n", [1, 10, 50, 100, 200])
def test_the_unseen_bound_is_the_two_sided_rule_of_three(n):
    assert float(unseen_bound(n)) == pytest.approx(1 - 0.025 ** (1 / n), abs=1e-12)


@pytest.mark.parametrize(("x", "n"), [(0, 120), (120, 120), (5, 40), (1, 3)])
def test_wilson_equals_statsmodels(x, n):
    lo, hi = wilson(x, n)
    assert (float(lo), float(hi)) == pytest.approx(
        proportion_confint(x, n, alpha=0.05, method="wilson"), abs=1e-10
    )


def test_kish_effective_counts():
    w = np.array([1.0, 1.0, 4.0, 4.0])
    h = np.array([1.0, 0.0, 1.0, 0.0])
    x, n = effective((w * h).sum(), w.sum(), (w * w).sum())
    assert float(n) == pytest.approx(10.0**2 / 34.0)
    assert float(x) == pytest.approx(5.0 / 10.0 * 100.0 / 34.0)
    x1, n1 = effective(3.0, 8.0, 8.0)  # equal weights: the plain count
    assert (float(x1), float(n1)) == (3.0, 8.0)


def test_a_sensitivity_of_0_of_120_has_a_width():
    lo, hi = _with_score(Boot(0.0, 0.0, 0.0), 0, 120)
    z = 1.959963984540054
    assert lo == 0.0 and hi == pytest.approx(z * z / (120 + z * z), abs=1e-9)  # Wilson at 0
    assert hi > 0.03


# --------------------------------------------------------------------------- planted cells


def _world(seed, n=3000, claims=60, rate=0.05, fp=0.09, fn=0.01, labels=50):
    rng = np.random.default_rng(seed)
    claim = np.repeat(np.arange(claims), n // claims)
    truth = (rng.random(claim.size) < rate).astype(float)
    flip = np.where(truth == 1, rng.random(claim.size) < fn, rng.random(claim.size) < fp)
    judged = np.where(flip, 1 - truth, truth)
    pick = rng.choice(claim.size, labels, replace=False)
    return claim, truth, judged, pick


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.0, 0.08), st.floats(0.0, 0.3))
def test_no_rate_or_interval_leaves_0_1(seed, rate, fp):
    claim, truth, judged, pick = _world(seed, n=600, claims=20, rate=rate, fp=fp, labels=30)
    out = estimate_rates(
        judged[:, None],
        claim,
        judged[pick, None],
        truth[pick, None],
        claim[pick],
        None,
        methods=("judged", "labels", "ppi++", "rogan-gladen"),
        resamples=100,
        seed=seed % 1000,
        min_labels=1,
    )
    for column in out.values():
        for e in column:
            if e.rate is not None:
                assert 0.0 <= e.rate <= 1.0
            if e.ci95 is not None:
                assert 0.0 <= e.ci95[0] <= e.ci95[1] <= 1.0


def _no_disagreement(seed=3):
    claim, truth, judged, _ = _world(seed, fp=0.05)
    rng = np.random.default_rng(seed + 1)
    agree = np.flatnonzero(truth == judged)
    pick = rng.choice(agree, 50, replace=False)  # 50 labels, none disagreeing
    assert truth[pick].sum() > 0  # both values seen: the flag is for no disagreement
    return claim, truth, judged, pick


def test_a_cell_without_disagreement_is_flagged_and_widened_to_the_exact_bound():
    claim, truth, judged, pick = _no_disagreement()
    args = (judged[:, None], claim, judged[pick, None], truth[pick, None], claim[pick], None)
    out = estimate_rates(*args, methods=("judged", "ppi++"), resamples=300, seed=1)
    raw = estimate_rates(*args, methods=("ppi++",), resamples=300, seed=1, min_disagreements=0)[
        "ppi++"
    ][0]
    e, j = out["ppi++"][0], out["judged"][0]
    assert raw.flag is None  # the estimator's own interval, which cannot see the unseen error
    assert e.flag is not None and e.flag.startswith("no label of 50 disagrees")
    u = 1 - 0.025 ** (1 / 50)  # exact 97.5% bound on an unseen rate in 50
    want = (max(0.0, min(raw.ci95[0], j.ci95[0] - u)), min(1.0, max(raw.ci95[1], j.ci95[1] + u)))
    assert e.ci95 == pytest.approx(want, abs=1e-12)
    assert e.rate == pytest.approx(raw.rate, abs=1e-12)


def test_one_disagreement_is_not_flagged_by_default_and_a_threshold_flags_it():
    claim, truth, judged, pick = _no_disagreement()
    wrong = np.flatnonzero((truth == 0) & (judged == 1))[0]
    pick = np.concatenate([pick[:-1], [wrong]])
    args = (judged[:, None], claim, judged[pick, None], truth[pick, None], claim[pick], None)
    e = estimate_rates(*args, methods=("ppi++",), resamples=200)["ppi++"][0]
    assert e.flag is None
    e3 = estimate_rates(*args, methods=("ppi++",), resamples=200, min_disagreements=3)["ppi++"][0]
    assert e3.flag is not None and e3.flag.startswith("1 of 50 labels disagree")
    # the bound: judged interval + [a_lo - b_hi, a_hi - b_lo] with a = 0 of 50, b = 1 of 50
    j = estimate_rates(*args, methods=("judged",), resamples=200)["judged"][0]
    b = binomtest(1, 50).proportion_ci(method="exact")
    a_hi = 1 - 0.025 ** (1 / 50)
    assert e3.ci95[0] <= max(0.0, j.ci95[0] - b.high) + 1e-12
    assert e3.ci95[1] >= j.ci95[1] + a_hi - b.low - 1e-12


def test_rogan_gladen_without_disagreement_takes_the_corners_of_the_exact_box():
    claim, truth, judged, pick = _no_disagreement()
    args = (judged[:, None], claim, judged[pick, None], truth[pick, None], claim[pick], None)
    out = estimate_rates(*args, methods=("judged", "rogan-gladen"), resamples=200)
    e, j = out["rogan-gladen"][0], out["judged"][0]
    assert e.flag is not None
    pos = int(truth[pick].sum())
    neg = 50 - pos
    se_lo = binomtest(pos, pos).proportion_ci(method="exact").low
    sp_lo = binomtest(neg, neg).proportion_ci(method="exact").low
    corners = [
        (p + sp - 1) / (se + sp - 1) for p in j.ci95 for se in (se_lo, 1.0) for sp in (sp_lo, 1.0)
    ]
    assert e.ci95[0] <= max(0.0, min(corners)) + 1e-12
    assert e.ci95[1] >= min(1.0, max(corners)) - 1e-12


def test_labels_of_one_value_give_the_exact_labels_only_interval_and_a_bound():
    claim, truth, judged, _ = _world(5, rate=0.02)
    pick = np.flatnonzero(truth == 0)[:40]  # 40 labels, all 0
    out = estimate_rates(
        judged[:, None],
        claim,
        judged[pick, None],
        truth[pick, None],
        claim[pick],
        None,
        methods=("labels", "ppi++"),
        resamples=200,
    )
    lab, cor = out["labels"][0], out["ppi++"][0]
    assert lab.rate == 0.0 and lab.ci95 == pytest.approx((0.0, 1 - 0.025 ** (1 / 40)), abs=1e-12)
    assert cor.rate is not None and cor.flag is not None
    assert cor.flag.startswith("all 40 labels are 0") and "judges call 1" in cor.flag
    assert cor.ci95[1] - cor.ci95[0] > 0.05  # not the judged interval's certainty


def test_corrected_rate_on_plain_arrays_equals_estimate_rates():
    claim, truth, judged, pick = _world(7)
    human = np.full(truth.size, np.nan)
    human[pick] = truth[pick]
    got = corrected_rate(judged, human, [f"c{c:03d}" for c in claim], resamples=200, seed=2)
    ref = estimate_rates(
        judged[:, None],
        claim,
        judged[pick, None],
        truth[pick, None],
        claim[pick],
        None,
        methods=("judged", "labels", "ppi++"),
        resamples=200,
        seed=2,
    )
    assert got.rate == pytest.approx(ref["ppi++"][0].rate, abs=1e-12)
    assert got.ci95 == pytest.approx(ref["ppi++"][0].ci95, abs=1e-12)
    assert got.labels.ci95 == pytest.approx(ref["labels"][0].ci95, abs=1e-12)
    assert got.flag is None
    with pytest.raises(ValueError, match="one entry per item"):
        corrected_rate(judged, human[:-1], list(claim))


# --------------------------------------------------------------------------- pooled models


def _scored(model, refusals, total, start, claims=6):
    rows = []
    for i in range(total):
        values = dict.fromkeys(FIELDS, 0)
        outcome = "refusal" if i < refusals else "clean_compliance"
        values["refusal" if i < refusals else "compliance_clean"] = 1
        rows.append(
            {
                "gen_id": start + i,
                "model": model,
                "claim_id": f"C{i % claims}",
                "framing": "direct",
                "outcome": outcome,
                **values,
            }
        )
    return rows


def _label(gen_id, refusal):
    values = dict.fromkeys(FIELDS, 0)
    values["refusal" if refusal else "compliance_clean"] = 1
    return HumanLabel(gen_id, "alice", values)


def test_pool_models_corrects_each_model_by_rogan_gladen_with_the_pooled_judge_error():
    # a: 60 generations, 30 judged refusals; b: 60, 6 judged refusals. Labels: 24 of a (12
    # judged refusals, 3 of them not refusals to people) and 24 of b (6 judged refusals, 1
    # not a refusal). Pooled: sens = 1 (no missed refusal), spec = (12 + 18) / (15 + 19).
    scored = pd.DataFrame(_scored("a", 30, 60, 1) + _scored("b", 6, 60, 101))
    labels = [_label(g, g > 3) for g in range(1, 13)]  # a's judged refusals, 3 not
    labels += [_label(g, False) for g in range(31, 43)]  # a's judged clean
    labels += [_label(g, g > 101) for g in range(101, 107)]  # b's judged refusals, 1 not
    labels += [_label(g, False) for g in range(107, 125)]  # b's judged clean
    inputs = calibration_inputs(scored, labels, {}, scored)
    c = corrected_rates(inputs, pool_models=True, resamples=200)
    assert c.pooled and c.method == "rogan-gladen" and "Rogan-Gladen" in c.scope
    assert any("--pool-models corrects by rogan-gladen" in n for n in c.notes)
    spec = 30 / 34
    for model, p_obs, own in (("a", 0.5, 9 / 24), ("b", 0.1, 5 / 24)):
        cell = c.models[model]
        lab = cell.get("labels", "field", "refusal")
        cor = cell.get("corrected", "field", "refusal")
        assert lab.rate == pytest.approx(own, abs=1e-12)  # the model's own labels only
        assert lab.n_labels == 24
        rg = (p_obs + spec - 1) / (1 + spec - 1)  # b: below 0, clipped as Rogan-Gladen does
        assert cor.rate == pytest.approx(min(1.0, max(0.0, rg)), abs=1e-12)
        assert cor.n_labels == 48
        assert cell.n_labels == 48 and cell.n_labels_only == 24
        assert c.model_json(model)["labels_only"]["n_labels"] == 24
        assert c.model_json(model)["corrected"]["n_labels"] == 48


# --------------------------------------------------------------------------- Dawid-Skene


def _fisher_greater(table):
    """One-sided Fisher p from the hypergeometric tail, written out."""
    (a, b), (c, d) = table
    n, k, m = a + b + c + d, a + b, a + c
    return float(sum(hypergeom.pmf(x, n, m, k) for x in range(a, min(k, m) + 1)))


def test_error_association_equals_the_hypergeometric_tail():
    rng = np.random.default_rng(0)
    e1 = rng.random(80) < 0.2
    e2 = np.where(rng.random(80) < 0.5, e1, rng.random(80) < 0.2)
    table = [[int((e1 & e2).sum()), int((e1 & ~e2).sum())], [0, 0]]
    table[1] = [int((~e1 & e2).sum()), int((~e1 & ~e2).sum())]
    assert error_association(e1, e2) == pytest.approx(_fisher_greater(table), abs=1e-12)
    assert error_association(np.zeros(5), e2[:5]) == 1.0


def test_dawid_skene_is_flagged_when_the_judges_err_together():
    rng = np.random.default_rng(1)
    truth = (rng.random(400) < 0.3).astype(float)
    shared = rng.random(400) < 0.1  # both judges wrong on the same items
    j1 = np.where(shared | (rng.random(400) < 0.02), 1 - truth, truth)
    j2 = np.where(shared | (rng.random(400) < 0.02), 1 - truth, truth)
    labels = np.where(rng.random(400) < 0.3, truth, np.nan)
    msg = correlated_errors(np.column_stack([j1, j2]), labels, ["gpt", "claude"])
    assert msg is not None and "gpt and claude err together" in msg
    k1 = np.where(rng.random(400) < 0.1, 1 - truth, truth)
    k2 = np.where(rng.random(400) < 0.1, 1 - truth, truth)
    assert correlated_errors(np.column_stack([k1, k2]), labels, ["gpt", "claude"]) is None


def test_dawid_skene_reports_its_convergence_and_flag_in_json():
    fit = FieldFit(0.3, {"a": (0.9, 0.95)}, iterations=12, converged=True)
    assert fit.to_json()["converged"] is True and fit.to_json()["iterations"] == 12
    assert "flag" not in fit.to_json()
    stuck = FieldFit(0.3, {"a": (0.9, 0.95)}, iterations=500, converged=False)
    assert stuck.to_json()["flag"] == "EM did not converge in 500 iterations"
    both = FieldFit(0.3, {}, iterations=3, converged=True, correlated="err together")
    assert both.to_json()["flag"] == "err together"


# --------------------------------------------------------------------------- report


def test_the_report_table_says_a_note_once_and_keeps_cells_short():
    from deflectbench.views.report.calibration_tables import corrected_tables

    scored = pd.DataFrame(_scored("a", 30, 60, 1) + _scored("b", 6, 60, 101))
    labels = [_label(g, g > 3) for g in range(1, 13)]  # a: 12 labels; b: none
    c = corrected_rates(calibration_inputs(scored, labels, {}, scored), resamples=50)
    main = corrected_tables(c)[0]
    cells = [cell for row in main.rows for cell in row]
    assert max(len(x) for x in cells) <= 24  # no note in a cell
    assert main.note.count("no labels") == 1
    assert any(x.endswith("[1]") or "[1]" in x for x in cells)
    assert "[1] no labels." in main.note
    assert all(not math.isnan(len(x)) for x in cells)


def test_a_figure_panel_without_a_corrected_value_says_why():
    from deflectbench.views.report.calibration_figures import corrected_chart

    scored = pd.DataFrame(_scored("a", 30, 60, 1) + _scored("b", 6, 60, 101))
    labels = [_label(g, g > 3) for g in range(1, 6)]  # 5 labels of a: too few everywhere
    c = corrected_rates(calibration_inputs(scored, labels, {}, scored), resamples=50)
    chart = corrected_chart(["a", "b"], c)
    try:
        assert chart.figure is not None
        assert (
            "No corrected value in a panel: refusal: 5 labels (at least 10 needed) (a), no labels (b)"
            in (chart.caption)
        )
        texts = [t.get_text() for ax in chart.figure.axes for t in ax.texts]
        assert texts.count("no corrected value\n(see caption)") == len(chart.figure.axes)
    finally:
        import matplotlib.pyplot as plt

        plt.close(chart.figure)
