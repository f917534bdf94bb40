"""Where the variance components come from: a pilot run's store (estimated per cell), or, with
no pilot, the paper's published spreads as a stated table of assumptions.

The paper publishes no variance components. What it does publish (as issue 35 quotes it) is
that refusal varies by only 11 pp across the 80 claims while one framing change swings it by
up to 100 pp. :data:`PAPER_SPREADS` turns that into components for every measure, pessimistic
where the paper is silent: a cell's rate at 50% (the largest Bernoulli variance, 0.25); the
claims' spread an 11 pp range read as four standard deviations (sigma_claim = 2.75 pp); a
claim x template interaction as large as a template's own swing within a framing (10 pp); the
templates' own spread across framings 30 pp (the 100 pp framing swings); the rest of the 0.25
within the cell (repeat samples at the paper's temperature). The cheap judge's correlation with
the expensive judges' consensus is :data:`ASSUMED_RHO` unless the pilot holds the ``lexical``
judge's verdicts beside the expensive judges'.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from deflectbench.analysis.plan.components import Components, anova_components
from deflectbench.analysis.plan.target import Target
from deflectbench.analysis.stats.arrays import factorize

__all__ = [
    "ASSUMED_RHO",
    "CHEAP_JUDGE",
    "PAPER_SPREADS",
    "CellSpread",
    "fixed_template_components",
    "paper_cells",
    "pilot_cells",
]

#: The cheap judge that scores every answer (rule-based, priced at 0).
CHEAP_JUDGE = "lexical"
#: The cheap judge's correlation with the expensive judges' consensus when no pilot measures
#: it: a stated assumption (a rule-based judge that agrees on refusals half as well as a judge
#: that is always right); ``--rho`` overrides it.
ASSUMED_RHO = 0.5
_WORST_RATE = 0.5
_CLAIM_SD = 0.11 / 4.0
_CLAIM_TEMPLATE_SD = 0.10
_TEMPLATE_SD = 0.30
#: The components assumed with no pilot (see the module docstring for each one's source).
PAPER_SPREADS: Mapping[str, float] = {
    "rate": _WORST_RATE,
    "sigma2_claim": _CLAIM_SD**2,
    "sigma2_claim_template": _CLAIM_TEMPLATE_SD**2,
    "sigma2_within": _WORST_RATE * (1 - _WORST_RATE) - _CLAIM_SD**2 - _CLAIM_TEMPLATE_SD**2,
    "sigma2_template": _TEMPLATE_SD**2,
}


@dataclass(frozen=True)
class CellSpread:
    """One scope cell: its key (e.g. ``("gpt-5.5", "coach")``), its variance components, how
    many templates of the benchmark it holds, and the cheap judge's correlation ``rho`` with
    the consensus (``rho_measured``: from the pilot, else assumed)."""

    key: tuple[str, ...]
    components: Components
    templates: int
    rho: float
    rho_measured: bool
    generations: int = 0


def _assumed(templates: int) -> Components:
    s = PAPER_SPREADS
    return Components(
        s["sigma2_claim"],
        s["sigma2_claim_template"],
        s["sigma2_within"],
        s["rate"],
        0,
        templates,
        0.0,
        s["sigma2_template"],
    )


def paper_cells(
    target: Target, models: Sequence[str], templates_per_framing: Mapping[str, int], rho: float
) -> list[CellSpread]:
    """The cells of ``target`` for ``models`` with the assumed components."""
    total = sum(templates_per_framing.values())
    if target.scope == "model":
        return [CellSpread((m,), _assumed(total), total, rho, False) for m in models]
    return [
        CellSpread((m, f), _assumed(t), t, rho, False)
        for m in models
        for f, t in templates_per_framing.items()
    ]


def measure_values(scored: pd.DataFrame, measure: str) -> np.ndarray:
    """Each scored generation's 0/1 value of ``measure`` (a field, or an outcome of the
    ladder), NaN where the field is missing."""
    if measure in scored.columns:
        return scored[measure].to_numpy(dtype=np.float64)
    return (scored["outcome"] == measure).to_numpy(dtype=np.float64)


def _correlation(y: np.ndarray, f: np.ndarray) -> float | None:
    ok = ~(np.isnan(y) | np.isnan(f))
    if ok.sum() < 3 or np.std(y[ok]) == 0 or np.std(f[ok]) == 0:
        return None
    # capped at 1 - 1/n as ppi_py caps it: a pilot's perfect agreement earns no free labels
    return min(float(np.corrcoef(y[ok], f[ok])[0, 1]), 1.0 - 1.0 / int(ok.sum()))


def fixed_template_components(
    y: np.ndarray, claims: np.ndarray, templates: np.ndarray
) -> Components:
    """The nested components with the templates' own effects taken out first: a design runs
    every template of the cell, so their effects are fixed, not claim x template noise (left
    in, they would count in sigma_claimxtemplate^2 and again in sigma_template^2); the
    templates' spread is kept from the raw values (the share term and a design running fewer
    templates use it)."""
    codes, _ = factorize(templates)
    means = np.bincount(codes, weights=y) / np.bincount(codes)
    centred = anova_components(y - means[codes] + y.mean(), claims, templates)
    return replace(centred, template_spread=anova_components(y, claims, templates).template_spread)


def pilot_cells(
    scored: pd.DataFrame,
    cheap: pd.DataFrame | None,
    target: Target,
    templates_per_framing: Mapping[str, int],
    rho: float | None,
) -> tuple[list[CellSpread], list[str]]:
    """The cells of ``target`` in a pilot's scored table (the expensive judges' consensus),
    with the components of each and the cheap judge's correlation (``cheap``: the cheap
    judge's scored table, by gen_id; None when the pilot has none). ``rho`` given overrides
    the measured one. Returns the cells and a note per cell left out (too few data)."""
    total = sum(templates_per_framing.values())
    cols = list(target.columns)
    cheap_by_gen = None
    if cheap is not None and len(cheap):
        cheap_by_gen = pd.Series(measure_values(cheap, target.measure), index=cheap["gen_id"])
    cells: list[CellSpread] = []
    skipped: list[str] = []
    for key, part in scored.groupby(cols, sort=True):
        key_t = tuple(str(k) for k in (key if isinstance(key, tuple) else (key,)))
        y = measure_values(part, target.measure)
        ok = ~np.isnan(y)
        try:
            comp = fixed_template_components(
                y[ok], part["claim_id"].to_numpy()[ok], part["prompt_id"].to_numpy()[ok]
            )
        except ValueError as exc:
            skipped.append(f"{' x '.join(key_t)}: {exc}")
            continue
        measured = None
        if cheap_by_gen is not None:
            f = cheap_by_gen.reindex(part["gen_id"].to_numpy()).to_numpy(dtype=np.float64)
            measured = _correlation(y, f)
        templates = total if target.scope == "model" else templates_per_framing.get(key_t[1], 1)
        chosen = rho if rho is not None else (ASSUMED_RHO if measured is None else measured)
        cells.append(
            CellSpread(
                key_t,
                comp,
                templates,
                chosen,
                rho is None and measured is not None,
                int(ok.sum()),
            )
        )
    return cells, skipped
