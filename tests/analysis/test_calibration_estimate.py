"""estimate_rates: one claim-block bootstrap for every method, and a note instead of a number."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from deflectbench.analysis.calibration import METHODS, Estimate, estimate_rates
from deflectbench.analysis.calibration.ppi import ppi_mean
from deflectbench.analysis.stats import block_bootstrap_many


def _planted(seed=0, n=600, claims=30, n_lab=80, rates=(0.1, 0.3, 0.6), flip=0.08):
    rng = np.random.default_rng(seed)
    claim = rng.integers(0, claims, n)
    truth = (rng.random((n, len(rates))) < rates).astype(float)
    judged = np.where(rng.random(truth.shape) < flip, 1 - truth, truth)
    lab = rng.choice(n, n_lab, replace=False)
    return judged, claim, judged[lab], truth[lab], claim[lab]


def _all(*args, **kw):
    return estimate_rates(*args, methods=METHODS, **kw)


def test_every_method_gives_one_estimate_per_column():
    out = _all(*_planted(), None)
    assert list(out) == list(METHODS)
    for method, column in out.items():
        assert len(column) == 3
        for est in column:
            assert isinstance(est, Estimate) and est.method == method and est.n == 600
            assert est.rate is not None and est.ci95 is not None and est.note is None
            assert est.n_labels == (0 if method == "judged" else 80)
    assert 0.0 <= out["ppi++"][0].details["lam"] <= 1.0
    assert set(out["rogan-gladen"][1].details) >= {"sensitivity", "specificity", "p_obs"}


def test_judged_equals_the_paper_block_bootstrap():
    target, claim, lj, lh, lc = _planted()
    out = estimate_rates(target, claim, lj, lh, lc, None, methods=("judged",), seed=3)
    ref = block_bootstrap_many(target, claim, n_resamples=1000, seed=3)
    for j, est in enumerate(out["judged"]):
        assert est.rate == pytest.approx(ref.rate[j], abs=1e-12)
        assert est.ci95 == pytest.approx((ref.lo[j], ref.hi[j]), abs=1e-12)


def test_labels_is_the_weighted_mean_of_the_human_labels():
    target, claim, lj, lh, lc = _planted()
    w = np.linspace(1.0, 5.0, lh.shape[0])
    out = estimate_rates(target, claim, lj, lh, lc, w, methods=("labels",))
    for j, est in enumerate(out["labels"]):
        assert est.rate == pytest.approx(float(np.sum(w * lh[:, j]) / w.sum()), abs=1e-12)


def test_ppi_point_estimate_equals_the_item_level_ppi_mean():
    target, claim, lj, lh, lc = _planted(seed=4)
    w = np.linspace(0.5, 3.0, lh.shape[0])
    out = estimate_rates(target, claim, lj, lh, lc, w, methods=("ppi++",))
    for j, est in enumerate(out["ppi++"]):
        ref = ppi_mean(lh[:, j], lj[:, j], target[:, j], w=w)
        assert est.rate == pytest.approx(ref.estimate, abs=1e-12)
        assert est.details["lam"] == pytest.approx(ref.lam, abs=1e-12)


def test_the_same_seed_gives_the_same_intervals_and_another_seed_others():
    args = (*_planted(), None)
    a, b, c = _all(*args, seed=1), _all(*args, seed=1), _all(*args, seed=2)
    assert a == b
    assert a["ppi++"][0].ci95 != c["ppi++"][0].ci95


def test_a_claim_brings_its_labels_into_the_replicate():
    """Labels all in one claim: the labelled part of a replicate is there or not with it."""
    target, claim, lj, lh, lc = _planted(claims=10)
    keep = lc == lc[0]
    out = estimate_rates(
        target, claim, lj[keep], lh[keep], lc[keep], None, methods=("labels",), min_labels=1
    )
    est = out["labels"][0]
    # Replicates without that claim have no labels and are left out, and say so.
    assert 0.0 < est.details["undefined_replicates"] < 1.0
    # The claim's labels are always the same set: the bootstrap alone would say [rate, rate];
    # the exact (Clopper-Pearson) interval of their count is what is left.
    n, x = int((~np.isnan(lh[keep, 0])).sum()), float(np.nansum(lh[keep, 0]))
    ref = binomtest(int(x), n).proportion_ci(confidence_level=0.95, method="exact")
    assert est.ci95 == pytest.approx((ref.low, ref.high), abs=1e-9)


def test_columns_with_missing_values_count_their_own_n():
    target, claim, lj, lh, lc = _planted()
    target = target.copy()
    lh = lh.copy()
    target[:100, 1] = np.nan
    lh[:30, 2] = np.nan
    out = _all(target, claim, lj, lh, lc, None)
    assert [e.n for e in out["judged"]] == [600, 500, 600]
    assert [e.n_labels for e in out["labels"]] == [80, 80, 50]
    assert [e.n_labels for e in out["ppi++"]] == [80, 80, 50]


# --------------------------------------------------------------------------- degenerate cases


def test_no_labels_is_a_note_never_a_number():
    target, claim, *_ = _planted()
    out = _all(target, claim, np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, int), None)
    assert out["judged"][0].rate is not None
    for method in ("labels", "ppi++", "rogan-gladen"):
        for est in out[method]:
            assert est.rate is None and est.ci95 is None and est.note == "no labels"


def test_too_few_labels_says_how_many_are_needed():
    target, claim, lj, lh, lc = _planted()
    out = _all(target, claim, lj[:3], lh[:3], lc[:3], None)
    for method in ("labels", "ppi++", "rogan-gladen"):
        est = out[method][0]
        assert est.rate is None
        assert est.note == "3 labels (at least 10 needed)"
        assert est.n_labels == 3


def test_all_labels_of_one_value_leave_rogan_gladen_undefined():
    target, claim, lj, lh, lc = _planted()
    negatives = np.zeros_like(lh)
    out = _all(target, claim, lj, negatives, lc, None)
    assert out["rogan-gladen"][0].rate is None
    assert "sensitivity undefined" in out["rogan-gladen"][0].note
    assert out["ppi++"][0].rate is not None  # PPI++ needs no positive label
    positives = np.ones_like(lh)
    out = _all(target, claim, lj, positives, lc, None)
    assert "specificity undefined" in out["rogan-gladen"][0].note


def test_a_judge_no_better_than_chance_leaves_rogan_gladen_undefined():
    target, claim, _, lh, lc = _planted()
    contrary = 1 - lh  # the judge says the opposite of the humans: sens + spec = 0
    out = _all(target, claim, contrary, lh, lc, None)
    est = out["rogan-gladen"][0]
    assert est.rate is None and "no better than chance" in est.note


def test_one_claim_gives_a_rate_but_no_interval():
    target, _, lj, lh, _ = _planted()
    claim = np.zeros(target.shape[0], dtype=int)
    out = _all(target, claim, lj, lh, np.zeros(lh.shape[0], dtype=int), None)
    for method in METHODS:
        est = out[method][0]
        assert est.rate is not None and est.ci95 is None
        assert est.note == "one claim: no interval"


def test_no_target_generations():
    target, claim, lj, lh, lc = _planted()
    target = target.copy()
    target[:, 0] = np.nan
    out = _all(target, claim, lj, lh, lc, None)
    for method in METHODS:
        assert out[method][0].rate is None
        assert out[method][0].note == "no judged generations"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"labelled_human": np.full((80, 3), 2.0)}, "only 0, 1 and NaN"),
        ({"target": np.full((600, 3), -1.0)}, r"indicators in \[0, 1\]"),
        ({"labelled_claim": np.zeros(5, dtype=int)}, "one code per row"),
        ({"target_claim": np.zeros(600)}, "integer claim codes"),
        ({"labelled_weight": np.zeros(80)}, "positive and finite"),
        ({"labelled_judged": np.zeros((80, 2))}, "labelled_judged is"),
        ({"methods": ("ppi",)}, "unknown method 'ppi'"),
        ({"min_labels": 0}, "min_labels"),
        ({"resamples": 0}, "resamples"),
    ],
)
def test_bad_input_is_one_line(change, message):
    target, claim, lj, lh, lc = _planted()
    args = {
        "target": target,
        "target_claim": claim,
        "labelled_judged": lj,
        "labelled_human": lh,
        "labelled_claim": lc,
        "labelled_weight": None,
    } | change
    kw = {k: args.pop(k) for k in ("methods", "min_labels", "resamples") if k in args}
    with pytest.raises(ValueError, match=message):
        estimate_rates(**args, **kw)
