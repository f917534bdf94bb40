"""Loading labels for judge-error correction, and the corrected rates per model: validate's
one-label-per-item rule reused, the sample's Horvitz-Thompson weights against a hand-worked
two-stratum example, uniform weights for imported labels, and every degenerate input (no
labels, labels of another pack, all labels of one value, one claim, a model without labels)
a note, never a number. On a planted store, the corrected rate moves towards the truth."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest

from deflectbench.analysis.calibration.corrected import (
    check_correction,
    corrected_rates,
    with_rater,
)
from deflectbench.analysis.calibration.load import (
    MEASURES,
    calibration_inputs,
    outcome_matrix,
    read_calibration_inputs,
    stratum_of,
)
from deflectbench.analysis.validity.measures import human_outcome
from deflectbench.benchmark import default_benchmark
from deflectbench.records import HumanLabel
from deflectbench.store import Store
from deflectbench.vocab import FIELDS, OUTCOMES
from support.calibration_store import planted_store

K_REF = MEASURES.index(("outcome", "refusal"))


def _scored(n_per: dict[tuple[str, str, str], int], claims: int = 4) -> pd.DataFrame:
    """A scored table: ``n_per[(model, outcome, framing)]`` generations of each stratum, spread
    over ``claims`` claims, consensus fields set by the outcome's rung."""
    rows, g = [], 0
    for (model, outcome, framing), n in n_per.items():
        for i in range(n):
            g += 1
            values = dict.fromkeys(FIELDS, 0)
            rung = {"refusal": "refusal", "soft_refusal": "soft_refusal"}.get(outcome)
            if rung:
                values[rung] = 1
            if outcome == "labeled_compliance":
                values["fallacy_labeled"] = 1
            if outcome == "clean_compliance":
                values["compliance_clean"] = 1
            rows.append(
                {
                    "gen_id": g,
                    "model": model,
                    "claim_id": f"C{i % claims}",
                    "framing": framing,
                    "outcome": outcome,
                    **values,
                }
            )
    return pd.DataFrame(rows)


def _label(gen_id: int, outcome: str, who: str = "alice", **kw) -> HumanLabel:
    values = dict.fromkeys(FIELDS, 0)
    if outcome == "refusal":
        values["refusal"] = 1
    elif outcome == "soft_refusal":
        values["soft_refusal"] = 1
    return HumanLabel(gen_id, who, values, **kw)


# --------------------------------------------------------------------------- weights


def test_two_stratum_weights_are_worked_by_hand():
    # Stratum A: 90 refusals of m; stratum B: 10 clean compliances. The sample over-represents
    # B: 3 of A, 5 of B. Horvitz-Thompson: w_A = 90 / 3 = 30, w_B = 10 / 5 = 2; the weighted
    # refusal share of the labels is (3 * 30 * 1 + 5 * 2 * 0) / (3 * 30 + 5 * 2) = 90 / 100,
    # the population's, where the unweighted share (3 / 8) is far off.
    scored = _scored({("m", "refusal", "direct"): 90, ("m", "clean_compliance", "direct"): 10})
    a, b = stratum_of("m", "refusal", "direct"), stratum_of("m", "clean_compliance", "direct")
    picked = [1, 2, 3, 91, 92, 93, 94, 95]  # 3 of A, 5 of B
    sample = {g: (a if g <= 90 else b) for g in picked}
    labels = [_label(g, "refusal" if g <= 90 else "clean_compliance") for g in picked]
    inputs = calibration_inputs(scored, labels, sample, scored)
    assert inputs.weighting == "stratified"
    w = dict(zip(inputs.labelled["gen_id"], inputs.labelled["weight"], strict=True))
    assert [w[g] for g in picked] == [30.0] * 3 + [2.0] * 5
    corr = corrected_rates(inputs, resamples=50, min_labels=2)
    labels_only = corr.models["m"].get("labels", "outcome", "refusal")
    assert labels_only.rate == pytest.approx(0.9)


def test_imported_labels_are_weighted_uniformly_and_a_mixed_set_says_why():
    scored = _scored({("m", "refusal", "direct"): 90, ("m", "clean_compliance", "direct"): 10})
    labels = [_label(g, "refusal" if g <= 90 else "clean_compliance") for g in (1, 2, 91, 92)]
    plain = calibration_inputs(scored, labels, {}, scored)
    assert plain.weighting == "uniform" and set(plain.labelled["weight"]) == {1.0}
    assert "none of the 4 labels is in the annotate sample" in plain.notes[0]
    mixed = calibration_inputs(scored, labels, {1: stratum_of("m", "refusal", "direct")}, scored)
    assert mixed.weighting == "uniform" and "3 of 4 labels are not" in mixed.notes[0]


# --------------------------------------------------------------------------- one label per item


def test_majority_ties_and_unsure_follow_validate():
    scored = _scored({("m", "refusal", "direct"): 3})
    labels = [
        _label(1, "refusal", "alice"),
        _label(1, "refusal", "bob"),
        _label(1, "clean", "carol"),  # 2 to 1: refusal
        _label(2, "refusal", "alice"),
        _label(2, "clean", "bob"),  # a tie: refusal left out
        _label(3, "refusal", "alice", unsure=True),  # unsure: left out whole
    ]
    inputs = calibration_inputs(scored, labels, {}, scored)
    assert inputs.labelled["gen_id"].tolist() == [1, 2]
    k = MEASURES.index(("field", "refusal"))
    assert inputs.human[0, k] == 1.0 and np.isnan(inputs.human[1, k])
    assert inputs.counts["unsure_left_out"] == 1 and inputs.counts["ties"] >= 1


def test_an_undecided_outcome_is_left_out_and_counted_by_validates_rule():
    values = np.array(
        [
            [1, 0, 0, 0, 0, 0, 0, 0],
            [0, np.nan, 0, 0, 0, 0, 0, 0],  # soft refusal unknown: undecided
            [0, 0, 0, 0, 0, 1, np.nan, 1],  # labeled decides before clean: labeled
        ],
        dtype=float,
    )
    m = outcome_matrix(values)
    for i, row in enumerate(values):
        o = human_outcome(dict(zip(FIELDS, row.tolist(), strict=True)))
        if o is None:
            assert np.isnan(m[i]).all()
        else:
            assert m[i].tolist() == [float(x == o) for x in OUTCOMES]
    scored = _scored({("m", "refusal", "direct"): 2})
    lab = HumanLabel(1, "alice", {**dict.fromkeys(FIELDS, 0), "refusal": None})
    inputs = calibration_inputs(scored, [lab], {}, scored)
    assert inputs.counts["undecided_human_outcomes"] == 1


# --------------------------------------------------------------------------- degenerate inputs


def test_no_labels_and_labels_of_another_pack_give_nothing_to_correct():
    scored = _scored({("m", "refusal", "direct"): 5})
    none = calibration_inputs(scored, [], {}, scored)
    assert not none.has_labels and corrected_rates(none) is None
    other = calibration_inputs(scored, [_label(999, "refusal")], {}, scored, pack_gen_ids=[1, 2])
    assert not other.has_labels and other.counts["other_packs_left_out"] == 1
    assert corrected_rates(other) is None


def test_correction_none_and_an_unknown_one():
    scored = _scored({("m", "refusal", "direct"): 20})
    inputs = calibration_inputs(scored, [_label(g, "refusal") for g in range(1, 15)], {}, scored)
    assert corrected_rates(inputs, correction="none") is None
    with pytest.raises(ValueError, match="unknown --correction 'ppi\\+\\+'"):
        check_correction("ppi++")


def test_all_labels_of_one_value_too_few_labels_and_one_claim_are_notes():
    scored = _scored({("m", "refusal", "direct"): 30, ("m", "clean_compliance", "direct"): 10})
    labels = [_label(g, "refusal") for g in range(1, 21)]  # every label a refusal
    inputs = calibration_inputs(scored, labels, {}, scored)
    rg = corrected_rates(inputs, correction="rogan-gladen", resamples=50)
    e = rg.models["m"].get("corrected", "outcome", "refusal")
    assert e.rate is None and e.ci95 is None and "specificity undefined" in e.note
    few = corrected_rates(calibration_inputs(scored, labels[:3], {}, scored), resamples=50)
    e = few.models["m"].get("corrected", "outcome", "refusal")
    assert e.rate is None and e.note == "3 labels (at least 10 needed)"
    ppi = corrected_rates(inputs, resamples=50).models["m"]
    # A bootstrap over labels of one value says [1, 1]: labels only gets the exact interval
    # of 20 of 20 (Clopper-Pearson: [0.025^(1/20), 1]), the corrected rate the exact bound
    # on the judges' error and the flag naming the next step.
    e = ppi.get("labels", "outcome", "refusal")
    assert e.rate == 1.0 and e.ci95 == pytest.approx((0.025 ** (1 / 20), 1.0), abs=1e-9)
    e = ppi.get("corrected", "outcome", "refusal")
    assert e.rate is not None and e.ci95 is not None and e.ci95[0] <= 0.025 ** (1 / 20)
    assert e.flag.startswith("all 20 labels are 1") and "judges call 0" in e.flag
    one = _scored({("m", "refusal", "direct"): 20, ("m", "clean_compliance", "direct"): 5}, 1)
    mixed = [_label(g, "refusal" if g <= 20 else "clean") for g in range(8, 26)]
    inputs = calibration_inputs(one, mixed, {}, one)
    e = corrected_rates(inputs, resamples=50).models["m"].get("corrected", "outcome", "refusal")
    assert e.rate is not None and e.ci95 is None and "one claim" in e.note


def test_a_model_without_labels_gets_notes_not_numbers():
    scored = _scored(
        {
            ("a", "refusal", "direct"): 10,
            ("a", "clean_compliance", "direct"): 10,
            ("b", "refusal", "direct"): 20,
        }
    )
    labels = [_label(g, "refusal" if g <= 10 else "clean") for g in range(3, 18)]  # a's only
    corr = corrected_rates(calibration_inputs(scored, labels, {}, scored), resamples=50)
    b = corr.models["b"]
    assert b.n_labels == 0
    for kind, name in MEASURES:
        e = b.get("corrected", kind, name)
        assert e.rate is None and e.note == "no labels"
    pooled = corrected_rates(
        calibration_inputs(scored, labels, {}, scored), resamples=50, pool_models=True
    )
    assert pooled.pooled and pooled.models["b"].n_labels == 15
    assert pooled.models["b"].get("corrected", "outcome", "refusal").rate is not None


def test_another_rater_replaces_the_consensus():
    scored = _scored({("m", "refusal", "direct"): 20, ("m", "clean_compliance", "direct"): 20})
    labels = [_label(g, "refusal" if g <= 20 else "clean") for g in range(1, 41, 2)]
    inputs = calibration_inputs(scored, labels, {}, scored)
    says = {g: ("refusal" if g <= 10 else "other") for g in range(1, 41)}
    rated = with_rater(inputs, outcomes=says)
    assert np.nanmean(rated.judged[:, K_REF]) == pytest.approx(10 / 40)
    assert np.isnan(rated.judged[:, MEASURES.index(("field", "refusal"))]).all()


# --------------------------------------------------------------------------- a planted store


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    root = tmp_path_factory.mktemp("calibration")
    return planted_store(root, labels=300, judge_error=0.06)


def test_on_a_planted_store_the_correction_moves_refusal_towards_the_truth(planted):
    db, _truth, outcome_of = planted
    with Store.open(db, readonly=True) as store:
        inputs = read_calibration_inputs(store, default_benchmark())
    corr = corrected_rates(inputs, resamples=300)
    model_of = dict(zip(inputs.scored["gen_id"], inputs.scored["model"], strict=True))
    for model, cell in corr.models.items():
        mine = Counter(o for g, o in outcome_of.items() if model_of.get(g) == model)
        true = mine["refusal"] / sum(mine.values())
        judged = cell.get("judged", "outcome", "refusal")
        fixed = cell.get("corrected", "outcome", "refusal")
        assert abs(fixed.rate - true) < abs(judged.rate - true)  # the OR consensus inflates it
        assert fixed.ci95[0] <= true <= fixed.ci95[1]


def test_a_stratified_sample_is_weighted_by_its_strata(tmp_path):
    db, _truth, _ = planted_store(tmp_path, labels=120, stratified=True)
    with Store.open(db, readonly=True) as store:
        inputs = read_calibration_inputs(store, default_benchmark())
    assert inputs.weighting == "stratified"
    strata = inputs.labelled["stratum"]
    sizes = Counter(
        stratum_of(m, o, f)
        for m, o, f in zip(
            inputs.scored["model"], inputs.scored["outcome"], inputs.scored["framing"], strict=True
        )
    )
    n = Counter(strata)
    for s, w in zip(strata, inputs.labelled["weight"], strict=True):
        assert w == pytest.approx(sizes[s] / n[s])
