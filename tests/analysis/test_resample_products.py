"""The resamples' products of whole numbers are the reference products bit for bit: the
bootstrap's by ``np.einsum`` (for its small matrices a BLAS ``@`` costs more in OpenBLAS's
threads than the product), compare's side by side in one product (thousands of columns: BLAS
there); sums of whole numbers below 2**53 are exact in any order. The one-product-per-block
versions are kept here as the reference."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from deflectbench.analysis.compare.paired import _drawn
from deflectbench.analysis.stats.bootstrap import _resample_sums


def reference_resample_sums(weights: np.ndarray, per_cluster: np.ndarray, k: int) -> np.ndarray:
    whole = np.isfinite(per_cluster).all() and np.array_equal(per_cluster, np.floor(per_cluster))
    if whole and np.abs(per_cluster).sum() * weights.shape[1] < 2.0**53:
        both = weights @ np.ascontiguousarray(per_cluster)
        return both[:, :k] / both[:, k:]
    return (weights @ per_cluster[:, :k]) / (weights @ per_cluster[:, k:])


def reference_drawn(weights: np.ndarray, blocks: list[np.ndarray]) -> list[np.ndarray]:
    both = np.concatenate(blocks, axis=1)
    whole = np.isfinite(both).all() and np.array_equal(both, np.floor(both))
    if not (whole and np.abs(both).sum() * weights.shape[1] < 2.0**53):
        return [weights @ x for x in blocks]
    product = weights @ both
    edges = np.cumsum([x.shape[1] for x in blocks])[:-1]
    return np.split(product, edges, axis=1)


@st.composite
def draws(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n_resamples, n_clusters, k = (draw(st.integers(1, n)) for n in (300, 90, 14))
    drawn = rng.integers(0, n_clusters, size=(n_resamples, n_clusters))
    flat = (np.arange(n_resamples)[:, None] * n_clusters + drawn).ravel()
    weights = np.bincount(flat, minlength=n_resamples * n_clusters)
    weights = weights.reshape(n_resamples, n_clusters).astype(np.float64)
    counts = rng.integers(0, draw(st.sampled_from([2, 80, 5000])), size=(n_clusters, k))
    sums = rng.integers(0, counts + 1).astype(np.float64)
    if draw(st.booleans()):  # other numbers: the reference's products, unchanged
        sums = sums * rng.random((n_clusters, k))
    return weights, np.hstack([sums, counts.astype(np.float64)]), k


@settings(max_examples=200, deadline=None)
@given(draws())
def test_bootstrap_resample_rates_are_the_blas_products(drawn):
    weights, per_cluster, k = drawn
    with np.errstate(invalid="ignore", divide="ignore"):
        got = _resample_sums(weights, per_cluster, k)
        want = reference_resample_sums(weights, per_cluster, k)
    assert got.tobytes() == want.tobytes()


@settings(max_examples=200, deadline=None)
@given(draws(), st.integers(1, 4))
def test_paired_resample_sums_are_the_blas_products(drawn, parts):
    weights, per_cluster, _ = drawn
    blocks = np.array_split(per_cluster, min(parts, per_cluster.shape[1]), axis=1)
    got, want = _drawn(weights, blocks), reference_drawn(weights, blocks)
    assert [g.tobytes() for g in got] == [w.tobytes() for w in want]
