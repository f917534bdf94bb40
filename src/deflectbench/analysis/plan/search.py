"""The cheapest design reaching a target: a search over claims C (multiples of the
controversy levels, so the claims stay balanced over them, up to the benchmark's), templates T
(per model x framing fixed at the framing's templates, as a framing has a fixed set of them;
per model 1 up to all, the estimand staying the mean over all), samples S (1..10) and the share
r of answers the expensive judges see (the cheap judge sees all; PPI++ corrects it), priced per
model and judge from the cost room's table and the dry run's token expectations.

The price of a design is linear in its counts: generations C x T_run x S per model (T_run the
templates run: every template for a per-framing target) at the model's input and output
price, and r of them judged by each expensive judge at the judge's price (the cheap rule-based
judge costs 0). A design reaches the target when the ``quantile`` of its cells' half-widths
(1.0: the worst cell) is at most the target's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from deflectbench.analysis.plan.components import (
    Z95,
    answer_variance,
    design_variance,
    judged_share_variance,
)
from deflectbench.analysis.plan.spreads import CellSpread
from deflectbench.cost import Price, price_for

__all__ = ["SHARES", "Design", "PerCall", "cheapest", "design_of", "provider_of"]

#: The expensive judges' shares searched.
SHARES: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(1, 21))
MAX_SAMPLES = 10


@dataclass(frozen=True)
class PerCall:
    """The expected tokens of one request: a generation of ``name`` (role ``model``) or a
    judgment by ``name`` (role ``judge``) of one of ``of``'s answers."""

    role: str
    name: str
    input_tokens: float
    output_tokens: float
    of: str = ""


def provider_of(name: str) -> str:
    """The provider a model or judge is billed by (the part before ``/``; ``lexical`` and
    other names without one run here)."""
    return name.split("/", 1)[0] if "/" in name else "local"


@dataclass(frozen=True)
class Design:
    """A design and what it gives and costs: ``claims``, ``templates`` (per cell; None: each
    framing cell's own), ``templates_run`` per model, ``samples``, ``share`` judged by the
    expensive judges; the half-width of its cells at the quantile searched (``halfwidth``) and
    the worst; counts and the price per provider (None: a part has no known price, named in
    ``unpriced``)."""

    claims: int
    templates: int | None
    templates_run: int
    samples: int
    share: float
    halfwidth: float
    worst_halfwidth: float
    worst_cell: tuple[str, ...]
    generations: int
    judge_calls: Mapping[str, int]
    price_by_provider: Mapping[str, float | None]
    unpriced: tuple[str, ...]

    @property
    def price(self) -> float | None:
        """The total price (None when any part is unpriced: never counted as free)."""
        prices = list(self.price_by_provider.values())
        return None if any(p is None for p in prices) else float(sum(p or 0.0 for p in prices))

    @property
    def known_price(self) -> float:
        return float(sum(p or 0.0 for p in self.price_by_provider.values()))


def _halfwidths(
    cells: Sequence[CellSpread], claims: int, templates: int | None, samples: int, share: float
) -> np.ndarray:
    out = np.empty(len(cells))
    for i, cell in enumerate(cells):
        c = cell.components
        t = cell.templates if templates is None else templates
        var = design_variance(c, claims, t, samples, all_templates=cell.templates)
        var += judged_share_variance(answer_variance(c), cell.rho, share, claims * t * samples)
        out[i] = Z95 * np.sqrt(var)
    return out


def _costs(
    calls: Sequence[PerCall], prices: Mapping[str, Price]
) -> tuple[dict[str, float | None], dict[str, float | None], list[str]]:
    """Per generation of each model and per judgment by each judge: provider -> cost, for the
    model rows and the judge rows apart, and the unpriced names."""
    gen: dict[str, float | None] = {}
    judge: dict[str, float | None] = {}
    unpriced: list[str] = []
    for call in calls:
        price = price_for(call.name, prices)
        table = gen if call.role == "model" else judge
        provider = provider_of(call.name)
        if price is None:
            unpriced.append(call.name)
            table[provider] = None
            continue
        cost = price.cost(call.input_tokens, call.output_tokens)
        if provider not in table:
            table[provider] = 0.0
        if table[provider] is not None:
            table[provider] = (table[provider] or 0.0) + cost
    return gen, judge, list(dict.fromkeys(unpriced))


def design_of(
    cells: Sequence[CellSpread],
    calls: Sequence[PerCall],
    prices: Mapping[str, Price],
    *,
    claims: int,
    templates: int | None,
    templates_run: int,
    samples: int,
    share: float,
    quantile: float,
    judges: Sequence[str],
) -> Design:
    """One design's half-widths, counts and price."""
    hw = _halfwidths(cells, claims, templates, samples, share)
    worst = int(np.argmax(hw))
    per_model = claims * templates_run * samples
    gen, judge, unpriced = _costs(calls, prices)
    by: dict[str, float | None] = {}
    for table, factor in ((gen, float(per_model)), (judge, per_model * share)):
        for provider, cost in table.items():
            prior = by.get(provider, 0.0)
            by[provider] = None if cost is None or prior is None else prior + cost * factor
    n_models = len({c.name for c in calls if c.role == "model"})
    return Design(
        claims,
        templates,
        templates_run,
        samples,
        share,
        float(np.quantile(hw, quantile)),
        float(hw[worst]),
        cells[worst].key,
        per_model * n_models,
        {j: round(per_model * share) * n_models for j in judges},
        by,
        tuple(unpriced),
    )


def cheapest(
    cells: Sequence[CellSpread],
    calls: Sequence[PerCall],
    prices: Mapping[str, Price],
    *,
    target: float,
    claim_choices: Sequence[int],
    template_choices: Sequence[int | None],
    templates_run: Mapping[int | None, int],
    quantile: float,
    judges: Sequence[str],
) -> Design | None:
    """The design of least known price (then fewest generations, then fewest judge calls)
    whose cells' ``quantile`` half-width is at most ``target``; None if none within the
    bounds reaches it."""
    gen, judge, _ = _costs(calls, prices)
    gen_cost = sum(v or 0.0 for v in gen.values())
    judge_cost = sum(v or 0.0 for v in judge.values())
    shares = np.asarray(SHARES)
    best: tuple[tuple[float, int, float], tuple[int, int | None, int, float]] | None = None
    for t in template_choices:
        for c in claim_choices:
            for s in range(1, MAX_SAMPLES + 1):
                n = c * templates_run[t] * s
                if best is not None and (n * (gen_cost + shares[0] * judge_cost), n) >= best[0][:2]:
                    continue
                hw = _share_halfwidths(cells, c, t, s, shares)  # (shares, cells)
                reached = np.flatnonzero(np.quantile(hw, quantile, axis=1) <= target)
                if reached.size == 0:
                    continue
                r = float(shares[reached[0]])  # the smallest share reaching it is the cheapest
                rank = (n * (gen_cost + r * judge_cost), n, n * r)
                if best is None or rank < best[0]:
                    best = (rank, (c, t, s, r))
    if best is None:
        return None
    c, t, s, r = best[1]
    return design_of(
        cells,
        calls,
        prices,
        claims=c,
        templates=t,
        templates_run=templates_run[t],
        samples=s,
        share=r,
        quantile=quantile,
        judges=judges,
    )


def _share_halfwidths(
    cells: Sequence[CellSpread],
    claims: int,
    templates: int | None,
    samples: int,
    shares: np.ndarray,
) -> np.ndarray:
    """:func:`_halfwidths` for every share at once: (len(shares), len(cells))."""
    out = np.empty((shares.size, len(cells)))
    for i, cell in enumerate(cells):
        comp = cell.components
        t = cell.templates if templates is None else templates
        var = design_variance(comp, claims, t, samples, all_templates=cell.templates)
        total = answer_variance(comp)
        extra = (1.0 - shares) * (1.0 - cell.rho**2) * total / (shares * claims * t * samples)
        out[:, i] = Z95 * np.sqrt(var + extra)
    return out
