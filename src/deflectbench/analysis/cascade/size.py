"""How large a share of the answers the expensive judges must see for a target half-width.

The planner's variance model (:func:`deflectbench.analysis.plan.components.judged_share_variance`):
judging a simple random share r of a cell's N answers with the expensive judges, a cheap
judge scoring all and PPI++ correcting it, adds (1 - r)(1 - rho^2) sigma^2 / (r N) to the
variance V of the full-judging rate. With L = (h / z)^2 the variance a 95% half-width h
allows, the smallest share is

    r = 1 / (1 + (L - V) N / ((1 - rho^2) sigma^2)),

1 when V >= L already (judging every answer is the best the answers allow). V is the cell's
claim-clustered variance of its mean (the spread of its claims' means over the claims), read
from the cheap judge's verdicts before the expensive judges have said anything; a judge that
errs shrinks its claims' means towards its average, so that spread is divided by rho^2
(:func:`consensus_variance`). sigma^2 is the worst Bernoulli variance 0.25 and rho the
planner's assumed correlation unless given, so the share errs on the large side.
At least :data:`MIN_EXPECTED` answers per cell are asked for (PPI++ needs labels to fit lambda).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from deflectbench.analysis.plan.components import Z95
from deflectbench.analysis.plan.spreads import ASSUMED_RHO

__all__ = [
    "MIN_EXPECTED",
    "WORST_VARIANCE",
    "clustered_variance",
    "consensus_variance",
    "share_for_halfwidth",
]

#: The fewest answers per cell the expensive judges are asked to see (in expectation).
MIN_EXPECTED = 30
#: sigma^2 of a 0/1 outcome at its worst (a rate of 50%).
WORST_VARIANCE = 0.25


def clustered_variance(values: ArrayLike, claims: ArrayLike) -> float:
    """The variance of a cell's mean with claims as clusters: the sample variance of the
    claims' means over the number of claims (0 with fewer than 2 claims)."""
    y = np.asarray(values, dtype=np.float64)
    c = np.asarray(claims)
    ok = ~np.isnan(y)
    y, c = y[ok], c[ok]
    _, codes = np.unique(c, return_inverse=True)
    k = int(codes.max()) + 1 if codes.size else 0
    if k < 2:
        return 0.0
    means = np.bincount(codes, weights=y, minlength=k) / np.bincount(codes, minlength=k)
    return float(np.var(means, ddof=1) / k)


def consensus_variance(cheap_variance: float, rho: float = ASSUMED_RHO) -> float:
    """The consensus' claim-clustered variance guessed from the cheap judge's: divided by
    rho^2 (a judge correlated rho with the consensus varies less across claims; the guess is
    on the large side for a rho as assumed or better)."""
    return cheap_variance / max(abs(rho), 1e-3) ** 2


def share_for_halfwidth(
    halfwidth: float,
    answers: int,
    full_variance: float,
    *,
    rho: float = ASSUMED_RHO,
    sigma_sq: float = WORST_VARIANCE,
) -> float:
    """The smallest share r in (0, 1] whose cascaded estimate reaches ``halfwidth`` (module
    docstring), raised to :data:`MIN_EXPECTED` answers; 1 when none smaller does."""
    if not 0.0 < halfwidth < 1.0:
        raise ValueError("halfwidth must lie strictly between 0 and 1")
    if answers <= 0:
        return 1.0
    limit = (halfwidth / Z95) ** 2
    spare = limit - max(full_variance, 0.0)
    noise = (1.0 - min(abs(rho), 1.0) ** 2) * sigma_sq
    if spare <= 0:
        return 1.0
    r = 0.0 if noise <= 0 else 1.0 / (1.0 + spare * answers / noise)
    return float(min(1.0, max(r, MIN_EXPECTED / answers)))
