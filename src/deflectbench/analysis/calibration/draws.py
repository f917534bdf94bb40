"""The claim-block bootstrap draw shared by every column and method of one estimate."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def claim_multiplicities(n_claims: int, resamples: int, seed: int) -> NDArray[np.float64]:
    """How often each claim is drawn in each replicate: an (resamples, n_claims) matrix.

    The draws are exactly those of :func:`deflectbench.analysis.stats.block_bootstrap_many`
    (``default_rng(seed).integers(0, n_claims, size=(resamples, n_claims))``, claims indexed in
    sorted order), so on the same claims the judged interval equals the one ``analyze`` prints.
    """
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_claims, size=(resamples, n_claims))
    flat = (np.arange(resamples)[:, None] * n_claims + draws).ravel()
    counts = np.bincount(flat, minlength=resamples * n_claims)
    return counts.reshape(resamples, n_claims).astype(np.float64)
