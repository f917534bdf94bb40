"""Cascaded judging's estimate: equal to ppi_py on an iid sample (point estimate and lambda to
1e-9), its claim-bootstrap interval covering the full-judging consensus rate at the planner's
share, the stratified form weighing strata by N_h / n_h, and the share the planner gives."""

from __future__ import annotations

import numpy as np
import ppi_py  # the reference implementation (dev dependency)
import pytest

from deflectbench.analysis.cascade import cascade_rates, share_for_halfwidth
from deflectbench.analysis.cascade.size import (
    MIN_EXPECTED,
    clustered_variance,
    consensus_variance,
)
from deflectbench.analysis.plan.components import Z95, judged_share_variance


def _ppi_py_lam(y, yhat, yhat_u, w=None) -> float:
    """ppi_py's fitted lambda, by its own recipe (ppi_mean_pointestimate with lam=None)."""
    from ppi_py.ppi import _calc_lam_glm
    from ppi_py.utils import construct_weight_vector, reshape_to_2d

    Y, Yh, Yu = reshape_to_2d(y), reshape_to_2d(yhat), reshape_to_2d(yhat_u)
    wl = construct_weight_vector(len(y), w, vectorized=True)
    wu = construct_weight_vector(len(yhat_u), None, vectorized=True)
    theta1 = (wu * Yu).mean(0) + (wl * (Y - Yh)).mean(0)
    return float(
        _calc_lam_glm(
            wl * (Y - theta1), wl * (Yh - theta1), wu * (Yu - theta1), np.eye(1), clip=True
        )
    )


def _iid(seed: int, n_answers: int, share: float, rate: float, miss: float, false: float):
    """Independent answers: the consensus y, a cheap judge f missing positives at ``miss`` and
    calling negatives positive at ``false``, and a Bernoulli(share) sample."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n_answers) < rate).astype(float)
    flip = np.where(y == 1, rng.random(n_answers) < miss, rng.random(n_answers) < false)
    f = np.where(flip, 1 - y, y)
    sampled = rng.random(n_answers) < share
    return y, f, sampled


@pytest.mark.parametrize(
    "seed,n_answers,share,rate,miss,false",
    [
        (0, 2000, 0.1, 0.3, 0.2, 0.05),
        (1, 6000, 0.05, 0.08, 0.3, 0.02),
        (2, 500, 0.3, 0.5, 0.1, 0.1),
        (3, 1200, 0.2, 0.6, 0.4, 0.3),
    ],
)
def test_iid_equals_ppi_py(seed, n_answers, share, rate, miss, false):
    y, f, sampled = _iid(seed, n_answers, share, rate, miss, false)
    expensive = np.where(sampled, y, np.nan)
    (group,) = cascade_rates(
        f,
        np.arange(n_answers),  # every answer its own claim: independent items
        [("m",)] * n_answers,
        ["m"] * n_answers,
        sampled,
        expensive,
        resamples=50,
    )
    ours = group.estimates["ppi++"][0]
    # ppi_py: the labelled items are the sample (y, f), the prediction set every answer (f)
    point = float(ppi_py.ppi_mean_pointestimate(y[sampled], f[sampled], f, lam=None)[0])
    lam = _ppi_py_lam(y[sampled], f[sampled], f)
    assert ours.rate == pytest.approx(point, abs=1e-9)
    assert ours.details["lam"] == pytest.approx(lam, abs=1e-9)
    assert group.answers == n_answers and group.labelled == int(sampled.sum())
    # beside it: the cheap judge's rate on all, the expensive judges' on the sample alone
    assert group.estimates["judged"][0].rate == pytest.approx(f.mean(), abs=1e-12)
    assert group.estimates["labels"][0].rate == pytest.approx(y[sampled].mean(), abs=1e-12)


def test_stratified_sample_is_weighted_n_h_over_n_h():
    """Two framings sampled at 5% and 40% under one model's estimate: the weights N_h / n_h
    make it ppi_py's weighted estimate (w = N_h / n_h on the sample)."""
    rng = np.random.default_rng(7)
    n = 4000
    framing = np.where(rng.random(n) < 0.5, "a", "b")
    rate = np.where(framing == "a", 0.1, 0.6)
    y = (rng.random(n) < rate).astype(float)
    f = np.where(rng.random(n) < 0.15, 1 - y, y)
    share = np.where(framing == "a", 0.05, 0.4)
    sampled = rng.random(n) < share
    expensive = np.where(sampled, y, np.nan)
    (group,) = cascade_rates(
        f, np.arange(n), [("m",)] * n, list(framing), sampled, expensive, resamples=20
    )
    big = {h: (framing == h).sum() for h in "ab"}
    small = {h: (sampled & (framing == h)).sum() for h in "ab"}
    w = np.array([big[h] / small[h] for h in framing[sampled]])
    point = float(ppi_py.ppi_mean_pointestimate(y[sampled], f[sampled], f, lam=None, w=w)[0])
    ours = group.estimates["ppi++"][0]
    assert ours.rate == pytest.approx(point, abs=1e-9)
    assert ours.details["lam"] == pytest.approx(_ppi_py_lam(y[sampled], f[sampled], f, w), abs=1e-9)
    # unweighted, the over-sampled framing b (rate 0.6) would pull the labels' mean up
    assert group.estimates["labels"][0].rate == pytest.approx(
        np.sum(w * y[sampled]) / np.sum(w), abs=1e-12
    )
    assert abs(group.estimates["labels"][0].rate - y.mean()) < abs(y[sampled].mean() - y.mean())


def test_share_for_halfwidth_inverts_the_planners_variance():
    n, v, h, rho = 3000, 2e-4, 0.03, 0.6
    r = share_for_halfwidth(h, n, v, rho=rho)
    total = v + judged_share_variance(0.25, rho, r, n)
    assert Z95 * np.sqrt(total) == pytest.approx(h, rel=1e-9)
    assert share_for_halfwidth(h, n, (h / Z95) ** 2 * 1.01) == 1.0  # out of reach: all
    assert share_for_halfwidth(0.4, n, 0.0) == pytest.approx(MIN_EXPECTED / n)  # the floor


def test_clustered_variance_is_the_claim_means_spread():
    y = np.array([1, 0, 1, 1, 0, 0, 1, 1.0])
    c = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    means = np.array([0.5, 1.0, 0.0, 1.0])
    assert clustered_variance(y, c) == pytest.approx(means.var(ddof=1) / 4, abs=1e-15)


def _clustered_world(rng, claims: int, per_claim: int, rate: float):
    """Answers clustered by claim (claim rates ~ Beta around ``rate`` with the paper's spread,
    sd 2.75 pp); a cheap judge that misses 25% of positives and calls 8% of negatives
    positive."""
    k = rate * (1 - rate) / 0.0275**2 - 1.0
    p = rng.beta(rate * k, (1 - rate) * k, claims)
    claim = np.repeat(np.arange(claims), per_claim)
    y = (rng.random(claim.size) < p[claim]).astype(float)
    u = rng.random(claim.size)
    f = np.where(y == 1, (u >= 0.25).astype(float), (u < 0.08).astype(float))
    return claim, y, f


def coverage(reps: int, *, claims: int, per_claim: int, rate: float, halfwidth: float, seed: int):
    """(covered, replications, mean share, mean half-width): the cascaded PPI++ interval
    against the full-judging consensus rate, the share from the planner."""
    rng = np.random.default_rng(seed)
    hits, shares, widths = 0, [], []
    for r in range(reps):
        claim, y, f = _clustered_world(rng, claims, per_claim, rate)
        v = consensus_variance(clustered_variance(f, claim))
        share = share_for_halfwidth(halfwidth, y.size, v)
        sampled = rng.random(y.size) < share
        (g,) = cascade_rates(
            f,
            claim,
            [("m",)] * y.size,
            ["m"] * y.size,
            sampled,
            np.where(sampled, y, np.nan),
            resamples=300,
            seed=r,
        )
        e = g.estimates["ppi++"][0]
        assert e.ci95 is not None
        hits += e.ci95[0] <= y.mean() <= e.ci95[1]
        shares.append(share)
        widths.append((e.ci95[1] - e.ci95[0]) / 2)
    return hits, reps, float(np.mean(shares)), float(np.mean(widths))


def test_coverage_of_the_full_judging_consensus_at_the_planners_share():
    """100 replications (about 10 s): the 95% interval covers the rate full judging would
    give in at least 90 of 100 (bench/cascade_coverage.py measures more)."""
    hits, reps, share, width = coverage(
        100, claims=60, per_claim=50, rate=0.3, halfwidth=0.05, seed=2026
    )
    assert share < 0.5  # a real saving: the expensive judges see under half the answers
    assert hits / reps >= 0.90, (hits, reps, share, width)


def _three_layers(rng, claims: int, per_claim: int, share: float, labelled: float):
    """Truth h clustered by claim; the consensus c errs on h (10% either way), the cheap judge
    f on c (misses 25% of positives, 8% false positives); S a Bernoulli(share) sample, L a
    Bernoulli(labelled) part of S."""
    p = rng.beta(0.3 * 8, 0.7 * 8, claims)
    claim = np.repeat(np.arange(claims), per_claim)
    h = (rng.random(claim.size) < p[claim]).astype(float)
    c = np.where(rng.random(claim.size) < 0.10, 1 - h, h)
    u = rng.random(claim.size)
    f = np.where(c == 1, (u >= 0.25).astype(float), (u < 0.08).astype(float))
    in_s = rng.random(claim.size) < share
    in_l = in_s & (rng.random(claim.size) < labelled)
    return claim, h, c, f, in_s, in_l


def test_two_layers_equal_two_ppi_py_steps():
    """Both layers on an iid sample: theta_T = theta2 + lam2 (theta_C - mean_S c), each step
    ppi_py's estimate and lambda."""
    from deflectbench.analysis.cascade.layers import truth_rates

    rng = np.random.default_rng(11)
    n = 3000
    _, h, c, f, in_s, in_l = _three_layers(rng, n, 1, 0.3, 0.4)
    (e,) = truth_rates(
        f, np.where(in_s, c, np.nan), np.where(in_l, h, np.nan), np.arange(n), resamples=20
    )
    theta_c = float(ppi_py.ppi_mean_pointestimate(c[in_s], f[in_s], f, lam=None)[0])
    lam1 = _ppi_py_lam(c[in_s], f[in_s], f)
    theta2 = float(ppi_py.ppi_mean_pointestimate(h[in_l], c[in_l], c[in_s], lam=None)[0])
    lam2 = _ppi_py_lam(h[in_l], c[in_l], c[in_s])
    assert e.details["lam_cheap"] == pytest.approx(lam1, abs=1e-9)
    assert e.details["lam_consensus"] == pytest.approx(lam2, abs=1e-9)
    assert e.rate == pytest.approx(theta2 + lam2 * (theta_c - c[in_s].mean()), abs=1e-9)


def test_two_layers_cover_the_peoples_rate():
    """100 replications: the interval covers the people's rate over every answer in >= 90."""
    from deflectbench.analysis.cascade.layers import truth_rates

    rng = np.random.default_rng(5)
    hits = 0
    for r in range(100):
        claim, h, c, f, in_s, in_l = _three_layers(rng, 60, 50, 0.2, 0.3)
        (e,) = truth_rates(
            f,
            np.where(in_s, c, np.nan),
            np.where(in_l, h, np.nan),
            claim,
            resamples=300,
            seed=r,
        )
        assert e.ci95 is not None
        hits += e.ci95[0] <= h.mean() <= e.ci95[1]
    assert hits >= 90, hits
