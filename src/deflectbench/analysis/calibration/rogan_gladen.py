"""Rogan-Gladen correction: the judged rate undone by the judge's sensitivity and specificity.

corrected = (p_obs + spec - 1) / (sens + spec - 1), clipped to [0, 1] (Rogan and Gladen 1978),
with p_obs the judged rate over the target items and sens = sum w h f / sum w h,
spec = sum w (1-h)(1-f) / sum w (1-h) measured on the (weighted) labelled items. Written on
moment sums (:mod:`.moments`) so that sens and spec are re-measured inside every claim-block
bootstrap replicate and their uncertainty reaches the interval.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from deflectbench.analysis.calibration.moments import Moments


def sens_spec(lab: Moments) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Sensitivity and specificity of the judged indicator against the labels (NaN if no
    positive, resp. negative, human label)."""
    pos = lab["wh"]
    neg = lab["w"] - lab["wh"]
    with np.errstate(invalid="ignore", divide="ignore"):
        sens = np.where(pos > 0, lab["whf"] / np.where(pos > 0, pos, 1.0), np.nan)
        tn = lab["w"] - lab["wh"] - lab["wf"] + lab["whf"]
        spec = np.where(neg > 0, tn / np.where(neg > 0, neg, 1.0), np.nan)
    return sens, spec


def rogan_gladen_moments(lab: Moments, unl: Moments) -> NDArray[np.float64]:
    """The corrected rate (NaN where sens or spec is undefined or sens + spec <= 1)."""
    sens, spec = sens_spec(lab)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_obs = unl["vf"] / unl["v"]
        youden = sens + spec - 1.0
        ok = youden > 1e-12
        raw = (p_obs + spec - 1.0) / np.where(ok, youden, 1.0)
    return np.where(ok, np.clip(raw, 0.0, 1.0), np.nan)


def rogan_gladen(p_obs: float, sensitivity: float, specificity: float) -> float:
    """The scalar formula, for a reader checking one number by hand."""
    youden = sensitivity + specificity - 1.0
    if not youden > 0:
        raise ValueError("sensitivity + specificity must exceed 1 (a judge better than chance)")
    return min(1.0, max(0.0, (p_obs + specificity - 1.0) / youden))
