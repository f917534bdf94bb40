"""Perfect judges (judged == human): the corrected estimate has nothing to correct.

What holds exactly: with every target generation labelled, PPI++, the judged and the labels-only
estimates and their intervals coincide; with labels on a subset, the rectifier vanishes, so
PPI (lam = 1) is the judged mean and PPI++ lies between the judged and the labels-only mean.
Its interval is narrower than labels-only on average over label samples; not in every sample
(an unrepresentative label sample under-states its own variance and the fitted lam follows it),
so that one is checked as an average. These are properties of the estimator's own bootstrap
interval (``min_disagreements=0``): by default labels that never disagree with the judges are
flagged and widened to the exact bound (tests/analysis/test_calibration_honest.py), because
n agreeing labels cannot tell a perfect judge from one erring at 3.7/n.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from deflectbench.analysis.calibration import estimate_rates
from deflectbench.analysis.calibration.ppi import ppi_mean

configs = st.tuples(
    st.integers(2, 25),  # claims
    st.integers(30, 400),  # target generations
    st.floats(0.03, 0.97),  # rate
    st.integers(0, 2**32 - 1),  # seed
)


def _population(claims, n, rate, seed):
    rng = np.random.default_rng(seed)
    claim = rng.integers(0, claims, n)
    bias = rng.normal(0.0, 0.1, claims)[claim]  # claims differ
    judged = (rng.random(n) < np.clip(rate + bias, 0.0, 1.0)).astype(float)[:, None]
    return rng, claim, judged


@settings(max_examples=40, deadline=None)
@given(configs)
def test_everything_labelled_gives_the_judged_estimate_and_interval(config):
    _, claim, judged = _population(*config)
    out = estimate_rates(judged, claim, judged, judged, claim, None, resamples=200, min_labels=1)
    ppi, jd, lab = out["ppi++"][0], out["judged"][0], out["labels"][0]
    assert ppi.rate == pytest.approx(jd.rate, abs=1e-12)
    assert lab.rate == pytest.approx(jd.rate, abs=1e-12)
    if len(set(claim.tolist())) > 1:
        assert ppi.ci95 == pytest.approx(jd.ci95, abs=1e-12)  # every target labelled: no flag
        assert ppi.flag is None
        # labels only: the hull of the claim bootstrap and the exact interval of the count
        x, n = int(judged[:, 0].sum()), judged.shape[0]
        exact = binomtest(x, n).proportion_ci(confidence_level=0.95, method="exact")
        want = (min(jd.ci95[0], exact.low), max(jd.ci95[1], exact.high))
        assert lab.ci95 == pytest.approx(want, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(configs, st.floats(0.05, 0.9))
def test_a_labelled_subset_rectifies_nothing(config, share):
    rng, claim, judged = _population(*config)
    n_lab = max(2, int(share * judged.shape[0]))
    pick = rng.choice(judged.shape[0], n_lab, replace=False)
    f, h = judged[:, 0], judged[pick, 0]
    assert ppi_mean(h, h, f, lam=1.0).estimate == pytest.approx(f.mean(), abs=1e-12)
    out = estimate_rates(
        judged, claim, judged[pick], judged[pick], claim[pick], None, resamples=50, min_labels=1
    )
    ppi, lam = out["ppi++"][0].rate, out["ppi++"][0].details["lam"]
    assert ppi == pytest.approx(lam * f.mean() + (1 - lam) * h.mean(), abs=1e-12)
    lo, hi = sorted((f.mean(), h.mean()))
    assert lo - 1e-12 <= ppi <= hi + 1e-12


@settings(max_examples=15, deadline=None)
@given(
    st.tuples(
        st.integers(5, 25), st.integers(150, 400), st.floats(0.1, 0.9), st.integers(0, 2**32 - 1)
    ),
    st.floats(0.1, 0.6),
)
def test_the_interval_is_no_wider_than_labels_only_on_average(config, share):
    rng, claim, judged = _population(*config)
    n_lab = int(share * judged.shape[0])
    widths = {"ppi++": [], "labels": []}
    for rep in range(12):
        pick = rng.choice(judged.shape[0], n_lab, replace=False)
        out = estimate_rates(
            judged,
            claim,
            judged[pick],
            judged[pick],
            claim[pick],
            None,
            resamples=200,
            seed=rep,
            min_disagreements=0,
        )
        for method, column in widths.items():
            lo, hi = out[method][0].ci95
            column.append(hi - lo)
    # In theory never wider (var(lam f + (1 - lam) h) <= var(h) when var(f) <= var(h)); equal
    # when the claims' spread dominates both, and then 200 resamples x 12 label samples leave a
    # Monte Carlo error of a few percent in the widths: 5% is that error, not a licence.
    assert np.mean(widths["ppi++"]) <= 1.05 * np.mean(widths["labels"])


def test_with_many_claims_and_few_labels_the_interval_is_clearly_narrower():
    """Where the judged set carries real information (25 claims, 10% labelled), PPI++ with
    perfect judges is markedly narrower than labels only: the average above is not vacuous."""
    rng, claim, judged = _population(25, 400, 0.3, 7)
    widths = {"ppi++": [], "labels": []}
    for rep in range(8):
        pick = rng.choice(judged.shape[0], judged.shape[0] // 10, replace=False)
        out = estimate_rates(
            judged,
            claim,
            judged[pick],
            judged[pick],
            claim[pick],
            None,
            resamples=200,
            seed=rep,
            min_disagreements=0,
        )
        for method, column in widths.items():
            lo, hi = out[method][0].ci95
            column.append(hi - lo)
    assert np.mean(widths["ppi++"]) < 0.9 * np.mean(widths["labels"])
