"""Label budget: how many more labels bring a corrected CI's half-width under a target.

As ``ppi_py``'s power analysis (``ppi_mean_power``): from the labelled items, the variance
sigma^2 of a label and the PPI correlation rho between label and judged value; PPI++ with n
labels among M target generations is then worth n_eff = n M / (n + (1 - rho^2)(M - n))
classical labels (Broska, Howes and van Loon 2024), and its half-width is
z sigma sqrt(deff / n_eff). ``design_effect`` (deff) carries the claim clustering: the ratio of
the claim-bootstrap variance to the independent-items variance measured so far (1 = items
independent). Solving n_eff >= n0 = (z sigma)^2 deff / target^2 for n gives
n >= n0 (1 - rho^2) M / (M - n0 rho^2).
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["LabelPower", "label_power", "labels_for_effective_n", "labels_needed"]


class LabelPower(NamedTuple):
    """What the labels measured so far say: label variance, PPI correlation, label count."""

    sigma_sq: float
    ppi_corr: float
    n: int


def label_power(y: ArrayLike, yhat: ArrayLike, w: ArrayLike | None = None) -> LabelPower:
    """sigma^2 and rho from the labelled items, computed as ``ppi_py`` does (weights normalised
    to mean 1, moments with 1/n, rho capped at 1 - 1/n).

    Labels all of one value show no variance; rather than promise that no more labels are
    needed, sigma^2 is then taken from the add-one-half rate (k + 1/2) / (n + 1) and rho = 0
    (the judge earns no credit it has not shown).
    """
    yy, ff = np.asarray(y, dtype=np.float64), np.asarray(yhat, dtype=np.float64)
    if yy.ndim != 1 or yy.shape != ff.shape:
        raise ValueError("y and yhat must be 1-D and of one length")
    if np.isnan(yy).any() or np.isnan(ff).any():
        raise ValueError("y and yhat must not contain NaN")
    n = yy.size
    if n < 2:
        raise ValueError(f"{n} labels: at least 2 are needed to measure a variance")
    ww = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    if ww.shape != yy.shape or not (ww > 0).all():
        raise ValueError("w must hold one positive weight per label")
    ww = ww / ww.sum() * n
    point = float(np.sum(ww * yy) / np.sum(ww))
    g, gh = ww * (yy - point), ww * (ff - point)
    gc, ghc = g - g.mean(), gh - gh.mean()
    var_g, var_gh, cov = float(gc @ gc / n), float(ghc @ ghc / n), float(gc @ ghc / n)
    if var_g <= 1e-15:
        p = (float(yy.sum()) + 0.5) / (n + 1.0)
        return LabelPower(p * (1.0 - p), 0.0, n)
    rho = cov / math.sqrt(var_g * var_gh) if var_gh > 1e-15 else 0.0
    return LabelPower(var_g, min(rho, 1.0 - 1.0 / n), n)


def labels_for_effective_n(n0: float, ppi_corr: float, n_target: int) -> float | None:
    """The labels n (out of ``n_target`` generations) whose PPI++ estimate is worth ``n0``
    classical labels; None if even labelling every generation is not enough."""
    if n0 <= 0:
        return 0.0
    if n0 > n_target:
        return None
    rho_sq = ppi_corr**2
    return n0 * (1.0 - rho_sq) * n_target / (n_target - n0 * rho_sq)


def labels_needed(
    y: ArrayLike,
    yhat: ArrayLike,
    n_target: int,
    *,
    target: float = 0.03,
    w: ArrayLike | None = None,
    level: float = 0.95,
    design_effect: float = 1.0,
) -> int | None:
    """More labels (beyond the ``len(y)`` so far) for a PPI++ half-width <= ``target``.

    ``y``/``yhat`` are the labelled items' human labels and judged values, ``n_target`` the
    target generations the rate is about. 0 when the labels already suffice; None when even
    labelling all ``n_target`` generations would not reach the target.
    """
    if not 0.0 < target < 1.0:
        raise ValueError("target must be a half-width strictly between 0 and 1")
    if not 0.0 < level < 1.0:
        raise ValueError("level must lie strictly between 0 and 1")
    if not design_effect > 0:
        raise ValueError("design_effect must be positive")
    power = label_power(y, yhat, w)
    if n_target < power.n:
        raise ValueError(f"n_target ({n_target}) is smaller than the labels ({power.n})")
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    n0 = (z * z) * power.sigma_sq * design_effect / (target * target)
    n = labels_for_effective_n(n0, power.ppi_corr, n_target)
    if n is None:
        return None
    return max(0, math.ceil(n - 1e-9) - power.n)
