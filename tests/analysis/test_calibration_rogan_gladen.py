"""Rogan-Gladen against a hand-worked example, and its interval carries the calibration's error."""

from __future__ import annotations

import numpy as np
import pytest

from deflectbench.analysis.calibration import estimate_rates
from deflectbench.analysis.calibration.rogan_gladen import rogan_gladen


def _hand_example():
    """20 labelled items: 10 human positives (8 judged positive: sens 0.8), 10 human negatives
    (1 judged positive: spec 0.9); 100 target generations, 30 judged positive: p_obs 0.3.
    Corrected = (0.3 + 0.9 - 1) / (0.8 + 0.9 - 1) = 0.2 / 0.7 = 2/7."""
    human = np.r_[np.ones(10), np.zeros(10)]
    judged = np.r_[np.ones(8), np.zeros(2), np.ones(1), np.zeros(9)]
    target = np.r_[np.ones(30), np.zeros(70)]
    return target, judged, human


def test_the_hand_worked_example():
    assert rogan_gladen(0.3, 0.8, 0.9) == pytest.approx(2 / 7, abs=1e-12)
    target, judged, human = _hand_example()
    claims_t = np.arange(100) % 10
    claims_l = np.arange(20) % 10
    out = estimate_rates(target, claims_t, judged, human, claims_l, None, methods=("rogan-gladen",))
    est = out["rogan-gladen"][0]
    assert est.rate == pytest.approx(2 / 7, abs=1e-12)
    assert est.details["sensitivity"] == pytest.approx(0.8)
    assert est.details["specificity"] == pytest.approx(0.9)
    assert est.details["p_obs"] == pytest.approx(0.3)


def test_weights_enter_sensitivity_and_specificity():
    """The two positives the judge missed weigh 3 each: sens = 8 / (8 + 6) = 4/7, so the
    corrected rate is 0.2 / (4/7 + 0.9 - 1) = 0.2 / (33/70) = 14/33."""
    target, judged, human = _hand_example()
    w = np.r_[np.ones(8), 3.0, 3.0, np.ones(10)]
    out = estimate_rates(
        target, np.arange(100) % 10, judged, human, np.arange(20) % 10, w, methods=("rogan-gladen",)
    )
    est = out["rogan-gladen"][0]
    assert est.details["sensitivity"] == pytest.approx(4 / 7)
    assert est.rate == pytest.approx(14 / 33, abs=1e-12)


def test_clipped_to_the_unit_interval():
    assert rogan_gladen(0.05, 0.8, 0.9) == 0.0  # (0.05 - 0.1) / 0.7 < 0
    assert rogan_gladen(0.95, 0.8, 0.9) == 1.0  # 0.85 / 0.7 > 1
    with pytest.raises(ValueError, match="better than chance"):
        rogan_gladen(0.3, 0.5, 0.5)


def test_the_interval_is_wider_than_with_sens_and_spec_taken_as_exact():
    """garak's open point: re-measuring sens and spec in each replicate widens the interval
    beyond the judged interval mapped through fixed sens and spec."""
    rng = np.random.default_rng(5)
    n, claims = 2000, 50
    claim = rng.integers(0, claims, n)
    truth = (rng.random(n) < 0.2).astype(float)
    judged = np.where(rng.random(n) < 0.1, 1 - truth, truth)
    lab = rng.choice(n, 150, replace=False)
    out = estimate_rates(
        judged, claim, judged[lab], truth[lab], claim[lab], None, methods=("judged", "rogan-gladen")
    )
    rg, jd = out["rogan-gladen"][0], out["judged"][0]
    sens, spec = rg.details["sensitivity"], rg.details["specificity"]
    fixed = [rogan_gladen(p, sens, spec) for p in jd.ci95]
    assert rg.ci95[0] <= rg.rate <= rg.ci95[1]
    assert rg.ci95[1] - rg.ci95[0] > 1.5 * (fixed[1] - fixed[0])
