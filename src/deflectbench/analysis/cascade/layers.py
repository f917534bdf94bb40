"""The truth from a cascade with people's labels on top: two PPI++ corrections in turn.

Three layers of raters: the cheap judge f on every answer (N), the expensive judges' consensus
c on the seeded sample S, people's labels h on some sampled answers L (L within S: a label
outside the sample has no consensus to correct and is left out, counted). The estimand is the
people's rate. Each layer corrects the one below it:

1. theta_C = lam1 mean_N(f) + mean_S(c - lam1 f): the consensus over every answer (PPI++ with
   the cheap judge as prediction; :mod:`.estimate`);
2. theta_T = lam2 theta_C + mean_L(h - lam2 c): PPI++ with the consensus as prediction and the
   people as labels, the consensus' mean taken from step 1 instead of from S alone. lam2 is
   fitted as PPI++ fits it with S as the prediction set (``ppi_mean_moments`` on L and S).

Written as theta_T = theta2 + lam2 (theta_C - mean_S(c)), theta2 the plain PPI++ of L on S, so
both steps are :func:`~deflectbench.analysis.calibration.ppi.ppi_mean_moments` on moment sums,
and the claim-block bootstrap redraws claims once for all three layers (lam1 and lam2 re-fitted
in every replicate). Sample weights (a stratified S) weigh S's items in both steps; the labels
within S are taken as a simple random sample of it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from deflectbench.analysis.calibration.draws import claim_multiplicities
from deflectbench.analysis.calibration.estimate import LEVEL, Estimate
from deflectbench.analysis.calibration.moments import (
    Moments,
    labelled_terms,
    per_claim,
    replicate,
    target_terms,
    total,
)
from deflectbench.analysis.calibration.ppi import ppi_mean_moments

__all__ = ["truth_rates"]


def _theta(t: Moments, s1: Moments, s2: Moments, l2: Moments) -> tuple[NDArray, NDArray, NDArray]:
    """(theta_T, lam1, lam2) from the sums of the three layers (any matching shape)."""
    theta_c, lam1 = ppi_mean_moments(s1, t)
    theta2, lam2 = ppi_mean_moments(l2, s2)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_s = s2["vf"] / s2["v"]
    return theta2 + lam2 * (theta_c - mean_s), lam1, lam2


def truth_rates(
    cheap: ArrayLike,
    expensive: ArrayLike,
    human: ArrayLike,
    claims: ArrayLike,
    weight: ArrayLike | None = None,
    *,
    resamples: int = 1000,
    seed: int = 0,
    min_labels: int = 10,
) -> list[Estimate]:
    """Per column, the people's rate estimated through both layers (module docstring).

    ``cheap`` (N, K) the cheap judge on every answer; ``expensive`` (N, K) the consensus,
    NaN outside the sample; ``human`` (N, K) people's labels, NaN where none; ``claims`` (N,)
    each answer's claim; ``weight`` (N,) a sampled answer's N_h / n_h (None: 1).
    """
    f = np.atleast_2d(np.asarray(cheap, dtype=np.float64).T).T
    c = np.atleast_2d(np.asarray(expensive, dtype=np.float64).T).T
    h = np.atleast_2d(np.asarray(human, dtype=np.float64).T).T
    n = f.shape[0]
    w = np.ones(n) if weight is None else np.asarray(weight, dtype=np.float64)
    w = np.where(np.isfinite(w), w, 0.0)
    _, codes = np.unique(np.asarray(claims).astype(str), return_inverse=True)
    k = int(codes.max()) + 1 if n else 0
    in_s = ~np.isnan(c)
    h_in = np.where(in_s, h, np.nan)  # a label outside the sample has nothing to correct
    layers = (
        per_claim(target_terms(f, np.ones(n)), codes, k),
        per_claim(labelled_terms(c, np.where(in_s, f, np.nan), w), codes, k),
        per_claim(target_terms(c, w), codes, k),
        per_claim(labelled_terms(h_in, c, np.ones(n)), codes, k),
    )
    theta, lam1, lam2 = _theta(*(total(x) for x in layers))
    mult = claim_multiplicities(k, resamples, seed) if k > 1 else None
    reps = None if mult is None else _theta(*(replicate(mult, x) for x in layers))[0]
    n_lab = (~np.isnan(h_in)).sum(axis=0)
    out = []
    for j in range(f.shape[1]):
        details = {"lam_cheap": float(lam1[j]), "lam_consensus": float(lam2[j])}
        if n_lab[j] < min_labels:
            note = f"{int(n_lab[j])} labels in the sample (at least {min_labels} needed)"
            out.append(Estimate(None, None, n, int(n_lab[j]), "ppi++ x2", note, details))
            continue
        ci = None
        if reps is not None:
            col = reps[:, j][np.isfinite(reps[:, j])]
            tail = (1.0 - LEVEL) / 2.0
            if col.size:
                lo, hi = np.quantile(col, [tail, 1.0 - tail])
                ci = (max(0.0, float(lo)), min(1.0, float(hi)))
        rate = min(1.0, max(0.0, float(theta[j])))
        why = None if ci is not None else "no interval (one claim)"
        out.append(Estimate(rate, ci, n, int(n_lab[j]), "ppi++ x2", why, details))
    return out
