"""Hypothesis tests: chi-square of independence and TOST equivalence of two proportions
(unpooled, and claim-clustered). Pure functions: arrays in, numbers out."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from deflectbench.analysis.stats.arrays import factorize

# scipy.special's ndtr, ndtri and chdtrc, ported to pure Python bit for bit: importing scipy
# would cost every command 0.18 s
from deflectbench.analysis.stats.special import chdtrc, ndtr, ndtri

# --------------------------------------------------------------------------- chi-square


@dataclass(frozen=True)
class Chi2Result:
    """Pearson's chi-square test of independence, with Cramér's V as its effect size."""

    statistic: float
    dof: int
    p_value: float
    n: int
    cramers_v: float


def chi2_independence(table: ArrayLike) -> Chi2Result:
    """Pearson chi-square test that outcome is independent of model, on a count table.

    X2 = sum (O - E)^2 / E with E_ij = row_i * col_j / n, dof = (r-1)(c-1), p from the
    chi-square survival function; no Yates continuity correction (scipy's
    ``chi2_contingency`` applies one by default when dof = 1; here it never does).
    All-zero rows and columns are dropped first: an outcome no model produced has E = 0
    and says nothing about dependence. If fewer than two rows or columns remain there is
    nothing to test and the result is statistic 0, dof 0, p 1 (as scipy gives), V NaN.
    Cramér's V = sqrt(X2 / (n * (min(r, c) - 1))) is reported because with ~24,000
    generations any difference is "significant".
    """
    t = np.asarray(table, dtype=np.float64)
    if t.ndim != 2:
        raise ValueError(f"table must be 2-D, got shape {t.shape}")
    if not np.isfinite(t).all() or (t < 0).any():
        raise ValueError("table must hold finite non-negative counts")
    t = t[t.sum(axis=1) > 0][:, t.sum(axis=0) > 0]
    n = float(t.sum())
    r, c = t.shape
    if r < 2 or c < 2:
        return Chi2Result(statistic=0.0, dof=0, p_value=1.0, n=round(n), cramers_v=math.nan)
    expected = np.outer(t.sum(axis=1), t.sum(axis=0)) / n
    stat = float(((t - expected) ** 2 / expected).sum())
    dof = (r - 1) * (c - 1)
    p = chdtrc(dof, stat)  # scipy.stats.chi2.sf, bit for bit, without importing scipy
    v = math.sqrt(stat / (n * (min(r, c) - 1)))
    return Chi2Result(statistic=stat, dof=dof, p_value=p, n=round(n), cramers_v=v)


# --------------------------------------------------------------------------- TOST


@dataclass(frozen=True)
class TostResult:
    """Two one-sided tests (TOST) for |p1 - p2| < margin."""

    diff: float  # p1 - p2
    p_value: float  # max of the two one-sided p-values
    equivalent: bool  # p_value < alpha
    ci90: tuple[float, float]  # the (1 - 2*alpha) Wald interval: 90% at alpha = 0.05
    se: float  # standard error of diff used by both one-sided tests


def _tost(diff: float, se: float, margin: float, alpha: float) -> TostResult:
    """TOST from a difference and its SE, with normal (z) reference distribution."""
    if se > 0:
        p_lower = ndtr(-(diff + margin) / se)  # H0: diff <= -margin (norm.sf)
        p_upper = ndtr((diff - margin) / se)  # H0: diff >= +margin (norm.cdf)
    else:  # no sampling variability (e.g. 0% vs 0%): decide on the point estimate
        p_lower = 0.0 if diff > -margin else 1.0
        p_upper = 0.0 if diff < margin else 1.0
    p = max(p_lower, p_upper)
    z = ndtri(1.0 - alpha)  # norm.ppf
    return TostResult(
        diff=diff,
        p_value=p,
        equivalent=bool(p < alpha),
        ci90=(diff - z * se, diff + z * se),
        se=se,
    )


def _check_tost_args(margin: float, alpha: float) -> None:
    if not margin > 0:
        raise ValueError("margin must be positive")
    if not 0.0 < alpha < 0.5:
        raise ValueError("alpha must lie strictly between 0 and 0.5")


def tost_two_proportions(
    x1: int,
    n1: int,
    x2: int,
    n2: int,
    margin: float = 0.05,
    alpha: float = 0.05,
    method: str = "wald",
) -> TostResult:
    """TOST equivalence of two independent proportions within +-margin (Wald, unpooled SE).

    Method: diff = x1/n1 - x2/n2, se = sqrt(p1(1-p1)/n1 + p2(1-p2)/n2). Test
    H0: diff <= -margin with z = (diff + margin)/se (p = 1 - Phi(z)) and H0: diff >= margin
    with z = (diff - margin)/se (p = Phi(z)); the TOST p-value is the larger of the two and
    the proportions are declared equivalent when it is below alpha, which is the same as
    the (1 - 2*alpha) Wald interval lying strictly inside (-margin, margin) (Schuirmann
    1987). Equals statsmodels' ``tost_proportions_2indep(..., method="wald",
    compare="diff")`` (whose default method, Agresti-Caffo, differs).

    ``method="agresti-caffo"`` adds one success and one failure to each group before the same
    Wald computation (Agresti & Caffo 2000; statsmodels' default), which keeps the test honest
    when a rate is 0 or 1 and samples are small: the plain Wald SE is then 0 and any
    difference inside the margin would be "equivalent" with p = 0. ``diff`` is always the raw
    difference x1/n1 - x2/n2; the p-value and interval come from the method's statistic.

    This treats every generation as independent. Generations of one claim are correlated,
    so this SE is too small when rates vary by claim; see
    :func:`tost_two_proportions_clustered` for the claim-robust alternative. If se = 0
    (Wald with both rates 0 or both 1) the decision rests on the point estimate alone.
    """
    _check_tost_args(margin, alpha)
    for x, n, name in ((x1, n1, "1"), (x2, n2, "2")):
        if n <= 0 or not 0 <= x <= n:
            raise ValueError(f"need 0 <= x{name} <= n{name} and n{name} > 0")
    raw = x1 / n1 - x2 / n2
    if method == "agresti-caffo":
        x1, n1, x2, n2 = x1 + 1, n1 + 2, x2 + 1, n2 + 2
    elif method != "wald":
        raise ValueError(f"unknown method {method!r}; valid: wald, agresti-caffo")
    p1, p2 = x1 / n1, x2 / n2
    se = math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    result = _tost(p1 - p2, se, margin, alpha)
    return dataclasses.replace(result, diff=raw) if method != "wald" else result


def _clustered_rate(values: ArrayLike, clusters: Any) -> tuple[float, float, list[Hashable]]:
    """A group's rate (mean over rows) and its cluster-robust variance."""
    y = np.asarray(values, dtype=np.float64)
    if y.ndim != 1 or y.size == 0 or not np.isfinite(y).all():
        raise ValueError("values must be a non-empty 1-D array of finite numbers")
    codes, labels = factorize(clusters)
    if codes.size != y.size:
        raise ValueError(f"clusters has {codes.size} entries for {y.size} values")
    g = len(labels)
    if g < 2:
        raise ValueError("a cluster-robust SE needs at least two clusters per group")
    sums = np.bincount(codes, weights=y, minlength=g)
    sizes = np.bincount(codes, minlength=g).astype(np.float64)
    n = float(sizes.sum())
    rate = float(sums.sum() / n)
    resid = sums - rate * sizes
    var = g / (g - 1) * float(resid @ resid) / (n * n)
    return rate, var, labels


def tost_two_proportions_clustered(
    values_a: ArrayLike,
    clusters_a: Any,
    values_b: ArrayLike,
    clusters_b: Any,
    margin: float = 0.05,
    alpha: float = 0.05,
) -> TostResult:
    """TOST as :func:`tost_two_proportions`, but with a cluster-robust (between-claim) SE.

    Each group's rate p = sum(y)/n is a ratio over its claims; its linearised (sandwich)
    variance is G/(G-1) * sum_c (Y_c - p*N_c)^2 / n^2, with Y_c, N_c a claim's sum and row
    count and G the group's number of claims (the CR1 correction, which for a mean is what
    statsmodels' OLS with ``cov_type="cluster"`` gives). se = sqrt(var_a + var_b), which
    assumes the groups are independent: their claims must be disjoint (true for controversy
    levels, whose claims differ), else ValueError. Same z-based TOST and interval as the
    simple version. With 20 claims per level this SE reflects claim-to-claim spread, which
    the row-level Wald SE ignores.
    """
    _check_tost_args(margin, alpha)
    pa, va, la = _clustered_rate(values_a, clusters_a)
    pb, vb, lb = _clustered_rate(values_b, clusters_b)
    if set(la) & set(lb):
        raise ValueError("the two groups share clusters; they are not independent samples")
    return _tost(pa - pb, math.sqrt(va + vb), margin, alpha)
