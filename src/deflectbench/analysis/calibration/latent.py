"""Dawid-Skene for one binary field: prevalence and each judge's confusion without labels.

A latent-class model (Dawid and Skene 1979): each item has an unseen true value z (1 with
probability pi); judge j says 1 with probability sens_j when z = 1 and 1 - spec_j when z = 0,
judges independent given z. EM alternates the posterior P(z_i = 1 | verdicts) (E-step) and
the weighted rates pi, sens_j, spec_j (M-step). Items need not have every verdict (NaN =
missing); a human label, where present, fixes the item's posterior at the label (an anchor),
so a few labels pin the classes and break the label-switching symmetry. It is a sensitivity
analysis beside PPI++: it assumes the judges err independently given the truth, which two
LLM judges often do not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["DawidSkene", "dawid_skene"]

_EPS = 1e-6  # rates are kept inside [EPS, 1 - EPS] so no log is of zero


@dataclass(frozen=True)
class DawidSkene:
    """The fitted model: prevalence, per-judge sensitivity and specificity, item posteriors."""

    prevalence: float
    sensitivity: NDArray[np.float64]  # (J,)
    specificity: NDArray[np.float64]  # (J,)
    posterior: NDArray[np.float64]  # (I,) P(z_i = 1)
    iterations: int
    converged: bool


def _m_step(
    x: NDArray[np.float64], seen: NDArray[np.bool_], t: NDArray[np.float64]
) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
    """pi, sens_j, spec_j from the posteriors t (each judge over the items it judged)."""
    tt = t[:, None] * seen
    ff = (1.0 - t)[:, None] * seen
    xs = np.where(seen, x, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        sens = (tt * xs).sum(0) / tt.sum(0)
        spec = (ff * (1.0 - xs) * seen).sum(0) / ff.sum(0)
    sens = np.clip(np.nan_to_num(sens, nan=0.5), _EPS, 1.0 - _EPS)
    spec = np.clip(np.nan_to_num(spec, nan=0.5), _EPS, 1.0 - _EPS)
    return float(np.clip(t.mean(), _EPS, 1.0 - _EPS)), sens, spec


def _e_step(
    x: NDArray[np.float64],
    seen: NDArray[np.bool_],
    pi: float,
    sens: NDArray[np.float64],
    spec: NDArray[np.float64],
) -> NDArray[np.float64]:
    """P(z_i = 1 | verdicts) under the current rates."""
    xs = np.where(seen, x, 0.0)
    one = np.where(seen, xs * np.log(sens) + (1.0 - xs) * np.log(1.0 - sens), 0.0).sum(1)
    zero = np.where(seen, xs * np.log(1.0 - spec) + (1.0 - xs) * np.log(spec), 0.0).sum(1)
    logit = np.log(pi) - np.log(1.0 - pi) + one - zero
    return 1.0 / (1.0 + np.exp(-logit))


def dawid_skene(
    verdicts: ArrayLike,
    anchors: ArrayLike | None = None,
    *,
    max_iter: int = 500,
    tol: float = 1e-8,
) -> DawidSkene:
    """Fit the two-class model to ``verdicts`` (I items x J judges, 0/1, NaN = missing).

    ``anchors`` (I,) are human labels (0/1, NaN where none): anchored items keep their label
    as posterior. The start is each item's mean verdict (the judges' soft majority); one
    iteration is an M-step then an E-step, and the returned rates are those of the last
    M-step, the posteriors those of the last E-step (``max_iter=1`` is one hand-checkable
    step). Stops when no posterior moves more than ``tol``.
    """
    x = np.asarray(verdicts, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"verdicts must be items x judges, got shape {x.shape}")
    seen = ~np.isnan(x)
    if not np.isin(x[seen], (0.0, 1.0)).all():
        raise ValueError("verdicts must hold only 0, 1 and NaN")
    if x.shape[0] == 0 or not seen.any():
        raise ValueError("no verdicts to fit")
    if anchors is None:
        a = np.full(x.shape[0], np.nan)
    else:
        a = np.asarray(anchors, dtype=np.float64)
        if a.shape != (x.shape[0],):
            raise ValueError(f"anchors must have one entry per item ({x.shape[0]})")
        if not np.isin(a[~np.isnan(a)], (0.0, 1.0)).all():
            raise ValueError("anchors must hold only 0, 1 and NaN")
    if max_iter < 1:
        raise ValueError("max_iter must be at least 1")
    fixed = ~np.isnan(a)
    n_seen = seen.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(n_seen > 0, np.where(seen, x, 0.0).sum(1) / n_seen, 0.5)
    t = np.where(fixed, a, t)
    converged, it = False, 0
    while it < max_iter:
        it += 1
        pi, sens, spec = _m_step(x, seen, t)
        new = np.where(fixed, a, _e_step(x, seen, pi, sens, spec))
        moved = float(np.max(np.abs(new - t)))
        t = new
        if moved < tol:
            converged = True
            break
    return DawidSkene(pi, sens, spec, t, it, converged)
