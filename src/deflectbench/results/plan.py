"""What ``deflectbench plan`` shows, typed: the cheapest design reaching a target and its price
per provider, beside the paper's full design, with the variance components each rests on
(:func:`deflectbench.plan`; the model is :mod:`deflectbench.analysis.plan`'s)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from deflectbench.analysis.plan import Design, Plan

__all__ = ["PlanResult", "design_json"]


def design_json(d: Design) -> dict[str, Any]:
    """One design as ``plan --json`` gives it."""
    return {
        "claims": d.claims,
        "templates": d.templates if d.templates is not None else "each framing's own",
        "templates_run_per_model": d.templates_run,
        "samples": d.samples,
        "expensive_judge_share": d.share,
        "halfwidth": d.halfwidth,
        "worst_halfwidth": d.worst_halfwidth,
        "worst_cell": list(d.worst_cell),
        "generations": d.generations,
        "judge_calls": dict(d.judge_calls),
        "price_usd_by_provider": dict(d.price_by_provider),
        "price_usd": d.price,
        "unpriced": list(d.unpriced),
    }


@dataclass(frozen=True)
class PlanResult:
    """The plan (:class:`deflectbench.analysis.plan.Plan`) and what it was asked: ``best`` is
    None when no design within the bounds reaches the target (exit code 1), ``narrowest`` then
    the narrowest the bounds allow (:attr:`narrowest`)."""

    plan: Plan
    prices_as_of: str

    @property
    def target(self) -> str:
        return str(self.plan.target)

    @property
    def narrowest(self) -> Design:
        return self.plan.narrowest

    @property
    def best(self) -> Design | None:
        return self.plan.best

    @property
    def paper(self) -> Design:
        return self.plan.paper

    @property
    def reached(self) -> bool:
        return self.plan.best is not None

    @property
    def exit_code(self) -> int:
        """0: a design reaches the target; 1: none within the bounds does."""
        return 0 if self.reached else 1

    @property
    def saving(self) -> float | None:
        """The best design's price as a share of the paper's (None: either unpriced)."""
        best, paper = self.plan.best, self.plan.paper
        if best is None or not paper.known_price:
            return None
        return best.known_price / paper.known_price

    def to_json(self) -> dict[str, Any]:
        p = self.plan
        return {
            "target": {
                "text": str(p.target),
                "measure": p.target.measure,
                "halfwidth": p.target.halfwidth,
                "scope": p.target.scope,
                "cells_quantile": p.quantile,
            },
            "source": p.source,
            "reached": self.reached,
            "best": None if p.best is None else design_json(p.best),
            "narrowest": design_json(self.narrowest),
            "paper": design_json(p.paper),
            "best_price_share_of_paper": self.saving,
            "cheap_judge": p.cheap_judge,
            "expensive_judges": list(p.judges),
            "cells": [
                {
                    "cell": list(c.key),
                    "templates": c.templates,
                    "rho": c.rho,
                    "rho_measured": c.rho_measured,
                    "generations": c.generations,
                    **c.components.to_json(),
                }
                for c in p.cells
            ],
            "tokens_per_request": [
                {
                    "role": c.role,
                    "name": c.name,
                    "of": c.of or None,
                    "input_tokens": c.input_tokens,
                    "output_tokens": c.output_tokens,
                }
                for c in p.calls
            ],
            "prices_as_of": self.prices_as_of,
            "bounds": dict(p.bounds),
            "notes": list(p.notes),
        }
