"""Agreement of two raters on one binary field: Cohen's kappa beside Gwet's AC1, and raw
disagreement. Pure functions: arrays in, numbers out."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from deflectbench.analysis.stats.arrays import pair


def cohen_kappa(a: ArrayLike, b: ArrayLike) -> float:
    """Cohen's kappa for two raters' binary labels of the same items.

    kappa = (po - pe) / (1 - pe), with po the observed agreement and
    pe = pa*pb + (1-pa)*(1-pb) the agreement expected from the raters' own marginals
    (Cohen 1960). Computed on integer counts, so it is exact up to the final division.

    Undefined cases return NaN, as statsmodels' ``cohens_kappa`` does: no items, or both
    raters constant on the same value (po = pe = 1, so 0/0; AC1 is 1 there). One constant
    rater against a varying one gives 0, not NaN.
    """
    return float(chance_corrected(*_counts(a, b))[0])


def gwet_ac1(a: ArrayLike, b: ArrayLike) -> float:
    """Gwet's AC1 for two raters' binary labels of the same items.

    AC1 = (po - pe) / (1 - pe) with pe = 2*pi*(1 - pi), where pi is the mean of the two
    raters' prevalences of 1 (Gwet 2008, eq. for q = 2 categories:
    pe = sum_k pi_k(1 - pi_k) / (q - 1)). Since pe <= 1/2, AC1 is defined for any
    non-empty input and lies in [-1, 1]; it stays high when both judges agree on a rare
    label, which is where kappa collapses (the prevalence paradox). No items -> NaN.
    """
    return float(chance_corrected(*_counts(a, b))[1])


def _counts(a: ArrayLike, b: ArrayLike) -> tuple[int, int, int, int]:
    """The 2x2 table of two raters' binary labels: (both 1, only a, only b, both 0)."""
    x, y = pair(a, b)
    both, na, nb = int((x & y).sum()), int(x.sum()), int(y.sum())
    return both, na - both, nb - both, int(x.size) - na - nb + both


def chance_corrected(
    tp: ArrayLike, fp: ArrayLike, fn: ArrayLike, tn: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Cohen's kappa and Gwet's AC1 of 2x2 tables given by their counts (arrays: one table per
    entry, e.g. one per bootstrap resample; ``tp`` both raters 1, ``fp`` only the first,
    ``fn`` only the second, ``tn`` both 0). The one place both formulas are written:
    :func:`cohen_kappa` and :func:`gwet_ac1` count their inputs and call it.

    With n items, agree = tp + tn, n_a = tp + fp and n_b = tp + fn the raters' 1s:
    kappa = (n*agree - E) / (n^2 - E), E = n_a*n_b + (n-n_a)*(n-n_b) (pe * n^2; NaN when
    E = n^2, i.e. both raters constant on the same value, or n = 0);
    AC1 = (2n*agree - C) / (2n^2 - C), C = s*(2n - s), s = n_a + n_b (NaN when n = 0).
    Integer arithmetic up to the final division, so the result is exact to rounding.
    """
    a, b, c, d = (np.asarray(v, dtype=np.int64) for v in (tp, fp, fn, tn))
    n, agree, na, nb = a + b + c + d, a + d, a + b, a + c
    expected = na * nb + (n - na) * (n - nb)  # pe * n^2
    s = na + nb  # 2 * n * pi
    chance = s * (2 * n - s)  # pe * 2 n^2
    undefined = (n == 0) | (expected == n * n)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = np.where(
            undefined, np.nan, (n * agree - expected) / np.where(undefined, 1, n * n - expected)
        )
        ac1 = np.where(
            n == 0, np.nan, (2 * n * agree - chance) / np.where(n == 0, 1, 2 * n * n - chance)
        )
    return kappa.astype(np.float64), ac1.astype(np.float64)


@dataclass(frozen=True)
class Agreement:
    """Two raters' agreement on one binary field."""

    kappa: float
    ac1: float
    disagreement: float  # fraction of items the raters label differently
    n: int


def agreement(a: ArrayLike, b: ArrayLike) -> Agreement:
    """Kappa, AC1 and raw disagreement together, since the paper reports them side by side.

    Reporting both coefficients shows when a low kappa is only prevalence skew (AC1 high,
    disagreement low). Empty input gives NaNs with n = 0.
    """
    x, y = pair(a, b)
    n = int(x.size)
    dis = float((x != y).mean()) if n else math.nan
    kappa, ac1 = chance_corrected(*_counts(x, y))  # one 2x2 table for both coefficients
    return Agreement(kappa=float(kappa), ac1=float(ac1), disagreement=dis, n=n)
