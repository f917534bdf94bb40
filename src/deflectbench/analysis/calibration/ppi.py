"""PPI++ for a mean (Angelopoulos, Duchi and Zrnic 2023): judged on all, rectified on the labelled.

The estimate is theta = lam * mean_N(f) + mean_n(h - lam * f): the judged mean over every
target item, corrected by the labelled items' mean disagreement between humans and judges.
lam (power tuning) is fitted as ``ppi_py`` fits it for the mean: from the PPI (lam = 1) estimate
theta1, the labelled gradients g = w(h - theta1), g_hat = w(f - theta1) and the target ones
w(f - theta1), lam = 2 cov(g, g_hat) / (2 (1 + n/N) var(g_hat over both sets)), clipped to
[0, 1]. Weights are normalised to mean 1 within each set, as ``ppi_py`` does, so the means are
Hajek (weighted) means and an inverse-inclusion-probability weight makes them unbiased for a
stratified sample.

Everything is written on moment sums (:mod:`.moments`), so the same formulas give the point
estimate and, with claim multiplicities, every claim-block bootstrap replicate (lam re-fitted
in each). The normal interval (``ppi_mean_ci``) is for independent items only; the package's
intervals come from the claim bootstrap.
"""

from __future__ import annotations

from statistics import NormalDist
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from deflectbench.analysis.calibration.moments import Moments, labelled_terms, target_terms, total


def ppi_mean_moments(
    lab: Moments, unl: Moments, lam: float | NDArray[np.float64] | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(theta, lam) from labelled and target moment sums of any matching shape.

    ``lam=None`` fits lam as PPI++ does; a constant judged indicator (no variance) gives lam = 0,
    the labels-only mean. Undefined sums (no labels, no targets) give NaN.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        n, s, N, t = lab["n"], lab["w"], unl["n"], unl["v"]
        mean_unl = unl["vf"] / t
        if lam is None:
            theta1 = mean_unl + (lab["wh"] - lab["wf"]) / s
            r, q = n / s, N / t
            sum_g = r * (lab["wh"] - theta1 * s)
            sum_gh = r * (lab["wf"] - theta1 * s)
            sum_ggh = (
                r * r * (lab["w2hf"] - theta1 * (lab["w2h"] + lab["w2f"]) + theta1**2 * lab["w2"])
            )
            sum_gh2 = r * r * (lab["w2ff"] - 2 * theta1 * lab["w2f"] + theta1**2 * lab["w2"])
            sum_u = q * (unl["vf"] - theta1 * t)
            sum_u2 = q * q * (unl["v2ff"] - 2 * theta1 * unl["v2f"] + theta1**2 * unl["v2"])
            cov = 2.0 * (sum_ggh / n - (sum_g / n) * (sum_gh / n))
            both = n + N
            var = (sum_gh2 + sum_u2 - (sum_gh + sum_u) ** 2 / both) / (both - 1)
            fitted = cov / (2.0 * (1.0 + n / N) * var)
            flat = np.isfinite(theta1) & ~(var > 1e-15)  # judged indicator constant
            lam_arr = np.where(flat, 0.0, np.clip(fitted, 0.0, 1.0))
        else:
            lam_arr = np.broadcast_to(np.asarray(lam, dtype=np.float64), np.shape(n))
        theta = lam_arr * mean_unl + (lab["wh"] - lam_arr * lab["wf"]) / s
    return np.asarray(theta, dtype=np.float64), np.asarray(lam_arr, dtype=np.float64)


def ppi_mean_se(lab: Moments, unl: Moments, lam: NDArray[np.float64]) -> NDArray[np.float64]:
    """The normal standard error of theta for independent items, as ``ppi_py`` computes it:
    sqrt(std(nu lam f)^2 / N + std(omega (h - lam f))^2 / n), std with ddof 0 and nu, omega
    the weights normalised to mean 1."""
    with np.errstate(invalid="ignore", divide="ignore"):
        n, s, N, t = lab["n"], lab["w"], unl["n"], unl["v"]
        q, r = N / t, n / s
        var_unl = lam**2 * (q * q * unl["v2ff"] / N - (unl["vf"] / t) ** 2)
        sq = r * r * (lab["w2hh"] - 2 * lam * lab["w2hf"] + lam**2 * lab["w2ff"]) / n
        var_rect = sq - ((lab["wh"] - lam * lab["wf"]) / s) ** 2
        return np.sqrt(np.maximum(var_unl, 0.0) / N + np.maximum(var_rect, 0.0) / n)


class PPIMean(NamedTuple):
    """A PPI++ mean of independent items: estimate, fitted lam and normal 1 - alpha interval."""

    estimate: float
    lam: float
    lo: float
    hi: float


def _item_moments(
    y: ArrayLike,
    yhat: ArrayLike,
    yhat_unlabeled: ArrayLike,
    w: ArrayLike | None,
    w_unlabeled: ArrayLike | None,
) -> tuple[Moments, Moments]:
    arrs = [np.asarray(a, dtype=np.float64) for a in (y, yhat, yhat_unlabeled)]
    if any(a.ndim != 1 for a in arrs):
        raise ValueError("y, yhat and yhat_unlabeled must be 1-D")
    yy, ff, fu = arrs
    if yy.shape != ff.shape:
        raise ValueError(f"y has {yy.size} items but yhat {ff.size}")
    if any(np.isnan(a).any() for a in arrs):
        raise ValueError("y, yhat and yhat_unlabeled must not contain NaN")
    wl = np.ones(yy.size) if w is None else np.asarray(w, dtype=np.float64)
    wu = np.ones(fu.size) if w_unlabeled is None else np.asarray(w_unlabeled, dtype=np.float64)
    if wl.shape != yy.shape or wu.shape != fu.shape:
        raise ValueError("a weight vector does not match its items")
    lab = total(labelled_terms(yy[:, None], ff[:, None], wl))
    unl = total(target_terms(fu[:, None], wu))
    return lab, unl


def ppi_mean(
    y: ArrayLike,
    yhat: ArrayLike,
    yhat_unlabeled: ArrayLike,
    *,
    alpha: float = 0.05,
    lam: float | None = None,
    w: ArrayLike | None = None,
    w_unlabeled: ArrayLike | None = None,
) -> PPIMean:
    """PPI++ mean of independent items with its normal CI (``ppi_py.ppi_mean_ci``'s interval).

    ``y``/``yhat`` are the labelled items' human labels and judged values, ``yhat_unlabeled``
    the judged values of the target items; ``w``/``w_unlabeled`` optional item weights.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must lie strictly between 0 and 1")
    lab, unl = _item_moments(y, yhat, yhat_unlabeled, w, w_unlabeled)
    theta, lam_fit = ppi_mean_moments(lab, unl, lam)
    se = ppi_mean_se(lab, unl, lam_fit)
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
    est = float(theta[0])
    return PPIMean(est, float(lam_fit[0]), est - z * float(se[0]), est + z * float(se[0]))
