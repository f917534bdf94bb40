"""Label budget: how many more labels bring a corrected CI's half-width under a target.

As ``ppi_py``'s power analysis (``ppi_mean_power``), from the labelled items measured so far:
the variance sigma_h^2 of a label, sigma_f^2 of the judged value and their covariance c
(their correlation rho is ``ppi_py``'s PPI correlation). PPI++ with n labels has variance

    se^2(n) = lam^2 A + deff (sigma_h^2 - 2 lam c + lam^2 sigma_f^2) / n,

A the variance of the judged mean over the target generations and deff the clustering of the
labels; with the best lam, se^2(n) = deff sigma_h^2 / n - (deff c / n)^2 / (A + deff sigma_f^2 / n).
For independent items A = sigma_f^2 / M (M target generations) and deff = 1, which is
``ppi_py``'s effective sample size n_eff = n (n + M) / (n + (1 - rho^2) M) (Broska, Howes and
van Loon 2024). Claim clustering enters where it is: A is best the judged estimate's own
claim-bootstrap variance (``judged_variance``); the labels, a few per claim, are nearly
independent (``design_effect`` 1, raise it if labels crowd into few claims). The budget is the
smallest n with z se(n) <= target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DEFAULT_TARGET",
    "LabelNeed",
    "LabelPower",
    "budget_without_labels",
    "label_needs",
    "label_power",
    "labels_for_effective_n",
    "labels_needed",
]

#: The half-width (a fraction) every headline rate's corrected CI should get under.
DEFAULT_TARGET = 0.03


@dataclass(frozen=True)
class LabelNeed:
    """Without labels: the labels a corrected CI within the target would need (labels alone),
    and the rate that needs the most."""

    labels: int
    widest: str | None
    target_half_width: float

    def to_json(self) -> dict[str, Any]:
        return {
            "labels": self.labels,
            "widest": self.widest,
            "target_half_width": self.target_half_width,
        }


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
    ww = None if w is None else np.asarray(w, dtype=np.float64)
    if ww is not None and (ww.shape != yy.shape or not (ww > 0).all()):
        raise ValueError("w must hold one positive weight per label")
    var_g, var_gh, cov, _ = _label_moments(yy, ff, ww)
    if var_g <= 1e-15:
        p = (float(yy.sum()) + 0.5) / (n + 1.0)
        return LabelPower(p * (1.0 - p), 0.0, n)
    rho = cov / math.sqrt(var_g * var_gh) if var_gh > 1e-15 else 0.0
    return LabelPower(var_g, min(rho, 1.0 - 1.0 / n), n)


def labels_for_effective_n(n0: float, ppi_corr: float, n_target: int) -> float | None:
    """``ppi_py``'s relation solved for n, the labelled items counted among the ``n_target``
    generations (N = n_target - n judged only): the labels whose PPI++ estimate is worth ``n0``
    classical labels, n_eff = n M / (n + (1 - rho^2)(M - n)) = n0; None if even labelling
    every generation is not enough (n0 > M)."""
    if n0 <= 0:
        return 0.0
    if n0 > n_target:
        return None
    rho_sq = ppi_corr**2
    return n0 * (1.0 - rho_sq) * n_target / (n_target - n0 * rho_sq)


def _label_moments(y, yhat, w) -> tuple[float, float, float, int]:
    """sigma_h^2, sigma_f^2 and c as ``ppi_py`` measures them (weights normalised to mean 1)."""
    yy, ff = np.asarray(y, dtype=np.float64), np.asarray(yhat, dtype=np.float64)
    n = yy.size
    ww = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    ww = ww / ww.sum() * n
    point = float(np.sum(ww * yy) / np.sum(ww))
    g, gh = ww * (yy - point), ww * (ff - point)
    gc, ghc = g - g.mean(), gh - gh.mean()
    return float(gc @ gc / n), float(ghc @ ghc / n), float(gc @ ghc / n), n


def labels_needed(
    y: ArrayLike,
    yhat: ArrayLike,
    n_target: int,
    *,
    target: float = 0.03,
    w: ArrayLike | None = None,
    level: float = 0.95,
    judged_variance: float | None = None,
    design_effect: float = 1.0,
) -> int | None:
    """More labels (beyond the ``len(y)`` so far) for a PPI++ half-width <= ``target``.

    ``y``/``yhat`` are the labelled items' human labels and judged values, ``n_target`` the
    target generations the rate is about (at most that many can be labelled).
    ``judged_variance`` is the variance of the judged rate over them, e.g.
    ((hi - lo) / (2 * 1.96))^2 of its claim-bootstrap CI; None takes the items as independent.
    0 when the labels already suffice; None when even labelling all ``n_target`` generations
    would not reach the target.
    """
    if not 0.0 < target < 1.0:
        raise ValueError("target must be a half-width strictly between 0 and 1")
    if not 0.0 < level < 1.0:
        raise ValueError("level must lie strictly between 0 and 1")
    if not design_effect > 0:
        raise ValueError("design_effect must be positive")
    if judged_variance is not None and not judged_variance >= 0:
        raise ValueError("judged_variance must not be negative")
    power = label_power(y, yhat, w)
    if n_target < power.n:
        raise ValueError(f"n_target ({n_target}) is smaller than the labels ({power.n})")
    var_h, var_f, cov, n_now = _label_moments(y, yhat, w)
    if var_h <= 1e-15:  # labels of one value: the cautious variance of label_power, no credit
        var_h, cov = power.sigma_sq, 0.0
    a = var_f / n_target if judged_variance is None else float(judged_variance)
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    limit = (target / z) ** 2

    def se_sq(n: int) -> float:
        u = design_effect / n
        shared = a + u * var_f
        return u * var_h - ((u * cov) ** 2 / shared if shared > 0 else 0.0)

    if se_sq(n_target) > limit * (1 + 1e-12):
        return None
    lo, hi = 1, n_target  # smallest n with se_sq(n) <= limit (se_sq falls as n grows)
    while lo < hi:
        mid = (lo + hi) // 2
        if se_sq(mid) <= limit * (1 + 1e-12):
            hi = mid
        else:
            lo = mid + 1
    return max(0, lo - n_now)


def budget_without_labels(
    rates: pd.DataFrame, target: float = DEFAULT_TARGET
) -> dict[str, dict[str, Any]]:
    """:func:`label_needs` as JSON data (per model: labels, widest, target_half_width)."""
    return {m: need.to_json() for m, need in label_needs(rates, target).items()}


def label_needs(rates: pd.DataFrame, target: float = DEFAULT_TARGET) -> dict[str, LabelNeed]:
    """Per model, the labels a corrected CI within ``target`` would need when none exist yet:
    labels alone (no credit for the judges, which is all that can be promised before any
    label), at the judged rate, with the claim clustering of the judged CI. ``rates`` is the
    analysis' ``rates_with_ci`` (model, kind, measure, rate, ci_lo, ci_hi, n)."""
    out: dict[str, LabelNeed] = {}
    z = 1.959964
    for r in rates[rates["kind"] == "outcome"].to_dict(orient="records"):
        p, n = r.get("rate"), int(r.get("n") or 0)
        if p is None or not np.isfinite(p) or n < 2:
            continue
        half = (r["ci_hi"] - r["ci_lo"]) / 2 if np.isfinite(r["ci_hi"] - r["ci_lo"]) else 0.0
        q = min(max(float(p), 0.01), 0.99)
        deff = max(1.0, (half / z) ** 2 / (q * (1 - q) / n)) if half > 0 else 1.0
        n0 = z * z * q * (1 - q) * deff / target**2
        need = labels_for_effective_n(n0, 0.0, n)
        model = str(r["model"])
        mine = out.get(model) or LabelNeed(0, None, target)
        labels = n if need is None else math.ceil(need)
        if labels > mine.labels:
            mine = LabelNeed(labels, r["measure"], target)
        out[model] = mine
    return out
