"""The claim-block bootstrap's rates on 0/1 data are the same bits however the products are
formed: every resample's sums are whole numbers, exact in any order (issue 36: the fast path
multiplies the draws by sums and counts at once)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from deflectbench.analysis.stats.bootstrap import _resample_sums, block_bootstrap_many


def two_products(weights: np.ndarray, per_cluster: np.ndarray, k: int) -> np.ndarray:
    """Plainly: each resample's weighted sums over its weighted counts, column by column."""
    out = np.empty((weights.shape[0], k))
    for b in range(weights.shape[0]):
        for j in range(k):
            s = sum(float(w) * float(x) for w, x in zip(weights[b], per_cluster[:, j], strict=True))
            n = sum(
                float(w) * float(x) for w, x in zip(weights[b], per_cluster[:, k + j], strict=True)
            )
            out[b, j] = s / n if n else np.nan
    return out


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.integers(1, 6), st.integers(0, 2**31 - 1))
def test_whole_number_sums_are_exact_in_any_order(n_clusters, k, seed):
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 90, size=(n_clusters, k)).astype(float)
    sums = np.floor(counts * rng.random((n_clusters, k)))
    weights = rng.multinomial(n_clusters, [1 / n_clusters] * n_clusters, size=20).astype(float)
    got = _resample_sums(weights, np.hstack([sums, counts]), k)
    assert np.array_equal(got, two_products(weights, np.hstack([sums, counts]), k))


def test_real_values_keep_the_two_products():
    rng = np.random.default_rng(3)
    per_cluster = np.hstack([rng.random((7, 2)), rng.integers(1, 9, (7, 2)).astype(float)])
    weights = rng.multinomial(7, [1 / 7] * 7, size=30).astype(float)
    expected = (weights @ per_cluster[:, :2]) / (weights @ per_cluster[:, 2:])
    assert np.array_equal(_resample_sums(weights, per_cluster, 2), expected)


def test_thirteen_columns_with_missing_values_match_one_column_at_a_time():
    rng = np.random.default_rng(5)
    matrix = (rng.random((3000, 13)) < rng.random(13)).astype(float)
    matrix[rng.random(matrix.shape) < 0.02] = np.nan
    clusters = np.repeat(np.arange(40), 75)
    many = block_bootstrap_many(matrix, clusters, n_resamples=300, seed=2)
    for j in range(13):
        one = block_bootstrap_many(matrix[:, j], clusters, n_resamples=300, seed=2)
        assert (many.rate[j], many.lo[j], many.hi[j]) == (one.rate[0], one.lo[0], one.hi[0])
