"""The paper's statistics as pure functions: arrays in, numbers out.

Nothing here knows about models, claims or the store. Callers pass plain arrays with one
entry per generation (or per doubly-judged generation) and get floats, NamedTuples or frozen
dataclasses back. Binary inputs must already be clean 0/1: the release's -1 ("missing") is
the caller's to drop, and is rejected here rather than silently counted.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "Agreement",
    "BootstrapCI",
    "BootstrapCIs",
    "Chi2Result",
    "ClaimSpread",
    "TostResult",
    "agreement",
    "block_bootstrap_ci",
    "block_bootstrap_many",
    "chance_corrected",
    "chi2_independence",
    "claim_spread",
    "cohen_kappa",
    "cohens_h",
    "fallacy_density",
    "gwet_ac1",
    "incomplete_cells",
    "run_count_distribution",
    "tost_two_proportions",
    "tost_two_proportions_clustered",
]


from deflectbench.analysis.arrays import _binary, _factorize, _factorize_items, _pair  # noqa: F401
from deflectbench.analysis.hypothesis import (
    Chi2Result,
    TostResult,
    chi2_independence,
    tost_two_proportions,
    tost_two_proportions_clustered,
)

# --------------------------------------------------------------------------- agreement


def cohen_kappa(a: ArrayLike, b: ArrayLike) -> float:
    """Cohen's kappa for two raters' binary labels of the same items.

    kappa = (po - pe) / (1 - pe), with po the observed agreement and
    pe = pa*pb + (1-pa)*(1-pb) the agreement expected from the raters' own marginals
    (Cohen 1960). Computed on integer counts, so it is exact up to the final division.

    Undefined cases return NaN, as statsmodels' ``cohens_kappa`` does: no items, or both
    raters constant on the same value (po = pe = 1, so 0/0; AC1 is 1 there). One constant
    rater against a varying one gives 0, not NaN.
    """
    return float(chance_corrected(*_counts(a, b))[0])


def gwet_ac1(a: ArrayLike, b: ArrayLike) -> float:
    """Gwet's AC1 for two raters' binary labels of the same items.

    AC1 = (po - pe) / (1 - pe) with pe = 2*pi*(1 - pi), where pi is the mean of the two
    raters' prevalences of 1 (Gwet 2008, eq. for q = 2 categories:
    pe = sum_k pi_k(1 - pi_k) / (q - 1)). Since pe <= 1/2, AC1 is defined for any
    non-empty input and lies in [-1, 1]; it stays high when both judges agree on a rare
    label, which is where kappa collapses (the prevalence paradox). No items -> NaN.
    """
    return float(chance_corrected(*_counts(a, b))[1])


def _counts(a: ArrayLike, b: ArrayLike) -> tuple[int, int, int, int]:
    """The 2x2 table of two raters' binary labels: (both 1, only a, only b, both 0)."""
    x, y = _pair(a, b)
    both, na, nb = int((x & y).sum()), int(x.sum()), int(y.sum())
    return both, na - both, nb - both, int(x.size) - na - nb + both


def chance_corrected(
    tp: ArrayLike, fp: ArrayLike, fn: ArrayLike, tn: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Cohen's kappa and Gwet's AC1 of 2x2 tables given by their counts (arrays: one table per
    entry, e.g. one per bootstrap resample; ``tp`` both raters 1, ``fp`` only the first,
    ``fn`` only the second, ``tn`` both 0). The one place both formulas are written:
    :func:`cohen_kappa` and :func:`gwet_ac1` count their inputs and call it.

    With n items, agree = tp + tn, n_a = tp + fp and n_b = tp + fn the raters' 1s:
    kappa = (n*agree - E) / (n^2 - E), E = n_a*n_b + (n-n_a)*(n-n_b) (pe * n^2; NaN when
    E = n^2, i.e. both raters constant on the same value, or n = 0);
    AC1 = (2n*agree - C) / (2n^2 - C), C = s*(2n - s), s = n_a + n_b (NaN when n = 0).
    Integer arithmetic up to the final division, so the result is exact to rounding.
    """
    a, b, c, d = (np.asarray(v, dtype=np.int64) for v in (tp, fp, fn, tn))
    n, agree, na, nb = a + b + c + d, a + d, a + b, a + c
    expected = na * nb + (n - na) * (n - nb)  # pe * n^2
    s = na + nb  # 2 * n * pi
    chance = s * (2 * n - s)  # pe * 2 n^2
    undefined = (n == 0) | (expected == n * n)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = np.where(
            undefined, np.nan, (n * agree - expected) / np.where(undefined, 1, n * n - expected)
        )
        ac1 = np.where(
            n == 0, np.nan, (2 * n * agree - chance) / np.where(n == 0, 1, 2 * n * n - chance)
        )
    return kappa.astype(np.float64), ac1.astype(np.float64)


@dataclass(frozen=True)
class Agreement:
    """Two raters' agreement on one binary field."""

    kappa: float
    ac1: float
    disagreement: float  # fraction of items the raters label differently
    n: int


def agreement(a: ArrayLike, b: ArrayLike) -> Agreement:
    """Kappa, AC1 and raw disagreement together, since the paper reports them side by side.

    Reporting both coefficients shows when a low kappa is only prevalence skew (AC1 high,
    disagreement low). Empty input gives NaNs with n = 0.
    """
    x, y = _pair(a, b)
    n = int(x.size)
    dis = float((x != y).mean()) if n else math.nan
    return Agreement(kappa=cohen_kappa(x, y), ac1=gwet_ac1(x, y), disagreement=dis, n=n)


# --------------------------------------------------------------------------- effect size


def cohens_h(p1: float, p2: float) -> float:
    """Cohen's h between two proportions: 2*asin(sqrt(p1)) - 2*asin(sqrt(p2)).

    The arcsine transform makes a difference near 0 or 1 weigh like a larger one near 0.5,
    which suits framing effects on rates like 0.6% vs 25% (Cohen 1988, ch. 6; conventional
    thresholds 0.2 small, 0.5 medium, 0.8 large). Antisymmetric: h(p1, p2) = -h(p2, p1).
    """
    for name, p in (("p1", p1), ("p2", p2)):
        if not 0.0 <= p <= 1.0:  # also refuses NaN
            raise ValueError(f"{name} must be a proportion in [0, 1], got {p!r}")
    return 2.0 * math.asin(math.sqrt(p1)) - 2.0 * math.asin(math.sqrt(p2))


# --------------------------------------------------------------------------- bootstrap


class BootstrapCI(NamedTuple):
    """A rate and its percentile confidence interval."""

    rate: float
    lo: float
    hi: float


class BootstrapCIs(NamedTuple):
    """Rates and percentile confidence intervals for k columns, each an array of length k."""

    rate: NDArray[np.float64]
    lo: NDArray[np.float64]
    hi: NDArray[np.float64]


def block_bootstrap_many(
    matrix: ArrayLike,
    clusters: Any,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> BootstrapCIs:
    """Rates of k columns with cluster (block) bootstrap percentile CIs from shared draws.

    Generations of one claim are correlated (same claim, 15 templates, 5 samples), so the
    claims, not the generations, are the independent units: each resample draws
    ``n_clusters`` claims with replacement and keeps every row of each drawn claim (a claim
    drawn twice counts twice). A resample's rate is the mean over all its rows,
    sum_c w_c S_c / sum_c w_c N_c, with w_c how often claim c was drawn and S_c, N_c the
    claim's sum and row count. The CI is the (1-level)/2 and (1+level)/2 percentiles of
    the resample rates (numpy's default linear quantile). A percentile interval is not
    guaranteed to contain the point estimate: with a handful of resamples or claims it can
    miss it (e.g. 2 claims, 1 resample); at 200+ resamples and level >= 0.8 a property test
    found no case.

    Vectorised: per-claim sums and counts are computed once, the draws form one
    (n_resamples x n_clusters) matrix, and all resample rates are one matrix product.
    The draws are exactly ``np.random.default_rng(seed).integers(0, n_clusters,
    size=(n_resamples, n_clusters))``, indexing clusters in sorted order of their labels;
    all k columns share them.

    ``matrix`` is (n_rows x k) or 1-D (k = 1); values are 0/1 or real. NaN marks a missing
    value: it is left out of that column's rate, and a resample in which a column has no
    observed rows is left out of that column's percentiles. No rows -> all NaN.
    """
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim == 1:
        m = m[:, None]
    if m.ndim != 2:
        raise ValueError(f"matrix must be 1-D or 2-D, got shape {m.shape}")
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    if not 0.0 < level < 1.0:
        raise ValueError("level must lie strictly between 0 and 1")
    n_rows, k = m.shape
    if n_rows == 0:
        nan = np.full(k, np.nan)
        return BootstrapCIs(nan, nan.copy(), nan.copy())
    codes, labels = _factorize(clusters)
    if codes.size != n_rows:
        raise ValueError(f"clusters has {codes.size} entries for {n_rows} rows")
    n_clusters = len(labels)

    # Per-cluster sums and observed-row counts in one pass: sort rows by cluster, then
    # add up each cluster's contiguous block (every code 0..n_clusters-1 occurs).
    observed = ~np.isnan(m)
    order = np.argsort(codes, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(codes[order]) != 0])
    both = np.hstack([np.where(observed, m, 0.0), observed])[order]
    per_cluster = np.add.reduceat(both, starts, axis=0)
    sums, counts = per_cluster[:, :k], per_cluster[:, k:]

    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_clusters, size=(n_resamples, n_clusters))
    flat = (np.arange(n_resamples)[:, None] * n_clusters + draws).ravel()
    weights = np.bincount(flat, minlength=n_resamples * n_clusters)
    weights = weights.reshape(n_resamples, n_clusters).astype(np.float64)

    tail = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = sums.sum(axis=0) / counts.sum(axis=0)
        boot = (weights @ sums) / (weights @ counts)
    if np.isnan(boot).any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN column -> NaN
            q = np.nanquantile(boot, [tail, 1.0 - tail], axis=0)
    else:
        q = np.quantile(boot, [tail, 1.0 - tail], axis=0)
    return BootstrapCIs(rate, q[0], q[1])


def block_bootstrap_ci(
    values: ArrayLike,
    clusters: Any,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> BootstrapCI:
    """One column's rate and cluster-bootstrap CI; see :func:`block_bootstrap_many`."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {v.shape}")
    res = block_bootstrap_many(v, clusters, n_resamples=n_resamples, seed=seed, level=level)
    return BootstrapCI(float(res.rate[0]), float(res.lo[0]), float(res.hi[0]))


# --------------------------------------------------------------------------- small helpers


class ClaimSpread(NamedTuple):
    """The lowest and highest per-claim rate and their gap in percentage points."""

    min: float
    max: float
    spread_pp: float


def claim_spread(rates_by_claim: Mapping[Any, float] | ArrayLike) -> ClaimSpread:
    """Range of per-claim rates, e.g. refusal spanning 19.3% to 30.3% (11 points).

    Rates are fractions in [0, 1]; spread_pp = (max - min) * 100. Accepts a mapping
    claim -> rate or an array; NaN rates (claims with no data) are ignored.
    """
    if isinstance(rates_by_claim, Mapping):
        arr = np.asarray(list(rates_by_claim.values()), dtype=np.float64)
    else:
        arr = np.asarray(rates_by_claim, dtype=np.float64).ravel()
    arr = arr[~np.isnan(arr)]
    if arr.size == 0:
        raise ValueError("no per-claim rates to compare")
    lo, hi = float(arr.min()), float(arr.max())
    return ClaimSpread(min=lo, max=hi, spread_pp=(hi - lo) * 100.0)


def fallacy_density(wa: ArrayLike, ah: ArrayLike, rh: ArrayLike, output_tokens: ArrayLike) -> float:
    """Fallacies per 100 output tokens, averaged over generations.

    mean over generations with output_tokens > 0 of (WA + AH + RH) / output_tokens * 100:
    a per-generation ratio then averaged (not total fallacies over total tokens), so a
    long reply does not outweigh a short one. Generations with no reported tokens are
    left out; if none remain the density is NaN.
    """
    arrs = [np.asarray(x, dtype=np.float64) for x in (wa, ah, rh, output_tokens)]
    if len({a.shape for a in arrs}) != 1 or arrs[0].ndim != 1:
        raise ValueError("wa, ah, rh and output_tokens must be 1-D and of one length")
    w, a, r, tok = arrs
    keep = tok > 0
    if not keep.any():
        return math.nan
    return float(((w[keep] + a[keep] + r[keep]) / tok[keep] * 100.0).mean())


def run_count_distribution(
    refusal: ArrayLike, cell_keys: Any, runs_per_cell: int = 5
) -> dict[str, int]:
    """How many cells refused in 0, 1, ..., runs_per_cell of their samples (appendix F).

    A cell is one model x claim x template; ``cell_keys`` gives each generation's cell
    (1-D labels, a sequence of tuples, or a 2-D array of key columns). Returns
    {"0": cells with no refusal, ..., "5": cells refusing every sample}. A cell with fewer
    than ``runs_per_cell`` samples (failed generations) is counted under the refusals it
    has, so "5" means five refusals out of five valid samples only; count such cells with
    :func:`incomplete_cells`. A cell with more samples than ``runs_per_cell`` means
    duplicated rows and raises ValueError.
    """
    r = _binary(refusal, "refusal")
    if runs_per_cell < 1:
        raise ValueError("runs_per_cell must be at least 1")
    per_refused, per_n = _cell_tallies(r, cell_keys)
    if per_n.size and per_n.max() > runs_per_cell:
        raise ValueError(f"a cell has more than {runs_per_cell} samples; rows are duplicated")
    dist = np.bincount(per_refused, minlength=runs_per_cell + 1)
    return {str(i): int(dist[i]) for i in range(runs_per_cell + 1)}


def incomplete_cells(cell_keys: Any, runs_per_cell: int = 5) -> int:
    """Number of cells with fewer than ``runs_per_cell`` samples (see run_count_distribution)."""
    codes, labels = _factorize(cell_keys)
    if not labels:
        return 0
    return int((np.bincount(codes, minlength=len(labels)) < runs_per_cell).sum())


def _cell_tallies(r: NDArray[np.int64], cell_keys: Any) -> tuple[NDArray[np.int64], NDArray]:
    if r.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    codes, labels = _factorize(cell_keys)
    if codes.size != r.size:
        raise ValueError(f"cell_keys has {codes.size} entries for {r.size} generations")
    g = len(labels)
    refused = np.bincount(codes, weights=r, minlength=g).astype(np.int64)
    return refused, np.bincount(codes, minlength=g)
