"""The variance components of a rate per cell, and the half-width a design gives it.

A cell's generations are nested: claim i, template j of the cell, sample k,
y_ijk = mu + c_i + (ct)_ij + e_ijk, with variances sigma_claim^2, sigma_claimxtemplate^2 and
sigma_within^2 (two-stage cluster sampling; Searle, Casella and McCulloch 1992, ch. 3 and 5;
Sokal and Rohlf, Biometry, nested anova). The paper's rate is the mean of the cell's
generations, so with C claims, T templates and S samples

    Var = sigma_claim^2 / C + sigma_claimxtemplate^2 / (C T) + sigma_within^2 / (C T S).

The components are estimated by the method of moments (the ANOVA estimators of the nested
design, with the unbalanced coefficients of Sokal and Rohlf's Box 10.4, which reduce to S and
T S when balanced), each truncated at 0 after all are solved: a negative estimate is sampling
noise of a component near 0, and 0 is what is used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from deflectbench.analysis.stats.arrays import factorize

__all__ = [
    "Z95",
    "Components",
    "anova_components",
    "answer_variance",
    "design_variance",
    "halfwidth",
]

#: The normal quantile of a two-sided 95% interval.
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Components:
    """The variance components of one cell (each >= 0), its rate, and its size as measured:
    ``claims``, ``templates`` (of the cell) and the mean ``samples`` per claim and template.
    ``template_spread`` is the variance of the templates' own effects (sigma_template^2), the
    part a design that runs only some of the cell's templates adds (0 when it runs them all)."""

    claim: float
    claim_template: float
    within: float
    rate: float
    claims: int
    templates: int
    samples: float
    template_spread: float = 0.0

    def to_json(self) -> dict[str, float | int]:
        return {
            "sigma2_claim": self.claim,
            "sigma2_claim_template": self.claim_template,
            "sigma2_within": self.within,
            "sigma2_template": self.template_spread,
            "rate": self.rate,
            "claims": self.claims,
            "templates": self.templates,
            "samples": self.samples,
        }


def anova_components(y: ArrayLike, claims: ArrayLike, templates: ArrayLike) -> Components:
    """The nested ANOVA (method of moments) estimates of one cell's components from its
    generations' values ``y`` (0/1 or real), each row's claim and template (a template id;
    the subgroup is the (claim, template) pair). Needs two claims and one subgroup with two
    samples at least (else ValueError)."""
    yy = np.asarray(y, dtype=np.float64)
    ci, _ = factorize(np.asarray(claims))
    pi, _ = factorize(
        list(zip(np.asarray(claims).tolist(), np.asarray(templates).tolist(), strict=True))
    )
    tpl, _ = factorize(np.asarray(templates))
    n, a, b = yy.size, int(ci.max()) + 1 if yy.size else 0, int(pi.max()) + 1 if yy.size else 0
    if a < 2 or n - b < 1:
        raise ValueError(
            f"{a} claims and {n - b} repeated samples: the components need at least 2 claims "
            "and one template of a claim sampled twice"
        )
    n_pair = np.bincount(pi, minlength=b).astype(np.float64)
    s_pair = np.bincount(pi, weights=yy, minlength=b)
    claim_of_pair = np.zeros(b, dtype=np.int64)
    claim_of_pair[pi] = ci
    n_claim = np.bincount(claim_of_pair, weights=n_pair, minlength=a)
    s_claim = np.bincount(claim_of_pair, weights=s_pair, minlength=a)
    grand = yy.sum() / n
    ss_within = float(((yy - (s_pair / n_pair)[pi]) ** 2).sum())
    ss_pair = float((n_pair * (s_pair / n_pair - (s_claim / n_claim)[claim_of_pair]) ** 2).sum())
    ss_claim = float((n_claim * (s_claim / n_claim - grand) ** 2).sum())
    ms_within = ss_within / (n - b)
    sum_sq_over_claim = float(
        (np.bincount(claim_of_pair, weights=n_pair**2, minlength=a) / n_claim).sum()
    )
    within = max(ms_within, 0.0)
    if b > a:
        ms_pair = ss_pair / (b - a)
        n0 = (n - sum_sq_over_claim) / (b - a)
        raw_ct = (ms_pair - ms_within) / n0
    else:  # one template per claim: the pair and claim levels cannot be told apart
        raw_ct = 0.0
    claim_template = max(raw_ct, 0.0)
    ms_claim = ss_claim / (a - 1)
    n0_ct = (sum_sq_over_claim - float((n_pair**2).sum()) / n) / (a - 1)
    n0_c = (n - float((n_claim**2).sum()) / n) / (a - 1)
    # the untruncated estimate here, so balanced data give (MS_claim - MS_pair) / (T S)
    claim = max((ms_claim - ms_within - n0_ct * raw_ct) / n0_c, 0.0)
    # the templates' own effects (crossed with the claims): the spread of the template means
    # less what the claim x template and within noise put in it
    n_t = int(tpl.max()) + 1
    spread = 0.0
    if n_t > 1:
        t_mean = np.bincount(tpl, weights=yy, minlength=n_t) / np.bincount(tpl, minlength=n_t)
        spread = max(
            float(np.var(t_mean, ddof=1)) - claim_template / a - within / (n / n_t),
            0.0,
        )
    return Components(claim, claim_template, within, float(grand), a, n_t, n / b, spread)


def design_variance(
    c: Components, claims: int, templates: int, samples: int, *, all_templates: int | None = None
) -> float:
    """Var of the cell's rate with ``claims`` x ``templates`` x ``samples`` (the docstring's
    formula); a design running ``templates`` of the cell's ``all_templates`` (drawn at random,
    the estimand staying the mean over all of them) adds the finite-population term
    (1 - T / T_all) sigma_template^2 / T."""
    var = (
        c.claim / claims
        + c.claim_template / (claims * templates)
        + c.within / (claims * templates * samples)
    )
    if all_templates is not None and templates < all_templates:
        var += (1.0 - templates / all_templates) * c.template_spread / templates
    return var


def answer_variance(c: Components) -> float:
    """The answers' own variance around the cell's rate (sigma_Y^2 of the share term): the
    nested components plus the templates' own spread (a cell's answers differ by template too,
    and a simple random share of them is drawn across templates), at most rate (1 - rate), the
    variance of a 0/1 answer and the most any value in [0, 1] can have. (Without the
    templates' spread the share term ran 20-40% low where framings differ: issue 35.)"""
    total = c.claim + c.claim_template + c.within + c.template_spread
    if 0.0 <= c.rate <= 1.0:
        total = min(total, c.rate * (1.0 - c.rate))
    return total


def judged_share_variance(
    total_variance: float, rho: float, share: float, generations: int
) -> float:
    """What judging only a share ``share`` of the ``generations`` with the expensive judges
    (a simple random sample of them; a cheap judge scores all, PPI++ corrects it) adds to the
    variance: (1 - r)(1 - rho^2) sigma_Y^2 / (r N), sigma_Y^2 the answers' total variance and
    rho the cheap judge's correlation with the expensive judges' consensus. With the PPI++
    lambda = Cov(Y, f) / Var(f) the estimate minus the full-judging estimate is the labelled
    sample's mean of Y - lambda f less the population's; its variance, given the answers, is
    that term (law of total variance; for iid answers it is the brief's inflation factor
    1 + (1 - rho^2)(1 - r) / r of sigma_Y^2 / N)."""
    if share >= 1.0:
        return 0.0
    return (1.0 - share) * (1.0 - rho**2) * total_variance / (share * generations)


def halfwidth(variance: float) -> float:
    """The 95% half-width of a normal interval of this variance."""
    return Z95 * math.sqrt(max(variance, 0.0))
