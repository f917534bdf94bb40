"""Dawid-Skene: a hand-computed EM step, and known confusion rates recovered on planted data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from deflectbench.analysis.calibration.latent import dawid_skene


def test_one_em_step_by_hand():
    """Three judges, four items. The start is each item's mean verdict:
    t0 = [1, 2/3, 1/3, 0]. M-step: pi = 1/2; judge 1 says [1, 1, 0, 0], so
    sens_1 = (1 + 2/3) / 2 = 5/6 and spec_1 = (2/3 + 1) / 2 = 5/6; judge 2 [1, 0, 1, 0]:
    sens_2 = (1 + 1/3) / 2 = 2/3, spec_2 = (1/3 + 1) / 2 = 2/3; judge 3 [1, 1, 0, 0] like
    judge 1. E-step for item 2 (verdicts [1, 0, 1]): posterior odds =
    (sens_1 (1 - sens_2) sens_3) / ((1 - spec_1) spec_2 (1 - spec_3))
    = (5/6 * 1/3 * 5/6) / (1/6 * 2/3 * 1/6)."""
    x = np.array([[1, 1, 1], [1, 0, 1], [0, 1, 0], [0, 0, 0]], dtype=float)
    fit = dawid_skene(x, max_iter=1)
    assert fit.prevalence == pytest.approx(0.5)
    assert fit.sensitivity == pytest.approx([5 / 6, 2 / 3, 5 / 6])
    assert fit.specificity == pytest.approx([5 / 6, 2 / 3, 5 / 6])
    odds = (5 / 6 * 1 / 3 * 5 / 6) / (1 / 6 * 2 / 3 * 1 / 6)
    assert fit.posterior[1] == pytest.approx(odds / (1 + odds))
    odds0 = (1 / 6 * 1 / 3 * 1 / 6) / (5 / 6 * 2 / 3 * 5 / 6)  # item 4: all say 0
    assert fit.posterior[3] == pytest.approx(odds0 / (1 + odds0))
    assert fit.iterations == 1


def test_an_anchor_fixes_its_item_and_missing_verdicts_are_left_out():
    x = np.array([[1, np.nan], [1, 0], [0, 0], [np.nan, 1]])
    fit = dawid_skene(x, anchors=[np.nan, 0, np.nan, np.nan], max_iter=1)
    # Start: t0 = [1, 0 (anchored), 0, 1]; pi = 1/2; judge 1 judged items 1-3:
    # sens_1 = 1 / 1, spec_1 = (0 * 1 + 1 * 1) / 2 = 1/2 (clipped only at 1 - 1e-6).
    assert fit.posterior[1] == 0.0
    assert fit.sensitivity[0] == pytest.approx(1 - 1e-6)
    assert fit.specificity[0] == pytest.approx(0.5)
    # judge 2 judged items 2-4: t0 = [0, 0, 1] -> sens_2 = 1, spec_2 = 2/2 = 1 (clipped).
    assert fit.specificity[1] == pytest.approx(1 - 1e-6)


def test_recovers_planted_confusion_rates():
    rng = np.random.default_rng(0)
    items = 5000
    z = rng.random(items) < 0.15
    sens = np.array([0.92, 0.80, 0.97])  # two model judges and the rule-based judge
    spec = np.array([0.96, 0.90, 0.85])
    x = np.where(z[:, None], rng.random((items, 3)) < sens, rng.random((items, 3)) > spec)
    x = x.astype(float)
    x[rng.random(x.shape) < 0.15] = np.nan  # verdicts missing at random
    fit = dawid_skene(x)
    assert fit.converged
    assert fit.prevalence == pytest.approx(0.15, abs=0.015)
    assert fit.sensitivity == pytest.approx(sens, abs=0.03)
    assert fit.specificity == pytest.approx(spec, abs=0.02)


def test_anchors_pin_the_classes():
    """Two poor judges that agree mostly on the wrong items; labels anchor the truth."""
    rng = np.random.default_rng(1)
    items = 3000
    z = rng.random(items) < 0.3
    x = np.where(z[:, None], rng.random((items, 2)) < 0.7, rng.random((items, 2)) > 0.8)
    x = x.astype(float)
    anchors = np.full(items, np.nan)
    anchors[:600] = z[:600]
    fit = dawid_skene(x, anchors=anchors)
    assert fit.posterior[:600].tolist() == z[:600].astype(float).tolist()
    assert fit.prevalence == pytest.approx(0.3, abs=0.04)
    assert math.isfinite(fit.sensitivity.sum())


@pytest.mark.parametrize(
    ("verdicts", "anchors", "message"),
    [
        (np.array([1.0, 0.0]), None, "items x judges"),
        (np.array([[2.0, 0.0]]), None, "only 0, 1 and NaN"),
        (np.full((2, 2), np.nan), None, "no verdicts"),
        (np.ones((2, 2)), [1.0], "one entry per item"),
        (np.ones((2, 2)), [1.0, 3.0], "anchors must hold"),
    ],
)
def test_bad_input_is_one_line(verdicts, anchors, message):
    with pytest.raises(ValueError, match=message):
        dawid_skene(verdicts, anchors)
