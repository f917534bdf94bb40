"""The planner's share term takes the answers' whole variance, templates' spread included
(issue 35): a simple random share of a cell's answers is drawn across its templates, so the
PPI++ residual varies by template too. Checked against a simulated PPI++ estimator (lambda
fitted on the labelled share, as ppi_py fits it) on a cell whose templates differ a lot, at a
small share, where the old term (the nested components without the templates' spread) ran low.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from deflectbench.analysis.plan.components import (
    anova_components,
    answer_variance,
    judged_share_variance,
)


def _cell(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """80 claims x 15 templates x 2 samples of a 0/1 outcome whose rate is 5%-90% by template;
    a cheap judge wrong 15% of the time."""
    claims, templates, samples = 80, 15, 2
    t_rate = np.linspace(0.05, 0.9, templates)
    c_eff = rng.normal(0.0, 0.03, claims)
    p = np.clip(t_rate[None, :] + c_eff[:, None] + rng.normal(0, 0.08, (claims, templates)), 0, 1)
    y = (rng.random((claims, templates, samples)) < p[:, :, None]).astype(float)
    f = np.where(rng.random(y.shape) < 0.85, y, 1.0 - y)
    ci = np.broadcast_to(np.arange(claims)[:, None, None], y.shape).ravel()
    ti = np.broadcast_to(np.arange(templates)[None, :, None], y.shape).ravel()
    return y.ravel(), f.ravel(), ci, ti


def _simulated_share_variance(y: np.ndarray, f: np.ndarray, share: float, reps: int) -> float:
    """The variance, over simple random labelled shares, of PPI++ (lambda = Cov/Var fitted on
    the labelled share, the cheap judge on all) around the full-judging mean: plainly."""
    rng = np.random.default_rng(11)
    n = y.size
    diffs = np.empty(reps)
    for i in range(reps):
        lab = rng.choice(n, size=round(share * n), replace=False)
        yl, fl = y[lab], f[lab]
        lam = np.cov(yl, fl)[0, 1] / np.var(fl, ddof=1)
        diffs[i] = lam * f.mean() + (yl - lam * fl).mean() - y.mean()
    return float(np.var(diffs))


@pytest.mark.parametrize("share", [0.05, 0.2])
def test_share_term_with_the_templates_spread_matches_simulated_ppi(share: float) -> None:
    y, f, ci, ti = _cell(np.random.default_rng(3))
    # every template is run: the components of the template-centred answers (their own
    # effects are fixed), the templates' spread from the raw answers (as the bench plans)
    means = np.bincount(ti, weights=y) / np.bincount(ti)
    centred = anova_components(y - means[ti] + y.mean(), ci, ti)
    comp = replace(centred, template_spread=anova_components(y, ci, ti).template_spread)
    rho = float(np.corrcoef(y, f)[0, 1])
    simulated = _simulated_share_variance(y, f, share, 1500)
    assert answer_variance(comp) == pytest.approx(float(np.var(y)), rel=0.05)
    assert judged_share_variance(answer_variance(comp), rho, share, y.size) == pytest.approx(
        simulated, rel=0.15
    )
    # the old term, without the templates' spread, runs well below the simulation
    old = centred.claim + centred.claim_template + centred.within
    assert judged_share_variance(old, rho, share, y.size) < 0.8 * simulated


def test_answer_variance_never_exceeds_a_bernoulli_variance() -> None:
    y, _, ci, ti = _cell(np.random.default_rng(5))
    raw = anova_components(y, ci, ti)  # template effects in the claim x template part too
    assert raw.claim + raw.claim_template + raw.within + raw.template_spread > np.var(y)
    assert answer_variance(raw) == pytest.approx(raw.rate * (1 - raw.rate))
    assert answer_variance(raw) == pytest.approx(float(np.var(y)), rel=1e-12)


def test_a_pilots_fixed_templates_do_not_count_as_claim_x_template_noise() -> None:
    """Templates crossed with claims, with large own effects and no claim x template part:
    the nested ANOVA on the raw values puts the templates' spread in sigma_claimxtemplate^2;
    with their effects taken out first it is near 0 (planted), the spread kept apart."""
    from deflectbench.analysis.plan.spreads import fixed_template_components

    rng = np.random.default_rng(9)
    claims, templates, samples = 60, 10, 4
    t_eff = np.linspace(-0.3, 0.3, templates)  # sigma_template^2 about 0.04
    y = (
        0.5
        + rng.normal(0.0, 0.05, claims)[:, None, None]
        + t_eff[None, :, None]
        + rng.normal(0.0, 0.2, (claims, templates, samples))
    ).ravel()
    ci = np.repeat(np.arange(claims), templates * samples)
    ti = np.tile(np.repeat(np.arange(templates), samples), claims)
    raw = anova_components(y, ci, ti)
    fixed = fixed_template_components(y, ci, ti)
    spread = float(np.var(t_eff, ddof=1))
    assert raw.claim_template == pytest.approx(spread, rel=0.25)
    assert fixed.claim_template < 0.1 * spread
    assert fixed.within == pytest.approx(0.04, rel=0.1)
    assert fixed.claim == pytest.approx(0.0025, rel=0.6)
    assert fixed.template_spread == raw.template_spread
