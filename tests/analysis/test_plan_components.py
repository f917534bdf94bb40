"""The planner's statistics against independent computations: the nested ANOVA estimators
against the textbook balanced formulas written plainly (and statsmodels' MixedLM, whose REML
equals them on balanced data with positive components), the variance formula against the
simulated claim-block bootstrap on planted data of known components, and the PPI++ share term
against a simulation of the PPI++ estimator."""

from __future__ import annotations

import math

import numpy as np
import pytest

from deflectbench.analysis.plan import (
    anova_components,
    design_variance,
    halfwidth,
    judged_share_variance,
)
from deflectbench.analysis.stats.bootstrap import block_bootstrap_ci


def _planted(rng, c, t, s, sc, sct, sw, mu=0.5):
    claim = rng.normal(0, math.sqrt(sc), c)
    ct = rng.normal(0, math.sqrt(sct), (c, t))
    y = mu + claim[:, None, None] + ct[:, :, None] + rng.normal(0, math.sqrt(sw), (c, t, s))
    claims = np.repeat(np.arange(c), t * s)
    templates = np.tile(np.repeat(np.arange(t), s), c)
    return y.ravel(), claims, templates


def _textbook_balanced(y, c, t, s):
    """The balanced nested ANOVA, written out with loops (Sokal and Rohlf, Box 10.1)."""
    cube = y.reshape(c, t, s)
    grand = cube.mean()
    ss_a = ss_b = ss_w = 0.0
    for i in range(c):
        ci = cube[i].mean()
        ss_a += t * s * (ci - grand) ** 2
        for j in range(t):
            cij = cube[i, j].mean()
            ss_b += s * (cij - ci) ** 2
            for k in range(s):
                ss_w += (cube[i, j, k] - cij) ** 2
    ms_a, ms_b, ms_w = ss_a / (c - 1), ss_b / (c * (t - 1)), ss_w / (c * t * (s - 1))
    return (ms_a - ms_b) / (t * s), (ms_b - ms_w) / s, ms_w


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_anova_equals_the_textbook_balanced_estimators(seed):
    rng = np.random.default_rng(seed)
    c, t, s = 12, 3, 4
    y, claims, templates = _planted(rng, c, t, s, 0.04, 0.02, 0.1)
    got = anova_components(y, claims, templates)
    want = _textbook_balanced(y, c, t, s)
    assert got.claim == pytest.approx(max(want[0], 0), abs=1e-12)
    assert got.claim_template == pytest.approx(max(want[1], 0), abs=1e-12)
    assert got.within == pytest.approx(want[2], abs=1e-12)
    assert (got.claims, got.templates, got.samples) == (c, t, s)


def test_anova_truncates_a_negative_component_at_zero():
    for seed in range(100):  # no claim effects at all: some seed's raw estimate falls below 0
        y, claims, templates = _planted(np.random.default_rng(seed), 10, 3, 4, 0.0, 0.0, 0.2)
        raw = _textbook_balanced(y, 10, 3, 4)
        if min(raw[:2]) < 0:
            break
    got = anova_components(y, claims, templates)
    for estimate, value in zip((got.claim, got.claim_template), raw[:2], strict=True):
        assert estimate == pytest.approx(max(value, 0.0), abs=1e-12)
    assert min(got.claim, got.claim_template) == 0.0


def test_anova_matches_statsmodels_mixedlm_reml_on_balanced_data():
    sm = pytest.importorskip("statsmodels.formula.api")
    import pandas as pd

    rng = np.random.default_rng(3)
    c, t, s = 20, 3, 4
    y, claims, templates = _planted(rng, c, t, s, 0.05, 0.03, 0.1)
    got = anova_components(y, claims, templates)
    assert got.claim > 0 and got.claim_template > 0
    df = pd.DataFrame({"y": y, "claim": claims, "tpl": templates})
    fit = sm.mixedlm(
        "y ~ 1", df, groups="claim", re_formula="1", vc_formula={"ct": "0 + C(tpl)"}
    ).fit(reml=True)
    assert float(fit.cov_re.iloc[0, 0]) == pytest.approx(got.claim, rel=1e-3)
    assert float(fit.vcomp[0]) == pytest.approx(got.claim_template, rel=1e-3)
    assert float(fit.scale) == pytest.approx(got.within, rel=1e-3)


def test_anova_unbalanced_recovers_planted_components():
    """Unbalanced (each claim-template pair 1..6 samples): the Box 10.4 coefficients keep the
    estimators unbiased, so over many claims they land near the planted values."""
    rng = np.random.default_rng(11)
    c, t = 2000, 3
    sc, sct, sw = 0.04, 0.02, 0.1
    rows = []
    for i in range(c):
        ci = rng.normal(0, math.sqrt(sc))
        for j in range(t):
            ctij = rng.normal(0, math.sqrt(sct))
            for _ in range(int(rng.integers(1, 7))):
                rows.append((i, j, ci + ctij + rng.normal(0, math.sqrt(sw))))
    claims, templates, y = (np.array(x) for x in zip(*rows, strict=True))
    got = anova_components(y, claims, templates)
    assert got.claim == pytest.approx(sc, rel=0.1)
    assert got.claim_template == pytest.approx(sct, rel=0.15)
    assert got.within == pytest.approx(sw, rel=0.05)


def test_anova_refuses_a_cell_it_cannot_measure():
    with pytest.raises(ValueError, match="at least 2 claims"):
        anova_components([1.0, 0.0], ["a", "a"], ["t", "t"])
    with pytest.raises(ValueError, match="sampled twice"):
        anova_components([1.0, 0.0], ["a", "b"], ["t", "t"])


@pytest.mark.parametrize(("c", "t", "s"), [(80, 3, 5), (40, 1, 5), (24, 3, 2)])
def test_predicted_halfwidth_is_within_ten_percent_of_the_simulated_bootstrap(c, t, s):
    """Planted 0/1 answers of known components (a claim's and a pair's log-odds shift): the
    formula's half-width from the true components against the mean claim-block bootstrap
    half-width over replications, and against the spread of the estimate itself."""
    rng = np.random.default_rng(c * 100 + t * 10 + s)
    reps, p0 = 60, 0.3

    # 0/1 data: components are those of the Bernoulli model, computed from a huge planted cell
    def draw(n_claims):
        a = rng.normal(0, 0.6, n_claims)
        b = rng.normal(0, 0.5, (n_claims, t))
        p = 1 / (1 + np.exp(-(np.log(p0 / (1 - p0)) + a[:, None] + b)))
        y = (rng.random((n_claims, t, s)) < p[:, :, None]).astype(float)
        return (
            y.ravel(),
            np.repeat(np.arange(n_claims), t * s),
            np.tile(np.repeat(np.arange(t), s), n_claims),
        )

    truth = anova_components(*draw(20000))  # the components, near exactly
    predicted = halfwidth(design_variance(truth, c, t, s))
    estimates, bootstrap = [], []
    for r in range(reps):
        y, claims, _ = draw(c)
        ci = block_bootstrap_ci(y, claims, n_resamples=400, seed=r)
        estimates.append(ci.rate)
        bootstrap.append((ci.hi - ci.lo) / 2)
    assert predicted == pytest.approx(float(np.mean(bootstrap)), rel=0.10)
    assert predicted == pytest.approx(1.96 * float(np.std(estimates, ddof=1)), rel=0.25)


def test_judged_share_term_is_the_ppi_inflation_factor_for_iid_answers():
    sigma2, n = 0.21, 6000
    for rho in (0.0, 0.5, 0.9):
        for r in (0.05, 0.3, 1.0):
            total = sigma2 / n + judged_share_variance(sigma2, rho, r, n)
            assert total == pytest.approx(sigma2 / n * (1 + (1 - rho**2) * (1 - r) / r))


def test_judged_share_term_matches_a_simulated_ppi_estimator():
    """PPI++ with the cheap judge on all N answers and the expensive judges on a simple random
    share r: the estimator's variance around the full-judging mean (lambda = Cov/Var on the
    population, as the planner assumes) against the term."""
    rng = np.random.default_rng(7)
    n_all, share, reps = 4000, 0.2, 400
    y = (rng.random(n_all) < 0.3).astype(float)
    f = np.where(rng.random(n_all) < 0.85, y, 1 - y)  # a cheap judge wrong 15% of the time
    lam = np.cov(y, f, ddof=0)[0, 1] / np.var(f)
    rho = np.corrcoef(y, f)[0, 1]
    full = y.mean()
    diffs = []
    for _ in range(reps):
        lab = rng.choice(n_all, size=int(share * n_all), replace=False)
        est = lam * f.mean() + (y[lab] - lam * f[lab]).mean()
        diffs.append(est - full)
    want = judged_share_variance(float(np.var(y)), float(rho), share, n_all)
    assert float(np.var(diffs)) == pytest.approx(want, rel=0.15)
