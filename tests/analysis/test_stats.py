"""Every statistic in analysis.stats checked against an independent implementation
(statsmodels, scipy, a reference written differently here) or a published value."""

from __future__ import annotations

import math
import time
from collections import Counter
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from scipy.stats.contingency import association
from statsmodels.regression.linear_model import OLS
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa
from statsmodels.stats.proportion import proportion_effectsize, tost_proportions_2indep

from deflectbench.analysis.stats import (
    Agreement,
    agreement,
    block_bootstrap_ci,
    block_bootstrap_many,
    chi2_independence,
    claim_spread,
    cohen_kappa,
    cohens_h,
    fallacy_density,
    gwet_ac1,
    incomplete_cells,
    run_count_distribution,
    tost_two_proportions,
    tost_two_proportions_clustered,
)

FAST = settings(max_examples=60, deadline=None)


def from_table(n11: int, n10: int, n01: int, n00: int) -> tuple[np.ndarray, np.ndarray]:
    """Two raters' labels realising a 2x2 table (rows rater a: 1, 0; columns rater b: 1, 0)."""
    a = np.array([1] * n11 + [1] * n10 + [0] * n01 + [0] * n00)
    b = np.array([1] * n11 + [0] * n10 + [1] * n01 + [0] * n00)
    return a, b


def to_table(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The 2x2 table (rows a = 0, 1; columns b = 0, 1) by explicit counting."""
    t = np.zeros((2, 2))
    for x, y in zip(a, b, strict=True):
        t[x, y] += 1
    return t


def reference_kappa_ac1(table: np.ndarray) -> tuple[float, float]:
    """Cohen's kappa and Gwet's AC1 from a q x q table, the general q-category formulas.

    kappa: pe = sum_k row_k * col_k (Cohen 1960). AC1: pi_k = (row_k + col_k) / 2,
    pe = sum_k pi_k (1 - pi_k) / (q - 1) (Gwet 2008).
    """
    p = np.asarray(table, dtype=float) / np.sum(table)
    q = p.shape[0]
    po = np.trace(p)
    row, col = p.sum(axis=1), p.sum(axis=0)
    pe_k = float(row @ col)
    pi = (row + col) / 2
    pe_g = float((pi * (1 - pi)).sum() / (q - 1))
    kappa = (po - pe_k) / (1 - pe_k) if pe_k < 1 else math.nan
    return kappa, (po - pe_g) / (1 - pe_g)


binary_pairs = st.integers(min_value=1, max_value=120).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 1), min_size=n, max_size=n),
        st.lists(st.integers(0, 1), min_size=n, max_size=n),
    )
)


# --------------------------------------------------------------------------- kappa


def test_kappa_textbook_table():
    # The standard worked example (50 items; 20 yes-yes, 5 yes-no, 10 no-yes, 15 no-no):
    # po = 0.7, pe = 0.5 * 0.6 + 0.5 * 0.4 = 0.5, kappa = 0.4.
    a, b = from_table(20, 5, 10, 15)
    assert cohen_kappa(a, b) == pytest.approx(0.4, abs=1e-15)


@FAST
@given(binary_pairs)
def test_kappa_matches_statsmodels(pair):
    a, b = (np.array(x) for x in pair)
    ours = cohen_kappa(a, b)
    with np.errstate(all="ignore"):
        theirs = sm_cohens_kappa(to_table(a, b)).kappa
    if math.isnan(theirs):
        assert math.isnan(ours)
    else:
        assert ours == pytest.approx(theirs, abs=1e-12)


@FAST
@given(binary_pairs)
def test_kappa_symmetric_and_bounded(pair):
    a, b = (np.array(x) for x in pair)
    k1, k2 = cohen_kappa(a, b), cohen_kappa(b, a)
    assert (math.isnan(k1) and math.isnan(k2)) or k1 == pytest.approx(k2, abs=1e-15)
    assert math.isnan(k1) or -1.0 <= k1 <= 1.0 + 1e-15


def test_kappa_degenerate_cases():
    ones, zeros = np.ones(10, int), np.zeros(10, int)
    # Both raters constant on the same value: po = pe = 1, undefined (as statsmodels).
    assert math.isnan(cohen_kappa(ones, ones))
    assert math.isnan(cohen_kappa(zeros, zeros))
    with np.errstate(all="ignore"):
        assert math.isnan(sm_cohens_kappa(np.array([[0, 0], [0, 10]])).kappa)
    # One constant rater against a varying one: pe = po, kappa = 0.
    varying = np.array([0, 1] * 5)
    assert cohen_kappa(ones, varying) == 0.0
    # Perfect agreement with both values present.
    assert cohen_kappa(varying, varying) == 1.0
    assert math.isnan(cohen_kappa([], []))


def test_agreement_inputs_are_validated():
    with pytest.raises(ValueError):
        cohen_kappa([0, 1, -1], [0, 1, 1])  # the release's "missing" must be dropped first
    with pytest.raises(ValueError):
        gwet_ac1([0, 1, np.nan], [0, 1, 1])
    with pytest.raises(ValueError):
        agreement([0, 1], [0, 1, 1])
    assert cohen_kappa([True, False, True], [True, False, False]) == cohen_kappa(
        [1, 0, 1], [1, 0, 0]
    )


# --------------------------------------------------------------------------- AC1


def test_reference_formulas_reproduce_gwet_handbook():
    # Gwet, Handbook of Inter-Rater Reliability (4th ed.): 100 pregnancies classified by two
    # abstractors (kappa 0.796, AC1 0.849) and 223 patients by two diagnosis methods
    # (kappa 0.432, AC1 0.456). These pin the reference below, which then checks ours.
    abstractors = np.array([[13, 0, 0], [0, 20, 7], [0, 4, 56]])
    kappa, ac1 = reference_kappa_ac1(abstractors)
    assert round(kappa, 3) == 0.796 and round(ac1, 3) == 0.849
    diagnosis = np.array([[40, 4, 4, 17], [6, 25, 2, 13], [4, 1, 21, 12], [15, 5, 9, 45]])
    kappa, ac1 = reference_kappa_ac1(diagnosis)
    assert round(kappa, 3) == 0.432 and round(ac1, 3) == 0.456


def test_ac1_hand_value():
    # Same table as the kappa example: pi = (0.5 + 0.6) / 2 = 0.55, pe = 2 * 0.55 * 0.45
    # = 0.495, AC1 = (0.7 - 0.495) / 0.505 = 41/101 exactly.
    a, b = from_table(20, 5, 10, 15)
    assert gwet_ac1(a, b) == pytest.approx(float(Fraction(41, 101)), abs=1e-15)


def test_prevalence_paradox_matches_irrcac():
    # A skewed table (2 yes-yes, 3 yes-no, 5 no-yes, 190 no-no): raw agreement 96%, kappa
    # low, AC1 high. Values from irrCAC 0.4.4 (the Python port of Gwet's R package):
    # kappa 0.313305, AC1 0.957528.
    a, b = from_table(2, 3, 5, 190)
    assert cohen_kappa(a, b) == pytest.approx(0.313305, abs=5e-7)
    assert gwet_ac1(a, b) == pytest.approx(0.957528, abs=5e-7)


@FAST
@given(binary_pairs)
def test_ac1_matches_general_q_reference(pair):
    a, b = (np.array(x) for x in pair)
    _, ref = reference_kappa_ac1(to_table(a, b))
    assert gwet_ac1(a, b) == pytest.approx(ref, abs=1e-12)


@FAST
@given(binary_pairs)
def test_ac1_symmetric_and_in_range(pair):
    a, b = (np.array(x) for x in pair)
    v = gwet_ac1(a, b)
    assert -1.0 <= v <= 1.0
    assert v == pytest.approx(gwet_ac1(b, a), abs=1e-15)


def test_ac1_defined_where_kappa_is_not():
    ones = np.ones(8, int)
    assert gwet_ac1(ones, ones) == 1.0
    assert math.isnan(gwet_ac1([], []))
    # Total disagreement at 50% prevalence reaches the lower bound.
    assert gwet_ac1([1, 0, 1, 0], [0, 1, 0, 1]) == -1.0


def test_agreement_bundles_the_three():
    a, b = from_table(20, 5, 10, 15)
    res = agreement(a, b)
    assert isinstance(res, Agreement)
    assert res == Agreement(kappa=cohen_kappa(a, b), ac1=gwet_ac1(a, b), disagreement=0.3, n=50)
    empty = agreement([], [])
    assert empty.n == 0 and math.isnan(empty.disagreement) and math.isnan(empty.kappa)


# --------------------------------------------------------------------------- Cohen's h

proportions = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@FAST
@given(proportions, proportions)
def test_cohens_h_matches_statsmodels_and_is_antisymmetric(p1, p2):
    assert cohens_h(p1, p2) == pytest.approx(proportion_effectsize(p1, p2), abs=1e-12)
    assert cohens_h(p1, p2) == -cohens_h(p2, p1)
    assert cohens_h(p1, p1) == 0.0


def test_cohens_h_known_values():
    assert cohens_h(1.0, 0.0) == pytest.approx(math.pi)
    assert cohens_h(0.5, 0.0) == pytest.approx(math.pi / 2)
    for bad in (-0.1, 1.1, math.nan):
        with pytest.raises(ValueError):
            cohens_h(bad, 0.5)


# --------------------------------------------------------------------------- bootstrap


def slow_block_bootstrap(values, clusters, n_resamples=1000, seed=0, level=0.95):
    """The cluster bootstrap written as a loop over resamples, materialising each resample's
    rows. Uses the documented draws: default_rng(seed).integers(0, C, size=(B, C)) over the
    sorted cluster labels."""
    values = np.asarray(values, dtype=float)
    clusters = np.asarray(clusters)
    labels = np.unique(clusters)
    rows_of = [np.flatnonzero(clusters == lab) for lab in labels]
    draws = np.random.default_rng(seed).integers(0, len(labels), size=(n_resamples, len(labels)))
    rates = []
    for draw in draws:
        rows = np.concatenate([rows_of[j] for j in draw])
        rates.append(np.nanmean(values[rows]) if (~np.isnan(values[rows])).any() else np.nan)
    rates = np.array(rates)
    tail = (1 - level) / 2
    lo, hi = np.nanquantile(rates, [tail, 1 - tail])
    return float(np.nanmean(values)), float(lo), float(hi)


def clustered_data(rng, n_clusters=30, rows=(5, 40), k=1):
    """0/1 data whose rate varies by cluster, with unequal cluster sizes."""
    sizes = rng.integers(rows[0], rows[1] + 1, size=n_clusters)
    p = rng.beta(2, 5, size=(n_clusters, k))
    clusters = np.repeat([f"L{i % 4 + 1}_US_{i:02d}" for i in range(n_clusters)], sizes)
    probs = np.repeat(p, sizes, axis=0)
    return (rng.random(probs.shape) < probs).astype(float), clusters


def test_bootstrap_matches_slow_loop_exactly_on_binary_data():
    rng = np.random.default_rng(7)
    values, clusters = clustered_data(rng)
    values = values[:, 0]
    fast = block_bootstrap_ci(values, clusters, n_resamples=400, seed=3)
    slow = slow_block_bootstrap(values, clusters, n_resamples=400, seed=3)
    assert tuple(fast) == slow  # integer sums: bit-identical, not merely close


def test_bootstrap_matches_slow_loop_on_real_values_and_missing():
    rng = np.random.default_rng(8)
    values, clusters = clustered_data(rng)
    real = values[:, 0] * rng.gamma(2.0, size=values.shape[0])
    real[rng.random(real.size) < 0.1] = np.nan  # missing values are left out
    fast = block_bootstrap_ci(real, clusters, n_resamples=300, seed=11, level=0.9)
    slow = slow_block_bootstrap(real, clusters, n_resamples=300, seed=11, level=0.9)
    assert fast == pytest.approx(slow, rel=1e-12)


def test_many_columns_share_draws_with_single_column_calls():
    rng = np.random.default_rng(9)
    matrix, clusters = clustered_data(rng, k=5)
    many = block_bootstrap_many(matrix, clusters, n_resamples=250, seed=4)
    for j in range(matrix.shape[1]):
        one = block_bootstrap_ci(matrix[:, j], clusters, n_resamples=250, seed=4)
        assert (many.rate[j], many.lo[j], many.hi[j]) == tuple(one)


def test_bootstrap_seeded_determinism():
    rng = np.random.default_rng(10)
    values, clusters = clustered_data(rng)
    r1 = block_bootstrap_ci(values[:, 0], clusters, seed=5)
    r2 = block_bootstrap_ci(values[:, 0], clusters, seed=5)
    r3 = block_bootstrap_ci(values[:, 0], clusters, seed=6)
    assert r1 == r2
    assert r1.rate == r3.rate and (r1.lo, r1.hi) != (r3.lo, r3.hi)


def test_cluster_labels_may_be_tuples_or_key_columns():
    rng = np.random.default_rng(12)
    values, clusters = clustered_data(rng)
    by_string = block_bootstrap_ci(values[:, 0], clusters, n_resamples=200)
    # Tuple labels that sort in the same order as the strings give the same draws.
    tuples = [(c[:2], c) for c in clusters]
    assert block_bootstrap_ci(values[:, 0], tuples, n_resamples=200) == by_string
    frame = pd.DataFrame({"level": [c[:2] for c in clusters], "claim": clusters})
    assert block_bootstrap_ci(values[:, 0], frame, n_resamples=200) == by_string


def test_bootstrap_edge_cases():
    assert all(math.isnan(x) for x in block_bootstrap_ci([], []))
    many = block_bootstrap_many(np.zeros((0, 3)), [])
    assert many.rate.shape == (3,) and np.isnan(many.lo).all()
    # One cluster: every resample is the data itself, so there is no interval (issue 23).
    one = block_bootstrap_ci([1, 0, 0, 1], ["c"] * 4)
    assert one.rate == 0.5 and math.isnan(one.lo) and math.isnan(one.hi)
    # A column with no observed value anywhere.
    res = block_bootstrap_many(np.array([[1.0, np.nan], [0.0, np.nan]]), ["a", "b"])
    assert res.rate[0] == 0.5 and math.isnan(res.rate[1]) and math.isnan(res.hi[1])
    with pytest.raises(ValueError):
        block_bootstrap_ci([1, 0], ["a"])
    with pytest.raises(ValueError):
        block_bootstrap_ci([1, 0], ["a", "b"], level=1.0)
    with pytest.raises(ValueError):
        block_bootstrap_ci([1, 0], ["a", "b"], n_resamples=0)


def test_bootstrap_coverage_on_simulated_clustered_data():
    """The claim bootstrap should cover the true rate about 95% of the time when rates vary
    by claim; a naive row-level binomial interval should not (design effect ~3)."""
    rng = np.random.default_rng(2024)
    n_clusters, rows, true_rate, sims = 40, 25, 0.25, 300
    a, b = 2.5, 7.5  # Beta(2.5, 7.5) has mean 0.25
    clusters = np.repeat(np.arange(n_clusters), rows)
    covered = naive_covered = 0
    for s in range(sims):
        p = np.repeat(rng.beta(a, b, size=n_clusters), rows)
        y = (rng.random(p.size) < p).astype(float)
        rate, lo, hi = block_bootstrap_ci(y, clusters, n_resamples=400, seed=s)
        covered += lo <= true_rate <= hi
        half = 1.96 * math.sqrt(rate * (1 - rate) / y.size)
        naive_covered += rate - half <= true_rate <= rate + half
    assert 0.88 <= covered / sims <= 0.99
    assert naive_covered / sims < 0.85


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 7), st.integers(0, 1)),
        min_size=1,
        max_size=60,
    ),
    st.integers(0, 2**32 - 1),
    st.sampled_from([0.8, 0.9, 0.95, 0.99]),
)
def test_bootstrap_interval_contains_estimate(rows, seed, level):
    # Not a theorem for percentile intervals (1 resample of 2 claims can miss the estimate),
    # but it must hold at any realistic number of resamples.
    clusters = [c for c, _ in rows]
    values = [v for _, v in rows]
    rate, lo, hi = block_bootstrap_ci(values, clusters, n_resamples=200, seed=seed, level=level)
    if len(set(clusters)) < 2:  # one claim: a rate, no interval (issue 23)
        assert 0.0 <= rate <= 1.0 and math.isnan(lo) and math.isnan(hi)
        return
    assert 0.0 <= lo <= rate <= hi <= 1.0


def test_bootstrap_many_is_fast_at_paper_scale():
    # 24,000 generations x 13 columns (8 fields + 5 outcomes), 80 claims, 1000 resamples.
    rng = np.random.default_rng(0)
    clusters = np.repeat([f"L{i // 20 + 1}_US_{i:02d}" for i in range(80)], 300)
    matrix = (rng.random((24_000, 13)) < 0.3).astype(float)
    timings = []
    for _ in range(5):
        start = time.perf_counter()
        block_bootstrap_many(matrix, clusters, n_resamples=1000)
        timings.append(time.perf_counter() - start)
    assert min(timings) < 0.2


# --------------------------------------------------------------------------- chi-square


def test_chi2_hand_computation():
    # Rows 30, 70; columns 40, 60; n 100: E = [[12, 18], [28, 42]], every |O - E| = 2.
    res = chi2_independence([[10, 20], [30, 40]])
    stat = 4 / 12 + 4 / 18 + 4 / 28 + 4 / 42
    assert res.statistic == pytest.approx(stat, rel=1e-14)
    assert res.dof == 1 and res.n == 100
    assert res.p_value == pytest.approx(math.erfc(math.sqrt(stat / 2)), rel=1e-12)  # 1 dof
    assert res.cramers_v == pytest.approx(math.sqrt(stat / 100), rel=1e-14)


@FAST
@given(
    st.integers(2, 5).flatmap(
        lambda r: st.integers(2, 5).flatmap(
            lambda c: st.lists(
                st.lists(st.integers(1, 60), min_size=c, max_size=c), min_size=r, max_size=r
            )
        )
    )
)
def test_chi2_matches_scipy(table):
    t = np.array(table)
    ours = chi2_independence(t)
    theirs = sps.chi2_contingency(t, correction=False)
    assert ours.statistic == pytest.approx(theirs.statistic, rel=1e-10, abs=1e-12)
    assert ours.dof == theirs.dof
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-9, abs=1e-15)
    assert ours.cramers_v == pytest.approx(association(t, method="cramer"), rel=1e-9, abs=1e-12)


def test_chi2_drops_empty_rows_and_columns():
    table = np.array([[50, 30, 0, 20], [10, 60, 0, 30], [0, 0, 0, 0]])
    assert chi2_independence(table) == chi2_independence(table[:2][:, [0, 1, 3]])
    single = chi2_independence([[3, 4, 5], [0, 0, 0]])
    assert (single.statistic, single.dof, single.p_value) == (0.0, 0, 1.0)
    with pytest.raises(ValueError):
        chi2_independence([[1, -1], [2, 3]])


# --------------------------------------------------------------------------- TOST


def phi(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2))


def test_tost_hand_calculation():
    # 25.0% of 1000 vs 24.0% of 1000, margin 5 points.
    res = tost_two_proportions(250, 1000, 240, 1000)
    se = math.sqrt(0.25 * 0.75 / 1000 + 0.24 * 0.76 / 1000)
    p_lower = 1 - phi((0.01 + 0.05) / se)
    p_upper = phi((0.01 - 0.05) / se)
    assert res.diff == pytest.approx(0.01)
    assert res.se == pytest.approx(se, rel=1e-12)
    assert res.p_value == pytest.approx(max(p_lower, p_upper), rel=1e-9)
    assert res.p_value == pytest.approx(0.018773, abs=1e-6)
    assert res.equivalent
    z90 = 1.6448536269514722  # Phi^-1(0.95)
    assert res.ci90 == pytest.approx((0.01 - z90 * se, 0.01 + z90 * se), rel=1e-12)


counts = st.integers(2, 3000).flatmap(lambda n: st.tuples(st.integers(1, n - 1), st.just(n)))


@FAST
@given(counts, counts, st.sampled_from([0.02, 0.05, 0.1]))
def test_tost_matches_statsmodels_wald(g1, g2, margin):
    (x1, n1), (x2, n2) = g1, g2
    ours = tost_two_proportions(x1, n1, x2, n2, margin=margin)
    theirs = tost_proportions_2indep(x1, n1, x2, n2, -margin, margin, method="wald", compare="diff")
    assert ours.p_value == pytest.approx(float(theirs.pvalue), rel=1e-9, abs=1e-300)


@FAST
@given(counts, counts, st.sampled_from([0.02, 0.05, 0.1]), st.sampled_from([0.01, 0.05, 0.1]))
def test_tost_decision_is_the_interval_inside_the_margin(g1, g2, margin, alpha):
    (x1, n1), (x2, n2) = g1, g2
    res = tost_two_proportions(x1, n1, x2, n2, margin=margin, alpha=alpha)
    lo, hi = res.ci90
    assume(abs(max(-lo, hi) - margin) > 1e-9)  # not on the boundary to rounding
    assert res.equivalent == (-margin < lo and hi < margin)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # statsmodels' ratio/odds paths at x = 0
@FAST
@given(
    st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.sampled_from([0.02, 0.05, 0.1]),
)
def test_tost_agresti_caffo_matches_statsmodels(g1, g2, margin):
    (x1, n1), (x2, n2) = g1, g2
    ours = tost_two_proportions(x1, n1, x2, n2, margin=margin, method="agresti-caffo")
    theirs = tost_proportions_2indep(
        x1, n1, x2, n2, -margin, margin, method="agresti-caffo", compare="diff"
    )
    assert ours.p_value == pytest.approx(float(theirs.pvalue), rel=1e-9, abs=1e-300)
    assert ours.diff == pytest.approx(x1 / n1 - x2 / n2)


def test_tost_agresti_caffo_does_not_call_two_empty_small_samples_equivalent():
    # 0 of 30 vs 0 of 30: Wald has se = 0 and says "equivalent, p = 0"; Agresti-Caffo does not.
    assert tost_two_proportions(0, 30, 0, 30).equivalent
    ac = tost_two_proportions(0, 30, 0, 30, method="agresti-caffo")
    assert not ac.equivalent and ac.p_value > 0.05 and ac.se > 0
    with pytest.raises(ValueError, match="unknown method"):
        tost_two_proportions(1, 10, 1, 10, method="exact")


def test_tost_zero_variance_and_validation():
    same = tost_two_proportions(0, 100, 0, 80)
    assert same.equivalent and same.p_value == 0.0 and same.se == 0.0
    apart = tost_two_proportions(0, 100, 80, 80)
    assert not apart.equivalent and apart.p_value == 1.0
    for args in [(5, 0, 1, 10), (11, 10, 1, 10), (-1, 10, 1, 10)]:
        with pytest.raises(ValueError):
            tost_two_proportions(*args)
    with pytest.raises(ValueError):
        tost_two_proportions(1, 10, 1, 10, margin=0)
    with pytest.raises(ValueError):
        tost_two_proportions(1, 10, 1, 10, alpha=0.5)


def two_levels(rng, spread):
    """Two disjoint sets of 20 claims with 75 generations each; claim rates vary by spread."""

    def level(tag, mean):
        p = np.clip(rng.normal(mean, spread, size=20), 0.01, 0.99)
        y = (rng.random((20, 75)) < p[:, None]).astype(float).ravel()
        return y, np.repeat([f"{tag}_{i:02d}" for i in range(20)], 75)

    return (*level("L1", 0.25), *level("L2", 0.24))


def test_clustered_tost_se_matches_statsmodels_cluster_robust():
    rng = np.random.default_rng(31)
    ya, ca, yb, cb = two_levels(rng, spread=0.08)
    res = tost_two_proportions_clustered(ya, ca, yb, cb)
    # Each group's mean as an intercept-only OLS with cluster-robust (CR1) covariance.
    var = 0.0
    for y, c in ((ya, ca), (yb, cb)):
        fit = OLS(y, np.ones_like(y)).fit(
            cov_type="cluster", cov_kwds={"groups": pd.factorize(c)[0]}
        )
        var += float(fit.bse[0]) ** 2
    assert res.diff == pytest.approx(ya.mean() - yb.mean(), rel=1e-12)
    assert res.se == pytest.approx(math.sqrt(var), rel=1e-10)
    # Claim-to-claim spread makes the robust SE larger than the row-level Wald SE.
    simple = tost_two_proportions(int(ya.sum()), ya.size, int(yb.sum()), yb.size)
    assert res.se > 1.5 * simple.se


def test_clustered_tost_with_singleton_clusters_is_wald_with_n_minus_one():
    # One row per cluster: G/(G-1) * sum (y - p)^2 / n^2 = p(1 - p) / (n - 1).
    ya = np.array([1] * 30 + [0] * 70, float)
    yb = np.array([1] * 20 + [0] * 60, float)
    res = tost_two_proportions_clustered(
        ya, [f"a{i}" for i in range(100)], yb, [f"b{i}" for i in range(80)]
    )
    expected = math.sqrt(0.3 * 0.7 / 99 + 0.25 * 0.75 / 79)
    assert res.se == pytest.approx(expected, rel=1e-12)


def test_clustered_tost_refuses_shared_or_single_clusters():
    with pytest.raises(ValueError):
        tost_two_proportions_clustered([1, 0], ["a", "b"], [1, 0], ["b", "c"])
    with pytest.raises(ValueError):
        tost_two_proportions_clustered([1, 0], ["a", "a"], [1, 0], ["b", "c"])


# --------------------------------------------------------------------------- small helpers


def test_claim_spread():
    spread = claim_spread({"L1_US_01": 0.193, "L3_US_02": 0.303, "L2_US_04": 0.25})
    assert (spread.min, spread.max) == (0.193, 0.303)
    assert spread.spread_pp == pytest.approx(11.0)
    assert claim_spread(pd.Series([0.5, np.nan, 0.2])) == pytest.approx((0.2, 0.5, 30.0))
    with pytest.raises(ValueError):
        claim_spread([])


def test_fallacy_density_hand_value():
    # Rows with tokens: 2 fallacies / 100 tokens -> 2.0; 0 / 50 -> 0.0. Mean 1.0. The
    # zero-token row (a failed or empty reply) is left out.
    assert fallacy_density([1, 0, 1], [1, 0, 0], [0, 0, 1], [100, 50, 0]) == 1.0
    assert math.isnan(fallacy_density([1], [0], [0], [0]))


@FAST
@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.integers(0, 1), st.integers(0, 1), st.integers(0, 900)),
        min_size=1,
        max_size=50,
    )
)
def test_fallacy_density_matches_loop(rows):
    ratios = [(w + a + r) / t * 100 for w, a, r, t in rows if t > 0]
    got = fallacy_density(*(list(col) for col in zip(*rows, strict=True)))
    if ratios:
        assert got == pytest.approx(sum(ratios) / len(ratios), rel=1e-12)
    else:
        assert math.isnan(got)


def test_run_count_distribution_hand_example():
    cells = ["A"] * 5 + ["B"] * 5 + ["C"] * 5 + ["D"] * 3
    refusal = [0] * 5 + [1, 1, 0, 0, 0] + [1] * 5 + [1, 1, 1]
    dist = run_count_distribution(refusal, cells)
    # A: 0 refusals, B: 2, C: 5, D: 3 of only 3 samples (counted under "3").
    assert dist == {"0": 1, "1": 0, "2": 1, "3": 1, "4": 0, "5": 1}
    assert incomplete_cells(cells) == 1


@FAST
@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 1)), max_size=60))
def test_run_count_distribution_matches_counter(rows):
    per_cell: Counter = Counter()
    sizes: Counter = Counter()
    for cell, refused in rows:
        sizes[cell] += 1
        per_cell[cell] += refused
    assume(all(n <= 5 for n in sizes.values()))
    expected = Counter(per_cell[c] for c in sizes)
    dist = run_count_distribution([r for _, r in rows], [c for c, _ in rows])
    assert dist == {str(i): expected.get(i, 0) for i in range(6)}
    assert sum(dist.values()) == len(sizes)
    assert incomplete_cells([c for c, _ in rows]) == sum(n < 5 for n in sizes.values())


def test_run_count_distribution_keys_and_limits():
    keys = [("gpt", "L1_US_01", "p1")] * 5 + [("gpt", "L1_US_01", "p2")] * 5
    frame = pd.DataFrame(keys, columns=["model", "claim", "template"])
    refusal = [1] * 5 + [0, 0, 0, 0, 1]
    expected = {"0": 0, "1": 1, "2": 0, "3": 0, "4": 0, "5": 1}
    assert run_count_distribution(refusal, keys) == expected
    assert run_count_distribution(refusal, frame) == expected
    assert run_count_distribution([], []) == dict.fromkeys("012345", 0)
    with pytest.raises(ValueError):
        run_count_distribution([0] * 6, ["A"] * 6)  # six samples in a five-run cell
