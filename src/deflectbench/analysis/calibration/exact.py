"""Exact and score intervals for a proportion, so a count of 0 (or of n) still has a width.

A percentile bootstrap over labels that never disagree, or never vary, gives the interval
[0, 0]: a certainty that n labels do not hold. Here are the two intervals this package puts
beside it:

- :func:`clopper_pearson`: the exact (Clopper and Pearson 1934) interval, from beta quantiles
  (lower Beta(x, n - x + 1) at alpha/2, upper Beta(x + 1, n - x) at 1 - alpha/2); for 0 of n
  the upper end is 1 - (alpha/2)^(1/n), about 3.7/n at 95% (the rule of three's two-sided
  sibling). ``x`` and ``n`` may be non-integer: a weighted sample enters with its Kish
  effective size (Korn and Graubard 1998), see :func:`effective`.
- :func:`wilson`: the score interval (Wilson 1927), for the judges' sensitivity and
  specificity, where 0 of 120 then reads [0, 3.1%] instead of [0, 0].

Both stay inside [0, 1] by construction.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["clopper_pearson", "effective", "unseen_bound", "wilson"]


def clopper_pearson(
    x: ArrayLike, n: ArrayLike, level: float = 0.95
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The exact two-sided ``level`` interval of x successes in n trials (arrays broadcast;
    NaN where n <= 0)."""
    from scipy.special import betaincinv  # here: scipy costs every command 0.2 s to import

    xs = np.asarray(x, dtype=np.float64)
    ns = np.asarray(n, dtype=np.float64)
    tail = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        xs = np.clip(xs, 0.0, np.maximum(ns, 0.0))
        lo = np.where(xs > 0, betaincinv(np.maximum(xs, 1e-300), ns - xs + 1.0, tail), 0.0)
        hi = np.where(xs < ns, betaincinv(xs + 1.0, np.maximum(ns - xs, 1e-300), 1.0 - tail), 1.0)
    bad = ~(ns > 0)
    return np.where(bad, np.nan, lo), np.where(bad, np.nan, hi)


def unseen_bound(n: ArrayLike, level: float = 0.95) -> NDArray[np.float64]:
    """The exact upper bound on a rate seen 0 times in n: 1 - ((1 - level)/2)^(1/n)."""
    return clopper_pearson(0.0, n, level)[1]


def wilson(
    x: ArrayLike, n: ArrayLike, level: float = 0.95
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The Wilson score interval of x successes in n trials (NaN where n <= 0)."""
    xs = np.asarray(x, dtype=np.float64)
    ns = np.asarray(n, dtype=np.float64)
    z = NormalDist().inv_cdf(1.0 - (1.0 - level) / 2.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = xs / ns
        centre = (p + z * z / (2 * ns)) / (1 + z * z / ns)
        half = z / (1 + z * z / ns) * np.sqrt(p * (1 - p) / ns + z * z / (4 * ns * ns))
        lo, hi = np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)
    bad = ~(ns > 0)
    return np.where(bad, np.nan, lo), np.where(bad, np.nan, hi)


def effective(
    weighted_hits: ArrayLike, weight_sum: ArrayLike, weight_sq_sum: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(x_eff, n_eff): a weighted count as a binomial one of the same proportion and the Kish
    effective size n_eff = (sum w)^2 / sum w^2 (equal weights: the plain count and n)."""
    s = np.asarray(weight_sum, dtype=np.float64)
    s2 = np.asarray(weight_sq_sum, dtype=np.float64)
    hits = np.asarray(weighted_hits, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        n_eff = np.where(s2 > 0, s * s / np.where(s2 > 0, s2, 1.0), 0.0)
        x_eff = np.where(s > 0, hits / np.where(s > 0, s, 1.0) * n_eff, 0.0)
    return x_eff, n_eff
