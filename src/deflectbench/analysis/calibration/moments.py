"""Weighted moment sums of labelled and target items, per claim, so a bootstrap is a matrix product.

Every estimator of this package (judged, labels-only, PPI++, Rogan-Gladen) is a function of a
few weighted sums over the items: the labelled items' sum of w, w*h, w*f, ..., the target
items' sum of v, v*f, ... With the sums kept per claim, a claim-block bootstrap replicate (claim
c drawn m_c times) is ``m @ per_claim``, and the full sample is the same with m = 1: one
formula serves the point estimate and all replicates, and item-level callers (the ppi_py
fixtures) pass one "claim" per item.

Names: ``h`` the human label, ``f`` the judged indicator, ``w`` the labelled item's design
weight (inverse inclusion probability), ``v`` the target item's weight; ``2`` squares the
weight (``w2hf`` = sum of w^2 h f); ``n`` counts items. Missing values are left out of a
column's sums by the mask.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

Moments = dict[str, NDArray[np.float64]]

#: Sums over the labelled items (human label h, judged f, weight w).
LABELLED_TERMS = ("n", "w", "wh", "wf", "whf", "w2", "w2h", "w2f", "w2hf", "w2hh", "w2ff")
#: Sums over the target items (judged f, weight v).
TARGET_TERMS = ("n", "v", "vf", "v2", "v2f", "v2ff")


def _weights(
    use: NDArray[np.bool_], weight: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each item's weight in each column where it counts (zero where it is missing), and its
    square."""
    w = np.where(use, weight[:, None], 0.0)
    return w, w * w


def labelled_terms(
    human: NDArray[np.float64], judged: NDArray[np.float64], weight: NDArray[np.float64]
) -> Moments:
    """Per-item terms (L, K) of the labelled sums; an item missing h or f contributes zeros."""
    use = ~(np.isnan(human) | np.isnan(judged))
    h, f = np.where(use, human, 0.0), np.where(use, judged, 0.0)
    w, w2 = _weights(use, weight)
    return {
        "n": use.astype(np.float64),
        "w": w,
        "wh": w * h,
        "wf": w * f,
        "whf": w * h * f,
        "w2": w2,
        "w2h": w2 * h,
        "w2f": w2 * f,
        "w2hf": w2 * h * f,
        "w2hh": w2 * h * h,
        "w2ff": w2 * f * f,
    }


def label_only_terms(human: NDArray[np.float64], weight: NDArray[np.float64]) -> Moments:
    """Per-item terms of the labels-only mean: a label counts even without a judged verdict."""
    use = ~np.isnan(human)
    w, w2 = _weights(use, weight)
    return {"n": use.astype(np.float64), "w": w, "wh": w * np.where(use, human, 0.0), "w2": w2}


def target_terms(judged: NDArray[np.float64], weight: NDArray[np.float64]) -> Moments:
    """Per-item terms (N, K) of the target sums; a missing verdict contributes zeros."""
    use = ~np.isnan(judged)
    f = np.where(use, judged, 0.0)
    v, v2 = _weights(use, weight)
    return {
        "n": use.astype(np.float64),
        "v": v,
        "vf": v * f,
        "v2": v2,
        "v2f": v2 * f,
        "v2ff": v2 * f * f,
    }


def per_claim(terms: Moments, codes: NDArray[np.intp], n_claims: int) -> Moments:
    """Each term summed within claims: (n_claims, K) arrays (claims without items are zero)."""
    out: Moments = {}
    for name, x in terms.items():
        acc = np.zeros((n_claims, x.shape[1]))
        np.add.at(acc, codes, x)
        out[name] = acc
    return out


def total(terms: Moments) -> Moments:
    """The full-sample sums (K,) of per-item or per-claim terms."""
    return {name: x.sum(axis=0) for name, x in terms.items()}


def replicate(multiplicity: NDArray[np.float64], claims: Moments) -> Moments:
    """Sums (R, K) of R bootstrap replicates, claim c counted multiplicity[r, c] times."""
    return {name: multiplicity @ x for name, x in claims.items()}
