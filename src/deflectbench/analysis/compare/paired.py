"""The paired claim-block bootstrap: a difference of rates between two results on the same
claims, resampling claims with the same draws for both sides.

Two models answering the same 80 claims are not independent samples: a claim that draws
refusals from one tends to draw them from the other. Drawing the same claims for both sides
keeps that pairing, so the interval of the difference is as narrow as the design allows (and
an unpaired interval would be too wide). The draws are those of
:func:`deflectbench.analysis.stats.bootstrap.block_bootstrap_many` over the claims of both
sides in sorted order, so each side's own interval equals the one ``analyze`` prints when the
two sides hold the same claims.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from deflectbench.analysis.calibration.draws import claim_multiplicities
from deflectbench.analysis.stats.arrays import columns


class PairedDiffs(NamedTuple):
    """For k columns: each side's rate, the difference (B minus A), its percentile CI and a
    two-sided p-value from the bootstrap's standard error; ``n_claims`` is how many claims hold a value on both sides;
    ``lo_a`` and ``hi_a`` are A's own percentile interval over the same draws (how far any B
    could move the difference: the gate's "could this rule fail at all?")."""

    rate_a: NDArray[np.float64]
    rate_b: NDArray[np.float64]
    diff: NDArray[np.float64]
    lo: NDArray[np.float64]
    hi: NDArray[np.float64]
    p: NDArray[np.float64]
    n_claims: NDArray[np.int64]
    lo_a: NDArray[np.float64] | None = None
    hi_a: NDArray[np.float64] | None = None


def _per_claim(
    m: NDArray[np.float64], codes: NDArray[np.int64], n: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per claim and column: the sum of the observed values and how many were observed."""
    observed = ~np.isnan(m)
    sums = np.zeros((n, m.shape[1]))
    counts = np.zeros((n, m.shape[1]))
    np.add.at(sums, codes, np.where(observed, m, 0.0))
    np.add.at(counts, codes, observed.astype(np.float64))
    return sums, counts


def _nanquantiles(x: NDArray[np.float64], qs: list[float]) -> NDArray[np.float64]:
    """``np.nanquantile(x, qs, axis=0)``: the columns without a NaN at once (``np.quantile``,
    the same values without ``nanquantile``'s column-by-column loop), the others by it."""
    out = np.empty((len(qs), x.shape[1]))
    clean = ~np.isnan(x).any(axis=0)
    if clean.any():
        out[:, clean] = np.quantile(x[:, clean], qs, axis=0)
    if not clean.all():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column -> NaN
            out[:, ~clean] = np.nanquantile(x[:, ~clean], qs, axis=0)
    return out


def bootstrap_p(diff: NDArray[np.float64], boot: NDArray[np.float64]) -> NDArray[np.float64]:
    """Two-sided p-value per column from the bootstrap's standard error: z = diff / SD of the
    (resamples x k) differences, p = erfc(|z| / sqrt 2). A percentile-tail p-value cannot go
    below 2 / (R + 1), which Holm across a table of hundreds of rows would always push to 1;
    the bootstrap's SE keeps the pairing and has no such floor. NaN resamples left out (fewer
    than two: NaN); a zero SE gives 1 for no difference and 0 for any other."""
    valid = ~np.isnan(boot)
    r = valid.sum(axis=0)
    out = np.full(diff.shape, np.nan)
    for j in np.flatnonzero(r >= 2):
        sd = float(np.std(boot[valid[:, j], j], ddof=1))
        d = float(diff[j])
        if math.isnan(d):
            continue
        if sd == 0.0:
            out[j] = 1.0 if d == 0.0 else 0.0
        else:
            out[j] = math.erfc(abs(d / sd) / math.sqrt(2.0))
    return out


def paired_bootstrap(
    values_a: ArrayLike,
    claims_a: Any,
    values_b: ArrayLike,
    claims_b: Any,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> PairedDiffs:
    """Rates of k columns on two sides and their difference B - A, from shared claim draws.

    ``values_a`` is (n_a x k) or 1-D, ``claims_a`` its rows' claims (likewise for B; the k
    columns are the same measures on both sides). NaN marks a missing value (left out of that
    column, as in :func:`~deflectbench.analysis.stats.bootstrap.block_bootstrap_many`). Each
    resample draws the union's claims with replacement
    (:func:`~deflectbench.analysis.calibration.draws.claim_multiplicities`, claims sorted) and
    gives each side the rate over the rows of its drawn claims; the CI is the percentile
    interval of B - A over the resamples, the p-value :func:`bootstrap_p` (from the
    resamples' standard error). A column with a
    value on both sides in fewer than two claims has a difference but no interval and no
    p-value (NaN): one claim is one distinct resample.
    """
    a, b = columns(values_a, "values"), columns(values_b, "values")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"sides have {a.shape[1]} and {b.shape[1]} columns")
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    if not 0.0 < level < 1.0:
        raise ValueError("level must lie strictly between 0 and 1")
    ca = np.asarray(claims_a, dtype=object).ravel()
    cb = np.asarray(claims_b, dtype=object).ravel()
    if ca.size != a.shape[0] or cb.size != b.shape[0]:
        raise ValueError("each side needs one claim per row")
    k = a.shape[1]
    labels = sorted(set(ca.tolist()) | set(cb.tolist()))
    if not labels:
        nan = np.full(k, np.nan)
        return PairedDiffs(nan, nan, nan, nan, nan, nan, np.zeros(k, dtype=np.int64), nan, nan)
    index = {c: i for i, c in enumerate(labels)}
    n = len(labels)
    sa, na = _per_claim(a, np.array([index[c] for c in ca], dtype=np.int64), n)
    sb, nb = _per_claim(b, np.array([index[c] for c in cb], dtype=np.int64), n)
    weights = claim_multiplicities(n, n_resamples, seed)
    tail = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        rate_a = sa.sum(axis=0) / na.sum(axis=0)
        rate_b = sb.sum(axis=0) / nb.sum(axis=0)
        boot_a = (weights @ sa) / (weights @ na)
        boot = (weights @ sb) / (weights @ nb) - boot_a
    q = _nanquantiles(boot, [tail, 1.0 - tail])
    qa = _nanquantiles(boot_a, [tail, 1.0 - tail])
    p = bootstrap_p(rate_b - rate_a, boot)
    shared = ((na > 0) & (nb > 0)).sum(axis=0).astype(np.int64)
    few = shared < 2
    q[:, few] = np.nan
    p[few] = np.nan
    return PairedDiffs(rate_a, rate_b, rate_b - rate_a, q[0], q[1], p, shared, qa[0], qa[1])
