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
from collections.abc import Sequence
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
    lo_a: NDArray[np.float64]
    hi_a: NDArray[np.float64]


class CutDiffs(NamedTuple):
    """:class:`PairedDiffs` of several cuts (``diffs``: each array cuts x k), with how many
    values each side observed per cut and column (``n_a``, ``n_b``)."""

    diffs: PairedDiffs
    n_a: NDArray[np.int64]
    n_b: NDArray[np.int64]


def _cut_sums(
    m: NDArray[np.float64],
    codes: NDArray[np.int64],
    cuts: Sequence[NDArray[np.int64]],
    n: int,
    n_cuts: int,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per cut and claim: the sums of the observed values and how many were observed (cuts x
    claims x columns), and how many rows (cuts x claims). Each of ``cuts`` gives every row's
    cut in one grouping (-1: none; a cut in one grouping only); a cut's sums are added up in
    row order, so they are those of the cut's rows alone, bit for bit."""
    k = m.shape[1]
    observed = ~np.isnan(m)
    filled = np.where(observed, m, 0.0)
    size = n_cuts * n
    sums, counts, rows = np.zeros(size * k), np.zeros(size * k), np.zeros(size)
    for cut in cuts:
        keep = cut >= 0
        key = cut[keep] * n + codes[keep]
        rows += np.bincount(key, minlength=size)
        at = (key[:, None] * k + np.arange(k)).ravel()  # (cut, claim, column), rows in order
        sums += np.bincount(at, weights=filled[keep].ravel(), minlength=size * k)
        counts += np.bincount(at, weights=observed[keep].ravel(), minlength=size * k)
    shape = (n_cuts, n, k)
    return sums.reshape(shape), counts.reshape(shape), rows.reshape(n_cuts, n)


def _by_column(x: NDArray[np.float64], columns: NDArray[np.bool_]) -> NDArray[np.float64]:
    """The chosen columns of ``x`` as rows, each contiguous (a reduction over each is then the
    one a column alone gets: the same sums, bit for bit)."""
    return np.ascontiguousarray((x if columns.all() else x[:, columns]).T)


def _nanquantiles(x: NDArray[np.float64], qs: list[float]) -> NDArray[np.float64]:
    """``np.nanquantile(x, qs, axis=0)``: the columns without a NaN at once (``np.quantile``
    of each column's values laid out contiguously: the same order statistics, without
    ``nanquantile``'s column-by-column loop), the others by it."""
    out = np.empty((len(qs), x.shape[1]))
    clean = np.asarray(~np.isnan(x).any(axis=0))
    if clean.any():
        out[:, clean] = np.quantile(_by_column(x, clean), qs, axis=1)
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
    sds = np.full(diff.shape, np.nan)
    clean = r == boot.shape[0]
    if clean.any() and boot.shape[0] >= 2:  # each column's SD over its contiguous resamples:
        sds[clean] = np.std(_by_column(boot, clean), axis=1, ddof=1)  # the same bits as alone
    for j in np.flatnonzero((r >= 2) & ~clean):
        sds[j] = np.std(boot[valid[:, j], j], ddof=1)
    out = np.full(diff.shape, np.nan)
    for j in np.flatnonzero(r >= 2):
        sd = float(sds[j])
        d = float(diff[j])
        if math.isnan(d):
            continue
        if sd == 0.0:
            out[j] = 1.0 if d == 0.0 else 0.0
        else:
            out[j] = math.erfc(abs(d / sd) / math.sqrt(2.0))
    return out


def _drawn(
    weights: NDArray[np.float64], blocks: list[NDArray[np.float64]]
) -> list[NDArray[np.float64]]:
    """``weights @ block`` for each (claims x k) block: each resample's sums. When every value
    is a whole number (0/1 values: counts and sums) each product is a sum of whole numbers
    below 2**53, exact in any order, so the blocks side by side are one product (the same
    bits). A BLAS ``@``, not ``np.einsum`` as in :func:`.stats.bootstrap._resample_sums`:
    compare's blocks side by side are thousands of columns, where einsum's own loop costs more
    than OpenBLAS's threads (about 40 ms a compare at paper scale, measured side by side).
    Other values keep one product per block, as computed alone."""
    both = np.concatenate(blocks, axis=1)
    whole = np.isfinite(both).all() and np.array_equal(both, np.floor(both))
    if not (whole and np.abs(both).sum() * weights.shape[1] < 2.0**53):
        return [weights @ x for x in blocks]
    product = weights @ both
    edges = np.cumsum([x.shape[1] for x in blocks])[:-1]
    return np.split(product, edges, axis=1)


def _fours(items: list[NDArray[np.float64]]) -> list[list[NDArray[np.float64]]]:
    """``items`` four at a time (a cut's A sums, A counts, B sums, B counts)."""
    return [items[i : i + 4] for i in range(0, len(items), 4)]


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
    one_a, one_b = np.zeros(len(a), dtype=np.int64), np.zeros(len(b), dtype=np.int64)
    res = paired_bootstrap_cuts(
        a, claims_a, [one_a], b, claims_b, [one_b], 1,
        n_resamples=n_resamples, seed=seed, level=level,
    )  # fmt: skip
    return PairedDiffs(*(x[0] for x in res.diffs))  # the one cut: every row


def paired_bootstrap_cuts(
    values_a: ArrayLike,
    claims_a: Any,
    cuts_a: Sequence[NDArray[np.int64]],
    values_b: ArrayLike,
    claims_b: Any,
    cuts_b: Sequence[NDArray[np.int64]],
    n_cuts: int,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> CutDiffs:
    """:func:`paired_bootstrap` of ``n_cuts`` cuts of the same two sides (overall, each
    framing, each template) at once: each array is (cuts x k), and row i is exactly what
    :func:`paired_bootstrap` gives on cut i's rows alone. ``cuts_a`` are groupings of A's rows
    into cuts (each an array of every row's cut, -1 for none; a row may be in one cut of each
    grouping), likewise ``cuts_b``. Each side is read once: the per-claim sums of every cut
    come from one pass (in row order, so the same sums); a cut's claims are the claims it
    holds on either side, in sorted order, and the draws of each number of claims
    (:func:`~deflectbench.analysis.calibration.draws.claim_multiplicities`, ``seed``) are
    drawn once and shared by every cut with that many claims, as each separate call drew
    them."""
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
    index = {c: i for i, c in enumerate(labels)}
    n = len(labels)
    sa, na, ra = _cut_sums(a, np.array([index[c] for c in ca], dtype=np.int64), cuts_a, n, n_cuts)
    sb, nb, rb = _cut_sums(b, np.array([index[c] for c in cb], dtype=np.int64), cuts_b, n, n_cuts)
    tail = (1.0 - level) / 2.0
    rate_a, rate_b = np.full((n_cuts, k), np.nan), np.full((n_cuts, k), np.nan)
    boot_a = np.full((n_resamples, n_cuts, k), np.nan)
    boot = np.full((n_resamples, n_cuts, k), np.nan)
    shared = np.zeros((n_cuts, k), dtype=np.int64)
    by_claims: dict[int, list[tuple[int, list[NDArray[np.float64]]]]] = {}
    for i in range(n_cuts):
        held = (ra[i] > 0) | (rb[i] > 0)  # the cut's claims, on either side, sorted
        if held.any():
            sides = [sa[i][held], na[i][held], sb[i][held], nb[i][held]]
            by_claims.setdefault(int(held.sum()), []).append((i, sides))
    for m, members in by_claims.items():  # the cuts of m claims share their draws
        drawn = _drawn(
            claim_multiplicities(m, n_resamples, seed), [x for _, xs in members for x in xs]
        )
        for (i, (xa, xna, xb, xnb)), (wa, wna, wb, wnb) in zip(members, _fours(drawn), strict=True):
            with np.errstate(invalid="ignore", divide="ignore"):
                rate_a[i] = xa.sum(axis=0) / xna.sum(axis=0)
                rate_b[i] = xb.sum(axis=0) / xnb.sum(axis=0)
                boot_a[:, i] = wa / wna
                boot[:, i] = wb / wnb - boot_a[:, i]
            shared[i] = ((xna > 0) & (xnb > 0)).sum(axis=0)
    flat, flat_a = boot.reshape(n_resamples, -1), boot_a.reshape(n_resamples, -1)
    q = _nanquantiles(flat, [tail, 1.0 - tail]).reshape(2, n_cuts, k)
    qa = _nanquantiles(flat_a, [tail, 1.0 - tail]).reshape(2, n_cuts, k)
    p = bootstrap_p((rate_b - rate_a).ravel(), flat).reshape(n_cuts, k)
    few = shared < 2
    q[:, few] = np.nan
    p[few] = np.nan
    observed_a = na.sum(axis=1).astype(np.int64)
    observed_b = nb.sum(axis=1).astype(np.int64)
    diffs = PairedDiffs(rate_a, rate_b, rate_b - rate_a, q[0], q[1], p, shared, qa[0], qa[1])
    return CutDiffs(diffs, observed_a, observed_b)
