"""The design planner: the cheapest design (claims, templates, samples, the share of answers
the expensive judges see) whose 95% intervals reach a target half-width, priced per provider,
beside the paper's full design (``deflectbench plan``; docs/plan.md).

The model. The estimate is a rate per scope cell (model, or model x framing) as the paper
computes it: the mean over the cell's generations, its CI by the claim-block bootstrap. A cell's
generations are nested (claim i, template j, sample k): y_ijk = mu + c_i + (ct)_ij + e_ijk, a
nested random-effects model (two-stage cluster sampling), so with C claims, T templates in the
cell and S samples

    Var = sigma_claim^2 / C + sigma_claimxtemplate^2 / (C T) + sigma_within^2 / (C T S),

half-width = 1.96 sqrt(Var). The components are estimated per cell from a pilot store by the
method of moments (the nested ANOVA estimators, truncated at 0), or taken from the paper's
published spreads (:data:`.spreads.PAPER_SPREADS`, stated assumptions) with no pilot. A
framing has a fixed number of templates in the paper, so per model x framing T is each
framing's own; per model T may shrink to a random T of the benchmark's templates, the estimand
staying their mean, which adds the finite-population term (1 - T/T_all) sigma_template^2 / T.

Cascaded judging: the cheap rule-based ``lexical`` judge scores every answer, the expensive
judges a simple random share r, and PPI++ corrects the cheap judge to the expensive judges'
consensus. That adds (1 - r)(1 - rho^2) sigma_Y^2 / (r N) (N = C T S answers, sigma_Y^2 their
total variance, rho the cheap judge's correlation with the consensus, measured on the pilot if
it holds both, else assumed 0.5): for iid answers the PPI++ variance
Var(f)/N + Var(Y - lambda f)/n at the optimal lambda, i.e. sigma_Y^2/N times
1 + (1 - rho^2)(1 - r)/r.

The search takes the worst cell (or a stated ``quantile`` of the cells) and minimises the
price: generations at each model's price, judgments at each judge's, with the dry run's token
expectations (:mod:`.search`).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deflectbench.analysis.plan.components import (
        Components,
        anova_components,
        design_variance,
        halfwidth,
        judged_share_variance,
    )
    from deflectbench.analysis.plan.planner import Plan, make_plan, paper_models
    from deflectbench.analysis.plan.search import Design, PerCall, provider_of
    from deflectbench.analysis.plan.spreads import ASSUMED_RHO, PAPER_SPREADS, CellSpread
    from deflectbench.analysis.plan.target import MEASURES, SCOPES, Target, parse_target

#: Where each name lives, loaded on first use: the looks' rule (``run --until``) needs only
#: :mod:`.target`, not the planner and its search.
_HOMES = {
    **dict.fromkeys(
        ("Components", "anova_components", "design_variance", "halfwidth", "judged_share_variance"),
        "components",
    ),
    **dict.fromkeys(("Plan", "make_plan", "paper_models"), "planner"),
    **dict.fromkeys(("Design", "PerCall", "provider_of"), "search"),
    **dict.fromkeys(("ASSUMED_RHO", "PAPER_SPREADS", "CellSpread"), "spreads"),
    **dict.fromkeys(("MEASURES", "SCOPES", "Target", "parse_target"), "target"),
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(import_module(f"deflectbench.analysis.plan.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'deflectbench.analysis.plan' has no attribute {name!r}")


__all__ = [
    "ASSUMED_RHO",
    "MEASURES",
    "PAPER_SPREADS",
    "SCOPES",
    "CellSpread",
    "Components",
    "Design",
    "PerCall",
    "Plan",
    "Target",
    "anova_components",
    "design_variance",
    "halfwidth",
    "judged_share_variance",
    "make_plan",
    "paper_models",
    "parse_target",
    "provider_of",
]
