"""Horvitz-Thompson weights make the labels' mean unbiased for a stratified and a simple sample."""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest

from deflectbench.analysis.calibration import estimate_rates
from deflectbench.analysis.calibration.weights import inclusion_weights, uniform_weights

# Two strata: "common" has 6 generations (one positive), "rare" has 2 (one positive).
# The true rate is 2/8 = 1/4.
POPULATION = {"common": [1, 0, 0, 0, 0, 0], "rare": [1, 0]}
COUNTS = {name: len(items) for name, items in POPULATION.items()}


def _weighted_mean(labels, weights) -> Fraction:
    w = [Fraction(x).limit_denominator() for x in weights]
    return sum(wi * li for wi, li in zip(w, labels, strict=True)) / sum(w)


def test_the_hand_worked_weights():
    # 2 labels from "common" (N_h / n_h = 6/2 = 3) and both of "rare" (2/2 = 1).
    w = inclusion_weights(["common", "rare", "common", "rare"], COUNTS)
    assert w.tolist() == [3.0, 1.0, 3.0, 1.0]
    assert uniform_weights(3).tolist() == [1.0, 1.0, 1.0]


def test_stratified_sample_unbiased_by_exact_enumeration():
    """Every stratified sample (2 of common, 2 of rare: 15 equally likely samples)."""
    estimates, plain = [], []
    for common in combinations(POPULATION["common"], 2):
        labels = [*common, *POPULATION["rare"]]
        strata = ["common", "common", "rare", "rare"]
        estimates.append(_weighted_mean(labels, inclusion_weights(strata, COUNTS)))
        plain.append(Fraction(sum(labels), len(labels)))
    assert sum(estimates) / len(estimates) == Fraction(1, 4)
    assert sum(plain) / len(plain) == Fraction(1, 3)  # unweighted: the rare stratum over-counts


def test_simple_random_sample_unbiased_with_uniform_weights():
    """Every simple random sample of 4 of the 8 generations (70 samples), equal weights."""
    everyone = POPULATION["common"] + POPULATION["rare"]
    estimates = [_weighted_mean(sample, uniform_weights(4)) for sample in combinations(everyone, 4)]
    assert sum(estimates) / len(estimates) == Fraction(1, 4)
    # One stratum holding everything gives the same equal weights N/n.
    w = inclusion_weights(["all"] * 4, {"all": 8})
    assert w.tolist() == [2.0] * 4


def test_estimate_rates_uses_the_weights():
    labels = np.array([[1.0], [0.0], [1.0], [0.0]])  # common: 1, 0; rare: 1, 0
    w = inclusion_weights(["common", "common", "rare", "rare"], COUNTS)
    target = np.zeros((8, 1))
    out = estimate_rates(
        target, np.arange(8), labels, labels, np.arange(4), w, methods=("labels",), min_labels=1
    )
    assert out["labels"][0].rate == pytest.approx((3 * 1 + 1 * 1) / 8)


def test_a_sample_that_cannot_come_from_the_population_is_refused():
    with pytest.raises(ValueError, match="stratum 'other' of a labelled item is not in"):
        inclusion_weights(["other"], COUNTS)
    with pytest.raises(ValueError, match="stratum 'rare' has 3 labels but only 2 generations"):
        inclusion_weights(["rare"] * 3, COUNTS)
