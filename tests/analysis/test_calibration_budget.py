"""The label budget: ppi_py's power analysis quantities, and a half-width it actually reaches."""

from __future__ import annotations

import math

import numpy as np
import ppi_py  # the reference implementation (dev dependency)
import pytest

from deflectbench.analysis.calibration.budget import (
    label_power,
    labels_for_effective_n,
    labels_needed,
)
from deflectbench.analysis.calibration.ppi import ppi_mean


def _labels(seed, n, rate=0.3, flip=0.1):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < rate).astype(float)
    return y, np.where(rng.random(n) < flip, 1 - y, y)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_ppi_correlation_equals_ppi_py(seed, weighted):
    y, yhat = _labels(seed, 120)
    w = np.random.default_rng(seed).uniform(0.5, 3.0, y.size) if weighted else None
    ref = ppi_py.ppi_mean_power(y, yhat, cost_Y=1.0, cost_Yhat=0.01, effective_n=200, w=w)
    assert label_power(y, yhat, w).ppi_corr == pytest.approx(
        float(np.ravel(ref["ppi_corr"])[0]), abs=1e-9
    )


@pytest.mark.parametrize("n0", [150, 400, 900])
def test_labels_for_an_effective_n_match_ppi_py_cheapest_pair(n0):
    """ppi_py's cheapest (n, N) worth n0 classical labels: with M = n + N target generations
    our formula asks for the same n (up to ppi_py's rounding of n and N)."""
    y, yhat = _labels(3, 150)
    ref = ppi_py.ppi_mean_power(y, yhat, cost_Y=1.0, cost_Yhat=0.01, effective_n=n0)
    if ref["N"] == 0:
        pytest.fail("fixture should make PPI worth it")
    n = labels_for_effective_n(n0, float(np.ravel(ref["ppi_corr"])[0]), ref["n"] + ref["N"])
    assert n == pytest.approx(ref["n"], abs=1.5)


def test_the_budget_reaches_the_target_half_width():
    """Labelling the budgeted count of a planted population gives a normal PPI++ half-width
    close to the target (independent items)."""
    rng = np.random.default_rng(11)
    big_n = 20000
    truth = (rng.random(big_n) < 0.2).astype(float)
    judged = np.where(rng.random(big_n) < 0.08, 1 - truth, truth)
    first = rng.choice(big_n, 100, replace=False)
    more = labels_needed(truth[first], judged[first], big_n, target=0.02)
    assert more is not None and more > 0
    widths = []
    for rep in range(20):
        pick = np.random.default_rng(rep).choice(big_n, 100 + more, replace=False)
        est = ppi_mean(truth[pick], judged[pick], judged)
        widths.append((est.hi - est.lo) / 2)
    assert np.mean(widths) == pytest.approx(0.02, rel=0.15)


def test_enough_labels_need_none_more_and_the_impossible_says_none():
    y, yhat = _labels(4, 400)
    assert labels_needed(y, yhat, 5000, target=0.2) == 0
    assert labels_needed(y, yhat, 400, target=0.001) is None  # even all 400 are not enough


def test_clustering_asks_for_more():
    y, yhat = _labels(5, 100)
    plain = labels_needed(y, yhat, 10000, target=0.02)
    crowded = labels_needed(y, yhat, 10000, target=0.02, design_effect=2.0)
    # The judged rate's own claim-bootstrap variance, 10 x that of independent items.
    var_f = float(np.var(yhat))
    clustered = labels_needed(y, yhat, 10000, target=0.02, judged_variance=10 * var_f / 10000)
    assert crowded > plain and clustered > plain


@pytest.mark.parametrize(("seed", "big_m"), [(0, 2000), (1, 10000), (2, 500)])
def test_independent_items_follow_ppi_py_effective_n(seed, big_m):
    """Without clustering the budget is the smallest n whose effective n (ppi_py's formula,
    the estimator's M judged generations beside the n labels) reaches (z sigma / target)^2."""
    y, yhat = _labels(seed, 120, rate=0.25, flip=0.07)
    var_h, var_f = float(np.var(y)), float(np.var(yhat))
    rho = float(np.mean((y - y.mean()) * (yhat - yhat.mean()))) / math.sqrt(var_h * var_f)
    z, target = 1.959963984540054, 0.025

    def half(n):
        n_eff = n * (n + big_m) / (n + (1 - rho**2) * big_m)
        return z * math.sqrt(var_h / n_eff)

    more = labels_needed(y, yhat, big_m, target=target)
    if more is None:
        assert half(big_m) > target
        return
    n = 120 + more
    assert half(n) <= target * (1 + 1e-9)
    if more > 0:
        assert half(n - 1) > target


def test_labels_of_one_value_still_ask_for_labels():
    y = np.zeros(30)
    power = label_power(y, y)
    assert power.ppi_corr == 0.0
    assert power.sigma_sq == pytest.approx((0.5 / 31) * (1 - 0.5 / 31))
    assert labels_needed(y, y, 10000, target=0.01) > 0


def test_half_width_formula_by_hand():
    """sigma^2 = 0.21, rho = 0 (independent judge): n0 = (1.96 sigma / 0.03)^2 labels."""
    y = np.r_[np.ones(30), np.zeros(70)]
    yhat = np.r_[np.ones(15), np.zeros(15), np.ones(35), np.zeros(35)]  # rho = 0
    power = label_power(y, yhat)
    assert power.sigma_sq == pytest.approx(0.21) and power.ppi_corr == pytest.approx(0.0)
    z = 1.959963984540054
    assert labels_needed(y, yhat, 10**6) == math.ceil(z * z * 0.21 / 0.03**2) - 100


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"target": 0.0}, "target"),
        ({"design_effect": 0.0}, "design_effect"),
        ({"n_target": 5}, "smaller than the labels"),
    ],
)
def test_bad_input_is_one_line(kwargs, message):
    y, yhat = _labels(6, 20)
    args = {"n_target": 1000} | kwargs
    with pytest.raises(ValueError, match=message):
        labels_needed(y, yhat, **args)
    with pytest.raises(ValueError, match="at least 2"):
        labels_needed([1.0], [1.0], 10)
