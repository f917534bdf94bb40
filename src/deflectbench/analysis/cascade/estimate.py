"""The expensive judges' consensus rate from a cascade: PPI++ with the cheap judge as the prediction.

A cheap judge scored every answer (f); the expensive judges scored a seeded sample of them, and
their consensus (y) is the estimand. Per group (a model, or a model x framing cell) the
estimate is :func:`deflectbench.analysis.calibration.estimate_rates`' ``ppi++`` with the
cheap verdicts of the group's answers as the target and the sampled answers as the labelled
set (y in place of a person's label): theta = lam mean_N(f) + mean_n(y - lam f), lam fitted
as ``ppi_py`` fits it, the interval a claim-block bootstrap (claims drawn with replacement,
each bringing all its answers, sampled or not; lam re-fitted in every replicate). No second
PPI: the same moment sums and the same thin-label honesty (a sample that never saw the cheap
judge err is flagged and widened to the exact bound).

A stratified sample (shares per model x framing under a per-model estimate) weighs each sampled
answer by N_h / n_h, its stratum's answers over its stratum's sampled answers (Poisson sampling
post-stratified; Hajek means, as ``ppi_py`` weighs), so a stratum seen at a larger share does
not count more; a sample stratified no finer than the groups has equal weights and is plain
PPI++ (equal to ``ppi_py``). Beside it: the cheap judge's own rate (``judged``, every answer)
and the expensive judges' rate on the sample alone (``labels``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from deflectbench.analysis.calibration.estimate import Estimate, estimate_rates

__all__ = ["METHODS", "GroupEstimate", "cascade_rates", "stratum_weights"]

#: The cheap judge's rate on every answer, the expensive judges' on the sample alone, PPI++.
METHODS = ("judged", "labels", "ppi++")


@dataclass(frozen=True)
class GroupEstimate:
    """One group's cascade: its answers, the sampled ones, those with the expensive judges'
    consensus, and per method one :class:`Estimate` per measure (column)."""

    group: tuple[str, ...]
    answers: int
    sampled: int
    labelled: int
    estimates: dict[str, list[Estimate]]
    notes: tuple[str, ...] = field(default=())


def stratum_weights(
    strata: NDArray[np.object_], labelled: NDArray[np.bool_]
) -> NDArray[np.float64]:
    """N_h / n_h for each labelled answer (h its stratum)."""
    names, codes = np.unique(strata.astype(str), return_inverse=True)
    big = np.bincount(codes, minlength=names.size).astype(np.float64)
    small = np.bincount(codes[labelled], minlength=names.size).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (big / small)[codes[labelled]]


def cascade_rates(
    cheap: ArrayLike,
    claims: ArrayLike,
    groups: Sequence[tuple[str, ...]],
    strata: Sequence[str],
    sampled: ArrayLike,
    expensive: ArrayLike,
    *,
    resamples: int = 1000,
    seed: int = 0,
    min_labels: int = 10,
) -> list[GroupEstimate]:
    """Per group (in sorted order) the cascade's estimates (module docstring).

    ``cheap`` (N, K): the cheap judge's indicators of every answer (NaN: missing);
    ``claims`` (N,) each answer's claim; ``groups`` (N,) its group; ``strata`` (N,) its
    sampling stratum; ``sampled`` (N,) whether it is in the expensive judges' sample;
    ``expensive`` (N, K): the expensive judges' consensus (NaN where they have none).
    """
    f = np.asarray(cheap, dtype=np.float64)
    y = np.asarray(expensive, dtype=np.float64)
    if f.ndim == 1:
        f, y = f[:, None], y[:, None]
    s = np.asarray(sampled, dtype=bool)
    h = np.asarray(list(strata), dtype=object)
    g = list(groups)
    if not (f.shape == y.shape and len(g) == len(h) == s.size == f.shape[0]):
        raise ValueError("cheap, expensive, groups, strata and sampled must have one row each")
    _, claim_codes = np.unique(np.asarray(claims).astype(str), return_inverse=True)
    has_y = s & ~np.isnan(y).all(axis=1)
    out = []
    for key in sorted(set(g)):
        rows = np.array([x == key for x in g], dtype=bool)
        lab = rows & has_y
        notes: list[str] = []
        missing = int((rows & s & ~has_y).sum())
        if missing:
            notes.append(
                f"{missing} sampled answers have no verdict of every expensive judge yet: "
                "the estimate rests on the others (judge them to keep the sample whole)"
            )
        weights = stratum_weights(h[rows], lab[rows])
        empty = sorted(set(h[rows & ~lab].astype(str)) - set(h[lab].astype(str)))
        if empty:
            notes.append(
                f"{len(empty)} strata (e.g. {empty[0]!r}) have no expensive verdict: their "
                "answers are corrected by the other strata's"
            )
        est = estimate_rates(
            f[rows],
            claim_codes[rows],
            f[lab],
            y[lab],
            claim_codes[lab],
            weights,
            methods=METHODS,
            resamples=resamples,
            seed=seed,
            min_labels=min_labels,
        )
        out.append(
            GroupEstimate(
                tuple(key),
                int(rows.sum()),
                int((rows & s).sum()),
                int(lab.sum()),
                est,
                tuple(notes),
            )
        )
    return out
