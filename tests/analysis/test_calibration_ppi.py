"""PPI++ for the mean equals ppi_py's point estimate, lambda and normal CI (independent items)."""

from __future__ import annotations

import numpy as np
import ppi_py  # the reference implementation (dev dependency)
import pytest

from deflectbench.analysis.calibration.moments import labelled_terms, target_terms, total
from deflectbench.analysis.calibration.ppi import ppi_mean, ppi_mean_moments


def _fixture(seed: int, n: int, big_n: int, rate: float, flip: float, weighted: str):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < rate).astype(float)
    yhat = np.where(rng.random(n) < flip, 1 - y, y)
    truth_u = rng.random(big_n) < rate
    yhat_u = np.where(rng.random(big_n) < flip, ~truth_u, truth_u).astype(float)
    w = rng.uniform(0.3, 4.0, n) if weighted in ("labelled", "both") else None
    w_u = rng.uniform(0.5, 2.0, big_n) if weighted == "both" else None
    return y, yhat, yhat_u, w, w_u


FIXTURES = [
    (0, 40, 500, 0.3, 0.05, "none"),
    (1, 100, 2000, 0.08, 0.1, "none"),
    (2, 25, 300, 0.5, 0.2, "labelled"),
    (3, 60, 900, 0.15, 0.03, "labelled"),
    (4, 80, 400, 0.4, 0.15, "both"),
    (5, 200, 200, 0.6, 0.3, "both"),  # as many labels as targets
]


def _ppi_py_lam(y, yhat, yhat_u, w, w_u) -> float:
    """ppi_py's fitted lambda, by its own recipe (ppi_mean_pointestimate with lam=None)."""
    from ppi_py.ppi import _calc_lam_glm
    from ppi_py.utils import construct_weight_vector, reshape_to_2d

    Y, Yh, Yu = reshape_to_2d(y), reshape_to_2d(yhat), reshape_to_2d(yhat_u)
    wl = construct_weight_vector(len(y), w, vectorized=True)
    wu = construct_weight_vector(len(yhat_u), w_u, vectorized=True)
    theta1 = (wu * Yu).mean(0) + (wl * (Y - Yh)).mean(0)
    return float(
        _calc_lam_glm(
            wl * (Y - theta1), wl * (Yh - theta1), wu * (Yu - theta1), np.eye(1), clip=True
        )
    )


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f"seed{f[0]}-{f[-1]}")
def test_point_estimate_lambda_and_ci_equal_ppi_py(fixture):
    y, yhat, yhat_u, w, w_u = _fixture(*fixture)
    ours = ppi_mean(y, yhat, yhat_u, w=w, w_unlabeled=w_u)
    point = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=None, w=w, w_unlabeled=w_u)
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05, lam=None, w=w, w_unlabeled=w_u)
    assert ours.estimate == pytest.approx(float(np.ravel(point)[0]), abs=1e-9)
    assert ours.lam == pytest.approx(_ppi_py_lam(y, yhat, yhat_u, w, w_u), abs=1e-9)
    assert ours.lo == pytest.approx(float(np.ravel(lo)[0]), abs=1e-9)
    assert ours.hi == pytest.approx(float(np.ravel(hi)[0]), abs=1e-9)


@pytest.mark.parametrize("lam", [0.0, 0.4, 1.0])
def test_fixed_lambda_equals_ppi_py(lam):
    y, yhat, yhat_u, w, w_u = _fixture(7, 50, 600, 0.25, 0.1, "both")
    ours = ppi_mean(y, yhat, yhat_u, lam=lam, w=w, w_unlabeled=w_u)
    point = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam, w=w, w_unlabeled=w_u)
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05, lam=lam, w=w, w_unlabeled=w_u)
    assert ours.lam == lam
    assert ours.estimate == pytest.approx(float(np.ravel(point)[0]), abs=1e-9)
    assert (ours.lo, ours.hi) == pytest.approx(
        (float(np.ravel(lo)[0]), float(np.ravel(hi)[0])), abs=1e-9
    )


def test_lambda_zero_is_the_labels_mean_and_one_is_ppi():
    y, yhat, yhat_u, _, _ = _fixture(8, 30, 300, 0.3, 0.1, "none")
    assert ppi_mean(y, yhat, yhat_u, lam=0.0).estimate == pytest.approx(y.mean(), abs=1e-12)
    ppi = yhat_u.mean() + (y - yhat).mean()
    assert ppi_mean(y, yhat, yhat_u, lam=1.0).estimate == pytest.approx(ppi, abs=1e-12)


def test_a_constant_judge_gives_lambda_zero():
    y = np.array([1.0, 0, 0, 1, 0])
    est = ppi_mean(y, np.zeros(5), np.zeros(50))
    assert est.lam == 0.0 and est.estimate == pytest.approx(0.4)


def test_lambda_is_clipped_to_the_unit_interval():
    # A judge that says the opposite of the humans: the fitted lambda would be negative.
    y = np.array([1.0, 0, 1, 0, 1, 0, 0, 0])
    est = ppi_mean(y, 1 - y, np.r_[np.ones(10), np.zeros(30)])
    assert est.lam == 0.0


def test_moments_broadcast_over_replicates_like_one_at_a_time():
    y, yhat, yhat_u, w, _ = _fixture(9, 40, 200, 0.3, 0.1, "labelled")
    lab = total(labelled_terms(y[:, None], yhat[:, None], w))
    unl = total(target_terms(yhat_u[:, None], np.ones(yhat_u.size)))
    stacked = {k: np.stack([v, 2 * v]) for k, v in lab.items()}  # doubling every item
    unl2 = {k: np.stack([v, v]) for k, v in unl.items()}
    theta, lam = ppi_mean_moments(stacked, unl2)
    one = ppi_mean(y, yhat, yhat_u, w=w)
    assert theta[0, 0] == pytest.approx(one.estimate, abs=1e-12)
    assert lam[0, 0] == pytest.approx(one.lam, abs=1e-12)
    doubled = ppi_mean(np.r_[y, y], np.r_[yhat, yhat], yhat_u, w=np.r_[w, w])
    assert theta[1, 0] == pytest.approx(doubled.estimate, abs=1e-12)
    assert lam[1, 0] == pytest.approx(doubled.lam, abs=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"y": [1.0, 0], "yhat": [1.0]}, "y has 2 items"),
        ({"y": [1.0, np.nan], "yhat": [1.0, 0]}, "NaN"),
        ({"alpha": 1.5}, "alpha"),
        ({"w": [1.0]}, "weight vector"),
    ],
)
def test_bad_input_is_one_line(kwargs, message):
    args = {"y": [1.0, 0, 1], "yhat": [1.0, 0, 0], "yhat_unlabeled": [1.0, 0, 0, 1]} | kwargs
    with pytest.raises(ValueError, match=message):
        ppi_mean(args.pop("y"), args.pop("yhat"), args.pop("yhat_unlabeled"), **args)
