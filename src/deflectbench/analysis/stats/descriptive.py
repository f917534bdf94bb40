"""Effect size and the small descriptive statistics of the paper: Cohen's h, the spread of
per-claim rates, fallacy density, and how often a cell's samples refused (appendix F)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from deflectbench.analysis.stats.arrays import binary, factorize


def cohens_h(p1: float, p2: float) -> float:
    """Cohen's h between two proportions: 2*asin(sqrt(p1)) - 2*asin(sqrt(p2)).

    The arcsine transform makes a difference near 0 or 1 weigh like a larger one near 0.5,
    which suits framing effects on rates like 0.6% vs 25% (Cohen 1988, ch. 6; conventional
    thresholds 0.2 small, 0.5 medium, 0.8 large). Antisymmetric: h(p1, p2) = -h(p2, p1).
    """
    for name, p in (("p1", p1), ("p2", p2)):
        if not 0.0 <= p <= 1.0:  # also refuses NaN
            raise ValueError(f"{name} must be a proportion in [0, 1], got {p!r}")
    return 2.0 * math.asin(math.sqrt(p1)) - 2.0 * math.asin(math.sqrt(p2))


class ClaimSpread(NamedTuple):
    """The lowest and highest per-claim rate and their gap in percentage points."""

    min: float
    max: float
    spread_pp: float


def claim_spread(rates_by_claim: Mapping[Any, float] | ArrayLike) -> ClaimSpread:
    """Range of per-claim rates, e.g. refusal spanning 19.3% to 30.3% (11 points).

    Rates are fractions in [0, 1]; spread_pp = (max - min) * 100. Accepts a mapping
    claim -> rate or an array; NaN rates (claims with no data) are ignored.
    """
    if isinstance(rates_by_claim, Mapping):
        arr = np.asarray(list(rates_by_claim.values()), dtype=np.float64)
    else:
        arr = np.asarray(rates_by_claim, dtype=np.float64).ravel()
    arr = arr[~np.isnan(arr)]
    if arr.size == 0:
        raise ValueError("no per-claim rates to compare")
    lo, hi = float(arr.min()), float(arr.max())
    return ClaimSpread(min=lo, max=hi, spread_pp=(hi - lo) * 100.0)


def fallacy_density(wa: ArrayLike, ah: ArrayLike, rh: ArrayLike, output_tokens: ArrayLike) -> float:
    """Fallacies per 100 output tokens, averaged over generations.

    mean over generations with output_tokens > 0 of (WA + AH + RH) / output_tokens * 100:
    a per-generation ratio then averaged (not total fallacies over total tokens), so a
    long reply does not outweigh a short one. Generations with no reported tokens are
    left out; if none remain the density is NaN.
    """
    arrs = [np.asarray(x, dtype=np.float64) for x in (wa, ah, rh, output_tokens)]
    if len({a.shape for a in arrs}) != 1 or arrs[0].ndim != 1:
        raise ValueError("wa, ah, rh and output_tokens must be 1-D and of one length")
    w, a, r, tok = arrs
    keep = tok > 0
    if not keep.any():
        return math.nan
    return float(((w[keep] + a[keep] + r[keep]) / tok[keep] * 100.0).mean())


def run_count_distribution(
    refusal: ArrayLike, cell_keys: Any, runs_per_cell: int = 5
) -> dict[str, int]:
    """How many cells refused in 0, 1, ..., runs_per_cell of their samples (appendix F).

    A cell is one model x claim x template; ``cell_keys`` gives each generation's cell
    (1-D labels, a sequence of tuples, or a 2-D array of key columns). Returns
    {"0": cells with no refusal, ..., "5": cells refusing every sample}. A cell with fewer
    than ``runs_per_cell`` samples (failed generations) is counted under the refusals it
    has, so "5" means five refusals out of five valid samples only; count such cells with
    :func:`incomplete_cells`. A cell with more samples than ``runs_per_cell`` means
    duplicated rows and raises ValueError.
    """
    r = binary(refusal, "refusal")
    if runs_per_cell < 1:
        raise ValueError("runs_per_cell must be at least 1")
    per_refused, per_n = _cell_tallies(r, cell_keys)
    if per_n.size and per_n.max() > runs_per_cell:
        raise ValueError(f"a cell has more than {runs_per_cell} samples; rows are duplicated")
    dist = np.bincount(per_refused, minlength=runs_per_cell + 1)
    return {str(i): int(dist[i]) for i in range(runs_per_cell + 1)}


def incomplete_cells(cell_keys: Any, runs_per_cell: int = 5) -> int:
    """Number of cells with fewer than ``runs_per_cell`` samples (see run_count_distribution)."""
    codes, labels = factorize(cell_keys)
    if not labels:
        return 0
    return int((np.bincount(codes, minlength=len(labels)) < runs_per_cell).sum())


def _cell_tallies(r: NDArray[np.int64], cell_keys: Any) -> tuple[NDArray[np.int64], NDArray]:
    if r.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    codes, labels = factorize(cell_keys)
    if codes.size != r.size:
        raise ValueError(f"cell_keys has {codes.size} entries for {r.size} generations")
    g = len(labels)
    refused = np.bincount(codes, weights=r, minlength=g).astype(np.int64)
    return refused, np.bincount(codes, minlength=g)
